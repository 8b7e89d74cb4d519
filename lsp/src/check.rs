//! `gantry check DIR`: the server's diagnostics in batch, for a mod's CI,
//! plus each script's syntax errors and each `mod.toml`'s mistakes.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use std::ffi::OsStr;

use gantry_host::files;
use gantry_host::manifest::game::{GAME_FILE, GameGrants};
use serde::Serialize;
use thiserror::Error;

use crate::analysis::diagnostics::{Code, KeyUse, Severity, check_calls};
use crate::analysis::grants::{ModGrantsInfo, check_grants};
use crate::index::index_calls;
use crate::syntax::{language_of, scan_checked};
use crate::table::{HostKey, LoadedTable, TableSources};
use crate::text::LineIndex;
use crate::workspace::script_files;

#[derive(Debug, Error)]
pub enum CheckError {
    #[error("cannot check {path}: not a directory")]
    NotADirectory { path: PathBuf },
}

/// One finding, with 1-based line and column (in characters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckDiagnostic {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub severity: Severity,
    pub code: Code,
    pub message: String,
}

/// The findings of one file (a script, or a table that could not be read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiagnostics {
    pub path: PathBuf,
    pub diagnostics: Vec<CheckDiagnostic>,
}

/// What a check knows beyond the mod folder.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The keys the host declares to every mod it runs (`gantry run`'s
    /// `Game.Tick`): known without a table.
    pub host: Vec<HostKey>,
}

/// Checks every `.lua` and `.rhai` script under `dir` against its table,
/// with no host keys. See [`check_dir_with`].
pub fn check_dir(dir: &Path) -> Result<Vec<FileDiagnostics>, CheckError> {
    check_dir_with(dir, &CheckOptions::default())
}

/// Checks every `.lua` and `.rhai` script under `dir`: its syntax (what its
/// language would refuse to load), and its calls against its table (the
/// table file, the host's keys and `mod.toml`, merged) and against what
/// the whole mod sends and listens to — so a fresh mod with no table is
/// checked too. Each `mod.toml` in use that cannot be used is a finding of
/// its own, at the line of each mistake. Files without findings are left
/// out.
pub fn check_dir_with(
    dir: &Path,
    options: &CheckOptions,
) -> Result<Vec<FileDiagnostics>, CheckError> {
    if !dir.is_dir() {
        return Err(CheckError::NotADirectory {
            path: dir.to_owned(),
        });
    }
    let files = script_files(dir);
    let mut scripts = Vec::with_capacity(files.len());
    let mut workspace = crate::index::WorkspaceIndex::default();
    let mut out = Vec::new();
    let mut tables: HashMap<TableSources, LoadedTable> = HashMap::new();
    // Scripts of one folder share their sources: found once per folder.
    let mut found: HashMap<PathBuf, TableSources> = HashMap::new();
    let mut sources_of = |folder: &Path| {
        found
            .entry(folder.to_owned())
            .or_insert_with(|| TableSources::find(folder))
            .clone()
    };
    // The mod's own manifest is checked even with no script.
    let own = sources_of(dir);
    tables.insert(own.clone(), LoadedTable::load_sources(&own, &options.host));
    for path in files {
        let text = match files::read_text_in(dir, &path, files::MAX_SCRIPT_BYTES) {
            Ok(text) => text,
            // One unreadable script is a finding of its own; the others are
            // still checked.
            Err(e) => {
                out.push(FileDiagnostics {
                    path,
                    diagnostics: vec![file_level(Code::FileError, e.to_string())],
                });
                continue;
            }
        };
        let Some(language) = language_of(&path) else {
            continue;
        };
        let lines = LineIndex::new(&text);
        let (calls, syntax) = scan_checked(language, &text);
        workspace.set_file(path.clone(), language, index_calls(&text, &lines, &calls));
        let sources = sources_of(path.parent().unwrap_or(dir));
        tables
            .entry(sources.clone())
            .or_insert_with(|| LoadedTable::load_sources(&sources, &options.host));
        scripts.push((path, text, lines, calls, syntax, sources));
    }
    // A mod of a game may use what the game's game.toml leaves it.
    let mut game_files: Vec<FileDiagnostics> = Vec::new();
    let mut sorted: Vec<&mut LoadedTable> = tables.values_mut().collect();
    sorted.sort_by(|a, b| a.sources.cmp(&b.sources));
    for table in sorted {
        apply_game_grants(table, &mut game_files);
    }
    out.extend(game_files);
    let mut uses: HashMap<&TableSources, KeyUse> = HashMap::new();
    for (path, text, lines, calls, syntax, sources) in &scripts {
        let table = &tables[sources];
        let usable = table.usable();
        let uses = uses
            .entry(sources)
            .or_insert_with(|| KeyUse::of(usable, &workspace));
        let at = |offset: usize| {
            (
                lines.line_of(offset.min(text.len())) + 1,
                lines.char_column(text, offset),
            )
        };
        let mut diagnostics: Vec<CheckDiagnostic> = Vec::new();
        if let Some(error) = syntax {
            let (line, column) = at(error.at);
            diagnostics.push(CheckDiagnostic {
                line,
                column,
                end_line: line,
                end_column: column,
                severity: Severity::Error,
                code: Code::SyntaxError,
                message: error.message.clone(),
            });
        }
        let grants = check_grants(calls, table.grants.as_ref());
        let mut found = check_calls(calls, usable, &workspace, uses);
        crate::analysis::typing::narrow(text, &mut found);
        diagnostics.extend(found.into_iter().chain(grants).map(|d| {
            let ((line, column), (end_line, end_column)) = (at(d.range.start), at(d.range.end));
            CheckDiagnostic {
                line,
                column,
                end_line,
                end_column,
                severity: d.severity,
                code: d.code,
                message: d.message,
            }
        }));
        if !diagnostics.is_empty() {
            out.push(FileDiagnostics {
                path: path.clone(),
                diagnostics,
            });
        }
    }
    let mut loaded: Vec<&LoadedTable> = tables.values().collect();
    loaded.sort_by(|a, b| a.sources.cmp(&b.sources));
    let mut reported: Vec<&Path> = Vec::new();
    for table in loaded {
        if let (Some(file), Some(error)) = (&table.sources.table, &table.error)
            && !reported.contains(&file.as_path())
        {
            reported.push(file);
            out.push(FileDiagnostics {
                path: file.clone(),
                diagnostics: vec![file_level(Code::TableError, error.clone())],
            });
        }
        if let Some(file) = &table.sources.manifest
            && !table.manifest_errors.is_empty()
            && !reported.contains(&file.as_path())
        {
            reported.push(file);
            out.push(FileDiagnostics {
                path: file.clone(),
                diagnostics: table
                    .manifest_errors
                    .iter()
                    .map(|finding| {
                        let (line, column) = (finding.line as usize, finding.column as usize);
                        CheckDiagnostic {
                            line,
                            column,
                            end_line: line,
                            end_column: column,
                            severity: Severity::Error,
                            code: Code::ManifestError,
                            message: finding.message.clone(),
                        }
                    })
                    .collect(),
            });
        }
    }
    Ok(out)
}

/// Narrows the grants of a mod that sits in a game folder
/// (`GAME/mods/<mod>/mod.toml`) as the game's `game.toml` does when the
/// game runs: its `[grants.<mod>]` and `require_grants`, read by the
/// loader's own reader ([`GameGrants`]), so a call the run would refuse
/// is an error here, in the run's words. A `game.toml` that cannot be
/// read is a finding of its own (once), and the mod's own grants stand.
fn apply_game_grants(table: &mut LoadedTable, found: &mut Vec<FileDiagnostics>) {
    let Some(dir) = &table.manifest_dir else {
        return;
    };
    let Some(mods) = dir.parent() else {
        return;
    };
    if mods.file_name() != Some(OsStr::new(MODS_DIR)) {
        return;
    }
    let game = match mods.parent() {
        Some(game) if !game.as_os_str().is_empty() => game,
        _ => Path::new("."),
    };
    let path = game.join(GAME_FILE);
    let mut finding = |code: Code, message: String| {
        if !found.iter().any(|f| f.path == path) {
            found.push(FileDiagnostics {
                path: path.clone(),
                diagnostics: vec![file_level(code, message)],
            });
        }
    };
    let text = match files::read_text_in(game, Path::new(GAME_FILE), files::MIB) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return,
        Err(e) => return finding(Code::FileError, e.to_string()),
    };
    let policy = match GameGrants::parse(&text) {
        Ok(policy) => policy,
        Err(e) => return finding(Code::ManifestError, e),
    };
    let Ok(Some(manifest)) = gantry_host::manifest::load(dir) else {
        return;
    };
    let name = manifest.module.name.as_str();
    table.grants = policy
        .effective(name, manifest.grants.as_ref())
        .map(|grants| ModGrantsInfo {
            module: name.into(),
            grants,
        });
}

/// The folder of a game's mods (the loader's `layout::MODS_DIR`).
const MODS_DIR: &str = "mods";

/// An error about a whole file, placed at its start.
fn file_level(code: Code, message: String) -> CheckDiagnostic {
    CheckDiagnostic {
        line: 1,
        column: 1,
        end_line: 1,
        end_column: 1,
        severity: Severity::Error,
        code,
        message,
    }
}

/// Does any finding make the check fail?
pub fn has_errors(files: &[FileDiagnostics]) -> bool {
    files
        .iter()
        .flat_map(|f| &f.diagnostics)
        .any(|d| d.severity == Severity::Error)
}

/// Is any finding a warning (`--deny-warnings` fails on them too)?
pub fn has_warnings(files: &[FileDiagnostics]) -> bool {
    files
        .iter()
        .flat_map(|f| &f.diagnostics)
        .any(|d| d.severity == Severity::Warning)
}

/// `file:line:col: severity code: message`, one per line.
pub fn format_text(files: &[FileDiagnostics]) -> String {
    let mut out = String::new();
    for file in files {
        for d in &file.diagnostics {
            let _ = writeln!(
                out,
                "{}:{}:{}: {} {}: {}",
                file.path.display(),
                d.line,
                d.column,
                d.severity,
                d.code,
                d.message
            );
        }
    }
    out
}

/// The findings as a JSON array of `{path, diagnostics: [...]}`.
pub fn format_json(files: &[FileDiagnostics]) -> String {
    serde_json::to_string_pretty(files).unwrap_or_else(|_| "[]".to_owned())
}
