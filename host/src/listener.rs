//! Listeners: options, owners, handles, and the entry the dispatch core keeps.

use std::any::Any;
use std::cell::Cell;
use std::fmt;
use std::rc::{Rc, Weak};

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
/// A hook listener's callback (defined with the hooks; named here too, as
/// the listener callbacks have always been).
pub use crate::hook::HookFn;

/// What a listener is called with.
pub(crate) enum Callback {
    /// An ordinary message listener: the message deliverer calls it.
    Message(Rc<MessageFn>),
    /// A listener its feature calls (a hook listener, a collection
    /// listener): the core asks it what it takes ([`FeatureListener`]) and
    /// never what it is.
    Feature(Rc<dyn FeatureListener>),
}

impl Callback {
    /// Is it kept apart from its key's tiers by its feature (see
    /// [`FeatureListener::kept_apart`])?
    #[inline]
    pub(crate) fn kept_apart(&self) -> bool {
        match self {
            Callback::Message(_) => false,
            Callback::Feature(f) => f.kept_apart(),
        }
    }
}

/// A feature's listener as the core sees it: what it asks of one on
/// registration, delivery and tracing. Each feature implements it for its
/// own listener type and finds that type again with [`Entry::feature`].
pub(crate) trait FeatureListener: Any {
    /// Kept apart from its key's tiers, in its feature's own channels (a
    /// hook listener: the hook run orders it by priority and checks and
    /// records the payload itself, so registration neither checks its
    /// types nor records its site).
    fn kept_apart(&self) -> bool {
        false
    }

    /// Does the message deliverer call it for some dispatches?
    fn takes_messages(&self) -> bool {
        false
    }

    /// What the message deliverer calls for a dispatch of `args`, if
    /// anything.
    fn message_for(&self, _args: &[Value]) -> Option<&Rc<MessageFn>> {
        None
    }

    /// See [`Entry::called_by_plain_send`].
    fn called_by_plain_send(&self, table: bool) -> Option<bool>;

    /// What it listens with, as the tracer tells it.
    fn listener_kind(&self, entry: &Entry) -> ListenerKind;

    /// The order the tracer shows for it.
    fn shown_order(&self, entry: &Entry) -> i32 {
        entry.order
    }
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

    /// The feature's listener of type `T` this entry holds, if it holds
    /// one: how a feature finds its own listener on an entry.
    #[inline]
    pub(crate) fn feature<T: FeatureListener>(&self) -> Option<&T> {
        match &self.callback {
            Callback::Feature(f) => (&**f as &dyn Any).downcast_ref(),
            Callback::Message(_) => None,
        }
    }

    /// [`Entry::feature`], shared.
    pub(crate) fn feature_rc<T: FeatureListener>(&self) -> Option<Rc<T>> {
        match &self.callback {
            Callback::Feature(f) => (f.clone() as Rc<dyn Any>).downcast().ok(),
            Callback::Message(_) => None,
        }
    }

    /// Does the message deliverer call this entry (for some dispatches)?
    /// A message listener does; a feature's listener as its feature says.
    pub(crate) fn takes_messages(&self) -> bool {
        match &self.callback {
            Callback::Message(_) => true,
            Callback::Feature(f) => f.takes_messages(),
        }
    }

    /// What the message deliverer calls for a dispatch of `args`, if
    /// anything: a message listener's function, or what its feature says.
    #[inline]
    pub(crate) fn message_for(&self, args: &[Value]) -> Option<&Rc<MessageFn>> {
        match &self.callback {
            Callback::Message(f) => Some(f),
            Callback::Feature(f) => f.message_for(args),
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
            Callback::Feature(f) => f.called_by_plain_send(table),
        }
    }

    /// What it listens with, as the tracer tells it.
    pub(crate) fn listener_kind(&self) -> ListenerKind {
        match &self.callback {
            Callback::Message(_) => ListenerKind::Message,
            Callback::Feature(f) => f.listener_kind(self),
        }
    }

    /// The order the tracer shows: a hook listener's priority, any other's
    /// order.
    pub(crate) fn shown_order(&self) -> i32 {
        match &self.callback {
            Callback::Message(_) => self.order,
            Callback::Feature(f) => f.shown_order(self),
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
