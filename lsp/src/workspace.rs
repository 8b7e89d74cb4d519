//! The workspace's scripts: finding them and indexing their calls.

use std::path::{Path, PathBuf};

use gantry_host::files::{self, FileError};

use crate::index::{WorkspaceIndex, index_calls};
use crate::syntax::{language_of, scan};
use crate::text::LineIndex;

/// Directories never searched for scripts: hidden ones (`.git`, `.gantry`)
/// and build output.
fn skipped(name: &str) -> bool {
    name.starts_with('.') || name == "target" || name == "node_modules"
}

/// Every `.lua` and `.rhai` entry under `dir` that is not a folder
/// (regular files, links, special files), sorted. Unreadable directories
/// are skipped (logged), never an error.
pub fn script_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                tracing::debug!(dir = %dir.display(), error = %e, "skipping unreadable directory");
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !entry.file_name().to_str().is_some_and(skipped) {
                    stack.push(path);
                }
            } else if language_of(&path).is_some() {
                // Links and special files too: reading them says what is
                // wrong (a link out of the folder, a FIFO), where leaving
                // them out would say nothing.
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Scans and indexes `files` (found under `roots`, each read only if it
/// stays inside its root), calling `progress(done, total)` after each.
pub fn index_files(
    roots: &[PathBuf],
    files: &[PathBuf],
    mut progress: impl FnMut(usize, usize),
) -> WorkspaceIndex {
    let mut index = WorkspaceIndex::default();
    for (done, path) in files.iter().enumerate() {
        if let (Some(language), Some(text)) = (language_of(path), read_or_skip(roots, path)) {
            let lines = LineIndex::new(&text);
            let calls = scan(language, &text);
            index.set_file(path.clone(), language, index_calls(&text, &lines, &calls));
        }
        progress(done + 1, files.len());
    }
    index
}

/// Reads a script of the workspace as every file of a mod is read: a
/// regular file (a FIFO never blocks the server, a device is never read)
/// of at most [`files::MAX_SCRIPT_BYTES`], in UTF-8 (a byte-order mark is
/// dropped); inside one of `roots` (the workspace folders), it must stay
/// inside it after symbolic links.
pub fn read_script(roots: &[PathBuf], path: &Path) -> Result<String, FileError> {
    match roots.iter().find(|root| path.starts_with(root)) {
        Some(root) => files::read_text_in(root, path, files::MAX_SCRIPT_BYTES),
        None => files::read_text(path, files::MAX_SCRIPT_BYTES),
    }
}

/// [`read_script`], a file that cannot be read skipped (logged): the
/// index goes on without it.
pub(crate) fn read_or_skip(roots: &[PathBuf], path: &Path) -> Option<String> {
    read_script(roots, path)
        .map_err(|e| tracing::warn!(error = %e, "script not indexed"))
        .ok()
}
