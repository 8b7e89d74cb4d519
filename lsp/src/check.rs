//! `gantry check DIR`: the server's diagnostics in batch, for a mod's CI.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gantry_host::files;
use serde::Serialize;
use thiserror::Error;

use crate::analysis::diagnostics::{Code, Severity, check_calls};
use crate::index::index_calls;
use crate::syntax::{language_of, scan};
use crate::table::{LoadedTable, find_table};
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

/// Checks every `.lua` and `.rhai` script under `dir` against its table.
/// Files without findings are left out.
pub fn check_dir(dir: &Path) -> Result<Vec<FileDiagnostics>, CheckError> {
    if !dir.is_dir() {
        return Err(CheckError::NotADirectory {
            path: dir.to_owned(),
        });
    }
    let files = script_files(dir);
    let mut scripts = Vec::with_capacity(files.len());
    let mut workspace = crate::index::WorkspaceIndex::default();
    let mut out = Vec::new();
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
        let calls = scan(language, &text);
        workspace.set_file(path.clone(), language, index_calls(&text, &lines, &calls));
        scripts.push((path, text, lines, calls));
    }
    let mut tables: HashMap<PathBuf, LoadedTable> = HashMap::new();
    for (path, text, lines, calls) in scripts {
        let table = find_table(path.parent().unwrap_or(dir)).map(|file| {
            tables
                .entry(file.clone())
                .or_insert_with(|| LoadedTable::load(&file))
        });
        let usable = table.as_ref().and_then(|t| t.usable());
        let diagnostics: Vec<CheckDiagnostic> = check_calls(&calls, usable, &workspace)
            .into_iter()
            .map(|d| {
                let (start, end) = (d.range.start, d.range.end);
                CheckDiagnostic {
                    line: lines.line_of(start.min(text.len())) + 1,
                    column: lines.char_column(&text, start),
                    end_line: lines.line_of(end.min(text.len())) + 1,
                    end_column: lines.char_column(&text, end),
                    severity: d.severity,
                    code: d.code,
                    message: d.message,
                }
            })
            .collect();
        if !diagnostics.is_empty() {
            out.push(FileDiagnostics { path, diagnostics });
        }
    }
    let mut broken: Vec<&LoadedTable> = tables.values().filter(|t| t.error.is_some()).collect();
    broken.sort_by(|a, b| a.file.cmp(&b.file));
    for table in broken {
        out.push(FileDiagnostics {
            path: table.file.clone(),
            diagnostics: vec![file_level(
                Code::TableError,
                table.error.clone().unwrap_or_default(),
            )],
        });
    }
    Ok(out)
}

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
