//! `table.insert`, `remove`, `move`, `concat` and `sort`, bounded.
//!
//! The first four are `ltablib.c`'s loops, call for call (`lua_geti`,
//! `lua_seti`, metamethods and all) and error for error, with two
//! additions: a range longer than [`MAX_RANGE`] is refused before the loop
//! (`table.move({}, 1, math.maxinteger - 1, 1, {})`, or a `__len` that
//! says so), and every [`TICK`] turns the loop asks whether the time limit
//! or an interrupt stops the call — a loop of C metamethods
//! (`__index = table.concat`) runs no instruction for the hook to stop.
//!
//! `table.sort` is Lua's own: on a long array (or one whose length or
//! elements are computed) it gets a comparison function written in Lua,
//! so that every comparison runs an instruction the hook can stop; a short
//! array sorts in C as before.

use std::ffi::c_int;

use mlua::ffi;

use super::{MAX_RANGE, arg_error, budget, check_stop, message, original, raise};

/// Loop turns between two questions to the budget.
const TICK: i64 = 1024;

/// Longest array `table.sort` sorts with C comparisons only: at most a few
/// hundred thousand comparisons, milliseconds even through C metamethods.
const SORT_IN_C: usize = 1 << 14;

/// Lua helpers of `table.sort`, called with the C less-than: a comparator
/// that calls a given comparator, and the default comparator.
pub const SORT_HELPERS: &str = "local less = ...\n\
    return {\n\
      function(lt) return function(a, b) return lt(a, b) end end,\n\
      function(a, b) return less(a, b) end,\n\
    }\n";

const TAB_R: c_int = 1;
const TAB_W: c_int = 2;
const TAB_L: c_int = 4;
const TAB_RW: c_int = TAB_R | TAB_W;

/// `checktab`: argument `arg` is a table, or has the metamethods `what`
/// needs.
///
/// # Safety
/// Inside a C function.
unsafe fn check_table(l: *mut ffi::lua_State, arg: c_int, what: c_int) {
    // SAFETY: as the caller promises.
    unsafe {
        if ffi::lua_type(l, arg) == ffi::LUA_TTABLE {
            return;
        }
        let mut n = 1;
        let mut field = |key: &std::ffi::CStr| {
            n += 1;
            ffi::lua_pushstring(l, key.as_ptr());
            ffi::lua_rawget(l, -n) != ffi::LUA_TNIL
        };
        if ffi::lua_getmetatable(l, arg) != 0
            && (what & TAB_R == 0 || field(c"__index"))
            && (what & TAB_W == 0 || field(c"__newindex"))
            && (what & TAB_L == 0 || field(c"__len"))
        {
            ffi::lua_pop(l, n);
        } else {
            ffi::luaL_checktype(l, arg, ffi::LUA_TTABLE);
        }
    }
}

/// `aux_getn`: the length of argument `arg` (`#`, metamethod included).
///
/// # Safety
/// Inside a C function.
unsafe fn length(l: *mut ffi::lua_State, arg: c_int, what: c_int) -> ffi::lua_Integer {
    // SAFETY: as the caller promises.
    unsafe {
        check_table(l, arg, what | TAB_L);
        ffi::luaL_len(l, arg)
    }
}

/// Refuses a loop of `count` turns longer than [`MAX_RANGE`].
///
/// # Safety
/// Inside a C function, nothing to drop in its frames.
unsafe fn check_range(l: *mut ffi::lua_State, function: &str, count: i128) {
    if count > i128::from(MAX_RANGE) {
        // SAFETY: as the caller promises.
        unsafe {
            raise(
                l,
                &message!(
                    "{function}: a range of {count} elements is more than a table can hold \
                     (at most {MAX_RANGE})"
                ),
            )
        }
    }
}

/// `table.insert(t, [pos,] value)`.
pub unsafe extern "C-unwind" fn insert(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a function `install` made.
    unsafe {
        let budget = budget(l);
        // The first empty element.
        let e = length(l, 1, TAB_RW).wrapping_add(1);
        let pos = match ffi::lua_gettop(l) {
            2 => e,
            3 => {
                let pos = ffi::luaL_checkinteger(l, 2);
                // `pos` in [1, e].
                if (pos as u64).wrapping_sub(1) >= e as u64 {
                    arg_error(l, 2, &message!("position out of bounds"));
                }
                if e > pos {
                    check_range(l, "table.insert", i128::from(e) - i128::from(pos));
                }
                let mut i = e;
                while i > pos {
                    ffi::lua_geti(l, 1, i - 1);
                    ffi::lua_seti(l, 1, i);
                    if i % TICK == 0 {
                        check_stop(budget, l);
                    }
                    i -= 1;
                }
                pos
            }
            _ => raise(l, &message!("wrong number of arguments to 'insert'")),
        };
        ffi::lua_seti(l, 1, pos);
        0
    }
}

/// `table.remove(t [, pos])`.
pub unsafe extern "C-unwind" fn remove(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a function `install` made.
    unsafe {
        let budget = budget(l);
        let size = length(l, 1, TAB_RW);
        let mut pos = ffi::luaL_optinteger(l, 2, size);
        // A given `pos` is in [1, size + 1].
        if pos != size && (pos as u64).wrapping_sub(1) > size as u64 {
            arg_error(l, 2, &message!("position out of bounds"));
        }
        ffi::lua_geti(l, 1, pos);
        if pos < size {
            check_range(l, "table.remove", i128::from(size) - i128::from(pos));
        }
        while pos < size {
            ffi::lua_geti(l, 1, pos + 1);
            ffi::lua_seti(l, 1, pos);
            pos += 1;
            if pos % TICK == 0 {
                check_stop(budget, l);
            }
        }
        ffi::lua_pushnil(l);
        ffi::lua_seti(l, 1, pos);
        1
    }
}

/// `table.move(a1, f, e, t [, a2])`.
pub unsafe extern "C-unwind" fn move_(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a function `install` made.
    unsafe {
        let budget = budget(l);
        let f = ffi::luaL_checkinteger(l, 2);
        let e = ffi::luaL_checkinteger(l, 3);
        let t = ffi::luaL_checkinteger(l, 4);
        let tt = if ffi::lua_isnoneornil(l, 5) == 0 {
            5
        } else {
            1
        };
        check_table(l, 1, TAB_R);
        check_table(l, tt, TAB_W);
        if e >= f {
            if !(f > 0 || e < ffi::lua_Integer::MAX + f) {
                arg_error(l, 3, &message!("too many elements to move"));
            }
            let n = e - f + 1;
            if t > ffi::lua_Integer::MAX - n + 1 {
                arg_error(l, 4, &message!("destination wrap around"));
            }
            check_range(l, "table.move", i128::from(n));
            let forward =
                t > e || t <= f || (tt != 1 && ffi::lua_compare(l, 1, tt, ffi::LUA_OPEQ) == 0);
            for k in 0..n {
                let i = if forward { k } else { n - 1 - k };
                ffi::lua_geti(l, 1, f + i);
                ffi::lua_seti(l, tt, t + i);
                if k % TICK == TICK - 1 {
                    check_stop(budget, l);
                }
            }
        }
        ffi::lua_pushvalue(l, tt);
        1
    }
}

/// `table.concat(list [, sep [, i [, j]]])`.
pub unsafe extern "C-unwind" fn concat(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a function `install` made.
    unsafe {
        let budget = budget(l);
        let last = length(l, 1, TAB_R);
        let mut lsep = 0;
        let sep = ffi::luaL_optlstring(l, 2, c"".as_ptr(), &mut lsep);
        let mut i = ffi::luaL_optinteger(l, 3, 1);
        let last = ffi::luaL_optinteger(l, 4, last);
        if i <= last {
            check_range(l, "table.concat", i128::from(last) - i128::from(i) + 1);
        }
        let mut b: ffi::luaL_Buffer = std::mem::zeroed();
        ffi::luaL_buffinit(l, &mut b);
        while i < last {
            add_field(l, &mut b, i);
            ffi::luaL_addlstring(&mut b, sep, lsep);
            i += 1;
            if i % TICK == 0 {
                check_stop(budget, l);
            }
        }
        if i == last {
            add_field(l, &mut b, i);
        }
        ffi::luaL_pushresult(&mut b);
        1
    }
}

/// Adds element `i` of the list to the buffer; a string or number only.
///
/// # Safety
/// Inside `concat`, the buffer's box on top of the stack.
unsafe fn add_field(l: *mut ffi::lua_State, b: &mut ffi::luaL_Buffer, i: ffi::lua_Integer) {
    // SAFETY: as the caller promises.
    unsafe {
        ffi::lua_geti(l, 1, i);
        if ffi::lua_isstring(l, -1) == 0 {
            let kind = std::ffi::CStr::from_ptr(ffi::luaL_typename(l, -1));
            raise(
                l,
                &message!(
                    "invalid value ({}) at index {i} in table for 'concat'",
                    kind.to_str().unwrap_or("?")
                ),
            );
        }
        ffi::luaL_addvalue(b);
    }
}

/// `table.sort(list [, comp])`: the original (upvalue 2), given a Lua
/// comparator (made with upvalues 3 and 4) when the array is long or its
/// length computed.
pub unsafe extern "C-unwind" fn sort(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as the function `install` made.
    unsafe {
        let long = match ffi::lua_type(l, 1) {
            ffi::LUA_TTABLE => {
                if ffi::luaL_getmetafield(l, 1, c"__len".as_ptr()) != ffi::LUA_TNIL {
                    ffi::lua_pop(l, 1);
                    true
                } else {
                    ffi::lua_rawlen(l, 1) > SORT_IN_C
                }
            }
            // Not a table: the original refuses it, or it has metamethods.
            _ => true,
        };
        if long {
            match ffi::lua_type(l, 2) {
                ffi::LUA_TNONE | ffi::LUA_TNIL => {
                    if ffi::lua_gettop(l) < 2 {
                        ffi::lua_settop(l, 2);
                    }
                    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(4));
                    ffi::lua_replace(l, 2);
                }
                ffi::LUA_TFUNCTION => {
                    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(3));
                    ffi::lua_pushvalue(l, 2);
                    ffi::lua_call(l, 1, 1);
                    ffi::lua_replace(l, 2);
                }
                // The original refuses anything else.
                _ => {}
            }
        }
        original(l)(l)
    }
}

/// `a < b`, metamethods included, for the default Lua comparator (an
/// error names no sandbox line, as in the original).
pub unsafe extern "C-unwind" fn less_than(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua with two arguments.
    unsafe {
        let less = ffi::lua_compare(l, 1, 2, ffi::LUA_OPLT);
        ffi::lua_pushboolean(l, less);
        1
    }
}
