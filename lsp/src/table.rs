//! Finding and caching signature tables.
//!
//! A script's table is the nearest `.gantry/signatures.json` walking up from
//! the script. Tables are reloaded when their file's modification stamp
//! changes, which the server checks on every tick and every watched-file
//! notification; a table the client reports changed is reloaded whatever
//! its stamp ([`TableCache::reload`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

use gantry_host::{DEFAULT_TABLE_PATH, SignatureTable};

/// A table as loaded from disk. When loading failed, `table` is empty and
/// `error` says why (shown as a `table-error` diagnostic).
#[derive(Debug, Clone)]
pub struct LoadedTable {
    pub file: PathBuf,
    /// The directory that holds `.gantry/`.
    pub root: PathBuf,
    pub table: Rc<SignatureTable>,
    pub error: Option<String>,
    stamp: Option<(SystemTime, u64)>,
}

impl LoadedTable {
    pub fn load(file: &Path) -> Self {
        let root = file
            .parent()
            .and_then(Path::parent)
            .map(Path::to_owned)
            .unwrap_or_default();
        let stamp = stamp(file);
        // The table belongs to the folder holding `.gantry`: read only
        // if it stays inside it.
        let loaded = if root.as_os_str().is_empty() {
            SignatureTable::load(file)
        } else {
            // `file` is `root` joined with the table's place in it.
            SignatureTable::load_in(&root, file.strip_prefix(&root).unwrap_or(file))
        };
        let (table, error) = match loaded {
            Ok(table) => (table, None),
            Err(e) => {
                tracing::warn!(table = %file.display(), error = %e, "cannot load signature table");
                (SignatureTable::new(), Some(e.to_string()))
            }
        };
        Self {
            file: file.to_owned(),
            root,
            table: Rc::new(table),
            error,
            stamp,
        }
    }

    /// The table to check against: `None` when it could not be read.
    pub fn usable(&self) -> Option<&SignatureTable> {
        self.error.is_none().then_some(&*self.table)
    }
}

fn stamp(file: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(file).ok()?;
    Some((meta.modified().ok()?, meta.len()))
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

/// Every table in use, by file.
#[derive(Debug, Default)]
pub struct TableCache {
    tables: HashMap<PathBuf, LoadedTable>,
}

impl TableCache {
    pub fn get_or_load(&mut self, file: &Path) -> &LoadedTable {
        self.tables
            .entry(file.to_owned())
            .or_insert_with(|| LoadedTable::load(file))
    }

    pub fn get(&self, file: &Path) -> Option<&LoadedTable> {
        self.tables.get(file)
    }

    /// Every loaded table, sorted by file.
    pub fn all(&self) -> Vec<&LoadedTable> {
        let mut all: Vec<&LoadedTable> = self.tables.values().collect();
        all.sort_by(|a, b| a.file.cmp(&b.file));
        all
    }

    /// Reloads the loaded table of `file` whatever its stamp says (the
    /// client reported a change, which a same-size write within the file
    /// system's timestamp granularity leaves invisible to the stamp).
    /// Returns the table's file as cached, or `None` when `file` is no
    /// loaded table.
    pub fn reload(&mut self, file: &Path) -> Option<PathBuf> {
        let cached = if self.tables.contains_key(file) {
            file.to_owned()
        } else {
            // The client may spell the path differently (symlinks, `..`).
            let wanted = std::fs::canonicalize(file).ok()?;
            self.tables
                .keys()
                .find(|k| std::fs::canonicalize(k).is_ok_and(|k| k == wanted))?
                .clone()
        };
        self.tables
            .insert(cached.clone(), LoadedTable::load(&cached));
        Some(cached)
    }

    /// Reloads every table whose file changed; returns the files reloaded.
    pub fn refresh(&mut self) -> Vec<PathBuf> {
        let mut changed = Vec::new();
        for (file, loaded) in &mut self.tables {
            if stamp(file) != loaded.stamp {
                *loaded = LoadedTable::load(file);
                changed.push(file.clone());
            }
        }
        changed
    }
}
