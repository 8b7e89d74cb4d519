//! A send's arguments read straight from the Lua stack, and its
//! upvalues and pushes made there too.
//!
//! Through the C API, each argument is a call or two into the library
//! (`lua_isinteger`, then `lua_tointegerx` for its value), each finding
//! the slot from its index again: with a recording, whose lane reads every
//! argument's value, those calls were a third of what it added to a send.
//! A C function's arguments are consecutive slots just below the state's
//! `top`, each a `TValue`: 8 bytes of value, then a tag byte saying its
//! type and variant. Read there, an argument's kind and value are two
//! loads. The same holds of a push (`lua_pushvalue`: a call that finds
//! its slot from an index, then copies): a copy of the value and its tag
//! to the first free slot and the `top` moved up is three stores. And of
//! the send's upvalues, which are `TValue`s in the running C closure,
//! the object the slot below the first argument points to.
//!
//! That layout is Lua 5.4's (the same in every 5.4 release, the version
//! mlua is built with here), not part of its API: [`layout_holds`] checks
//! it against the API on a live state once per process before any of it
//! is read, and a runtime where it does not hold takes no lane (every
//! send goes the hub's way).

use std::ffi::c_int;
use std::sync::atomic::{AtomicU8, Ordering};

use mlua::ffi::{self, lua_State};

/// The tags (`tt_`) of the values a lane takes: `makevariant(type,
/// variant)`, with the collectable bit (`1 << 6`) for strings.
pub(super) mod tag {
    pub const FALSE: u8 = 0x01;
    pub const TRUE: u8 = 0x11;
    pub const INT: u8 = 0x03;
    pub const FLOAT: u8 = 0x13;
    pub const SHORT_STR: u8 = 0x44;
    pub const LONG_STR: u8 = 0x54;
    /// A C closure (`LUA_VCCL`, collectable).
    pub const C_CLOSURE: u8 = 0x66;
}

/// Where `top` (the first free slot) is in a `lua_State`: after the
/// common header (a pointer, two bytes), two more bytes and a `u16`.
const TOP_OFFSET: usize = 2 * size_of::<*const u8>();

/// One stack slot (`StackValue`): a `TValue` (an 8-byte value, a tag
/// byte), padded.
#[repr(C)]
pub(super) struct Slot {
    value: [u8; 8],
    tag: u8,
    _rest: [u8; 7],
}

impl Slot {
    #[inline(always)]
    pub fn tag(&self) -> u8 {
        self.tag
    }

    /// The value as an integer; meaningful when the tag is [`tag::INT`].
    #[inline(always)]
    pub fn int(&self) -> i64 {
        i64::from_ne_bytes(self.value)
    }

    /// The value as a float; meaningful when the tag is [`tag::FLOAT`].
    #[inline(always)]
    pub fn float(&self) -> f64 {
        f64::from_ne_bytes(self.value)
    }

    /// The value as a pointer; meaningful for a light userdata and a
    /// collectable value (its object).
    #[inline(always)]
    pub fn pointer(&self) -> *mut u8 {
        usize::from_ne_bytes(self.value) as *mut u8
    }
}

/// A C closure (`CClosure`): the common header (a pointer, two bytes),
/// its upvalue count, the collector's list, the C function, then its
/// upvalues, one `TValue` each.
#[repr(C)]
pub(super) struct Closure {
    _next: *const u8,
    _tt: u8,
    _marked: u8,
    upvalue_count: u8,
    _gclist: *const u8,
    _f: *const u8,
    upvalues: [Slot; 0],
}

impl Closure {
    /// Upvalue `n` (from 1; `lua_upvalueindex(n)`), which the closure
    /// has.
    #[inline(always)]
    pub fn upvalue(&self, n: usize) -> *const Slot {
        debug_assert!((1..=self.upvalue_count as usize).contains(&n));
        // SAFETY: the closure has `upvalue_count` upvalues after its
        // header, and `n` is one of them.
        unsafe { self.upvalues.as_ptr().add(n - 1) }
    }
}

/// The C closure running in `l` while the stack holds `top` values.
///
/// # Safety
/// [`layout_holds`] has returned `true` (or `check` is finding out);
/// `l` is running a C closure (not a light C function) and `top` is what
/// `lua_gettop(l)` returns now. The closure lives as long as it runs.
#[inline(always)]
pub(super) unsafe fn running_closure<'a>(l: *mut lua_State, top: c_int) -> &'a Closure {
    // SAFETY: the function's slot is just below its first argument (the
    // `top` values are its frame); it holds the closure object.
    unsafe { &*base(l, top).read().pointer().cast::<Closure>() }
}

/// Where the stack's frame starts while it holds `top` values: the
/// running function's slot, so that stack index `i` is `base + i`.
///
/// # Safety
/// As [`slot`]. The address holds until the stack is reallocated: by
/// `lua_checkstack` or any call into Lua.
#[inline(always)]
pub(super) unsafe fn base(l: *mut lua_State, top: c_int) -> *mut Slot {
    // SAFETY: by the layout `layout_holds` checked, the `top` values are
    // the slots just below the first free one, the function's below them.
    unsafe { free(l).offset(-(top as isize) - 1) }
}

/// The state's `top`: where the first free slot's address is kept.
#[inline(always)]
unsafe fn top_field(l: *mut lua_State) -> *mut *mut Slot {
    // SAFETY: by the layout `layout_holds` checked, `top` is at
    // `TOP_OFFSET` in the state.
    unsafe { (l as *mut u8).add(TOP_OFFSET).cast::<*mut Slot>() }
}

/// The first free slot.
#[inline(always)]
unsafe fn free(l: *mut lua_State) -> *mut Slot {
    // SAFETY: see `top_field`.
    unsafe { *top_field(l) }
}

/// Pushes a copy of `value`, as `lua_pushvalue` pushes the value at an
/// index: its value and tag copied to the first free slot, which becomes
/// the top.
///
/// # Safety
/// [`layout_holds`] has returned `true`; the stack has room for one more
/// value (`lua_checkstack`, or within the LUA_MINSTACK a C function may
/// push); `value` is a live value (a stack slot or an upvalue) that is
/// not the free slot itself. No barrier is needed: the collector
/// traverses a stack whole, as a push through the API does not mark
/// either.
#[inline(always)]
pub(super) unsafe fn push(l: *mut lua_State, value: *const Slot) {
    // SAFETY: as the caller promises; only the value's 8 bytes and its
    // tag are written, as `setobj` writes them (the slot's other bytes
    // are a to-be-closed variable's link, which a plain value leaves
    // alone).
    unsafe {
        let at = free(l);
        (*at).value = (*value).value;
        (*at).tag = (*value).tag;
        *top_field(l) = at.add(1);
    }
}

/// The slot of stack index `at` (from 1) while the stack holds `top`
/// values.
///
/// # Safety
/// [`layout_holds`] has returned `true` (or `check` is finding out, on
/// Lua 5.4); `top` is what `lua_gettop(l)`
/// returns now and `1 <= at <= top`. The reference is used only while the
/// slot holds that value and the stack is not reallocated (no
/// `lua_checkstack`, no call into Lua).
#[inline(always)]
pub(super) unsafe fn slot<'a>(l: *mut lua_State, top: c_int, at: c_int) -> &'a Slot {
    // SAFETY: by the layout `layout_holds` checked, the `top` values are
    // the `top` slots below the first free one; `at` is one of them. (One
    // offset, not `base`'s and then `at`'s: the send's argument checks
    // took 8 instructions more that way.)
    unsafe { &*free(l).offset((at - top - 1) as isize) }
}

/// 0: not checked yet, 1: holds, 2: does not.
static LAYOUT: AtomicU8 = AtomicU8::new(0);

/// Whether the layout is the one this module reads: checked the first
/// time against what the API says of a few values pushed for it and of
/// the running closure's upvalues.
///
/// # Safety
/// `l` is the running state, inside a C closure of `upvalues` upvalues
/// (6 free slots are asked for here), with nothing owned in Rust frames
/// above that must be dropped: only API functions that cannot raise are
/// called.
#[inline(always)]
pub(super) unsafe fn layout_holds(l: *mut lua_State, upvalues: u8) -> bool {
    match LAYOUT.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        // SAFETY: as the caller promises.
        _ => unsafe { first_check(l, upvalues) },
    }
}

#[cold]
#[inline(never)]
unsafe fn first_check(l: *mut lua_State, upvalues: u8) -> bool {
    // SAFETY: as `layout_holds`'s caller promises.
    let Some(holds) = (unsafe { check(l, upvalues) }) else {
        // No room on the stack to check with (a memory limit): no lane
        // this time, and the check is made again next time.
        return false;
    };
    if !holds {
        tracing::warn!("the Lua stack is not laid out as the fast lane reads it: lanes are off");
    }
    LAYOUT.store(if holds { 1 } else { 2 }, Ordering::Relaxed);
    holds
}

/// Pushes an integer, a float and both booleans and reads them back both
/// ways, compares the running closure's upvalues read directly with what
/// the API pushes of them, and pushes directly to see the API find what
/// was pushed; `None` when the stack has no room for that. Only Lua 5.4
/// on a 64-bit target is read (the layout is known there); a slot or the
/// closure is dereferenced only then, the closure only once its slot's
/// tag says it is one.
unsafe fn check(l: *mut lua_State, upvalues: u8) -> Option<bool> {
    if cfg!(not(target_pointer_width = "64")) || size_of::<Slot>() != 16 {
        return Some(false);
    }
    // SAFETY: as `layout_holds`'s caller promises; pushes of numbers,
    // booleans and copies after `lua_checkstack` do not raise.
    unsafe {
        if ffi::lua_version(l) != 504.0 {
            return Some(false);
        }
        if ffi::lua_checkstack(l, 6) == 0 {
            return None;
        }
        let before = ffi::lua_gettop(l);
        let holds =
            values_read(l, before) && closure_read(l, before, upvalues) && pushed(l, before);
        ffi::lua_settop(l, before);
        Some(holds)
    }
}

/// Whether values pushed through the API read back as [`Slot`] reads
/// them.
unsafe fn values_read(l: *mut lua_State, before: c_int) -> bool {
    // SAFETY: see `check`.
    unsafe {
        let n: i64 = 0x0123_4567_89ab_cdef;
        let x: f64 = -1.25e300;
        ffi::lua_pushinteger(l, n);
        ffi::lua_pushnumber(l, x);
        ffi::lua_pushboolean(l, 1);
        ffi::lua_pushboolean(l, 0);
        let top = ffi::lua_gettop(l);
        let at = |i| slot(l, top, before + i);
        let holds = at(1).tag() == tag::INT
            && at(1).int() == n
            && at(2).tag() == tag::FLOAT
            && at(2).float().to_bits() == x.to_bits()
            && at(3).tag() == tag::TRUE
            && at(4).tag() == tag::FALSE;
        ffi::lua_settop(l, before);
        holds
    }
}

/// Whether the running function is a C closure of `upvalues` upvalues
/// whose every upvalue, read directly, is what the API pushes of it.
unsafe fn closure_read(l: *mut lua_State, before: c_int, upvalues: u8) -> bool {
    // SAFETY: see `check`; the function's slot is read as an argument's
    // is, and its object only once its tag says it is a C closure.
    unsafe {
        if (*base(l, before)).tag() != tag::C_CLOSURE {
            return false;
        }
        let closure = running_closure(l, before);
        if closure.upvalue_count != upvalues {
            return false;
        }
        for n in 1..=upvalues as c_int {
            ffi::lua_pushvalue(l, ffi::lua_upvalueindex(n));
            let through_api = slot(l, before + 1, before + 1);
            let direct = &*closure.upvalue(n as usize);
            let same = through_api.tag == direct.tag && through_api.value == direct.value;
            ffi::lua_settop(l, before);
            if !same {
                return false;
            }
        }
        true
    }
}

/// Whether values pushed by [`push`] (a stack slot's, an upvalue's) are
/// on top for the API, equal to their originals.
unsafe fn pushed(l: *mut lua_State, before: c_int) -> bool {
    // SAFETY: see `check`; two pushes within the room asked for.
    unsafe {
        let n: i64 = -0x0fed_cba9_8765_4321;
        ffi::lua_pushinteger(l, n);
        push(l, slot(l, before + 1, before + 1));
        let copied = ffi::lua_gettop(l) == before + 2
            && ffi::lua_isinteger(l, -1) != 0
            && ffi::lua_tointegerx(l, -1, std::ptr::null_mut()) == n;
        push(l, running_closure(l, before + 2).upvalue(1));
        copied
            && ffi::lua_gettop(l) == before + 3
            && ffi::lua_rawequal(l, -1, ffi::lua_upvalueindex(1)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check` from a C closure of three upvalues (an integer, a string,
    /// a table), the result returned to Lua.
    unsafe extern "C-unwind" fn checked(l: *mut lua_State) -> c_int {
        // SAFETY: called by Lua as the closure made below.
        unsafe {
            let holds = check(l, 3) == Some(true);
            ffi::lua_pushboolean(l, holds as c_int);
            1
        }
    }

    #[test]
    fn the_lua_this_crate_is_built_with_is_laid_out_as_the_lane_reads_it() {
        let lua = mlua::Lua::new();
        let table = lua.create_table().unwrap();
        // SAFETY: `exec_raw` grows the stack for the arguments and the
        // closure made of them.
        let f = unsafe {
            lua.exec_raw::<mlua::Function>((7, "seven", table), |l| {
                ffi::lua_pushcclosure(l, checked, 3);
            })
        }
        .unwrap();
        assert!(f.call::<bool>(("an", "argument")).unwrap());
    }
}
