//! Delivery handed off to an embedding: what a script runtime needs to
//! deliver a send to its own listeners without crossing into the hub.
//!
//! A Lua send to Lua listeners through the hub crosses the language
//! boundary twice (Lua → Rust for the send, Rust → Lua per listener), and
//! those crossings cost more than the whole of a hand-written Lua event
//! bus. A runtime that keeps its listeners' functions on its own side can
//! instead ask the hub, once, what a send of a key from a source would do
//! ([`Hub::lane_snapshot`]), keep that answer, and deliver itself for as
//! long as the hub's [epoch](Hub::epoch) has not moved. The hub tells it
//! when the epoch moves ([`Hub::watch_epoch`]).
//!
//! The hub hands off only what it would do itself with nothing but calls:
//! no tracing (a dispatch log is no obstacle: the snapshot carries it, and
//! the runtime logs what it delivers), the key's types known for plain sends, and every listener a
//! plain message listener (no `times` to count, no struct filter, not a
//! collection listener). Anything else is refused and goes through the hub.
//! The runtime keeps the rest of the contract: it checks the arguments
//! against [`LaneSnapshot::params`] (refusing the hand-off on any doubt),
//! calls the listeners in the snapshot's order, skips a listener removed
//! during the send ([`Hub::is_listening`], asked only once the epoch has
//! moved mid-send), and reports a failing listener with
//! [`Hub::listener_failed`].

use std::rc::Rc;

use crate::hub::Hub;
use crate::key::Key;
use crate::listener::ListenerId;
use crate::report::Report;
use crate::signature::Site;
use crate::source::Source;
use crate::types::Type;

/// What a send of one key from one source does, while the epoch stands.
#[derive(Debug, Clone)]
pub struct LaneSnapshot {
    /// The hub's epoch when the snapshot was taken.
    pub epoch: u64,
    /// The key's parameter types: a send must match them position by
    /// position and carry at most this many arguments.
    pub params: Rc<[Type]>,
    /// The listeners to call, in delivery order.
    pub listeners: Vec<SnapshotListener>,
    /// The hub's dispatch log, if one is installed: each send delivered
    /// down this lane is logged through it (begun before its listeners,
    /// ended after), as the hub logs its own.
    pub log: Option<crate::dispatch_log::LogHandle>,
}

/// One listener of a [`LaneSnapshot`].
#[derive(Debug, Clone)]
pub struct SnapshotListener {
    pub id: ListenerId,
    /// Where it was registered, for failure reports.
    pub site: Option<Site>,
}

/// Why nothing would be handed off; for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoHandoff {
    /// A tracer is installed: every send is traced by the hub.
    Tracing,
    /// Unchecked mode: the hub's argument rules differ.
    Unchecked,
    /// The key's types are not known yet (or a send would still refine them).
    Learning,
    /// A listener counts its calls, filters by struct or is not a plain
    /// message listener.
    SpecialListener,
    /// The key is not interned.
    UnknownKey,
    /// The source's object or world is gone: a send from it is an error,
    /// which the hub reports.
    SourceGone,
}

impl Hub {
    /// The hub's epoch: it moves whenever what some send would do may have
    /// changed (a listener came or went, a signature changed, an object was
    /// destroyed, tracing or checked mode switched).
    pub fn epoch(&self) -> u64 {
        self.inner.state.borrow().epoch
    }

    /// Calls `f` with the new epoch each time it moves, once the change is
    /// complete. `f` must not call back into the hub.
    pub fn watch_epoch(&self, f: impl Fn(u64) + 'static) {
        self.inner.epoch_watchers.borrow_mut().push(Rc::new(f));
    }

    /// Tells the watchers if the epoch moved since they last heard. Called
    /// with the state released.
    #[inline]
    pub(crate) fn epoch_moved(&self, epoch: u64) {
        if epoch != self.inner.told_epoch.get() {
            self.tell_epoch(epoch);
        }
    }

    #[cold]
    fn tell_epoch(&self, epoch: u64) {
        self.inner.told_epoch.set(epoch);
        let watchers = self.inner.epoch_watchers.borrow().clone();
        for watcher in watchers {
            watcher(epoch);
        }
    }

    /// What a send of `key` from `source` would do now, if it is nothing
    /// but plain calls of plain message listeners (see the module doc).
    pub fn lane_snapshot(&self, key: Key, source: Source) -> Result<LaneSnapshot, NoHandoff> {
        if self.is_tracing() {
            return Err(NoHandoff::Tracing);
        }
        if !self.is_checked() {
            return Err(NoHandoff::Unchecked);
        }
        // A listener whose owner is gone is dropped, as a send through the
        // hub drops it before delivering anything to it; the lane is then
        // taken again (dropping moved the epoch).
        loop {
            let mut gone = Vec::new();
            let taken = self.with_state(|s| {
                let slot = s.slots.get(key.index()).ok_or(NoHandoff::UnknownKey)?;
                let params = slot.handoff_params().ok_or(NoHandoff::Learning)?;
                // Sends of a key that carries a table take the table path.
                let table_key = matches!(&*params, [p] if p.struct_array_element().is_some());
                let epoch = s.epoch;
                let mut listeners = Vec::new();
                crate::hub::for_each_on_route(s, key, source, NoHandoff::SourceGone, |entry| {
                    if entry.expects.is_some() || entry.remaining.get() >= 0 {
                        return Err(NoHandoff::SpecialListener);
                    }
                    // Skipped by a plain send (the table path is not plain);
                    // a hook listener is never plain.
                    match entry.called_by_plain_send(table_key) {
                        Some(true) => {}
                        Some(false) => return Ok(()),
                        None => return Err(NoHandoff::SpecialListener),
                    }
                    if entry.callable() {
                        listeners.push(SnapshotListener {
                            id: entry.id,
                            site: entry.site.clone(),
                        });
                    } else if entry.alive.get() {
                        gone.push(entry.id);
                    }
                    Ok(())
                })?;
                Ok(LaneSnapshot {
                    epoch,
                    params,
                    listeners,
                    log: None,
                })
            });
            if gone.is_empty() {
                return taken.map(|lane| LaneSnapshot {
                    log: self.dispatch_log(),
                    ..lane
                });
            }
            for id in gone {
                self.drop_listener(id, crate::trace::DropReason::OwnerGone);
            }
        }
    }

    /// Is listener `id` still registered, with its owner alive?
    pub fn is_listening(&self, id: ListenerId) -> bool {
        self.inner
            .state
            .borrow()
            .listeners
            .get(&id)
            .is_some_and(|entry| entry.callable())
    }

    /// Reports a listener that failed during a send the embedding delivered
    /// itself, as the hub reports its own ([`Report::ListenerFailed`]).
    pub fn listener_failed(&self, key: Key, message: String, site: Option<Site>) {
        self.report(Report::ListenerFailed {
            key: self.key_name(key).to_string(),
            message,
            site,
        });
    }
}
