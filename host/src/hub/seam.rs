//! The seam: where the hub's features plug into registration and
//! delivery. The core (registration, routing, delivery) calls these few
//! named points and names no feature; each point calls the features that
//! take part in it, in a fixed order.
//!
//! Registration and the objects hand what is a feature's to it here too:
//! a listener kept apart from the key's tiers (a hook listener) goes to
//! its feature ([`kept_apart`], `insert_apart`, `remove_apart`), and a
//! source that goes takes what the features keep from it
//! (`on_source_gone`).
//!
//! Each feature keeps its state in its own type, one field of the hub:
//! [`Stores`](crate::store::Stores) and [`Hooks`](crate::hook::Hooks) in
//! the [`State`](super::State), [`Collections`](crate::collection::Collections),
//! [`Requests`](crate::request::Requests) and
//! [`Tracer`](crate::trace::Tracer) in the [`HubInner`](super::HubInner).
//! A feature that calls listeners of its own in a dispatch calls them in
//! their places among the message listeners, through [`Interleaved`]:
//! `order` holds across every listener of a dispatch.
//! A listener's kind is data on its entry ([`Callback`](crate::listener::Callback)),
//! read through the entry's methods, which ask the feature that owns it.
//!
//! Beside those calls, a feature may keep something of its own in the
//! core's snapshots, built with them: a slot in each channel snapshot
//! (`channel::List`) and in each lane (`lane::Lane`). The core is generic
//! over those slots ([`Slots`]); [`Features`] fills them, and the hub's
//! state names it. The core builds them and never looks inside; the
//! feature's own dispatch reads them. This file is the only one of the
//! core that names a feature.
//!
//! The points are plain calls, not a list of trait objects: a send pays
//! no virtual call, allocation or borrow to pass through the seam, and
//! the compiler inlines each point into its one caller. The extras are
//! concrete types, stored in place.

use std::rc::Rc;

use crate::channel::{List, Slots};
use crate::collection::tables::{LaneTables, ListTables};
use crate::key::Key;
use crate::listener::{Callback, Entry};
use crate::source::Source;
use crate::value::Value;

use super::routing::Reached;
use super::{Hub, State};

/// The features that keep something beside the core's snapshots (see
/// [`Slots`]): the collections, whose entries with their selectors sit
/// beside each channel's snapshot and, in delivery order, beside each
/// lane.
pub(crate) struct Features;

impl Slots for Features {
    type List = ListTables;
    type Lane = LaneTables;

    fn list(entries: &[Rc<Entry>]) -> ListTables {
        ListTables::of(entries)
    }

    /// A collection listener that takes tables only.
    fn not_for_messages(list: &ListTables) -> usize {
        list.table_only()
    }

    fn lane(lists: &[(Rc<List<Features>>, u32)]) -> LaneTables {
        LaneTables::of(lists)
    }
}

/// The core's side of a dispatch's listeners that a feature calls itself.
pub(crate) use super::delivery::{Alone, Deliver, DownLists, Interleaved, Place};

impl Hub {
    /// After a listener registered (and was traced): what the features
    /// kept for it arrives now — a stored table to a collection listener,
    /// then a stored message to anyone who takes messages.
    pub(super) fn after_listen(&self, entry: &Rc<Entry>) {
        crate::collection::dispatch::after_listen(self, entry);
        crate::store::after_listen(self, entry);
    }

    /// Once a send was admitted: may a feature have listeners of its own
    /// beside its message listeners? Only a table sent as a plain message
    /// (no responder) may (see [`Hub::beside_send`]); every other send is
    /// delivered with nobody beside ([`Alone`]), and this one check is
    /// what it pays for the features.
    #[inline(always)]
    pub(super) fn may_have_beside(&self, args: &[Value], request: bool) -> bool {
        !request && crate::collection::dispatch::may_be_table(args)
    }

    /// A send that [`Hub::may_have_beside`], in place of delivering it:
    /// the features with listeners of their own on what the send
    /// `reached` deliver it with theirs in their places among the message
    /// listeners (see [`Interleaved`]) — a table sent, to its collection
    /// listeners.
    #[inline]
    pub(super) fn beside_send<'a, D: Deliver>(
        &'a self,
        key: Key,
        args: &'a [Value],
        reached: Reached<'a>,
        deliver: D,
    ) -> D::Out {
        crate::collection::dispatch::beside_send(self, key, args, reached, deliver)
    }
}

/// Is a listener with this callback kept apart from its key's tiers by a
/// feature? A hook listener is: the hook run orders it by priority, and
/// checks and records the payload itself, so registration neither checks
/// its types nor records its site.
#[inline]
pub(crate) fn kept_apart(callback: &Callback) -> bool {
    callback.kept_apart()
}

/// A listener kept apart (see [`kept_apart`]) registered: its feature
/// keeps it.
pub(super) fn insert_apart(s: &mut State, entry: Rc<Entry>) {
    s.hooks.insert(&s.keys, entry, &mut s.graveyard);
}

/// A listener kept apart (see [`kept_apart`]) was removed: its feature
/// lets go of it.
pub(super) fn remove_apart(s: &mut State, entry: &Rc<Entry>) {
    s.hooks.remove(&s.keys, entry, &mut s.graveyard);
}

/// The sources `gone` picks went (an object or world destroyed, a named
/// source removed, a reset): what the features keep from them goes too —
/// the messages stored from them. Returns how many went (see
/// [`crate::store::Stores::drop_from`]); their drop waits in the
/// graveyard until the borrow ends.
pub(super) fn on_source_gone(s: &mut State, gone: impl Fn(Source) -> bool) -> usize {
    s.stores.drop_from(gone, &mut s.graveyard)
}
