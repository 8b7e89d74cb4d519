//! `gantry explain DIR KEY`: who sends KEY, who listens, and why a listener
//! may never fire.
//!
//! Two sources of truth, merged: the signature table (every site a run has
//! recorded, Rust ones included) and a fresh scan of the scripts in DIR
//! with the same scanners the language server uses (sites not run yet).
//! From them it names the usual culprits: nobody sends, nobody listens, a
//! near-miss key (a typo one or two edits away), a listener that wants
//! more arguments than the senders send.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use gantry_host::{Role, SignatureTable};
use gantry_lsp::index::WorkspaceIndex;
use gantry_lsp::workspace::{index_files, script_files};

use crate::out::{out, outln};

/// Keys this many edits away (or closer) are near misses.
const NEAR: usize = 2;

/// One place a key is used.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Use {
    at: String,
    how: String,
}

/// `gantry explain DIR KEY [--ticks N]`: with ticks, run the mod first
/// (its output, then what happened to KEY's listeners), then the static
/// explanation from the table the run saved.
pub fn run_then_explain(
    dir: std::path::PathBuf,
    key: String,
    table: Option<std::path::PathBuf>,
    ticks: Option<u32>,
    limits: crate::limits::LimitArgs,
) -> anyhow::Result<ExitCode> {
    // Before the run's header: a typo in the folder is the whole answer.
    crate::folder::mod_folder(&dir)?;
    crate::folder::table_path(&dir, table.as_deref())?;
    if let Err(code) = crate::contract::load_manifest(&dir) {
        return Ok(code);
    }
    if let Some(ticks) = ticks {
        outln!("== a run of {ticks} tick(s) ==");
        crate::run::run(crate::run::RunArgs {
            dir: dir.clone(),
            ticks: Some(ticks),
            table: table.clone(),
            no_table: false,
            watch: false,
            tick_ms: 0,
            trace: false,
            trace_key: None,
            why: vec![key.clone()],
            why_on_stdout: true,
            limits,
            locked: false,
            record: None,
            bridge: None,
            profile: Default::default(),
        })?;
        outln!("== from the table and the scripts ==");
    }
    run(&dir, &key, table.as_deref())
}

pub fn run(dir: &Path, key: &str, table: Option<&Path>) -> anyhow::Result<ExitCode> {
    let manifest = match crate::contract::load_manifest(dir) {
        Ok(manifest) => manifest,
        Err(code) => return Ok(code),
    };
    let mut table = crate::folder::load_table(dir, table)?;
    // What a run declares, as the run would: the host's tick, then the
    // manifest's keys over the file's.
    table.declare(crate::run::TICK_KEY, crate::run::tick_decl(), None)?;
    if let Some(manifest) = &manifest {
        manifest.declare_into(&mut table);
    }
    let files = script_files(dir);
    let index = index_files(&[dir.to_owned()], &files, |_, _| {});
    out!("{}", explain(dir, key, &table, &index));
    Ok(ExitCode::SUCCESS)
}

/// The whole report for `key`.
fn explain(dir: &Path, key: &str, table: &SignatureTable, index: &WorkspaceIndex) -> String {
    let mut out = String::new();
    let entry = table.get(key);
    match entry {
        Some(entry) => {
            let _ = writeln!(
                out,
                "{key} — {} {} ({:?})",
                entry.kind,
                entry.signature_label(),
                entry.origin
            );
            if !entry.doc.is_empty() {
                let _ = writeln!(out, "  {}", entry.doc);
            }
        }
        None => {
            let _ = writeln!(out, "{key} — not in the signature table");
        }
    }
    let (sends, listens) = uses(dir, key, table, index);
    section(&mut out, "sent from", &sends);
    section(&mut out, "listened to at", &listens);

    let mut notes: Vec<String> = Vec::new();
    let near = near_misses(key, table, index);
    // Which role a near miss would have to play to explain a silence.
    let (silence, wanted) = match (sends.is_empty(), listens.is_empty()) {
        (true, false) => (
            Some(format!("nobody sends {key}: its listeners can never fire")),
            Role::Send,
        ),
        (false, true) => (
            Some(format!("nobody listens to {key}: its sends reach no one")),
            Role::Listen,
        ),
        (true, true) => (
            Some(format!("no script or recorded run uses {key}")),
            Role::Send,
        ),
        (false, false) => (None, Role::Send),
    };
    let hint = near_hint(&near, wanted);
    let hinted = silence.is_some() && !hint.is_empty();
    if let Some(silence) = silence {
        notes.push(format!("{silence}{hint}"));
    }
    if let Some(entry) = entry {
        let sent = entry.params.len();
        for (file, _, call) in index.calls_of(key) {
            if call.function.is_message_listen()
                && let Some(wanted) = call.listener_params
                && wanted > entry.listener_params_allowed()
                && !sends.is_empty()
            {
                notes.push(format!(
                    "{}:{}: the listener takes {wanted} parameters but {key} carries {sent}: \
                     the extra ones are never given a value",
                    relative(dir, file),
                    call.range.start.line + 1
                ));
            }
        }
    }
    if !near.is_empty() && !hinted {
        let names: Vec<&str> = near.iter().map(|(k, _)| k.as_str()).collect();
        notes.push(format!("keys one or two edits away: {}", names.join(", ")));
    }
    notes.push(format!(
        "a listener that still does not fire: `gantry run DIR --why {key}` says, after the run, \
         why each of its listeners did or did not fire (scope, times used up, owner gone, \
         aborted sends, a cancelling hook, an untouched slot); `--trace-key {key}` shows each dispatch"
    ));
    out.push_str("why a listener may not fire:\n");
    for note in notes {
        let _ = writeln!(out, "  - {note}");
    }
    out
}

fn section(out: &mut String, title: &str, uses: &BTreeSet<Use>) {
    if uses.is_empty() {
        let _ = writeln!(out, "{title}: nowhere");
        return;
    }
    let _ = writeln!(out, "{title}:");
    for u in uses {
        let _ = writeln!(out, "  {} ({})", u.at, u.how);
    }
}

/// Sends and listens of `key`: recorded sites and scanned calls, merged.
fn uses(
    dir: &Path,
    key: &str,
    table: &SignatureTable,
    index: &WorkspaceIndex,
) -> (BTreeSet<Use>, BTreeSet<Use>) {
    let mut sends = BTreeSet::new();
    let mut listens = BTreeSet::new();
    if key == crate::run::TICK_KEY {
        sends.insert(Use {
            at: "gantry run".to_owned(),
            how: "the host, once per tick".to_owned(),
        });
    }
    for (file, _, call) in index.calls_of(key) {
        let u = Use {
            at: format!("{}:{}", relative(dir, file), call.range.start.line + 1),
            how: call.function.name().to_owned(),
        };
        match call.role {
            Some(Role::Send) => sends.insert(u),
            Some(Role::Listen) => listens.insert(u),
            Some(Role::Declare) | None => false,
        };
    }
    if let Some(entry) = table.get(key) {
        for site in &entry.sites {
            let at = format!("{}:{}", site.file, site.line);
            let known = |set: &BTreeSet<Use>| set.iter().any(|u| u.at == at);
            let u = Use {
                at: at.clone(),
                how: format!("recorded, {}", site.language),
            };
            match site.role {
                Role::Send if !known(&sends) => {
                    sends.insert(u);
                }
                Role::Listen if !known(&listens) => {
                    listens.insert(u);
                }
                _ => {}
            }
        }
    }
    (sends, listens)
}

/// Other keys within [`NEAR`] edits, with the roles they are used in.
fn near_misses(
    key: &str,
    table: &SignatureTable,
    index: &WorkspaceIndex,
) -> Vec<(String, BTreeSet<Role>)> {
    let mut keys: std::collections::BTreeMap<String, BTreeSet<Role>> = Default::default();
    for (k, entry) in table.entries() {
        let roles = keys.entry(k.to_owned()).or_default();
        roles.extend(entry.sites.iter().map(|s| s.role));
    }
    for (k, role) in index.keys() {
        keys.entry(k.to_owned()).or_default().insert(role);
    }
    keys.into_iter()
        .filter(|(k, _)| k != key && distance(&k.to_lowercase(), &key.to_lowercase()) <= NEAR)
        .collect()
}

fn near_hint(near: &[(String, BTreeSet<Role>)], role: Role) -> String {
    let names: Vec<&str> = near
        .iter()
        .filter(|(_, roles)| roles.contains(&role))
        .map(|(k, _)| k.as_str())
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        let verb = if role == Role::Send {
            "sent"
        } else {
            "listened to"
        };
        format!(" — did you mean {} ({verb})?", names.join(" or "))
    }
}

/// Levenshtein distance over chars.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(here)
            };
            prev = here;
        }
    }
    row[b.len()]
}

fn relative(dir: &Path, file: &Path) -> String {
    file.strip_prefix(dir)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::distance;

    #[test]
    fn edit_distance_counts_insertions_deletions_and_swaps() {
        assert_eq!(distance("Player.Hurt", "Player.Hurt"), 0);
        assert_eq!(distance("Player.Hurt", "Player.Hrut"), 2);
        assert_eq!(distance("Player.Hurt", "Player.Hurts"), 1);
        assert_eq!(distance("Player.Hurt", "Player.Hur"), 1);
        assert_eq!(distance("", "abc"), 3);
    }
}
