//! Loading and saving the signature table as JSON.
//!
//! The file is committed by users, so it must be stable (sorted keys, a
//! trailing newline, no byte changes when nothing changed), written atomically
//! (a temp file beside it, then a rename), and never overwritten when it could
//! not be read: a corrupt file or one from a newer Gantry is an error that
//! names the file and leaves it alone.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserializer;
use serde::de::{self, Deserialize, MapAccess, Visitor};
use thiserror::Error;

use crate::key::validate_key;
use crate::signature::{SignatureTable, TABLE_VERSION};

/// The conventional place of the table, relative to the scripts folder.
pub const DEFAULT_TABLE_PATH: &str = ".gantry/signatures.json";

#[derive(Debug, Error)]
pub enum TableError {
    #[error("cannot read signature table {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write signature table {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
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
}

impl SignatureTable {
    /// Parses a table from JSON text; `path` is only used in errors.
    pub fn from_json(text: &str, path: &Path) -> Result<Self, TableError> {
        let raw: serde_json::Value = serde_json::from_str(text).map_err(|e| corrupt(path, &e))?;
        let version = raw
            .get("version")
            .and_then(serde_json::Value::as_u64)
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
        let table: SignatureTable = serde_json::from_str(text).map_err(|e| corrupt(path, &e))?;
        for key in table.keys.keys() {
            validate_key(key).map_err(|source| TableError::InvalidKey {
                path: path.to_owned(),
                source,
            })?;
        }
        Ok(table)
    }

    /// The exact text [`Self::save`] writes.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a table always serializes");
        text.push('\n');
        text
    }

    /// Loads a table; a missing file is an empty table.
    pub fn load(path: &Path) -> Result<Self, TableError> {
        match fs::read_to_string(path) {
            Ok(text) => Self::from_json(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::new()),
            Err(source) => Err(TableError::Read {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Saves atomically. Writes nothing when the file already holds exactly
    /// this table; refuses to replace a file it could not read. Returns
    /// whether the file was written.
    pub fn save(&self, path: &Path) -> Result<bool, TableError> {
        let text = self.to_json();
        match fs::read_to_string(path) {
            Ok(existing) if existing == text => return Ok(false),
            Ok(existing) => {
                // Never clobber what we could not have loaded.
                Self::from_json(&existing, path)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(TableError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        }
        let write_err = |source| TableError::Write {
            path: path.to_owned(),
            source,
        };
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(write_err)?;
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Unique per save, so two saves of one path (two threads, two hubs)
        // never share a temporary file.
        static SAVES: AtomicU64 = AtomicU64::new(0);
        let tmp = dir.join(format!(
            ".{file_name}.{}.{}.tmp",
            std::process::id(),
            SAVES.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut file = fs::File::options()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            fs::rename(&tmp, path)
        })();
        if let Err(source) = result {
            let _ = fs::remove_file(&tmp);
            return Err(write_err(source));
        }
        Ok(true)
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
