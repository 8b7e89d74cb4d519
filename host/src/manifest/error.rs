//! What is wrong with a `mod.toml`, each finding at its line and column.
//!
//! A modder fixes a manifest in one go only if they see every mistake at
//! once: the reader collects findings ([`ManifestError`]) instead of
//! stopping at the first, and hands them back together
//! ([`ManifestErrors`]), in file order.

use std::fmt;

use thiserror::Error;

use crate::files::FileError;
use crate::key::KeyError;

/// How many findings one [`ManifestErrors`] keeps (file order): a file of
/// garbage has one finding per line, and nobody reads the thousandth. The
/// rest are counted in [`ManifestErrors::omitted`].
pub const MAX_REPORTED_ERRORS: usize = 100;

/// One finding in a manifest: the file, the 1-based line and column (in
/// characters) of the offending text, the field it was in (as TOML
/// writes it: `keys."Quest.Start".params`; empty for the file as a
/// whole), what is wrong, and the nearest name that would be right.
///
/// Shown as `mod.toml:12:10: unknown type `strng` in
/// keys."Quest.Start".params (did you mean `string`?)`.
#[derive(Debug, Error)]
pub struct ManifestError {
    pub file: String,
    /// 1-based; 0 when the finding is about the file itself (it cannot be
    /// read) rather than a place in it.
    pub line: u32,
    /// 1-based, in characters.
    pub column: u32,
    pub field: String,
    /// Not the error's `source`: the message above says it already, and
    /// a chain printed in full would say it twice.
    pub problem: Problem,
    /// A name that would be right where a wrong one was written.
    pub suggestion: Option<String>,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Problem::File(e) = &self.problem {
            // A file error names the file itself.
            return write!(f, "{e}");
        }
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.problem
        )?;
        if !self.field.is_empty() {
            write!(f, " in {}", self.field)?;
        }
        if let Some(near) = &self.suggestion {
            write!(f, " (did you mean `{near}`?)")?;
        }
        Ok(())
    }
}

/// What is wrong, whatever the place. Each names the user's own text.
#[derive(Debug, Error)]
pub enum Problem {
    /// The file could not be read: absent is not an error ([`super::load`]
    /// returns `None`), but a folder, a FIFO, a link out of the mod folder,
    /// a file too large or not UTF-8 are.
    #[error(transparent)]
    File(FileError),
    /// The text is not TOML (as the TOML parser words it).
    #[error("invalid TOML: {message}")]
    Toml { message: String },
    /// A top-level table the manifest does not have (`[modd]`).
    #[error("unknown table `[{name}]` (a manifest has [mod], [structs.*], [keys.*] and [grants])")]
    UnknownTable { name: String },
    /// A field the table does not have: a typo such as `parms` is never
    /// silently ignored.
    #[error("unknown field `{name}` (expected one of {expected})")]
    UnknownField {
        name: String,
        expected: &'static str,
    },
    #[error("missing table [mod]: a manifest names its mod (`[mod]` then `name = \"questlog\"`)")]
    MissingMod,
    #[error("missing field `{name}`")]
    MissingField { name: &'static str },
    /// A value of another TOML type than the field takes.
    #[error("expected {expected}, found {found}")]
    WrongType {
        expected: &'static str,
        found: &'static str,
    },
    #[error("invalid mod name `{name}`: a mod name is lowercase letters, digits, `_` and `-`")]
    BadModName { name: String },
    #[error("{0}")]
    BadKey(KeyError),
    /// `[keys.Quest.Start]`: the dots of an unquoted key make tables of
    /// `Quest` and `Start`, not the key `Quest.Start`.
    #[error("`{key}` is not quoted, so TOML reads it as nested tables: write [keys.\"{key}\"]")]
    UnquotedKey { key: String },
    #[error("unknown kind `{kind}` (one of event, store, once, request, hook, table)")]
    UnknownKind { kind: String },
    /// A parameter or field not written `name: type`.
    #[error("`{text}` is not `name: type`")]
    NotNameAndType { text: String },
    #[error("`{name}` is not a name (letters, digits and `_`, not starting with a digit)")]
    BadName { name: String },
    /// A struct named as a built-in type (`[structs.int]`): the name
    /// would always read as the built-in.
    #[error("`{name}` is a built-in type; a struct needs a name of its own")]
    BuiltinName { name: String },
    /// A type the table's grammar refuses (`array<int`, `int[]`).
    #[error("invalid type `{text}`: {reason}")]
    BadType { text: String, reason: String },
    /// A name where a type goes that is neither a built-in type nor a
    /// struct this manifest declares.
    #[error("unknown type `{name}`")]
    UnknownType { name: String },
    /// A struct name (capitalised) no `[structs.Name]` declares.
    #[error("unknown struct `{name}`: no [structs.{name}] declares it")]
    UnknownStruct { name: String },
    /// A struct field or a key's parameter named twice.
    #[error("`{name}` is written twice (first at line {first_line})")]
    Duplicate { name: String, first_line: u32 },
    /// A key or struct declared twice under names that differ only in
    /// case: keys are told apart by case, so one is surely a typo.
    #[error("`{name}` is declared twice: `{other}` at line {other_line} differs only in case")]
    CaseConflict {
        name: String,
        other: String,
        other_line: u32,
    },
    #[error(
        "`returns` is only for requests; this key is a{} `{kind}`",
        article(kind)
    )]
    ReturnsOnNonRequest { kind: &'static str },
    #[error("a request says what it answers: add `returns = [\"bool\"]` (or `[]` for nothing)")]
    MissingReturns,
    /// A `table` key carries one array of struct rows.
    #[error("a table key carries one parameter, an array of structs (`rows: array<Quest>`)")]
    TableShape,
    /// More entries than the manifest allows (a bound, see the limits in
    /// [`super`]).
    #[error("more than {limit} {what}")]
    TooMany { what: &'static str, limit: usize },
    /// A string longer than the manifest allows.
    #[error("longer than {limit} bytes")]
    TooLong { limit: usize },
    /// A number outside the range the field takes.
    #[error("`{text}` is out of range: {range}")]
    OutOfRange { text: String, range: &'static str },
}

fn article(kind: &str) -> &'static str {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "n"
    } else {
        ""
    }
}

/// Every finding of one manifest, in file order: what [`super::load`]
/// returns when the manifest cannot be used (nothing runs then).
#[derive(Debug)]
pub struct ManifestErrors {
    /// The manifest as the user knows it (`mod.toml`, relative to the mod
    /// folder).
    pub file: String,
    /// At most [`MAX_REPORTED_ERRORS`], in file order.
    pub errors: Vec<ManifestError>,
    /// How many more findings there were.
    pub omitted: usize,
}

impl ManifestErrors {
    pub fn iter(&self) -> impl Iterator<Item = &ManifestError> {
        self.errors.iter()
    }

    pub fn len(&self) -> usize {
        self.errors.len() + self.omitted
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One finding per line.
impl fmt::Display for ManifestErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        if self.omitted > 0 {
            write!(
                f,
                "\n{}: and {} more error(s) not shown",
                self.file, self.omitted
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestErrors {}
