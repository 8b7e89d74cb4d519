//! Editor configuration that points LuaLS and EmmyLua at the stubs:
//! `workspace.library` lists the folder of the meta file, so its globals and
//! classes are known in every script of the workspace.

use serde_json::json;

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
    fn config_points_workspace_library_at_the_stubs() {
        let luarc: serde_json::Value =
            serde_json::from_str(&luarc_json("/p/.gantry/stubs/lua")).unwrap();
        assert_eq!(luarc["workspace.library"][0], "/p/.gantry/stubs/lua");
        let emmyrc: serde_json::Value =
            serde_json::from_str(&emmyrc_json("/p/.gantry/stubs/lua")).unwrap();
        assert_eq!(emmyrc["workspace"]["library"][0], "/p/.gantry/stubs/lua");
    }
}
