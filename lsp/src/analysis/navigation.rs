//! Hover, go-to-definition, references and workspace symbols: everything
//! that starts from a key and ends at the table's record of it.

use std::path::{Path, PathBuf};

use gantry_host::{KeyEntry, Language, Origin, Role, SignatureTable, Site};
use lsp_types::{
    Hover, HoverContents, Location, MarkupContent, MarkupKind, OneOf, Position, Range, SymbolKind,
    WorkspaceLocation, WorkspaceSymbol,
};

use super::SourceFile;
use super::completion::key_summary;
use crate::index::WorkspaceIndex;
use crate::uri::path_to_uri;

/// Where the table lives: its file and the scripts directory that holds
/// `.gantry/` (recorded site paths are relative to it or to a parent), and
/// the folder of the manifest (its declaration sites are relative to it).
#[derive(Debug, Clone, Copy)]
pub struct TableFiles<'a> {
    pub file: &'a Path,
    pub root: &'a Path,
    pub manifest_dir: Option<&'a Path>,
}

pub fn hover(file: &SourceFile<'_>, table: &SignatureTable, offset: usize) -> Option<Hover> {
    let (call, key) = file.key_at(offset)?;
    let entry = table.get(key)?;
    let mut text = format!(
        "```\n{key}{}\n```\n{}",
        entry.signature_label(),
        key_summary(entry)
    );
    match entry.declaration_site() {
        Some(site) => text.push_str(&format!("\n\ndeclared at {site}")),
        // `gantry run` declares `Game.Tick` with no site a user could open.
        None if entry.origin == Origin::Declared => text.push_str("\n\ndeclared by the host"),
        None => {}
    }
    let span = call.key_arg()?.span;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: Some(file.range(span.start..span.end)),
    })
}

/// Where the key under the cursor comes from: its declaring site (its
/// line in `mod.toml`, or the Rust line that declared it), then every
/// call that sends it, in the scripts and in Rust. A key that was only
/// observed has no declaration; its first recorded site that exists
/// stands in. Never a file that is not there: a key the host declared
/// with no site (`gantry run`'s `Game.Tick`) has only its senders.
pub fn definition(
    file: &SourceFile<'_>,
    table: &SignatureTable,
    tables: TableFiles<'_>,
    workspace: &WorkspaceIndex,
    offset: usize,
) -> Vec<Location> {
    let Some((_, key)) = file.key_at(offset) else {
        return Vec::new();
    };
    let entry = table.get(key);
    let mut out: Vec<Location> = entry
        .and_then(|e| home_location(e, tables))
        .into_iter()
        .collect();
    for (path, _, call) in workspace.calls_of(key) {
        if call.role == Some(Role::Send)
            && let Some(uri) = path_to_uri(path)
        {
            out.push(Location::new(uri, call.range));
        }
    }
    for site in entry
        .into_iter()
        .flat_map(|e| e.sites.iter())
        .filter(|s| s.role == Role::Send && s.language == Language::Rust)
    {
        out.extend(site_location(tables, site));
    }
    let mut seen = Vec::new();
    out.retain(|l| {
        let new = !seen.contains(&(l.uri.clone(), l.range.start.line));
        seen.push((l.uri.clone(), l.range.start.line));
        new
    });
    out
}

/// Every recorded site of the key under the cursor, then every call of it
/// in the workspace's scripts, without duplicates.
pub fn references(
    file: &SourceFile<'_>,
    table: &SignatureTable,
    tables: TableFiles<'_>,
    workspace: &WorkspaceIndex,
    offset: usize,
    include_declaration: bool,
) -> Vec<Location> {
    let Some((_, key)) = file.key_at(offset) else {
        return Vec::new();
    };
    key_references(key, table, tables, workspace, include_declaration)
}

/// Every call of `key` in the workspace's scripts, then every recorded
/// site of it no call already stands for.
pub fn key_references(
    key: &str,
    table: &SignatureTable,
    tables: TableFiles<'_>,
    workspace: &WorkspaceIndex,
    include_declaration: bool,
) -> Vec<Location> {
    let mut out: Vec<Location> = Vec::new();
    let mut seen: Vec<(PathBuf, u32)> = Vec::new();
    for (path, _, call) in workspace.calls_of(key) {
        if let Some(uri) = path_to_uri(path) {
            seen.push((path.to_owned(), call.range.start.line));
            out.push(Location::new(uri, call.range));
        }
    }
    if let Some(entry) = table.get(key) {
        for site in &entry.sites {
            if site.role == Role::Declare && !include_declaration {
                continue;
            }
            let path = site_path(tables, site);
            if seen
                .iter()
                .any(|(p, line)| *p == path && line + 1 == site.line)
            {
                continue;
            }
            if let Some(location) = site_location(tables, site) {
                out.push(location);
            }
        }
    }
    out
}

/// The keys matching `query` (case-insensitive substring), as symbols.
pub fn workspace_symbols(
    table: &SignatureTable,
    tables: TableFiles<'_>,
    query: &str,
) -> Vec<WorkspaceSymbol> {
    let query = query.to_ascii_lowercase();
    let Some(table_uri) = path_to_uri(tables.file) else {
        return Vec::new();
    };
    table
        .entries()
        .filter(|(key, _)| key.to_ascii_lowercase().contains(&query))
        .map(|(key, entry)| WorkspaceSymbol {
            name: key.to_owned(),
            kind: SymbolKind::EVENT,
            tags: None,
            container_name: gantry_host::key::parent_key(key).map(str::to_owned),
            location: match home_location(entry, tables) {
                Some(location) => OneOf::Left(location),
                None => OneOf::Right(WorkspaceLocation {
                    uri: table_uri.clone(),
                }),
            },
            data: None,
        })
        .collect()
}

/// Where a key lives: its declaration when it was declared (none when the
/// declaration left no site, or its file is gone), else its first recorded
/// site whose file exists.
fn home_location(entry: &KeyEntry, tables: TableFiles<'_>) -> Option<Location> {
    match (entry.declaration_site(), entry.origin) {
        (Some(site), _) => site_location(tables, site),
        (None, Origin::Declared) => None,
        (None, Origin::Observed) => entry
            .sites
            .iter()
            .find_map(|site| site_location(tables, site)),
    }
}

/// A recorded path: absolute as is; relative to the scripts directory or
/// the first parent of it where the file exists (Rust sites are relative to
/// a crate root above the scripts).
pub fn resolve_site(root: &Path, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        return path.to_owned();
    }
    root.ancestors()
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.exists())
        .unwrap_or_else(|| root.join(path))
}

/// The file of a recorded site: a manifest's next to it, any other as
/// [`resolve_site`] finds it.
fn site_path(tables: TableFiles<'_>, site: &Site) -> PathBuf {
    match (site.language, tables.manifest_dir) {
        (Language::Manifest, Some(dir)) if Path::new(&site.file).is_relative() => {
            dir.join(&site.file)
        }
        _ => resolve_site(tables.root, &site.file),
    }
}

/// Where a recorded site is, if its file exists: a site of a file that is
/// not there (a host's `(gantry run)`, a moved script) is no location.
fn site_location(tables: TableFiles<'_>, site: &Site) -> Option<Location> {
    let path = site_path(tables, site);
    if !path.is_file() {
        return None;
    }
    let uri = path_to_uri(&path)?;
    let position = Position::new(site.line.saturating_sub(1), site.column.saturating_sub(1));
    Some(Location::new(uri, Range::new(position, position)))
}
