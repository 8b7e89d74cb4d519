//! Per-key state: a key's slot (its channels, compiled signature, call
//! sites and lanes), and the [`State`] the hub keeps behind one borrow.

use std::any::Any;
use std::panic::Location;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::key::{Key, KeyError, Keys};
use crate::listener::{Entry, ListenerId, OwnerKey};
use crate::report::Report;
use crate::signature::{KeyDecl, Kind, SignatureTable};
use crate::source::{NameId, Source, WorldId};
use crate::types::Type;
use crate::value::ObjectId;

use super::HubError;

/// A channel of the hub, with the slots its features keep beside each
/// snapshot (see [`crate::channel::Slots`]).
pub(crate) type Channel = crate::channel::Channel<super::seam::Features>;
/// A channel's snapshot, as the hub's dispatches read it.
pub(crate) type List = crate::channel::List<super::seam::Features>;
/// A key's lane, as the hub's dispatches read it.
pub(crate) type Lane = crate::lane::Lane<super::seam::Features>;

/// The compiled signature of a key, mirrored from the table for the hot path.
#[derive(Clone)]
pub(super) struct SlotSig {
    pub(super) params: Rc<[Type]>,
    /// Bit i: parameter i may hold a float below its top level, so an
    /// argument there may have ints to convert (an int for a float is
    /// converted all the way down).
    pub(super) nested_floats: u64,
    pub(super) declared: bool,
    /// The kind the table has for the key: a store or collection publish
    /// that the table already knows as such records nothing new.
    pub(super) kind: Kind,
    /// Bit `kind as u8`: a dispatch of that kind contradicts the key's
    /// kind and is refused (see `ApiFunction::contradicts`). Worked out
    /// when the signature is mirrored, so admission pays one bit test.
    pub(super) refused: u8,
}

impl SlotSig {
    /// Whether a dispatch of `kind` would leave the table's kind as it is,
    /// so that (arguments matching) there is nothing to record.
    pub(super) fn knows_kind(&self, kind: Kind) -> bool {
        match (self.kind, kind) {
            (_, Kind::Event) | (Kind::Collection, Kind::Store) | (Kind::Hook, Kind::Hook) => true,
            // A store of one struct array is recorded as a collection.
            (Kind::Store, Kind::Store) => {
                !(self.params.len() == 1 && self.params[0].struct_array_element().is_some())
            }
            _ => self.declared,
        }
    }
}

#[derive(Default)]
pub(crate) struct Slot {
    pub(super) global: Channel,
    pub(super) scoped: FxHashMap<Source, Channel>,
    pub(super) partial_listeners: u32,
    pub(super) sig: Option<SlotSig>,
    pub(super) last_rust_site: Option<&'static Location<'static>>,
    /// Every Rust call site already recorded for this key (by address).
    pub(super) rust_sites: rustc_hash::FxHashSet<usize>,
    /// Merged delivery lists of the last few sources this key was sent
    /// from (at most `LANES_PER_KEY`).
    pub(super) lanes: SmallVec<[Rc<Lane>; 2]>,
    /// The typed view of one of `lanes` that a typed send used last.
    pub(super) hot: Option<crate::lane::HotView>,
    /// Listed in `State::laned` (it may have a lane).
    pub(super) laned: bool,
}

impl Slot {
    /// The key's parameter types when a plain send has nothing to record
    /// (see `handoff`): known, and no `nil` position still to be narrowed.
    /// None for a hook key, which a send may not use: the send takes the
    /// checked path, which refuses it.
    pub(crate) fn handoff_params(&self) -> Option<Rc<[Type]>> {
        let sig = self.sig.as_ref()?;
        if sig.kind == Kind::Hook
            || !sig.knows_kind(Kind::Event)
            || !sig.declared && sig.params.iter().any(|t| matches!(t, Type::Nil))
        {
            return None;
        }
        Some(sig.params.clone())
    }

    /// The channel of `scope`'s listeners, if anyone listens there.
    pub(super) fn channel_mut(&mut self, scope: Source) -> Option<&mut Channel> {
        match scope {
            Source::Global => Some(&mut self.global),
            other => self.scoped.get_mut(&other),
        }
    }
}

/// The listeners one owner registered, in registration order. Removing one
/// only counts it (`live`); the ids of removed listeners are swept out when
/// they outnumber the live ones, so a mod unlistening its listeners one by
/// one stays linear.
#[derive(Default)]
pub(super) struct Owned {
    pub(super) ids: Vec<ListenerId>,
    pub(super) live: usize,
}

pub(super) struct ObjectInfo {
    pub(super) world: WorldId,
    /// Keys with a channel watching this object (or its named sources).
    /// (A set: a script listening and unlistening on the object in a loop
    /// adds nothing after the first time.)
    pub(super) watched: rustc_hash::FxHashSet<Key>,
}

pub(crate) struct State {
    pub(crate) keys: Keys,
    pub(crate) slots: Vec<Slot>,
    pub(crate) table: SignatureTable,
    pub(super) objects: FxHashMap<ObjectId, ObjectInfo>,
    pub(super) worlds: FxHashMap<WorldId, Vec<ObjectId>>,
    pub(super) names: FxHashMap<Rc<str>, NameId>,
    pub(crate) name_list: Vec<Rc<str>>,
    pub(crate) listeners: FxHashMap<ListenerId, Rc<Entry>>,
    pub(super) by_owner: FxHashMap<OwnerKey, Owned>,
    /// Stored and once messages (see [`crate::store`]).
    pub(crate) stores: crate::store::Stores,
    /// What the host declared, by key: kept over a merged table.
    pub(super) host_declared: std::collections::BTreeMap<String, KeyDecl>,
    /// Hook listeners and their channels (see [`crate::hook`]).
    pub(crate) hooks: crate::hook::Hooks,
    /// Moves whenever what a send of some key would do may have changed (a
    /// channel list, a signature, an object's tiers): lanes stamped with an
    /// older epoch are merged again.
    pub(crate) epoch: u64,
    /// The keys that made a lane since every lane was last dropped (each
    /// once: see `Slot::laned`).
    pub(super) laned: Vec<Key>,
    /// The last struct row shape the signature check verified (see
    /// [`crate::types::RowShape`]; kept for one epoch).
    pub(super) row_shape: crate::types::RowShape,
    pub(super) reports: Vec<Report>,
    pub(super) next_id: u64,
    pub(super) next_seq: u64,
    pub(super) next_object: u64,
    pub(super) next_world: u32,
    /// Values whose drop may run user code (closures holding responders):
    /// dropped only after the state borrow is released.
    pub(super) graveyard: Vec<Box<dyn Any>>,
}

pub(super) fn intern(s: &mut State, text: &str) -> Result<Key, KeyError> {
    let key = s.keys.intern(text)?;
    while s.slots.len() < s.keys.len() {
        s.slots.push(Slot::default());
        let k = Key((s.slots.len() - 1) as u32);
        refresh_sig(s, k);
    }
    Ok(key)
}

/// Mirrors the table entry of `key` into its slot.
pub(super) fn refresh_sig(s: &mut State, key: Key) {
    let name = s.keys.name(key).clone();
    let structs = &s.table.structs;
    let sig = s.table.get(&name).map(|e| SlotSig {
        refused: [Kind::Event, Kind::Store, Kind::Collection, Kind::Hook]
            .into_iter()
            .filter(|&dispatched| {
                super::admission::dispatch_function(dispatched).contradicts(
                    e.kind,
                    e.origin == crate::signature::Origin::Declared,
                    !e.params.is_empty(),
                )
            })
            .fold(0, |bits, dispatched| bits | 1 << dispatched as u8),
        params: e.params.iter().map(|p| p.ty.clone()).collect(),
        nested_floats: e
            .params
            .iter()
            .take(64)
            .enumerate()
            .filter(|(_, p)| structs.holds_nested_float(&p.ty))
            .fold(0, |bits, (i, _)| bits | 1 << i),
        declared: e.origin == crate::signature::Origin::Declared,
        kind: e.kind,
    });
    s.slots[key.index()].sig = sig;
    s.epoch += 1;
}

/// Why `source` cannot send, listen or store: its object or world is gone
/// (destroyed, or never made — ids are never reused, so the two are one
/// case). `None` for a source that is there; global always is.
pub(crate) fn source_gone(s: &State, source: Source) -> Option<HubError> {
    match source {
        Source::Object(object) | Source::Named(object, _) if !s.objects.contains_key(&object) => {
            Some(HubError::NoSuchObject(object))
        }
        Source::World(world) if !s.worlds.contains_key(&world) => {
            Some(HubError::NoSuchWorld(world))
        }
        _ => None,
    }
}
