//! `[grants]`: what a mod may do, by key subtree.
//!
//! A game hosts mods by different authors; a UI mod has no business
//! starting quests. A manifest says what its mod may reach:
//!
//! ```toml
//! [grants]
//! send = ["Quest"]            # send (and request) Quest and every key below it
//! listen = ["Game", "Quest"]  # listen to them, exactly or partially
//! hook = []                   # run or hook nothing
//! store = ["Quest"]           # store, remove and write stored tables
//! ```
//!
//! A grant on `Quest` covers `Quest` and every key below it
//! (`Quest.Start`, `Quest.Log.Entry`), as a partial listener on `Quest`
//! hears them; it does not cover `QuestLog`. Once `[grants]` is written, a
//! field left out grants nothing of its kind: a mod that declares what it
//! reaches declares all of it. A mod without `[grants]` may use everything
//! (unless its game requires grants, see [`Grants::effective`]).

use std::fmt;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::Problem;
use super::read::found;
use crate::key::validate_key;

/// The most keys one grant field lists.
pub const MAX_GRANT_KEYS: usize = 1_000;

/// One kind of grant: which API functions it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Grant {
    /// Sends and requests, to a global, world, object or named source.
    Send,
    /// Message, world, object, row and partial listens, and unbinding them.
    Listen,
    /// Running a hook and hooking it.
    Hook,
    /// Storing, storing once, removing a stored message and writing a
    /// stored table in place.
    Store,
}

impl Grant {
    /// Every grant, in the order `[grants]` is documented.
    pub const ALL: [Grant; 4] = [Grant::Send, Grant::Listen, Grant::Hook, Grant::Store];

    /// The field of `[grants]` that lists it.
    pub fn field(self) -> &'static str {
        match self {
            Grant::Send => "send",
            Grant::Listen => "listen",
            Grant::Hook => "hook",
            Grant::Store => "store",
        }
    }

    /// The grant's verb before a key (`may not send "Quest.Start"`).
    pub fn verb(self) -> &'static str {
        match self {
            Grant::Send => "send",
            Grant::Listen => "listen to",
            Grant::Hook => "hook",
            Grant::Store => "store",
        }
    }

    /// Its position in a [`Grants`] and in a bit set.
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field())
    }
}

/// Whether the subtree rooted at `root` holds `key`: `Quest` holds `Quest`
/// and `Quest.Start`, not `QuestLog`.
pub fn covers(root: &str, key: &str) -> bool {
    key.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Key subtrees: the roots are kept sorted, each once, none inside another
/// (`["Quest", "Quest.Start"]` is `["Quest"]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyTrees(Vec<String>);

impl KeyTrees {
    /// The subtrees rooted at `roots` (valid keys; see
    /// [`crate::key::validate_key`]).
    pub fn new<S: Into<String>>(roots: impl IntoIterator<Item = S>) -> Self {
        let mut roots: Vec<String> = roots.into_iter().map(Into::into).collect();
        roots.sort();
        roots.dedup();
        // Sorted, a root's descendants follow it (`Quest`, `Quest.Log`,
        // `QuestLog`): keep those no kept root covers.
        let mut kept: Vec<String> = Vec::with_capacity(roots.len());
        for root in roots {
            if !kept.iter().any(|k| covers(k, &root)) {
                kept.push(root);
            }
        }
        Self(kept)
    }

    /// Does a subtree hold `key`?
    pub fn covers(&self, key: &str) -> bool {
        self.0.iter().any(|root| covers(root, key))
    }

    /// The roots, sorted.
    pub fn roots(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The keys both hold: of two roots, the deeper one when one holds
    /// the other.
    pub fn intersect(&self, other: &KeyTrees) -> KeyTrees {
        let mut roots = Vec::new();
        for a in &self.0 {
            for b in &other.0 {
                if covers(a, b) {
                    roots.push(b.clone());
                } else if covers(b, a) {
                    roots.push(a.clone());
                }
            }
        }
        KeyTrees::new(roots)
    }
}

/// The roots as a modder reads them: `Quest, Ui`, or `no key`.
impl fmt::Display for KeyTrees {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no key");
        }
        f.write_str(&self.0.join(", "))
    }
}

/// A mod's `[grants]`: one [`KeyTrees`] per [`Grant`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    trees: [KeyTrees; 4],
}

impl Grants {
    /// Grants of nothing at all.
    pub fn none() -> Self {
        Self::default()
    }

    /// These grants with `grant` covering `roots`.
    pub fn with<S: Into<String>>(
        mut self,
        grant: Grant,
        roots: impl IntoIterator<Item = S>,
    ) -> Self {
        self.trees[grant.index()] = KeyTrees::new(roots);
        self
    }

    /// What `grant` covers.
    pub fn get(&self, grant: Grant) -> &KeyTrees {
        &self.trees[grant.index()]
    }

    /// May `key` be used as `grant` says?
    pub fn allows(&self, grant: Grant, key: &str) -> bool {
        self.get(grant).covers(key)
    }

    /// These grants narrowed by a game's policy for the mod: a key is
    /// granted when both grant it.
    pub fn narrow(&self, policy: &Grants) -> Grants {
        Grants {
            trees: std::array::from_fn(|i| self.trees[i].intersect(&policy.trees[i])),
        }
    }

    /// What a mod may use, `None` for everything: its declared `[grants]`
    /// (`None` when it declares none), narrowed by its game's `policy` for
    /// it, and nothing at all when the game requires grants
    /// (`require_grants`) and the mod declares none.
    pub fn effective(
        declared: Option<&Grants>,
        policy: Option<&Grants>,
        require_grants: bool,
    ) -> Option<Grants> {
        let declared = match declared {
            Some(grants) => Some(grants.clone()),
            None if require_grants => Some(Grants::none()),
            None => None,
        };
        match (declared, policy) {
            (Some(declared), Some(policy)) => Some(declared.narrow(policy)),
            (Some(declared), None) => Some(declared),
            (None, Some(policy)) => Some(policy.clone()),
            (None, None) => None,
        }
    }
}

/// One finding in `[grants]`: the span of the text at fault, the field
/// (`grants.send`), the problem, a "did you mean".
pub(super) type Finding = (Range<usize>, String, Problem, Option<String>);

/// Reads the `[grants]` table; `None` when any finding was made (each one
/// is in `findings`).
pub(super) fn read(value: &Spanned<DeValue<'_>>, findings: &mut Vec<Finding>) -> Option<Grants> {
    let DeValue::Table(table) = value.get_ref() else {
        findings.push((
            value.span(),
            "grants".into(),
            Problem::WrongType {
                expected: "a table",
                found: found(value.get_ref()),
            },
            None,
        ));
        return None;
    };
    let before = findings.len();
    unknown_fields(table, findings);
    let mut grants = Grants::none();
    for grant in Grant::ALL {
        if let Some(value) = table.get(grant.field())
            && let Some(roots) = keys(value, &format!("grants.{grant}"), findings)
        {
            grants = grants.with(grant, roots);
        }
    }
    (findings.len() == before).then_some(grants)
}

fn unknown_fields(table: &DeTable<'_>, findings: &mut Vec<Finding>) {
    let fields = Grant::ALL.map(Grant::field);
    for (name, _) in table.iter() {
        let text = name.get_ref().as_ref();
        if !fields.contains(&text) {
            findings.push((
                name.span(),
                "grants".into(),
                Problem::UnknownField {
                    name: text.to_owned(),
                    expected: "send, listen, hook, store",
                },
                super::near::nearest(text, fields),
            ));
        }
    }
}

/// A grant field: an array of keys, each a subtree root.
fn keys(
    value: &Spanned<DeValue<'_>>,
    field: &str,
    findings: &mut Vec<Finding>,
) -> Option<Vec<String>> {
    let DeValue::Array(items) = value.get_ref() else {
        findings.push((
            value.span(),
            field.to_owned(),
            Problem::WrongType {
                expected: "an array of keys",
                found: found(value.get_ref()),
            },
            None,
        ));
        return None;
    };
    if items.len() > MAX_GRANT_KEYS {
        let problem = Problem::TooMany {
            what: "keys",
            limit: MAX_GRANT_KEYS,
        };
        findings.push((value.span(), field.to_owned(), problem, None));
        return None;
    }
    let mut roots = Vec::with_capacity(items.len());
    let mut ok = true;
    for item in items {
        match item.get_ref() {
            DeValue::String(text) => match validate_key(text) {
                Ok(()) => roots.push(text.to_string()),
                Err(e) => {
                    findings.push((item.span(), field.to_owned(), Problem::BadKey(e), None));
                    ok = false;
                }
            },
            _ => {
                let problem = Problem::WrongType {
                    expected: "a key string",
                    found: found(item.get_ref()),
                };
                findings.push((item.span(), field.to_owned(), problem, None));
                ok = false;
            }
        }
    }
    ok.then_some(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subtree_holds_its_root_and_descendants_only() {
        assert!(covers("Quest", "Quest"));
        assert!(covers("Quest", "Quest.Start.Now"));
        assert!(!covers("Quest", "QuestLog"));
        assert!(!covers("Quest.Start", "Quest"));
    }

    #[test]
    fn narrowing_keeps_what_both_grant() {
        let mine = Grants::none().with(Grant::Send, ["Quest", "Ui"]);
        let policy = Grants::none().with(Grant::Send, ["Quest.Start", "Game"]);
        let narrowed = mine.narrow(&policy);
        assert_eq!(narrowed.get(Grant::Send).to_string(), "Quest.Start");
        assert!(narrowed.get(Grant::Listen).is_empty());
    }

    #[test]
    fn roots_inside_another_are_one_subtree() {
        let trees = KeyTrees::new(["Quest.Start", "Quest", "QuestLog", "Quest"]);
        assert_eq!(trees.to_string(), "Quest, QuestLog");
    }
}
