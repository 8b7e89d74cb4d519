//! Library functions a script could make run long inside one C call, where
//! no hook can stop it, replaced by bounded ones with the same behaviour.
//!
//! A count hook only runs between instructions; one C call runs as long as
//! its loop does. So every library function whose loop a script controls
//! without running an instruction per turn is replaced here:
//! - `string.find`, `match`, `gmatch`, `gsub` (`strings`): Lua's pattern
//!   matcher ported with a step limit (`pattern`), and a linear-time plain
//!   search;
//! - `table.insert`, `remove`, `move`, `concat` (`tables`): the same loops,
//!   refusing a range longer than a table can hold ([`MAX_RANGE`]) and
//!   stopping when the time limit or an interrupt says so; `table.sort` of a
//!   long array compares through a Lua function, so the hook runs while it
//!   sorts;
//! - `xpcall`, `coroutine.resume` and `coroutine.close` (`calls`): the
//!   budget's stops stay final, and the watchdog knows which coroutine runs.
//!
//! `string.rep` is bounded in `sandbox.lua` (its result size). The other C
//! functions a script reaches are linear in data that lives in the Lua
//! state (bounded by the memory limit) or in their arguments (bounded by
//! Lua's stack).
//!
//! These are plain C functions on mlua's raw API, so a call costs what the
//! original costs. They raise Lua errors (a `longjmp`), so the Rust frames
//! they unwind hold nothing that needs dropping: messages are formatted
//! into a fixed buffer ([`Message`]) and pushed before raising.

mod calls;
mod pattern;
mod strings;
mod tables;

use std::ffi::{CStr, c_int, c_void};
use std::sync::Arc;

use mlua::{Lua, Table, ffi};

use super::budget::Budget;

/// The longest range a table function walks: the most elements a Lua
/// table's array can hold (2^31). A longer range can only be of missing or
/// computed elements, and walking it could take hours.
pub const MAX_RANGE: i64 = 1 << 31;

/// Keeps the budget alive as long as the Lua state, whose bounded
/// functions hold a pointer to it.
struct BudgetKeeper(#[allow(dead_code)] Arc<Budget>);

/// Puts the bounded functions in place of the originals in the state's
/// own library tables (`string.find`, ..., `table.sort`,
/// `coroutine.resume`, `coroutine.close`, `xpcall`), before the sandbox
/// copies them into each script's environment. In the libraries themselves,
/// not only in the sandbox's copies: nothing in the state can reach an
/// unbounded one, and Lua names them in errors as it names the originals
/// (it looks functions up in `package.loaded`). Called once per state.
pub(crate) fn install(lua: &Lua, budget: &Arc<Budget>) -> mlua::Result<()> {
    lua.set_named_registry_value(
        "gantry.budget",
        lua.create_any_userdata(BudgetKeeper(budget.clone()))?,
    )?;
    // SAFETY: `less_than` is a Lua C function.
    let less = unsafe { lua.create_c_function(tables::less_than) }?;
    let sort_helpers: Table = lua
        .load(tables::SORT_HELPERS)
        .set_name("=gantry-sort")
        .call(less)?;
    let ptr = Arc::as_ptr(budget) as *mut c_void;
    // SAFETY: the closure only replaces fields of the standard library
    // tables and leaves the stack as it found it; the budget outlives
    // every function that points to it (the registry keeps it as long as
    // the state).
    unsafe {
        lua.exec_raw::<()>(sort_helpers, |l| {
            // Sets `lib.name` (a global when `lib` is empty) to `f`, with
            // the budget as upvalue 1, the original as upvalue 2 when
            // `wraps`, and `extra` sort helpers after.
            let set =
                |lib: &CStr, name: &CStr, f: ffi::lua_CFunction, wraps: bool, extra: c_int| {
                    if lib.is_empty() {
                        ffi::lua_pushglobaltable(l);
                    } else {
                        ffi::lua_getglobal(l, lib.as_ptr());
                    }
                    let table = ffi::lua_gettop(l);
                    ffi::lua_pushlightuserdata(l, ptr);
                    let mut upvalues = 1;
                    if wraps {
                        ffi::lua_getfield(l, table, name.as_ptr());
                        upvalues += 1;
                    }
                    for i in 0..extra {
                        // The sort helpers: fields 1.. of the argument table.
                        ffi::lua_rawgeti(l, 1, ffi::lua_Integer::from(i + 1));
                        upvalues += 1;
                    }
                    ffi::lua_pushcclosure(l, f, upvalues);
                    ffi::lua_setfield(l, table, name.as_ptr());
                    ffi::lua_pop(l, 1);
                };
            set(c"string", c"find", strings::find, false, 0);
            set(c"string", c"match", strings::match_, false, 0);
            set(c"string", c"gmatch", strings::gmatch, false, 0);
            set(c"string", c"gsub", strings::gsub, false, 0);
            set(c"table", c"insert", tables::insert, false, 0);
            set(c"table", c"remove", tables::remove, false, 0);
            set(c"table", c"move", tables::move_, false, 0);
            set(c"table", c"concat", tables::concat, false, 0);
            set(c"table", c"sort", tables::sort, true, 2);
            set(c"coroutine", c"resume", calls::resume, true, 0);
            set(c"coroutine", c"close", calls::close, true, 0);
            set(c"", c"xpcall", calls::xpcall, true, 0);
            ffi::lua_settop(l, 0);
        })
    }
}

/// The budget a bounded function points to (its upvalue 1).
///
/// # Safety
/// Called from a function [`install`] made.
#[inline]
unsafe fn budget<'a>(l: *mut ffi::lua_State) -> &'a Budget {
    // SAFETY: upvalue 1 is the budget's pointer, kept alive by the
    // registry as long as the state.
    unsafe { &*(ffi::lua_touserdata(l, ffi::lua_upvalueindex(1)) as *const Budget) }
}

/// The original C function a wrapper calls (its upvalue 2).
///
/// # Safety
/// Called from a wrapper [`install`] made.
#[inline]
unsafe fn original(l: *mut ffi::lua_State) -> ffi::lua_CFunction {
    // SAFETY: upvalue 2 is a standard library C function.
    unsafe {
        ffi::lua_tocfunction(l, ffi::lua_upvalueindex(2))
            .expect("a standard library C function as upvalue 2")
    }
}

/// Raises the stop that is due (see [`Budget::stop_due`]) if there is one.
///
/// # Safety
/// As [`super::budget::raise_stop`].
#[inline]
unsafe fn check_stop(budget: &Budget, l: *mut ffi::lua_State) {
    if budget.stop_due() {
        // SAFETY: as the caller promises.
        unsafe { super::budget::raise_stop(budget, l) }
    }
}

/// A message formatted without the heap, so that raising it leaves nothing
/// to drop in the frames the error unwinds. Longer messages are cut.
pub(crate) struct Message {
    buf: [u8; 512],
    len: usize,
}

impl Message {
    pub fn new() -> Self {
        Self {
            buf: [0; 512],
            len: 0,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for Message {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// `format_args!` into a [`Message`].
macro_rules! message {
    ($($arg:tt)*) => {{
        let mut m = $crate::runtime::bounded::Message::new();
        let _ = std::fmt::Write::write_fmt(&mut m, format_args!($($arg)*));
        m
    }};
}
pub(crate) use message;

/// Raises `message` as `luaL_error` does: prefixed with the calling
/// script's `file:line:`.
///
/// # Safety
/// Inside a C function called from Lua, with nothing to drop in the frames
/// the error unwinds.
unsafe fn raise(l: *mut ffi::lua_State, message: &Message) -> ! {
    // SAFETY: as the caller promises.
    unsafe {
        ffi::luaL_where(l, 1);
        let bytes = message.bytes();
        ffi::lua_pushlstring(l, bytes.as_ptr().cast(), bytes.len());
        ffi::lua_concat(l, 2);
        ffi::lua_error(l)
    }
}

/// Raises "bad argument #`arg` to '…' (`extra`)", as `luaL_argerror`.
///
/// # Safety
/// As [`raise`].
unsafe fn arg_error(l: *mut ffi::lua_State, arg: c_int, extra: &Message) -> ! {
    // SAFETY: as the caller promises; `extra` is copied by Lua first.
    unsafe {
        let bytes = extra.bytes();
        ffi::lua_pushlstring(l, bytes.as_ptr().cast(), bytes.len());
        let text = ffi::lua_tostring(l, -1);
        ffi::luaL_argerror(l, arg, text);
        unreachable!("luaL_argerror raises")
    }
}

/// A string argument's bytes (`luaL_checklstring`).
///
/// # Safety
/// Inside a C function; the bytes live as long as the argument stays on
/// the stack.
unsafe fn check_bytes<'a>(l: *mut ffi::lua_State, arg: c_int) -> &'a [u8] {
    // SAFETY: as the caller promises.
    unsafe {
        let mut len = 0;
        let ptr = ffi::luaL_checklstring(l, arg, &mut len);
        std::slice::from_raw_parts(ptr.cast(), len)
    }
}
