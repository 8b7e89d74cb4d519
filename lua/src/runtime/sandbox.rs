//! Per-script environments and the sandbox.
//!
//! Every chunk runs in its own environment table: its globals are invisible
//! to other scripts, and the library tables it sees are its own copies, so
//! `string.upper = nil` in one script changes nothing elsewhere (the shared
//! string metatable is hidden, and its `__index` is the sandbox's string
//! table, so `("").dump` is nil too). What a script gets:
//! - the base functions except `dofile`, `loadfile` and the raw `load`
//!   (`load` takes text chunks only, no larger than a script file may be,
//!   in the script's environment by default);
//!   `setmetatable` refuses a metatable with `__gc` (finalizers run with
//!   Lua's hooks off, out of the instruction budget's reach);
//! - `string` (no `dump`; `rep` checks its result against the memory limit
//!   first), `table`, `math`, `utf8`, `coroutine`, and `os`
//!   reduced to `clock`, `time` and `date`; no `io`, `debug` or `package`;
//!   the functions whose one C call a script could make run long (pattern
//!   matching, the table loops, `table.sort`) are bounded ones (`bounded`),
//!   and `xpcall`, `coroutine.resume` and `coroutine.close` keep the
//!   budget's stops final; what `pcall`, `xpcall`'s handler,
//!   `coroutine.resume` and `coroutine.close` catch of an API function's
//!   refusal is its message
//!   as a string, as a Lua library function's is (not mlua's error
//!   object, whose text carries the runtime's frames);
//! - `collectgarbage` limited to `collect`, `count`, `step`, `isrunning`;
//! - `require(name)`: another `.lua` file of the mod folder, run (rewritten
//!   like any script) in its own environment with the same `self`, once per
//!   requiring script;
//! - `print`, routed to the runtime's print sink;
//! - the script API as globals and as fields of `GMP`, the row constants
//!   (`GMP.AllRows`, `GMP.WithRemoval(n)`, ...), and `self`.

use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use gantry_host::ApiFunction;
use mlua::{Function, Lua, MultiValue, Table, Thread, Value as LuaValue};

use super::api::{Ctx, generic_function};
use super::budget::Budget;
use super::handles::{NamedHandle, ObjectHandle, WorldHandle};
use super::shared::{Shared, describe_value, error_here, whole_number};

/// The sandbox's Lua half, compiled once per state.
const SANDBOX_LUA: &str = include_str!("sandbox.lua");

/// Runs the sandbox's Lua half once for the state: the functions that build
/// each script's environment (`make_env`, `wrap_request`).
pub(crate) fn factory(
    lua: &Lua,
    fast: &super::fast::FastLane,
    budget: &Arc<Budget>,
    memory_limit: Option<usize>,
) -> mlua::Result<Table> {
    super::bounded::install(lua, budget)?;
    let plain_error = lua.create_function(|lua, error: LuaValue| {
        Ok(match error {
            LuaValue::Error(e) => LuaValue::String(lua.create_string(message_of(&e))?),
            other => other,
        })
    })?;
    lua.load(SANDBOX_LUA).set_name("=gantry-sandbox").call((
        &fast.block,
        &fast.unblock,
        memory_limit,
        gantry_host::files::MAX_SCRIPT_BYTES,
        plain_error,
    ))
}

/// The message of an error a Rust function raised, as a script catching it
/// sees it: the text the function gave (`file:line: ...`), without the
/// stack traceback the error object carries.
fn message_of(error: &mlua::Error) -> String {
    match error {
        mlua::Error::CallbackError { cause, .. } => message_of(cause),
        mlua::Error::WithContext { context, cause } => format!("{context}: {}", message_of(cause)),
        other => super::shared::error_text_with(other, None),
    }
}

/// Builds the environment of one chunk.
pub(crate) fn make_env(ctx: &Rc<Ctx>, lua: &Lua) -> mlua::Result<Table> {
    let shared = &ctx.shared;
    let api = lua.create_table()?;
    let gmp = lua.create_table()?;
    for function in ApiFunction::ALL {
        if function == ApiFunction::Request {
            let send = generic_function(ctx, lua, function)?;
            gmp.raw_set(function.name(), wrap_request(shared, send)?)?;
            continue;
        }
        let f = generic_function(ctx, lua, function)?;
        if !function.gmp_only() {
            api.raw_set(function.name(), &f)?;
        }
        gmp.raw_set(function.name(), f)?;
    }
    add_object_functions(ctx, lua, &gmp)?;
    add_row_constants(lua, &gmp)?;
    let print = print_function(shared, lua)?;
    let require = require_function(ctx, lua)?;
    let hook_thread = lua.create_function(|_, thread: Thread| {
        // SAFETY: a thread just created on this state, not running.
        unsafe { Budget::hook_thread(thread.to_pointer() as *mut _) };
        Ok(())
    })?;
    let make: Function = shared.env_factory.raw_get("make_env")?;
    let env: Table = make.call((api, gmp, print, require, hook_thread))?;
    env.raw_set("self", ObjectHandle(ctx.object))?;
    Ok(env)
}

/// Wraps a request primitive into the yielding `GMP.Request`.
pub(crate) fn wrap_request(shared: &Shared, send: Function) -> mlua::Result<Function> {
    let wrap: Function = shared.env_factory.raw_get("wrap_request")?;
    wrap.call(send)
}

fn add_object_functions(ctx: &Rc<Ctx>, lua: &Lua, gmp: &Table) -> mlua::Result<()> {
    let c = ctx.clone();
    gmp.raw_set(
        "Spawn",
        lua.create_function(move |lua, world: LuaValue| {
            let world = match &world {
                LuaValue::Nil => c.world,
                other => super::convert::world_of_arg(other, &c.shared.hub).ok_or_else(|| {
                    error_here(lua, "GMP.Spawn: argument 1 must be a world or nil")
                })?,
            };
            let id = c.shared.hub.spawn(world).map_err(|e| error_here(lua, e))?;
            Ok(ObjectHandle(id))
        })?,
    )?;
    let c = ctx.clone();
    gmp.raw_set(
        "Destroy",
        lua.create_function(move |lua, obj: LuaValue| {
            let LuaValue::UserData(ud) = &obj else {
                return Err(error_here(lua, "GMP.Destroy: argument 1 must be an object"));
            };
            let id = ud
                .borrow::<ObjectHandle>()
                .map_err(|_| error_here(lua, "GMP.Destroy: argument 1 must be an object"))?
                .0;
            Ok(c.shared.hub.destroy(id).is_ok())
        })?,
    )?;
    let c = ctx.clone();
    gmp.raw_set(
        "Named",
        lua.create_function(move |lua, (obj, name): (LuaValue, LuaValue)| {
            let (id, name) = object_and_name(lua, "GMP.Named", &obj, &name)?;
            let source = c.shared.hub.try_named(id, &name);
            Ok(NamedHandle(
                source.map_err(|e| error_here(lua, format!("GMP.Named: {e}")))?,
            ))
        })?,
    )?;
    let c = ctx.clone();
    gmp.raw_set(
        "RemoveNamed",
        lua.create_function(move |lua, (obj, name): (LuaValue, LuaValue)| {
            let (id, name) = object_and_name(lua, "GMP.RemoveNamed", &obj, &name)?;
            // A gone object has no named sources left: nothing to remove.
            Ok(c.shared.hub.remove_named(id, &name).unwrap_or(0))
        })?,
    )?;
    let c = ctx.clone();
    gmp.raw_set(
        "World",
        lua.create_function(move |_, ()| Ok(WorldHandle(c.world)))?,
    )?;
    Ok(())
}

/// The `(obj, name)` arguments of `GMP.Named` and `GMP.RemoveNamed`: an
/// object, and a name that is a string (a number would be two names: 1 and
/// "1").
fn object_and_name(
    lua: &Lua,
    what: &str,
    obj: &LuaValue,
    name: &LuaValue,
) -> mlua::Result<(gantry_host::ObjectId, String)> {
    let id = match obj {
        LuaValue::UserData(ud) => ud.borrow::<ObjectHandle>().ok().map(|o| o.0),
        _ => None,
    }
    .ok_or_else(|| error_here(lua, format!("{what}: argument 1 must be an object")))?;
    let LuaValue::String(name) = name else {
        return Err(error_here(
            lua,
            format!(
                "{what}: argument 2 must be a name (a string), got {}",
                describe_value(name)
            ),
        ));
    };
    let name = name
        .to_str()
        .map_err(|_| error_here(lua, format!("{what}: argument 2 must be UTF-8 text")))?;
    Ok((id, name.to_string()))
}

/// `GMP.AllRows`, `GMP.AllRowsWithRemoval` and `GMP.WithRemoval(n)`: the
/// `~` index encoding on Lua's 1-based row numbers. One `~` rule (reference
/// `004_…`): `GMP.WithRemoval(GMP.AllRows)` is `GMP.AllRowsWithRemoval`.
fn add_row_constants(lua: &Lua, gmp: &Table) -> mlua::Result<()> {
    use gantry_host::collection::{ALL_ROWS, ALL_ROWS_WITH_REMOVAL};
    gmp.raw_set("AllRows", ALL_ROWS)?;
    gmp.raw_set("AllRowsWithRemoval", ALL_ROWS_WITH_REMOVAL)?;
    gmp.raw_set(
        "WithRemoval",
        lua.create_function(|lua, n: LuaValue| {
            let Some(n) = whole_number(&n) else {
                return Err(error_here(
                    lua,
                    format!(
                        "GMP.WithRemoval: argument 1 must be a row number (or GMP.AllRows), got {}",
                        describe_value(&n)
                    ),
                ));
            };
            if n < 1 || n > i64::from(ALL_ROWS) {
                return Err(error_here(
                    lua,
                    format!("GMP.WithRemoval({n}): rows count from 1 (or give GMP.AllRows)"),
                ));
            }
            Ok(!n)
        })?,
    )?;
    Ok(())
}

/// A wrong argument as an error message names it: a number by its value,
/// anything else by its type.
fn print_function(shared: &Rc<Shared>, lua: &Lua) -> mlua::Result<Function> {
    let weak = Rc::downgrade(shared);
    let tostring: Function = lua.globals().raw_get("tostring")?;
    lua.create_function(move |_, args: MultiValue| {
        let mut line = String::new();
        for (i, arg) in args.iter().enumerate() {
            if i > 0 {
                line.push('\t');
            }
            let text: mlua::LuaString = tostring.call(arg.clone())?;
            line.push_str(&text.to_string_lossy());
        }
        if let Some(shared) = weak.upgrade() {
            let print = shared.output.printer();
            print(&line);
        }
        Ok(())
    })
}

/// `require(name)`: `name` with dots as folders, `.lua` added, inside the mod
/// folder only.
fn require_function(ctx: &Rc<Ctx>, lua: &Lua) -> mlua::Result<Function> {
    let ctx = ctx.clone();
    let loaded = lua.create_table()?;
    lua.create_function(move |lua, name: String| {
        if let Some(value) = loaded.raw_get::<Option<LuaValue>>(name.as_str())? {
            return Ok(value);
        }
        let Some(dir) = ctx.shared.mod_dir.clone() else {
            return Err(error_here(
                lua,
                format!("require \"{name}\": this runtime has no mod folder"),
            ));
        };
        let path = module_path(&dir, &name).ok_or_else(|| {
            error_here(
                lua,
                format!("require \"{name}\": not a module name of the mod folder (letters, digits, _ and dots)"),
            )
        })?;
        let source = super::loader::read_module(&dir, &path)
            .map_err(|e| error_here(lua, format!("require \"{name}\": {e}")))?;
        let file: Rc<str> = Rc::from(
            path.strip_prefix(&dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/"),
        );
        // Marks the module as loading, so a cycle ends instead of recursing.
        loaded.raw_set(name.as_str(), true)?;
        let module_ctx = Rc::new(Ctx::new(
            file,
            ctx.object,
            ctx.world,
            ctx.shared.clone(),
            ctx.grants.clone(),
        )
        .noting_in(ctx.registered.clone()));
        let value = super::loader::run_chunk(&module_ctx, lua, &source)?;
        let value = if value.is_nil() {
            LuaValue::Boolean(true)
        } else {
            value
        };
        loaded.raw_set(name.as_str(), value.clone())?;
        Ok(value)
    })
}

fn module_path(dir: &Path, name: &str) -> Option<PathBuf> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        || name.starts_with('.')
        || name.ends_with('.')
        || name.contains("..")
    {
        return None;
    }
    let relative: PathBuf = name.split('.').collect();
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let mut path = dir.join(relative);
    path.set_extension("lua");
    Some(path)
}
