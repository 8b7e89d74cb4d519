//! The three-way merge behind a save: what this run changed since it read
//! the table (`ours` against `base`) is laid over what is on disk now
//! (`theirs`), so a hand edit or another run's keys survive. A part changed
//! on both sides, differently, is a [`Conflict`]: the file's version is
//! kept and the conflict reported, never silently overwritten.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value as Json};

use super::Extra;
use crate::signature::{KeyEntry, SignatureTable, Site};

/// A part of the table changed both in the file and by this run,
/// differently; the file's version was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conflict {
    /// One field of a key's entry (`params`, `doc`, ...).
    Key { key: String, field: String },
    /// A key removed from the file that this run changed.
    KeyRemoved { key: String },
    /// A struct's definition.
    Struct { name: String },
    /// A top-level field of the file this Gantry does not know.
    Field { name: String },
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const KEPT: &str = "was changed both in the file and by this run, differently; the file's version was kept";
        match self {
            Conflict::Key { key, field } => write!(f, "key `{key}`: `{field}` {KEPT}"),
            Conflict::KeyRemoved { key } => write!(
                f,
                "key `{key}` was removed from the file but changed by this run; the removal was kept"
            ),
            Conflict::Struct { name } => write!(f, "struct `{name}` {KEPT}"),
            Conflict::Field { name } => write!(f, "field `{name}` {KEPT}"),
        }
    }
}

/// Merges `ours` (read as `base`, changed since) with `theirs` (the file
/// now).
pub(crate) fn merge3(
    base: &SignatureTable,
    ours: &SignatureTable,
    theirs: &SignatureTable,
) -> (SignatureTable, Vec<Conflict>) {
    let mut conflicts = Vec::new();
    let empty = Map::new();

    let mut structs = BTreeMap::new();
    for name in union(&base.structs.defs, &ours.structs.defs, &theirs.structs.defs) {
        let sides = [&base.structs.defs, &ours.structs.defs, &theirs.structs.defs]
            .map(|defs| defs.get(name));
        if let Some(def) = pick(sides, || {
            conflicts.push(Conflict::Struct {
                name: name.to_owned(),
            })
        }) {
            structs.insert(name.to_owned(), def.clone());
        }
    }

    let mut keys = BTreeMap::new();
    let mut key_extra = BTreeMap::new();
    for key in union(&base.keys, &ours.keys, &theirs.keys) {
        let [b, o, t] = [base, ours, theirs].map(|table| side(table, key, &empty));
        let merged = if o == t || t == b {
            o.map(|(e, x)| (e.clone(), x.clone()))
        } else if o == b {
            t.map(|(e, x)| (e.clone(), x.clone()))
        } else {
            match (o, t) {
                (Some(o), Some(t)) => Some(merge_entry(key, b, o, t, &mut conflicts)),
                (Some(_), None) => {
                    conflicts.push(Conflict::KeyRemoved {
                        key: key.to_owned(),
                    });
                    None
                }
                // Removed here (a run never removes keys), changed there.
                (None, t) => t.map(|(e, x)| (e.clone(), x.clone())),
            }
        };
        if let Some((entry, extra)) = merged {
            if !extra.is_empty() {
                key_extra.insert(key.to_owned(), extra);
            }
            keys.insert(key.to_owned(), entry);
        }
    }

    let top = merge_map(
        &base.extra.top,
        &ours.extra.top,
        &theirs.extra.top,
        |name| {
            conflicts.push(Conflict::Field {
                name: name.to_owned(),
            })
        },
    );
    let table = SignatureTable {
        version: ours.version.max(theirs.version),
        structs: crate::types::StructRegistry {
            defs: structs,
            ..Default::default()
        },
        keys,
        extra: Extra {
            top,
            keys: key_extra,
        },
        pending_names: Default::default(),
        fresh: Default::default(),
    };
    (table, conflicts)
}

type Side<'a> = (&'a KeyEntry, &'a Map<String, Json>);

/// A key's entry in one table with its unknown fields.
fn side<'a>(
    table: &'a SignatureTable,
    key: &str,
    empty: &'a Map<String, Json>,
) -> Option<Side<'a>> {
    let entry = table.keys.get(key)?;
    Some((entry, table.extra.keys.get(key).unwrap_or(empty)))
}

/// Both sides changed one key: field by field.
fn merge_entry(
    key: &str,
    base: Option<Side<'_>>,
    (o, ox): Side<'_>,
    (t, tx): Side<'_>,
    conflicts: &mut Vec<Conflict>,
) -> (KeyEntry, Map<String, Json>) {
    let b = base.map(|(e, _)| e);
    let mut conflict = |field: &str| {
        conflicts.push(Conflict::Key {
            key: key.to_owned(),
            field: field.to_owned(),
        })
    };
    let mut entry = t.clone();
    macro_rules! field {
        ($name:ident) => {
            if let Some(v) = pick(
                [b.map(|e| &e.$name), Some(&o.$name), Some(&t.$name)],
                || conflict(stringify!($name)),
            ) {
                entry.$name = v.clone();
            }
        };
    }
    field!(kind);
    field!(origin);
    field!(doc);
    field!(params);
    field!(response);
    entry.sites = merge_sites(b.map(|e| &e.sites), &o.sites, &t.sites);
    let empty = Map::new();
    let bx = base.map_or(&empty, |(_, x)| x);
    let extra = merge_map(bx, ox, tx, |name| conflict(name));
    (entry, extra)
}

/// The three-way rule for one part: unchanged on one side takes the
/// other's; changed on both, differently, is a conflict and keeps theirs.
fn pick<T: PartialEq>(
    [base, ours, theirs]: [Option<&T>; 3],
    on_conflict: impl FnOnce(),
) -> Option<&T> {
    if ours == theirs || theirs == base {
        ours
    } else if ours == base {
        theirs
    } else {
        on_conflict();
        theirs
    }
}

/// Sites are a set: one added on either side stays, one removed on either
/// side goes.
fn merge_sites(
    base: Option<&BTreeSet<Site>>,
    ours: &BTreeSet<Site>,
    theirs: &BTreeSet<Site>,
) -> BTreeSet<Site> {
    let in_base = |s: &Site| base.is_some_and(|b| b.contains(s));
    ours.iter()
        .filter(|s| theirs.contains(s) || !in_base(s))
        .chain(theirs.iter().filter(|s| !ours.contains(s) && !in_base(s)))
        .cloned()
        .collect()
}

/// Unknown fields, name by name, in the file's order with new names after.
fn merge_map(
    base: &Map<String, Json>,
    ours: &Map<String, Json>,
    theirs: &Map<String, Json>,
    mut on_conflict: impl FnMut(&str),
) -> Map<String, Json> {
    let mut out = Map::new();
    let names = theirs
        .keys()
        .chain(ours.keys().filter(|n| !theirs.contains_key(*n)))
        .chain(
            base.keys()
                .filter(|n| !theirs.contains_key(*n) && !ours.contains_key(*n)),
        );
    for name in names {
        let sides = [base.get(name), ours.get(name), theirs.get(name)];
        if let Some(value) = pick(sides, || on_conflict(name)) {
            out.insert(name.clone(), value.clone());
        }
    }
    out
}

/// Every name of three sorted maps, once, sorted.
fn union<'a, V>(
    a: &'a BTreeMap<String, V>,
    b: &'a BTreeMap<String, V>,
    c: &'a BTreeMap<String, V>,
) -> BTreeSet<&'a str> {
    a.keys()
        .chain(b.keys())
        .chain(c.keys())
        .map(String::as_str)
        .collect()
}
