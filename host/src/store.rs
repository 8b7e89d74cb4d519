//! Stored and once messages: the answer to "the broadcast happened before
//! anyone was listening".
//!
//! A stored message is kept per (key, source) and replayed once to each
//! listener that arrives later, as if it had been there all along. A once
//! message is consumed by its first delivery, live or replayed. Replays go
//! through the same compatibility rule and the same `times` accounting as a
//! live send.

use std::any::Any;
use std::panic::Location;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::collection::{Mirror, Row, TableView};
use crate::hub::seam::DownLists;
use crate::hub::{Caller, Delivered, Hub, HubError};
use crate::key::Key;
use crate::listener::{Entry, ListenerParams};
use crate::quota::{Charge, Holding};
use crate::report::Report;
use crate::signature::Kind;
use crate::source::Source;
use crate::trace::Delivery;
use crate::typed::IntoArgs;
use crate::value::Value;

/// Where a message is stored (with a named source's name) and what:
/// one item of [`Hub::stored_everywhere`].
pub type StoredAt = (Source, Option<Rc<str>>, Rc<[Value]>);

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
    /// Which store this is (see [`Stores::serial`]): a writer tells
    /// the table it opened from one stored over it since.
    pub serial: u64,
}

/// Told of each once message after its live delivery, with how many
/// listeners took it; says what becomes of it.
pub type OnceRelayFn = dyn Fn(Key, Source, &[Value], usize) -> OnceFate;

/// What a once relay ([`Hub::set_once_relay`]) made of a once message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnceFate {
    /// Not its business: kept for a later listener if none took it.
    AsUsual,
    /// Gone somewhere else (a bridge, to another node): kept for no later
    /// listener here.
    Elsewhere,
    /// Nobody really took it (the relay's own listener heard it, and it
    /// could not pass it on): kept for the first listener to come.
    KeepHere,
}

/// What the hub keeps for [`crate::Message::is_once`] and
/// [`Hub::set_once_relay`]: touched by once messages only, never by a
/// send or a plain store.
pub(crate) struct OnceSeam {
    /// The values of the once being delivered (null: none). An `Rc<[Value]>`
    /// is its own allocation, so no other message's values share it.
    delivering: std::cell::Cell<*const Value>,
    relay: std::cell::RefCell<Option<Rc<OnceRelayFn>>>,
}

impl OnceSeam {
    pub(crate) fn is_delivering(&self, args: &[Value]) -> bool {
        std::ptr::eq(self.delivering.get(), args.as_ptr())
    }
}

impl Default for OnceSeam {
    fn default() -> Self {
        OnceSeam {
            delivering: std::cell::Cell::new(std::ptr::null()),
            relay: std::cell::RefCell::new(None),
        }
    }
}

/// Every stored and once message of a hub, by (key, source): what the
/// hub keeps for this feature, in one field of its state.
#[derive(Default)]
pub(crate) struct Stores {
    map: FxHashMap<(Key, Source), Stored>,
    /// The serial the last store got.
    serial: u64,
}

impl Stores {
    pub(crate) fn get(&self, at: &(Key, Source)) -> Option<&Stored> {
        self.map.get(at)
    }

    pub(crate) fn get_mut(&mut self, at: &(Key, Source)) -> Option<&mut Stored> {
        self.map.get_mut(at)
    }

    /// Keeps `stored` at `at`; returns what was there.
    pub(crate) fn insert(&mut self, at: (Key, Source), stored: Stored) -> Option<Stored> {
        self.map.insert(at, stored)
    }

    pub(crate) fn remove(&mut self, at: &(Key, Source)) -> Option<Stored> {
        self.map.remove(at)
    }

    /// Every stored message, in no order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&(Key, Source), &Stored)> {
        self.map.iter()
    }

    /// A number no store had before: each message stored gets one (a
    /// reset keeps counting, so a writer never mistakes a new store for
    /// the one it opened).
    pub(crate) fn serial(&mut self) -> u64 {
        self.serial += 1;
        self.serial
    }

    /// Drops the messages stored from the sources `gone` picks; returns
    /// how many. A table stored from Rust rows drops them when it goes,
    /// which may run the rows' code: not under the state's borrow, so
    /// they go to the `graveyard`.
    pub(crate) fn drop_from(
        &mut self,
        gone: impl Fn(Source) -> bool,
        graveyard: &mut Vec<Box<dyn Any>>,
    ) -> usize {
        let gone: Vec<Stored> = self
            .map
            .extract_if(|(_, source), _| gone(*source))
            .map(|(_, stored)| stored)
            .collect();
        let n = gone.len();
        if n > 0 {
            graveyard.push(Box::new(gone));
        }
        n
    }

    /// What a listener that just arrived is replayed, by key: what is
    /// stored at exactly its (key, scope), and for a partial listener at
    /// the keys under it on the same scope, in key order.
    pub(crate) fn reaching<'s>(
        &'s self,
        keys: &crate::key::Keys,
        entry: &Entry,
    ) -> Vec<(Key, &'s Stored)> {
        if !entry.partial {
            // One lookup: a listener arriving costs nothing more for the
            // stores of other keys.
            return self
                .map
                .get(&(entry.key, entry.scope))
                .map(|stored| (entry.key, stored))
                .into_iter()
                .collect();
        }
        let mut found: Vec<(Key, &Stored)> = self
            .map
            .iter()
            .filter(|((key, source), _)| {
                *source == entry.scope
                    && (*key == entry.key || descends_from(keys, *key, entry.key))
            })
            .map(|((key, _), stored)| (*key, stored))
            .collect();
        found.sort_by_key(|(key, _)| *key);
        found
    }
}

impl Hub {
    /// Stores the latest arguments for (key, source) and delivers them live.
    #[track_caller]
    pub fn store<A: IntoArgs>(
        &self,
        key: Key,
        source: impl Into<Source>,
        args: A,
    ) -> Result<Delivered, HubError> {
        let args = args.into_args().as_ref().to_vec();
        self.store_values(
            key,
            source.into(),
            args,
            false,
            Caller::Rust(Location::caller()),
        )
    }

    /// Like [`Hub::store`], but consumed by the first delivery, live or
    /// replayed.
    #[track_caller]
    pub fn once<A: IntoArgs>(
        &self,
        key: Key,
        source: impl Into<Source>,
        args: A,
    ) -> Result<Delivered, HubError> {
        let args = args.into_args().as_ref().to_vec();
        self.store_values(
            key,
            source.into(),
            args,
            true,
            Caller::Rust(Location::caller()),
        )
    }

    /// Stores a table of Rust rows: their values, as [`Hub::store`] would
    /// (diffed against the stored table, published to its listeners), and
    /// the rows themselves, which a visitor whose members line up with
    /// them reads at compiled offsets ([`RowPath::Compiled`]) until the
    /// table is written otherwise (see [`crate::collection::mirror`]).
    ///
    /// [`RowPath::Compiled`]: crate::RowPath::Compiled
    #[track_caller]
    pub fn store_rows<T: Row>(
        &self,
        key: Key,
        source: impl Into<Source>,
        rows: Vec<T>,
    ) -> Result<Delivered, HubError> {
        let (mirror, values) = Mirror::of(rows);
        self.store_with(
            key,
            source.into(),
            vec![Value::array(values)],
            false,
            Caller::Rust(Location::caller()),
            Some(Rc::new(mirror)),
        )
    }

    /// Lends the table stored for (key, source) to `f` as a view (no copy
    /// of the rows). `None` when nothing is stored there, or no table.
    pub fn read_table<R>(
        &self,
        key: Key,
        source: impl Into<Source>,
        f: impl FnOnce(&TableView<'_>) -> R,
    ) -> Option<R> {
        let source = source.into();
        let (args, mirror) = {
            let state = self.inner.state.borrow();
            let stored = state.stores.get(&(key, source))?;
            (stored.args.clone(), stored.mirror.clone())
        };
        let rows = crate::collection::dispatch::table_of(&args)?;
        Some(f(&TableView::with_mirror(self, rows, mirror.as_deref())))
    }

    /// The store entry every face goes through.
    /// Outside the crate, a script face reaches it through
    /// [`crate::face::Faced`].
    pub(crate) fn store_values(
        &self,
        key: Key,
        source: Source,
        args: Vec<Value>,
        once: bool,
        caller: Caller<'_>,
    ) -> Result<Delivered, HubError> {
        self.store_with(key, source, args, once, caller, None)
    }

    fn store_with(
        &self,
        key: Key,
        source: Source,
        mut args: Vec<Value>,
        once: bool,
        caller: Caller<'_>,
        mirror: Option<Rc<Mirror>>,
    ) -> Result<Delivered, HubError> {
        // Kept for a source that is gone, it could never be removed.
        self.check_alive(source, None)?;
        // Charged before anything is recorded or delivered: past the quota,
        // the store is refused whole.
        let bytes = self.room_to_store(key, source, &args)?;
        let mut lists = crate::hub::Gathered::new();
        // Rust rows are kept only beside the values built from them: if
        // admitting them changed a row (an int widened to a declared
        // float, which copies the list), they no longer say the same.
        let built = mirror.as_ref().and_then(|_| match args.as_slice() {
            [Value::Array(rows)] => Some(rows.clone()),
            _ => None,
        });
        self.gather(key, source, &mut args, caller, Kind::Store, &mut lists)?;
        let mirror = mirror.filter(|_| {
            matches!((&built, args.as_slice()),
                (Some(built), [Value::Array(rows)]) if Rc::ptr_eq(built, rows))
        });
        drop(built);
        if self.is_observed() {
            self.trace_dispatch(key, source, &args, Delivery::Store);
        }
        let args: Rc<[Value]> = Rc::from(args);
        let mut prev = None;
        if !once {
            let charge = self.charge_stored(bytes);
            prev = self.with_state(|s| {
                let serial = s.stores.serial();
                let mut prev = s.stores.insert(
                    (key, source),
                    Stored {
                        args: args.clone(),
                        once: false,
                        mirror: mirror.clone(),
                        charge,
                        serial,
                    },
                );
                // The previous table is kept for the diff only: what it
                // held is given back now.
                if let Some(prev) = &mut prev {
                    prev.charge = None;
                }
                prev
            });
        }
        // A once's listeners may ask whether it is one (see `OnceSeam`);
        // a once sent from one of them marks its own values, then ours
        // come back.
        let outer = once.then(|| self.inner.once.delivering.replace(args.as_ptr()));
        // The table's rows go to the collection listeners in their places
        // among the message listeners (who borrow the table until then).
        let delivered = {
            let down = DownLists {
                hub: self,
                key,
                source,
                args: &args,
                caller,
                lists: &lists,
            };
            if once {
                // A once table is no stored table (it is nobody's previous
                // table to diff against): its rows go out as a send's do.
                crate::collection::dispatch::on_send(self, key, &args, &lists, down)
            } else {
                // A stored table: diffed against the previous one.
                let prev = prev.map(|p| p.args);
                crate::collection::dispatch::on_store(
                    self,
                    key,
                    prev.as_ref(),
                    &args,
                    mirror.as_deref(),
                    &lists,
                    down,
                )
            }
        };
        if let Some(outer) = outer {
            self.inner.once.delivering.set(outer);
        }
        let delivered = match delivered {
            Ok(delivered) => delivered,
            Err(error) => {
                if self.is_observed() {
                    self.trace_end(key, 0);
                }
                return Err(error);
            }
        };
        if self.is_observed() {
            self.trace_end(key, delivered.listeners);
        }
        let fate = if once {
            let relay = self.inner.once.relay.borrow().clone();
            relay.map_or(OnceFate::AsUsual, |relay| {
                relay(key, source, &args, delivered.listeners)
            })
        } else {
            OnceFate::AsUsual
        };
        let keep = match fate {
            OnceFate::AsUsual => delivered.listeners == 0,
            OnceFate::Elsewhere => false,
            OnceFate::KeepHere => true,
        };
        if once && keep {
            let charge = self.charge_stored(bytes);
            self.with_state(|s| {
                let serial = s.stores.serial();
                s.stores.insert(
                    (key, source),
                    Stored {
                        args,
                        once: true,
                        mirror,
                        charge,
                        serial,
                    },
                )
            });
        }
        Ok(delivered)
    }

    /// The bytes a store of `args` at (key, source) holds, when this handle
    /// is charged and they fit its quota (what is stored there now, this
    /// quota's, is given back by the store); `None` for an uncharged one.
    fn room_to_store(
        &self,
        key: Key,
        source: Source,
        args: &[Value],
    ) -> Result<Option<usize>, HubError> {
        let Some(quota) = self.quota() else {
            return Ok(None);
        };
        let bytes = crate::quota::STORED_BYTES + crate::quota::values_bytes(args);
        let state = self.inner.state.borrow();
        let freed = state
            .stores
            .get(&(key, source))
            .and_then(|stored| stored.charge.as_ref())
            .map_or(0, |charge| charge.frees_for(quota));
        quota.room(state.keys.name(key), Holding::StoredMessage, bytes, freed)?;
        Ok(Some(bytes))
    }

    fn charge_stored(&self, bytes: Option<usize>) -> Option<Charge> {
        Some(self.quota()?.charge(bytes?))
    }

    /// Installs (or, with `None`, takes away) the hub's once relay: told
    /// of every once message after its live delivery here, with how many
    /// listeners took it, and saying what becomes of it ([`OnceFate`]:
    /// gone to another node through a bridge, say). One relay per hub; a
    /// new one replaces the old.
    pub fn set_once_relay(&self, relay: Option<Rc<OnceRelayFn>>) {
        *self.inner.once.relay.borrow_mut() = relay;
    }

    /// Removes what is stored for (key, source). Returns whether there was one.
    pub fn remove_stored(&self, key: Key, source: impl Into<Source>) -> bool {
        let source = source.into();
        self.with_state(|s| s.stores.remove(&(key, source)))
            .is_some()
    }

    /// What is stored for (key, source), if anything.
    pub fn stored(&self, key: Key, source: impl Into<Source>) -> Option<Rc<[Value]>> {
        let source = source.into();
        self.inner
            .state
            .borrow()
            .stores
            .get(&(key, source))
            .map(|s| s.args.clone())
    }

    /// Every source holding a stored message of `key`, in source order,
    /// with a named source's name: what a saver walks to keep a key's
    /// messages on sources it cannot list (an object's named sources).
    pub fn stored_everywhere(&self, key: Key) -> Vec<StoredAt> {
        let state = self.inner.state.borrow();
        let mut out: Vec<_> = state
            .stores
            .iter()
            .filter(|((k, _), _)| *k == key)
            .map(|((_, source), stored)| {
                let name = match source {
                    Source::Named(_, n) => state.name_list.get(n.0 as usize).cloned(),
                    _ => None,
                };
                (*source, name, stored.args.clone())
            })
            .collect();
        out.sort_by_key(|(source, _, _)| *source);
        out
    }
}

/// After a listener registered (the seam's `after_listen`): one that takes
/// messages is replayed what is stored for it.
pub(crate) fn after_listen(hub: &Hub, entry: &Rc<Entry>) {
    if entry.takes_messages() {
        replay(hub, entry);
    }
}

/// Replays what is stored to a listener that just arrived: exactly the
/// (key, scope) it listens on, and for a partial listener the keys under it
/// on the same scope.
fn replay(hub: &Hub, entry: &Rc<Entry>) {
    let pending: Vec<(Key, Rc<[Value]>, bool)> = {
        let state = hub.inner.state.borrow();
        state
            .stores
            .reaching(&state.keys, entry)
            .into_iter()
            .map(|(key, stored)| (key, stored.args.clone(), stored.once))
            .collect()
    };
    for (key, args, once) in pending {
        if !entry.callable() {
            return;
        }
        if let ListenerParams::Typed(types) = &entry.params
            && hub.is_checked()
            && types.len() > args.len()
        {
            hub.report(Report::Mismatch {
                key: hub.key_name(key).to_string(),
                position: args.len(),
                expected: types[args.len()].to_string(),
                got: "nothing (the stored message has fewer arguments)".into(),
                site: None,
                listener_site: entry.site.clone(),
            });
            continue;
        }
        let depth = depth_between(hub, key, entry.key);
        if hub.is_observed() {
            hub.trace_dispatch(key, entry.scope, &args, Delivery::Replay);
        }
        let called = hub.call_entry(entry, depth, key, entry.scope, &args, None);
        if hub.is_observed() {
            hub.trace_end(key, usize::from(called));
        }
        if called && once {
            hub.with_state(|s| s.stores.remove(&(key, entry.scope)));
        }
    }
}

fn descends_from(keys: &crate::key::Keys, mut key: Key, ancestor: Key) -> bool {
    while let Some(parent) = keys.info(key).parent {
        if parent == ancestor {
            return true;
        }
        key = parent;
    }
    false
}

fn depth_between(hub: &Hub, key: Key, ancestor: Key) -> u32 {
    let state = hub.inner.state.borrow();
    state.keys.info(key).depth - state.keys.info(ancestor).depth
}
