//! `xpcall`, `coroutine.resume` and `coroutine.close`, wrapped so that the
//! budget's stops stay final and the watchdog knows which coroutine runs.
//!
//! Each calls the original (upvalue 2) on the same stack, so arguments,
//! results, errors and yields across it are the original's.

use std::ffi::c_int;

use mlua::ffi;

use super::{budget, original};
use crate::runtime::budget::stopped_by_hook;

/// `xpcall(f, msgh, ...)`: the message handler is not called for a stop of
/// the budget (it would run with Lua's hooks off: see `budget`), which
/// goes through unchanged.
pub unsafe extern "C-unwind" fn xpcall(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as the function `install` made.
    unsafe {
        ffi::luaL_checktype(l, 2, ffi::LUA_TFUNCTION);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_pushvalue(l, 2);
        ffi::lua_pushcclosure(l, message_handler, 2);
        ffi::lua_replace(l, 2);
        original(l)(l)
    }
}

/// The script's message handler (upvalue 2), unless the error is a stop.
unsafe extern "C-unwind" fn message_handler(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a message handler, with the error object.
    unsafe {
        if budget(l).stop_due() {
            ffi::lua_settop(l, 1);
            return 1;
        }
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(2));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, ffi::lua_gettop(l) - 1, 1);
        1
    }
}

/// `coroutine.resume(co, ...)`: the budget notes the coroutine as running
/// while it runs.
pub unsafe extern "C-unwind" fn resume(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as the function `install` made.
    unsafe {
        if ffi::lua_tothread(l, 1).is_null() {
            // The original refuses it.
            return original(l)(l);
        }
        on_coroutine(l)
    }
}

/// `coroutine.close(co)`: a coroutine the budget's hook stopped is dead with
/// Lua's hooks off, so its pending `__close` handlers are not run (they
/// would run out of the budget's reach); it closes as a dead coroutine
/// with an error does, `false` and an error.
pub unsafe extern "C-unwind" fn close(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as the function `install` made.
    unsafe {
        let co = ffi::lua_tothread(l, 1);
        if co.is_null() || co == l {
            return original(l)(l);
        }
        if stopped_by_hook(co) {
            ffi::lua_pushboolean(l, 0);
            ffi::lua_pushstring(
                l,
                c"the coroutine was stopped by a sandbox limit; its __close handlers do not run"
                    .as_ptr(),
            );
            return 2;
        }
        on_coroutine(l)
    }
}

/// Calls the original of `resume` or `close` with the coroutine (argument
/// 1) noted as the running thread while it runs, then this thread again.
///
/// # Safety
/// Called from `resume` or `close`, with a coroutine at index 1.
unsafe fn on_coroutine(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        let budget = budget(l);
        budget.track(l, 1);
        let results = original(l)(l);
        // Back to this thread (the results stay on top).
        ffi::lua_pushthread(l);
        budget.track(l, -1);
        ffi::lua_pop(l, 1);
        results
    }
}
