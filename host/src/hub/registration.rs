//! Registration: listening and unlistening, with the bookkeeping of who
//! owns what and which channel an entry lives in.

use std::any::Any;
use std::cell::Cell;
use std::panic::Location;
use std::rc::Rc;

use crate::key::Key;
use crate::listener::{
    Callback, Entry, ListenOptions, ListenerHandle, ListenerId, ListenerParams, Match, MessageFn,
    Owner, OwnerKey,
};
use crate::quota::Holding;
use crate::report::Report;
use crate::signature::{Role, Site};
use crate::source::Source;
use crate::trace::{DropReason, TraceEvent};
use crate::typed::Handler;
use crate::types::{Mismatch, Type};

use super::routing::lanes_changed;
use super::seam;
use super::state::{State, refresh_sig};
use super::{Hub, HubError, Message};

impl Hub {
    /// Listens with a typed closure, default options. The handle unlistens
    /// when dropped.
    #[track_caller]
    pub fn listen<Args, H: Handler<Args>>(
        &self,
        key: &str,
        scope: impl Into<Source>,
        handler: H,
    ) -> Result<ListenerHandle, HubError> {
        self.listen_with(key, scope, ListenOptions::default(), handler)
    }

    /// Listens with a typed closure and options.
    #[track_caller]
    pub fn listen_with<Args, H: Handler<Args>>(
        &self,
        key: &str,
        scope: impl Into<Source>,
        options: ListenOptions,
        handler: H,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let params = ListenerParams::Typed(H::param_types());
        let (callback, direct) = handler.into_callbacks();
        let spec = ListenSpec {
            scope: scope.into(),
            options,
            params,
            callback: Callback::Message(callback),
            site: Some(site),
            wants_responder: false,
            expects: None,
            direct: Some(direct),
        };
        let id = self.listen_raw(key, spec)?;
        Ok(ListenerHandle {
            hub: self.downgrade(),
            id,
        })
    }

    /// Listens with a closure that gets the whole [`Message`] (source,
    /// arguments as values, the responder of a request).
    #[track_caller]
    pub fn listen_message(
        &self,
        key: &str,
        scope: impl Into<Source>,
        options: ListenOptions,
        f: impl Fn(&Message<'_>) + 'static,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let spec = ListenSpec {
            scope: scope.into(),
            options,
            params: ListenerParams::Dynamic,
            callback: Callback::Message(Rc::new(move |m: &Message<'_>| {
                f(m);
                Ok(())
            })),
            site: Some(site),
            wants_responder: true,
            expects: None,
            direct: None,
        };
        let id = self.listen_raw(key, spec)?;
        Ok(ListenerHandle {
            hub: self.downgrade(),
            id,
        })
    }

    /// The registration every face (Rust, Lua, Rhai, router) goes through.
    /// Returns the id; the caller decides about handles. A stored message on
    /// (key, scope) is replayed to the new listener at once.
    /// Outside the crate, a script face reaches it through
    /// [`crate::face::Faced`].
    pub(crate) fn listen_raw(&self, key: &str, spec: ListenSpec) -> Result<ListenerId, HubError> {
        let handle = self.key(key)?;
        self.check_alive(spec.scope, spec.options.owner.as_ref())?;
        let charge = match self.quota() {
            Some(quota) => {
                let site = spec.site.as_ref().map_or(0, |site| site.file.len());
                let bytes = crate::quota::LISTENER_BYTES + site;
                quota.room(key, Holding::Listener, bytes, 0)?;
                Some(quota.charge(bytes))
            }
            None => None,
        };
        let checked = self.is_checked();
        let apart = seam::kept_apart(&spec.callback);
        let result = self.with_state(|s| {
            if let (Some(site), false) = (&spec.site, apart)
                && s.table.record_site(key, site.clone())
            {
                self.inner.table_dirty.set(true);
            }
            if let ListenerParams::Typed(types) = &spec.params
                && !apart
            {
                check_listener_types(s, handle, key, types, checked, &self.inner.table_dirty)
                    .map_err(|(key, mismatch)| (key, mismatch, spec.site.clone()))?;
            }
            s.next_id += 1;
            s.next_seq += 1;
            let id = ListenerId(s.next_id);
            let entry = Rc::new(Entry {
                id,
                key: handle,
                scope: spec.scope,
                seq: s.next_seq,
                order: spec.options.order,
                partial: spec.options.matching == Match::Partial,
                alive: Cell::new(true),
                remaining: Cell::new(if spec.options.times == 0 {
                    -1
                } else {
                    spec.options.times
                }),
                owner: spec.options.owner.clone(),
                params: spec.params,
                expects: spec.expects,
                wants_responder: spec.wants_responder,
                callback: spec.callback,
                direct: spec.direct,
                site: spec.site,
                _charge: charge,
            });
            insert_entry(s, entry.clone(), apart);
            Ok(entry)
        });
        let entry = match result {
            Ok(entry) => entry,
            Err((key, mismatch, site)) => {
                self.report(Report::ListenRejected {
                    key: key.clone(),
                    position: mismatch.position,
                    expected: mismatch.expected.clone(),
                    got: mismatch.got.clone(),
                    site,
                });
                return Err(HubError::ListenRejected { key, mismatch });
            }
        };
        if self.is_tracing() {
            self.trace_listened(&entry);
        }
        self.after_listen(&entry);
        Ok(entry.id)
    }

    /// Unlistens by id. Unknown ids do nothing. Returns whether it was found.
    pub fn unlisten(&self, id: ListenerId) -> bool {
        self.drop_listener(id, DropReason::Unbound)
    }

    /// Removes listener `id` only if it listens on `key` (a message, table
    /// or hook listener alike): a script's `UnbindMessage(key, id)` with a
    /// pair that does not match removes nothing, rather than another
    /// key's listener.
    pub fn unlisten_key(&self, key: &str, id: ListenerId) -> bool {
        let matches = self.with_state(|s| {
            s.listeners
                .get(&id)
                .is_some_and(|entry| s.keys.get(key) == Some(entry.key))
        });
        matches && self.unlisten(id)
    }

    /// Removes listener `id` only if it listens on `key` and is a hook
    /// listener exactly when `hook` says so: the router's `unregister`
    /// and `unregister_hook` take the channel and id their register gave,
    /// and a mismatched pair removes nothing.
    pub(crate) fn unlisten_on(&self, key: &str, id: ListenerId, hook: bool) -> bool {
        let matches = self.with_state(|s| {
            let Some(entry) = s.listeners.get(&id) else {
                return false;
            };
            s.keys.get(key) == Some(entry.key) && seam::kept_apart(&entry.callback) == hook
        });
        matches && self.unlisten(id)
    }

    /// Removes a listener for `reason` (told to the tracer).
    pub(crate) fn drop_listener(&self, id: ListenerId, reason: DropReason) -> bool {
        let removed = self.with_state(|s| remove_entry(s, id));
        if removed && self.is_tracing() {
            self.trace(&TraceEvent::Dropped {
                listener: id,
                reason,
            });
        }
        removed
    }

    /// Unlistens everything `owner` owns. Returns how many.
    pub fn unlisten_owner(&self, owner: &Owner) -> usize {
        let ids = self.with_state(|s| drop_owned(s, owner.identity()));
        self.trace_dropped(&ids, DropReason::Unbound);
        ids.len()
    }

    /// Unlistens everything `owner` owns on `key` only.
    pub fn unlisten_owner_on(&self, key: &str, owner: &Owner) -> usize {
        let Some(key) = self.inner.state.borrow().keys.get(key) else {
            return 0;
        };
        self.with_state(|s| {
            let ids: Vec<ListenerId> = s
                .by_owner
                .get(&owner.identity())
                .map(|owned| {
                    owned
                        .ids
                        .iter()
                        .copied()
                        .filter(|id| s.listeners.get(id).is_some_and(|e| e.key == key))
                        .collect()
                })
                .unwrap_or_default();
            ids.into_iter().filter(|id| remove_entry(s, *id)).count()
        })
    }

    /// How many listeners are registered (hooks not counted).
    pub fn listener_count(&self) -> usize {
        self.inner
            .state
            .borrow()
            .listeners
            .values()
            .filter(|e| !seam::kept_apart(&e.callback))
            .count()
    }

    /// Removes every listener, hook listener and stored message.
    pub fn reset(&self) {
        self.with_state(|s| {
            let ids: Vec<ListenerId> = s.listeners.keys().copied().collect();
            for id in ids {
                remove_entry(s, id);
            }
            // Dropped after the borrow (see `destroy`).
            seam::on_source_gone(s, |_| true);
        });
    }
}

/// Everything a registration needs; built by each face.
pub struct ListenSpec {
    pub scope: Source,
    pub options: ListenOptions,
    pub params: ListenerParams,
    pub(crate) callback: Callback,
    pub site: Option<Site>,
    /// Hand this listener the responder of a request.
    pub wants_responder: bool,
    /// Deliver only payloads of this struct (or a child of it).
    pub expects: Option<Rc<str>>,
    /// A typed Rust listener's closure taking its tuple as is.
    pub(crate) direct: Option<Rc<dyn Any>>,
}

impl ListenSpec {
    /// A message listener with a raw callback (script embeddings).
    pub fn message(
        scope: Source,
        options: ListenOptions,
        params: ListenerParams,
        callback: Rc<MessageFn>,
    ) -> Self {
        Self {
            scope,
            options,
            params,
            callback: Callback::Message(callback),
            site: None,
            wants_responder: false,
            expects: None,
            direct: None,
        }
    }

    pub fn site(mut self, site: Site) -> Self {
        self.site = Some(site);
        self
    }

    pub fn with_responder(mut self) -> Self {
        self.wants_responder = true;
        self
    }

    pub fn expecting(mut self, struct_name: Option<&str>) -> Self {
        self.expects = struct_name.map(Rc::from);
        self
    }
}

/// Checks a typed listener against the table; records its types when the key
/// is new (receive-side inference).
pub(super) fn check_listener_types(
    s: &mut State,
    key: Key,
    name: &str,
    types: &[Type],
    checked: bool,
    dirty: &Cell<bool>,
) -> Result<(), (String, Mismatch)> {
    match s.table.get(name) {
        // A key that carries something already: checked mode holds the
        // listener to it; unchecked mode lets it register, and the table
        // keeps what the key carries (a listener never rewrites it).
        Some(entry)
            if !entry.params.is_empty() || entry.origin == crate::signature::Origin::Declared =>
        {
            if !checked {
                return Ok(());
            }
            let message = entry.listener_types();
            s.table
                .structs
                .check_prefix(types, &message)
                .map_err(|m| (name.to_owned(), m))?;
        }
        _ if !types.is_empty() => {
            // Receive-side inference: a typed listener on a new key records
            // its parameter types as what the key carries.
            let entry = s.table.keys.entry(name.to_owned()).or_default();
            entry.params = types
                .iter()
                .enumerate()
                .map(|(i, t)| crate::types::Param::new(format!("arg{}", i + 1), t.clone()))
                .collect();
            dirty.set(true);
            refresh_sig(s, key);
        }
        _ => {}
    }
    Ok(())
}

/// Registers `entry`: with its owner and object, then in its key's tiers,
/// or with its feature when it is kept `apart` (see `seam::kept_apart`).
pub(super) fn insert_entry(s: &mut State, entry: Rc<Entry>, apart: bool) {
    let key = entry.key;
    if let Some(owner) = &entry.owner {
        let owned = s.by_owner.entry(owner.identity()).or_default();
        owned.ids.push(entry.id);
        owned.live += 1;
    }
    if let Some(object) = entry.scope.object()
        && let Some(info) = s.objects.get_mut(&object)
    {
        info.watched.insert(key);
    }
    s.listeners.insert(entry.id, entry.clone());
    if apart {
        seam::insert_apart(s, entry);
        return;
    }
    let slot = &mut s.slots[key.index()];
    if entry.partial {
        slot.partial_listeners += 1;
    }
    let channel = match entry.scope {
        Source::Global => &mut slot.global,
        scope => slot.scoped.entry(scope).or_default(),
    };
    channel.insert(entry, &mut s.graveyard);
    lanes_changed(s, Some(key));
}

pub(super) fn remove_entry(s: &mut State, id: ListenerId) -> bool {
    let Some(entry) = s.listeners.remove(&id) else {
        return false;
    };
    entry.alive.set(false);
    forget_owned(s, &entry);
    if seam::kept_apart(&entry.callback) {
        seam::remove_apart(s, &entry);
        s.graveyard.push(Box::new(entry));
        return true;
    }
    let slot = &mut s.slots[entry.key.index()];
    if let Some(channel) = slot.channel_mut(entry.scope)
        && channel.remove(&entry, &mut s.graveyard)
    {
        if channel.is_empty()
            && entry.scope != Source::Global
            && let Some(gone) = slot.scoped.remove(&entry.scope)
        {
            s.graveyard.push(Box::new(gone));
        }
        if entry.partial {
            slot.partial_listeners -= 1;
        }
    }
    lanes_changed(s, (!entry.partial).then_some(entry.key));
    s.graveyard.push(Box::new(entry));
    true
}

/// Counts out `entry`, just unregistered, from its owner's listeners.
pub(super) fn forget_owned(s: &mut State, entry: &Entry) {
    let Some(owner) = &entry.owner else {
        return;
    };
    let identity = owner.identity();
    let Some(owned) = s.by_owner.get_mut(&identity) else {
        return;
    };
    owned.live -= 1;
    if owned.live == 0 {
        s.by_owner.remove(&identity);
    } else if owned.ids.len() > 2 * owned.live + 8 {
        // Ids are never reused: one no longer registered is gone.
        owned.ids.retain(|id| s.listeners.contains_key(id));
    }
}

/// Removes everything `owner` owns; returns the ids removed.
pub(super) fn drop_owned(s: &mut State, owner: OwnerKey) -> Vec<ListenerId> {
    let ids = s.by_owner.remove(&owner).unwrap_or_default().ids;
    ids.into_iter().filter(|id| remove_entry(s, *id)).collect()
}
