//! Calling a lane's listeners: what a fast send does once its arguments
//! fit the lane (`dispatch::send`).

use std::cell::Cell;
use std::ffi::{c_int, c_void};

use mlua::ffi::{self, lua_State};

use super::dispatch::{Counters, LaneData, MAX_DEPTH, lane, site};

/// Calls each listener of the lane at `lane` (the top of the stack) with
/// the `count` arguments from `first`; a failure is reported and the rest
/// still run.
///
/// One listener runs in its own protected call. Several run in one
/// protected call of [`run_listeners`], which calls them unprotected, one
/// after the other: a protected call costs more than the call it protects,
/// and DESIGN's isolation asks only that a failure be reported and the
/// rest run, so after a failure the next protected call starts at the
/// listener after the failed one.
pub(super) unsafe fn deliver(
    l: *mut lua_State,
    counters: &Counters,
    lane: c_int,
    data: &LaneData,
    first: c_int,
    count: c_int,
) {
    // SAFETY: see `send`.
    unsafe {
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(4));
        let msgh = lane + 1;
        let depth = counters.depth.get() + 1;
        counters.depth.set(depth);
        let at_limit = depth >= MAX_DEPTH;
        if at_limit {
            counters.blocks.set(counters.blocks.get() + 1);
        }
        if data.count == 1 {
            if ffi::lua_rawgeti(l, lane, lane::FIRST_FUNCTION) == ffi::LUA_TFUNCTION {
                for a in 0..count {
                    ffi::lua_pushvalue(l, first + a);
                }
                if ffi::lua_pcall(l, count, 0, msgh) != ffi::LUA_OK {
                    report(l, lane, 0);
                }
            }
        } else {
            let progress = Progress {
                next: Cell::new(0),
                data,
                counters,
            };
            while progress.next.get() < data.count {
                ffi::lua_pushvalue(l, ffi::lua_upvalueindex(5));
                ffi::lua_pushvalue(l, lane);
                ffi::lua_pushlightuserdata(l, &progress as *const Progress as *mut c_void);
                for a in 0..count {
                    ffi::lua_pushvalue(l, first + a);
                }
                // A call that returns leaves the stack at `msgh`.
                if ffi::lua_pcall(l, count + 2, 0, msgh) != ffi::LUA_OK {
                    report(l, lane, progress.next.get() - 1);
                    ffi::lua_settop(l, msgh);
                }
            }
        }
        if at_limit {
            counters.blocks.set(counters.blocks.get() - 1);
        }
        counters.depth.set(depth - 1);
        // The caller returns no results: what is left on the stack goes.
    }
}

/// Where a run of listeners in one protected call has got to: after a
/// failure, `next` is one past the listener that failed.
struct Progress<'a> {
    next: Cell<i64>,
    data: &'a LaneData,
    counters: &'a Counters,
}

/// `run_listeners(lane, progress, ...)`: calls the lane's listeners from
/// `progress.next` on with the arguments, unprotected (the caller's
/// protected call catches a failure; `progress` says whose).
///
/// # Safety
/// Called by Lua as a C closure made by `send_closure` (upvalue 1: the
/// site table), only by `deliver`, with a `Progress` it owns.
pub(super) unsafe extern "C-unwind" fn run_listeners(l: *mut lua_State) -> c_int {
    // SAFETY: `deliver` passes its lane and a `Progress` on its own frame,
    // which outlives this protected call. An error unwinds this frame,
    // which owns nothing. Pushes: a function and its arguments (at most
    // 17 with `MAX_PARAMS`) within LUA_MINSTACK.
    unsafe {
        let top = ffi::lua_gettop(l);
        let progress = &*ffi::lua_touserdata(l, 2).cast::<Progress>();
        let (data, counters) = (progress.data, progress.counters);
        let count = top - 2;
        while progress.next.get() < data.count {
            let i = progress.next.get();
            progress.next.set(i + 1);
            if counters.epoch.get() != data.epoch && !still_listening(l, 1, i) {
                continue;
            }
            if ffi::lua_rawgeti(l, 1, lane::FIRST_FUNCTION + i) != ffi::LUA_TFUNCTION {
                ffi::lua_settop(l, top);
                continue;
            }
            for a in 0..count {
                ffi::lua_pushvalue(l, 3 + a);
            }
            ffi::lua_call(l, count, 0);
        }
        0
    }
}

/// Reports listener `i` (from 0) of the lane at `lane` as failed with the
/// error on top of the stack.
unsafe fn report(l: *mut lua_State, lane: c_int, i: i64) {
    // SAFETY: see `send`.
    unsafe {
        let error = ffi::lua_gettop(l);
        ffi::lua_rawgeti(l, ffi::lua_upvalueindex(1), site::FAIL);
        ffi::lua_pushvalue(l, lane);
        ffi::lua_pushinteger(l, i);
        ffi::lua_pushvalue(l, error);
        // A report that fails (out of memory) is dropped.
        ffi::lua_pcall(l, 3, 0, 0);
    }
}

/// Asks the hub whether listener `i` (from 0) is still registered (the
/// epoch moved during the send: it may have been removed).
unsafe fn still_listening(l: *mut lua_State, lane: c_int, i: i64) -> bool {
    // SAFETY: see `send`.
    unsafe {
        let top = ffi::lua_gettop(l);
        ffi::lua_rawgeti(l, ffi::lua_upvalueindex(1), site::ALIVE);
        ffi::lua_pushvalue(l, lane);
        ffi::lua_pushinteger(l, i);
        let alive = ffi::lua_pcall(l, 2, 1, 0) == ffi::LUA_OK && ffi::lua_toboolean(l, -1) != 0;
        ffi::lua_settop(l, top);
        alive
    }
}
