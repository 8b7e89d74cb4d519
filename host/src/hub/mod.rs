//! The hub: the [`Hub`] type, its settings and its one dispatch core.
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
//!
//! A map of the folder, in the order a send passes through it:
//! - this file: [`Hub`] and [`HubInner`], checked mode, reports, the
//!   signature table, keys; [`HubError`], [`Message`], [`Caller`].
//! - `state`: per-key state — a key's `Slot` (channels, compiled
//!   signature, call sites, lanes) — and the `State` behind one borrow.
//! - `objects`: objects and worlds, named sources, and what goes with them.
//! - `registration`: listen and unlisten ([`ListenSpec`]), owners, channels.
//! - `admission`: phase 1 — arguments checked against the signature, what
//!   is new recorded, a refusal reported.
//! - `routing`: which lists a send reaches (tiers, ancestors), delivery
//!   order, and the lanes that keep that answer between sends.
//! - `delivery`: phase 2 — send, dispatch, the listeners called in order.
//! - `seam`: the few named points where the features (stored messages,
//!   collections, hooks) take part in registration, delivery and a
//!   source's end, and what they keep in the core's snapshots — the one
//!   file of the core that names a feature.
//!
//! The trace helpers of a dispatch live in [`crate::trace`].

mod admission;
mod delivery;
mod objects;
mod registration;
mod routing;
pub(crate) mod seam;
mod state;

use std::cell::{Cell, Ref, RefCell};
use std::panic::Location;
use std::rc::{Rc, Weak};

use rustc_hash::FxHashMap;
use thiserror::Error;

use crate::key::{Key, KeyError, Keys};
use crate::listener::ListenerId;
use crate::quota::{Holding, OverQuota, Quota};
use crate::report::Report;
use crate::signature::{KeyDecl, Language, Recorded, Role, SignatureTable, Site};
use crate::source::{Source, WorldId};
use crate::types::Mismatch;
use crate::value::{ObjectId, Value};

pub use registration::ListenSpec;
pub(crate) use routing::{Gathered, Reached, for_each_on_route, has_no_params};
pub(crate) use state::State;

use state::{intern, refresh_sig};

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
    /// A key used with a function of another kind than the table holds
    /// it to (a hook key sent as a message, a store key run as a hook, a
    /// request of a declared event that answers nothing); nothing was
    /// done. See [`crate::ApiFunction::contradicts`].
    #[error(
        "{function} on `{key}`: the key is {kind} ({}); {function} is for {fits}",
        if *declared { "declared" } else { "as first used" }
    )]
    WrongKind {
        key: String,
        /// What the key is, as the message says it (`a hook`, `an event
        /// that answers nothing`).
        kind: String,
        declared: bool,
        function: crate::api::ApiFunction,
        /// The keys the function is for (`hook keys`).
        fits: &'static str,
    },
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

/// The right to answer one request. Clone it to answer later; the request
/// counts as unanswered once every clone is gone without an answer.
///
/// The core only hands it to the listeners that asked for it (see
/// [`Message::responder`]); what it holds and how it is answered belong to
/// the request feature ([`crate::request`]).
#[derive(Clone)]
pub struct Responder {
    pub(crate) state: Rc<crate::request::RequestState>,
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

    /// Is this a once message's live delivery (not a send or a store)?
    /// Asked by a listener that must not treat the two alike: a bridge
    /// hands a once to one node, a send to all.
    pub fn is_once(&self) -> bool {
        self.hub.inner.once.is_delivering(self.args)
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
    /// Requests: the sequence that names them.
    pub(crate) requests: crate::request::Requests,
    /// The tracer, if one is installed.
    pub(crate) trace: crate::trace::Tracer,
    /// Who hears of epoch moves (`handoff`), and the epoch they last heard.
    pub(crate) epoch_watchers: RefCell<Vec<Rc<EpochFn>>>,
    pub(crate) told_epoch: Cell<u64>,
    /// What collections keep beside the state (see [`crate::collection`]).
    pub(crate) collections: crate::collection::Collections,
    /// The once message being delivered, and who hears of it after.
    pub(crate) once: crate::store::OnceSeam,
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
            stores: Default::default(),
            host_declared: Default::default(),
            hooks: Default::default(),
            epoch: 0,
            laned: Vec::new(),
            row_shape: Default::default(),
            reports: Vec::new(),
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
                requests: Default::default(),
                trace: Default::default(),
                epoch_watchers: RefCell::new(Vec::new()),
                told_epoch: Cell::new(0),
                collections: Default::default(),
                once: Default::default(),
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

    /// A script file is (re)loaded from `source`: the sites the table
    /// holds for it are replaced by those this load and the script's runs
    /// record (see [`SignatureTable::restart_file_sites`]). A runtime calls
    /// it before it records a load's sites.
    pub fn restart_sites(&self, language: Language, file: &str, source: &str) {
        if self.with_state(|s| s.table.restart_file_sites(language, file, source)) {
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
    pub(super) fn intern_key(&self, text: &str) -> Result<Key, HubError> {
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
}
