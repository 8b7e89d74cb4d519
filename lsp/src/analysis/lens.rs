//! Code lenses on every send and listen of a literal key: how many places
//! send it and how many listen to it, mod-wide and in the host's Rust
//! (`3 senders · 2 listeners`), opening those references when clicked.

use std::collections::HashMap;

use gantry_host::{Language, Role, SignatureTable};
use lsp_types::{CodeLens, Command, Location, Uri};

use super::SourceFile;
use super::keys::literal_keys;
use super::navigation::{TableFiles, key_references};
use crate::index::WorkspaceIndex;

/// The command a lens runs: the editor's extension (or its config) maps it
/// to its references view, with the arguments `[uri, position, locations]`.
pub const SHOW_REFERENCES: &str = "gantry.showReferences";

/// "1 sender", "3 senders".
fn count(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// The lenses of one script; each key's counts and references are found
/// once, however often the script names it.
pub fn code_lenses(
    file: &SourceFile<'_>,
    uri: &Uri,
    table: &SignatureTable,
    tables: TableFiles<'_>,
    workspace: &WorkspaceIndex,
) -> Vec<CodeLens> {
    let mut known: HashMap<&str, (String, Vec<Location>)> = HashMap::new();
    let mut out = Vec::new();
    for key in literal_keys(file) {
        if key.role().is_none() {
            continue;
        }
        let (title, locations) = known
            .entry(key.key)
            .or_insert_with(|| {
                let (mut senders, mut listeners) = (0, 0);
                for (_, _, call) in workspace.calls_of(key.key) {
                    match call.role {
                        Some(Role::Send) => senders += 1,
                        Some(Role::Listen) => listeners += 1,
                        _ => {}
                    }
                }
                for site in table
                    .get(key.key)
                    .into_iter()
                    .flat_map(|e| e.sites.iter())
                    .filter(|s| s.language == Language::Rust)
                {
                    match site.role {
                        Role::Send => senders += 1,
                        Role::Listen => listeners += 1,
                        Role::Declare => {}
                    }
                }
                let title = format!(
                    "{} · {}",
                    count(senders, "sender"),
                    count(listeners, "listener")
                );
                (
                    title,
                    key_references(key.key, table, tables, workspace, false),
                )
            })
            .clone();
        let range = file.range(key.literal.clone());
        out.push(CodeLens {
            range,
            command: Some(Command {
                title,
                command: SHOW_REFERENCES.to_owned(),
                arguments: Some(vec![
                    serde_json::json!(uri.as_str()),
                    serde_json::json!(range.start),
                    serde_json::json!(locations),
                ]),
            }),
            data: None,
        });
    }
    out
}
