//! The lane's part of a recording: each send it takes is logged through
//! the hub's dispatch log ([`gantry_host::dispatch_log`]), as the hub logs
//! the sends it delivers, so a recording keeps the lane on.
//!
//! The arguments go to the log as they are on the Lua stack, already
//! checked against the lane's kinds (`dispatch::arguments_fit`): integers,
//! floats, booleans and the bytes of UTF-8 strings, borrowed, in an array
//! on this frame. Nothing is converted to a `Value` and nothing allocated.

use std::ffi::c_int;
use std::mem::MaybeUninit;
use std::panic::AssertUnwindSafe;

use gantry_host::{Key, LogHandle, PlainArg, Source};
use mlua::ffi::{self, lua_State};

use super::MAX_PARAMS;

/// What a lane logs its sends with: the hub's log, and the key and source
/// every send down the lane has.
pub(crate) struct LaneLog {
    pub handle: LogHandle,
    pub key: Key,
    pub source: Source,
}

impl LaneLog {
    /// The send's listeners have run.
    #[inline]
    pub fn end(&self) {
        self.handle.end();
    }
}

/// Logs the send whose arguments, of the lane's `kinds`, are on the stack
/// from `first`. A log that panics is not let unwind through Lua's frames:
/// the send is then delivered unlogged.
///
/// # Safety
/// Inside a send function, after `arguments_fit` passed for these
/// arguments (so each is of its kind, a float parameter's integer made a
/// float, a string valid UTF-8); `kinds` has at most [`MAX_PARAMS`] kinds.
pub(super) unsafe fn begin(l: *mut lua_State, log: &LaneLog, kinds: &[u8], first: c_int) {
    let n = kinds.len().min(MAX_PARAMS);
    // Only the first `n` are written and read: no cost for the others.
    let mut args = [const { MaybeUninit::<PlainArg<'_>>::uninit() }; MAX_PARAMS];
    for (i, kind) in kinds[..n].iter().enumerate() {
        let at = first + i as c_int;
        // SAFETY: the arguments are on the stack, of their kinds (see
        // above); reading them raises nothing. A string's bytes stay valid
        // while it is on the stack, which outlives the log call.
        let arg = unsafe {
            match *kind {
                b'i' => PlainArg::Int(ffi::lua_tointegerx(l, at, std::ptr::null_mut())),
                b'f' => PlainArg::Float(ffi::lua_tonumberx(l, at, std::ptr::null_mut())),
                b'b' => PlainArg::Bool(ffi::lua_toboolean(l, at) != 0),
                _ => {
                    let mut len = 0usize;
                    let p = ffi::lua_tolstring(l, at, &mut len);
                    let bytes = std::slice::from_raw_parts(p.cast::<u8>(), len);
                    PlainArg::Str(std::str::from_utf8_unchecked(bytes))
                }
            }
        };
        args[i].write(arg);
    }
    // SAFETY: the first `n` were written just above.
    let args = unsafe { std::slice::from_raw_parts(args.as_ptr().cast::<PlainArg<'_>>(), n) };
    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
        log.handle.begin_send(log.key, log.source, args)
    }));
}
