//! EmmyLua's own analysis, run in-process: `emmylua_code_analysis` 0.25.1,
//! the library behind `emmylua_check` 0.25.1, driven the way
//! `emmylua_check --config CONFIG DIR` drives it. The stub tests need no
//! checker installed, so every `cargo test` checks the generated Lua stubs.
//!
//! Shared by the stubs crate's tests and the CLI's (feature `emmylua`).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use emmy_lsp_types::NumberOrString;
use emmylua_code_analysis::{
    EmmyLuaAnalysis, WorkspaceFolder, build_workspace_folders, collect_workspace_files,
    load_configs,
};

/// One diagnostic: its 1-based line, its code (`param-type-mismatch`) and
/// message.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diag {
    pub line: u32,
    pub code: String,
    pub message: String,
}

/// Checks every Lua file under `workspace` with the settings of `config`
/// (an `.emmyrc.json`, relative paths in it taken from its folder, as the
/// checker takes them). Returns each checked file's diagnostics, sorted,
/// by file name: every file is present, a clean one with none.
///
/// Runs on a thread with the 8 MiB stack of the checker's main thread, where
/// `emmylua_check` indexes: a test thread's 2 MiB would overflow sooner on a
/// large meta file than the real checker does.
pub fn check(workspace: &Path, config: &Path) -> BTreeMap<String, Vec<Diag>> {
    let (workspace, config) = (workspace.to_owned(), config.to_owned());
    let checker = std::thread::Builder::new()
        .name("emmylua".into())
        .stack_size(8 << 20)
        .spawn(move || check_here(&workspace, &config))
        .expect("a thread for the checker");
    checker
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

fn check_here(workspace: &Path, config: &Path) -> BTreeMap<String, Vec<Diag>> {
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|e| panic!("workspace {}: {e}", workspace.display()));
    let config = config
        .canonicalize()
        .unwrap_or_else(|e| panic!("config {}: {e}", config.display()));
    let mut emmyrc = load_configs(vec![config.clone()], None);
    emmyrc.pre_process_emmyrc(config.parent().expect("a file is in a folder"));

    let mut analysis = EmmyLuaAnalysis::new();
    analysis.update_config(Arc::new(emmyrc));
    analysis.init_std_lib(None);
    let folders =
        build_workspace_folders(&[WorkspaceFolder::new(workspace, false)], &analysis.emmyrc);
    for folder in &folders {
        if folder.is_library {
            analysis.add_library_workspace(folder);
        } else {
            analysis.add_main_workspace(folder.root.clone());
        }
    }
    let files = collect_workspace_files(&folders, &analysis.emmyrc, None, None)
        .into_iter()
        .map(|file| file.into_tuple())
        .collect();
    analysis.update_files_by_path(files);

    let db = analysis.compilation.get_db();
    let mut by_file: BTreeMap<String, Vec<Diag>> = BTreeMap::new();
    for file in db.get_module_index().get_main_workspace_file_ids() {
        let name = db
            .get_vfs()
            .get_file_path(&file)
            .and_then(|p| p.file_name())
            .expect("a checked file has a name")
            .to_string_lossy()
            .into_owned();
        let diags = by_file.entry(name).or_default();
        for d in analysis
            .diagnose_file(file, Default::default())
            .unwrap_or_default()
        {
            diags.push(Diag {
                line: d.range.start.line + 1,
                code: match d.code {
                    Some(NumberOrString::String(code)) => code,
                    Some(NumberOrString::Number(code)) => code.to_string(),
                    None => String::new(),
                },
                message: d.message,
            });
        }
        diags.sort();
    }
    by_file
}
