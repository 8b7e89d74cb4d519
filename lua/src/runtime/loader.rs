//! Loading a chunk: rewrite literal-key calls into baked calls (see
//! [`crate::syntax::rewrite()`] for the contract), record their call sites
//! once, and run the top level inside the instruction budget; and the
//! reading of a module's file for `require`.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use gantry_host::{ApiFunction, Language, Site, files};
use mlua::{Lua, Table, Value as LuaValue, chunk::ChunkMode};

use gantry_host::face::KeyRef;

use super::api::{Ctx, baked_function};
use super::sandbox::{make_env, wrap_request};
use crate::syntax;

/// The source of a module `require` loads (`path` in the mod folder
/// `dir`), read as every file of a mod is: it must resolve inside `dir`
/// with symbolic links followed, be a regular file (a FIFO never blocks
/// the load, a device is never read) of at most
/// [`files::MAX_SCRIPT_BYTES`], in UTF-8 (a byte-order mark is dropped).
pub(crate) fn read_module(dir: &Path, path: &Path) -> Result<String, files::FileError> {
    files::read_text_in(dir, path, files::MAX_SCRIPT_BYTES)
}

/// Runs `source` as the chunk `ctx.file` in a fresh environment and returns
/// what the chunk returns.
pub(crate) fn run_chunk(ctx: &Rc<Ctx>, lua: &Lua, source: &str) -> mlua::Result<LuaValue> {
    run_chunk_keeping_env(ctx, lua, source, &RefCell::new(None))
}

/// [`run_chunk`], handing out the chunk's environment before it runs.
pub(crate) fn run_chunk_keeping_env(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    source: &str,
    env_out: &RefCell<Option<Table>>,
) -> mlua::Result<LuaValue> {
    // A byte-order mark some editors write is no Lua: a host that hands
    // the text over as read must not get a syntax error at 1:1.
    let source = source.strip_prefix('\u{FEFF}').unwrap_or(source);
    let shared = &ctx.shared;
    // This load records the file's sites again: the old ones go.
    shared.hub.restart_sites(Language::Lua, &ctx.file, source);
    let env = make_env(ctx, lua)?;
    *env_out.borrow_mut() = Some(env.clone());
    let mut rewrite = if shared.rewrite.get() {
        Some(syntax::rewrite(source))
    } else {
        None
    };
    let compile = |text: &str| {
        lua.load(text)
            .set_name(format!("@{}", ctx.file))
            .set_environment(env.clone())
            .set_mode(ChunkMode::Text)
            .into_function()
    };
    let chunk = match &rewrite {
        Some(r) if r.is_rewritten() => match compile(&r.source) {
            Ok(chunk) => chunk,
            // The rewrite leaves alone every chunk Lua refuses and keeps
            // within Lua's limits; should a case it does not foresee make
            // the rewritten text fail to compile, the script runs
            // unrewritten (generic calls, same behaviour) and any error
            // Lua reports is about the modder's own text.
            Err(e) => {
                tracing::warn!(file = %ctx.file, error = %e, "rewritten chunk refused; loading it as written");
                rewrite = None;
                compile(source)?
            }
        },
        _ => compile(source)?,
    };
    let bakes = match &rewrite {
        Some(rewrite) if rewrite.is_rewritten() => {
            let hub = &shared.hub;
            for bake in &rewrite.bakes {
                // Listens record their site when they register; sends here.
                if bake.function.role() == Some(gantry_host::Role::Send) {
                    let site = Site::new(
                        ctx.file.to_string(),
                        bake.site.start_pos.line + 1,
                        Language::Lua,
                        gantry_host::Role::Send,
                    );
                    hub.record_site(&bake.key, site);
                }
                // A listener literal names the key's parameters where
                // nothing declares them, before or after the first send.
                if let Some(names) = &bake.listener_params {
                    hub.suggest_param_names(&bake.key, bake.function.names_params(names));
                }
            }
            let table = lua.create_table_with_capacity(rewrite.slot_count(), 0)?;
            for bake in rewrite.slots() {
                let key = hub
                    .key(&bake.key)
                    .map_err(|e| mlua::Error::runtime(format!("{}: {e}", ctx.file)))?;
                let key = KeyRef {
                    key,
                    text: Rc::from(bake.key.as_str()),
                };
                let f = baked_function(ctx, lua, bake.function, key.clone())?;
                // Grants are decided here, once: a send outside them keeps
                // the baked function, which refuses it, and never takes the
                // fast lane past the check.
                let granted = ctx
                    .grants
                    .as_ref()
                    .is_none_or(|grants| grants.check(bake.function, key.key, &key.text).is_ok());
                let f = match bake.function {
                    ApiFunction::Request => wrap_request(shared, f)?,
                    ApiFunction::NotifyMessage
                    | ApiFunction::NotifyWorldMessage
                    | ApiFunction::NotifyObjectMessage
                    | ApiFunction::SendObjectMessage
                        if granted =>
                    {
                        super::fast::baked_send(ctx, lua, bake.function, &key, f)?
                    }
                    _ => f,
                };
                table.raw_set(bake.slot, f)?;
            }
            Some(table)
        }
        _ => {
            // Unbaked (baking off, or nothing to bake): the listeners'
            // names come from the scanner, as baked ones from the bakes.
            for call in syntax::scan(source) {
                if let Some((key, names)) = call.named_params() {
                    shared.hub.suggest_param_names(key, names);
                }
            }
            None
        }
    };
    shared.guarded(|| match bakes {
        Some(bakes) => chunk.call::<LuaValue>(bakes),
        None => chunk.call::<LuaValue>(()),
    })
}
