//! The lane's part of a recording: each send it takes is logged through
//! the hub's dispatch log ([`gantry_host::dispatch_log`]), as the hub logs
//! the sends it delivers, so a recording keeps the lane on.
//!
//! A send nested in another dispatch (the common case: a listener's sends)
//! writes its record itself into the share of the log's buffer the log
//! lent the lane when it was taken ([`gantry_host::LaneSink`]): the head
//! the log made once, then each argument as it is read from the Lua stack
//! while it is checked against the lane's kinds
//! (`dispatch::arguments_fit`). No call into the log, nothing converted to
//! a `Value`, nothing allocated but the buffer's growth.
//!
//! The others (an outermost send, a full or closed buffer, a tick that
//! moved, a log that lends no sink) go to the log: their arguments are
//! borrowed from the stack into an array on the send's frame.

use std::panic::AssertUnwindSafe;

use gantry_host::{Key, LaneRecord, LaneSink, LogHandle, PlainArg, Source};

/// What a lane logs its sends with: the hub's log, the log's share of its
/// buffer for this lane, and the key and source every send down the lane
/// has.
pub(crate) struct LaneLog {
    handle: LogHandle,
    sink: Option<LaneSink>,
    key: Key,
    source: Source,
}

impl LaneLog {
    /// Asks the log for its share of its buffer for the lane of `key` from
    /// `source` with `params` parameters (a share made for another count
    /// is not used: a record's values are written into the room made for
    /// them, [`LaneRecord`]).
    pub fn new(handle: LogHandle, key: Key, source: Source, params: usize) -> Self {
        let sink = handle
            .lane_sink(key, source, params)
            .filter(|sink| sink.params() == params);
        LaneLog {
            handle,
            sink,
            key,
            source,
        }
    }

    /// The record of a send nested in another dispatch, written straight
    /// into the log's buffer, when the log lent the lane a sink that takes
    /// it now (no [`LaneLog::end`] to pair it with); else `None`, and the
    /// send goes to [`LaneLog::begin`].
    #[inline(always)]
    pub fn record(&self) -> Option<LaneRecord<'_>> {
        self.handle.lane_record(self.sink.as_ref()?)
    }

    /// Logs a send down the lane with `args` through the log. A log that
    /// panics is not let unwind through Lua's frames: the send is then
    /// delivered unlogged. Pair it with [`LaneLog::end`] once its
    /// listeners have run.
    #[inline(never)]
    pub fn begin(&self, args: &[PlainArg<'_>]) {
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.handle.begin_send(self.key, self.source, args)
        }));
    }

    /// The send's listeners have run.
    #[inline(always)]
    pub fn end(&self) {
        self.handle.end();
    }
}
