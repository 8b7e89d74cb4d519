//! The Lua 5.4 runtime: one mlua state hosting many scripts on a hub.
//!
//! A map of the module:
//! - [`LuaRuntime`]: create it on a [`Hub`], load scripts (each attached to
//!   a hub object as `self`), unload or reload one in place (see
//!   [`ScriptRuntime::unload`](gantry_host::face::ScriptRuntime::unload):
//!   what it registered goes, its object and what is stored there stay),
//!   read what scripts print and their errors (the host's
//!   [`ScriptRuntime`](gantry_host::face::ScriptRuntime) trait).
//! - `loader`: the load-time rewrite into baked calls, then the top level.
//! - `api`: the script API's core, reached by generic and baked functions.
//! - `listen`: Lua functions as hub listeners and hook listeners; owners.
//! - `convert`: values by the hub's value model (how tables name structs).
//! - `handles`: userdata for objects, worlds, named sources, responders.
//! - `sandbox` (+ `sandbox.lua`): per-script environments, `require`.
//! - `budget`: the instruction budget and time limit that cost nothing
//!   until a call runs long, and the [`Interrupter`]; `bounded`: library
//!   functions that stop in time; `shared`: what all scripts of a runtime
//!   share; `traceback`: tracebacks cut to the mod's frames; `error`.
//!
//! Single-threaded like the hub: the runtime is `!Send`.

mod api;
mod bounded;
mod budget;
mod collection;
mod convert;
mod error;
mod fast;
mod handles;
mod listen;
mod loader;
mod sandbox;
mod shared;
mod traceback;

use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use gantry_host::face::{
    LanguageRuntime, Loaded, ModGrants, NotLoaded, Registrations, ScriptOutput, Scripts,
};
use gantry_host::{Hub, ObjectId, Quota, WorldId};
use mlua::{FromLua, Lua, StdLib, Table};

pub use budget::Interrupter;
pub use error::{LuaError, ScriptError};
pub use gantry_host::face::{STRUCT_FIELD, ScriptId};
pub use handles::{NamedHandle, ObjectHandle, WorldHandle};

use api::Ctx;
use budget::{Limits, Watchdog};
use shared::{Shared, error_text};

/// How a runtime is set up.
#[derive(Debug, Clone)]
pub struct LuaOptions {
    /// The Lua state's memory limit in bytes (`None`: unlimited). 256 MiB
    /// by default.
    ///
    /// Exceeding it stops the call with an error naming the script and
    /// line where the limit was hit, with one exception: a single
    /// allocation larger than what is left (a huge concatenation, say) is
    /// refused by Lua as a memory error, which no handler sees, and is
    /// reported without a line. A call that runs long (once the watchdog
    /// armed the instruction budget) is stopped a little earlier, at a soft
    /// limit a sixteenth below this one (at least 64 KiB, at most 16 MiB),
    /// at its line; `string.rep` checks its result against what is left
    /// before it allocates.
    pub memory_limit: Option<usize>,
    /// Steps one call may run, a step being a Lua VM instruction (`None`:
    /// unlimited). The budget is armed once a call is found running long
    /// (after `watchdog_interval`), so it counts from then. 100,000,000
    /// by default: about 0.6 s of a tight loop, as Rhai's default of its
    /// costlier operations is (measured with `gantry run --budget`).
    pub budget: Option<u64>,
    /// How long one call from the host into Lua may run, in wall-clock time
    /// (a top level, a handler call, a reply; what it calls — coroutines,
    /// message handlers, `__close`, comparators, listeners it sends to —
    /// runs within it). Past it the call stops at its next instruction with
    /// "time limit exceeded" at the script's line, and stays stopped as the
    /// instruction budget does; the C functions a script could make run
    /// long are bounded or stop as well. Measured by the watchdog: a call
    /// stops between this and this plus two `watchdog_interval`s.
    ///
    /// Two seconds by default: a game calls its handlers every frame and
    /// they take milliseconds, so this is far beyond any handler that works,
    /// yet a mod that hangs is stopped before the user gives up on the host.
    /// A mod whose top level really takes longer (building large tables at
    /// load) needs a larger limit (`--time-limit`).
    /// `None`: unlimited.
    pub time_limit: Option<Duration>,
    /// How long a call runs before the budget's hook is armed. 10 ms by
    /// default.
    pub watchdog_interval: Duration,
    /// The wall-clock budget of one call from the host into Lua (a
    /// listener, hook, reply or top level, with what it calls), counted
    /// from its first instruction: past it the call stops with "call budget
    /// of N µs exceeded" at the script's line, within about a thousand
    /// instructions. A game sets what a frame can afford (2 ms, say); a
    /// listener so stopped is reported and the others go on with half a
    /// budget. It costs a clock read per call: the instruction hook is
    /// armed by the watchdog, which looks every quarter of the budget
    /// while one is set, only for a call still running then. `None` by
    /// default.
    pub call_budget: Option<Duration>,
    /// Rewrite literal-key calls into baked calls at load (on by default;
    /// off runs every call through the generic functions).
    pub rewrite: bool,
    /// The mod folder `require` resolves in (`None`, the default: no
    /// `require`).
    pub mod_dir: Option<PathBuf>,
    /// The most rows `StoredArray:SetNum` may give a table (`None`:
    /// unlimited). A table's rows live in the hub's memory, outside the Lua
    /// state's `memory_limit`, and one `SetNum` could otherwise ask for
    /// gigabytes (`Add` and `Insert` grow a row at a time, under the
    /// instruction budget). 1,000,000 by default.
    pub max_table_rows: Option<usize>,
    /// The hub memory this runtime's scripts may hold (`None`: unlimited):
    /// the messages they store, the tables they write, their listeners and
    /// the keys they name. It lives in the hub, outside the Lua state's
    /// `memory_limit`; past it the call that asked fails at its line (see
    /// `gantry_host::quota`). 256 MiB by default.
    pub hub_memory_limit: Option<usize>,
    /// Every VM instruction this runtime's scripts run is counted here
    /// too, across calls (`gantry run --profile`'s instructions per
    /// listener); `None`, the default, counts nothing more and changes
    /// nothing. With a counter the budget's hook is armed from a call's
    /// first instruction and called every 200 instructions on average
    /// (at random steps, 100 to 300), each step's instructions added when
    /// it ends: a reading taken around a call is an unbiased sample of its
    /// instructions, within a step or so of the truth for a single call
    /// (more precise the more instructions it sums). The `budget` then
    /// counts from a call's first instruction. A count hook makes every
    /// instruction trap into the VM's hook check, whatever the step: Lua
    /// code runs two to three times slower while counting (a tight loop,
    /// measured; C functions and the host's calls are not slowed).
    pub instruction_counter: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

/// The default [`LuaOptions::budget`].
pub const DEFAULT_BUDGET: u64 = 100_000_000;

impl Default for LuaOptions {
    fn default() -> Self {
        Self {
            memory_limit: Some(256 * 1024 * 1024),
            budget: Some(DEFAULT_BUDGET),
            time_limit: Some(Duration::from_secs(2)),
            watchdog_interval: Duration::from_millis(10),
            call_budget: None,
            rewrite: true,
            mod_dir: None,
            max_table_rows: Some(1_000_000),
            hub_memory_limit: Some(Quota::DEFAULT_SCRIPT_LIMIT),
            instruction_counter: None,
        }
    }
}

/// A loaded script as the runtime keeps it: what reloading it needs (its
/// file, object and grants), its environment (its globals) and what it
/// registered.
#[derive(Clone)]
struct LuaScript {
    file: Rc<str>,
    object: ObjectId,
    grants: Option<Rc<ModGrants>>,
    env: Table,
    registered: Rc<Registrations>,
}

impl Loaded for LuaScript {
    fn registrations(&self) -> &Registrations {
        &self.registered
    }
}

/// The Lua runtime. Field order matters: the watchdog stops before the Lua
/// state can close.
pub struct LuaRuntime {
    watchdog: Watchdog,
    shared: Rc<Shared>,
    scripts: Scripts<LuaScript>,
    lua: Lua,
}

impl LuaRuntime {
    /// A runtime on `hub`.
    pub fn new(hub: Hub, options: LuaOptions) -> Result<Self, LuaError> {
        // What the scripts keep in the hub is charged to the runtime.
        let hub = hub.charged_to(Quota::new(options.hub_memory_limit.unwrap_or(usize::MAX)));
        let lua = Lua::new_with(StdLib::ALL_SAFE, mlua::LuaOptions::default())?;
        if let Some(limit) = options.memory_limit {
            lua.set_memory_limit(limit)?;
        }
        let mut main = std::ptr::null_mut();
        // SAFETY: called from host code, so the state is the main thread.
        unsafe { lua.exec_raw::<()>((), |state| main = state) }?;
        // SAFETY: `main` is this state's main thread; the watchdog is a field
        // of the runtime that owns the state and is dropped first.
        let watchdog = unsafe {
            Watchdog::start(
                main,
                Limits {
                    instructions: options.budget.unwrap_or(u64::MAX),
                    memory: options.memory_limit,
                    time: options.time_limit.unwrap_or(Duration::MAX),
                    interval: options.watchdog_interval,
                    call: options.call_budget,
                    counter: options.instruction_counter.clone(),
                },
            )
        }
        .map_err(|e| LuaError::Setup(format!("cannot start the watchdog thread: {e}")))?;
        let fast = fast::FastLane::new(&lua)?;
        let factory = sandbox::factory(&lua, &fast, watchdog.budget(), options.memory_limit)?;
        let owned = lua.create_table()?;
        let mode = lua.create_table()?;
        mode.raw_set("__mode", "k")?;
        owned.set_metatable(Some(mode))?;
        let owned_fns = lua.create_table()?;
        let mode = lua.create_table()?;
        mode.raw_set("__mode", "v")?;
        owned_fns.set_metatable(Some(mode))?;
        let shared = Rc::new(Shared::new(
            hub,
            &lua,
            watchdog.budget().clone(),
            owned,
            owned_fns,
            &options,
            factory,
            fast,
        ));
        let weak = Rc::downgrade(&shared);
        shared.fast.epoch_moved(shared.hub.epoch(), &shared.hub);
        shared.hub.watch_epoch(move |epoch| {
            if let Some(shared) = weak.upgrade() {
                shared.fast.epoch_moved(epoch, &shared.hub);
            }
        });
        lua.set_app_data(shared.clone());
        Ok(Self {
            watchdog,
            shared,
            scripts: Scripts::default(),
            lua,
        })
    }

    pub fn hub(&self) -> &Hub {
        &self.shared.hub
    }

    /// The Lua state (for host functions of the embedding game).
    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// Turns the load-time rewrite on or off for scripts loaded from now on.
    pub fn set_rewrite(&self, on: bool) {
        self.shared.rewrite.set(on);
    }

    /// Changes the budget of each call (see [`LuaOptions::budget`];
    /// `None`: unlimited).
    pub fn set_budget(&self, steps: Option<u64>) {
        self.watchdog.budget().set_limit(steps.unwrap_or(u64::MAX));
    }

    /// Changes the time limit of each call (see
    /// [`LuaOptions::time_limit`]; `None`: unlimited).
    pub fn set_time_limit(&self, limit: Option<Duration>) {
        self.watchdog
            .budget()
            .set_time_limit(limit.unwrap_or(Duration::MAX));
    }

    /// Changes the wall-clock budget of each call (see
    /// [`LuaOptions::call_budget`]; `None`: none).
    pub fn set_call_budget(&self, budget: Option<Duration>) {
        self.watchdog.budget().set_call_budget(budget);
    }

    /// Charges every call into this runtime to a mod's per-frame budget
    /// (`None`, the default: none), shared with the mod's other runtimes:
    /// once the frame's budget is spent, the call under way stops at its
    /// line and the mod's later calls that frame stop at their first
    /// instruction, each reported as its listener's failure with the text
    /// of [`gantry_host::reports::Spent`], until
    /// [`gantry_host::reports::FrameBudget::new_frame`].
    pub fn set_frame_budget(&self, frame: Option<gantry_host::reports::FrameBudget>) {
        self.watchdog.budget().set_frame(frame);
    }

    /// A handle that stops this runtime's scripts from another thread (the
    /// CLI's Ctrl-C): see [`Interrupter::interrupt`]. `Send`, `Sync` and
    /// cheap to clone.
    pub fn interrupter(&self) -> Interrupter {
        self.watchdog.interrupter()
    }

    /// Loads a script attached to `object` and runs its top level. `file` is
    /// the name errors and recorded call sites use (`player.lua`). A failing
    /// top level is returned (and not filed as well).
    pub fn load_script(
        &self,
        file: &str,
        source: &str,
        object: ObjectId,
    ) -> Result<ScriptId, LuaError> {
        self.load_script_granted(file, source, object, None)
    }

    /// Runs `source` as `file` on `object` in a fresh environment, noting
    /// what it registers in `registered`. A failing top level is returned
    /// (and not filed as well); what it registered before failing stays.
    fn run_script(
        &self,
        file: &str,
        source: &str,
        object: ObjectId,
        grants: Option<Rc<ModGrants>>,
        registered: Rc<Registrations>,
    ) -> Result<LuaScript, LuaError> {
        let world: WorldId = self
            .hub()
            .world_of(object)
            .ok_or_else(|| LuaError::Setup(format!("{file}: {object} does not exist")))?;
        let name: Rc<str> = Rc::from(file);
        let ctx = Ctx::new(
            name.clone(),
            object,
            world,
            self.shared.clone(),
            grants.clone(),
        );
        let ctx = Rc::new(ctx.noting_in(registered.clone()));
        let env_cell = std::cell::RefCell::new(None);
        let result = loader::run_chunk_keeping_env(&ctx, &self.lua, source, &env_cell);
        match (result, env_cell.into_inner()) {
            (Ok(_), Some(env)) => Ok(LuaScript {
                file: name,
                object,
                grants,
                env,
                registered,
            }),
            (Ok(_), None) => Err(LuaError::Setup(format!("{file}: no environment was made"))),
            (Err(e), _) => Err(ScriptError::from_message(file, self.shared.error_text(&e)).into()),
        }
    }

    /// Reads a global of a loaded script.
    pub fn global<T: FromLua>(&self, script: ScriptId, name: &str) -> Result<T, LuaError> {
        let loaded = self.scripts.get(script).ok_or(NotLoaded(script))?;
        Ok(loaded.env.raw_get(name)?)
    }

    /// Runs a full garbage collection (owners held only by Lua go away).
    pub fn collect_garbage(&self) -> Result<(), LuaError> {
        self.lua.gc_collect()?;
        self.lua.gc_collect()?;
        Ok(())
    }

    /// Bytes the Lua state uses.
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }
}

impl LanguageRuntime for LuaRuntime {
    type Error = LuaError;
    const EXTENSION: &'static str = "lua";

    /// Compiles `source` without running it: what a host checks before it
    /// replaces a running script with a new version (`gantry run --watch`).
    fn check_syntax(&self, file: &str, source: &str) -> Result<(), LuaError> {
        self.lua
            .load(source)
            .set_name(format!("@{file}"))
            .set_mode(mlua::chunk::ChunkMode::Text)
            .into_function()
            .map(|_| ())
            .map_err(|e| ScriptError::from_message(file, error_text(&e)).into())
    }

    /// [`LuaRuntime::load_script`] for a script of a mod with `grants`:
    /// every API call the script (and each module it requires) makes is
    /// checked against them; `None`: it may use everything.
    fn load_script_granted(
        &self,
        file: &str,
        source: &str,
        object: ObjectId,
        grants: Option<Rc<ModGrants>>,
    ) -> Result<ScriptId, LuaError> {
        let registered = Rc::default();
        let script = self.run_script(file, source, object, grants, registered)?;
        Ok(self.scripts.insert(script))
    }

    /// Unloads `script` (see [`ScriptRuntime::unload`](gantry_host::face::ScriptRuntime::unload)). Its environment —
    /// its globals, functions and what they capture — is no longer
    /// referenced and goes with the next garbage collection.
    fn unload_script(&self, script: ScriptId) -> bool {
        self.scripts.unload(self.hub(), script).is_some()
    }

    /// Swaps `script` for `source` in place (see [`ScriptRuntime::reload`](gantry_host::face::ScriptRuntime::reload)):
    /// the new version runs in a fresh environment on the same object,
    /// with the same file name and grants.
    fn reload_script(&self, script: ScriptId, source: &str) -> Result<(), LuaError> {
        self.scripts
            .reload(self.hub(), script, |old, registered| {
                let grants = old.grants.clone();
                self.run_script(&old.file, source, old.object, grants, registered)
            })
            .map(drop)
    }

    fn script_output(&self) -> &ScriptOutput {
        &self.shared.output
    }
}
