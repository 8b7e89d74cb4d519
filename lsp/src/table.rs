//! Finding, merging and caching the table a script is checked against.
//!
//! A script's table is made of up to three parts, merged in this order,
//! each over the one before: the nearest `.gantry/signatures.json` walking
//! up from the script (what runs observed), the keys the host declares
//! ([`HostKey`]: `gantry run`'s `Game.Tick`), and the nearest `mod.toml`
//! (the mod's own declarations; the manifest wins, as it does at run time).
//! Both files are reloaded when their modification stamp changes, which the
//! server checks on every tick and every watched-file notification; a file
//! the client reports changed is reloaded whatever its stamp
//! ([`TableCache::reload`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

use gantry_host::manifest::{self, MANIFEST_FILE, ManifestError, Problem};
use gantry_host::{DEFAULT_TABLE_PATH, KeyDecl, SignatureTable};

/// A key the host declares in code (`Hub::declare`), known to every mod
/// it runs even without a table: `gantry run` declares `Game.Tick`.
#[derive(Debug, Clone)]
pub struct HostKey {
    pub key: String,
    pub decl: KeyDecl,
}

/// The files a script's table is made of: what [`TableSources::find`]
/// found at or above it. Both may be absent (a fresh mod): the table is
/// then the host's keys alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableSources {
    pub table: Option<PathBuf>,
    pub manifest: Option<PathBuf>,
}

impl TableSources {
    /// The nearest table file and the nearest manifest at or above `start`.
    pub fn find(start: &Path) -> Self {
        Self {
            table: find_table(start),
            manifest: find_manifest(start),
        }
    }

    /// Whether `file` is one of these sources (as spelled, or the same file).
    fn holds(&self, file: &Path) -> bool {
        let same = |candidate: &PathBuf| {
            candidate == file
                || std::fs::canonicalize(candidate)
                    .is_ok_and(|c| std::fs::canonicalize(file).is_ok_and(|f| c == f))
        };
        self.table.iter().chain(&self.manifest).any(same)
    }
}

/// One mistake in a `mod.toml`, at its 1-based line and column (1:1 when
/// it is about the file as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFinding {
    pub line: u32,
    pub column: u32,
    /// What is wrong and in which field, without the file and place.
    pub message: String,
}

impl ManifestFinding {
    fn of(error: &ManifestError) -> Self {
        let mut message = match &error.problem {
            Problem::File(e) => e.to_string(),
            problem => problem.to_string(),
        };
        if !error.field.is_empty() && !matches!(error.problem, Problem::File(_)) {
            message.push_str(&format!(" in {}", error.field));
        }
        if let Some(near) = &error.suggestion {
            message.push_str(&format!(" (did you mean `{near}`?)"));
        }
        Self {
            line: error.line.max(1),
            column: error.column.max(1),
            message,
        }
    }
}

/// A script's table as loaded and merged. When the table file could not
/// be read, its part is empty and `error` says why (a `table-error`
/// diagnostic); when the manifest could not be used, its part is empty and
/// `manifest_errors` says why (each a diagnostic on `mod.toml`).
#[derive(Debug, Clone)]
pub struct LoadedTable {
    pub sources: TableSources,
    /// The file a finding about the whole table names: the table file, else
    /// the manifest, else empty.
    pub file: PathBuf,
    /// The directory that holds `.gantry/` (else the manifest's): recorded
    /// site paths are relative to it or to a parent.
    pub root: PathBuf,
    /// The directory holding the manifest: its declaration sites are
    /// relative to it.
    pub manifest_dir: Option<PathBuf>,
    pub table: Rc<SignatureTable>,
    pub error: Option<String>,
    pub manifest_errors: Vec<ManifestFinding>,
    stamps: [Option<(SystemTime, u64)>; 2],
}

impl LoadedTable {
    /// Loads a table file alone (no host keys, no manifest).
    pub fn load(file: &Path) -> Self {
        Self::load_sources(
            &TableSources {
                table: Some(file.to_owned()),
                manifest: None,
            },
            &[],
        )
    }

    /// Loads and merges `sources` over the host's keys.
    pub fn load_sources(sources: &TableSources, host: &[HostKey]) -> Self {
        let (mut table, error, root) = match &sources.table {
            Some(file) => load_table_file(file),
            None => (SignatureTable::new(), None, PathBuf::new()),
        };
        for declared in host {
            if let Err(e) = table.declare(&declared.key, declared.decl.clone(), None) {
                tracing::warn!(key = %declared.key, error = %e, "host key refused by the table");
            }
        }
        let manifest_dir = sources
            .manifest
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_owned);
        let mut manifest_errors = Vec::new();
        if let Some(dir) = &manifest_dir {
            match manifest::load(dir) {
                Ok(Some(manifest)) => manifest.declare_into(&mut table),
                // Gone since it was found: the table is what is left.
                Ok(None) => {}
                Err(errors) => {
                    tracing::warn!(manifest = %dir.display(), %errors, "cannot use the manifest");
                    manifest_errors = errors.errors.iter().map(ManifestFinding::of).collect();
                    if errors.omitted > 0 {
                        manifest_errors.push(ManifestFinding {
                            line: 1,
                            column: 1,
                            message: format!("and {} more finding(s)", errors.omitted),
                        });
                    }
                }
            }
        }
        let file = sources
            .table
            .clone()
            .or_else(|| sources.manifest.clone())
            .unwrap_or_default();
        let root = if sources.table.is_some() {
            root
        } else {
            manifest_dir.clone().unwrap_or_default()
        };
        Self {
            stamps: stamps(sources),
            sources: sources.clone(),
            file,
            root,
            manifest_dir,
            table: Rc::new(table),
            error,
            manifest_errors,
        }
    }

    /// The table to check against: `None` when the table file could not be
    /// read (the manifest alone would flag every observed key as unknown).
    pub fn usable(&self) -> Option<&SignatureTable> {
        self.error.is_none().then_some(&*self.table)
    }
}

/// A table file, its error, and the folder holding its `.gantry/`.
fn load_table_file(file: &Path) -> (SignatureTable, Option<String>, PathBuf) {
    let root = file
        .parent()
        .and_then(Path::parent)
        .map(Path::to_owned)
        .unwrap_or_default();
    // The table belongs to the folder holding `.gantry`: read only if it
    // stays inside it.
    let loaded = if root.as_os_str().is_empty() {
        SignatureTable::load(file)
    } else {
        // `file` is `root` joined with the table's place in it.
        SignatureTable::load_in(&root, file.strip_prefix(&root).unwrap_or(file))
    };
    match loaded {
        Ok(table) => (table, None, root),
        Err(e) => {
            tracing::warn!(table = %file.display(), error = %e, "cannot load signature table");
            (SignatureTable::new(), Some(e.to_string()), root)
        }
    }
}

fn stamp(file: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(file).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

fn stamps(sources: &TableSources) -> [Option<(SystemTime, u64)>; 2] {
    [
        sources.table.as_deref().and_then(stamp),
        sources.manifest.as_deref().and_then(stamp),
    ]
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

/// Every table in use, by its sources.
#[derive(Debug, Default)]
pub struct TableCache {
    tables: HashMap<TableSources, LoadedTable>,
    host: Vec<HostKey>,
}

impl TableCache {
    /// A cache whose tables all hold the host's keys.
    pub fn with_host(host: Vec<HostKey>) -> Self {
        Self {
            tables: HashMap::new(),
            host,
        }
    }

    pub fn get_or_load(&mut self, sources: &TableSources) -> &LoadedTable {
        let host = &self.host;
        self.tables
            .entry(sources.clone())
            .or_insert_with(|| LoadedTable::load_sources(sources, host))
    }

    pub fn get(&self, sources: &TableSources) -> Option<&LoadedTable> {
        self.tables.get(sources)
    }

    /// Every loaded table, sorted by file.
    pub fn all(&self) -> Vec<&LoadedTable> {
        let mut all: Vec<&LoadedTable> = self.tables.values().collect();
        all.sort_by(|a, b| a.sources.cmp(&b.sources));
        all
    }

    /// Reloads every loaded table made from `file` (a table file or a
    /// manifest) whatever its stamps say (the client reported a change,
    /// which a same-size write within the file system's timestamp
    /// granularity leaves invisible to the stamp). Returns the tables
    /// reloaded: none when `file` is part of no loaded table.
    pub fn reload(&mut self, file: &Path) -> Vec<TableSources> {
        let hit: Vec<TableSources> = self
            .tables
            .keys()
            .filter(|sources| sources.holds(file))
            .cloned()
            .collect();
        for sources in &hit {
            self.tables.insert(
                sources.clone(),
                LoadedTable::load_sources(sources, &self.host),
            );
        }
        hit
    }

    /// Reloads every table one of whose files changed; returns those.
    pub fn refresh(&mut self) -> Vec<TableSources> {
        let mut changed = Vec::new();
        for (sources, loaded) in &mut self.tables {
            if stamps(sources) != loaded.stamps {
                *loaded = LoadedTable::load_sources(sources, &self.host);
                changed.push(sources.clone());
            }
        }
        changed
    }
}
