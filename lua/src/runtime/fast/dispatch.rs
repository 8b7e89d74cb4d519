//! The lane's delivery loop, as a plain Lua C function.
//!
//! Written against the Lua C API rather than as an mlua callback because
//! its whole point is cost: an mlua callback pays for its safety machinery
//! on every call (the crossing this lane exists to avoid), and checking
//! argument kinds from Lua costs a C call per argument (`math.type`,
//! `select`). Here one plain C call checks the arguments and calls each
//! listener in its own `lua_pcall`.
//!
//! Safety rules this function keeps, so that no Lua error ever unwinds
//! through it (a `longjmp` across Rust frames): it calls only API
//! functions that cannot raise (stack reads, raw gets, raw sets of slots
//! that exist, pushes of numbers and booleans, `lua_checkstack`), and runs
//! Lua code only through `lua_pcall`.

use std::cell::Cell;
use std::ffi::c_int;
use std::rc::Rc;

use mlua::ffi::{self, lua_State};

/// The lane table's slots (its array part), as `fast.rs` builds it.
pub(super) mod slot {
    /// `E` of `fast.lua`.
    pub const STATE: i64 = 1;
    /// The snapshot userdata (`fail` and `alive` take it); it owns the
    /// [`LaneData`](super::LaneData) behind `DATA`.
    pub const SNAPSHOT: i64 = 2;
    /// A light userdata: the snapshot's `LaneData`, read directly.
    pub const DATA: i64 = 3;
    /// `xpcall`'s message handler: traceback for the report.
    pub const MSGH: i64 = 4;
    /// The hub's epoch the lane was taken at (for `fast.lua`).
    pub const EPOCH: i64 = 5;
    /// `fail(snapshot, i, error)`: reports listener `i`.
    pub const FAIL: i64 = 6;
    /// `alive(snapshot, i)`: is listener `i` still registered?
    pub const ALIVE: i64 = 7;
    /// The listeners' functions, in delivery order (a weak-valued array).
    pub const FUNCTIONS: i64 = 8;
    /// How many slots.
    pub const LEN: usize = 8;
}

/// What `dispatch` reads of a lane without going through the Lua API.
pub(crate) struct LaneData {
    /// The parameter kinds, one letter each (`kind_letter`).
    pub kinds: Box<[u8]>,
    /// The hub's epoch the lane was taken at.
    pub epoch: u64,
    /// How many listeners.
    pub count: i64,
    pub counters: Rc<Counters>,
}

/// What every lane of one runtime shares with the runtime.
#[derive(Default)]
pub(crate) struct Counters {
    /// The hub's epoch (as `E[1]`), kept by the runtime's epoch watcher.
    pub epoch: Cell<u64>,
    /// Fast sends running, nested.
    pub depth: Cell<i64>,
}

/// `E` slot of the Lua side's blocks (see `fast.lua`).
const E_BLOCKS: i64 = 2;

/// Fast sends nested this deep send the slow way from there on (whose
/// nesting limit then applies).
const MAX_DEPTH: i64 = 8;

/// `dispatch(lane, ...)`: delivers the arguments to the lane's listeners
/// and returns `true`, or returns `false` having called nothing when the
/// arguments are not exactly the key's arity and kinds (the caller then
/// sends the slow way, which judges them as the hub does).
///
/// # Safety
/// Called by Lua as a C function.
pub(super) unsafe extern "C-unwind" fn dispatch(l: *mut lua_State) -> c_int {
    // SAFETY: `l` is the running state; every index used below is within
    // the stack, which `lua_checkstack` grew before anything is pushed.
    unsafe {
        let top = ffi::lua_gettop(l);
        let delivered = top >= 1
            && ffi::lua_type(l, 1) == ffi::LUA_TTABLE
            && ffi::lua_checkstack(l, top + 8) != 0
            && match lane_data(l) {
                Some(data) if arguments_fit(l, data, top - 1) => {
                    deliver(l, data, top - 1);
                    true
                }
                _ => false,
            };
        ffi::lua_settop(l, top);
        ffi::lua_pushboolean(l, c_int::from(delivered));
        1
    }
}

/// The lane's data, from its light userdata.
unsafe fn lane_data<'a>(l: *mut lua_State) -> Option<&'a LaneData> {
    // SAFETY: see `dispatch`. The pointer is the snapshot's boxed
    // `LaneData`, and the snapshot is held by the same lane table (slot
    // `SNAPSHOT`), which is on the stack for as long as the reference is
    // used; scripts never see a lane table.
    unsafe {
        ffi::lua_rawgeti(l, 1, slot::DATA);
        let p = ffi::lua_touserdata(l, -1).cast::<LaneData>();
        ffi::lua_pop(l, 1);
        p.as_ref()
    }
}

/// Checks the `count` arguments (stack 2..) against the lane's kinds; an
/// integer for a float parameter is made a float in place, as the hub
/// converts it.
unsafe fn arguments_fit(l: *mut lua_State, data: &LaneData, count: c_int) -> bool {
    // SAFETY: see `dispatch`.
    unsafe {
        if data.kinds.len() != count as usize {
            return false;
        }
        for (i, kind) in data.kinds.iter().enumerate() {
            let at = 2 + i as c_int;
            let fit = match (*kind, ffi::lua_type(l, at)) {
                (b'i', ffi::LUA_TNUMBER) => ffi::lua_isinteger(l, at) != 0,
                (b'f', ffi::LUA_TNUMBER) => {
                    if ffi::lua_isinteger(l, at) != 0 {
                        let n = ffi::lua_tointegerx(l, at, std::ptr::null_mut());
                        ffi::lua_pushnumber(l, n as ffi::lua_Number);
                        ffi::lua_replace(l, at);
                    }
                    true
                }
                (b'b', ffi::LUA_TBOOLEAN) => true,
                (b's', ffi::LUA_TSTRING) => {
                    let mut n = 0usize;
                    let p = ffi::lua_tolstring(l, at, &mut n);
                    !p.is_null()
                        && std::str::from_utf8(std::slice::from_raw_parts(p.cast::<u8>(), n))
                            .is_ok()
                }
                _ => false,
            };
            if !fit {
                return false;
            }
        }
        true
    }
}

/// Calls each listener with the `count` arguments at stack 2.., each in
/// its own protected call; a failure is reported and the rest still run.
unsafe fn deliver(l: *mut lua_State, data: &LaneData, count: c_int) {
    // SAFETY: see `dispatch`.
    unsafe {
        let base = ffi::lua_gettop(l);
        ffi::lua_rawgeti(l, 1, slot::MSGH);
        let msgh = base + 1;
        ffi::lua_rawgeti(l, 1, slot::FUNCTIONS);
        let functions = base + 2;
        let counters = &*data.counters;
        let depth = counters.depth.get() + 1;
        counters.depth.set(depth);
        let at_limit = depth >= MAX_DEPTH;
        if at_limit {
            add_block(l, 1);
        }
        for i in 1..=data.count {
            if counters.epoch.get() != data.epoch && !still_listening(l, i) {
                continue;
            }
            ffi::lua_rawgeti(l, functions, i);
            if ffi::lua_type(l, -1) != ffi::LUA_TFUNCTION {
                ffi::lua_settop(l, functions);
                continue;
            }
            for a in 0..count {
                ffi::lua_pushvalue(l, 2 + a);
            }
            if ffi::lua_pcall(l, count, 0, msgh) != ffi::LUA_OK {
                let error = ffi::lua_gettop(l);
                ffi::lua_rawgeti(l, 1, slot::FAIL);
                ffi::lua_rawgeti(l, 1, slot::SNAPSHOT);
                ffi::lua_pushinteger(l, i);
                ffi::lua_pushvalue(l, error);
                // A report that fails (out of memory) is dropped.
                ffi::lua_pcall(l, 3, 0, 0);
            }
            ffi::lua_settop(l, functions);
        }
        if at_limit {
            add_block(l, -1);
        }
        counters.depth.set(depth - 1);
        ffi::lua_settop(l, base);
    }
}

/// Adds `delta` to `E[2]`, the Lua side's blocks.
unsafe fn add_block(l: *mut lua_State, delta: i64) {
    // SAFETY: see `dispatch`; `E`'s slots 1-3 exist from its creation, so
    // the raw set allocates nothing.
    unsafe {
        ffi::lua_rawgeti(l, 1, slot::STATE);
        ffi::lua_rawgeti(l, -1, E_BLOCKS);
        let blocks = ffi::lua_tointegerx(l, -1, std::ptr::null_mut());
        ffi::lua_pop(l, 1);
        ffi::lua_pushinteger(l, blocks + delta);
        ffi::lua_rawseti(l, -2, E_BLOCKS);
        ffi::lua_pop(l, 1);
    }
}

/// Asks the hub whether listener `i` is still registered (the epoch moved
/// during the send: it may have been removed).
unsafe fn still_listening(l: *mut lua_State, i: i64) -> bool {
    // SAFETY: see `dispatch`.
    unsafe {
        let top = ffi::lua_gettop(l);
        ffi::lua_rawgeti(l, 1, slot::ALIVE);
        ffi::lua_rawgeti(l, 1, slot::SNAPSHOT);
        ffi::lua_pushinteger(l, i);
        let alive = ffi::lua_pcall(l, 2, 1, 0) == ffi::LUA_OK && ffi::lua_toboolean(l, -1) != 0;
        ffi::lua_settop(l, top);
        alive
    }
}
