//! Listeners: options, owners, handles, and the entry the dispatch core keeps.

use std::any::Any;
use std::cell::Cell;
use std::fmt;
use std::rc::{Rc, Weak};

use crate::hook::HookCall;
use crate::hub::{HubInner, Message};
use crate::key::Key;
use crate::signature::Site;
use crate::source::Source;
use crate::trace::ListenerKind;
use crate::types::Type;
use crate::value::{ObjectId, Value};

/// How a listener matches keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Match {
    /// Only the key itself.
    #[default]
    Exact,
    /// The key and every key under it: `Inv` hears `Inv.Items` and `Inv.Items.Row`.
    Partial,
}

/// What keeps a listener alive. Once the owner is gone the listener is
/// dropped before the next delivery.
#[derive(Clone)]
pub enum Owner {
    /// A hub object: destroying it drops the listener at once.
    Object(ObjectId),
    /// Any reference-counted thing of the host's choosing.
    Weak(Weak<dyn Any>),
}

impl Owner {
    /// Owned by whatever `rc` points at.
    pub fn of<T: Any>(rc: &Rc<T>) -> Owner {
        let weak: Weak<dyn Any> = Rc::downgrade(rc) as Weak<dyn Any>;
        Owner::Weak(weak)
    }

    pub(crate) fn is_alive(&self) -> bool {
        match self {
            // Object owners are removed eagerly when the object is destroyed.
            Owner::Object(_) => true,
            Owner::Weak(w) => w.strong_count() > 0,
        }
    }

    pub(crate) fn identity(&self) -> OwnerKey {
        match self {
            Owner::Object(o) => OwnerKey::Object(*o),
            Owner::Weak(w) => OwnerKey::Ptr(w.as_ptr() as *const () as usize),
        }
    }
}

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Owner::Object(o) => write!(f, "Owner::Object({o})"),
            Owner::Weak(w) => write!(f, "Owner::Weak(alive: {})", w.strong_count() > 0),
        }
    }
}

/// An owner's identity, for unlisten-by-owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum OwnerKey {
    Object(ObjectId),
    Ptr(usize),
}

/// Listen options. `times = -1` listens forever; `N` unlistens after N calls.
/// Lower `order` runs first; ties keep registration order.
#[derive(Debug, Clone)]
pub struct ListenOptions {
    pub times: i32,
    pub order: i32,
    pub matching: Match,
    pub owner: Option<Owner>,
}

impl Default for ListenOptions {
    fn default() -> Self {
        Self {
            times: -1,
            order: 0,
            matching: Match::Exact,
            owner: None,
        }
    }
}

impl ListenOptions {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn times(mut self, times: i32) -> Self {
        self.times = times;
        self
    }
    pub fn order(mut self, order: i32) -> Self {
        self.order = order;
        self
    }
    pub fn partial(mut self) -> Self {
        self.matching = Match::Partial;
        self
    }
    pub fn matching(mut self, matching: Match) -> Self {
        self.matching = matching;
        self
    }
    pub fn owner(mut self, owner: Owner) -> Self {
        self.owner = Some(owner);
        self
    }
}

/// A listener's id, unique within a hub, never 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ListenerId(pub(crate) u64);

impl ListenerId {
    pub fn get(self) -> u64 {
        self.0
    }
    pub fn from_raw(raw: u64) -> Self {
        ListenerId(raw)
    }
}

impl fmt::Display for ListenerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "listener#{}", self.0)
    }
}

/// What a listener declares it takes.
#[derive(Debug, Clone)]
pub enum ListenerParams {
    /// A typed (Rust) listener: these types, a prefix of the message.
    Typed(Rc<[Type]>),
    /// A script listener: takes whatever prefix it is given.
    Dynamic,
}

impl ListenerParams {
    pub(crate) fn arity(&self) -> usize {
        match self {
            ListenerParams::Typed(t) => t.len(),
            ListenerParams::Dynamic => 0,
        }
    }
}

/// The error a listener returns; reported with the listener's site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerError {
    pub message: String,
}

impl ListenerError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The error as it happened reading table row `row` ("row 3: member
    /// 2: expected ..."), unless it names its row already.
    #[cold]
    pub fn at_row(self, row: usize) -> Self {
        if self.message.starts_with("row ") {
            return self;
        }
        Self {
            message: format!("row {row}: {}", self.message),
        }
    }
}

impl fmt::Display for ListenerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A message listener's callback.
pub type MessageFn = dyn Fn(&Message<'_>) -> Result<(), ListenerError>;
/// A hook listener's callback.
pub type HookFn = dyn Fn(&mut HookCall<'_>) -> Result<(), ListenerError>;

pub(crate) enum Callback {
    Message(Rc<MessageFn>),
    Hook(Rc<HookFn>),
    /// A collection listener: called by `collection::dispatch`, skipped by
    /// the message deliverer.
    Collection(Rc<crate::collection::listen::CollectionListen>),
}

/// One registered listener, shared by the channel lists that hold it.
pub(crate) struct Entry {
    pub id: ListenerId,
    pub key: Key,
    pub scope: Source,
    /// Registration sequence: breaks ties in order.
    pub seq: u64,
    pub order: i32,
    pub partial: bool,
    pub alive: Cell<bool>,
    pub remaining: Cell<i32>,
    pub owner: Option<Owner>,
    pub params: ListenerParams,
    /// A struct the listener expects (router and hook listeners); others are
    /// not delivered to it.
    pub expects: Option<Rc<str>>,
    pub wants_responder: bool,
    pub callback: Callback,
    /// A typed Rust listener's closure by its tuple type (a
    /// `lane::DirectFn`), for typed sends of exactly that tuple.
    pub direct: Option<Rc<dyn Any>>,
    pub site: Option<Site>,
    /// What the listener holds of its runtime's hub memory, given back
    /// when the entry goes (see [`crate::quota`]).
    pub _charge: Option<crate::quota::Charge>,
}

/// A hook listener's priority as the order its entry sorts by: higher
/// priority, lower order. `!p` (= -p - 1) reverses all of i32 one to one,
/// where a negation would tie i32::MIN with i32::MIN + 1.
pub(crate) fn order_of_priority(priority: i32) -> i32 {
    !priority
}

impl Entry {
    /// A hook listener's priority (see [`order_of_priority`]).
    pub(crate) fn priority(&self) -> i32 {
        !self.order
    }

    /// Does the message deliverer call this entry (for some dispatches)?
    /// Every entry but a hook listener and a collection listener that
    /// takes tables only.
    pub(crate) fn takes_messages(&self) -> bool {
        match &self.callback {
            Callback::Message(_) => true,
            Callback::Hook(_) => false,
            Callback::Collection(listen) => listen.takes_messages(),
        }
    }

    /// What the message deliverer calls for a dispatch of `args`, if
    /// anything: a hook listener is called by a hook run, and a feature's
    /// listener as its feature says (see `CollectionListen::message_for`).
    #[inline]
    pub(crate) fn message_for(&self, args: &[Value]) -> Option<&Rc<MessageFn>> {
        match &self.callback {
            Callback::Message(f) => Some(f),
            Callback::Hook(_) => None,
            Callback::Collection(listen) => listen.message_for(args),
        }
    }

    /// Does a plain send call this entry as a message listener? A send of
    /// a key that carries a `table` goes to the collection listeners on
    /// the table path, so one that takes tables or messages is skipped
    /// then, and called for any other key (what its sends are, once the
    /// key is known). `None`: a hook listener, which no plain send calls.
    pub(crate) fn called_by_plain_send(&self, table: bool) -> Option<bool> {
        match &self.callback {
            Callback::Message(_) => Some(true),
            Callback::Hook(_) => None,
            Callback::Collection(listen) => Some(listen.takes_messages() && !table),
        }
    }

    /// Is this a hook listener (kept by the hooks, not by a key's tiers)?
    #[inline]
    pub(crate) fn is_hook(&self) -> bool {
        matches!(self.callback, Callback::Hook(_))
    }

    /// What it listens with, as the tracer tells it.
    pub(crate) fn listener_kind(&self) -> ListenerKind {
        match &self.callback {
            Callback::Message(_) => ListenerKind::Message,
            Callback::Hook(_) => ListenerKind::Hook {
                priority: self.priority(),
            },
            Callback::Collection(listen) => listen.listener_kind(),
        }
    }

    /// The order the tracer shows: a hook listener's priority, any other's
    /// order.
    pub(crate) fn shown_order(&self) -> i32 {
        if self.is_hook() {
            self.priority()
        } else {
            self.order
        }
    }

    /// Can this entry be called now? Checks liveness and owner.
    #[inline]
    pub(crate) fn callable(&self) -> bool {
        self.alive.get() && self.owner.as_ref().is_none_or(Owner::is_alive)
    }

    /// Takes one use; returns true when this was the last.
    #[inline]
    pub(crate) fn take_use(&self) -> bool {
        let left = self.remaining.get();
        if left < 0 {
            return false;
        }
        let left = left - 1;
        self.remaining.set(left);
        if left <= 0 {
            self.alive.set(false);
            true
        } else {
            false
        }
    }
}

/// Unlistens when dropped, unless [`detach`](ListenerHandle::detach)ed.
#[must_use = "dropping a ListenerHandle unlistens at once; call .detach() to keep listening"]
pub struct ListenerHandle {
    pub(crate) hub: Weak<HubInner>,
    pub(crate) id: ListenerId,
}

impl ListenerHandle {
    pub fn id(&self) -> ListenerId {
        self.id
    }

    /// Keeps the listener registered after the handle is gone; returns its id
    /// for a later `unlisten`.
    pub fn detach(self) -> ListenerId {
        let id = self.id;
        std::mem::forget(self);
        id
    }
}

impl Drop for ListenerHandle {
    fn drop(&mut self) {
        if let Some(inner) = self.hub.upgrade() {
            crate::hub::Hub::from_inner(inner).unlisten(self.id);
        }
    }
}

impl fmt::Debug for ListenerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ListenerHandle({})", self.id)
    }
}
