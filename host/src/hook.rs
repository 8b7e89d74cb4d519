//! Hooks: channels whose listeners get the payload itself and may change it.
//!
//! Built on the hub's dispatch core (the same entries, lists, owners and
//! re-entrancy rules as messages), with the router's ordering: highest
//! priority first, registration order breaking ties, partial listeners on the
//! channels above included in that same order. Any listener may mark the
//! payload handled or cancel, which stops the rest. A hook nobody listens to
//! costs one lookup per tag level and allocates nothing.

use std::panic::Location;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::channel::{Channel, List, Slots};
use crate::hub::{Hub, HubError, ListenSpec};
use crate::key::{Key, Keys, parent_key};
use crate::listener::{
    Callback, Entry, FeatureListener, ListenOptions, ListenerError, ListenerHandle, ListenerId,
    ListenerParams, Match, Owner,
};
use crate::report::Report;
use crate::signature::{Kind, Role, Site};
use crate::source::Source;
use crate::trace::{Delivery, ListenerKind, TraceEvent};
use crate::value::Value;

/// A hook listener's callback.
pub type HookFn = dyn Fn(&mut HookCall<'_>) -> Result<(), ListenerError>;

/// A hook listener as its entry holds it: kept apart from its key's tiers
/// (in [`Hooks`]), called by a hook run only, never by a send.
pub(crate) struct HookListen(pub(crate) Rc<HookFn>);

/// What a hook channel keeps beside each snapshot: each entry's hook
/// function, in entry order, found once when the snapshot is made, so a
/// hook run calls them without asking each entry what it holds.
pub(crate) struct HookSlots;

impl Slots for HookSlots {
    type List = Box<[Option<Rc<HookFn>>]>;
    type Lane = ();

    fn list(entries: &[Rc<Entry>]) -> Self::List {
        entries
            .iter()
            .map(|e| e.feature::<HookListen>().map(|h| h.0.clone()))
            .collect()
    }

    /// No message deliverer reads a hook channel.
    fn not_for_messages(list: &Self::List) -> usize {
        list.len()
    }

    /// Hook runs keep no lanes.
    fn lane(_: &[(Rc<List<Self>>, u32)]) {}
}

/// The hook listener lists one run visits, with their depth.
type HookLists = SmallVec<[(Rc<List<HookSlots>>, u32); 6]>;

/// A hook listener of a run, in priority order, with its function.
type Ordered<'l> = (&'l Rc<Entry>, &'l Option<Rc<HookFn>>);

impl FeatureListener for HookListen {
    fn kept_apart(&self) -> bool {
        true
    }

    fn called_by_plain_send(&self, _table: bool) -> Option<bool> {
        None
    }

    fn listener_kind(&self, entry: &Entry) -> ListenerKind {
        ListenerKind::Hook {
            priority: entry.priority(),
        }
    }

    /// Its priority.
    fn shown_order(&self, entry: &Entry) -> i32 {
        entry.priority()
    }
}

/// Options of a hook listener.
#[derive(Debug, Clone, Default)]
pub struct HookOptions {
    /// Higher runs first.
    pub priority: i32,
    pub matching: Match,
    pub owner: Option<Owner>,
    /// The struct the listener expects; `None` takes any payload.
    pub expects: Option<String>,
}

impl HookOptions {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
    pub fn partial(mut self) -> Self {
        self.matching = Match::Partial;
        self
    }
    pub fn owner(mut self, owner: Owner) -> Self {
        self.owner = Some(owner);
        self
    }
    pub fn expects(mut self, struct_name: impl Into<String>) -> Self {
        self.expects = Some(struct_name.into());
        self
    }
}

/// What a hook listener is called with: the payload itself, changeable.
pub struct HookCall<'a> {
    pub hub: &'a Hub,
    pub key: Key,
    pub payload: &'a mut Value,
    handled: bool,
    cancelled: bool,
}

impl HookCall<'_> {
    /// Marks the payload handled; later listeners still run.
    pub fn handled(&mut self) {
        self.handled = true;
    }
    /// Stops the rest of the listeners.
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }
    pub fn is_handled(&self) -> bool {
        self.handled
    }
}

/// What a hook run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HookResult {
    /// How many listeners ran.
    pub ran: usize,
    pub handled: bool,
    pub cancelled: bool,
}

impl Hub {
    /// Listens to a hook with a closure over the [`HookCall`].
    #[track_caller]
    pub fn listen_hook(
        &self,
        key: &str,
        options: HookOptions,
        f: impl Fn(&mut HookCall<'_>) + 'static,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let callback: Rc<HookFn> = Rc::new(move |call: &mut HookCall<'_>| {
            f(call);
            Ok(())
        });
        let id = self.listen_hook_raw(key, options, Some(site), callback)?;
        Ok(ListenerHandle {
            hub: self.downgrade(),
            id,
        })
    }

    /// The hook registration every face goes through.
    /// Outside the crate, a script face reaches it through
    /// [`crate::face::Faced`].
    pub(crate) fn listen_hook_raw(
        &self,
        key: &str,
        options: HookOptions,
        site: Option<Site>,
        callback: Rc<HookFn>,
    ) -> Result<ListenerId, HubError> {
        if let Some(site) = &site {
            self.record_site(key, site.clone());
        }
        if self.with_state(|s| s.table.note_kind(key, Kind::Hook))
            == crate::signature::Recorded::Changed
        {
            self.mark_table_dirty();
        }
        let spec = ListenSpec {
            scope: Source::Global,
            options: ListenOptions {
                times: -1,
                order: crate::listener::order_of_priority(options.priority),
                matching: options.matching,
                owner: options.owner,
            },
            params: ListenerParams::Dynamic,
            callback: Callback::Feature(Rc::new(HookListen(callback))),
            site,
            wants_responder: false,
            expects: options.expects.map(Rc::from),
            direct: None,
        };
        self.listen_raw(key, spec)
    }

    /// Is anything listening for `key`, or partially for a key above it?
    /// One lookup of the text; no allocation. Inlined into the caller so an
    /// unheard hook costs the state borrow and that lookup, nothing more.
    #[inline]
    pub fn has_hook_listeners(&self, key: &str) -> bool {
        let state = self.inner.state.borrow();
        state.hooks.hear(&state.keys, key)
    }

    /// Runs a hook by key text. A key nobody listens to returns at once
    /// (games place hooks freely) after one lookup and a pass over its
    /// text, so that a malformed key is an error whether or not anything
    /// listens (in checked mode or not: a key is never a type question).
    /// A heard run records its Rust call site (as a send), once per site.
    #[track_caller]
    #[inline]
    pub fn run_hook(&self, key: &str, payload: &mut Value) -> Result<HookResult, HubError> {
        if !self.has_hook_listeners(key) {
            return unheard(key);
        }
        self.run_heard_hook(key, payload, Location::caller())
    }

    /// The out-of-line half of [`Hub::run_hook`]: intern, record the call
    /// site, then run.
    #[inline(never)]
    fn run_heard_hook(
        &self,
        key: &str,
        payload: &mut Value,
        site: &'static Location<'static>,
    ) -> Result<HookResult, HubError> {
        let key = self.key(key)?;
        self.record_rust_site(key, site);
        Ok(self.run_hook_key(key, payload))
    }

    /// Runs a hook on a baked key: listeners in priority order, each with the
    /// payload itself, until one cancels.
    pub fn run_hook_key(&self, key: Key, payload: &mut Value) -> HookResult {
        let (lists, unrecorded) = {
            let mut state = self.inner.state.borrow_mut();
            let s = &mut *state;
            // A hook's first run records its payload type, as a first send
            // records its arguments (one branch once the key is known).
            let unrecorded = crate::hub::has_no_params(s, key);
            (s.hooks.lists(&s.keys, key), unrecorded)
        };
        if unrecorded {
            self.record_hook_payload(key, payload);
        }
        let mut result = HookResult::default();
        let mut order: SmallVec<[Ordered<'_>; 16]> = SmallVec::new();
        for (list, depth) in &lists {
            for (entry, f) in list.entries.iter().zip(list.extras.iter()) {
                if *depth == 0 || entry.partial {
                    order.push((entry, f));
                }
            }
        }
        if lists.len() > 1 {
            order.sort_by_key(|(e, _)| (e.order, e.seq));
        }
        // What each listener is handed, looked up once for the whole run.
        let plain = self.uncharged();
        let tracing = self.is_tracing();
        let observed = self.is_observed();
        if observed {
            self.trace_dispatch(
                key,
                Source::Global,
                std::slice::from_ref(payload),
                Delivery::Hook,
            );
        }
        for (entry, f) in order {
            if !entry.callable() {
                if entry.alive.get() {
                    self.drop_listener(entry.id, crate::trace::DropReason::OwnerGone);
                }
                continue;
            }
            if let Some(expected) = &entry.expects {
                let ok = match &*payload {
                    Value::Struct(s) => self.table().structs.is_a(&s.name, expected),
                    _ => false,
                };
                if !ok {
                    self.report(Report::HookPayloadSkipped {
                        key: self.key_name(key).to_string(),
                        expected: expected.to_string(),
                        got: payload.kind_name(),
                        site: entry.site.clone(),
                    });
                    continue;
                }
            }
            let Some(f) = f else {
                continue;
            };
            let mut call = HookCall {
                hub: plain,
                key,
                payload: &mut *payload,
                handled: false,
                cancelled: false,
            };
            result.ran += 1;
            let started = tracing.then(std::time::Instant::now);
            let outcome = f(&mut call);
            let (handled, cancelled) = (call.handled, call.cancelled);
            if let Some(started) = started {
                self.trace_called(key, entry, started.elapsed());
            }
            if let Err(ListenerError { message }) = outcome {
                self.report(Report::ListenerFailed {
                    key: self.key_name(key).to_string(),
                    message,
                    site: entry.site.clone(),
                });
            }
            result.handled |= handled;
            if cancelled {
                result.cancelled = true;
                break;
            }
        }
        if tracing {
            let name = self.key_name(key);
            self.trace(&TraceEvent::HookDone {
                key: &name,
                ran: result.ran,
                handled: result.handled,
                cancelled: result.cancelled,
            });
        }
        if observed {
            self.log_end();
        }
        result
    }
}

/// What the hub keeps for hooks, in one field of its state: the hook
/// listeners of each key, apart from the key's message channels (a hook
/// is no send: it has no tiers, lanes or sources).
#[derive(Default)]
pub(crate) struct Hooks {
    /// Hook listeners by key text, so an unheard hook costs a bit test or
    /// one lookup of the text it is run with (no interning, no walk up the
    /// levels)...
    hooked: HookedKeys,
    /// ...unless partial hook listeners exist: then the levels are walked.
    partial: usize,
    /// Each key's hook listeners, by key index (as far as the last key
    /// that had one).
    channels: Vec<HookChannel>,
}

/// The hook listeners of one key.
#[derive(Default)]
struct HookChannel {
    listeners: Channel<HookSlots>,
    /// How many of them listen partially (hear the keys under it too).
    partial: u32,
}

impl Hooks {
    /// Would a hook run of `key` (text) reach anyone?
    #[inline]
    fn hear(&self, keys: &Keys, key: &str) -> bool {
        self.hooked.contains(key) || self.partial != 0 && self.partial_above(keys, key)
    }

    /// Registers hook listener `entry` (what its channel lets go of goes
    /// to `graveyard`).
    pub(crate) fn insert(
        &mut self,
        keys: &Keys,
        entry: Rc<Entry>,
        graveyard: &mut Vec<Box<dyn std::any::Any>>,
    ) {
        let index = entry.key.index();
        if self.channels.len() <= index {
            self.channels.resize_with(index + 1, HookChannel::default);
        }
        self.hooked.add(keys.name(entry.key));
        let channel = &mut self.channels[index];
        if entry.partial {
            channel.partial += 1;
            self.partial += 1;
        }
        channel.listeners.insert(entry, graveyard);
    }

    /// Unregisters hook listener `entry`.
    pub(crate) fn remove(
        &mut self,
        keys: &Keys,
        entry: &Entry,
        graveyard: &mut Vec<Box<dyn std::any::Any>>,
    ) {
        self.hooked.remove(keys.name(entry.key));
        if entry.partial {
            self.partial -= 1;
        }
        if let Some(channel) = self.channels.get_mut(entry.key.index())
            && channel.listeners.remove(entry, graveyard)
            && entry.partial
        {
            channel.partial -= 1;
        }
    }

    /// The hook listener lists a run of `key` reaches: the key's own, and
    /// the partial ones of each level above it, with their depth.
    fn lists(&mut self, keys: &Keys, key: Key) -> HookLists {
        let mut out = HookLists::new();
        let mut current = Some(key);
        let mut depth = 0;
        while let Some(k) = current {
            if let Some(channel) = self.channels.get_mut(k.index())
                && (depth == 0 || channel.partial > 0)
                && let Some(list) = channel.listeners.list()
            {
                out.push((list.clone(), depth));
            }
            current = keys.info(k).parent;
            depth += 1;
        }
        out
    }

    /// Whether a partial hook listener on a level above `key` (or any
    /// listener on `key` itself, once interned) would hear it: walks the
    /// text up to the first interned level, then by handle. Out of line:
    /// only hubs with partial hook listeners pay for it.
    #[inline(never)]
    fn partial_above(&self, keys: &Keys, key: &str) -> bool {
        let mut text = Some(key);
        let mut depth = 0;
        while let Some(t) = text {
            if let Some(k) = keys.get(t) {
                let mut current = Some(k);
                while let Some(k) = current {
                    if let Some(channel) = self.channels.get(k.index())
                        && !channel.listeners.is_empty()
                        && (depth == 0 || channel.partial > 0)
                    {
                        return true;
                    }
                    current = keys.info(k).parent;
                    depth += 1;
                }
                return false;
            }
            text = parent_key(t);
            depth += 1;
        }
        false
    }
}

/// An unheard hook: nothing to run, but a malformed key is the error
/// naming it. Out of line, so that the lookup in front of it stays small
/// enough to inline into every caller.
#[inline(never)]
fn unheard(key: &str) -> Result<HookResult, HubError> {
    if !crate::key::is_well_formed(key) {
        return unheard_malformed(key);
    }
    Ok(HookResult::default())
}

/// The error of a key [`is_well_formed`](crate::key::is_well_formed)
/// refused.
#[cold]
#[inline(never)]
fn unheard_malformed(key: &str) -> Result<HookResult, HubError> {
    crate::key::validate_key(key)?;
    Ok(HookResult::default())
}

/// The keys that have hook listeners, by text, with a one-word filter in
/// front of the map: most hooks a game runs have nobody listening, and for
/// most of those one bit test answers without hashing the key.
#[derive(Default)]
pub(crate) struct HookedKeys {
    counts: FxHashMap<Rc<str>, u32>,
    /// One bit per hooked key (see [`HookedKeys::bit`]); a clear bit proves
    /// the key is not hooked, a set bit sends the question to the map.
    filter: u64,
    /// Keys that left since the filter was last rebuilt: their bits may
    /// still be set (a stale bit only costs a lookup).
    left: usize,
}

impl HookedKeys {
    /// A key's filter bit: its length and three of its bytes, spread by a
    /// Fibonacci multiply (the top six bits pick the bit). Cheap, and it
    /// separates the sibling keys a game tends to have.
    #[inline]
    fn bit(key: &str) -> u64 {
        let bytes = key.as_bytes();
        let at = |i: usize| u64::from(bytes.get(i).copied().unwrap_or(0));
        let len = bytes.len();
        let mix = len as u64
            | at(0) << 16
            | at(len / 2) << 24
            | at(len.wrapping_sub(1)) << 32
            | at(len.wrapping_sub(2)) << 40;
        1 << (mix.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
    }

    #[inline]
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.filter & Self::bit(key) != 0 && self.counts.contains_key(key)
    }

    pub(crate) fn add(&mut self, key: &Rc<str>) {
        *self.counts.entry(key.clone()).or_default() += 1;
        self.filter |= Self::bit(key);
    }

    /// One listener of `key` fewer. The filter is rebuilt once as many
    /// keys have left as are still hooked (rare: listeners come and go
    /// with mods, not per frame), so removing the hooks of many keys one
    /// by one stays linear.
    pub(crate) fn remove(&mut self, key: &str) {
        let Some(n) = self.counts.get_mut(key) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            self.counts.remove(key);
            self.left += 1;
            if self.left > self.counts.len() {
                self.filter = self.counts.keys().fold(0, |f, k| f | Self::bit(k));
                self.left = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooked_keys_answer_exactly_while_a_listener_is_left() {
        let mut hooked = HookedKeys::default();
        let damage: Rc<str> = Rc::from("Combat.Damage");
        let heal: Rc<str> = Rc::from("Combat.Heal");
        assert!(!hooked.contains("Combat.Damage"));
        hooked.add(&damage);
        hooked.add(&damage);
        hooked.add(&heal);
        assert!(hooked.contains("Combat.Damage") && hooked.contains("Combat.Heal"));
        assert!(!hooked.contains("Combat.Dodge") && !hooked.contains("") && !hooked.contains("C"));
        hooked.remove("Combat.Damage");
        assert!(hooked.contains("Combat.Damage"), "one listener is left");
        hooked.remove("Combat.Damage");
        assert!(!hooked.contains("Combat.Damage"));
        assert!(
            hooked.contains("Combat.Heal"),
            "the rebuilt filter keeps the others"
        );
        hooked.remove("Combat.Heal");
        hooked.remove("Never.Added");
        assert_eq!(hooked.filter, 0);
    }
}
