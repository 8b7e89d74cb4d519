//! What a run holds the mod to, and what it says about the table after.
//!
//! Before a run: the mod's `mod.toml` ([`gantry_host::manifest`]) is read,
//! and a manifest that cannot be used stops everything with every finding
//! printed (exit status 2, as for every mistake in what the run was given).
//!
//! After a run: the table learns from traffic, so a typo'd key would become
//! part of it without a word. The run says which keys it added that the mod
//! only listens to and never sends, or only sends and nobody in the mod
//! listens to, with the known keys a typo away ([`unpaired`]); with
//! `--locked` it writes nothing and says what it would have changed
//! ([`changes`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use gantry_host::manifest::{self, Manifest, ManifestErrors};
use gantry_host::{KeyEntry, Origin, Role, SignatureTable};
use gantry_lsp::index::WorkspaceIndex;
use gantry_lsp::workspace::{index_files, script_files};

use crate::explain::distance;
use crate::out::errln;

/// Keys this many edits away (or closer) are offered as "did you mean".
const NEAR: usize = 2;

/// The most suggestions one finding offers.
const MAX_SUGGESTIONS: usize = 3;

/// The mod's manifest, if it has one. A manifest that cannot be used has
/// every finding printed (`error: mod.toml:12:10: ...`), and the exit
/// status the caller returns at once: nothing runs.
pub fn load_manifest(dir: &Path) -> Result<Option<Manifest>, ExitCode> {
    manifest::load(dir).map_err(|errors| refuse_manifest(&errors, "nothing ran"))
}

/// Prints every finding of a manifest that cannot be used, then one line
/// saying what did not happen (`nothing ran`, `no stubs written`), and
/// returns the exit status of a setup error.
pub fn refuse_manifest(errors: &ManifestErrors, outcome: &str) -> ExitCode {
    for error in errors.iter() {
        errln!("error: {error}");
    }
    if errors.omitted > 0 {
        errln!(
            "error: {}: and {} more error(s) not shown",
            errors.file,
            errors.omitted
        );
    }
    errln!(
        "gantry: {} has {} error(s); {outcome}",
        errors.file,
        errors.len()
    );
    ExitCode::from(2)
}

/// How one key is used in the mod: where it is sent and listened to.
#[derive(Default)]
struct Uses {
    sends: BTreeSet<String>,
    listens: BTreeSet<String>,
}

/// Every key's uses in the mod: the scripts' calls as the scanners find
/// them (a call not run yet included) and the sites the table recorded
/// (a call with a computed key, a Rust host's).
fn uses_in(dir: &Path, table: &SignatureTable) -> BTreeMap<String, Uses> {
    let files = script_files(dir);
    let index: WorkspaceIndex = index_files(&[dir.to_owned()], &files, |_, _| {});
    let mut uses: BTreeMap<String, Uses> = BTreeMap::new();
    for (key, _) in index.keys() {
        for (file, _, call) in index.calls_of(key) {
            let file = file.strip_prefix(dir).unwrap_or(file).to_string_lossy();
            let at = format!("{file}:{}", call.range.start.line + 1);
            let entry = uses.entry(key.to_owned()).or_default();
            match call.role {
                Some(Role::Send) => entry.sends.insert(at),
                Some(Role::Listen) => entry.listens.insert(at),
                Some(Role::Declare) | None => false,
            };
        }
    }
    for (key, entry) in table.entries() {
        for site in &entry.sites {
            let at = format!("{}:{}", site.file, site.line);
            let found = uses.entry(key.to_owned()).or_default();
            match site.role {
                Role::Send => found.sends.insert(at),
                Role::Listen => found.listens.insert(at),
                Role::Declare => false,
            };
        }
    }
    uses
}

/// Whether `a` is `b` or a key below it (`Player.Hurt` is below `Player`):
/// a partial listener of `Player` hears `Player.Hurt`.
fn at_or_below(a: &str, b: &str) -> bool {
    a == b || a.strip_prefix(b).is_some_and(|rest| rest.starts_with('.'))
}

/// One key the run added that the mod uses one way only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpaired {
    pub key: String,
    /// Listened to (and sent nowhere), or sent (and heard nowhere).
    pub listened: bool,
    /// Where, as `file:line`.
    pub at: Vec<String>,
    /// Known keys a typo away, those used the other way first.
    pub near: Vec<String>,
}

impl std::fmt::Display for Unpaired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = self.at.join(", ");
        if self.listened {
            write!(
                f,
                "{} is listened to ({at}) but sent nowhere in the mod",
                self.key
            )?;
        } else {
            write!(
                f,
                "{} is sent ({at}) but listened to nowhere in the mod",
                self.key
            )?;
        }
        if !self.near.is_empty() {
            write!(f, " — did you mean {}?", self.near.join(" or "))?;
        }
        Ok(())
    }
}

/// The keys of `after` that are not in `before` (added by the run), not
/// declared (a declaration is meant), and used only one way anywhere in
/// the mod in `dir`: listened to and never sent (nor a key below it), or
/// sent and heard by nobody (nor by a listener of a key above it).
pub fn unpaired(dir: &Path, before: &SignatureTable, after: &SignatureTable) -> Vec<Unpaired> {
    let added: Vec<(&str, &KeyEntry)> = after
        .entries()
        .filter(|(key, entry)| entry.origin == Origin::Observed && before.get(key).is_none())
        .collect();
    if added.is_empty() {
        return Vec::new();
    }
    let uses = uses_in(dir, after);
    let sent = |key: &str| {
        uses.iter()
            .any(|(k, u)| !u.sends.is_empty() && at_or_below(k, key))
    };
    let heard = |key: &str| {
        uses.iter()
            .any(|(k, u)| !u.listens.is_empty() && at_or_below(key, k))
    };
    let declared = |key: &str| {
        after
            .get(key)
            .is_some_and(|entry| entry.origin == Origin::Declared)
    };
    let mut found = Vec::new();
    for (key, _) in added {
        let Some(use_) = uses.get(key) else {
            continue;
        };
        let listened = !use_.listens.is_empty() && !sent(key);
        let unheard = !use_.sends.is_empty() && !heard(key);
        if !listened && !unheard {
            continue;
        }
        // A known key a typo away; one used the other way (or declared,
        // so meant) is the likely intent and comes first.
        let candidates: BTreeSet<&str> = uses
            .keys()
            .map(String::as_str)
            .chain(after.keys.keys().map(String::as_str))
            .filter(|k| *k != key)
            .collect();
        let mut near: Vec<(bool, usize, &str)> = candidates
            .into_iter()
            .filter_map(|k| {
                let d = distance(&k.to_lowercase(), &key.to_lowercase());
                let other_way = declared(k)
                    || uses.get(k).is_some_and(|u| {
                        if listened {
                            !u.sends.is_empty()
                        } else {
                            !u.listens.is_empty()
                        }
                    });
                (d <= NEAR).then_some((!other_way, d, k))
            })
            .collect();
        near.sort();
        let at = if listened { &use_.listens } else { &use_.sends };
        found.push(Unpaired {
            key: key.to_owned(),
            listened,
            at: at.iter().cloned().collect(),
            near: near
                .into_iter()
                .take(MAX_SUGGESTIONS)
                .map(|(_, _, k)| k.to_owned())
                .collect(),
        });
    }
    found
}

/// What saving `after` over the table read as `before` would change, one
/// line each: keys and structs added, removed or changed (and in which
/// fields). Empty when the file would stay as it is.
pub fn changes(before: &SignatureTable, after: &SignatureTable) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, def) in &after.structs.defs {
        match before.structs.defs.get(name) {
            None => lines.push(format!("add struct {name}")),
            Some(old) if old != def => lines.push(format!("change struct {name}")),
            Some(_) => {}
        }
    }
    for (key, entry) in after.entries() {
        let Some(old) = before.get(key) else {
            lines.push(format!("add key {key} {}", entry.signature_label()));
            continue;
        };
        let mut fields = Vec::new();
        if old.kind != entry.kind {
            fields.push(format!("kind {} → {}", old.kind, entry.kind));
        }
        if old.origin != entry.origin {
            fields.push("origin".to_owned());
        }
        if old.params != entry.params || old.response != entry.response {
            fields.push(format!(
                "signature {} → {}",
                old.signature_label(),
                entry.signature_label()
            ));
        }
        if old.doc != entry.doc {
            fields.push("doc".to_owned());
        }
        let added = entry.sites.difference(&old.sites).count();
        let removed = old.sites.difference(&entry.sites).count();
        if added > 0 {
            fields.push(format!("{added} call site(s) added"));
        }
        if removed > 0 {
            fields.push(format!("{removed} call site(s) removed"));
        }
        if !fields.is_empty() {
            lines.push(format!("change key {key}: {}", fields.join(", ")));
        }
    }
    for key in before.keys.keys() {
        if after.get(key).is_none() {
            lines.push(format!("remove key {key}"));
        }
    }
    if lines.is_empty() && before.to_json() != after.to_json() {
        lines.push("rewrite the file".to_owned());
    }
    lines
}
