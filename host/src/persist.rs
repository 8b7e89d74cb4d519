//! Loading and saving the signature table as JSON.
//!
//! The file is committed by users, so it must be stable (sorted keys, a
//! trailing newline, no byte changes when nothing changed, its line endings
//! kept), written atomically (a temp file beside it, then a rename), and
//! never overwritten when it could not be read: a corrupt file or one from
//! a newer Gantry is an error that names the file and leaves it alone.
//! Fields this Gantry does not know are kept.
//!
//! It is also a file a mod ships: it is read through [`crate::files`] (no
//! FIFO, device or folder; at most [`MAX_TABLE_BYTES`], checked before
//! parsing) and written only through real folders.
//!
//! A [`TableFile`] remembers the table as it read it, so its save merges:
//! what the run changed is laid over what is on disk now (a hand edit made
//! meanwhile, or another run's save), under a lock file, and a part changed
//! on both sides differently is reported as a [`Conflict`].

mod lock;
mod merge;

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserializer;
use serde::de::{self, Deserialize, MapAccess, Visitor};
use serde_json::{Map, Value as Json};
use thiserror::Error;

pub use crate::files::MAX_TABLE_BYTES;
use crate::files::{self, FileError};
use crate::key::validate_key;
use crate::signature::{KeyEntry, SignatureTable, TABLE_VERSION};
pub use merge::Conflict;

/// The conventional place of the table, relative to the scripts folder.
pub const DEFAULT_TABLE_PATH: &str = ".gantry/signatures.json";

#[derive(Debug, Error)]
pub enum TableError {
    /// The file could not be read or written (missing folder, FIFO,
    /// device, too large, invalid UTF-8, a symbolic link in the way).
    #[error("signature table {0}")]
    File(FileError),
    /// The file could not be written where it is (a folder in the way, a
    /// symbolic link on the way, no permission).
    #[error("cannot save signature table {path}: {source}")]
    Save { path: PathBuf, source: FileError },
    #[error(
        "signature table {path} is corrupt at line {line}, column {column}: {message} (the file was left untouched)"
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "signature table {path} has version {found}, newer than this Gantry understands ({supported}); upgrade Gantry (the file was left untouched)"
    )]
    NewerVersion {
        path: PathBuf,
        found: u64,
        supported: u32,
    },
    #[error("signature table {path} has an invalid key: {source}")]
    InvalidKey {
        path: PathBuf,
        source: crate::key::KeyError,
    },
    #[error(
        "signature table {path} is being saved by another Gantry (lock file {lock}); try again, or remove the lock file if no Gantry is running"
    )]
    Locked { path: PathBuf, lock: PathBuf },
}

/// The fields of a table file this Gantry does not know, at the top level
/// and per key, kept to be written back in place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Extra {
    pub(crate) top: Map<String, Json>,
    pub(crate) keys: BTreeMap<String, Map<String, Json>>,
}

impl Extra {
    fn is_empty(&self) -> bool {
        self.top.is_empty() && self.keys.is_empty()
    }

    /// The names in `raw` that `T` does not deserialize.
    fn of(raw: &Json) -> Extra {
        let Some(object) = raw.as_object() else {
            return Extra::default();
        };
        let mut extra = Extra {
            top: unknown(object, field_names::<SignatureTable>()),
            keys: BTreeMap::new(),
        };
        if let Some(keys) = object.get("keys").and_then(Json::as_object) {
            let known = field_names::<KeyEntry>();
            for (key, entry) in keys {
                if let Some(entry) = entry.as_object() {
                    let fields = unknown(entry, known);
                    if !fields.is_empty() {
                        extra.keys.insert(key.clone(), fields);
                    }
                }
            }
        }
        extra
    }
}

fn unknown(object: &Map<String, Json>, known: &[&str]) -> Map<String, Json> {
    object
        .iter()
        .filter(|(name, _)| !known.contains(&name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// The field names `T`'s derived `Deserialize` knows, asked of serde
/// itself (so a field added to the table's types is never taken for an
/// unknown one).
fn field_names<T: for<'de> Deserialize<'de> + 'static>() -> &'static [&'static str] {
    struct Names<'a>(&'a mut &'static [&'static str]);

    impl<'de> Deserializer<'de> for Names<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("field names only"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("field names only"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    static TABLE: OnceLock<&'static [&'static str]> = OnceLock::new();
    static ENTRY: OnceLock<&'static [&'static str]> = OnceLock::new();
    let cell = if std::any::TypeId::of::<T>() == std::any::TypeId::of::<SignatureTable>() {
        &TABLE
    } else {
        &ENTRY
    };
    cell.get_or_init(|| {
        let mut fields: &'static [&'static str] = &[];
        let _ = T::deserialize(Names(&mut fields));
        fields
    })
}

impl SignatureTable {
    /// Parses a table from JSON text; `path` is only used in errors.
    pub fn from_json(text: &str, path: &Path) -> Result<Self, TableError> {
        let raw: Json = serde_json::from_str(text).map_err(|e| corrupt(path, &e))?;
        let version =
            raw.get("version")
                .and_then(Json::as_u64)
                .ok_or_else(|| TableError::Corrupt {
                    path: path.to_owned(),
                    line: 1,
                    column: 1,
                    message: "missing or non-numeric \"version\"".to_owned(),
                })?;
        if version > u64::from(TABLE_VERSION) {
            return Err(TableError::NewerVersion {
                path: path.to_owned(),
                found: version,
                supported: TABLE_VERSION,
            });
        }
        // Parsed again from the text, for errors that say where.
        let mut table: SignatureTable =
            serde_json::from_str(text).map_err(|e| corrupt(path, &e))?;
        for key in table.keys.keys() {
            validate_key(key).map_err(|source| TableError::InvalidKey {
                path: path.to_owned(),
                source,
            })?;
        }
        table.extra = Extra::of(&raw);
        Ok(table)
    }

    /// The exact text [`Self::save`] writes (with `\n` line endings).
    pub fn to_json(&self) -> String {
        let mut text = if self.extra.is_empty() {
            serde_json::to_string_pretty(self)
        } else {
            serde_json::to_string_pretty(&self.with_extra())
        }
        .expect("a table always serializes");
        text.push('\n');
        text
    }

    /// The table as JSON with the unknown fields back in place (after the
    /// known ones; a known name is never written twice).
    fn with_extra(&self) -> Json {
        let mut json = serde_json::to_value(self).expect("a table always serializes");
        let Some(object) = json.as_object_mut() else {
            return json;
        };
        for (name, value) in &self.extra.top {
            if !object.contains_key(name) {
                object.insert(name.clone(), value.clone());
            }
        }
        if let Some(keys) = object.get_mut("keys").and_then(Json::as_object_mut) {
            for (key, fields) in &self.extra.keys {
                if let Some(entry) = keys.get_mut(key).and_then(Json::as_object_mut) {
                    for (name, value) in fields {
                        if !entry.contains_key(name) {
                            entry.insert(name.clone(), value.clone());
                        }
                    }
                }
            }
        }
        json
    }

    /// Loads a table from a path the user named; a missing file is an
    /// empty table. A FIFO, device, folder or file over
    /// [`MAX_TABLE_BYTES`] is an error, before anything is parsed.
    pub fn load(path: &Path) -> Result<Self, TableError> {
        match files::read_text(path, MAX_TABLE_BYTES) {
            Ok(text) => Self::from_json(&text, path),
            Err(e) if e.is_not_found() => Ok(Self::new()),
            Err(e) => Err(TableError::File(e)),
        }
    }

    /// [`Self::load`] for the table of a mod folder (`path` relative to
    /// `folder`, or inside it): it must also resolve inside `folder`.
    pub fn load_in(folder: &Path, path: &Path) -> Result<Self, TableError> {
        match files::read_text_in(folder, path, MAX_TABLE_BYTES) {
            Ok(text) => Self::from_json(&text, &folder.join(path)),
            Err(e) if e.is_not_found() => Ok(Self::new()),
            Err(e) => Err(TableError::File(e)),
        }
    }

    /// Saves this table as it is, atomically, keeping the file's line
    /// endings. Writes nothing when the file already holds exactly this
    /// table; refuses to replace a file it could not read. Returns whether
    /// the file was written. (A run that read the table saves through
    /// [`TableFile::save`], which keeps what changed on disk meanwhile.)
    pub fn save(&self, path: &Path) -> Result<bool, TableError> {
        let (folder, placed) = placed(path);
        files::create_dirs_in(&folder, &folder).map_err(|e| save_error(path, e))?;
        let _lock = lock::Lock::acquire(&placed)?;
        let existing = match files::read_text(path, MAX_TABLE_BYTES) {
            Ok(text) => Some(text),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(TableError::File(e)),
        };
        let crlf = existing.as_deref().is_some_and(uses_crlf);
        let text = line_endings(self.to_json(), crlf);
        match &existing {
            Some(existing) if *existing == text => return Ok(false),
            // Never clobber what we could not have loaded.
            Some(existing) => drop(Self::from_json(existing, path)?),
            None => {}
        }
        files::write_in(&folder, &placed, text.as_bytes()).map_err(|e| save_error(path, e))?;
        Ok(true)
    }
}

fn save_error(path: &Path, source: FileError) -> TableError {
    TableError::Save {
        path: path.to_owned(),
        source,
    }
}

/// The folder a table file lives in, and the file's path starting with
/// it (`./signatures.json` for a bare name).
fn placed(path: &Path) -> (PathBuf, PathBuf) {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(folder) => (folder.to_owned(), path.to_owned()),
        None => (PathBuf::from("."), Path::new(".").join(path)),
    }
}

fn uses_crlf(text: &str) -> bool {
    text.contains("\r\n")
}

fn line_endings(text: String, crlf: bool) -> String {
    if crlf {
        text.replace('\n', "\r\n")
    } else {
        text
    }
}

/// A table file as a run read it: [`TableFile::save`] merges what the run
/// changed with what is on disk at save time.
#[derive(Debug)]
pub struct TableFile {
    path: PathBuf,
    /// The folder the table belongs to: reads stay inside it, writes go
    /// through real folders under it only.
    folder: Option<PathBuf>,
    /// The table as last read or saved: what "changed since" is against.
    base: SignatureTable,
    crlf: bool,
}

/// What a [`TableFile::save`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use = "conflicts are for the user to see"]
pub struct Saved {
    /// Whether the file was written (nothing is when it already held the
    /// merged table).
    pub written: bool,
    /// Parts changed both in the file and by this run, differently (the
    /// file's version was kept).
    pub conflicts: Vec<Conflict>,
}

impl TableFile {
    /// Reads the table at a path the user named (`--table`); a missing
    /// file is an empty table.
    pub fn open(path: &Path) -> Result<Self, TableError> {
        Self::read(placed(path).1, None)
    }

    /// Reads the table of the mod folder `folder` (`path` relative to it,
    /// usually [`DEFAULT_TABLE_PATH`], or inside it): it must resolve
    /// inside `folder`, and saving writes through real folders below
    /// `folder` only (a `.gantry` that is a symbolic link is refused).
    pub fn open_in(folder: &Path, path: &Path) -> Result<Self, TableError> {
        let full = folder.join(path);
        Self::read(full, Some(folder.to_owned()))
    }

    fn read(path: PathBuf, folder: Option<PathBuf>) -> Result<Self, TableError> {
        let mut file = TableFile {
            path,
            folder,
            base: SignatureTable::new(),
            crlf: false,
        };
        if let Some(text) = file.read_disk()? {
            file.base = SignatureTable::from_json(&text, &file.path)?;
            file.crlf = uses_crlf(&text);
        }
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The table as read (or as last saved).
    pub fn table(&self) -> &SignatureTable {
        &self.base
    }

    /// Saves `table` (the one read, changed by a run): under the lock file
    /// `<name>.lock`, reads the file again, keeps every change made there
    /// since it was read (a hand edit, another run's keys), adds this run's
    /// changes, and replaces the file atomically if that changed a byte. A
    /// part changed on both sides, differently, keeps the file's version
    /// and is returned as a conflict. The file's line endings are kept.
    pub fn save(&mut self, table: &SignatureTable) -> Result<Saved, TableError> {
        let folder = match &self.folder {
            Some(folder) => folder.clone(),
            None => placed(&self.path).0,
        };
        let parent = self.path.parent().unwrap_or(&folder);
        files::create_dirs_in(&folder, parent).map_err(|e| save_error(&self.path, e))?;
        let _lock = lock::Lock::acquire(&self.path)?;
        let disk = self.read_disk()?;
        let theirs = match &disk {
            Some(text) => SignatureTable::from_json(text, &self.path)?,
            None => SignatureTable::new(),
        };
        let (merged, conflicts) = merge::merge3(&self.base, table, &theirs);
        for conflict in &conflicts {
            tracing::warn!(table = %self.path.display(), "{conflict}");
        }
        let crlf = disk.as_deref().map_or(self.crlf, uses_crlf);
        let text = line_endings(merged.to_json(), crlf);
        let written = disk.as_deref() != Some(text.as_str());
        if written {
            files::write_in(&folder, &self.path, text.as_bytes())
                .map_err(|e| save_error(&self.path, e))?;
        }
        self.base = merged;
        self.crlf = crlf;
        Ok(Saved { written, conflicts })
    }

    /// The file's text now, `None` when there is none.
    fn read_disk(&self) -> Result<Option<String>, TableError> {
        let read = match &self.folder {
            Some(folder) => files::read_text_in(folder, &self.path, MAX_TABLE_BYTES),
            None => files::read_text(&self.path, MAX_TABLE_BYTES),
        };
        match read {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(TableError::File(e)),
        }
    }
}

fn corrupt(path: &Path, e: &serde_json::Error) -> TableError {
    TableError::Corrupt {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    }
}

/// A JSON object whose names must be unique (`deserialize_with`): a key or
/// struct written twice (a hand merge) is a corrupt table, not a silent
/// "last one wins" that would drop the first one's hand-written doc at the
/// next save.
pub(crate) fn unique_names<'de, D, V>(deserializer: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Unique<V>(PhantomData<V>);

    impl<'de, V: Deserialize<'de>> Visitor<'de> for Unique<V> {
        type Value = BTreeMap<String, V>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of uniquely named entries")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((name, value)) = map.next_entry::<String, V>()? {
                if out.contains_key(&name) {
                    return Err(de::Error::custom(format!("`{name}` is written twice")));
                }
                out.insert(name, value);
            }
            Ok(out)
        }
    }

    deserializer.deserialize_map(Unique(PhantomData))
}
