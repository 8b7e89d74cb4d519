//! Delivery: a send's second phase — the listeners called in order, each
//! only if it may be called now — and the typed send's direct lane.

use std::panic::Location;
use std::rc::Rc;
use std::time::Instant;

use crate::key::Key;
use crate::listener::{Entry, ListenerParams};
use crate::report::Report;
use crate::signature::Kind;
use crate::source::Source;
use crate::trace::{Delivery, DropReason};
use crate::typed::{IntoArgs, SendKey, TypedArgs};
use crate::value::Value;

use super::admission::note_rust_site;
use super::routing::{Gathered, Reached, Route, current_lane, delivery_order, route, sort_key};
use super::state::Lane;
use super::{Caller, Delivered, Hub, HubError, Message, Responder};

/// Where a listener stands among every listener of its dispatch
/// ([`sort_key`]: order, depth, registration).
pub(crate) type Place = (i32, u32, u64);

/// Listeners a feature calls itself in a dispatch (see `seam`), taken in
/// the one delivery order of every listener of the dispatch: before the
/// deliverer calls a message listener it hands its place to `before`,
/// which calls the feature's listeners that sort ahead of it; after the
/// last, `rest` calls the others. So `order` holds across every listener
/// of a dispatch, whoever calls it.
pub(crate) trait Interleaved {
    /// Calls the feature's listeners that sort before `place`.
    fn before(&mut self, place: Place);
    /// Calls the feature's listeners not called yet; returns how many it
    /// called in all.
    fn rest(&mut self) -> usize;
}

/// A dispatch's delivery, handed to the features with listeners of their
/// own beside its message listeners (see `seam`): they make what calls
/// theirs ([`Interleaved`]) in their own frame and deliver with it there,
/// by reference — never returned, never moved.
pub(crate) trait Deliver {
    type Out;
    /// Delivers, with `beside`'s listeners in their places.
    fn deliver(self, beside: &mut impl Interleaved) -> Self::Out;
}

/// A dispatch down what it reached (a send or a request).
struct DownReached<'a, 'c> {
    hub: &'a Hub,
    key: Key,
    source: Source,
    args: &'a [Value],
    caller: Caller<'c>,
    responder: Option<&'a Responder>,
    reached: Reached<'a>,
}

impl Deliver for DownReached<'_, '_> {
    type Out = Result<Delivered, HubError>;

    #[inline]
    fn deliver(self, beside: &mut impl Interleaved) -> Self::Out {
        let DownReached {
            hub,
            key,
            source,
            args,
            caller,
            responder,
            reached,
        } = self;
        hub.deliver_reached(key, source, args, caller, responder, reached, beside)
    }
}

/// A delivery down gathered lists, with nobody to answer (what a feature
/// dispatches itself down the lists it gathered).
pub(crate) struct DownLists<'a, 'c> {
    pub hub: &'a Hub,
    pub key: Key,
    pub source: Source,
    pub args: &'a [Value],
    pub caller: Caller<'c>,
    pub lists: &'a Gathered,
}

impl Deliver for DownLists<'_, '_> {
    type Out = Result<Delivered, HubError>;

    #[inline]
    fn deliver(self, beside: &mut impl Interleaved) -> Self::Out {
        let DownLists {
            hub,
            key,
            source,
            args,
            caller,
            lists,
        } = self;
        hub.deliver(key, source, args, caller, None, lists, None, beside)
    }
}

/// Nobody beside the message listeners (every send no feature takes part
/// in): both calls are empty and inlined, so its delivery loop is the
/// message loop alone.
pub(crate) struct Alone;

impl Interleaved for Alone {
    #[inline(always)]
    fn before(&mut self, _: Place) {}
    #[inline(always)]
    fn rest(&mut self) -> usize {
        0
    }
}

impl Hub {
    /// Sends a tuple of Rust values from `source`, on a [`Key`] or on a
    /// [`TypedKey`](crate::TypedKey) (faster: see there).
    #[track_caller]
    #[inline]
    pub fn send<A, K: SendKey<A>>(
        &self,
        key: K,
        source: impl Into<Source>,
        args: A,
    ) -> Result<Delivered, HubError> {
        key.send_on(self, source.into(), args, Location::caller())
    }

    /// Sends by key text (interned on the way; a baked [`Key`] is faster).
    #[track_caller]
    pub fn send_str<A: IntoArgs>(
        &self,
        key: &str,
        source: impl Into<Source>,
        args: A,
    ) -> Result<Delivered, HubError> {
        let key = self.key(key)?;
        let mut args = args.into_args();
        self.dispatch(
            key,
            source.into(),
            args.as_mut(),
            Caller::Rust(Location::caller()),
            None,
        )
    }

    /// Sends dynamic values (the script embeddings' entry).
    /// Outside the crate, a script face reaches it through
    /// [`crate::face::Faced`].
    pub(crate) fn send_values(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
    ) -> Result<Delivered, HubError> {
        self.dispatch(key, source, args, caller, None)
    }

    /// The dispatch core for messages and requests.
    pub(crate) fn dispatch(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
        responder: Option<&Responder>,
    ) -> Result<Delivered, HubError> {
        let mut lists = Gathered::new();
        let routed = self.admit_then(key, args, caller, Kind::Event, |s| {
            route(s, key, source, &mut lists)
        })?;
        let Some(route) = routed else {
            return Ok(Delivered::default());
        };
        if let Route::Gone(gone) = route {
            return Err(*gone);
        }
        let args: &[Value] = args;
        if self.is_observed() {
            let delivery = if responder.is_some() {
                Delivery::Request
            } else {
                Delivery::Send
            };
            self.trace_dispatch(key, source, args, delivery);
        }
        let reached = match &route {
            Route::Lane(lane) => Reached::Lane(lane),
            Route::Lists | Route::Gone(_) => Reached::Lists(&lists),
        };
        // The features with listeners beside the message listeners deliver
        // with them; a plain send pays the one check here and is
        // delivered with nobody beside.
        let delivered = if self.may_have_beside(args, responder.is_some()) {
            let down = DownReached {
                hub: self,
                key,
                source,
                args,
                caller,
                responder,
                reached,
            };
            self.beside_send(key, args, reached, down)
        } else {
            self.deliver_reached(key, source, args, caller, responder, reached, &mut Alone)
        };
        if self.is_observed() {
            let listeners = delivered.as_ref().map_or(0, |d| d.listeners);
            self.trace_end(key, listeners);
        }
        delivered
    }

    /// Phase 2 of a send or request, down what it reached.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn deliver_reached(
        &self,
        key: Key,
        source: Source,
        args: &[Value],
        caller: Caller<'_>,
        responder: Option<&Responder>,
        reached: Reached<'_>,
        beside: &mut impl Interleaved,
    ) -> Result<Delivered, HubError> {
        match reached {
            Reached::Lane(lane) => {
                self.deliver_lane(key, source, args, caller, responder, lane, beside)
            }
            Reached::Lists(lists) => {
                self.deliver(key, source, args, caller, responder, lists, None, beside)
            }
        }
    }

    /// Phase 2 of a send or request: down the lane, in delivery order,
    /// with the listeners a feature calls itself in their places.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deliver_lane(
        &self,
        key: Key,
        source: Source,
        args: &[Value],
        caller: Caller<'_>,
        responder: Option<&Responder>,
        lane: &Lane,
        beside: &mut impl Interleaved,
    ) -> Result<Delivered, HubError> {
        if lane.max_arity > args.len() && self.inner.checked.get() {
            let entries = lane.entries.iter().map(|(entry, _)| entry);
            self.check_arity(key, args, caller, entries, None)?;
        }
        // A lane whose every listener a feature calls itself (see `seam`)
        // has nobody for the message deliverer, and nobody to place the
        // feature's listeners among.
        if lane.messages == 0 {
            return Ok(Delivered {
                listeners: beside.rest(),
            });
        }
        let mut called = 0;
        for (entry, depth) in lane.entries.iter() {
            beside.before(sort_key(entry, *depth));
            if self.call_entry(entry, *depth, key, source, args, responder) {
                called += 1;
            }
        }
        called += beside.rest();
        Ok(Delivered { listeners: called })
    }

    /// A typed send through a [`TypedKey`](crate::TypedKey): straight to the
    /// closures when the key's lane has a typed view for `A`, otherwise the
    /// ordinary dispatch, after which the lane is judged for a typed view.
    /// Always inlined, with `direct_lane`: with two callers (typed keys and
    /// key text) the compiler put the lookup out of line, which made a
    /// one-listener typed send half as slow again (5.5 → 8.2 ns).
    #[inline(always)]
    pub(crate) fn send_direct<A: TypedArgs>(
        &self,
        key: Key,
        source: Source,
        args: A,
        site: &'static Location<'static>,
    ) -> Result<Delivered, HubError> {
        if let Some(direct) = self.direct_lane::<A>(key, source, site) {
            let mut called = 0;
            for (entry, f) in direct.entries.iter() {
                if !self.may_call(entry) {
                    continue;
                }
                let last = entry.take_use();
                f(args.clone());
                called += 1;
                if last {
                    self.drop_listener(entry.id, DropReason::TimesUsedUp);
                }
            }
            return Ok(Delivered { listeners: called });
        }
        let mut values = args.clone().into_args();
        let delivered = self.dispatch(key, source, values.as_mut(), Caller::Rust(site), None)?;
        self.judge_direct::<A>(key, source);
        Ok(delivered)
    }

    /// The lane's typed view for `A`, when the lane is current for
    /// `source` and nothing observes dispatches (a traced or logged send
    /// takes the full path).
    #[inline(always)]
    pub(super) fn direct_lane<A: TypedArgs>(
        &self,
        key: Key,
        source: Source,
        site: &'static Location<'static>,
    ) -> Option<Rc<crate::lane::DirectLane<A>>> {
        if self.inner.trace.is_observed() {
            return None;
        }
        let mut state = self.inner.state.borrow_mut();
        let s = &mut *state;
        let epoch = s.epoch;
        let hot = s.slots.get(key.index())?.hot.as_ref();
        let direct = match hot.and_then(|hot| hot.get::<A>(epoch, source)) {
            Some(direct) => direct,
            None => {
                let direct = current_lane(s, key, source)?.direct::<A>()?;
                // The old view is dropped here, under the borrow, and not in
                // the graveyard (which would allocate per switch of source):
                // it is never the last holder of an entry, since removing an
                // entry clears the views of every key whose lanes held it.
                s.slots[key.index()].hot =
                    Some(crate::lane::HotView::new(epoch, source, direct.clone()));
                direct
            }
        };
        if let Some(site) = note_rust_site(&mut s.slots[key.index()], site) {
            let name = s.keys.name(key).clone();
            if s.table.record_site(&name, site) {
                self.inner.table_dirty.set(true);
            }
        }
        Some(direct)
    }

    /// After an ordinary typed send: gives the lane a typed view for `A`
    /// if the signature is exactly `A`'s types (so no send of `A` can
    /// mismatch or need recording) and every listener takes exactly `A`.
    pub(super) fn judge_direct<A: TypedArgs>(&self, key: Key, source: Source) {
        let state = self.inner.state.borrow();
        let Some(lane) = current_lane(&state, key, source) else {
            return;
        };
        let Some(sig) = &state.slots[key.index()].sig else {
            return;
        };
        if lane.direct.get().is_some() {
            return;
        }
        if A::fits(&sig.params) && sig.knows_kind(Kind::Event) {
            lane.make_direct::<A>();
        } else {
            let _ = lane.direct.set(None);
        }
    }

    /// Phase 2: call the gathered listeners in delivery order, with the
    /// listeners a feature calls itself (`beside`) in their places. `only`
    /// limits delivery to one message listener (one that just arrived).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn deliver(
        &self,
        key: Key,
        source: Source,
        args: &[Value],
        caller: Caller<'_>,
        responder: Option<&Responder>,
        lists: &Gathered,
        only: Option<&Rc<Entry>>,
        beside: &mut impl Interleaved,
    ) -> Result<Delivered, HubError> {
        if self.inner.checked.get() {
            let entries = lists
                .iter()
                .filter(|(list, _)| list.max_arity > args.len())
                .flat_map(|(list, _)| list.entries.iter());
            self.check_arity(key, args, caller, entries, only)?;
        }
        // Lists whose every listener a feature calls itself (see `seam`)
        // have nobody for the message deliverer.
        if lists.iter().all(|(list, _)| list.messages == 0) {
            return Ok(Delivered {
                listeners: beside.rest(),
            });
        }
        let mut called = 0;
        for (entry, depth) in delivery_order(lists) {
            beside.before(sort_key(entry, depth));
            if only.is_none_or(|only| Rc::ptr_eq(only, entry))
                && self.call_entry(entry, depth, key, source, args, responder)
            {
                called += 1;
            }
        }
        called += beside.rest();
        Ok(Delivered { listeners: called })
    }

    /// A typed listener that wants more than was sent blocks the dispatch:
    /// no listener is called with missing arguments.
    #[cold]
    pub(super) fn check_arity<'e>(
        &self,
        key: Key,
        args: &[Value],
        caller: Caller<'_>,
        entries: impl Iterator<Item = &'e Rc<Entry>>,
        only: Option<&Rc<Entry>>,
    ) -> Result<(), HubError> {
        for entry in entries {
            if entry.params.arity() <= args.len()
                || !entry.callable()
                || only.is_some_and(|o| !Rc::ptr_eq(o, entry))
            {
                continue;
            }
            let ListenerParams::Typed(types) = &entry.params else {
                continue;
            };
            let position = args.len();
            let name = self.key_name(key).to_string();
            return Err(self.mismatch(
                name,
                position,
                types[position].to_string(),
                "nothing (the send has fewer arguments)".into(),
                caller,
                entry.site.clone(),
            ));
        }
        Ok(())
    }

    /// Whether `entry` may be called now. One whose owner is gone is
    /// dropped here, before anything more is delivered to it.
    #[inline]
    pub(super) fn may_call(&self, entry: &Entry) -> bool {
        if entry.callable() {
            return true;
        }
        if entry.alive.get() {
            self.drop_listener(entry.id, DropReason::OwnerGone);
        }
        false
    }

    /// Calls one message listener if it may be called now: alive, owner
    /// alive, partial when reached from below, payload of the struct it
    /// expects. Takes one of its `times`. Returns whether it was called.
    pub(crate) fn call_entry(
        &self,
        entry: &Rc<Entry>,
        depth: u32,
        key: Key,
        source: Source,
        args: &[Value],
        responder: Option<&Responder>,
    ) -> bool {
        if depth > 0 && !entry.partial || !self.may_call(entry) {
            return false;
        }
        if let Some(expected) = &entry.expects
            && !self.payload_is(args.first(), expected, entry, key)
        {
            return false;
        }
        let Some(f) = entry.message_for(args) else {
            return false;
        };
        let last = entry.take_use();
        let started = self.is_tracing().then(Instant::now);
        let message = Message {
            hub: self.uncharged(),
            key,
            source,
            args,
            responder: if entry.wants_responder {
                responder
            } else {
                None
            },
            listener: entry.id,
        };
        if let Err(e) = f(&message) {
            self.report(Report::ListenerFailed {
                key: self.key_name(key).to_string(),
                message: e.message,
                site: entry.site.clone(),
            });
        }
        if let Some(started) = started {
            self.trace_called(key, entry, started.elapsed());
        }
        if last {
            self.drop_listener(entry.id, DropReason::TimesUsedUp);
        }
        true
    }

    /// Router semantics: a listener that names a struct only gets payloads
    /// of that struct (or a child of it); others are skipped with a warning.
    pub(super) fn payload_is(
        &self,
        payload: Option<&Value>,
        expected: &str,
        entry: &Entry,
        key: Key,
    ) -> bool {
        let ok = match payload {
            Some(Value::Struct(s)) => self
                .inner
                .state
                .borrow()
                .table
                .structs
                .is_a(&s.name, expected),
            _ => false,
        };
        if !ok {
            self.report(Report::HookPayloadSkipped {
                key: self.key_name(key).to_string(),
                expected: expected.to_owned(),
                got: payload.map_or_else(|| "nothing".to_owned(), Value::kind_name),
                site: entry.site.clone(),
            });
        }
        ok
    }
}
