//! Hover, go-to-definition, references and workspace symbols: everything
//! that starts from a key and ends at the table's record of it.

use std::path::{Path, PathBuf};

use gantry_host::{KeyEntry, Role, SignatureTable, Site};
use lsp_types::{
    Hover, HoverContents, Location, MarkupContent, MarkupKind, OneOf, Position, Range, SymbolKind,
    WorkspaceLocation, WorkspaceSymbol,
};

use super::SourceFile;
use super::completion::key_summary;
use crate::index::WorkspaceIndex;
use crate::uri::path_to_uri;

/// Where the table lives: its file and the scripts directory that holds
/// `.gantry/` (recorded site paths are relative to it or to a parent).
#[derive(Debug, Clone, Copy)]
pub struct TableFiles<'a> {
    pub file: &'a Path,
    pub root: &'a Path,
}

pub fn hover(file: &SourceFile<'_>, table: &SignatureTable, offset: usize) -> Option<Hover> {
    let (call, key) = file.key_at(offset)?;
    let entry = table.get(key)?;
    let mut text = format!(
        "```\n{key}{}\n```\n{}",
        entry.signature_label(),
        key_summary(entry)
    );
    if let Some(site) = entry.declaration_site() {
        text.push_str(&format!("\n\ndeclared at {site}"));
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

/// The declaring site of the key under the cursor. A key that was only
/// observed has no declaration; its first recorded site stands in.
pub fn definition(
    file: &SourceFile<'_>,
    table: &SignatureTable,
    tables: TableFiles<'_>,
    offset: usize,
) -> Option<Location> {
    let (_, key) = file.key_at(offset)?;
    let entry = table.get(key)?;
    let site = entry
        .declaration_site()
        .or_else(|| entry.sites.iter().next())?;
    site_location(tables.root, site)
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
            let path = resolve_site(tables.root, &site.file);
            if seen
                .iter()
                .any(|(p, line)| *p == path && line + 1 == site.line)
            {
                continue;
            }
            if let Some(location) = site_location(tables.root, site) {
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
            location: match home_site(entry).and_then(|s| site_location(tables.root, s)) {
                Some(location) => OneOf::Left(location),
                None => OneOf::Right(WorkspaceLocation {
                    uri: table_uri.clone(),
                }),
            },
            data: None,
        })
        .collect()
}

fn home_site(entry: &KeyEntry) -> Option<&Site> {
    entry
        .declaration_site()
        .or_else(|| entry.sites.iter().next())
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

fn site_location(root: &Path, site: &Site) -> Option<Location> {
    let uri = path_to_uri(&resolve_site(root, &site.file))?;
    let position = Position::new(site.line.saturating_sub(1), site.column.saturating_sub(1));
    Some(Location::new(uri, Range::new(position, position)))
}
