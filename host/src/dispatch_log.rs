//! The dispatch log: every dispatch, as a recording needs it, apart from
//! the tracer.
//!
//! A recording (`gantry run --record`) needs each dispatch's key, source
//! and values and whether it came from outside the mods. The tracer gives
//! all that, but a tracer also times every listener, names every key and
//! keeps a script runtime from delivering its own sends itself
//! ([`crate::handoff`]): a recording through it cost a Lua send nine times
//! its price. The log is narrower: one call per dispatch, no names, no
//! clocks, and a runtime that delivers its own sends keeps doing so and
//! logs them itself through the [`LogHandle`] its
//! [`LaneSnapshot`](crate::LaneSnapshot) carries, with its arguments as
//! they are on its side ([`PlainArg`]), never made [`Value`]s.
//!
//! The log sees the dispatches the tracer's [`crate::TraceEvent::Dispatch`]
//! does, in the same order, and the hub
//! counts their nesting (a dispatch's `End` or `HookDone`) so that each
//! says whether it is the outermost one. With no log (the default) the
//! dispatch path reads the one flag it read for tracing alone.

use std::cell::Cell;
use std::rc::Rc;

use crate::hub::Hub;
use crate::key::Key;
use crate::source::Source;
use crate::trace::Delivery;
use crate::value::Value;

/// One argument of a send a runtime delivered itself: the only kinds its
/// lane takes, read straight from the runtime's side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlainArg<'a> {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'a str),
}

/// A logged dispatch's values: the hub's, or a runtime's own.
#[derive(Debug, Clone, Copy)]
pub enum LoggedArgs<'a> {
    Values(&'a [Value]),
    Plain(&'a [PlainArg<'a>]),
}

impl LoggedArgs<'_> {
    /// How many values.
    pub fn len(&self) -> usize {
        match self {
            LoggedArgs::Values(v) => v.len(),
            LoggedArgs::Plain(p) => p.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One dispatch, as the log hears of it.
#[derive(Debug, Clone, Copy)]
pub struct Logged<'a> {
    pub key: Key,
    pub source: Source,
    /// No other dispatch was under way: it was made outside any listener
    /// (by the host, or a script's top level).
    pub outermost: bool,
    pub delivery: Delivery,
    pub args: LoggedArgs<'a>,
}

/// A dispatch log: called once per dispatch, before its listeners run.
/// It may read the hub (a key's or a source's name) but must not change
/// it: the dispatch is under way.
pub trait DispatchLog {
    fn dispatch(&self, dispatch: &Logged<'_>);

    /// A way of its own to log the sends down one lane (`key` from
    /// `source`, `params` values each), prepared once when a runtime takes
    /// the lane: what every such send shares (key, source, delivery, how
    /// many values) is then worked out once, not per send. `None` (the
    /// default): the lane's sends come to [`DispatchLog::dispatch`].
    fn prepare_lane(
        &self,
        key: Key,
        source: Source,
        params: usize,
    ) -> Option<Box<dyn PreparedLane>> {
        let _ = (key, source, params);
        None
    }
}

/// A log's prepared way for one lane's sends ([`DispatchLog::prepare_lane`]).
/// Called only for a send nested in another dispatch (never an outermost
/// one), before its listeners run.
pub trait PreparedLane {
    /// Logs a send down the lane with `args` (as many as the lane was
    /// prepared for: more or fewer may be refused); `false` when this send needs
    /// the log's general way ([`DispatchLog::dispatch`]) instead, which is
    /// then called with it.
    fn send(&self, args: &[PlainArg<'_>]) -> bool;
}

/// The hub's log with the nesting it keeps: what a runtime delivering its
/// own sends logs them through. Cheap to clone.
#[derive(Clone)]
pub struct LogHandle(Rc<Held>);

impl std::fmt::Debug for LogHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogHandle")
            .field("depth", &self.0.depth.get())
            .finish_non_exhaustive()
    }
}

struct Held {
    log: Rc<dyn DispatchLog>,
    /// Dispatches under way (begun, not ended).
    depth: Cell<u32>,
}

impl LogHandle {
    /// A send starts (a runtime's own, of plain values): logs it. Pair it
    /// with [`LogHandle::end`] once its listeners have run.
    #[inline]
    pub fn begin_send(&self, key: Key, source: Source, args: &[PlainArg<'_>]) {
        self.begin(key, source, Delivery::Send, LoggedArgs::Plain(args));
    }

    /// The log's prepared way for the sends down the lane of `key` from
    /// `source` with `params` values, if it has one: pass it to
    /// [`LogHandle::begin_lane_send`].
    pub fn prepare_lane(
        &self,
        key: Key,
        source: Source,
        params: usize,
    ) -> Option<Box<dyn PreparedLane>> {
        self.0.log.prepare_lane(key, source, params)
    }

    /// As [`LogHandle::begin_send`], through `prepared` when the send is
    /// nested in another dispatch: what a recorded send costs a lane is
    /// then the prepared way's, with nothing rebuilt or checked again.
    #[inline]
    pub fn begin_lane_send(
        &self,
        prepared: Option<&dyn PreparedLane>,
        key: Key,
        source: Source,
        args: &[PlainArg<'_>],
    ) {
        let depth = self.0.depth.get();
        match prepared {
            Some(prepared) if depth > 0 && prepared.send(args) => self.0.depth.set(depth + 1),
            _ => self.begin(key, source, Delivery::Send, LoggedArgs::Plain(args)),
        }
    }

    /// A dispatch's listeners have run.
    #[inline]
    pub fn end(&self) {
        let depth = &self.0.depth;
        depth.set(depth.get().saturating_sub(1));
    }

    #[inline]
    fn begin(&self, key: Key, source: Source, delivery: Delivery, args: LoggedArgs<'_>) {
        let depth = self.0.depth.get();
        self.0.log.dispatch(&Logged {
            key,
            source,
            outermost: depth == 0,
            delivery,
            args,
        });
        self.0.depth.set(depth + 1);
    }
}

impl Hub {
    /// Installs `log` (replacing any other); `None` turns logging off.
    /// Moves the epoch: a runtime's kept lanes are taken again, with the
    /// log (see [`crate::LaneSnapshot::log`]).
    pub fn set_dispatch_log(&self, log: Option<Rc<dyn DispatchLog>>) {
        let handle = log.map(|log| {
            LogHandle(Rc::new(Held {
                log,
                depth: Cell::new(0),
            }))
        });
        *self.inner.trace.log.borrow_mut() = handle;
        self.inner.trace.refresh();
        self.with_state(|s| s.epoch += 1);
    }

    /// The installed log, if any.
    pub fn dispatch_log(&self) -> Option<LogHandle> {
        self.inner.trace.log.borrow().clone()
    }

    /// Logs the start of a dispatch, if a log is installed.
    pub(crate) fn log_dispatch(
        &self,
        key: Key,
        source: Source,
        args: &[Value],
        delivery: Delivery,
    ) {
        let log = self.inner.trace.log.borrow().clone();
        if let Some(log) = log {
            log.begin(key, source, delivery, LoggedArgs::Values(args));
        }
    }

    /// Logs the end of a dispatch, if a log is installed.
    pub(crate) fn log_end(&self) {
        if let Some(log) = &*self.inner.trace.log.borrow() {
            log.end();
        }
    }
}
