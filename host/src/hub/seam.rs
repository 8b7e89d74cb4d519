//! The seam: where the hub's features plug into registration and
//! delivery. The core (registration, routing, delivery) calls these few
//! named points and names no feature; each point calls the features that
//! take part in it, in a fixed order.
//!
//! Each feature keeps its state in its own type, one field of the hub:
//! [`Stores`](crate::store::Stores) and [`Hooks`](crate::hook::Hooks) in
//! the [`State`](super::State), [`Collections`](crate::collection::Collections),
//! [`Requests`](crate::request::Requests) and
//! [`Tracer`](crate::trace::Tracer) in the [`HubInner`](super::HubInner).
//! A listener's kind is data on its entry ([`Callback`](crate::listener::Callback)),
//! read through the entry's methods, which ask the feature that owns it.
//!
//! The points are plain calls, not a list of trait objects: a send pays
//! no virtual call, allocation or borrow to pass through the seam, and
//! the compiler inlines each point into its one caller.

use std::rc::Rc;

use crate::key::Key;
use crate::listener::Entry;
use crate::value::Value;

use super::Hub;
use super::routing::Reached;

impl Hub {
    /// After a listener registered (and was traced): what the features
    /// kept for it arrives now — a stored table to a collection listener,
    /// then a stored message to anyone who takes messages.
    pub(super) fn after_listen(&self, entry: &Rc<Entry>) {
        crate::collection::dispatch::after_listen(self, entry);
        crate::store::after_listen(self, entry);
    }

    /// After a send's listeners were called (and the send was not
    /// refused): the features with listeners of their own on what the send
    /// `reached` call them — a table sent, to its collection listeners.
    /// Returns how many they called. `request`: the send carries a
    /// responder.
    #[inline]
    pub(super) fn after_send(
        &self,
        key: Key,
        args: &[Value],
        request: bool,
        reached: Reached<'_>,
    ) -> usize {
        crate::collection::dispatch::after_send(self, key, args, request, reached)
    }
}
