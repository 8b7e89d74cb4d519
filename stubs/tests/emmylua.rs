//! The independent checker: EmmyLua's analysis (that of `emmylua_check`
//! 0.25.1) over the generated meta file and the fixture scripts in
//! `tests/fixtures/lua/`.
//!
//! - every script in `good/` must produce no diagnostic;
//! - every line of a script in `bad/` that ends with `--! code[, code]`
//!   must get exactly those diagnostics, and no other line any;
//! - the meta file itself, copied without `---@meta` (meta files are never
//!   diagnosed), with `unknown-doc-tag` on and only `missing-return` and `unused`
//!   (empty declaration bodies) off, must lint clean.
//!
//! It runs in-process (`emmylua_checker/`): nothing to install, never skipped.

#[path = "../../test-support/src/signature_table.rs"]
mod common;
#[path = "../../test-support/src/emmylua.rs"]
mod emmylua_checker;

use std::fs;
use std::path::{Path, PathBuf};

use emmylua_checker::check;
use gantry_stubs::lua_stubs;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lua");

/// `--! code, code` markers of a bad script: (line, code), sorted.
fn expected_markers(script: &str) -> Vec<(u32, String)> {
    let mut expected = Vec::new();
    for (i, line) in script.lines().enumerate() {
        if let Some((_, codes)) = line.split_once("--!") {
            for code in codes.split(',') {
                expected.push((i as u32 + 1, code.trim().to_owned()));
            }
        }
    }
    expected.sort();
    expected
}

fn emmyrc(library: &Path, extra_enables: &[&str], disables: &[&str]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "runtime": { "version": "Lua5.4" },
        "workspace": { "library": [library.to_string_lossy()] },
        "diagnostics": { "enables": extra_enables, "disable": disables },
    }))
    .unwrap()
}

/// Copies the fixture scripts of `kind` (`good` or `bad`) into a workspace
/// beside the generated stubs; returns (workspace, config).
fn workspace_with(root: &Path, kind: &str) -> (PathBuf, PathBuf) {
    let lib = root.join("lib");
    fs::create_dir_all(&lib).unwrap();
    fs::write(lib.join("gantry.lua"), lua_stubs(&common::sample_table())).unwrap();
    let ws = root.join(kind);
    fs::create_dir_all(&ws).unwrap();
    for entry in fs::read_dir(Path::new(FIXTURES).join(kind)).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, ws.join(path.file_name().unwrap())).unwrap();
    }
    let config = root.join(format!("{kind}.emmyrc.json"));
    fs::write(&config, emmyrc(&lib, &[], &[])).unwrap();
    (ws, config)
}

#[test]
fn good_scripts_produce_no_diagnostics() {
    let root = tempfile::tempdir().unwrap();
    let (ws, config) = workspace_with(root.path(), "good");
    let found = check(&ws, &config);
    let noisy: Vec<_> = found.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert!(noisy.is_empty(), "good scripts were diagnosed: {noisy:#?}");
}

#[test]
fn each_bad_line_gets_the_expected_diagnostic() {
    let root = tempfile::tempdir().unwrap();
    let (ws, config) = workspace_with(root.path(), "bad");
    let found = check(&ws, &config);
    let mut scripts = 0;
    let mut wrong = Vec::new();
    for entry in fs::read_dir(&ws).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "lua") {
            continue;
        }
        scripts += 1;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected = expected_markers(&fs::read_to_string(&path).unwrap());
        assert!(!expected.is_empty(), "{name} marks no expected diagnostic");
        let got_full = found.get(&name).cloned().unwrap_or_default();
        let mut got: Vec<(u32, String)> =
            got_full.iter().map(|d| (d.line, d.code.clone())).collect();
        got.dedup();
        if got != expected {
            wrong.push(format!(
                "{name}: expected {expected:?}, got {got:?}\n{got_full:#?}"
            ));
        }
    }
    assert!(scripts >= 4, "the bad fixtures are missing");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_stubs_lint_clean() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("stubs");
    fs::create_dir_all(&ws).unwrap();
    let text = lua_stubs(&common::sample_table());
    let linted = text.replacen("---@meta\n", "", 1);
    assert_ne!(linted, text, "the stubs start with ---@meta");
    fs::write(ws.join("gantry.lua"), linted).unwrap();
    let config = root.path().join("lint.emmyrc.json");
    let empty = root.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    // Declarations have empty bodies and methods that ignore `self`: the two
    // codes that says nothing about the stubs' types are off; every type,
    // doc-syntax and name check stays on.
    fs::write(
        &config,
        emmyrc(&empty, &["unknown-doc-tag"], &["missing-return", "unused"]),
    )
    .unwrap();
    let found = check(&ws, &config);
    let noisy: Vec<_> = found.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert!(
        noisy.is_empty(),
        "the stubs themselves were diagnosed: {noisy:#?}"
    );
}
