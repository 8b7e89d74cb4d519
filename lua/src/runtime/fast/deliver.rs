//! Calling a lane's listeners: what a fast send does once its arguments
//! fit the lane (`dispatch::send`).

use std::cell::Cell;
use std::ffi::{c_int, c_void};

use mlua::ffi::{self, lua_State};

use super::dispatch::{Counters, LaneData, MAX_DEPTH, lane, site};
use super::stack::{self, Closure};

/// Most listeners a lane's runner calls; a lane of more calls them
/// through [`run_listeners`].
pub(crate) const MAX_RUN: usize = 64;

/// Whether a lane of `listeners` listeners has a runner: one listener is
/// called on its own, more than [`MAX_RUN`] through [`run_listeners`].
#[inline(always)]
pub(crate) fn has_runner(listeners: usize) -> bool {
    (2..=MAX_RUN).contains(&listeners)
}

/// The chunk name of the runners: a traceback leaves out a `gantry-`
/// chunk's frames (`traceback`), and the message handler finds a runner's
/// frame by it.
pub(crate) const RUNNER_CHUNK: &str = "=gantry-lane";

/// The first line of a runner that calls a listener: line `FIRST_LINE + i`
/// calls listener `i` (from 0).
pub(crate) const FIRST_LINE: i64 = 2;

/// The Lua source of the runner of a lane of `listeners` listeners of
/// `params` parameters: a function of the lane and the arguments that
/// calls each listener in turn, one per line.
///
/// Why Lua: a listener called from Lua is a call inside the running
/// interpreter, where one called from C (`lua_call`) enters it afresh and
/// costs its arguments' pushes and a table read through the API, about
/// twice what the call itself costs. Why nothing more: each Lua
/// instruction costs some thirty machine instructions, so a runner is
/// the listener read, the arguments' moves and the call, with no loop and
/// no check (a hand-written bus adds its loop's step and a vararg copy).
/// One runner serves every lane of its shape. It reads the functions
/// from the lane table, so the lane's weak values still let a removed
/// listener's function go; a listener removed during the send is replaced
/// in the lanes under way by a function that does nothing
/// (`FastLane::epoch_moved`), so the runner never calls it.
pub(crate) fn runner_source(listeners: usize, params: usize) -> String {
    use std::fmt::Write;
    let args: Vec<String> = (1..=params).map(|i| format!("a{i}")).collect();
    let args = args.join(", ");
    let comma = if params == 0 { "" } else { ", " };
    let mut source = format!("return function(L{comma}{args})\n");
    for i in 1..=listeners {
        let _ = writeln!(source, "L[{i}]({args})");
    }
    source.push_str("end\n");
    source
}

/// Calls each listener of the lane at `lane` (the top of the stack) with
/// the `count` arguments from `first`; a failure is reported and the rest
/// still run.
///
/// One listener runs in its own protected call. Several run in one
/// protected call of the lane's runner (see [`runner_source`]), or of
/// [`run_listeners`] for a lane too long for one, which call them
/// unprotected, one after the other: a protected call costs more than the
/// call it protects, and the hub's isolation asks only that a failure be
/// reported and the rest run. So after a failure (found in the runner by
/// the message handler, which notes the runner's line in
/// `Counters::failed_at`), [`run_listeners`] goes on from the listener
/// after the one that failed.
///
/// Leaves what it pushed on the stack (the send returns no results, so
/// Lua drops it): a `lua_settop` costs as much as a push.
#[inline(always)]
pub(super) unsafe fn deliver(
    l: *mut lua_State,
    closure: &Closure,
    counters: &Counters,
    lane: c_int,
    data: &LaneData,
    first: c_int,
    count: c_int,
) {
    // SAFETY: see `send`. The stack is not reallocated between here and
    // the protected call, so `base` holds until then; the pushes are
    // within the room `send` made.
    unsafe {
        let base = stack::base(l, lane);
        let arguments = base.add(first as usize);
        stack::push(l, closure.upvalue(4));
        let msgh = lane + 1;
        let depth = counters.depth.get() + 1;
        counters.depth.set(depth);
        let at_limit = depth >= MAX_DEPTH;
        if at_limit {
            counters.blocks.set(counters.blocks.get() + 1);
        }
        if data.count == 1 {
            if ffi::lua_rawgeti(l, lane, lane::FIRST_FUNCTION) == ffi::LUA_TFUNCTION {
                for a in 0..count as usize {
                    stack::push(l, arguments.add(a));
                }
                if ffi::lua_pcall(l, count, 0, msgh) != ffi::LUA_OK {
                    report(l, lane, 0);
                }
            }
        } else {
            let mut next = 0;
            if has_runner(data.count as usize) {
                // The lane's runner, kept beside it by `take_lane`.
                stack::push(l, closure.upvalue(7));
                // The lanes under way, for `FastLane::epoch_moved`.
                counters.active[depth as usize].set(data);
                stack::push(l, base.add(lane as usize));
                for a in 0..count as usize {
                    stack::push(l, arguments.add(a));
                }
                counters.failed_at.set(-1);
                counters.runners.set(counters.runners.get() + 1);
                let status = ffi::lua_pcall(l, count + 1, 0, msgh);
                counters.runners.set(counters.runners.get() - 1);
                if status == ffi::LUA_OK {
                    next = data.count;
                } else {
                    let failed = counters.failed_at.get();
                    report(l, lane, failed);
                    // Not known where it stopped (an error that reaches
                    // no message handler: out of memory): the others may
                    // have run, so none runs again.
                    next = if failed < 0 { data.count } else { failed + 1 };
                }
            }
            if next < data.count {
                ffi::lua_settop(l, msgh);
                run_from(l, counters, lane, data, first, count, next);
            }
        }
        if at_limit {
            counters.blocks.set(counters.blocks.get() - 1);
        }
        counters.depth.set(depth - 1);
        // A message handler of a send nested in this one may have noted a
        // runner: not this send's.
        counters.failed_at.set(-1);
    }
}

/// Calls the listeners of the lane at `lane` from `next` (from 0) on
/// through [`run_listeners`], each failure reported, the stack left at
/// `lane + 1` (the message handler).
unsafe fn run_from(
    l: *mut lua_State,
    counters: &Counters,
    lane: c_int,
    data: &LaneData,
    first: c_int,
    count: c_int,
    next: i64,
) {
    // SAFETY: see `send`.
    unsafe {
        let msgh = lane + 1;
        let progress = Progress {
            next: Cell::new(next),
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
