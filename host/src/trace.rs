//! Dispatch tracing: the events behind `gantry run --trace`.
//!
//! A host installs one tracer with [`Hub::set_tracer`]. With none installed
//! (the default) the dispatch path reads one `Cell<bool>` and formats,
//! allocates and times nothing; the host bench `send/*` measures that path.
//! The same flag says whether a dispatch log ([`crate::dispatch_log`]) is
//! installed, which hears of each dispatch where the tracer does.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use crate::hub::Hub;
use crate::key::Key;
use crate::listener::{Entry, ListenerId};
use crate::signature::Site;
use crate::source::Source;
use crate::value::Value;

/// How a dispatch reaches its listeners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// A plain send (notify).
    Send,
    /// A send carrying a reply callback.
    Request,
    /// A store or once: delivered live and kept for later listeners.
    Store,
    /// A stored message replayed to one listener that just arrived.
    Replay,
    /// A hook run: listeners get the payload itself.
    Hook,
}

impl std::fmt::Display for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Delivery::Send => "send",
            Delivery::Request => "request",
            Delivery::Store => "store",
            Delivery::Replay => "replay",
            Delivery::Hook => "hook",
        })
    }
}

/// What a listener listens with, as far as why it fires (or not) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenerKind {
    /// A message listener (a request's listener too).
    Message,
    /// A whole-table (or update-only) collection listener.
    Table,
    /// A row listener: one slot (0-based), or every changed row.
    Rows { slot: Option<i32>, removal: bool },
    /// A hook listener; higher priorities run first.
    Hook { priority: i32 },
}

/// Why a listener left the hub.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// Its `times` ran out.
    TimesUsedUp,
    /// Its owner (a script table, a handle) was collected or dropped.
    OwnerGone,
    /// Its owner object or the object it listened on was destroyed.
    Destroyed,
    /// Unbound on purpose (`UnbindMessage`, a handle's `unlisten`).
    Unbound,
    /// The named source it listened on was removed (`Hub::remove_named`).
    SourceRemoved,
}

impl std::fmt::Display for DropReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DropReason::TimesUsedUp => "its `times` were used up",
            DropReason::OwnerGone => "its owner was collected",
            DropReason::Destroyed => "its object was destroyed",
            DropReason::Unbound => "it was unbound",
            DropReason::SourceRemoved => "its named source was removed",
        })
    }
}

/// One traced step of a dispatch, in the order it happens.
#[derive(Debug)]
pub enum TraceEvent<'a> {
    /// A listener joined the hub (before any replay it gets).
    Listened {
        key: &'a str,
        listener: ListenerId,
        scope: Source,
        site: Option<&'a Site>,
        kind: ListenerKind,
        /// Hears the keys below its key too.
        partial: bool,
    },
    /// A listener left the hub.
    Dropped {
        listener: ListenerId,
        reason: DropReason,
    },
    /// A dispatch passed its checks and is about to call listeners.
    Dispatch {
        key: &'a str,
        source: Source,
        args: &'a [Value],
        delivery: Delivery,
    },
    /// One listener was called (and returned) in the current dispatch.
    Called {
        key: &'a str,
        listener: ListenerId,
        site: Option<&'a Site>,
        /// The listener's order; a hook listener's priority.
        order: i32,
        elapsed: Duration,
    },
    /// A dispatch was aborted before any listener ran. When the abort
    /// comes after [`TraceEvent::Dispatch`], an [`TraceEvent::End`] with
    /// no listeners follows.
    Aborted { key: &'a str, reason: &'a str },
    /// A send, request, store or replay ended (hooks end with
    /// [`TraceEvent::HookDone`]). Dispatches nest: a listener that sends
    /// starts and ends its dispatch between its caller's `Dispatch` and `End`.
    End { key: &'a str, listeners: usize },
    /// A hook run ended.
    HookDone {
        key: &'a str,
        ran: usize,
        handled: bool,
        cancelled: bool,
    },
}

/// A tracer: called for every [`TraceEvent`] while installed.
pub type TraceFn = dyn Fn(&TraceEvent<'_>);

/// What the hub keeps for tracing: the tracer, and whether there is one;
/// and the dispatch log ([`crate::dispatch_log`]), which hears of the same
/// dispatches.
#[derive(Default)]
pub(crate) struct Tracer {
    /// Mirrors `tracer.is_some()`.
    on: Cell<bool>,
    /// A tracer or a log is installed: the one read an unobserved
    /// dispatch pays.
    observed: Cell<bool>,
    tracer: RefCell<Option<Rc<TraceFn>>>,
    pub(crate) log: RefCell<Option<crate::dispatch_log::LogHandle>>,
}

impl Tracer {
    /// Is a tracer installed?
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        self.on.get()
    }

    /// Is a tracer or a dispatch log installed?
    #[inline]
    pub(crate) fn is_observed(&self) -> bool {
        self.observed.get()
    }

    /// Sets the flags from what is installed.
    pub(crate) fn refresh(&self) {
        let on = self.tracer.borrow().is_some();
        self.on.set(on);
        self.observed.set(on || self.log.borrow().is_some());
    }
}

impl Hub {
    /// Installs `tracer` (replacing any other); `None` turns tracing off.
    pub fn set_tracer(&self, tracer: Option<Rc<TraceFn>>) {
        *self.inner.trace.tracer.borrow_mut() = tracer;
        self.inner.trace.refresh();
        // Sends handed off to an embedding must come back to be traced.
        self.with_state(|s| s.epoch += 1);
    }

    /// Is a tracer installed? The dispatch path asks this before it
    /// prepares any trace event.
    #[inline]
    pub fn is_tracing(&self) -> bool {
        self.inner.trace.is_on()
    }

    /// Is a tracer or a dispatch log installed? A dispatch asks this before
    /// [`Hub::trace_dispatch`] and [`Hub::trace_end`].
    #[inline]
    pub(crate) fn is_observed(&self) -> bool {
        self.inner.trace.is_observed()
    }

    /// Hands `event` to the tracer. Callers check [`Hub::is_tracing`] first.
    pub(crate) fn trace(&self, event: &TraceEvent<'_>) {
        let tracer = self.inner.trace.tracer.borrow().clone();
        if let Some(tracer) = tracer {
            tracer(event);
        }
    }
}

impl Hub {
    pub(crate) fn trace_dropped(&self, ids: &[ListenerId], reason: DropReason) {
        if self.is_tracing() {
            for &listener in ids {
                self.trace(&TraceEvent::Dropped { listener, reason });
            }
        }
    }

    /// Traces and logs the start of a dispatch (the caller checked
    /// `is_observed`).
    pub(crate) fn trace_dispatch(
        &self,
        key: Key,
        source: Source,
        args: &[Value],
        delivery: Delivery,
    ) {
        if self.is_tracing() {
            let name = self.key_name(key);
            self.trace(&TraceEvent::Dispatch {
                key: &name,
                source,
                args,
                delivery,
            });
        }
        self.log_dispatch(key, source, args, delivery);
    }

    /// Traces a new listener (the caller checked `is_tracing`).
    pub(crate) fn trace_listened(&self, entry: &Entry) {
        let kind = entry.listener_kind();
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

    /// Traces and logs the end of a dispatch (the caller checked
    /// `is_observed`).
    pub(crate) fn trace_end(&self, key: Key, listeners: usize) {
        if self.is_tracing() {
            let name = self.key_name(key);
            self.trace(&TraceEvent::End {
                key: &name,
                listeners,
            });
        }
        self.log_end();
    }

    /// Traces one listener call (the caller checked `is_tracing`).
    pub(crate) fn trace_called(&self, key: Key, entry: &Entry, elapsed: std::time::Duration) {
        let name = self.key_name(key);
        self.trace(&TraceEvent::Called {
            key: &name,
            listener: entry.id,
            site: entry.site.as_ref(),
            order: entry.shown_order(),
            elapsed,
        });
    }
}
