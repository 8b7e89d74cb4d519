//! The Rhai runtime: one engine hosting many scripts on a hub.
//!
//! A map of the module:
//! - [`RhaiRuntime`]: create it on a [`Hub`], load scripts (each attached to
//!   a hub object, its `SELF`), unload or reload one in place (see
//!   [`ScriptRuntime::unload`](gantry_host::face::ScriptRuntime::unload):
//!   what it registered goes, its object and what is stored there stay),
//!   read what scripts print and their errors (the host's
//!   [`ScriptRuntime`](gantry_host::face::ScriptRuntime) trait).
//! - `loader`: the load-time bake into per-key functions, then the top level.
//! - `register`: the generic, object and baked functions on the engine.
//! - `api`: the script API's core, reached by generic and baked functions.
//! - `lane`: baked Rhai → Rhai sends delivered without the hub's values.
//! - `listen`: Rhai functions as hub listeners (messages, rows, whole
//!   tables), hook listeners and replies.
//! - `writer`: the stored-array writer value ([`StoredArrayHandle`]).
//! - `convert`: values by the hub's value model (how maps name structs).
//! - `handles`: objects, worlds, named sources, responders, hook contexts.
//! - `sandbox`: the engine's packages and limits; `resolver`: `import`
//!   inside the mod folder only.
//! - `watchdog`: the time limit of calls and the host's interrupt.
//! - `bounded`: the built-ins the sandbox replaces (`sleep`, `replace`).
//! - `shared`: what all scripts of a runtime share; `error`.
//!
//! ## Conventions in scripts
//! - `SELF` is a constant holding the script's object (top level and
//!   closures); `This()` returns the object of the script whose code is
//!   running (also inside `fn` definitions, which cannot see `SELF`).
//! - An owner of `()` is the calling script's object (or pass an object).
//! - Listen options are object maps; `match` is a Rhai keyword, so quote
//!   it: `#{ times: 1, order: -10, "match": "partial" }`.
//! - A listener of a request gets a responder after the parameters:
//!   `|a, b, rsp| rsp.Response(a + b)`.
//! - Hook listeners are `fn(payload, ctx)`; changes to a map payload are
//!   seen, and a returned value replaces the payload. `RunHook` returns
//!   `#{ ran, handled, cancelled, payload }`.
//! - `GMP::Request(obj, key, args...)` is synchronous (Rhai has no
//!   coroutines): it returns the reply given during the send (one value,
//!   or an array of several) and raises an error naming the key when
//!   nobody answers then. For answers that come later, use
//!   `SendObjectMessage(obj, key, args..., |reply| ...)`.
//!
//! ## Collections (a stored array of structs is a table)
//! - `ListenRowMessage(obj, key, owner, index, |row, item| ... [, opts])`:
//!   rows are 0-based; `index` is a slot `n`, `GMP::WithRemoval(n)` (`!n`),
//!   `GMP::ALL_ROWS` or `GMP::ALL_ROWS_WITH_REMOVAL` (also `GMP::AllRows`,
//!   `GMP::AllRowsWithRemoval`). A removed row arrives as a negative row
//!   (`!row`, i.e. `-row - 1`) with a default-valued item. A function
//!   declaring a third parameter gets the update:
//!   `#{ total, prev_total, ranges: [#{ index, count }, ...], full_reload }`.
//! - A `Listen*Message` on a key already known as a table (declared,
//!   stored or first used) whose function takes two parameters is a
//!   whole-table listener: `|items, update|`. On a key not known yet it is
//!   an ordinary listener.
//! - `let items = GMP::StoredArray(obj, key);` opens the writer: `Num()`,
//!   `Get(i)` / `items[i]` (a copy, never marks), `Set(i, item)`,
//!   `items[i] = item`, `items[i].field = v` (write and mark the row),
//!   `let row = items.GetMutable(i); row.field = v;` (marks the row; its
//!   fields write through), `Add(item)`, `Insert(i, item)`, `RemoveAt(i)`
//!   (returns the row), `SetNum(n)`, `Commit()` / `commit()` (publish now,
//!   stay open; returns how many listeners were called). It publishes once
//!   when its last copy is dropped — the end of the block holding it; a
//!   writer in a top-level variable lives as long as the script, so commit
//!   it or open it in a block.
//!
//! Single-threaded like the hub: the runtime is `!Send`.

mod api;
mod bounded;
mod convert;
mod depth;
mod error;
mod handles;
mod lane;
mod listen;
mod loader;
mod nested;
mod register;
mod resolver;
mod sandbox;
mod shared;
mod stack;
mod watchdog;
mod writer;

use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use gantry_host::face::{LanguageRuntime, Loaded, ModGrants, Registrations, ScriptOutput, Scripts};
use gantry_host::{Hub, ObjectId};
use rhai::Dynamic;

pub use error::{RhaiError, ScriptError};
pub use gantry_host::face::{STRUCT_FIELD, ScriptId};
pub use handles::{HookCtx, NamedHandle, ObjectHandle, ResponderHandle, WorldHandle};
pub use loader::SELF_CONSTANT;
pub use register::MAX_ARGS;
pub use watchdog::Interrupter;
pub use writer::{RowHandle, StoredArrayHandle};

use shared::{Limits, Script, Shared};

/// How a runtime is set up. Limits of 0 mean unlimited.
#[derive(Debug, Clone)]
pub struct RhaiOptions {
    /// Steps one handler call (listener, hook, reply) may run, a step
    /// being a Rhai operation (`None`: unlimited). 20,000,000 by default:
    /// about 0.6 s of a tight loop, as Lua's default of its cheaper
    /// instructions is (measured with `gantry run --budget`).
    pub budget: Option<u64>,
    /// Steps a script's top level may run (`None`: unlimited); the same
    /// default as `budget`, 20,000,000.
    pub top_level_budget: Option<u64>,
    /// Wall-clock time one outermost call (a top level, or a listener,
    /// hook or reply the host runs) may take, with every handler call it
    /// sets off; `None`: unlimited. The default, 2 s, is far beyond what a
    /// game's handler should spend yet short enough that a mod stuck in a
    /// loop the operation limit does not see (time spent in built-ins, in
    /// callbacks they run, in calls it sets off) cannot freeze the host for
    /// long. Stopped calls fail with `time limit exceeded`.
    pub time_limit: Option<Duration>,
    /// The wall-clock budget of one outermost call (a listener, hook,
    /// reply or top level, with every handler call it sets off), counted
    /// from its first operation: past it the call stops with `time limit
    /// exceeded` naming the budget, within a few hundred operations. A game
    /// sets what a frame can afford (2 ms, say). `None` by default: then
    /// only `time_limit` applies, and the clock is never read.
    pub call_budget: Option<Duration>,
    /// How deep script function calls may nest. 64 by default.
    pub max_call_depth: usize,
    /// Longest string a script may build (bytes). 1 MiB by default.
    pub max_string_size: usize,
    /// Most elements an array may hold. 100,000 by default.
    pub max_array_size: usize,
    /// Most entries a map (object map) may hold. 100,000 by default.
    pub max_map_size: usize,
    /// Bake literal-key calls at load (on by default; off runs every call
    /// through the generic functions).
    pub rewrite: bool,
    /// The mod folder `import` resolves in (`None`, the default: no
    /// `import`).
    pub mod_dir: Option<PathBuf>,
    /// The hub memory this runtime's scripts may hold, in bytes: the
    /// messages they store, the tables they write, their listeners and the
    /// keys they name. Past it the call that asked fails at its line (see
    /// `gantry_host::quota`). `None`: unlimited; 256 MiB by default.
    pub hub_memory_limit: Option<usize>,
    /// Every operation this runtime's scripts run is counted here too,
    /// across calls (`gantry run --profile`'s operations per listener);
    /// `None` counts nothing more.
    pub operation_counter: Option<std::rc::Rc<std::cell::Cell<u64>>>,
}

/// The default [`RhaiOptions::budget`] and `top_level_budget`.
pub const DEFAULT_BUDGET: u64 = 20_000_000;

impl Default for RhaiOptions {
    fn default() -> Self {
        Self {
            budget: Some(DEFAULT_BUDGET),
            top_level_budget: Some(DEFAULT_BUDGET),
            time_limit: Some(Duration::from_secs(2)),
            call_budget: None,
            max_call_depth: 64,
            max_string_size: 1 << 20,
            max_array_size: 100_000,
            max_map_size: 100_000,
            rewrite: true,
            mod_dir: None,
            hub_memory_limit: Some(gantry_host::Quota::DEFAULT_SCRIPT_LIMIT),
            operation_counter: None,
        }
    }
}

/// The error of a runtime whose time limit cannot be kept.
fn no_watchdog(e: std::io::Error) -> RhaiError {
    RhaiError::Setup(format!(
        "cannot start the time limit's watchdog thread: {e}"
    ))
}

/// A loaded script as the runtime keeps it (its file, object, grants,
/// AST and top-level variables are the [`Script`]'s).
#[derive(Clone)]
struct RhaiScript(Rc<Script>);

impl Loaded for RhaiScript {
    fn registrations(&self) -> &Registrations {
        &self.0.registered
    }
}

/// The Rhai runtime.
pub struct RhaiRuntime {
    shared: Rc<Shared>,
    scripts: Scripts<RhaiScript>,
}

impl Drop for RhaiRuntime {
    /// The scripts' variables may hold values nested as deep as the size
    /// limits allow: they are dropped on the script stack (see `stack`),
    /// where Rhai's recursive drop of them fits.
    fn drop(&mut self) {
        let scripts = self.scripts.take_all();
        if let Err(scripts) = self.shared.limits.stack.run(move || drop(scripts)) {
            tracing::warn!("cannot reserve the script stack to drop the scripts: {scripts}");
        }
    }
}

impl RhaiRuntime {
    /// A runtime on `hub`.
    pub fn new(hub: Hub, options: RhaiOptions) -> Result<Self, RhaiError> {
        // What the scripts keep in the hub is charged to the runtime.
        let hub = hub.charged_to(gantry_host::Quota::new(
            options.hub_memory_limit.unwrap_or(usize::MAX),
        ));
        let limits = Rc::new(Limits::new(&options).map_err(no_watchdog)?);
        limits.clock.set_call_budget(options.call_budget);
        let output = ScriptOutput::new();
        let shared = Rc::new_cyclic(|weak| {
            let mut engine = sandbox::engine(&options, limits.clone(), output.print_sink());
            handles::register(&mut engine, weak);
            writer::register(&mut engine);
            register::install(&mut engine, weak);
            Shared::new(hub, engine, limits, output, options.rewrite)
        });
        Ok(Self {
            shared,
            scripts: Scripts::default(),
        })
    }

    pub fn hub(&self) -> &Hub {
        &self.shared.hub
    }

    /// Turns baking on or off for scripts loaded from now on.
    pub fn set_rewrite(&self, on: bool) {
        self.shared.rewrite.set(on);
    }

    /// Changes the budgets of a handler call and of a top level (see
    /// [`RhaiOptions::budget`]; `None`: unlimited).
    pub fn set_budget(&self, per_call: Option<u64>, top_level: Option<u64>) {
        self.shared.limits.per_call.set(per_call.unwrap_or(0));
        self.shared.limits.top_level.set(top_level.unwrap_or(0));
    }

    /// Changes the time limit of each outermost call (`None`: unlimited).
    pub fn set_time_limit(&self, limit: Option<Duration>) -> Result<(), RhaiError> {
        self.shared
            .limits
            .clock
            .set_limit(limit.unwrap_or(Duration::ZERO))
            .map_err(no_watchdog)
    }

    /// Changes the wall-clock budget of each outermost call (see
    /// [`RhaiOptions::call_budget`]; `None`: none).
    pub fn set_call_budget(&self, budget: Option<Duration>) {
        self.shared.limits.clock.set_call_budget(budget);
    }

    /// Charges every outermost call into this runtime to a mod's per-frame
    /// budget (`None`, the default: none), shared with the mod's other
    /// runtimes: once the frame's budget is spent, the call under way
    /// stops and the mod's later calls that frame stop at their first
    /// operation, with the text of [`gantry_host::reports::Spent`], until
    /// [`gantry_host::reports::FrameBudget::new_frame`].
    pub fn set_frame_budget(&self, frame: Option<gantry_host::reports::FrameBudget>) {
        self.shared.limits.clock.set_frame(frame);
    }

    /// A handle another thread (a Ctrl-C handler) uses to stop the script
    /// call running now: it fails at its next operation with an
    /// `interrupted` error. See [`Interrupter`].
    pub fn interrupter(&self) -> Interrupter {
        self.shared.limits.clock.interrupter()
    }

    /// Loads a script attached to `object` and runs its top level. `file`
    /// names it in errors and recorded call sites (`player.rhai`).
    pub fn load_script(
        &self,
        file: &str,
        source: &str,
        object: ObjectId,
    ) -> Result<ScriptId, RhaiError> {
        self.load_script_granted(file, source, object, None)
    }

    /// How many script environments are alive: the loaded scripts, and
    /// unloaded ones something still holds (a call of theirs running, a
    /// reply they wait for). A host checks with it that unloading frees.
    pub fn live_environments(&self) -> usize {
        self.shared.alive.get()
    }

    /// Drops scripts here, on the script stack: their variables may nest
    /// as deep as the size limits allow (see `stack`).
    fn drop_on_stack<T>(&self, scripts: T) {
        if let Err(e) = self.shared.limits.stack.run(move || drop(scripts)) {
            tracing::warn!("cannot reserve the script stack to drop a script: {e}");
        }
    }

    /// A top-level variable of a loaded script, after its top level ran.
    /// `None` also for a value nested deeper than the host takes
    /// ([`gantry_host::face::MAX_DEPTH`] levels, closures' captured values
    /// counted): Rhai copies and drops values by recursion, which for a
    /// deeper one does not fit the host's stack.
    pub fn global(&self, script: ScriptId, name: &str) -> Option<Dynamic> {
        let RhaiScript(script) = self.scripts.get(script)?;
        let scope = script.scope.borrow();
        self.shared
            .limits
            .stack
            .run(|| {
                scope
                    .get_value::<Dynamic>(name)
                    .and_then(|value| listen::handed_out(value).ok())
            })
            .ok()
            .flatten()
    }

    /// Calls `name` in a loaded script with `args`, under the per-call
    /// limit: a top-level variable holding a function pointer or closure,
    /// else a function the script defines.
    pub fn call(
        &self,
        script: ScriptId,
        name: &str,
        args: Vec<Dynamic>,
    ) -> Result<Dynamic, ScriptError> {
        let RhaiScript(script) = self.scripts.get(script).ok_or_else(|| {
            error::at("?", rhai::Position::NONE, format!("{script} is not loaded"))
        })?;
        let held = script.scope.borrow().get_value::<rhai::FnPtr>(name);
        let f = match held {
            Some(f) => f,
            None => rhai::FnPtr::new(name)
                .map_err(|e| error::at(&script.file, rhai::Position::NONE, e.to_string()))?,
        };
        listen::call_fn(&self.shared, &script, &f, args)
    }

    /// Rhai definitions (`.d.rhai` text) of every function the engine
    /// knows, baked per-key functions included with their parameters.
    pub fn definitions(&self) -> String {
        self.shared.engine.borrow().definitions().single_file()
    }
}

impl LanguageRuntime for RhaiRuntime {
    type Error = RhaiError;
    const EXTENSION: &'static str = "rhai";

    /// Compiles `source` without running it: what a host checks before it
    /// replaces a running script with a new version (`gantry run --watch`).
    fn check_syntax(&self, file: &str, source: &str) -> Result<(), RhaiError> {
        self.shared
            .engine
            .borrow()
            .compile(source)
            .map(|_| ())
            .map_err(|e| error::from_parse(file, &e).into())
    }

    /// [`RhaiRuntime::load_script`] for a script of a mod with `grants`:
    /// every API call the script makes is checked against them; `None`:
    /// it may use everything.
    fn load_script_granted(
        &self,
        file: &str,
        source: &str,
        object: ObjectId,
        grants: Option<Rc<ModGrants>>,
    ) -> Result<ScriptId, RhaiError> {
        let script = loader::load(&self.shared, file, source, object, grants, Rc::default())?;
        Ok(self.scripts.insert(RhaiScript(script)))
    }

    /// Unloads `script` (see
    /// [`ScriptRuntime::unload`](gantry_host::face::ScriptRuntime::unload)).
    /// Its environment — the compiled script, its top-level variables and
    /// closures — is dropped once no call of it runs, on the script stack;
    /// a stored-array writer it kept in a variable publishes as it goes.
    fn unload_script(&self, script: ScriptId) -> bool {
        match self.scripts.unload(self.hub(), script) {
            Some(script) => {
                self.drop_on_stack(script);
                true
            }
            None => false,
        }
    }

    /// Swaps `script` for `source` in place (see
    /// [`ScriptRuntime::reload`](gantry_host::face::ScriptRuntime::reload)):
    /// the new version compiles and runs with a fresh scope on the same
    /// object, with the same file name and grants.
    fn reload_script(&self, script: ScriptId, source: &str) -> Result<(), RhaiError> {
        let replaced = self
            .scripts
            .reload(self.hub(), script, |RhaiScript(old), registered| {
                let (file, object, grants) = (&old.file, old.object, old.grants.clone());
                loader::load(&self.shared, file, source, object, grants, registered).map(RhaiScript)
            })?;
        self.drop_on_stack(replaced);
        Ok(())
    }

    fn script_output(&self) -> &ScriptOutput {
        &self.shared.output
    }
}
