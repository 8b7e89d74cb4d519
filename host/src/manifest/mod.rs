//! `mod.toml`: the mod's contract, declared by hand.
//!
//! Without a manifest the signature table is only what runs observed, and
//! a typo'd key becomes part of it. A manifest at the root of a mod folder
//! declares the mod's keys and structs up front, with their parameter
//! names, kinds and docs; declared entries enter the table with origin
//! `declared` ([`Manifest::declare_into`]) and are what every tool checks
//! against. A folder without one runs as before ([`load`] returns
//! `Ok(None)`).
//!
//! The whole shape:
//!
//! ```toml
//! [mod]
//! name = "questlog"              # required: lowercase letters, digits, `_`, `-`
//! version = "0.1.0"              # optional
//! description = "Keeps the quest log"   # optional
//! tick_budget_ms = 2             # optional: its listeners' time per tick (see below)
//!
//! [structs.Quest]                # a struct: an identifier
//! fields = ["id: string", "reward: int"]   # `name: type`, in this order
//! doc = "One quest of the log."  # optional
//!
//! [keys."Quest.Start"]           # a message key: quote it, it has dots
//! kind = "event"                 # event | store | once | request | hook | table
//! params = ["id: string", "reward: int"]   # optional, `name: type`, in order
//! doc = "A quest begins."        # optional
//!
//! [keys."Quest.IsActive"]
//! kind = "request"
//! params = ["id: string"]
//! returns = ["bool"]             # requests only, and required there: `type` or `name: type`
//!
//! [keys."Quest.Log"]
//! kind = "table"                 # a stored table of rows: one array of structs
//! params = ["quests: array<Quest>"]
//!
//! [grants]                       # optional: what the mod may reach, by key subtree
//! send = ["Quest"]               # `Quest` covers `Quest.Start`, not `QuestLog`
//! listen = ["Game", "Quest"]     # a field left out grants nothing
//! hook = []
//! store = ["Quest"]
//! ```
//!
//! Without `[grants]` a mod may use everything; see [`grants`].
//!
//! `tick_budget_ms` is what the mod says its listeners need per tick, at
//! most [`MAX_TICK_BUDGET_MS`]: a run whose mod spends more in one tick
//! is told which listener took the time. The game may set another
//! (`game.toml`, `gantry run --tick-budget`); the manifest's is the
//! mod's own word, used when the game says nothing of this mod.
//!
//! Types are written as the signature table writes them (one grammar,
//! [`Type`]'s): `any`, `nil`, `bool`, `int`, `float`, `string`,
//! `object`, `array<T>`, and the name of a struct this manifest declares.
//!
//! Kinds map onto the table's [`Kind`]: `event` → event, `store` and
//! `once` → store, `request` → event with a response (`returns`), `hook` →
//! hook, `table` → collection. The manifest keeps its own kind
//! ([`ManifestKind`]) too: the table cannot tell `once` from `store` nor a
//! request from an event that happens to have a response.
//!
//! A manifest is a mod's file, so hostile: it is read inside the mod folder
//! only (never through a link out, never blocking on a FIFO), at most
//! [`MAX_MANIFEST_BYTES`], and every count and length in it is bounded
//! ([`MAX_KEYS`], [`MAX_STRUCTS`], [`MAX_PARAMS`], [`MAX_FIELDS`],
//! [`MAX_DOC_BYTES`], [`MAX_NAME_BYTES`]). Every mistake is reported, not
//! only the first ([`ManifestErrors`]), each at its line and column and
//! naming its field, with a "did you mean" where a near name exists.
//!
//! [`contract`] merges a manifest with the table file and the host's keys
//! the one way `gantry check`, the language server and `gantry stubs` do.

pub mod contract;
mod declare;
mod depends;
mod error;
pub mod game;
pub mod grants;
mod near;
mod persist;
mod place;
mod read;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

pub use contract::{Contract, HostKey};
pub use depends::{Dependency, MAX_DEPENDS};
pub use error::{MAX_REPORTED_ERRORS, ManifestError, ManifestErrors, Problem};
pub use grants::{Grant, Grants, KeyTrees};

use crate::files::{self, MIB};
use crate::signature::{KeyDecl, Kind, Language, Role, Site};
use crate::types::{Param, StructDef, Type};

/// The manifest's file name, at the root of a mod folder.
pub const MANIFEST_FILE: &str = "mod.toml";

/// The largest manifest read (1 MiB), checked before parsing: a
/// hand-written manifest of thousands of keys is a few hundred KiB.
pub const MAX_MANIFEST_BYTES: u64 = MIB;

/// The most keys one manifest declares.
pub const MAX_KEYS: usize = 10_000;

/// The most structs one manifest declares.
pub const MAX_STRUCTS: usize = 10_000;

/// The most parameters (and the most `returns`) of one key.
pub const MAX_PARAMS: usize = 256;

/// The most fields of one struct.
pub const MAX_FIELDS: usize = 256;

/// The longest `doc` or `description`, in bytes: a paragraph, not a book.
pub const MAX_DOC_BYTES: usize = 4096;

/// The longest mod name, version, struct, parameter or field name, in
/// bytes.
pub const MAX_NAME_BYTES: usize = 128;

/// The largest `tick_budget_ms`: a minute, past which a budget bounds
/// nothing a tick does.
pub const MAX_TICK_BUDGET_MS: f64 = 60_000.0;

/// A parsed and checked `mod.toml`. Keys and structs are in file order;
/// lines and columns are 1-based, columns in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The file as the user knows it (`mod.toml`, relative to the mod
    /// folder): the file of the declaration sites.
    pub file: String,
    pub module: ModInfo,
    pub structs: Vec<DeclaredStruct>,
    pub keys: Vec<DeclaredKey>,
    /// `[grants]`: what the mod may reach; `None` when it has none (it
    /// may use everything, see [`grants`]).
    pub grants: Option<Grants>,
}

/// The `[mod]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModInfo {
    /// `[a-z0-9_-]+`.
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    /// `depends`: the mods this one needs, loaded before it.
    pub depends: Vec<Dependency>,
    /// `optional`: mods loaded before this one when they are there.
    pub optional: Vec<Dependency>,
    /// `tick_budget_ms`: the time its listeners may take per tick.
    pub tick_budget: Option<std::time::Duration>,
}

/// One `[structs.Name]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredStruct {
    pub name: String,
    /// In the order written.
    pub fields: Vec<Param>,
    pub doc: String,
    /// Where the struct's name is written (its table header).
    pub line: u32,
    pub column: u32,
}

/// One `[keys."Key"]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredKey {
    pub key: String,
    pub kind: ManifestKind,
    pub params: Vec<Param>,
    /// A request's answer (`returns`); `None` for every other kind.
    /// Unnamed entries are named `ret1`, `ret2`, … as the table names
    /// observed responses.
    pub returns: Option<Vec<Param>>,
    pub doc: String,
    /// `persist = true`: what the key stores outlives the run (a store or
    /// once key only).
    pub persist: bool,
    /// Where the key is written (its table header): the declaration site.
    pub line: u32,
    pub column: u32,
}

/// A key's kind as the manifest writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ManifestKind {
    /// A plain message.
    Event,
    /// A stored message, replayed to late listeners.
    Store,
    /// A message stored once: replayed, never sent again.
    Once,
    /// A request: listeners answer with `returns`.
    Request,
    /// A hook: listeners get the payload in place.
    Hook,
    /// A stored table of struct rows (a collection).
    Table,
}

impl ManifestKind {
    /// Every kind, in the order the manifest's docs list them.
    pub const ALL: [ManifestKind; 6] = [
        ManifestKind::Event,
        ManifestKind::Store,
        ManifestKind::Once,
        ManifestKind::Request,
        ManifestKind::Hook,
        ManifestKind::Table,
    ];

    /// The word written in `kind = "…"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ManifestKind::Event => "event",
            ManifestKind::Store => "store",
            ManifestKind::Once => "once",
            ManifestKind::Request => "request",
            ManifestKind::Hook => "hook",
            ManifestKind::Table => "table",
        }
    }

    /// The signature table's kind for it.
    pub fn table_kind(self) -> Kind {
        match self {
            ManifestKind::Event | ManifestKind::Request => Kind::Event,
            ManifestKind::Store | ManifestKind::Once => Kind::Store,
            ManifestKind::Hook => Kind::Hook,
            ManifestKind::Table => Kind::Collection,
        }
    }
}

impl fmt::Display for ManifestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ManifestKind {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
            .ok_or(())
    }
}

impl DeclaredKey {
    /// What the signature table is told: the table's kind, the
    /// parameters, a request's response, the doc.
    pub fn decl(&self) -> KeyDecl {
        KeyDecl {
            kind: self.kind.table_kind(),
            doc: self.doc.clone(),
            params: self.params.clone(),
            response: self.returns.clone(),
        }
    }

    /// The declaration site: this key's line and column in `file`.
    pub fn site(&self, file: &str) -> Site {
        Site {
            file: file.to_owned(),
            line: self.line,
            column: self.column,
            language: Language::Manifest,
            role: Role::Declare,
        }
    }
}

impl DeclaredStruct {
    /// The table's definition of it.
    pub fn def(&self) -> StructDef {
        StructDef {
            parent: None,
            doc: self.doc.clone(),
            fields: self.fields.clone(),
        }
    }
}

/// Reads and checks the `mod.toml` of mod folder `dir`. `Ok(None)` when
/// there is none (the folder runs as before); every finding at once when
/// it cannot be used, including a manifest that cannot be read (a folder,
/// a FIFO, a link out of `dir`, larger than [`MAX_MANIFEST_BYTES`], not
/// UTF-8).
pub fn load(dir: &Path) -> Result<Option<Manifest>, ManifestErrors> {
    let path = dir.join(MANIFEST_FILE);
    let file = files::shown(dir, &path);
    match files::read_text_in(dir, &path, MAX_MANIFEST_BYTES) {
        Ok(text) => parse(&file, &text).map(Some),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(ManifestErrors {
            errors: vec![ManifestError {
                file: file.clone(),
                line: 0,
                column: 0,
                field: String::new(),
                problem: Problem::File(e),
                suggestion: None,
            }],
            file,
            omitted: 0,
        }),
    }
}

/// Parses and checks manifest text; `file` is how findings and
/// declaration sites name it (`mod.toml`). What [`load`] does once the
/// text is read, for a caller that has it already (an editor's buffer).
pub fn parse(file: &str, text: &str) -> Result<Manifest, ManifestErrors> {
    read::read(file, text)
}

/// The built-in type names, for "did you mean".
const BUILTIN_TYPES: [&str; 7] = ["any", "nil", "bool", "int", "float", "string", "object"];

/// Whether `ty` names (at any array depth) a struct, and which.
fn struct_named(ty: &Type) -> Option<&str> {
    match ty {
        Type::Struct(name) => Some(name),
        Type::Array(inner) => struct_named(inner),
        _ => None,
    }
}
