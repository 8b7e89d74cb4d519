//! The independent checker: `emmylua_check` over the generated meta file and
//! the fixture scripts in `tests/fixtures/lua/`.
//!
//! - every script in `good/` must produce no diagnostic;
//! - every line of a script in `bad/` that ends with `--! code[, code]`
//!   must get exactly those diagnostics, and no other line any;
//! - the meta file itself, copied without `---@meta` (meta files are never
//!   diagnosed), with `unknown-doc-tag` on and only `missing-return` and `unused`
//!   (empty declaration bodies) off, must lint clean.
//!
//! `emmylua_check` must be installed (`cargo install emmylua_check --locked`;
//! CI's `.ci/run` does it). Without it this test fails, on purpose: only a
//! developer may skip it, with `GANTRY_SKIP_EMMYLUA=1`.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use gantry_stubs::lua_stubs;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lua");

fn emmylua_check() -> Option<PathBuf> {
    if std::env::var("GANTRY_SKIP_EMMYLUA").is_ok_and(|v| v == "1") {
        eprintln!("GANTRY_SKIP_EMMYLUA=1: the emmylua_check stub test is skipped");
        return None;
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(cargo_home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(cargo_home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    let found = dirs
        .into_iter()
        .map(|d| d.join("emmylua_check"))
        .find(|p| p.is_file());
    match found {
        Some(path) => Some(path),
        None => panic!(
            "emmylua_check is not installed, so the generated Lua stubs cannot be checked. \
             Install it with `cargo install emmylua_check --locked` (CI's .ci/run does), \
             or set GANTRY_SKIP_EMMYLUA=1 to skip this test on a developer machine."
        ),
    }
}

/// One diagnostic: 1-based line and its code.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Diag {
    line: u32,
    code: String,
    message: String,
}

/// Runs the checker over `workspace` with `config`; diagnostics by file name.
fn check(exe: &Path, workspace: &Path, config: &Path) -> BTreeMap<String, Vec<Diag>> {
    let out = workspace.join("..").join(format!(
        "{}.diagnostics.json",
        workspace.file_name().unwrap().to_string_lossy()
    ));
    let run = Command::new(exe)
        .arg("--config")
        .arg(config)
        .args(["--output-format", "json", "--output"])
        .arg(&out)
        .arg(workspace)
        .output()
        .expect("emmylua_check runs");
    let text = fs::read_to_string(&out).unwrap_or_else(|e| {
        panic!(
            "emmylua_check wrote no report ({e}); status {}, stderr:\n{}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        )
    });
    let report: serde_json::Value = serde_json::from_str(&text).expect("json report");
    let mut by_file: BTreeMap<String, Vec<Diag>> = BTreeMap::new();
    for file in report.as_array().expect("an array of files") {
        let name = Path::new(file["file"].as_str().unwrap())
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let diags = by_file.entry(name).or_default();
        for d in file["diagnostics"].as_array().unwrap() {
            diags.push(Diag {
                line: d["range"]["start"]["line"].as_u64().unwrap() as u32 + 1,
                code: d["code"].as_str().unwrap_or("").to_owned(),
                message: d["message"].as_str().unwrap_or("").to_owned(),
            });
        }
        diags.sort();
    }
    by_file
}

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
    let Some(exe) = emmylua_check() else { return };
    let root = tempfile::tempdir().unwrap();
    let (ws, config) = workspace_with(root.path(), "good");
    let found = check(&exe, &ws, &config);
    let noisy: Vec<_> = found.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert!(noisy.is_empty(), "good scripts were diagnosed: {noisy:#?}");
}

#[test]
fn each_bad_line_gets_the_expected_diagnostic() {
    let Some(exe) = emmylua_check() else { return };
    let root = tempfile::tempdir().unwrap();
    let (ws, config) = workspace_with(root.path(), "bad");
    let found = check(&exe, &ws, &config);
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
    let Some(exe) = emmylua_check() else { return };
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
    let found = check(&exe, &ws, &config);
    let noisy: Vec<_> = found.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert!(
        noisy.is_empty(),
        "the stubs themselves were diagnosed: {noisy:#?}"
    );
}
