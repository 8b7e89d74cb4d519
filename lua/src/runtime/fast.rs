//! The fast lane: a baked send from Lua delivered to Lua listeners without
//! leaving Lua.
//!
//! Through the hub, a Lua → Lua send crosses into Rust (the arguments
//! become `Value`s) and back out per listener — more than a hand-written
//! Lua event bus costs in all. A baked send knows its function and key, so
//! it asks the hub once what a send from its source does
//! ([`Hub::lane_snapshot`]) and, while the hub's epoch stands, calls the
//! listeners' functions itself: the baked function is a plain Lua C
//! function (`dispatch`), so a send the lane takes never enters mlua. The
//! hub's contract is kept:
//! - The lane is used only for plain message listeners this runtime
//!   registered with a function it holds (owner `nil` or an object); a
//!   Rust or Rhai listener, a Lua-value owner, `times`, tracing or a key
//!   whose types are still being learned send the slow way. A dispatch
//!   log (a recording) keeps the lane: each send it takes is logged as the
//!   hub would log it (`log`).
//! - Arguments are checked against the key's types (integer, float,
//!   boolean, UTF-8 string; exactly the key's arity); anything else — a table, an object, a
//!   wrong type, an extra argument — goes the slow way, which converts,
//!   refuses or records exactly as before.
//! - Listeners run in delivery order, each in its turn; a failing one is
//!   reported as the hub reports it (`Report::ListenerFailed` with its
//!   site) and the rest still run. Several listeners share one protected
//!   call of a runner, a Lua function that calls each in turn (a listener
//!   called from Lua costs half what one called from C does), restarted
//!   after the one that failed: the message handler finds the runner's
//!   line, which says which listener failed. An error that reaches no
//!   message handler (out of memory) cannot say which: it is reported for
//!   the key, and that send's remaining listeners do not run. A listener
//!   removed during the send is skipped: in the lanes under way it becomes
//!   a function that does nothing (`FastLane::epoch_moved`).
//! - Never in a coroutine (a listener must not yield the sender's
//!   coroutine), and at most 8 fast sends deep; past that the
//!   slow way and its nesting limit take over. Listeners run inside the
//!   sender's call, so within its instruction budget: the budget of the
//!   call the host made into Lua (a top level, a handler, a reply). A
//!   script function the host calls directly runs outside any budget, and
//!   so do the listeners of what it sends.

use std::rc::{Rc, Weak};

use gantry_host::{ApiFunction, Key, ListenerId, Site, Type};
use mlua::{AnyUserData, Function, LightUserData, Lua, Table, UserData, Value as LuaValue};

use gantry_host::face::KeyRef;

use super::api::Ctx;
use super::convert::{object_source_of_arg, world_of_arg};
use super::shared::{Shared, error_text};

mod deliver;
mod dispatch;
mod log;
mod stack;

use dispatch::Counters;

/// Most parameters a key may have for its sends to take the lane.
const MAX_PARAMS: usize = 16;

/// The runtime's side of the lane.
pub(crate) struct FastLane {
    /// The epoch, nesting and blocks the send functions read directly.
    counters: Rc<Counters>,
    /// Listener id → its Lua function, for the listeners the lane may call.
    /// Weak-valued: the hub's callback holds the function; once the hub
    /// drops the listener, the entry goes with the next collection.
    fns: Table,
    /// `{__mode = "v"}`: a kept lane's function list does not keep a
    /// removed listener's function (and what it captures) alive.
    weak_values: Table,
    msgh: Function,
    fail: Function,
    alive: Function,
    /// The runners (`deliver::runner_source`) made so far, by shape
    /// (`listeners << 8 | params`): one serves every lane of its shape.
    runners: Table,
    /// Each lane with a runner by its data's address (weak-valued): how
    /// a lane under way (`Counters::active`) is found when a listener is
    /// removed mid-send, to take it out.
    by_data: Table,
    /// `function() end`: what a removed listener becomes in a lane under
    /// way.
    noop: Function,
    /// The sandbox's coroutine wrappers call these around each resume.
    pub block: Function,
    pub unblock: Function,
}

impl FastLane {
    pub fn new(lua: &Lua) -> mlua::Result<FastLane> {
        let counters = Rc::new(Counters::default());
        let msgh = lua.create_function(message_handler)?;
        let fail = lua.create_function(report_failure)?;
        let alive = lua.create_function(|lua, (lane, i): (Table, usize)| {
            let snap = lane.raw_get::<AnyUserData>(dispatch::lane::SNAPSHOT)?;
            let snap = snap.borrow::<Snapshot>()?;
            let shared = super::shared::shared_of(lua)?;
            Ok(snap
                .listeners
                .get(i)
                .is_some_and(|(id, _)| shared.hub.is_listening(*id)))
        })?;
        let ptr = Rc::as_ptr(&counters);
        let keeper = || dispatch::CountersKeeper::new(&counters);
        // SAFETY: the keeper pushed as the argument keeps `ptr` alive (see
        // `dispatch::counters_closure`).
        let block = unsafe {
            lua.exec_raw::<Function>(keeper(), |l| {
                dispatch::counters_closure(l, dispatch::block, ptr)
            })
        }?;
        // SAFETY: as above.
        let unblock = unsafe {
            lua.exec_raw::<Function>(keeper(), |l| {
                dispatch::counters_closure(l, dispatch::unblock, ptr)
            })
        }?;
        let weak_values = lua.create_table()?;
        weak_values.raw_set("__mode", "v")?;
        let by_data = lua.create_table()?;
        by_data.set_metatable(Some(weak_values.clone()))?;
        let noop = lua
            .load("return function() end")
            .set_name(deliver::RUNNER_CHUNK)
            .call::<Function>(())?;
        let fns = lua.create_table()?;
        fns.set_metatable(Some(weak_values.clone()))?;
        Ok(FastLane {
            counters,
            fns,
            weak_values,
            msgh,
            fail,
            alive,
            runners: lua.create_table()?,
            by_data,
            noop,
            block,
            unblock,
        })
    }

    /// The hub's epoch moved: every kept lane is stale. During a fast send
    /// a listener may have been removed: in the lanes under way, a removed
    /// listener becomes a function that does nothing, so that their
    /// runners, which check nothing, skip it.
    pub fn epoch_moved(&self, epoch: u64, hub: &gantry_host::Hub) {
        self.counters.epoch.set(epoch);
        let depth = self.counters.depth.get();
        if depth > 0
            && let Err(e) = self.take_out_removed(depth, hub)
        {
            tracing::warn!("a listener removed during a send may still be called: {e}");
        }
    }

    #[cold]
    fn take_out_removed(&self, depth: i64, hub: &gantry_host::Hub) -> mlua::Result<()> {
        let under_way = &self.counters.active[1..=depth.min(dispatch::MAX_DEPTH) as usize];
        for data in under_way {
            let data = data.get();
            if data.is_null() {
                continue;
            }
            // An address a lane no longer under way had may find another
            // lane: taking a removed listener out of it changes nothing,
            // since the epoch it was taken at has passed.
            let key = LightUserData(data as *mut std::ffi::c_void);
            let Some(lane) = self.by_data.raw_get::<Option<Table>>(key)? else {
                continue;
            };
            let snapshot = lane.raw_get::<AnyUserData>(dispatch::lane::SNAPSHOT)?;
            let snapshot = snapshot.borrow::<Snapshot>()?;
            for (i, (id, _)) in snapshot.listeners.iter().enumerate() {
                if !hub.is_listening(*id) {
                    lane.raw_set(dispatch::lane::FIRST_FUNCTION + i as i64, &self.noop)?;
                }
            }
        }
        Ok(())
    }

    /// The runner of lanes of `listeners` listeners with `params`
    /// parameters, made once.
    fn runner(&self, lua: &Lua, listeners: usize, params: usize) -> mlua::Result<Function> {
        let shape = (listeners << 8 | params) as i64;
        if let Some(runner) = self.runners.raw_get::<Option<Function>>(shape)? {
            return Ok(runner);
        }
        let runner = lua
            .load(deliver::runner_source(listeners, params))
            .set_name(deliver::RUNNER_CHUNK)
            .call::<Function>(())?;
        self.runners.raw_set(shape, &runner)?;
        Ok(runner)
    }

    /// Keeps the lane off while the host resumes a coroutine.
    pub fn blocked<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Unblock<'a>(&'a Counters);
        impl Drop for Unblock<'_> {
            fn drop(&mut self) {
                self.0.blocks.set(self.0.blocks.get() - 1);
            }
        }
        self.counters.blocks.set(self.counters.blocks.get() + 1);
        let _unblock = Unblock(&self.counters);
        f()
    }

    /// Called when the outermost call into Lua has returned: nothing can be
    /// blocked then, but an error between a sandbox wrapper's `block()` and
    /// its `unblock()` (a spent instruction budget stops at the next
    /// instruction wherever it is, a resume of a non-coroutine raises)
    /// leaves a block behind; this drops it.
    #[inline]
    pub fn settle(&self) {
        if self.counters.blocks.get() != 0 {
            self.counters.blocks.set(0);
        }
    }

    /// A listener the lane may call (registered with a function the hub's
    /// callback holds).
    pub fn remember(&self, id: ListenerId, f: &Function) -> mlua::Result<()> {
        self.fns.raw_set(id.get(), f)
    }
}

/// What the Lua side keeps of a [`gantry_host::LaneSnapshot`]: the key and
/// each listener's id and site, for liveness and failure reports.
struct Snapshot {
    key: Key,
    listeners: Vec<(ListenerId, Option<Site>)>,
    /// What `dispatch` reads directly, owned here and reached through the
    /// lane's light userdata (boxed: its address must not move).
    _data: Box<dispatch::LaneData>,
}

impl UserData for Snapshot {}

/// The letter a lane checks a parameter type by (see `dispatch`), if any.
fn kind_letter(ty: &Type) -> Option<char> {
    Some(match ty {
        Type::Int => 'i',
        Type::Float => 'f',
        Type::Bool => 'b',
        Type::String => 's',
        _ => return None,
    })
}

/// The baked send for (`function`, `key`): the lane in front of `slow`,
/// the hub's way.
pub(crate) fn baked_send(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    function: ApiFunction,
    key: &KeyRef,
    slow: Function,
) -> mlua::Result<Function> {
    let sourced = function.source_index().is_some();
    let weak: Weak<Ctx> = Rc::downgrade(ctx);
    let key = key.key;
    let fetch = lua.create_function(move |lua, arg: LuaValue| {
        let Some(ctx) = weak.upgrade() else {
            return Ok(None);
        };
        // A lane that cannot be built (out of memory) is no lane.
        Ok(fetch(&ctx, lua, function, key, &arg).unwrap_or(None))
    })?;
    use dispatch::site;
    let table = lua.create_table_with_capacity(site::LEN, 0)?;
    table.raw_set(site::SLOW, slow)?;
    table.raw_set(site::FETCH, fetch)?;
    let fast = &ctx.shared.fast;
    let keeper = dispatch::SiteKeeper::new(&fast.counters);
    let state = keeper.state_ptr();
    table.raw_set(site::STATE, keeper)?;
    table.raw_set(site::FAIL, &fast.fail)?;
    table.raw_set(site::ALIVE, &fast.alive)?;
    let f: mlua::lua_CFunction = if sourced {
        dispatch::send::<true>
    } else {
        dispatch::send::<false>
    };
    // SAFETY: `send` keeps the rules of a Lua C function (see its module);
    // the site table pushed as the first argument keeps the site state
    // (and through it the counters) alive.
    unsafe {
        lua.exec_raw::<Function>((table, &fast.msgh), |l| dispatch::send_closure(l, f, state))
    }
}

/// The lane of `key` from the call's source, as `dispatch` reads it (its
/// `lane` keys); `None` when the send must go the slow way.
fn fetch(
    ctx: &Ctx,
    lua: &Lua,
    function: ApiFunction,
    key: Key,
    arg: &LuaValue,
) -> mlua::Result<Option<Table>> {
    let shared: &Shared = &ctx.shared;
    let source = match function {
        _ if function.source_index().is_none() => gantry_host::Source::Global,
        ApiFunction::NotifyWorldMessage => match world_of_arg(arg, &shared.hub) {
            Some(world) => gantry_host::Source::World(world),
            None => return Ok(None),
        },
        _ => match object_source_of_arg(arg) {
            Some(source) => source,
            None => return Ok(None),
        },
    };
    let Ok(lane) = shared.hub.lane_snapshot(key, source) else {
        return Ok(None);
    };
    if lane.params.len() > MAX_PARAMS {
        return Ok(None);
    }
    let Some(kinds) = lane
        .params
        .iter()
        .map(kind_letter)
        .collect::<Option<String>>()
    else {
        return Ok(None);
    };
    let fast = &shared.fast;
    use dispatch::lane as slot;
    // Weak-valued: a kept lane does not keep a removed listener's function
    // (and what it captures) alive. The snapshot is held by a key.
    let table = lua.create_table_with_capacity(lane.listeners.len(), 3)?;
    table.set_metatable(Some(fast.weak_values.clone()))?;
    for (i, listener) in lane.listeners.iter().enumerate() {
        match fast.fns.raw_get::<Option<Function>>(listener.id.get())? {
            Some(f) => table.raw_set(slot::FIRST_FUNCTION + i as i64, f)?,
            None => return Ok(None),
        }
    }
    let params = kinds.len();
    let listeners = lane.listeners.len();
    let runner = deliver::has_runner(listeners);
    if runner {
        table.raw_set(slot::RUNNER, fast.runner(lua, listeners, params)?)?;
    }
    let data = Box::new(dispatch::LaneData {
        kinds: kinds.into_bytes().into_boxed_slice(),
        epoch: lane.epoch,
        count: lane.listeners.len() as i64,
        log: lane
            .log
            .map(|handle| log::LaneLog::new(handle, key, source, params)),
    });
    let data_ptr = &*data as *const dispatch::LaneData as *mut std::ffi::c_void;
    let snapshot = lua.create_userdata(Snapshot {
        key,
        listeners: lane.listeners.into_iter().map(|l| (l.id, l.site)).collect(),
        _data: data,
    })?;
    table.raw_set(&snapshot, true)?;
    table.raw_set(slot::SNAPSHOT, snapshot)?;
    table.raw_set(slot::DATA, LuaValue::LightUserData(LightUserData(data_ptr)))?;
    if runner {
        fast.by_data.raw_set(LightUserData(data_ptr), &table)?;
    }
    Ok(Some(table))
}

/// The message handler of each listener's protected call: the error with
/// a traceback, as the slow way's (mlua's) handler makes it. Errors raised by Rust functions pass
/// through untouched.
fn message_handler(lua: &Lua, error: LuaValue) -> mlua::Result<LuaValue> {
    note_runner(lua);
    let text = match &error {
        LuaValue::Error(_) => return Ok(error),
        LuaValue::String(s) => s.to_string_lossy(),
        other => {
            let tostring: Function = lua.globals().raw_get("tostring")?;
            tostring.call::<String>(other.clone())?
        }
    };
    Ok(LuaValue::String(lua.traceback(Some(&text), 1)?))
}

/// Notes where the innermost runner on the stack was (`deliver` reads it
/// when the runner's protected call fails): the listener its line calls.
fn note_runner(lua: &Lua) {
    let Ok(shared) = super::shared::shared_of(lua) else {
        return;
    };
    let counters = &shared.fast.counters;
    let runners = counters.runners.get();
    if runners == 0 {
        return;
    }
    // Lua finds a level by walking down from the top, so a walk costs the
    // square of its length. The runner is most often a few levels below
    // the error (the listener, what it called): looked for there first.
    // A listener that failed deep in its own calls (a runaway recursion)
    // has it far down: then it is the `runners`th runner from the bottom,
    // which is near the bottom.
    const NEAR: usize = 64;
    let line = (1..=NEAR)
        .map_while(|level| runner_line(lua, level))
        .find_map(|found| found)
        .or_else(|| {
            let bottom = stack_depth(lua);
            if bottom <= NEAR {
                return None;
            }
            let mut seen = 0;
            (NEAR + 1..bottom).rev().find_map(|level| {
                let line = runner_line(lua, level)??;
                seen += 1;
                (seen == runners).then_some(line)
            })
        });
    let at = line.map_or(-1, |line| line - deliver::FIRST_LINE);
    counters.failed_at.set(if at >= 0 { at } else { -1 });
}

/// At stack `level`: `None` past the stack's end, `Some(None)` for a
/// frame that is no runner, `Some(Some(line))` for a runner at `line`.
fn runner_line(lua: &Lua, level: usize) -> Option<Option<i64>> {
    let name = &deliver::RUNNER_CHUNK[1..];
    lua.inspect_stack(level, |debug| {
        (debug.source().short_src.as_deref() == Some(name))
            .then(|| debug.current_line().map_or(-1, |line| line as i64))
    })
}

/// How many levels the stack has: the first level past its end, found
/// by doubling, then halving.
fn stack_depth(lua: &Lua) -> usize {
    let exists = |level: usize| lua.inspect_stack(level, |_| ()).is_some();
    let mut high = 1;
    while exists(high) {
        high *= 2;
    }
    let mut low = high / 2;
    while low + 1 < high {
        let mid = low + (high - low) / 2;
        if exists(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    high
}

/// Reports listener `i` (from 0) of a lane as failed with `error`; a
/// negative `i`: a listener of the lane, not known which.
fn report_failure(lua: &Lua, (lane, i, error): (Table, i64, LuaValue)) -> mlua::Result<()> {
    let snap = lane.raw_get::<AnyUserData>(dispatch::lane::SNAPSHOT)?;
    let snap = snap.borrow::<Snapshot>()?;
    let shared = super::shared::shared_of(lua)?;
    let message = match &error {
        LuaValue::Error(e) => shared.error_text(e),
        LuaValue::String(s) if s.as_bytes().as_ref() == b"not enough memory" => {
            error_text(&mlua::Error::MemoryError(String::new()))
        }
        LuaValue::String(s) => shared.error_text(&mlua::Error::RuntimeError(s.to_string_lossy())),
        other => format!("{other:?}"),
    };
    let site = usize::try_from(i)
        .ok()
        .and_then(|i| snap.listeners.get(i))
        .and_then(|(_, site)| site.clone());
    // Stopped by the budget: that was this listener's stop, not the
    // sender's (the lane goes on with the next listener).
    shared.budget.forgive();
    shared.hub.listener_failed(snap.key, message, site);
    Ok(())
}
