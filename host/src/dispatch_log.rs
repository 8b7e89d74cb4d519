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
//! A log that keeps its records as bytes may lend each lane a
//! [`LaneSink`] (from [`DispatchLog::lane_sink`]): a share of its byte
//! buffer ([`SendSink`]) and the head every record of the lane's sends
//! starts with, made once. A send nested in another dispatch then writes
//! its record itself ([`LogHandle::lane_record`]): the head, then each
//! argument as [`plain_tag`] says, with no call into the log. The log is
//! called only when the sink asks for it: the send is outermost, the
//! buffer is full or closed, or the clock moved since the last record.
//!
//! The log sees the dispatches the tracer's [`crate::TraceEvent::Dispatch`]
//! does, in the same order, and the hub
//! counts their nesting (a dispatch's `End` or `HookDone`) so that each
//! says whether it is the outermost one. With no log (the default) the
//! dispatch path reads the one flag it read for tracing alone.

use std::cell::{Cell, RefCell, RefMut};
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

    /// A share of the log's byte buffer for the sends down one lane (`key`
    /// from `source`, `params` values each), asked for once when a runtime
    /// takes the lane: each such send nested in another dispatch writes its
    /// record there itself ([`LogHandle::lane_record`]), and only the others
    /// come to [`DispatchLog::dispatch`]. `None` (the default): they all
    /// come to [`DispatchLog::dispatch`].
    fn lane_sink(&self, key: Key, source: Source, params: usize) -> Option<LaneSink> {
        let _ = (key, source, params);
        None
    }
}

/// How a value is written in a [`SendSink`] by a lane: a tag byte, then
/// its payload (integers little-endian). A log reading its sink's bytes
/// reads these.
pub mod plain_tag {
    /// `false`; no payload.
    pub const FALSE: u8 = 1;
    /// `true`; no payload.
    pub const TRUE: u8 = 2;
    /// An `i64`.
    pub const INT: u8 = 3;
    /// An `f64` (its bits).
    pub const FLOAT: u8 = 4;
    /// A `u32` length, then the string's UTF-8 bytes.
    pub const STR: u8 = 5;
}

/// Appends `arg` to `buf` as [`plain_tag`] says: each piece a copy of a
/// constant size (no call), but a string's bytes.
#[inline(always)]
pub fn write_plain(buf: &mut Vec<u8>, arg: PlainArg<'_>) {
    let (tag, payload) = match arg {
        PlainArg::Int(n) => (plain_tag::INT, n.to_le_bytes()),
        PlainArg::Float(x) => (plain_tag::FLOAT, x.to_le_bytes()),
        PlainArg::Bool(b) => {
            buf.push(if b { plain_tag::TRUE } else { plain_tag::FALSE });
            return;
        }
        PlainArg::Str(s) => {
            let [l0, l1, l2, l3] = (s.len() as u32).to_le_bytes();
            buf.extend_from_slice(&[plain_tag::STR, l0, l1, l2, l3]);
            buf.extend_from_slice(s.as_bytes());
            return;
        }
    };
    buf.extend_from_slice(&fixed_piece(tag, payload));
}

/// A number as a record holds it: its tag, then its 8 bytes.
#[inline(always)]
fn fixed_piece(tag: u8, payload: [u8; 8]) -> [u8; LaneSink::VALUE] {
    let mut piece = [tag; LaneSink::VALUE];
    piece[1..].copy_from_slice(&payload);
    piece
}

/// A log's byte buffer, shared with the lanes it lends it to
/// ([`LaneSink`]). The log owns what is in it (it hands the bytes on as it
/// likes, [`SendSink::replace`]); a lane appends whole records to it while
/// it is open, holds fewer bytes than its room, and the log's clock (a
/// recording's tick) is still the one its last record was stamped with.
pub struct SendSink {
    bytes: RefCell<Vec<u8>>,
    /// Lanes write while the buffer holds fewer bytes than this; 0 closes
    /// the sink to them.
    room: Cell<usize>,
    /// The clock the log stamps its records with, as it is now.
    clock: Rc<Cell<u32>>,
    /// The clock's value the records in the buffer are stamped with last.
    stamped: Cell<u32>,
}

impl SendSink {
    /// A sink lanes write to while it holds fewer than `room` bytes, with
    /// `capacity` bytes made at once, stamped with `clock`'s value 0.
    pub fn new(clock: Rc<Cell<u32>>, room: usize, capacity: usize) -> Rc<Self> {
        Rc::new(SendSink {
            bytes: RefCell::new(Vec::with_capacity(capacity)),
            room: Cell::new(room),
            clock,
            stamped: Cell::new(0),
        })
    }

    /// The buffer, for the log to append its own records (`None` while a
    /// lane is writing one: never, but a log must not panic).
    #[inline]
    pub fn bytes(&self) -> Option<RefMut<'_, Vec<u8>>> {
        self.bytes.try_borrow_mut().ok()
    }

    /// Takes what the buffer holds, leaving `next` (emptied) in its place.
    pub fn replace(&self, mut next: Vec<u8>) -> Vec<u8> {
        next.clear();
        match self.bytes.try_borrow_mut() {
            Ok(mut bytes) => std::mem::replace(&mut *bytes, next),
            Err(_) => Vec::new(),
        }
    }

    /// The clock's value the log last stamped its records with.
    #[inline]
    pub fn stamped(&self) -> u32 {
        self.stamped.get()
    }

    /// The records from now on are stamped `at` (the log has written so).
    #[inline]
    pub fn stamp(&self, at: u32) {
        self.stamped.set(at);
    }

    /// Lanes write no more: every send comes to the log.
    pub fn close(&self) {
        self.room.set(0);
    }
}

/// What a log lends one lane ([`DispatchLog::lane_sink`]): its
/// [`SendSink`], the head of every record of the lane's sends and how
/// many values each has.
pub struct LaneSink {
    sink: Rc<SendSink>,
    head: [u8; LaneSink::HEAD],
    params: usize,
}

impl LaneSink {
    /// How long a lane's record head is: one size for every lane, so that
    /// writing it is one copy of a constant size.
    pub const HEAD: usize = 16;

    /// The most bytes a value takes in a record, a string's bytes aside:
    /// a tag and 8 bytes of payload ([`write_plain`]).
    pub const VALUE: usize = 9;

    /// A lane's share of `sink` for sends of `params` values, each record
    /// starting with `head`.
    pub fn new(sink: Rc<SendSink>, head: [u8; LaneSink::HEAD], params: usize) -> Self {
        LaneSink { sink, head, params }
    }

    /// How many values each record of the lane has.
    pub fn params(&self) -> usize {
        self.params
    }

    /// The room a record's values take, a string's bytes aside
    /// ([`LaneSink::VALUE`] each): made with its head, so that each
    /// value is written with no check of the buffer's capacity.
    fn values_room(&self) -> usize {
        self.params.saturating_mul(LaneSink::VALUE)
    }
}

/// A record a lane is writing in its log's sink ([`LogHandle::lane_record`]):
/// its head is written; the lane adds each argument, then
/// [`LaneRecord::finish`]es it. Dropped unfinished (an argument did not
/// fit the lane), it is taken back whole.
///
/// The buffer has room for the values still to come ([`LaneSink::VALUE`]
/// bytes each) past what the record holds, at every moment: made for all
/// of them with the head, made again after a string's bytes. A number or
/// a boolean is then written with no check, and a lane that writes its
/// values each in its turn never reallocates the buffer but for a
/// string's bytes.
pub struct LaneRecord<'s> {
    bytes: RefMut<'s, Vec<u8>>,
    start: usize,
    /// The room the lane's values take (`LaneSink::values_room`).
    values_room: usize,
    finished: bool,
}

impl LaneRecord<'_> {
    /// # Safety
    /// The record holds fewer values than its lane has parameters
    /// ([`LaneSink::params`]).
    #[inline(always)]
    pub unsafe fn int(&mut self, n: i64) {
        // SAFETY: as the caller promises.
        unsafe { self.fixed(plain_tag::INT, n.to_le_bytes()) }
    }

    /// # Safety
    /// As [`LaneRecord::int`].
    #[inline(always)]
    pub unsafe fn float(&mut self, x: f64) {
        // SAFETY: as the caller promises.
        unsafe { self.fixed(plain_tag::FLOAT, x.to_le_bytes()) }
    }

    /// # Safety
    /// As [`LaneRecord::int`].
    #[inline(always)]
    pub unsafe fn bool(&mut self, b: bool) {
        let len = self.bytes.len();
        // SAFETY: the buffer has room for the values still to come (see
        // the type), one at least as the caller promises: `VALUE` bytes
        // past `len`.
        unsafe {
            *self.bytes.as_mut_ptr().add(len) = if b { plain_tag::TRUE } else { plain_tag::FALSE };
            self.bytes.set_len(len + 1);
        }
    }

    /// A string: its bytes are copied as the buffer's growth allows, then
    /// the room of the values to come is made again.
    #[inline(always)]
    pub fn str(&mut self, s: &str) {
        write_plain(&mut self.bytes, PlainArg::Str(s));
        self.bytes.reserve(self.values_room);
    }

    /// Writes a tag and its 8 bytes.
    ///
    /// # Safety
    /// As [`LaneRecord::int`].
    #[inline(always)]
    unsafe fn fixed(&mut self, tag: u8, payload: [u8; 8]) {
        let piece = fixed_piece(tag, payload);
        let len = self.bytes.len();
        // SAFETY: as in `bool`: `VALUE` bytes past `len` are the buffer's.
        unsafe {
            self.bytes
                .as_mut_ptr()
                .add(len)
                .cast::<[u8; LaneSink::VALUE]>()
                .write_unaligned(piece);
            self.bytes.set_len(len + LaneSink::VALUE);
        }
    }

    /// The record is whole. The send is nested in another dispatch, so
    /// the log's count of dispatches under way is above 0 already: what
    /// its listeners send is nested whatever it counts, and there is no
    /// [`LogHandle::end`] to pair it with.
    #[inline(always)]
    pub fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for LaneRecord<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if !self.finished {
            let start = self.start;
            self.bytes.truncate(start);
        }
    }
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

    /// The log's share of its sink for the sends down the lane of `key`
    /// from `source` with `params` values, if it lends one: pass it to
    /// [`LogHandle::lane_record`].
    pub fn lane_sink(&self, key: Key, source: Source, params: usize) -> Option<LaneSink> {
        self.0.log.lane_sink(key, source, params)
    }

    /// A record for a send down the lane of `lane`, its head written and
    /// room made for its values, when the send is nested in another
    /// dispatch and the sink takes it (open, not full, the clock where it
    /// was); else `None`, and the send is logged with
    /// [`LogHandle::begin_send`].
    #[inline(always)]
    pub fn lane_record<'s>(&'s self, lane: &'s LaneSink) -> Option<LaneRecord<'s>> {
        let sink = &*lane.sink;
        if self.0.depth.get() == 0 || sink.clock.get() != sink.stamped.get() {
            return None;
        }
        let mut bytes = sink.bytes.try_borrow_mut().ok()?;
        let start = bytes.len();
        if start >= sink.room.get() {
            return None;
        }
        let values_room = lane.values_room();
        bytes.reserve(values_room.saturating_add(LaneSink::HEAD));
        // SAFETY: reserved just above: `HEAD` bytes past `start`, then the
        // values' room.
        unsafe {
            bytes
                .as_mut_ptr()
                .add(start)
                .cast::<[u8; LaneSink::HEAD]>()
                .write_unaligned(lane.head);
            bytes.set_len(start + LaneSink::HEAD);
        }
        Some(LaneRecord {
            bytes,
            start,
            values_room,
            finished: false,
        })
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
