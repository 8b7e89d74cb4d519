//! Routing: which listener lists a send reaches (tiers, ancestors), in what
//! order, and the lanes that keep that answer between sends.

use std::rc::Rc;

use smallvec::SmallVec;

use crate::key::Key;
use crate::listener::Entry;
use crate::source::Source;

use super::HubError;
use super::state::{Channel, Lane, List, Slot, State, source_gone};

/// Delivery order, one rule for every tier: lower order first; at equal
/// order the key's own listeners (exact or partial, in registration
/// order), then partial listeners on each channel above it, nearest first.
#[inline]
pub(crate) fn sort_key(entry: &Entry, depth: u32) -> (i32, u32, u64) {
    (entry.order, depth, entry.seq)
}

/// The entries of gathered lists in delivery order, with the depth of the
/// ancestor each listens on; an ancestor's exact listeners, which a
/// descendant's send never calls, are left out. One list is already in
/// order (see `List::build`).
pub(crate) fn delivery_order(lists: &Gathered) -> SmallVec<[(&Rc<Entry>, u32); 16]> {
    let mut order: SmallVec<[(&Rc<Entry>, u32); 16]> = lists
        .iter()
        .filter(|(list, _)| list.messages > 0)
        .flat_map(|(list, depth)| list.entries.iter().map(move |entry| (entry, *depth)))
        .filter(|(entry, depth)| *depth == 0 || entry.partial)
        .collect();
    if lists.len() > 1 {
        order.sort_by_key(|(entry, depth)| sort_key(entry, *depth));
    }
    order
}

/// The listener lists one dispatch visits, with their depth (0 = the key
/// itself, 1 = its parent...).
pub(crate) type Gathered = SmallVec<[(Rc<List>, u32); 6]>;

/// The tiers a send from `source` reaches, nearest first.
#[inline]
pub(super) fn tiers(s: &State, source: Source) -> [Option<Source>; 3] {
    match source {
        Source::Global => [Some(Source::Global), None, None],
        Source::World(w) => [Some(Source::World(w)), Some(Source::Global), None],
        Source::Object(o) | Source::Named(o, _) => [
            Some(source),
            s.objects.get(&o).map(|info| Source::World(info.world)),
            Some(Source::Global),
        ],
    }
}

/// Whether a key has no parameters recorded yet (and none declared).
pub(crate) fn has_no_params(s: &State, key: Key) -> bool {
    s.slots.get(key.index()).is_some_and(|slot| {
        slot.sig
            .as_ref()
            .is_none_or(|sig| sig.params.is_empty() && !sig.declared)
    })
}

/// Collects into the caller's buffer: the send path keeps its `Gathered`
/// in its own frame instead of copying a hundred-byte `SmallVec` back up
/// through every return.
/// Mutable: a channel changed since its last dispatch makes its snapshot
/// here (see [`crate::channel`]).
#[inline]
pub(crate) fn collect_lists_into(s: &mut State, key: Key, source: Source, out: &mut Gathered) {
    let tiers = tiers(s, source);
    let mut current = Some(key);
    let mut depth = 0;
    while let Some(k) = current {
        let slot = &mut s.slots[k.index()];
        if depth == 0 || slot.partial_listeners > 0 {
            for tier in tiers.iter().flatten() {
                if let Some(list) = slot.channel_mut(*tier).and_then(Channel::list) {
                    out.push((list.clone(), depth));
                }
            }
        }
        current = s.keys.info(k).parent;
        depth += 1;
    }
}

/// How many sources of one key keep a lane. A key sent from more sources
/// at once is gathered afresh for the others (on the stack, no allocation),
/// as every send was before lanes.
pub(super) const LANES_PER_KEY: usize = 4;

/// The current lane of `key` for `source`, if any.
#[inline]
pub(super) fn current_lane(s: &State, key: Key, source: Source) -> Option<&Rc<Lane>> {
    s.slots
        .get(key.index())?
        .lanes
        .iter()
        .find(|lane| lane.source == source && lane.epoch == s.epoch)
}

/// What a send reached, for the features that call listeners of their
/// own after it (see `seam`): its lane, or the lists it gathered.
#[derive(Clone, Copy)]
pub(crate) enum Reached<'a> {
    Lane(&'a Lane),
    Lists(&'a Gathered),
}

/// How one dispatch reaches its listeners.
pub(super) enum Route {
    /// Down a lane, kept for the next send.
    Lane(Rc<Lane>),
    /// Through the lists gathered into the caller's buffer.
    Lists,
    /// Nowhere: the source's object or world is gone (see
    /// `state::source_gone`), and a send from it is an error, as listening or
    /// storing on it is. Boxed: a route is returned on every send, and an
    /// error inline would make every route as large as a `HubError`.
    Gone(Box<HubError>),
}

/// The key's lane for `source`, merged when missing or stale; or, with
/// every lane of the key current and for other sources, the lists. Either
/// way a route that had to gather leaves the lists in `lists`.
///
/// A current lane proves its source alive: no lane is made for a source
/// that is gone, and destroying an object or world moves the epoch. So
/// only a send that must gather asks whether its source is there — the
/// lane's hot path pays nothing for it.
#[inline]
pub(super) fn route(s: &mut State, key: Key, source: Source, lists: &mut Gathered) -> Route {
    if let Some(lane) = current_lane(s, key, source) {
        return Route::Lane(lane.clone());
    }
    if let Some(gone) = source_gone(s, source) {
        return Route::Gone(Box::new(gone));
    }
    let epoch = s.epoch;
    let lanes = &s.slots[key.index()].lanes;
    let reuse = lanes
        .iter()
        .position(|lane| lane.source == source || lane.epoch != epoch);
    let full = reuse.is_none() && lanes.len() >= LANES_PER_KEY;
    collect_lists_into(s, key, source, lists);
    if full {
        return Route::Lists;
    }
    let lane = Rc::new(Lane::merge(delivery_order(lists), lists, epoch, source));
    let slot = &mut s.slots[key.index()];
    match reuse {
        Some(at) => {
            let old = std::mem::replace(&mut slot.lanes[at], lane.clone());
            s.graveyard.push(Box::new(old));
        }
        None => slot.lanes.push(lane.clone()),
    }
    if !slot.laned {
        slot.laned = true;
        s.laned.push(key);
    }
    Route::Lane(lane)
}

/// Calls `f` with each entry a send of `key` from `source` reaches, in
/// delivery order (through the key's lane, merged if need be), stopping at
/// the first error; `gone` when the source is gone (a send from it is an
/// error, not a send to nobody).
pub(crate) fn for_each_on_route<E>(
    s: &mut State,
    key: Key,
    source: Source,
    gone: E,
    mut f: impl FnMut(&Rc<Entry>) -> Result<(), E>,
) -> Result<(), E> {
    let mut lists = Gathered::new();
    match route(s, key, source, &mut lists) {
        Route::Lane(lane) => lane
            .entries
            .iter()
            .filter(|(entry, depth)| *depth == 0 || entry.partial)
            .try_for_each(|(entry, _)| f(entry)),
        Route::Lists => delivery_order(&lists)
            .into_iter()
            .try_for_each(|(entry, _)| f(entry)),
        Route::Gone(_) => Err(gone),
    }
}

/// Something a send depends on changed: every lane goes stale. The lanes
/// that may hold a listener just removed are dropped now (their drop waits
/// in the graveyard until the borrow ends), so that no lane keeps an
/// unlistened closure alive: the key's own (`Some(key)`), or every lane
/// (`None`) when the change was a partial listener, which the lanes of all
/// keys under its key hold too. Every lane goes through the keys that made
/// one since the last such change (`State::laned`), not through every key:
/// a mod adding and removing partial listeners among many keys stays
/// linear.
pub(super) fn lanes_changed(s: &mut State, key: Option<Key>) {
    s.epoch += 1;
    let State {
        slots,
        graveyard,
        laned,
        ..
    } = s;
    let mut drop_lane = |slot: &mut Slot| {
        if !slot.lanes.is_empty() {
            graveyard.push(Box::new(std::mem::take(&mut slot.lanes)));
        }
        if let Some(hot) = slot.hot.take() {
            graveyard.push(Box::new(hot));
        }
    };
    match key {
        Some(key) => drop_lane(&mut slots[key.index()]),
        None => {
            for key in laned.drain(..) {
                let slot = &mut slots[key.index()];
                slot.laned = false;
                drop_lane(slot);
            }
        }
    }
}
