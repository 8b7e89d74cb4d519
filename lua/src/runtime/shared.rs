//! What every script of one runtime shares: the hub, the Lua state (weakly),
//! the budget, the owner tables and the output (print and errors).

use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use gantry_host::face::{self, ApiError, KeyRef, ScriptOutput};
use gantry_host::{Hub, Type, Value};
use mlua::{Lua, MultiValue, Table, Value as LuaValue, WeakLua};

use super::budget::Budget;
use super::convert::{any_table, scalar_to_value, to_value};
use super::error::ScriptError;
use super::fast::FastLane;
use super::traceback::{BakedNames, mod_frames_only};

/// How many Lua calls may nest through the hub (a handler sending to a
/// handler sending ...) before the next one fails instead of running.
pub const MAX_NESTING: u32 = 32;

/// Arguments on their way to the hub; scalars stay on the stack.
pub(crate) type Args = gantry_host::face::call::Values;

pub(crate) struct Shared {
    pub hub: Hub,
    pub lua: WeakLua,
    pub budget: Arc<Budget>,
    /// How deep the host is inside Lua calls (0 = host code).
    depth: Cell<u32>,
    /// Where `print` goes, and the errors no hub report carries.
    pub output: ScriptOutput,
    /// Ephemeron table (weak keys): owner → { token = OwnerToken, [slot] = fn }.
    /// Its values live only while their owner does, so a listener closure
    /// that captures its owner does not keep the owner alive.
    pub owned: Table,
    /// Weak-valued: slot → fn, how the hub's callback finds the function.
    pub owned_fns: Table,
    next_slot: Cell<i64>,
    pub mod_dir: Option<PathBuf>,
    pub rewrite: Cell<bool>,
    /// See [`LuaOptions::max_table_rows`](super::LuaOptions::max_table_rows).
    pub max_table_rows: Option<usize>,
    /// Builds a sandboxed environment (see `sandbox`).
    pub env_factory: Table,
    /// Baked sends to Lua listeners, delivered from Lua (see `fast`).
    pub fast: FastLane,
    /// What each chunk's baked calls are, for tracebacks.
    pub baked: BakedNames,
}

impl Shared {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        hub: Hub,
        lua: &Lua,
        budget: Arc<Budget>,
        owned: Table,
        owned_fns: Table,
        options: &super::LuaOptions,
        env_factory: Table,
        fast: FastLane,
    ) -> Self {
        Self {
            hub,
            lua: lua.weak(),
            budget,
            depth: Cell::new(0),
            output: ScriptOutput::new(),
            owned,
            owned_fns,
            next_slot: Cell::new(0),
            mod_dir: options.mod_dir.clone(),
            rewrite: Cell::new(options.rewrite),
            max_table_rows: options.max_table_rows,
            env_factory,
            fast,
            baked: BakedNames::default(),
        }
    }

    /// The text of a Lua error of this runtime's scripts for a report (see
    /// [`error_text_with`]).
    pub fn error_text(&self, error: &mlua::Error) -> String {
        error_text_with(error, Some(&self.baked))
    }

    /// Runs `f` as a call into Lua: the outermost one starts and ends the
    /// instruction budget.
    #[inline]
    pub fn guarded<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Exit<'a>(&'a Shared, u32);
        impl Drop for Exit<'_> {
            #[inline]
            fn drop(&mut self) {
                self.0.depth.set(self.1);
                if self.1 == 0 {
                    self.0.budget.exit();
                    // A spent budget can stop a sandbox coroutine wrapper
                    // between its lane block and unblock.
                    self.0.fast.settle();
                }
            }
        }
        let depth = self.depth.get();
        if depth == 0 {
            self.budget.enter();
        }
        self.depth.set(depth + 1);
        let _exit = Exit(self, depth);
        f()
    }

    /// Is the host already [`MAX_NESTING`] Lua calls deep? A listener that
    /// sends what it listens to would otherwise recurse until the native
    /// stack overflows.
    #[inline]
    pub fn too_deep(&self) -> bool {
        self.depth.get() >= MAX_NESTING
    }

    /// Files an error that no hub report carries (top levels, replies,
    /// coroutine resumes).
    pub fn report(&self, error: ScriptError) {
        self.output.report(error);
    }

    pub fn next_slot(&self) -> i64 {
        let slot = self.next_slot.get() + 1;
        self.next_slot.set(slot);
        slot
    }

    /// The recorded parameter types of a key (only asked for when a table
    /// is among the arguments).
    pub fn param_types(&self, key: &str) -> Vec<Type> {
        face::param_types(&self.hub, key)
    }

    /// Converts send arguments, tables by the key's signature.
    pub fn values_for(&self, key: &KeyRef, args: &[LuaValue]) -> Result<Args, ApiError> {
        let bad = |position: usize, why: String| ApiError::BadValue {
            key: key.text.clone(),
            position,
            why,
        };
        let mut out = Args::with_capacity(args.len());
        if !any_table(args) {
            for (i, arg) in args.iter().enumerate() {
                match scalar_to_value(arg) {
                    Some(Ok(v)) => out.push(v),
                    Some(Err(e)) => return Err(bad(i + 1, e)),
                    None => unreachable!("no tables here"),
                }
            }
            return Ok(out);
        }
        let types = self.param_types(&key.text);
        let table = self.hub.table();
        for (i, arg) in args.iter().enumerate() {
            out.push(to_value(arg, types.get(i), &table.structs).map_err(|e| bad(i + 1, e))?);
        }
        Ok(out)
    }

    /// Converts the values of `rsp:Response(...)` by the key's response types.
    pub fn response_values(&self, key: &str, args: MultiValue) -> mlua::Result<Vec<Value>> {
        let types = face::response_types(&self.hub, key);
        let table = self.hub.table();
        args.iter()
            .enumerate()
            .map(|(i, a)| {
                to_value(a, types.get(i), &table.structs).map_err(|e| {
                    mlua::Error::runtime(format!("response of `{key}` value {}: {e}", i + 1))
                })
            })
            .collect()
    }
}

/// The runtime's shared state, from inside a Lua callback.
pub(crate) fn shared_of(lua: &Lua) -> mlua::Result<Rc<Shared>> {
    lua.app_data_ref::<Rc<Shared>>()
        .map(|s| s.clone())
        .ok_or_else(|| mlua::Error::runtime("the gantry runtime is gone"))
}

/// `file:line: ` of the script code calling the current Rust function:
/// the first frame with a line that is not the runtime's own Lua
/// (`=gantry-...` chunks such as the sandbox's wrappers). C frames have no
/// line and are passed over: a baked send's C function calling its slow
/// way, or a script's `pcall(NotifyMessage, ...)`.
pub(crate) fn caller_place(lua: &Lua) -> Option<(String, u32)> {
    for level in 1..8 {
        let frame = lua.inspect_stack(level, |d| {
            let source = d.source();
            if source
                .source
                .as_deref()
                .is_some_and(|s| s.starts_with("=gantry-"))
            {
                return None;
            }
            let src = source.short_src.map(|s| s.into_owned())?;
            let line = d.current_line()? as u32;
            Some(Some((src, line)))
        })?;
        if let Some(place) = frame {
            return place;
        }
    }
    None
}

/// A wrong argument or option as an error message names it: a number or
/// short string by its value, anything else by its type.
pub(crate) fn describe_value(value: &LuaValue) -> String {
    match value {
        LuaValue::Integer(i) => format!("an integer ({i})"),
        LuaValue::Number(x) => format!("a number ({x})"),
        LuaValue::String(s) if s.as_bytes().len() <= 40 => {
            format!("\"{}\"", s.to_string_lossy())
        }
        LuaValue::String(_) => "a string".to_owned(),
        other => format!("a {}", other.type_name()),
    }
}

/// A whole number given as a Lua integer or as an integral float (`5.0`)
/// small enough to be exact; `None` for anything else.
pub(crate) fn whole_number(value: &LuaValue) -> Option<i64> {
    match value {
        LuaValue::Integer(i) => Some(*i),
        LuaValue::Number(x) if x.fract() == 0.0 && x.abs() <= 2f64.powi(53) => Some(*x as i64),
        _ => None,
    }
}

/// A Lua error raised at the calling script's line.
pub(crate) fn error_here(lua: &Lua, message: impl std::fmt::Display) -> mlua::Error {
    match caller_place(lua) {
        Some((file, line)) => mlua::Error::runtime(format!("{file}:{line}: {message}")),
        None => mlua::Error::runtime(message.to_string()),
    }
}

/// The text of a Lua error for reports: message first, traceback after,
/// cut to the mod's own frames (see `traceback`); baked calls are named as
/// written when `baked` knows them.
pub(crate) fn error_text_with(error: &mlua::Error, baked: Option<&BakedNames>) -> String {
    match error {
        mlua::Error::RuntimeError(message) => mod_frames_only(message, baked),
        mlua::Error::CallbackError { traceback, cause } => format!(
            "{}\n{}",
            error_text_with(cause, baked),
            mod_frames_only(traceback, baked)
        )
        .trim_end()
        .to_owned(),
        // Lua raises a refused allocation without calling any message
        // handler, so the line is lost: the soft limit (see `budget`)
        // names it whenever memory fills step by step in a long call.
        mlua::Error::MemoryError(_) => "memory limit of the Lua state exceeded (by a single \
             allocation, or before the soft limit was checked: Lua reports no line for it)"
            .to_owned(),
        mlua::Error::WithContext { context, cause } => {
            format!("{context}: {}", error_text_with(cause, baked))
        }
        other => other.to_string(),
    }
}

/// [`error_text_with`] where no runtime is at hand: baked calls are left
/// out of the traceback rather than named.
pub(crate) fn error_text(error: &mlua::Error) -> String {
    error_text_with(error, None)
}
