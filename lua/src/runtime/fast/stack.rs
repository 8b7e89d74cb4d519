//! A send's arguments read straight from the Lua stack.
//!
//! Through the C API, each argument is a call or two into the library
//! (`lua_isinteger`, then `lua_tointegerx` for its value), each finding
//! the slot from its index again: with a recording, whose lane reads every
//! argument's value, those calls were a third of what it added to a send.
//! A C function's arguments are consecutive slots just below the state's
//! `top`, each a `TValue`: 8 bytes of value, then a tag byte saying its
//! type and variant. Read there, an argument's kind and value are two
//! loads.
//!
//! That layout is Lua 5.4's (the same in every 5.4 release, the version
//! mlua is built with here), not part of its API: [`layout_holds`] checks
//! it against the API on a live state once per process before any lane
//! is taken, and a runtime where it does not hold takes no lane (every
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
    // SAFETY: by the layout `layout_holds` checked, the pointer at
    // `TOP_OFFSET` is the first free slot and the `top` values are the
    // `top` slots below it; `at` is one of them.
    unsafe {
        let free = *(l as *const u8).add(TOP_OFFSET).cast::<*const Slot>();
        &*free.offset((at - top - 1) as isize)
    }
}

/// 0: not checked yet, 1: holds, 2: does not.
static LAYOUT: AtomicU8 = AtomicU8::new(0);

/// Whether the stack's layout is the one [`slot`] reads: checked the
/// first time against what the API says of a few values pushed for it.
///
/// # Safety
/// `l` is the running state, inside a C function (3 free slots are asked
/// for here), with nothing owned in Rust frames above that must be
/// dropped: only API functions that cannot raise are called.
pub(super) unsafe fn layout_holds(l: *mut lua_State) -> bool {
    match LAYOUT.load(Ordering::Relaxed) {
        1 => return true,
        2 => return false,
        _ => {}
    }
    // SAFETY: as the caller promises.
    let Some(holds) = (unsafe { check(l) }) else {
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
/// ways; `None` when the stack has no room for them. Only Lua 5.4 on a
/// 64-bit target is read (the layout is known there); `slot` is
/// dereferenced only then.
unsafe fn check(l: *mut lua_State) -> Option<bool> {
    if cfg!(not(target_pointer_width = "64")) || size_of::<Slot>() != 16 {
        return Some(false);
    }
    // SAFETY: as `layout_holds`'s caller promises; pushes of numbers and
    // booleans after `lua_checkstack` do not raise.
    unsafe {
        if ffi::lua_version(l) != 504.0 {
            return Some(false);
        }
        if ffi::lua_checkstack(l, 4) == 0 {
            return None;
        }
        let before = ffi::lua_gettop(l);
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
        Some(holds)
    }
}
