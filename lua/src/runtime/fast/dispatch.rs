//! The baked send as a plain Lua C function.
//!
//! Written against the Lua C API rather than as an mlua callback or in Lua
//! because its whole point is cost: an mlua callback pays for its safety
//! machinery on every call (the crossing this lane exists to avoid), and
//! checking argument kinds from Lua costs a C call per argument
//! (`math.type`, `select`). Here the script calls one C function, which
//! checks the arguments and calls each listener in its own `lua_pcall`.
//!
//! Rules this code keeps, so that a Lua error never unwinds through a Rust
//! frame that owns something: while it holds anything it calls only API
//! functions that cannot raise (stack reads, raw gets, raw sets of array
//! slots that exist, pushes of numbers, booleans and light userdata,
//! `lua_checkstack`) and runs Lua only in `lua_pcall`. The one exception is
//! the slow way, `lua_call` of the send's hub function, whose errors are
//! the script's to see: it is the last thing `send` does, with nothing
//! owned in its frame (a plain frame, as in any C library for Lua).

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

use gantry_host::{LaneRecord, PlainArg};
use mlua::ffi::{self, lua_State};

use super::MAX_PARAMS;
use super::stack::{self, tag as stack_tag};

/// What every lane of one runtime shares with the runtime, read and
/// written directly (no Lua API) by the send functions.
pub(crate) struct Counters {
    /// The hub's epoch, kept by the runtime's epoch watcher.
    pub epoch: Cell<u64>,
    /// Fast sends running, nested.
    pub depth: Cell<i64>,
    /// Reasons to keep off the lane: a coroutine running (a listener must
    /// not yield the sender's coroutine), fast sends nested at the limit.
    pub blocks: Cell<i64>,
    /// Where the innermost runner was (its listener, from 0) when a
    /// listener's error reached the message handler; -1: nowhere known.
    pub failed_at: Cell<i64>,
    /// Runners whose protected call is under way (the message handler
    /// counts them from the bottom of a deep stack).
    pub runners: Cell<i64>,
    /// The lane each fast send under way with a runner delivers down, by
    /// nesting depth (`1..=MAX_DEPTH`), as its data's address: the key
    /// `FastLane` finds the lane table by when a listener is removed
    /// mid-send. Past the depth, or null: none. Never dereferenced.
    pub active: [Cell<*const LaneData>; MAX_DEPTH as usize + 1],
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            epoch: Cell::default(),
            depth: Cell::default(),
            blocks: Cell::default(),
            failed_at: Cell::new(-1),
            runners: Cell::default(),
            active: std::array::from_fn(|_| Cell::new(std::ptr::null())),
        }
    }
}

/// The slots of a send's site table (its array part; the first upvalue of
/// a send function), as `fast.rs` builds it. Never nil, so that raw sets
/// into them allocate nothing.
pub(super) mod site {
    /// The hub's way for this (function, key): any arguments.
    pub const SLOW: i64 = 1;
    /// `fetch(source)`: the key's lane from that source, or nil.
    pub const FETCH: i64 = 2;
    /// A `SiteKeeper`: owns the [`SiteState`](super::SiteState) behind
    /// upvalue 2, and keeps the runtime's counters alive.
    pub const STATE: i64 = 3;
    /// `fail(lane, i, error)`: reports listener `i` of a lane.
    pub const FAIL: i64 = 4;
    /// `alive(lane, i)`: is listener `i` of a lane still registered?
    pub const ALIVE: i64 = 5;
    pub const LEN: usize = 5;
}

/// What a send function keeps of its lane in Rust memory (read without
/// the Lua API): the runtime's counters, the epoch the lane was taken at
/// and its data.
pub(crate) struct SiteState {
    /// The runtime's counters, kept alive by the [`SiteKeeper`].
    counters: *const Counters,
    /// -1: none taken yet.
    epoch: Cell<i64>,
    /// The kept lane's data (null: the slow way this epoch). Points into
    /// the snapshot that the kept lane (upvalue 6) holds.
    data: Cell<*const LaneData>,
}

/// Owns a send function's [`SiteState`] (boxed: its address is upvalue 2)
/// and the counters it points to.
pub(crate) struct SiteKeeper {
    state: Box<SiteState>,
    _counters: std::rc::Rc<Counters>,
}

impl SiteKeeper {
    pub fn new(counters: &std::rc::Rc<Counters>) -> Self {
        SiteKeeper {
            state: Box::new(SiteState {
                counters: std::rc::Rc::as_ptr(counters),
                epoch: Cell::new(-1),
                data: Cell::new(std::ptr::null()),
            }),
            _counters: counters.clone(),
        }
    }

    pub fn state_ptr(&self) -> *const SiteState {
        &*self.state
    }
}

impl mlua::UserData for SiteKeeper {}

/// The keys of a lane table, as `fast.rs` builds it. The table is
/// weak-valued (a kept lane does not keep a removed listener's function
/// alive), so its snapshot is also one of its keys, which hold strongly.
pub(super) mod lane {
    /// Keys `1..=count`: the listeners' functions, in delivery order.
    pub const FIRST_FUNCTION: i64 = 1;
    /// The snapshot userdata (`fail` and `alive` read it); it owns the
    /// [`LaneData`](super::LaneData) behind `DATA`.
    pub const SNAPSHOT: i64 = 0;
    /// A light userdata: the snapshot's `LaneData`, read directly.
    pub const DATA: i64 = -1;
    /// The lane's runner (`deliver`), for a lane of 2 to
    /// `deliver::MAX_RUN` listeners. Held strongly by the runtime's cache
    /// of runners, so the weak values do not let it go.
    pub const RUNNER: i64 = -2;
}

/// What a send reads of its lane without going through the Lua API.
pub(crate) struct LaneData {
    /// The parameter kinds, one letter each (`fast::kind_letter`).
    pub kinds: Box<[u8]>,
    /// The hub's epoch the lane was taken at.
    pub epoch: u64,
    /// How many listeners.
    pub count: i64,
    /// The hub's dispatch log, when one is installed: each send down the
    /// lane is logged (`super::log`).
    pub log: Option<super::log::LaneLog>,
}

/// Fast sends nested this deep send the slow way from there on (whose
/// nesting limit then applies).
pub(crate) const MAX_DEPTH: i64 = 8;

/// The runtime's counters, from a `block`/`unblock` closure's second
/// upvalue.
unsafe fn counters<'a>(l: *mut lua_State) -> &'a Counters {
    // SAFETY: the closure was made by `counters_closure`: upvalue 2 is the
    // address of an `Rc<Counters>` that its upvalue 1 (a `CountersKeeper`)
    // keeps alive.
    unsafe { &*ffi::lua_touserdata(l, ffi::lua_upvalueindex(2)).cast::<Counters>() }
}

/// A baked send (`SOURCED`: its first argument is the source object).
/// Delivers down the kept lane when the arguments fit it, else calls the
/// hub's way with the arguments as they came and returns what it returns.
///
/// Every Lua API call here is a call into the Lua library that the
/// hand-written Lua bus it competes with does not make, so the path counts
/// them: the state and counters come from one light userdata, read from
/// the closure directly, as the arguments are read and the delivery's
/// values pushed (`stack`); the lane table holds the functions
/// themselves, and nothing is popped before returning (Lua takes a C
/// function's results from the top).
///
/// # Safety
/// Called by Lua as a C closure made by `send_closure`.
pub(super) unsafe extern "C-unwind" fn send<const SOURCED: bool>(l: *mut lua_State) -> c_int {
    // SAFETY: `l` is the running state; a delivery pushes at most its
    // arguments and 8 more, within LUA_MINSTACK or after `lua_checkstack`.
    // Upvalue 2 is the `SiteState` owned by the site table's `SiteKeeper`
    // (upvalue 1 keeps it alive), which keeps the counters alive. The
    // stack and the closure are read directly (`stack`) only once the
    // layout is known to hold.
    unsafe {
        let top = ffi::lua_gettop(l);
        let first = if SOURCED { 2 } else { 1 };
        if stack::layout_holds(l, UPVALUES) {
            let closure = stack::running_closure(l, top);
            let state = &*(*closure.upvalue(2)).pointer().cast::<SiteState>();
            let counters = &*state.counters;
            // A C function may push LUA_MINSTACK (20) values unasked; a
            // delivery pushes its arguments and at most 8 more.
            if counters.blocks.get() == 0
                && top >= first - 1
                && (top + 8 <= ffi::LUA_MINSTACK || ffi::lua_checkstack(l, top + 8) != 0)
                && try_lane::<SOURCED>(l, closure, state, counters, top, first)
            {
                return 0;
            }
            ffi::lua_settop(l, top);
        }
        // The slow way: the hub's function with the arguments as they came.
        ffi::lua_rawgeti(l, ffi::lua_upvalueindex(1), site::SLOW);
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, top, ffi::LUA_MULTRET);
        ffi::lua_gettop(l)
    }
}

/// Delivers down the lane if there is one for this epoch and source and
/// the arguments fit it.
unsafe fn try_lane<const SOURCED: bool>(
    l: *mut lua_State,
    closure: &stack::Closure,
    state: &SiteState,
    counters: &Counters,
    top: c_int,
    first: c_int,
) -> bool {
    // SAFETY: see `send`.
    unsafe {
        let current = state.epoch.get() == counters.epoch.get() as i64
            && (!SOURCED || same_source(l, closure, top));
        if !current {
            take_lane::<SOURCED>(l, counters, state);
        }
        let Some(data) = state.data.get().as_ref() else {
            return false;
        };
        let count = top - first + 1;
        if let Some(log) = &data.log {
            // Nested: the record is written as the arguments are checked,
            // and taken back if one does not fit; the log counts nothing.
            let counted = if let Some(mut record) = log.record() {
                if !arguments_fit(l, data, first, count, &mut record) {
                    return false;
                }
                record.finish();
                false
            } else {
                // The arguments are read for the log as they are checked.
                // Only the first `count` are written and read: no cost
                // for the others.
                let mut args = Borrowed([const { MaybeUninit::uninit() }; MAX_PARAMS]);
                if !arguments_fit_apart(l, data, first, count, &mut args) {
                    return false;
                }
                // SAFETY: `arguments_fit` wrote the first `count` (at most
                // `MAX_PARAMS`). A string's bytes stay valid while it is
                // on the stack, which outlives the log call.
                let args = std::slice::from_raw_parts(
                    args.0.as_ptr().cast::<PlainArg<'_>>(),
                    count as usize,
                );
                log.begin(args);
                true
            };
            // As below. (The two branches each push and deliver: with one
            // delivery after them, the send took 13 instructions more.)
            stack::push(l, closure.upvalue(6));
            super::deliver::deliver(l, closure, counters, top + 1, data, first, count);
            if counted {
                log.end();
            }
        } else {
            if !arguments_fit_unread(l, data, first, count) {
                return false;
            }
            // The lane on this stack keeps `data` and the functions alive
            // should a nested send of this same function take a new lane.
            stack::push(l, closure.upvalue(6));
            super::deliver::deliver(l, closure, counters, top + 1, data, first, count);
        }
        true
    }
}

/// Whether the source (the first argument) is the one the kept lane was
/// taken for (upvalue 3): the same value and tag. A source is an object
/// or a table, for which that is raw equality. For other values it may
/// differ, harmlessly: a long string equal to another's text, a boolean
/// (whose value bytes Lua leaves as they were) and a zero of the other
/// sign only take the lane again; a NaN is the same as itself, and no
/// lane is taken from it.
#[inline(always)]
unsafe fn same_source(l: *mut lua_State, closure: &stack::Closure, top: c_int) -> bool {
    // SAFETY: see `send`: the layout holds; the source is argument 1.
    unsafe {
        let kept = &*closure.upvalue(3);
        let source = stack::slot(l, top, 1);
        kept.tag() == source.tag() && kept.pointer() == source.pointer()
    }
}

/// Asks the hub for the key's lane from this send's source and keeps it
/// (or `false`) for this epoch and source.
unsafe fn take_lane<const SOURCED: bool>(
    l: *mut lua_State,
    counters: &Counters,
    state: &SiteState,
) {
    // SAFETY: see `send`.
    unsafe {
        let site = ffi::lua_upvalueindex(1);
        let top = ffi::lua_gettop(l);
        ffi::lua_rawgeti(l, site, site::FETCH);
        if SOURCED {
            ffi::lua_pushvalue(l, 1);
        } else {
            ffi::lua_pushnil(l);
        }
        let data = if ffi::lua_pcall(l, 1, 1, 0) == ffi::LUA_OK
            && ffi::lua_type(l, -1) == ffi::LUA_TTABLE
        {
            lane_data(l, top + 1)
                .filter(|d| d.epoch == counters.epoch.get())
                .map_or(std::ptr::null(), |d| d as *const LaneData)
        } else {
            std::ptr::null()
        };
        if data.is_null() {
            ffi::lua_settop(l, top);
            ffi::lua_pushboolean(l, 0);
            ffi::lua_pushboolean(l, 0);
        } else {
            ffi::lua_rawgeti(l, top + 1, lane::RUNNER);
        }
        ffi::lua_replace(l, ffi::lua_upvalueindex(7));
        ffi::lua_replace(l, ffi::lua_upvalueindex(6));
        state.data.set(data);
        state.epoch.set(counters.epoch.get() as i64);
        if SOURCED {
            ffi::lua_pushvalue(l, 1);
            ffi::lua_replace(l, ffi::lua_upvalueindex(3));
        }
    }
}

/// The data of the lane table at `lane`.
unsafe fn lane_data<'a>(l: *mut lua_State, lane: c_int) -> Option<&'a LaneData> {
    // SAFETY: see `send`. The pointer is the snapshot's boxed `LaneData`;
    // the snapshot is held by the same lane table (key `SNAPSHOT`, and as
    // a key), which is on the stack for as long as the reference is used.
    // Scripts never see a lane table.
    unsafe {
        ffi::lua_rawgeti(l, lane, lane::DATA);
        let p = ffi::lua_touserdata(l, -1).cast::<LaneData>();
        ffi::lua_pop(l, 1);
        p.as_ref()
    }
}

/// What [`arguments_fit`] does with each argument it checks (the `i`th,
/// from 0) once it fits.
trait Taken<'s> {
    /// Whether `count` arguments are not too many for it.
    fn room(&self, count: usize) -> bool;
    fn int(&mut self, i: usize, n: i64);
    fn float(&mut self, i: usize, x: f64);
    fn bool(&mut self, i: usize, b: bool);
    fn str(&mut self, i: usize, s: &'s str);
}

/// Checked only: the send is not logged.
struct Unread;

impl Taken<'_> for Unread {
    #[inline(always)]
    fn room(&self, _: usize) -> bool {
        true
    }
    #[inline(always)]
    fn int(&mut self, _: usize, _: i64) {}
    #[inline(always)]
    fn float(&mut self, _: usize, _: f64) {}
    #[inline(always)]
    fn bool(&mut self, _: usize, _: bool) {}
    #[inline(always)]
    fn str(&mut self, _: usize, _: &str) {}
}

/// Borrowed into an array on the send's frame, for the log (a string's
/// bytes from the stack).
struct Borrowed<'s>([MaybeUninit<PlainArg<'s>>; MAX_PARAMS]);

impl<'s> Taken<'s> for Borrowed<'s> {
    #[inline(always)]
    fn room(&self, count: usize) -> bool {
        count <= MAX_PARAMS
    }
    #[inline(always)]
    fn int(&mut self, i: usize, n: i64) {
        self.0[i].write(PlainArg::Int(n));
    }
    #[inline(always)]
    fn float(&mut self, i: usize, x: f64) {
        self.0[i].write(PlainArg::Float(x));
    }
    #[inline(always)]
    fn bool(&mut self, i: usize, b: bool) {
        self.0[i].write(PlainArg::Bool(b));
    }
    #[inline(always)]
    fn str(&mut self, i: usize, s: &'s str) {
        self.0[i].write(PlainArg::Str(s));
    }
}

/// Written straight into the log's buffer, after the record's head.
///
/// SAFETY of the writes: `arguments_fit` writes one value per parameter
/// of the lane, in its turn (the `i`th is written when `i` are), and the
/// lane's sink was made for as many (`log::LaneLog::new`): the record
/// holds fewer values than the lane has parameters at each write.
impl Taken<'_> for LaneRecord<'_> {
    #[inline(always)]
    fn room(&self, _: usize) -> bool {
        true
    }
    #[inline(always)]
    fn int(&mut self, _: usize, n: i64) {
        // SAFETY: see the impl.
        unsafe { LaneRecord::int(self, n) };
    }
    #[inline(always)]
    fn float(&mut self, _: usize, x: f64) {
        // SAFETY: see the impl.
        unsafe { LaneRecord::float(self, x) };
    }
    #[inline(always)]
    fn bool(&mut self, _: usize, b: bool) {
        // SAFETY: see the impl.
        unsafe { LaneRecord::bool(self, b) };
    }
    #[inline(always)]
    fn str(&mut self, _: usize, s: &str) {
        LaneRecord::str(self, s);
    }
}

/// Checks the `count` arguments from stack index `first` (the last ones
/// on the stack) against the lane's kinds; an integer for a float
/// parameter is made a float in place, as the hub converts it. Each that
/// fits goes to `taken`. Each is read from its stack slot (`stack`): its
/// kind and value are two loads, no call into Lua; only a string's bytes
/// are asked for.
#[inline(always)]
unsafe fn arguments_fit<'s, T: Taken<'s>>(
    l: *mut lua_State,
    data: &LaneData,
    first: c_int,
    count: c_int,
    taken: &mut T,
) -> bool {
    // SAFETY: see `send`.
    unsafe {
        if data.kinds.len() != count as usize || !taken.room(data.kinds.len()) {
            return false;
        }
        let top = first + count - 1;
        debug_assert_eq!(ffi::lua_gettop(l), top);
        for (i, kind) in data.kinds.iter().enumerate() {
            let at = first + i as c_int;
            // SAFETY: the lane was taken, so the layout holds; `at` is one
            // of the `top` values on the stack (the send's arguments, as it
            // found them), read before anything is pushed.
            let slot = stack::slot(l, top, at);
            match (*kind, slot.tag()) {
                (b'i', stack_tag::INT) => taken.int(i, slot.int()),
                (b'f', stack_tag::FLOAT) => taken.float(i, slot.float()),
                (b'f', stack_tag::INT) => {
                    let x = slot.int() as ffi::lua_Number;
                    ffi::lua_pushnumber(l, x);
                    ffi::lua_replace(l, at);
                    taken.float(i, x);
                }
                (b'b', stack_tag::TRUE) => taken.bool(i, true),
                (b'b', stack_tag::FALSE) => taken.bool(i, false),
                (b's', stack_tag::SHORT_STR | stack_tag::LONG_STR) => {
                    let mut n = 0usize;
                    let p = ffi::lua_tolstring(l, at, &mut n);
                    if p.is_null() {
                        return false;
                    }
                    let bytes = std::slice::from_raw_parts(p.cast::<u8>(), n);
                    match std::str::from_utf8(bytes) {
                        Ok(text) => taken.str(i, text),
                        Err(_) => return false,
                    }
                }
                _ => return false,
            }
        }
        true
    }
}

/// [`arguments_fit`] in a function of its own: what a send that writes
/// no record in the log's buffer calls. A record's writes are inlined in
/// the send instead, where the buffer's length and address may stay in
/// registers from one argument to the next.
#[inline(never)]
unsafe fn arguments_fit_apart<'s, T: Taken<'s>>(
    l: *mut lua_State,
    data: &LaneData,
    first: c_int,
    count: c_int,
    taken: &mut T,
) -> bool {
    // SAFETY: as the caller promises (see `send`).
    unsafe { arguments_fit(l, data, first, count, taken) }
}

/// Whether the arguments fit, for a send that is not logged: each
/// argument's tag compared with its parameter's kind inline, which is all
/// a number or a boolean of the parameter's own kind needs; anything else
/// (a string, whose bytes are checked; an integer for a float, made one)
/// goes to [`arguments_fit`].
#[inline(always)]
unsafe fn arguments_fit_unread(
    l: *mut lua_State,
    data: &LaneData,
    first: c_int,
    count: c_int,
) -> bool {
    // SAFETY: as the caller promises (see `send`); the slots are read as
    // `arguments_fit` reads them.
    unsafe {
        if data.kinds.len() != count as usize {
            return false;
        }
        let top = first + count - 1;
        for (i, kind) in data.kinds.iter().enumerate() {
            let tag = stack::slot(l, top, first + i as c_int).tag();
            let exact = match *kind {
                b'i' => tag == stack_tag::INT,
                b'f' => tag == stack_tag::FLOAT,
                b'b' => tag == stack_tag::TRUE || tag == stack_tag::FALSE,
                _ => false,
            };
            if !exact {
                return arguments_fit_apart(l, data, first, count, &mut Unread);
            }
        }
        true
    }
}

/// `block()`: keeps the lane off (the sandbox calls it before resuming a
/// coroutine).
///
/// # Safety
/// Called by Lua as a C closure made by [`counters_closure`].
pub(super) unsafe extern "C-unwind" fn block(l: *mut lua_State) -> c_int {
    // SAFETY: see `counters_closure`.
    unsafe {
        let counters = counters(l);
        counters.blocks.set(counters.blocks.get() + 1);
        0
    }
}

/// `unblock(...)`: undoes one `block()` and returns its arguments (the
/// results of the resume it wraps).
///
/// # Safety
/// As [`block`].
pub(super) unsafe extern "C-unwind" fn unblock(l: *mut lua_State) -> c_int {
    // SAFETY: see `counters_closure`.
    unsafe {
        let counters = counters(l);
        counters.blocks.set(counters.blocks.get() - 1);
        ffi::lua_gettop(l)
    }
}

/// Makes `f` (`block`, `unblock`) a C closure over the counters: upvalue 1
/// is the [`CountersKeeper`] on top of the stack, upvalue 2 the counters'
/// address.
///
/// # Safety
/// Called inside `Lua::exec_raw` with that value pushed; `counters` must be
/// the address of the `Rc<Counters>` the value keeps alive.
pub(super) unsafe fn counters_closure(
    l: *mut lua_State,
    f: ffi::lua_CFunction,
    counters: *const Counters,
) {
    // SAFETY: `exec_raw` grew the stack; the value is on top.
    unsafe {
        ffi::lua_pushlightuserdata(l, counters as *mut c_void);
        ffi::lua_pushcclosure(l, f, 2);
    }
}

/// How many upvalues a send function has (see [`send_closure`]).
pub(super) const UPVALUES: u8 = 7;

/// Makes `f` a send function over the site table, then the message
/// handler, on top of the stack: upvalues (1) the site table, (2) the site
/// state's address, (3) the source the kept lane is for, (4) the
/// listeners' message handler, (5)
/// [`run_listeners`](super::deliver::run_listeners) over the same site
/// table, (6) the kept lane (`false`: this send goes the slow way this
/// epoch; an upvalue is read for less than a table's slot), (7) the kept
/// lane's runner (nil when it has none; `false` with no lane).
///
/// # Safety
/// Called inside `Lua::exec_raw` with the site table, then the message
/// handler pushed; the table must keep the state alive (`site::STATE`).
pub(super) unsafe fn send_closure(
    l: *mut lua_State,
    f: ffi::lua_CFunction,
    state: *const SiteState,
) {
    // SAFETY: `exec_raw` grew the stack; the message handler is on top,
    // the site table below it.
    unsafe {
        ffi::lua_pushlightuserdata(l, state as *mut c_void);
        ffi::lua_pushboolean(l, 0);
        ffi::lua_rotate(l, -3, -1);
        ffi::lua_pushvalue(l, -4);
        ffi::lua_pushcclosure(l, super::deliver::run_listeners, 1);
        ffi::lua_pushboolean(l, 0);
        ffi::lua_pushboolean(l, 0);
        ffi::lua_pushcclosure(l, f, UPVALUES as c_int);
    }
}

/// Keeps the counters alive for as long as a closure reading them exists
/// (until the Lua state has closed, `__gc` metamethods included).
pub(crate) struct CountersKeeper {
    _counters: std::rc::Rc<Counters>,
}

impl CountersKeeper {
    pub fn new(counters: &std::rc::Rc<Counters>) -> Self {
        CountersKeeper {
            _counters: counters.clone(),
        }
    }
}

impl mlua::UserData for CountersKeeper {}
