//! # gantry-stubs — IDE stubs from the signature table
//!
//! Editors that do not talk to `gantry lsp` (LuaLS, EmmyLua, Rhai tooling)
//! still type the messages through generated files: a LuaLS/EmmyLua
//! `---@meta` file and rhai `.d.rhai` definition files, regenerated only when
//! their content changes.
//!
//! A map of the crate:
//! - [`shape`]: which API functions a key can be used with, and each call's
//!   arguments — shared by both generators.
//! - [`lua`]: the meta file ([`lua_stubs`]).
//! - [`rhai_defs`]: the definition files in the format of rhai's
//!   `Engine::definitions`, held to it by a test ([`rhai_definitions`]).
//! - [`config`]: `.luarc.json` / `.emmyrc.json` pointing at the stubs.
//! - [`luals`]: the same meta file as a LuaLS addon folder.
//! - [`options`]: the options a listen takes, for the stubs and the server.
//! - [`write`](mod@write): bringing the output folder up to date ([`write_stubs`]).
//! - [`mod@reference`]: the book's API reference page ([`api_reference`]).
//! - `names`: identifiers and doc lines made safe for generated code.

#![forbid(unsafe_code)]

#[cfg(doctest)]
mod book_doctests;
pub mod config;
pub mod lua;
pub mod luals;
mod names;
pub mod options;
pub mod reference;
pub mod rhai_defs;
pub mod shape;
pub mod write;

use std::path::Path;

use gantry_host::SignatureTable;

pub use config::{emmyrc_json, luarc_json};
pub use lua::lua_stubs;
pub use luals::{luals_addon_files, write_luals_addon};
pub use reference::api_reference;
pub use rhai_defs::rhai_definitions;
pub use write::{
    MANIFEST, StubsError, WriteReport, write_files, write_files_in, write_stubs, write_stubs_in,
};

/// The conventional stubs folder, relative to the scripts folder.
pub const DEFAULT_STUBS_DIR: &str = ".gantry/stubs";
/// The meta file, relative to the stubs folder.
pub const LUA_FILE: &str = "lua/gantry.lua";
/// The folder of the meta file: what `workspace.library` names.
pub const LUA_DIR: &str = "lua";
/// The folder of the Rhai definition files.
pub const RHAI_DIR: &str = "rhai";

/// One generated file: its path relative to the stubs folder (`/`
/// separators) and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubFile {
    pub path: String,
    pub content: String,
}

/// Every file `gantry stubs` writes into `out_dir`: the Lua meta file, the
/// Rhai definitions, and `luarc.json` / `emmyrc.json` snippets whose
/// `workspace.library` is the absolute path of the Lua folder. See
/// [`stub_files_in`] for stubs inside a mod folder.
pub fn stub_files(table: &SignatureTable, out_dir: &Path) -> Vec<StubFile> {
    let lua_dir = std::path::absolute(out_dir.join(LUA_DIR))
        .unwrap_or_else(|_| out_dir.join(LUA_DIR))
        .to_string_lossy()
        .replace('\\', "/");
    files_with_library(table, &lua_dir)
}

/// [`stub_files`] for stubs written inside the mod folder `mod_dir`: the
/// snippets' `workspace.library` is relative to it (copy one into the mod
/// folder as `.luarc.json` / `.emmyrc.json`; see [`config::library_path`]).
pub fn stub_files_in(table: &SignatureTable, mod_dir: &Path, out_dir: &Path) -> Vec<StubFile> {
    files_with_library(table, &config::library_path(mod_dir, out_dir))
}

fn files_with_library(table: &SignatureTable, lua_dir: &str) -> Vec<StubFile> {
    let mut files = vec![StubFile {
        path: LUA_FILE.to_owned(),
        content: lua_stubs(table),
    }];
    files.extend(
        rhai_definitions(table)
            .into_iter()
            .map(|(name, content)| StubFile {
                path: format!("{RHAI_DIR}/{name}"),
                content,
            }),
    );
    files.push(StubFile {
        path: "luarc.json".to_owned(),
        content: luarc_json(lua_dir),
    });
    files.push(StubFile {
        path: "emmyrc.json".to_owned(),
        content: emmyrc_json(lua_dir),
    });
    files
}
