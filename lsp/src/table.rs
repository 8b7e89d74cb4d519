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

use gantry_host::SignatureTable;
use gantry_host::manifest::contract::{self, Contract};
use gantry_host::manifest::{ManifestError, Problem};

use crate::analysis::grants::ModGrantsInfo;

pub use gantry_host::manifest::HostKey;
/// Where the files of a script's table are: shared with `gantry stubs`.
pub use gantry_host::manifest::contract::{find_manifest, find_table};

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
    /// The manifest's mod and its `[grants]`, when it declares any.
    pub grants: Option<ModGrantsInfo>,
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

    /// Loads and merges `sources` over the host's keys, as every tool
    /// does ([`Contract::load`]).
    pub fn load_sources(sources: &TableSources, host: &[HostKey]) -> Self {
        let manifest_dir = sources
            .manifest
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_owned);
        let merged = Contract::load(sources.table.as_deref(), host, manifest_dir.as_deref());
        if let (Some(file), Some(e)) = (&sources.table, &merged.table_error) {
            tracing::warn!(table = %file.display(), error = %e, "cannot load signature table");
        }
        let mut manifest_errors = Vec::new();
        if let Some(errors) = &merged.manifest_errors {
            manifest_errors = errors.errors.iter().map(ManifestFinding::of).collect();
            if errors.omitted > 0 {
                manifest_errors.push(ManifestFinding {
                    line: 1,
                    column: 1,
                    message: format!("and {} more finding(s)", errors.omitted),
                });
            }
        }
        let grants = merged.manifest.as_ref().and_then(|m| {
            Some(ModGrantsInfo {
                module: m.module.name.as_str().into(),
                grants: m.grants.clone()?,
            })
        });
        let file = sources
            .table
            .clone()
            .or_else(|| sources.manifest.clone())
            .unwrap_or_default();
        let root = match &sources.table {
            Some(table) => contract::table_root(table),
            None => manifest_dir.clone().unwrap_or_default(),
        };
        Self {
            stamps: stamps(sources),
            sources: sources.clone(),
            file,
            root,
            manifest_dir,
            table: Rc::new(merged.table),
            error: merged.table_error.map(|e| e.to_string()),
            manifest_errors,
            grants,
        }
    }

    /// The table to check against: `None` when the table file could not be
    /// read (the manifest alone would flag every observed key as unknown).
    pub fn usable(&self) -> Option<&SignatureTable> {
        self.error.is_none().then_some(&*self.table)
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
