//! The lane's part of a recording: each send it takes is logged through
//! the hub's dispatch log ([`gantry_host::dispatch_log`]), as the hub logs
//! the sends it delivers, so a recording keeps the lane on.
//!
//! The arguments go to the log as they are on the Lua stack, read while
//! they are checked against the lane's kinds (`dispatch::arguments_fit`):
//! integers, floats, booleans and the bytes of UTF-8 strings, borrowed, in
//! an array on the send's frame. Nothing is converted to a `Value` and
//! nothing allocated. The log's prepared way for the lane
//! ([`gantry_host::PreparedLane`]), asked for once when the lane is taken,
//! takes the sends nested in a dispatch: a recorder then appends the
//! arguments to a record head it made once.

use std::panic::AssertUnwindSafe;

use gantry_host::{Key, LogHandle, PlainArg, PreparedLane, Source};

/// What a lane logs its sends with: the hub's log, the log's prepared way
/// for this lane, and the key and source every send down the lane has.
pub(crate) struct LaneLog {
    handle: LogHandle,
    prepared: Option<Box<dyn PreparedLane>>,
    key: Key,
    source: Source,
}

impl LaneLog {
    /// Asks the log for its prepared way for the lane of `key` from
    /// `source` with `params` parameters.
    pub fn new(handle: LogHandle, key: Key, source: Source, params: usize) -> Self {
        let prepared = handle.prepare_lane(key, source, params);
        LaneLog {
            handle,
            prepared,
            key,
            source,
        }
    }

    /// Logs a send down the lane with `args`. A log that panics is not let
    /// unwind through Lua's frames: the send is then delivered unlogged.
    /// Pair it with [`LaneLog::end`] once its listeners have run.
    #[inline(always)]
    pub fn begin(&self, args: &[PlainArg<'_>]) {
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.handle
                .begin_lane_send(self.prepared.as_deref(), self.key, self.source, args)
        }));
    }

    /// The send's listeners have run.
    #[inline]
    pub fn end(&self) {
        self.handle.end();
    }
}
