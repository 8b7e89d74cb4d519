//! Objects and worlds: spawning and destroying them, their named sources,
//! and what goes with a source when it goes (its listeners, and what the
//! features keep from it: see `seam::on_source_gone`).

use std::rc::Rc;

use crate::key::Key;
use crate::listener::{ListenerId, Owner, OwnerKey};
use crate::quota::Holding;
use crate::source::{NameId, Source, WorldId};
use crate::trace::DropReason;
use crate::value::ObjectId;

use super::registration::{drop_owned, forget_owned};
use super::routing::lanes_changed;
use super::seam;
use super::state::{ObjectInfo, State, source_gone};
use super::{Hub, HubError, MAX_SOURCE_NAME_BYTES};

impl Hub {
    pub fn create_world(&self) -> WorldId {
        self.with_state(|s| {
            s.next_world += 1;
            let id =
                WorldId(std::num::NonZeroU32::new(s.next_world).expect("world ids start at 1"));
            s.worlds.insert(id, Vec::new());
            id
        })
    }

    /// Creates an object in `world`.
    pub fn spawn(&self, world: WorldId) -> Result<ObjectId, HubError> {
        self.with_state(|s| {
            let objects = s
                .worlds
                .get_mut(&world)
                .ok_or(HubError::NoSuchWorld(world))?;
            s.next_object += 1;
            let id = ObjectId(std::num::NonZeroU64::new(s.next_object).expect("ids start at 1"));
            objects.push(id);
            s.objects.insert(
                id,
                ObjectInfo {
                    world,
                    watched: Default::default(),
                },
            );
            Ok(id)
        })
    }

    pub fn is_alive(&self, object: ObjectId) -> bool {
        self.inner.state.borrow().objects.contains_key(&object)
    }

    pub fn world_of(&self, object: ObjectId) -> Option<WorldId> {
        self.inner
            .state
            .borrow()
            .objects
            .get(&object)
            .map(|o| o.world)
    }

    /// The composite source (object, name): one object, several independent
    /// sources. The hub keeps every name for the run; a name from a
    /// script goes through [`Hub::try_named`].
    pub fn named(&self, object: ObjectId, name: &str) -> Source {
        self.with_state(|s| Source::Named(object, name_id(s, name)))
    }

    /// [`Hub::named`] for a name a script chose: one longer than
    /// [`MAX_SOURCE_NAME_BYTES`] is refused, and a new one is charged to
    /// this handle's quota, as a new key is.
    pub fn try_named(&self, object: ObjectId, name: &str) -> Result<Source, HubError> {
        if name.len() > MAX_SOURCE_NAME_BYTES {
            return Err(HubError::SourceNameTooLong {
                name: name.chars().take(64).chain(['…']).collect(),
                len: name.len(),
            });
        }
        self.with_state(|s| {
            if let Some(quota) = self.quota()
                && !s.names.contains_key(name)
            {
                let bytes = crate::quota::NAME_BYTES + 2 * name.len();
                quota.room(name, Holding::SourceName, bytes, 0)?;
                quota.hold(bytes);
            }
            Ok(Source::Named(object, name_id(s, name)))
        })
    }

    pub fn source_name(&self, source: Source) -> String {
        match source {
            Source::Named(o, n) => {
                format!("{o}/{}", self.inner.state.borrow().name_list[n.0 as usize])
            }
            other => other.to_string(),
        }
    }

    /// Destroys an object: drops every listener it owns, every listener and
    /// stored message sourced from it (named sources included).
    pub fn destroy(&self, object: ObjectId) -> Result<(), HubError> {
        let dropped = self.with_state(|s| {
            let info = s
                .objects
                .remove(&object)
                .ok_or(HubError::NoSuchObject(object))?;
            if let Some(list) = s.worlds.get_mut(&info.world) {
                list.retain(|o| *o != object);
            }
            let mut dropped = drop_owned(s, OwnerKey::Object(object));
            let mut watched: Vec<Key> = info.watched.into_iter().collect();
            watched.sort_unstable();
            for key in watched {
                let scopes: Vec<Source> = s.slots[key.index()]
                    .scoped
                    .keys()
                    .copied()
                    .filter(|sc| sc.object() == Some(object))
                    .collect();
                for scope in scopes {
                    drop_scope(s, key, scope, &mut dropped);
                }
            }
            seam::on_source_gone(s, |source| source.object() == Some(object));
            lanes_changed(s, None);
            Ok::<_, HubError>(dropped)
        })?;
        self.trace_dropped(&dropped, DropReason::Destroyed);
        Ok(())
    }

    /// Destroys a world and every object in it.
    pub fn destroy_world(&self, world: WorldId) -> Result<(), HubError> {
        let objects = self
            .with_state(|s| s.worlds.get(&world).cloned())
            .ok_or(HubError::NoSuchWorld(world))?;
        for object in objects {
            self.destroy(object)?;
        }
        let dropped = self.with_state(|s| {
            let mut dropped = Vec::new();
            s.worlds.remove(&world);
            seam::on_source_gone(s, |source| source == Source::World(world));
            for k in 0..s.slots.len() {
                drop_scope(s, Key(k as u32), Source::World(world), &mut dropped);
            }
            lanes_changed(s, None);
            dropped
        });
        self.trace_dropped(&dropped, DropReason::Destroyed);
        Ok(())
    }

    /// Removes the composite source (object, name) — the explicit
    /// removal (`RemoveSourceKey` in the original API), the one way besides destroying
    /// the object: every listener scoped to it and every message stored
    /// from it go; the object's other sources stay. Returns how many
    /// listeners and stored messages went.
    pub fn remove_named(&self, object: ObjectId, name: &str) -> Result<usize, HubError> {
        let removed = self.with_state(|s| {
            let info = s
                .objects
                .get(&object)
                .ok_or(HubError::NoSuchObject(object))?;
            let Some(&id) = s.names.get(name) else {
                return Ok((Vec::new(), 0));
            };
            let source = Source::Named(object, id);
            let mut keys: Vec<Key> = info.watched.iter().copied().collect();
            keys.sort_unstable();
            keys.dedup();
            let mut dropped = Vec::new();
            for key in keys {
                drop_scope(s, key, source, &mut dropped);
            }
            let stores = seam::on_source_gone(s, |stored| stored == source);
            lanes_changed(s, None);
            Ok::<_, HubError>((dropped, stores))
        })?;
        let (dropped, stores) = removed;
        self.trace_dropped(&dropped, DropReason::SourceRemoved);
        Ok(dropped.len() + stores)
    }

    /// A listener watching or owned by an object (or world) that is gone
    /// would never be dropped: destroying it drops what it owns and what
    /// is sourced from it, and that has happened already. Refused instead.
    pub(crate) fn check_alive(&self, scope: Source, owner: Option<&Owner>) -> Result<(), HubError> {
        let state = self.inner.state.borrow();
        if let Some(Owner::Object(object)) = owner
            && !state.objects.contains_key(object)
        {
            return Err(HubError::NoSuchObject(*object));
        }
        source_gone(&state, scope).map_or(Ok(()), Err)
    }
}

/// Drops the listeners of `key` scoped to `scope` (a source that is going),
/// adding their ids to `dropped`.
pub(super) fn drop_scope(s: &mut State, key: Key, scope: Source, dropped: &mut Vec<ListenerId>) {
    let slot = &mut s.slots[key.index()];
    let Some(channel) = slot.scoped.remove(&scope) else {
        return;
    };
    for entry in channel.entries() {
        entry.alive.set(false);
        if entry.partial {
            slot.partial_listeners -= 1;
        }
    }
    for entry in channel.entries() {
        if s.listeners.remove(&entry.id).is_some() {
            forget_owned(s, entry);
            dropped.push(entry.id);
        }
    }
    s.graveyard.push(Box::new(channel));
}

/// The id of source name `name`, made on its first use.
pub(super) fn name_id(s: &mut State, name: &str) -> NameId {
    if let Some(id) = s.names.get(name) {
        return *id;
    }
    let id = NameId(s.name_list.len() as u32);
    let name: Rc<str> = Rc::from(name);
    s.name_list.push(name.clone());
    s.names.insert(name, id);
    id
}
