//! Call sites: where a key is sent, listened to or declared, and how the
//! table keeps them true as files are edited, reloaded and deleted (a run
//! records the sites it still has; what it no longer has goes).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::SignatureTable;
use crate::key::validate_key;

/// The language a call site is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Lua,
    Rhai,
    /// A declaration in a mod's `mod.toml` (see [`crate::manifest`]).
    Manifest,
}

impl Language {
    /// Whether the site is a script's (Lua, Rhai), whose errors stop the
    /// code that raised them, rather than a Rust host's or a manifest's.
    pub fn is_script(self) -> bool {
        matches!(self, Language::Lua | Language::Rhai)
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Language::Rust => "rust",
            Language::Lua => "lua",
            Language::Rhai => "rhai",
            Language::Manifest => "manifest",
        })
    }
}

/// Whether a site sends (notify, store, request, run hook) or listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Where the key is declared (Rust `declare`).
    Declare,
    Send,
    Listen,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Declare => "declare",
            Role::Send => "send",
            Role::Listen => "listen",
        })
    }
}

/// A place in source code that uses a key. Lines and columns are 1-based;
/// column 0 means unknown.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Site {
    pub file: String,
    pub line: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub column: u32,
    pub language: Language,
    pub role: Role,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Site {
    pub fn new(file: impl Into<String>, line: u32, language: Language, role: Role) -> Self {
        Self {
            file: file.into(),
            line,
            column: 0,
            language,
            role,
        }
    }

    /// The site of a Rust caller (from `#[track_caller]`).
    pub fn rust(location: &std::panic::Location<'_>, role: Role) -> Self {
        Self {
            file: location.file().replace('\\', "/"),
            line: location.line(),
            column: location.column(),
            language: Language::Rust,
            role,
        }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if self.column > 0 {
            write!(f, ":{}", self.column)?;
        }
        Ok(())
    }
}

/// The files that recorded sites in this session, with the hash of the
/// source their last load recorded from (`None`: recorded without a load,
/// a Rust caller's file). The first site a file records in a session
/// replaces the sites the table held for it before: a run records again
/// every site it still has, so an edited file's shifted lines do not pile
/// up beside the old ones. Equal whatever it holds, as [`PendingNames`].
#[derive(Debug, Clone, Default)]
pub(crate) struct FreshFiles(BTreeMap<String, Vec<(Language, Option<u64>)>>);

impl FreshFiles {
    /// The entry of `file` in `language`, if it recorded this session.
    /// (Looked up by `&str`: a listener registering records its site,
    /// and a hundred thousand of them allocate nothing here.)
    fn get(&self, language: Language, file: &str) -> Option<Option<u64>> {
        let languages = self.0.get(file)?;
        languages
            .iter()
            .find(|(l, _)| *l == language)
            .map(|&(_, hash)| hash)
    }

    /// Notes `file` in `language` as recorded, with its source's hash.
    fn note(&mut self, language: Language, file: &str, hash: Option<u64>) {
        let languages = self.0.entry(file.to_owned()).or_default();
        match languages.iter_mut().find(|(l, _)| *l == language) {
            Some(entry) => entry.1 = hash,
            None => languages.push((language, hash)),
        }
    }
}

impl PartialEq for FreshFiles {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for FreshFiles {}

impl SignatureTable {
    /// Records a call site. Returns whether it was new.
    ///
    /// The first site a file records in this table's session (since the
    /// table was made or read) replaces every site the table held for that
    /// file: what runs records its sites again, so the lines of an edited
    /// file stand where they are now, not also where they were. A script
    /// reloaded in the same session starts over with
    /// [`Self::restart_file_sites`].
    pub fn record_site(&mut self, key: &str, site: Site) -> bool {
        if validate_key(key).is_err() {
            return false;
        }
        self.insert_site(key, site)
    }

    /// [`Self::record_site`] for a valid key.
    pub(super) fn insert_site(&mut self, key: &str, site: Site) -> bool {
        if self.fresh.get(site.language, &site.file).is_none() {
            self.forget_file_sites(site.language, &site.file);
            self.fresh.note(site.language, &site.file, None);
        }
        self.keys
            .entry(key.to_owned())
            .or_default()
            .sites
            .insert(site)
    }

    /// A script file is (re)loaded from `source`: unless this session
    /// already recorded this very text's sites (the same script loaded on
    /// another object), the sites the table holds for the file go, and the
    /// load and what the script then runs record them again. Returns
    /// whether any site went.
    pub fn restart_file_sites(&mut self, language: Language, file: &str, source: &str) -> bool {
        let hash = source_hash(source);
        let seen = self.fresh.get(language, file);
        self.fresh.note(language, file, Some(hash));
        if seen == Some(Some(hash)) {
            return false;
        }
        self.forget_file_sites(language, file)
    }

    /// Removes every site of `file` in `language`. Returns whether any went.
    pub fn forget_file_sites(&mut self, language: Language, file: &str) -> bool {
        let mut changed = false;
        for entry in self.keys.values_mut() {
            let before = entry.sites.len();
            entry
                .sites
                .retain(|s| !(s.language == language && s.file == file));
            changed |= entry.sites.len() != before;
        }
        changed
    }

    /// Removes the sites of script files (Lua, Rhai) that `folder` no
    /// longer holds: a script deleted or renamed since it was recorded. A
    /// site's file names a path relative to the folder its run loaded
    /// scripts from; one that leaves the folder (`..`, absolute) is not a
    /// file of it. Rust and manifest sites are left alone: their paths are
    /// not relative to the scripts folder. Returns whether any site went.
    pub fn forget_missing_files(&mut self, folder: &std::path::Path) -> bool {
        let mut known: BTreeMap<String, bool> = BTreeMap::new();
        let mut changed = false;
        for entry in self.keys.values_mut() {
            let before = entry.sites.len();
            entry.sites.retain(|site| {
                !site.language.is_script()
                    || *known
                        .entry(site.file.clone())
                        .or_insert_with(|| file_in(folder, &site.file))
            });
            changed |= entry.sites.len() != before;
        }
        changed
    }
}

/// A stable hash of a script's text (FNV-1a): whether a load is the text
/// the session already recorded.
fn source_hash(source: &str) -> u64 {
    source.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Whether `file` (relative, inside the folder) names something `folder`
/// holds. A symbolic link counts as there (it is not followed).
fn file_in(folder: &std::path::Path, file: &str) -> bool {
    use std::path::Component;
    let path = std::path::Path::new(file);
    path.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && std::fs::symlink_metadata(folder.join(path)).is_ok()
}
