//! The scripts a runtime has loaded, by [`ScriptId`], and what each one
//! registered on the hub ([`Registrations`]), so that a host can unload a
//! script or swap it for a new version in place ([`Scripts::reload`]).
//!
//! A script lives on a hub object, and what it stores lives on that object
//! too: unloading takes back only what the script *registered* — its
//! listeners of every kind (messages, partial keys, hooks, table rows,
//! slots and whole tables, requests' responders) — and lets its
//! environment go. The object, what is stored on it and what other scripts
//! or the host registered stay. Each runtime keeps its language's part
//! (what an environment is, how it is dropped); the bookkeeping is here.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use crate::{Hub, ListenerId};

/// A script a runtime loaded: what a host names to read it, unload it or
/// reload it. Ids are never reused within a runtime; a reloaded script
/// keeps its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScriptId(u64);

impl ScriptId {
    /// The id's number (`script#3` is 3).
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ScriptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "script#{}", self.0)
    }
}

/// Listener ids a script may hold before the ones the hub already dropped
/// (a `times = 1` listener that ran, an unbound one) are pruned: a script
/// that listens anew each frame must not grow its list without end.
const PRUNE_FROM: usize = 64;

/// What one loaded script registered on the hub: the ids of its
/// listeners, noted as each listen succeeds, and whether it was unloaded.
#[derive(Debug, Default)]
pub struct Registrations {
    ids: RefCell<Vec<ListenerId>>,
    /// The length at which `ids` is pruned next.
    prune_at: Cell<usize>,
    unloaded: Cell<bool>,
}

impl Registrations {
    /// Notes a listener the script registered. A script already unloaded
    /// (its code still running in the call that unloaded it) keeps
    /// nothing: the listener goes at once.
    pub fn listened(&self, hub: &Hub, id: ListenerId) {
        if self.unloaded.get() {
            hub.unlisten(id);
            return;
        }
        let mut ids = self.ids.borrow_mut();
        ids.push(id);
        if ids.len() >= self.prune_at.get().max(PRUNE_FROM) {
            ids.retain(|id| hub.is_listening(*id));
            self.prune_at.set(ids.len() * 2);
        }
    }

    /// Removes every listener the script registered that the hub still
    /// has, and marks the script unloaded: what it registers from now on
    /// goes at once, and its pending replies are dropped unheard. Returns
    /// how many listeners went. Safe during a send: the hub skips a
    /// listener removed mid-send.
    pub fn unload(&self, hub: &Hub) -> usize {
        self.unloaded.set(true);
        let ids = std::mem::take(&mut *self.ids.borrow_mut());
        ids.into_iter().filter(|id| hub.unlisten(*id)).count()
    }

    /// Is the script still loaded? A reply or a resumed request of an
    /// unloaded script is not delivered.
    pub fn is_loaded(&self) -> bool {
        !self.unloaded.get()
    }
}

/// A loaded script as a runtime keeps it: whatever its language needs,
/// and its [`Registrations`].
pub trait Loaded: Clone {
    fn registrations(&self) -> &Registrations;
}

/// A runtime's loaded scripts by id.
#[derive(Debug)]
pub struct Scripts<T> {
    next: Cell<u64>,
    live: RefCell<BTreeMap<ScriptId, T>>,
}

impl<T> Default for Scripts<T> {
    fn default() -> Self {
        Self {
            next: Cell::new(0),
            live: RefCell::new(BTreeMap::new()),
        }
    }
}

impl<T: Loaded> Scripts<T> {
    /// Keeps a newly loaded script; its id.
    pub fn insert(&self, script: T) -> ScriptId {
        let id = ScriptId(self.next.get());
        self.next.set(id.0 + 1);
        self.live.borrow_mut().insert(id, script);
        id
    }

    /// The loaded script `id`, if it is loaded.
    pub fn get(&self, id: ScriptId) -> Option<T> {
        self.live.borrow().get(&id).cloned()
    }

    /// How many scripts are loaded.
    pub fn len(&self) -> usize {
        self.live.borrow().len()
    }

    /// Is no script loaded?
    pub fn is_empty(&self) -> bool {
        self.live.borrow().is_empty()
    }

    /// Unloads `id`: forgets it and removes what it registered on `hub`.
    /// The script comes back for its runtime to drop as its language
    /// needs; `None` when no such script is loaded.
    pub fn unload(&self, hub: &Hub, id: ScriptId) -> Option<T> {
        let script = self.live.borrow_mut().remove(&id)?;
        let gone = script.registrations().unload(hub);
        tracing::debug!(%id, listeners = gone, "script unloaded");
        Some(script)
    }

    /// Swaps script `id` for what `load` makes of it (given the old
    /// version and the fresh [`Registrations`] the new one must note its
    /// listeners in). The new version loads while the old one still runs:
    /// should it fail (a syntax error, a failing top level, a refused
    /// registration), what it registered so far is removed and the old
    /// version stays, unchanged; once it succeeds, the old version's
    /// registrations go and the new one takes the id. Returns the versions
    /// it replaced, for the runtime to drop.
    ///
    /// The new version's top level may set off host code that unloads or
    /// reloads the same script: an unload then wins (the new version is
    /// unloaded too, and comes back with the old one); a version another
    /// reload put in place meanwhile is replaced like the old one, so that
    /// one version listens, never two.
    pub fn reload<E: From<NotLoaded>>(
        &self,
        hub: &Hub,
        id: ScriptId,
        load: impl FnOnce(&T, Rc<Registrations>) -> Result<T, E>,
    ) -> Result<Vec<T>, E> {
        let old = self.get(id).ok_or(NotLoaded(id))?;
        let fresh = Rc::new(Registrations::default());
        let new = match load(&old, fresh.clone()) {
            Ok(new) => new,
            Err(e) => {
                fresh.unload(hub);
                return Err(e);
            }
        };
        old.registrations().unload(hub);
        let mut replaced = vec![old];
        let mut live = self.live.borrow_mut();
        let Some(current) = live.get_mut(&id) else {
            drop(live);
            tracing::debug!(%id, "unloaded while its new version loaded");
            new.registrations().unload(hub);
            replaced.push(new);
            return Ok(replaced);
        };
        let current = std::mem::replace(current, new);
        drop(live);
        if !std::ptr::eq(current.registrations(), replaced[0].registrations()) {
            current.registrations().unload(hub);
            replaced.push(current);
        }
        Ok(replaced)
    }

    /// Forgets every script, for the runtime to drop them (when it goes).
    pub fn take_all(&self) -> Vec<T> {
        std::mem::take(&mut *self.live.borrow_mut())
            .into_values()
            .collect()
    }
}

/// A script id that names no loaded script (never loaded, or unloaded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not loaded")]
pub struct NotLoaded(pub ScriptId);
