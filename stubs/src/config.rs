//! Editor configuration that points LuaLS and EmmyLua at the stubs:
//! `workspace.library` lists the folder of the meta file, so its globals and
//! classes are known in every script of the workspace.

use std::path::{Component, Path};

use serde_json::json;

/// What `workspace.library` names for the stubs written to `out_dir`, as
/// seen from the mod folder `mod_dir` (the workspace the config is copied
/// into): relative to it when the stubs are inside it (`.gantry/stubs/lua`
/// by default) — LuaLS and EmmyLua resolve a relative library against the
/// workspace root, so the config keeps working when the mod folder moves or
/// is checked out elsewhere — else the absolute path of the folder.
pub fn library_path(mod_dir: &Path, out_dir: &Path) -> String {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let lua_dir = absolute(out_dir).join(crate::LUA_DIR);
    let relative = lua_dir
        .strip_prefix(absolute(mod_dir))
        .ok()
        .filter(|rest| rest.components().all(|c| matches!(c, Component::Normal(_))));
    match relative {
        Some(rest) => rest
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        None => lua_dir.to_string_lossy().replace('\\', "/"),
    }
}

/// A `.luarc.json` (LuaLS; EmmyLua reads it too) whose library is `library_dir`.
pub fn luarc_json(library_dir: &str) -> String {
    let value = json!({
        "$schema": "https://raw.githubusercontent.com/LuaLS/vscode-lua/master/setting/schema.json",
        "runtime.version": "Lua 5.4",
        "workspace.library": [library_dir],
    });
    pretty(&value)
}

/// An `.emmyrc.json` (EmmyLua) whose library is `library_dir`.
pub fn emmyrc_json(library_dir: &str) -> String {
    let value = json!({
        "$schema": "https://raw.githubusercontent.com/EmmyLuaLs/emmylua-analyzer-rust/refs/heads/main/crates/emmylua_code_analysis/resources/schema.json",
        "runtime": { "version": "Lua5.4" },
        "workspace": { "library": [library_dir] },
    });
    pretty(&value)
}

fn pretty(value: &serde_json::Value) -> String {
    // Serializing a `json!` value cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_is_relative_to_the_mod_folder_holding_the_stubs() {
        let mod_dir = Path::new("/p/my mod");
        assert_eq!(
            library_path(mod_dir, &mod_dir.join(".gantry/stubs")),
            ".gantry/stubs/lua"
        );
        assert_eq!(library_path(mod_dir, &mod_dir.join("out")), "out/lua");
        // Stubs written outside the mod folder can only be named absolutely.
        assert_eq!(
            library_path(mod_dir, Path::new("/elsewhere/stubs")),
            "/elsewhere/stubs/lua"
        );
        assert_eq!(
            library_path(mod_dir, &mod_dir.join("../other")),
            "/p/my mod/../other/lua"
        );
    }

    #[test]
    fn config_points_workspace_library_at_the_stubs() {
        let luarc: serde_json::Value =
            serde_json::from_str(&luarc_json("/p/.gantry/stubs/lua")).unwrap();
        assert_eq!(luarc["workspace.library"][0], "/p/.gantry/stubs/lua");
        let emmyrc: serde_json::Value =
            serde_json::from_str(&emmyrc_json("/p/.gantry/stubs/lua")).unwrap();
        assert_eq!(emmyrc["workspace"]["library"][0], "/p/.gantry/stubs/lua");
    }
}
