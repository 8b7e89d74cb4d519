//! A mod's contract as the tools read it: the table file, the host's
//! keys and the manifest, merged in the one order every tool uses.
//!
//! `gantry check`, the language server and `gantry stubs` all check or
//! describe a script against the same table, so they build it here: the
//! table file first (what runs observed), then the keys the host declares
//! in code ([`HostKey`]: `gantry run`'s `Game.Tick`), then the mod's
//! `mod.toml` (the newer word: a declaration replaces what was observed,
//! as [`Manifest::declare_into`] says). A part that cannot be read is left
//! out and its errors are kept, typed, for the tool to report its own way
//! (a diagnostic, a finding, a refusal to write).

use std::path::{Path, PathBuf};

use super::{MANIFEST_FILE, Manifest, ManifestErrors};
use crate::persist::{DEFAULT_TABLE_PATH, TableError};
use crate::signature::{KeyDecl, SignatureTable};

/// A key the host declares in code (`Hub::declare`), known to every mod
/// it runs even without a table: `gantry run` declares `Game.Tick`.
#[derive(Debug, Clone)]
pub struct HostKey {
    pub key: String,
    pub decl: KeyDecl,
}

/// The merged table and what could not be merged into it.
#[derive(Debug)]
pub struct Contract {
    /// The table file's keys, the host's and the manifest's, merged.
    pub table: SignatureTable,
    /// Why the table file could not be read; its part is then empty.
    pub table_error: Option<TableError>,
    /// The manifest, when there is one and it could be used.
    pub manifest: Option<Manifest>,
    /// Why the manifest could not be used; its part is then empty.
    pub manifest_errors: Option<ManifestErrors>,
}

impl Contract {
    /// Reads `table_file` (inside the folder holding its `.gantry`, see
    /// [`read_table_file`]; `None`: no table yet) and merges the host's
    /// keys and the manifest of `manifest_dir` over it.
    pub fn load(table_file: Option<&Path>, host: &[HostKey], manifest_dir: Option<&Path>) -> Self {
        let (table, table_error) = match table_file.map(read_table_file) {
            Some(Ok(table)) => (table, None),
            Some(Err(e)) => (SignatureTable::new(), Some(e)),
            None => (SignatureTable::new(), None),
        };
        Self {
            table_error,
            ..Self::over(table, host, manifest_dir)
        }
    }

    /// Merges the host's keys and the manifest of `manifest_dir` (if it
    /// has one) over a table already read.
    pub fn over(mut table: SignatureTable, host: &[HostKey], manifest_dir: Option<&Path>) -> Self {
        for declared in host {
            if let Err(e) = table.declare(&declared.key, declared.decl.clone(), None) {
                tracing::warn!(key = %declared.key, error = %e, "host key refused by the table");
            }
        }
        let (manifest, manifest_errors) = match manifest_dir.map(super::load) {
            Some(Ok(Some(manifest))) => {
                manifest.declare_into(&mut table);
                (Some(manifest), None)
            }
            Some(Err(errors)) => {
                tracing::warn!(%errors, "cannot use the manifest");
                (None, Some(errors))
            }
            // No manifest, or gone since it was found: the table is what
            // is left.
            Some(Ok(None)) | None => (None, None),
        };
        Self {
            table,
            table_error: None,
            manifest,
            manifest_errors,
        }
    }
}

/// The folder a table file belongs to: the one holding its `.gantry`
/// (empty for a bare file name). Recorded site paths are relative to it.
pub fn table_root(file: &Path) -> PathBuf {
    file.parent()
        .and_then(Path::parent)
        .map(Path::to_owned)
        .unwrap_or_default()
}

/// Reads a table file found in a mod folder: only if it stays inside the
/// folder holding its `.gantry` ([`table_root`]), never through a link
/// out of it. A missing file is an empty table.
pub fn read_table_file(file: &Path) -> Result<SignatureTable, TableError> {
    let root = table_root(file);
    if root.as_os_str().is_empty() {
        SignatureTable::load(file)
    } else {
        // `file` is `root` joined with the table's place in it.
        SignatureTable::load_in(&root, file.strip_prefix(&root).unwrap_or(file))
    }
}

/// The nearest `.gantry/signatures.json` at or above `start` (a file or a
/// directory). Anything there counts, not only a regular file: a folder or
/// FIFO in its place is then a table error the user sees, not a silently
/// missing table (nothing is opened to find it).
pub fn find_table(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(DEFAULT_TABLE_PATH))
        .find(|candidate| candidate.symlink_metadata().is_ok())
}

/// The nearest `mod.toml` at or above `start`; anything there counts, as
/// for [`find_table`] (a folder in its place is a finding on it).
pub fn find_manifest(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(MANIFEST_FILE))
        .find(|candidate| candidate.symlink_metadata().is_ok())
}
