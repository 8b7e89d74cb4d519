//! A LuaLS addon: `config.json` and a `library/` folder with the meta file,
//! the form LuaLS loads third-party definitions in (its addon manager, or
//! `Lua.workspace.userThirdParty` naming the folder above it). Everything
//! in it is relative to the addon folder, so it can be moved, shared or
//! committed as it is.

use std::path::Path;

use gantry_host::files::FileError;
use gantry_host::{ApiFunction, SignatureTable};
use serde_json::json;

use crate::write::{StubsError, WriteReport, write_files};
use crate::{StubFile, lua_stubs};

/// The meta file inside the addon.
pub const LIBRARY_FILE: &str = "library/gantry.lua";

/// The addon's files: `config.json` (its name, the words and files that
/// tell LuaLS a workspace is a Gantry mod, the Lua version) and the meta
/// file under `library/`.
pub fn luals_addon_files(table: &SignatureTable) -> Vec<StubFile> {
    // LuaLS suggests the addon when a script names the API (Lua patterns).
    let mut words: Vec<String> = vec!["GMP%.".to_owned()];
    words.extend(
        ApiFunction::ALL
            .iter()
            .filter(|f| !f.gmp_only())
            .map(|f| format!("{}%(", f.name())),
    );
    let config = json!({
        "name": "Gantry",
        "words": words,
        "files": ["mod%.toml", "%.gantry/signatures%.json"],
        "settings": {
            "Lua.runtime.version": "Lua 5.4",
        },
    });
    let mut config = serde_json::to_string_pretty(&config).unwrap_or_default();
    config.push('\n');
    vec![
        StubFile {
            path: "config.json".to_owned(),
            content: config,
        },
        StubFile {
            path: LIBRARY_FILE.to_owned(),
            content: lua_stubs(table),
        },
    ]
}

/// Writes the addon into `dir`, as [`write_files`] writes stubs (only what
/// changed; a file there that a previous run did not write is refused,
/// never overwritten). `dir` itself must be a folder or not exist yet: a
/// symbolic link or a file there is an error naming it.
pub fn write_luals_addon(table: &SignatureTable, dir: &Path) -> Result<WriteReport, StubsError> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(StubsError::File(FileError::Symlink {
                path: dir.display().to_string(),
            }));
        }
        Ok(meta) if !meta.is_dir() => {
            return Err(StubsError::NotAFolder {
                path: dir.to_owned(),
            });
        }
        _ => {}
    }
    write_files(&luals_addon_files(table), dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_addon_config_names_no_path_outside_the_addon() {
        let files = luals_addon_files(&SignatureTable::new());
        let config: serde_json::Value = serde_json::from_str(&files[0].content).unwrap();
        assert_eq!(config["name"], "Gantry");
        // No absolute path: the folder can move.
        assert!(!files[0].content.contains("\"/"), "{}", files[0].content);
        assert_eq!(files[1].path, "library/gantry.lua");
        assert!(
            files[1].content.starts_with("---@meta"),
            "{}",
            &files[1].content[..40]
        );
    }
}
