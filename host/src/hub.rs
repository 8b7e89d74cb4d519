//! The hub: registration, the dispatch core, objects and worlds.
//!
//! One dispatch core serves messages, stored replays, requests and hooks, so
//! that ordering and lifetime rules cannot drift apart between them:
//! 1. *gather* (state borrowed): check arguments against the signature,
//!    record the call site, collect the listener lists of every tier and every
//!    partial-matching ancestor — reference-counted snapshots, no copies;
//! 2. *call* (state released): visit entries in delivery order, skipping the
//!    ones removed or whose owner is gone, so listeners may listen, unlisten
//!    and send while being called.
//!
//! The hub is single-threaded by design: it is `!Send` and `!Sync` (it holds
//! `Rc`s and `RefCell`s) and has no lock on the hot path.

use std::any::Any;
use std::cell::{Cell, Ref, RefCell};
use std::panic::Location;
use std::rc::{Rc, Weak};
use std::time::Instant;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use thiserror::Error;

use crate::channel::Channel;
pub(crate) use crate::channel::{CollectionEntry, List};
use crate::collection::Spans;
use crate::key::{Key, KeyError, Keys};
use crate::lane::Lane;
use crate::listener::{
    Callback, Entry, ListenOptions, ListenerHandle, ListenerId, ListenerParams, Match, MessageFn,
    Owner, OwnerKey,
};
use crate::quota::{Holding, OverQuota, Quota};
use crate::report::Report;
use crate::request::Responder;
use crate::signature::{KeyDecl, Kind, Recorded, Role, SignatureTable, Site};
use crate::source::{NameId, Source, WorldId};
use crate::trace::{Delivery, DropReason, ListenerKind, TraceEvent};
use crate::typed::{Handler, IntoArgs, SendKey, TypedArgs};
use crate::types::{Mismatch, StructRegistry, Type};
use crate::value::{ObjectId, Value};

/// Errors of hub operations, naming the key and position involved.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum HubError {
    #[error(transparent)]
    Key(#[from] KeyError),
    /// What was asked would take the hub memory a runtime's scripts hold
    /// over its limit (see [`crate::quota`]); nothing was kept.
    #[error(transparent)]
    OverQuota(#[from] OverQuota),
    /// The arguments contradict the signature; the dispatch was aborted.
    #[error("`{key}` {mismatch}; dispatch aborted")]
    Mismatch { key: String, mismatch: Mismatch },
    /// The listener's parameters contradict the signature; not registered.
    #[error("listener on `{key}` rejected: {mismatch}")]
    ListenRejected { key: String, mismatch: Mismatch },
    /// A table row written through a writer contradicts the key's element
    /// type; the row was not written. `row` counts from 0, as the hub does.
    #[error("`{key}` row {row}: expected {expected}, got {got}")]
    RowMismatch {
        key: String,
        row: usize,
        expected: String,
        got: String,
    },
    /// A composite source's name from a script is longer than
    /// [`MAX_SOURCE_NAME_BYTES`]; `name` quotes its first 64 characters.
    #[error(
        "source name `{name}` is {len} bytes long; a source name has at most {MAX_SOURCE_NAME_BYTES} bytes"
    )]
    SourceNameTooLong { name: String, len: usize },
    #[error("{0} does not exist (destroyed?)")]
    NoSuchObject(ObjectId),
    #[error("{0} does not exist")]
    NoSuchWorld(WorldId),
}

/// What one dispatch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Delivered {
    /// How many listeners were called.
    pub listeners: usize,
}

/// What a listener is called with.
pub struct Message<'a> {
    pub hub: &'a Hub,
    pub key: Key,
    pub source: Source,
    pub args: &'a [Value],
    /// Present when the message is a request and the listener asked for it.
    pub responder: Option<&'a Responder>,
    pub listener: ListenerId,
}

impl Message<'_> {
    pub fn key_name(&self) -> Rc<str> {
        self.hub.key_name(self.key)
    }
}

/// Who is sending, for call-site recording and reports.
#[derive(Clone, Copy)]
pub enum Caller<'a> {
    /// A Rust caller, from `#[track_caller]`.
    Rust(&'static Location<'static>),
    /// A script site; recorded in the table when new.
    Script(&'a Site),
    /// Not recorded (a replay, or a caller that records its own sites).
    Unrecorded,
    /// A script caller that records its own sites (at load, or once per
    /// line) and can still tell where it is: asked only when a report
    /// needs the place (a refused send, a request's unanswered notice), so
    /// a send that goes through pays nothing for it.
    Located(&'a dyn Fn() -> Option<Site>),
}

impl Caller<'_> {
    /// Where the call happened, for reports.
    pub(crate) fn site(&self) -> Option<Site> {
        match self {
            Caller::Rust(loc) => Some(Site::rust(loc, Role::Send)),
            Caller::Script(site) => Some((*site).clone()),
            Caller::Unrecorded => None,
            Caller::Located(place) => place(),
        }
    }
}

/// Delivery order, one rule for every tier: lower order first; at equal
/// order the key's own listeners (exact or partial, in registration
/// order), then partial listeners on each channel above it, nearest first
/// (reference `003_…`: "listeners on the exact channel first, in
/// registration order, then Partial listeners on each channel above it").
/// Hooks order by priority and registration only.
#[inline]
pub(crate) fn sort_key(entry: &Entry, depth: u32, hooks: bool) -> (i32, u32, u64) {
    let rank = if hooks { 0 } else { depth };
    (entry.order, rank, entry.seq)
}

/// The compiled signature of a key, mirrored from the table for the hot path.
#[derive(Clone)]
struct SlotSig {
    params: Rc<[Type]>,
    /// Bit i: parameter i may hold a float below its top level, so an
    /// argument there may have ints to convert (an int for a float is
    /// converted all the way down).
    nested_floats: u64,
    declared: bool,
    /// The kind the table has for the key: a store or collection publish
    /// that the table already knows as such records nothing new.
    kind: Kind,
}

impl SlotSig {
    /// Whether a dispatch of `kind` would leave the table's kind as it is,
    /// so that (arguments matching) there is nothing to record.
    fn knows_kind(&self, kind: Kind) -> bool {
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
    global: Channel,
    scoped: FxHashMap<Source, Channel>,
    pub(crate) hooks: Channel,
    partial_listeners: u32,
    pub(crate) partial_hooks: u32,
    sig: Option<SlotSig>,
    last_rust_site: Option<&'static Location<'static>>,
    /// Every Rust call site already recorded for this key (by address).
    rust_sites: rustc_hash::FxHashSet<usize>,
    /// Merged delivery lists of the last few sources this key was sent
    /// from (at most `LANES_PER_KEY`).
    lanes: SmallVec<[Rc<Lane>; 2]>,
    /// The typed view of one of `lanes` that a typed send used last.
    hot: Option<crate::lane::HotView>,
    /// Listed in `State::laned` (it may have a lane).
    laned: bool,
}

impl Slot {
    /// The key's parameter types when a plain send has nothing to record
    /// (see `handoff`): known, and no `nil` position still to be narrowed.
    pub(crate) fn handoff_params(&self) -> Option<Rc<[Type]>> {
        let sig = self.sig.as_ref()?;
        if !sig.knows_kind(Kind::Event)
            || !sig.declared && sig.params.iter().any(|t| matches!(t, Type::Nil))
        {
            return None;
        }
        Some(sig.params.clone())
    }

    /// The channel of `scope`'s listeners, if anyone listens there.
    fn channel_mut(&mut self, scope: Source) -> Option<&mut Channel> {
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
struct Owned {
    ids: Vec<ListenerId>,
    live: usize,
}

struct ObjectInfo {
    world: WorldId,
    /// Keys with a channel watching this object (or its named sources).
    /// (A set: a script listening and unlistening on the object in a loop
    /// adds nothing after the first time.)
    watched: rustc_hash::FxHashSet<Key>,
}

/// A stored message, replayed to listeners that arrive later.
pub(crate) struct Stored {
    pub args: Rc<[Value]>,
    pub once: bool,
    /// The Rust rows a table was stored from ([`Hub::store_rows`]), until
    /// it is written otherwise.
    pub mirror: Option<Rc<crate::collection::Mirror>>,
    /// What it holds of the storing runtime's hub memory (`None`: stored
    /// through an uncharged handle).
    pub charge: Option<crate::quota::Charge>,
    /// Which store this is (see [`State::store_serial`]): a writer tells
    /// the table it opened from one stored over it since.
    pub serial: u64,
}

pub(crate) struct State {
    pub(crate) keys: Keys,
    pub(crate) slots: Vec<Slot>,
    pub(crate) table: SignatureTable,
    objects: FxHashMap<ObjectId, ObjectInfo>,
    worlds: FxHashMap<WorldId, Vec<ObjectId>>,
    names: FxHashMap<Rc<str>, NameId>,
    name_list: Vec<Rc<str>>,
    pub(crate) listeners: FxHashMap<ListenerId, Rc<Entry>>,
    by_owner: FxHashMap<OwnerKey, Owned>,
    pub(crate) stores: FxHashMap<(Key, Source), Stored>,
    /// What the host declared, by key: kept over a merged table.
    host_declared: std::collections::BTreeMap<String, KeyDecl>,
    /// Hook listeners by key text, so an unheard hook costs a bit test or
    /// one lookup of the text it is run with (no interning, no walk up the
    /// levels)...
    pub(crate) hooked: crate::hook::HookedKeys,
    /// ...unless partial hook listeners exist: then the levels are walked.
    pub(crate) partial_hooks: usize,
    /// Moves whenever what a send of some key would do may have changed (a
    /// channel list, a signature, an object's tiers): lanes stamped with an
    /// older epoch are merged again.
    pub(crate) epoch: u64,
    /// The keys that made a lane since every lane was last dropped (each
    /// once: see `Slot::laned`).
    laned: Vec<Key>,
    /// The last struct row shape the signature check verified (see
    /// [`crate::types::RowShape`]; kept for one epoch).
    row_shape: crate::types::RowShape,
    reports: Vec<Report>,
    next_store: u64,
    next_id: u64,
    next_seq: u64,
    next_object: u64,
    next_world: u32,
    /// Values whose drop may run user code (closures holding responders):
    /// dropped only after the state borrow is released.
    graveyard: Vec<Box<dyn Any>>,
}

impl State {
    /// A number no store had before: each message stored gets one.
    pub(crate) fn store_serial(&mut self) -> u64 {
        self.next_store += 1;
        self.next_store
    }
}

/// A host's report sink.
type ReportFn = dyn Fn(&Report);
/// Hears the epoch move (see `handoff`).
pub(crate) type EpochFn = dyn Fn(u64);

/// The hub's shared interior; [`Hub`] is a cheap handle to it.
pub struct HubInner {
    pub(crate) state: RefCell<State>,
    checked: Cell<bool>,
    table_dirty: Cell<bool>,
    on_report: RefCell<Option<Rc<ReportFn>>>,
    pub(crate) request_seq: Cell<u64>,
    /// Mirrors `tracer.is_some()`: the one read the untraced path pays.
    pub(crate) tracing: Cell<bool>,
    pub(crate) tracer: RefCell<Option<Rc<crate::trace::TraceFn>>>,
    /// Who hears of epoch moves (`handoff`), and the epoch they last heard.
    pub(crate) epoch_watchers: RefCell<Vec<Rc<EpochFn>>>,
    pub(crate) told_epoch: Cell<u64>,
    /// Collection element layouts by struct name, with the epoch they were
    /// resolved in (a table edit moves the epoch).
    pub(crate) layouts: crate::collection::rows::LayoutCache,
}

/// The message hub. Clone it freely: clones are handles to the same hub.
///
/// A handle may be charged to a [`Quota`] ([`Hub::charged_to`]): what the
/// hub keeps for calls through it (stored messages and tables, listeners,
/// new keys) is counted there, and refused past its limit. A script
/// runtime holds such a handle; a host's own handle charges nothing.
#[derive(Clone)]
pub struct Hub {
    pub(crate) inner: Rc<HubInner>,
    charged: Option<Rc<Charged>>,
}

/// What a charged handle carries: its quota, and an uncharged handle to
/// hand listeners without making one per call.
struct Charged {
    quota: Quota,
    plain: Hub,
}

impl Default for Hub {
    fn default() -> Self {
        Self::new()
    }
}

const MAX_KEPT_REPORTS: usize = 1024;

/// The longest name a script may give a composite source, in bytes (the
/// hub keeps every name for the run, as it keeps keys).
pub const MAX_SOURCE_NAME_BYTES: usize = 256;

impl Hub {
    /// A hub in checked mode with an empty signature table.
    pub fn new() -> Self {
        Self::with_table(SignatureTable::new())
    }

    /// A hub that starts from a loaded signature table.
    pub fn with_table(table: SignatureTable) -> Self {
        let state = State {
            keys: Keys::new(),
            slots: Vec::new(),
            table,
            objects: FxHashMap::default(),
            worlds: FxHashMap::default(),
            names: FxHashMap::default(),
            name_list: Vec::new(),
            listeners: FxHashMap::default(),
            by_owner: FxHashMap::default(),
            stores: FxHashMap::default(),
            host_declared: Default::default(),
            hooked: Default::default(),
            partial_hooks: 0,
            epoch: 0,
            laned: Vec::new(),
            row_shape: Default::default(),
            reports: Vec::new(),
            next_store: 0,
            next_id: 0,
            next_seq: 0,
            next_object: 0,
            next_world: 0,
            graveyard: Vec::new(),
        };
        Hub {
            charged: None,
            inner: Rc::new(HubInner {
                state: RefCell::new(state),
                checked: Cell::new(true),
                table_dirty: Cell::new(false),
                on_report: RefCell::new(None),
                request_seq: Cell::new(0),
                tracing: Cell::new(false),
                tracer: RefCell::new(None),
                epoch_watchers: RefCell::new(Vec::new()),
                told_epoch: Cell::new(0),
                layouts: Default::default(),
            }),
        }
    }

    pub(crate) fn from_inner(inner: Rc<HubInner>) -> Hub {
        Hub {
            inner,
            charged: None,
        }
    }

    /// A handle to this hub whose calls charge what the hub keeps for
    /// them to `quota` (see [`crate::quota`]). A script runtime takes one
    /// for its scripts: past the limit, a store, a listen or a new key is
    /// [`HubError::OverQuota`] at the script's call.
    pub fn charged_to(&self, quota: Quota) -> Hub {
        Hub {
            inner: self.inner.clone(),
            charged: Some(Rc::new(Charged {
                quota,
                plain: Hub::from_inner(self.inner.clone()),
            })),
        }
    }

    /// The quota this handle charges, if any.
    #[inline]
    pub fn quota(&self) -> Option<&Quota> {
        self.charged.as_ref().map(|c| &c.quota)
    }

    /// This hub through a handle that charges nothing: what listeners are
    /// handed ([`Message::hub`]), so that a host's listener keeps what it
    /// keeps uncharged, whoever sent.
    #[inline]
    pub(crate) fn uncharged(&self) -> &Hub {
        match &self.charged {
            None => self,
            Some(charged) => &charged.plain,
        }
    }

    pub(crate) fn downgrade(&self) -> Weak<HubInner> {
        Rc::downgrade(&self.inner)
    }

    /// Runs `f` on the state and drops what it discarded after the borrow
    /// ends, so destructors that call back into the hub are safe.
    pub(crate) fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let (result, graveyard, epoch) = {
            let mut state = self.inner.state.borrow_mut();
            let result = f(&mut state);
            (result, std::mem::take(&mut state.graveyard), state.epoch)
        };
        drop(graveyard);
        self.epoch_moved(epoch);
        result
    }

    // ----- checked mode, reports, table -------------------------------------

    /// Checked mode (the default) validates arguments against the signature
    /// table and aborts mismatched dispatches.
    pub fn set_checked(&self, checked: bool) {
        self.inner.checked.set(checked);
        // What a send does changes with it (see `handoff`).
        self.with_state(|s| s.epoch += 1);
    }

    pub fn is_checked(&self) -> bool {
        self.inner.checked.get()
    }

    /// Called for every report as it happens (after the tracing event).
    pub fn on_report(&self, f: impl Fn(&Report) + 'static) {
        *self.inner.on_report.borrow_mut() = Some(Rc::new(f));
    }

    /// Reports kept since the last call (at most 1024 are kept).
    pub fn take_reports(&self) -> Vec<Report> {
        self.with_state(|s| std::mem::take(&mut s.reports))
    }

    pub(crate) fn report(&self, report: Report) {
        tracing::warn!(key = report.key(), "{report}");
        self.with_state(|s| {
            if s.reports.len() < MAX_KEPT_REPORTS {
                s.reports.push(report.clone());
            }
        });
        let hook = self.inner.on_report.borrow().clone();
        if let Some(hook) = hook {
            hook(&report);
        }
    }

    /// Reads the signature table.
    pub fn table(&self) -> Ref<'_, SignatureTable> {
        Ref::map(self.inner.state.borrow(), |s| &s.table)
    }

    /// A copy of the signature table (for saving or handing to tools).
    pub fn table_snapshot(&self) -> SignatureTable {
        self.table().clone()
    }

    pub(crate) fn mark_table_dirty(&self) {
        self.inner.table_dirty.set(true);
    }

    /// Has the table learned anything since the last [`Hub::take_table_dirty`]?
    pub fn take_table_dirty(&self) -> bool {
        self.inner.table_dirty.replace(false)
    }

    /// Merges a table (a loaded file, say) into the hub's. A key the host
    /// declared ([`Hub::declare`]) keeps its declaration whatever the other
    /// table says of it: a table file can come with a mod.
    pub fn merge_table(&self, other: &SignatureTable) {
        self.with_state(|s| {
            s.table.merge(other);
            for (key, decl) in &s.host_declared {
                // Declared before: its text is a valid key.
                let _ = s.table.declare(key, decl.clone(), None);
            }
            for index in 0..s.slots.len() {
                refresh_sig(s, Key(index as u32));
            }
        });
    }

    /// Edits the table directly (declaring structs, say).
    pub fn edit_table<R>(&self, f: impl FnOnce(&mut SignatureTable) -> R) -> R {
        self.inner.table_dirty.set(true);
        self.with_state(|s| {
            let r = f(&mut s.table);
            for index in 0..s.slots.len() {
                refresh_sig(s, Key(index as u32));
            }
            r
        })
    }

    /// Declares a key from Rust: its parameters, kind, doc and response,
    /// with the caller's line as the declaring site.
    ///
    /// A key the host declares is the host's: a script's send or store
    /// that contradicts it is refused and records nothing, and a table
    /// merged later ([`Hub::merge_table`]) does not retype it.
    #[track_caller]
    pub fn declare(&self, key: &str, decl: KeyDecl) -> Result<Key, HubError> {
        let site = Site::rust(Location::caller(), Role::Declare);
        self.declare_at(key, decl, Some(site))
    }

    /// [`Hub::declare`] with the declaring site given (`None`: none
    /// recorded), for a host whose declaration is not a line of its own
    /// source a user could open (`gantry run` declaring `Game.Tick`).
    pub fn declare_at(
        &self,
        key: &str,
        decl: KeyDecl,
        site: Option<Site>,
    ) -> Result<Key, HubError> {
        let handle = self.key(key)?;
        self.with_state(|s| {
            s.table.declare(key, decl.clone(), site)?;
            s.host_declared.insert(key.to_owned(), decl);
            refresh_sig(s, handle);
            Ok::<_, KeyError>(())
        })?;
        self.inner.table_dirty.set(true);
        Ok(handle)
    }

    /// Records a call site for a key (scripts record their sites at load).
    pub fn record_site(&self, key: &str, site: Site) {
        if self.with_state(|s| s.table.record_site(key, site)) {
            self.inner.table_dirty.set(true);
        }
    }

    /// Records what a listener named its parameters, to name observed ones.
    pub fn suggest_param_names(&self, key: &str, names: &[String]) {
        if self.with_state(|s| s.table.suggest_param_names(key, names)) == Recorded::Changed {
            self.inner.table_dirty.set(true);
        }
    }

    // ----- keys ---------------------------------------------------------------

    /// Interns a key: the handle never hashes the string again. A key new
    /// to the hub is refused past a charged handle's quota.
    #[inline]
    pub fn key(&self, text: &str) -> Result<Key, HubError> {
        // Bound first: a borrow in the match scrutinee would live through
        // the arms, and interning borrows mutably.
        let found = self.inner.state.borrow().keys.get(text);
        match found {
            Some(key) => Ok(key),
            None => self.intern_key(text),
        }
    }

    /// A key's first use: validate and intern it (and its ancestors),
    /// charged to the handle's quota with every ancestor new with it.
    #[cold]
    fn intern_key(&self, text: &str) -> Result<Key, HubError> {
        self.with_state(|s| {
            let Some(quota) = self.quota() else {
                return Ok(intern(s, text)?);
            };
            crate::key::validate_key(text)?;
            let mut bytes = 0;
            let mut level = Some(text);
            while let Some(t) = level
                && s.keys.get(t).is_none()
            {
                bytes += crate::quota::KEY_BYTES + 2 * t.len();
                level = crate::key::parent_key(t);
            }
            quota.room(text, Holding::NewKey, bytes, 0)?;
            let key = intern(s, text)?;
            quota.hold(bytes);
            Ok(key)
        })
    }

    pub fn key_name(&self, key: Key) -> Rc<str> {
        self.inner.state.borrow().keys.name(key).clone()
    }

    // ----- objects and worlds -------------------------------------------------

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
            drop_stores(s, |source| source.object() == Some(object));
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
            drop_stores(s, |source| source == Source::World(world));
            for k in 0..s.slots.len() {
                drop_scope(s, Key(k as u32), Source::World(world), &mut dropped);
            }
            lanes_changed(s, None);
            dropped
        });
        self.trace_dropped(&dropped, DropReason::Destroyed);
        Ok(())
    }

    /// Removes the composite source (object, name) — reference `001_…`
    /// §14's explicit `RemoveSourceKey`, the one way besides destroying
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
            let stores = drop_stores(s, |stored| stored == source);
            lanes_changed(s, None);
            Ok::<_, HubError>((dropped, stores))
        })?;
        let (dropped, stores) = removed;
        self.trace_dropped(&dropped, DropReason::SourceRemoved);
        Ok(dropped.len() + stores)
    }

    // ----- listening ----------------------------------------------------------

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
    pub fn listen_raw(&self, key: &str, spec: ListenSpec) -> Result<ListenerId, HubError> {
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
        let is_hook = matches!(spec.callback, Callback::Hook(_));
        let result = self.with_state(|s| {
            if let (Some(site), false) = (&spec.site, is_hook)
                && s.table.record_site(key, site.clone())
            {
                self.inner.table_dirty.set(true);
            }
            if let ListenerParams::Typed(types) = &spec.params
                && !is_hook
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
            insert_entry(s, entry.clone(), is_hook);
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
        if matches!(entry.callback, Callback::Collection(_)) {
            crate::collection::dispatch::replay(self, &entry);
        }
        if entry.takes_messages() && !is_hook {
            crate::store::replay(self, &entry);
        }
        Ok(entry.id)
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
        match scope {
            Source::Object(object) | Source::Named(object, _)
                if !state.objects.contains_key(&object) =>
            {
                Err(HubError::NoSuchObject(object))
            }
            Source::World(world) if !state.worlds.contains_key(&world) => {
                Err(HubError::NoSuchWorld(world))
            }
            _ => Ok(()),
        }
    }

    /// Unlistens by id. Unknown ids do nothing. Returns whether it was found.
    pub fn unlisten(&self, id: ListenerId) -> bool {
        self.drop_listener(id, DropReason::Unbound)
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
            s.keys.get(key) == Some(entry.key)
                && matches!(entry.callback, Callback::Hook(_)) == hook
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

    fn trace_dropped(&self, ids: &[ListenerId], reason: DropReason) {
        if self.is_tracing() {
            for &listener in ids {
                self.trace(&TraceEvent::Dropped { listener, reason });
            }
        }
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
            .filter(|e| !matches!(e.callback, Callback::Hook(_)))
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
            let gone = std::mem::take(&mut s.stores);
            s.graveyard.push(Box::new(gone));
        });
    }

    // ----- sending ------------------------------------------------------------

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
    pub fn send_values(
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
        // The send (transient) path of a collection needs the raw lists,
        // gathered before anyone is called.
        let table_send = responder.is_none() && matches!(args, [Value::Array(_)]);
        let mut lists = Gathered::new();
        let routed = self.admit_then(key, args, caller, Kind::Event, |s| {
            route(s, key, source, &mut lists)
        })?;
        let Some(route) = routed else {
            return Ok(Delivered::default());
        };
        if self.is_tracing() {
            let delivery = if responder.is_some() {
                Delivery::Request
            } else {
                Delivery::Send
            };
            self.trace_dispatch(key, source, args, delivery);
        }
        let delivered = match &route {
            Route::Lane(lane) => self.deliver_lane(key, source, args, caller, responder, lane),
            Route::Lists => self.deliver(key, source, args, caller, responder, &lists, None),
        };
        if self.is_tracing() {
            let listeners = delivered.as_ref().map_or(0, |d| d.listeners);
            self.trace_end(key, listeners);
        }
        let delivered = delivered?;
        if table_send {
            let rows = match &route {
                Route::Lane(lane) => {
                    crate::collection::dispatch::on_send_lane(self, key, args, &lane.tables)
                }
                Route::Lists => crate::collection::dispatch::on_send(self, key, args, &lists),
            };
            return Ok(Delivered {
                listeners: delivered.listeners + rows,
            });
        }
        Ok(delivered)
    }

    /// Phase 2 of a send or request: down the lane, in delivery order.
    fn deliver_lane(
        &self,
        key: Key,
        source: Source,
        args: &[Value],
        caller: Caller<'_>,
        responder: Option<&Responder>,
        lane: &Lane,
    ) -> Result<Delivered, HubError> {
        if lane.max_arity > args.len() && self.inner.checked.get() {
            let entries = lane.entries.iter().map(|(entry, _)| entry);
            self.check_arity(key, args, caller, entries, None)?;
        }
        let mut called = 0;
        for (entry, depth) in lane.entries.iter() {
            if self.call_entry(entry, *depth, key, source, args, responder) {
                called += 1;
            }
        }
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
    /// `source` and tracing is off (a traced send takes the full path).
    #[inline(always)]
    fn direct_lane<A: TypedArgs>(
        &self,
        key: Key,
        source: Source,
        site: &'static Location<'static>,
    ) -> Option<Rc<crate::lane::DirectLane<A>>> {
        if self.inner.tracing.get() {
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
    fn judge_direct<A: TypedArgs>(&self, key: Key, source: Source) {
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

    /// Records a Rust call site of `key` as a send, once per location (a
    /// heard hook run; sends record theirs in `admit`).
    pub(crate) fn record_rust_site(&self, key: Key, loc: &'static Location<'static>) {
        let mut state = self.inner.state.borrow_mut();
        let s = &mut *state;
        let Some(slot) = s.slots.get_mut(key.index()) else {
            return;
        };
        if let Some(site) = note_rust_site(slot, loc) {
            let name = s.keys.name(key).clone();
            if s.table.record_site(&name, site) {
                self.inner.table_dirty.set(true);
            }
        }
    }

    /// Records a hook's payload type on its first run.
    pub(crate) fn record_hook_payload(&self, key: Key, payload: &Value) {
        let mut state = self.inner.state.borrow_mut();
        let s = &mut *state;
        let name = s.keys.name(key).clone();
        if s.table
            .record_args(&name, Kind::Hook, std::slice::from_ref(payload))
            == Recorded::Changed
        {
            self.inner.table_dirty.set(true);
        }
        refresh_sig(s, key);
    }

    /// Phase 1: check, record, collect listener lists into `lists`. Also
    /// used by stores.
    pub(crate) fn gather(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
        kind: Kind,
        lists: &mut Gathered,
    ) -> Result<(), HubError> {
        self.admit_then(key, args, caller, kind, |s| {
            collect_lists_into(s, key, source, false, lists)
        })
        .map(drop)
    }

    /// [`Hub::gather`] for a writer's store of a table whose other rows
    /// were checked when stored: only the `changed` rows are checked. A
    /// refusal comes back unreported (the writer puts the stored table
    /// back first, then [`Hub::refuse`]s).
    pub(crate) fn gather_edited(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
        changed: &Spans,
        lists: &mut Gathered,
    ) -> Result<(), Refused> {
        self.admit_then_quiet(key, args, caller, Kind::Store, Some(changed), |s| {
            collect_lists_into(s, key, source, false, lists)
        })
        .map(drop)
    }

    /// Phase 1 of every dispatch: with the state borrowed, admit the
    /// arguments, then run `then` (collect or route). `None` for a key the
    /// state has no slot for (nobody listens). A refusal is reported once
    /// the borrow is released.
    fn admit_then<R>(
        &self,
        key: Key,
        args: &mut [Value],
        caller: Caller<'_>,
        kind: Kind,
        then: impl FnOnce(&mut State) -> R,
    ) -> Result<Option<R>, HubError> {
        self.admit_then_quiet(key, args, caller, kind, None, then)
            .map_err(|refused| self.refuse(refused, caller))
    }

    /// [`Hub::admit_then`] that hands a refusal back unreported, for a
    /// caller with something to undo before anyone hears of it.
    fn admit_then_quiet<R>(
        &self,
        key: Key,
        args: &mut [Value],
        caller: Caller<'_>,
        kind: Kind,
        changed: Option<&Spans>,
        then: impl FnOnce(&mut State) -> R,
    ) -> Result<Option<R>, Refused> {
        let mut state = self.inner.state.borrow_mut();
        let s = &mut *state;
        if key.index() >= s.slots.len() {
            return Ok(None);
        }
        self.admit(s, key, args, caller, kind, changed)?;
        let routed = then(s);
        let epoch = s.epoch;
        drop(state);
        // A first send records the key's types: the epoch moves.
        self.epoch_moved(epoch);
        Ok(Some(routed))
    }

    /// Checks `args` against the key's signature and records what is new
    /// (the types on first use, the call site). The state stays borrowed:
    /// a refusal is reported by the caller once it is released.
    ///
    /// `changed`: a writer's publish of a table whose other rows were
    /// checked when they were stored; only these rows are checked again.
    fn admit(
        &self,
        s: &mut State,
        key: Key,
        args: &mut [Value],
        caller: Caller<'_>,
        kind: Kind,
        changed: Option<&Spans>,
    ) -> Result<(), Refused> {
        let checked = self.inner.checked.get();
        let slot = &mut s.slots[key.index()];
        let new_site = match caller {
            Caller::Rust(loc) => note_rust_site(slot, loc),
            Caller::Script(site) => Some(site.clone()),
            Caller::Unrecorded | Caller::Located(_) => None,
        };
        // Fast signature check against the slot's compiled parameters.
        let mut failure: Option<(usize, String, String)> = None;
        let needs_record = match &slot.sig {
            Some(sig) if args.len() <= sig.params.len() || sig.declared => {
                let mut narrow = !sig.knows_kind(kind);
                for (position, (arg, ty)) in args.iter_mut().zip(sig.params.iter()).enumerate() {
                    match (ty, &*arg) {
                        (Type::Int, Value::Int(_))
                        | (Type::Float, Value::Float(_))
                        | (Type::Bool, Value::Bool(_))
                        | (Type::String, Value::Str(_))
                        | (Type::Object, Value::Object(_))
                        | (Type::Any, _) => {}
                        (Type::Float, Value::Int(i)) => *arg = Value::Float(*i as f64),
                        (Type::Nil, _) if !sig.declared => narrow = true,
                        _ if !checked => {}
                        _ => {
                            if !rows_match(
                                &s.table.structs,
                                s.row_shape.at(s.epoch),
                                arg,
                                ty,
                                changed,
                            ) {
                                let got = s.table.structs.describe(arg, ty);
                                failure = Some((position, ty.to_string(), got));
                                break;
                            }
                            if sig.nested_floats >> position.min(63) & 1 != 0 {
                                s.table.structs.widen_ints(arg, ty);
                            }
                        }
                    }
                }
                if failure.is_none() && checked && sig.declared && args.len() > sig.params.len() {
                    let position = sig.params.len();
                    failure = Some((
                        position,
                        format!("at most {position} argument(s)"),
                        args[position].kind_name(),
                    ));
                }
                narrow
            }
            _ => true,
        };
        if let Some((position, expected, got)) = failure {
            return Err(Refused {
                key: s.keys.name(key).to_string(),
                position,
                expected,
                got,
            });
        }
        if needs_record || new_site.is_some() {
            let name = s.keys.name(key).clone();
            if needs_record {
                if checked && let Err(m) = s.table.check_args(&name, args) {
                    return Err(refused_args(&s.table, &name, m, args));
                }
                let undo = checked.then(|| Recording::before(&s.table, &name, args));
                if s.table.record_args(&name, kind, args) == Recorded::Changed {
                    // What a first send records is what later sends are held
                    // to; a send that fails it (an array mixing types, rows
                    // of one struct with fields of different types) is
                    // refused now, as each later one would be, and leaves
                    // nothing recorded.
                    if let Err(m) = s.table.check_args(&name, args) {
                        let refused = refused_args(&s.table, &name, m, args);
                        if let Some(undo) = undo {
                            undo.restore(&mut s.table, &name);
                        }
                        return Err(refused);
                    }
                    self.inner.table_dirty.set(true);
                }
                // An int for a float is converted here too: the fast check
                // above converts only a send that fits the slot's parameters
                // (not one that appends to an observed key, nor a first one).
                if let Some(entry) = s.table.get(&name) {
                    for (arg, param) in args.iter_mut().zip(&entry.params) {
                        s.table.structs.widen_ints(arg, &param.ty);
                    }
                }
                refresh_sig(s, key);
            }
            if let Some(site) = new_site
                && s.table.record_site(&name, site)
            {
                self.inner.table_dirty.set(true);
            }
        }
        Ok(())
    }

    /// Reports a refused dispatch (the state released) and makes its error.
    #[cold]
    pub(crate) fn refuse(&self, refused: Refused, caller: Caller<'_>) -> HubError {
        self.mismatch(
            refused.key,
            refused.position,
            refused.expected,
            refused.got,
            caller,
            None,
        )
    }

    fn mismatch(
        &self,
        key: String,
        position: usize,
        expected: String,
        got: String,
        caller: Caller<'_>,
        listener_site: Option<Site>,
    ) -> HubError {
        if self.is_tracing() {
            let reason = format!("argument {}: expected {expected}, got {got}", position + 1);
            self.trace(&TraceEvent::Aborted {
                key: &key,
                reason: &reason,
            });
        }
        self.report(Report::Mismatch {
            key: key.clone(),
            position,
            expected: expected.clone(),
            got: got.clone(),
            site: caller.site(),
            listener_site,
        });
        HubError::Mismatch {
            key,
            mismatch: Mismatch {
                position,
                expected,
                got,
            },
        }
    }

    /// Phase 2: call the gathered listeners in delivery order. `only` limits
    /// delivery to one entry (a replay).
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
    ) -> Result<Delivered, HubError> {
        if self.inner.checked.get() {
            let entries = lists
                .iter()
                .filter(|(list, _)| list.max_arity > args.len())
                .flat_map(|(list, _)| list.entries.iter());
            self.check_arity(key, args, caller, entries, only)?;
        }
        // Lists of collection listeners only (a table's slots and rows)
        // have nobody for the message deliverer.
        if lists.iter().all(|(list, _)| list.messages == 0) {
            return Ok(Delivered { listeners: 0 });
        }
        let mut called = 0;
        for (entry, depth) in delivery_order(lists) {
            if only.is_none_or(|only| Rc::ptr_eq(only, entry))
                && self.call_entry(entry, depth, key, source, args, responder)
            {
                called += 1;
            }
        }
        Ok(Delivered { listeners: called })
    }

    /// A typed listener that wants more than was sent blocks the dispatch:
    /// no listener is called with missing arguments.
    #[cold]
    fn check_arity<'e>(
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
    fn may_call(&self, entry: &Entry) -> bool {
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
        let f = match &entry.callback {
            Callback::Message(f) => f,
            // A table goes to the collection dispatch; anything else is a
            // message to it.
            Callback::Collection(listen) => match &listen.form {
                crate::collection::listen::Form::Either { message, .. }
                    if crate::collection::dispatch::table_of(args).is_none() =>
                {
                    message
                }
                _ => return false,
            },
            Callback::Hook(_) => return false,
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

    /// Traces the start of a dispatch (the caller checked `is_tracing`).
    pub(crate) fn trace_dispatch(
        &self,
        key: Key,
        source: Source,
        args: &[Value],
        delivery: Delivery,
    ) {
        let name = self.key_name(key);
        self.trace(&TraceEvent::Dispatch {
            key: &name,
            source,
            args,
            delivery,
        });
    }

    /// Traces a new listener (the caller checked `is_tracing`).
    fn trace_listened(&self, entry: &Entry) {
        let kind = match &entry.callback {
            Callback::Hook(_) => ListenerKind::Hook {
                priority: entry.priority(),
            },
            Callback::Collection(listen) => match &listen.form {
                crate::collection::listen::Form::Table(_)
                | crate::collection::listen::Form::Either { .. } => ListenerKind::Table,
                crate::collection::listen::Form::Row(_) => ListenerKind::Rows {
                    slot: listen.selector.slot,
                    removal: listen.selector.removal,
                },
            },
            _ => ListenerKind::Message,
        };
        let name = self.key_name(entry.key);
        self.trace(&TraceEvent::Listened {
            key: &name,
            listener: entry.id,
            scope: entry.scope,
            site: entry.site.as_ref(),
            kind,
            partial: entry.partial,
        });
    }

    /// Traces the end of a dispatch (the caller checked `is_tracing`).
    pub(crate) fn trace_end(&self, key: Key, listeners: usize) {
        let name = self.key_name(key);
        self.trace(&TraceEvent::End {
            key: &name,
            listeners,
        });
    }

    /// Traces one listener call (the caller checked `is_tracing`).
    pub(crate) fn trace_called(&self, key: Key, entry: &Entry, elapsed: std::time::Duration) {
        let name = self.key_name(key);
        self.trace(&TraceEvent::Called {
            key: &name,
            listener: entry.id,
            site: entry.site.as_ref(),
            order: match entry.callback {
                Callback::Hook(_) => entry.priority(),
                _ => entry.order,
            },
            elapsed,
        });
    }

    /// Router semantics: a listener that names a struct only gets payloads
    /// of that struct (or a child of it); others are skipped with a warning.
    fn payload_is(&self, payload: Option<&Value>, expected: &str, entry: &Entry, key: Key) -> bool {
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

/// The argument check of `admit` for a value the fast match did not
/// settle: the whole value, or, for a table a writer edited, its changed
/// rows only (a full reload checks them all).
#[inline]
fn rows_match(
    structs: &StructRegistry,
    shape: &mut crate::types::RowShape,
    arg: &Value,
    ty: &Type,
    changed: Option<&Spans>,
) -> bool {
    match (changed, ty, arg) {
        (Some(spans), Type::Array(element), Value::Array(rows)) if !spans.is_full() => {
            spans.ranges().iter().all(|range| {
                let end = (range.end().max(0) as usize).min(rows.len());
                let start = (range.index.max(0) as usize).min(end);
                structs.values_match_with(&rows[start..end], element, shape)
            })
        }
        (_, Type::Array(element), Value::Array(rows)) => {
            structs.values_match_with(rows, element, shape)
        }
        _ => structs.value_matches(arg, ty),
    }
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
        order.sort_by_key(|(entry, depth)| sort_key(entry, *depth, false));
    }
    order
}

/// The listener lists one dispatch visits, with their depth (0 = the key
/// itself, 1 = its parent...).
pub(crate) type Gathered = SmallVec<[(Rc<List>, u32); 6]>;

/// The tiers a send from `source` reaches, nearest first.
#[inline]
fn tiers(s: &State, source: Source) -> [Option<Source>; 3] {
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

pub(crate) fn collect_lists(s: &mut State, key: Key, source: Source, hooks: bool) -> Gathered {
    let mut out = Gathered::new();
    collect_lists_into(s, key, source, hooks, &mut out);
    out
}

/// Collects into the caller's buffer: the send path keeps its `Gathered`
/// in its own frame instead of copying a hundred-byte `SmallVec` back up
/// through every return.
/// Mutable: a channel changed since its last dispatch makes its snapshot
/// here (see [`crate::channel`]).
#[inline]
pub(crate) fn collect_lists_into(
    s: &mut State,
    key: Key,
    source: Source,
    hooks: bool,
    out: &mut Gathered,
) {
    let tiers = tiers(s, source);
    let mut current = Some(key);
    let mut depth = 0;
    while let Some(k) = current {
        let slot = &mut s.slots[k.index()];
        if hooks {
            if (depth == 0 || slot.partial_hooks > 0)
                && let Some(list) = slot.hooks.list()
            {
                out.push((list.clone(), depth));
            }
        } else if depth == 0 || slot.partial_listeners > 0 {
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

/// The refusal of `args` by the table entry of `key`, saying what the
/// refused argument is where the table's check only named its kind.
fn refused_args(table: &SignatureTable, key: &str, m: Mismatch, args: &[Value]) -> Refused {
    let param = table.get(key).and_then(|e| e.params.get(m.position));
    let got = match (param, args.get(m.position)) {
        (Some(param), Some(arg)) if param.ty.to_string() == m.expected => {
            table.structs.describe(arg, &param.ty)
        }
        _ => m.got,
    };
    Refused {
        key: key.to_owned(),
        position: m.position,
        expected: m.expected,
        got,
    }
}

/// What recording a send's types may change in the table, kept to put
/// back when the send contradicts what it recorded.
struct Recording {
    /// The entry's kind and parameters (`None`: there was no entry).
    entry: Option<(Kind, Vec<crate::types::Param>)>,
    /// The structs, when the send may define new ones.
    structs: Option<StructRegistry>,
}

impl Recording {
    fn before(table: &SignatureTable, key: &str, args: &[Value]) -> Recording {
        Recording {
            entry: table.get(key).map(|e| (e.kind, e.params.clone())),
            structs: args
                .iter()
                .any(|arg| names_unknown_struct(&table.structs, arg, 0))
                .then(|| table.structs.clone()),
        }
    }

    fn restore(self, table: &mut SignatureTable, key: &str) {
        match self.entry {
            Some((kind, params)) => {
                if let Some(entry) = table.keys.get_mut(key) {
                    entry.kind = kind;
                    entry.params = params;
                }
            }
            None => {
                table.keys.remove(key);
            }
        }
        if let Some(structs) = self.structs {
            table.structs = structs;
        }
    }
}

/// Whether recording `value` may define a struct (the values
/// `SignatureTable::record_args` reads: struct values, their fields, an
/// array's first element).
fn names_unknown_struct(structs: &StructRegistry, value: &Value, depth: usize) -> bool {
    if depth > crate::types::MAX_TYPE_DEPTH {
        return true;
    }
    match value {
        Value::Struct(s) => {
            !structs.defs.contains_key(&*s.name)
                || s.fields
                    .iter()
                    .any(|(_, field)| names_unknown_struct(structs, field, depth + 1))
        }
        Value::Array(items) => items
            .first()
            .is_some_and(|item| names_unknown_struct(structs, item, depth + 1)),
        _ => false,
    }
}

/// A dispatch the signature refused, held until the state is released.
pub(crate) struct Refused {
    key: String,
    position: usize,
    expected: String,
    got: String,
}

/// A Rust call site to record, once per location (a pointer compare for
/// the site that sent last, a set lookup for the others).
#[inline]
fn note_rust_site(slot: &mut Slot, loc: &'static Location<'static>) -> Option<Site> {
    if slot.last_rust_site.is_some_and(|l| std::ptr::eq(l, loc)) {
        return None;
    }
    slot.last_rust_site = Some(loc);
    slot.rust_sites
        .insert(loc as *const Location<'static> as usize)
        .then(|| Site::rust(loc, Role::Send))
}

/// How many sources of one key keep a lane. A key sent from more sources
/// at once is gathered afresh for the others (on the stack, no allocation),
/// as every send was before lanes.
const LANES_PER_KEY: usize = 4;

/// The current lane of `key` for `source`, if any.
#[inline]
fn current_lane(s: &State, key: Key, source: Source) -> Option<&Rc<Lane>> {
    s.slots
        .get(key.index())?
        .lanes
        .iter()
        .find(|lane| lane.source == source && lane.epoch == s.epoch)
}

/// How one dispatch reaches its listeners.
enum Route {
    /// Down a lane, kept for the next send.
    Lane(Rc<Lane>),
    /// Through the lists gathered into the caller's buffer.
    Lists,
}

/// The key's lane for `source`, merged when missing or stale; or, with
/// every lane of the key current and for other sources, the lists. Either
/// way a route that had to gather leaves the lists in `lists`.
#[inline]
fn route(s: &mut State, key: Key, source: Source, lists: &mut Gathered) -> Route {
    if let Some(lane) = current_lane(s, key, source) {
        return Route::Lane(lane.clone());
    }
    let epoch = s.epoch;
    let lanes = &s.slots[key.index()].lanes;
    let reuse = lanes
        .iter()
        .position(|lane| lane.source == source || lane.epoch != epoch);
    let full = reuse.is_none() && lanes.len() >= LANES_PER_KEY;
    collect_lists_into(s, key, source, false, lists);
    if full {
        return Route::Lists;
    }
    let lane = Rc::new(Lane::merge(lists, epoch, source));
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
/// the first error.
pub(crate) fn for_each_on_route<E>(
    s: &mut State,
    key: Key,
    source: Source,
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
    }
}

/// Drops the listeners of `key` scoped to `scope` (a source that is going),
/// adding their ids to `dropped`.
fn drop_scope(s: &mut State, key: Key, scope: Source, dropped: &mut Vec<ListenerId>) {
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

/// Drops the messages stored from the sources `gone` picks; returns how
/// many. A table stored from Rust rows drops them when it goes, which may
/// run the rows' code: not under the state's borrow (the graveyard).
fn drop_stores(s: &mut State, gone: impl Fn(Source) -> bool) -> usize {
    let gone: Vec<Stored> = s
        .stores
        .extract_if(|(_, source), _| gone(*source))
        .map(|(_, stored)| stored)
        .collect();
    let n = gone.len();
    if n > 0 {
        s.graveyard.push(Box::new(gone));
    }
    n
}

/// The id of source name `name`, made on its first use.
fn name_id(s: &mut State, name: &str) -> NameId {
    if let Some(id) = s.names.get(name) {
        return *id;
    }
    let id = NameId(s.name_list.len() as u32);
    let name: Rc<str> = Rc::from(name);
    s.name_list.push(name.clone());
    s.names.insert(name, id);
    id
}

fn intern(s: &mut State, text: &str) -> Result<Key, KeyError> {
    let key = s.keys.intern(text)?;
    while s.slots.len() < s.keys.len() {
        s.slots.push(Slot::default());
        let k = Key((s.slots.len() - 1) as u32);
        refresh_sig(s, k);
    }
    Ok(key)
}

/// Mirrors the table entry of `key` into its slot.
fn refresh_sig(s: &mut State, key: Key) {
    let name = s.keys.name(key).clone();
    let structs = &s.table.structs;
    let sig = s.table.get(&name).map(|e| SlotSig {
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

/// Checks a typed listener against the table; records its types when the key
/// is new (receive-side inference).
fn check_listener_types(
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

fn insert_entry(s: &mut State, entry: Rc<Entry>, hooks: bool) {
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
    let slot = &mut s.slots[key.index()];
    let channel = if hooks {
        s.hooked.add(s.keys.name(key));
        if entry.partial {
            slot.partial_hooks += 1;
            s.partial_hooks += 1;
        }
        &mut slot.hooks
    } else {
        if entry.partial {
            slot.partial_listeners += 1;
        }
        match entry.scope {
            Source::Global => &mut slot.global,
            scope => slot.scoped.entry(scope).or_default(),
        }
    };
    channel.insert(entry, &mut s.graveyard);
    if !hooks {
        lanes_changed(s, Some(key));
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
fn lanes_changed(s: &mut State, key: Option<Key>) {
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

fn remove_entry(s: &mut State, id: ListenerId) -> bool {
    let Some(entry) = s.listeners.remove(&id) else {
        return false;
    };
    entry.alive.set(false);
    forget_owned(s, &entry);
    let hooks = matches!(entry.callback, Callback::Hook(_));
    if hooks {
        s.hooked.remove(s.keys.name(entry.key));
        if entry.partial {
            s.partial_hooks -= 1;
        }
    }
    let slot = &mut s.slots[entry.key.index()];
    let channel = if hooks {
        Some(&mut slot.hooks)
    } else {
        slot.channel_mut(entry.scope)
    };
    if let Some(channel) = channel
        && channel.remove(&entry, &mut s.graveyard)
    {
        if channel.is_empty()
            && entry.scope != Source::Global
            && !hooks
            && let Some(gone) = slot.scoped.remove(&entry.scope)
        {
            s.graveyard.push(Box::new(gone));
        }
        if entry.partial {
            if hooks {
                slot.partial_hooks -= 1;
            } else {
                slot.partial_listeners -= 1;
            }
        }
    }
    if !hooks {
        lanes_changed(s, (!entry.partial).then_some(entry.key));
    }
    s.graveyard.push(Box::new(entry));
    true
}

/// Counts out `entry`, just unregistered, from its owner's listeners.
fn forget_owned(s: &mut State, entry: &Entry) {
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
fn drop_owned(s: &mut State, owner: OwnerKey) -> Vec<ListenerId> {
    let ids = s.by_owner.remove(&owner).unwrap_or_default().ids;
    ids.into_iter().filter(|id| remove_entry(s, *id)).collect()
}
