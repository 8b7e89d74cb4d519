//! Finding the mod's script files, reading them, and noticing when they
//! (or the mod's `mod.toml`) change.
//!
//! Polling, not OS notifications: a mod folder holds a handful of files and
//! the host already wakes every tick. Editors save in several steps
//! (truncate, write, rename), so a change is reported only once a file has
//! looked the same for two polls in a row, and only if its text differs
//! from the version last handed out. A renamed file is a removal and an
//! addition; a file that vanishes between listing and reading is skipped.
//!
//! Scripts are read with [`gantry_host::files::read_text_in`]: a leading
//! byte-order mark is dropped, and a file that cannot be a script (a name
//! that is not UTF-8, text that is not, a FIFO or device, a link out of
//! the folder, an oversized file) is handed out as [`Change::Unreadable`]
//! with the reason, once per version of the file, never silently skipped.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use gantry_host::files::{FileError, MAX_SCRIPT_BYTES, read_text_in};
use gantry_host::manifest::{self, Manifest, ManifestErrors};

/// What a poll found.
#[derive(Debug)]
pub enum Change {
    /// A new file, or a new version of a known one.
    Changed { file: String, source: String },
    /// The file is gone (deleted or renamed away).
    Removed { file: String },
    /// A new file, or a new version of a known one, that cannot be read as
    /// a script.
    Unreadable { file: String, error: FileError },
}

/// What a file looked like on the disk.
type Stamp = (Option<SystemTime>, u64);

#[derive(Debug)]
struct Tracked {
    /// The stamp seen by the previous poll.
    seen: Stamp,
    /// The text last handed out (`None`: not handed out yet).
    source: Option<String>,
    /// The stamp whose version could not be read (said once).
    refused: Option<Stamp>,
}

impl Tracked {
    /// Hands out what was read of the version `stamp` of `name`,
    /// remembering it.
    fn hand_out(
        &mut self,
        name: &OsString,
        stamp: Stamp,
        read: Result<String, FileError>,
    ) -> Change {
        let file = name.to_string_lossy().into_owned();
        match read {
            Ok(source) => {
                self.refused = None;
                self.source = Some(source.clone());
                Change::Changed { file, source }
            }
            Err(error) => {
                self.refused = Some(stamp);
                Change::Unreadable { file, error }
            }
        }
    }
}

/// Reads the script `name` of `dir` (`None`: it is not there any more).
fn read(dir: &Path, name: &OsString) -> Option<Result<String, FileError>> {
    match read_text_in(dir, Path::new(name), MAX_SCRIPT_BYTES) {
        Err(error) if error.is_not_found() => None,
        read => Some(read),
    }
}

/// Watches the script files directly in one folder.
pub struct Watcher {
    dir: PathBuf,
    extensions: Vec<&'static str>,
    /// By file name as on the disk: a name that is not UTF-8 is still told
    /// apart from others, and read (and refused) under its own name.
    files: BTreeMap<OsString, Tracked>,
}

impl Watcher {
    pub fn new(dir: &Path, extensions: &[&'static str]) -> Self {
        Self {
            dir: dir.to_path_buf(),
            extensions: extensions.to_vec(),
            files: BTreeMap::new(),
        }
    }

    /// The script files now, in file name order, each with its text or why
    /// it cannot be read, and remembers them as loaded.
    pub fn scan(&mut self) -> std::io::Result<Vec<Change>> {
        let listed = self.list()?;
        let mut out = Vec::new();
        for (name, stamp) in listed {
            let mut tracked = Tracked {
                seen: stamp,
                source: None,
                refused: None,
            };
            if let Some(read) = read(&self.dir, &name) {
                out.push(tracked.hand_out(&name, stamp, read));
            }
            self.files.insert(name, tracked);
        }
        Ok(out)
    }

    /// The changes since the previous poll that have settled.
    pub fn poll(&mut self) -> Vec<Change> {
        let Ok(listed) = self.list() else {
            return Vec::new();
        };
        let mut changes = Vec::new();
        let gone: Vec<OsString> = self
            .files
            .keys()
            .filter(|f| !listed.contains_key(*f))
            .cloned()
            .collect();
        for name in gone {
            self.files.remove(&name);
            changes.push(Change::Removed {
                file: name.to_string_lossy().into_owned(),
            });
        }
        for (name, stamp) in listed {
            let tracked = self.files.entry(name.clone()).or_insert(Tracked {
                seen: (None, u64::MAX),
                source: None,
                refused: None,
            });
            if tracked.seen != stamp {
                // Still being written, or just appeared: look again next poll.
                tracked.seen = stamp;
                continue;
            }
            if tracked.refused == Some(stamp) {
                continue;
            }
            // `None`: gone between listing and reading; the next poll says so.
            let Some(read) = read(&self.dir, &name) else {
                continue;
            };
            if read.as_ref().ok() == tracked.source.as_ref() {
                tracked.refused = None;
                continue;
            }
            changes.push(tracked.hand_out(&name, stamp, read));
        }
        changes
    }

    /// The entries of the folder with a script's extension that are not
    /// folders: special files and links are listed too, so that reading
    /// them says why they are refused.
    fn list(&self) -> std::io::Result<BTreeMap<OsString, Stamp>> {
        let mut out = BTreeMap::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            let known = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|ext| self.extensions.contains(&ext));
            if !known {
                continue;
            }
            // Links followed: a link to a folder is a folder.
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                continue;
            }
            out.insert(entry.file_name(), (meta.modified().ok(), meta.len()));
        }
        Ok(out)
    }
}

/// Watches the mod's `mod.toml` as [`Watcher`] watches scripts: a new
/// version is read once it has looked the same for two polls in a row.
pub struct ManifestWatch {
    dir: PathBuf,
    /// The stamp seen by the previous poll (`None`: no file).
    seen: Option<Stamp>,
    /// The stamp of the version last read (the one the run started with).
    read: Option<Stamp>,
}

impl ManifestWatch {
    /// Watches `dir`'s manifest, taking the version there now as read.
    pub fn new(dir: &Path) -> Self {
        let now = manifest_stamp(dir);
        Self {
            dir: dir.to_path_buf(),
            seen: now,
            read: now,
        }
    }

    /// The manifest as read again, once a new version (or its removal:
    /// `Ok(None)`) has settled; `None` while nothing changed.
    pub fn poll(&mut self) -> Option<Result<Option<Manifest>, ManifestErrors>> {
        let now = manifest_stamp(&self.dir);
        if now != self.seen {
            // Still being written, or just appeared: look again next poll.
            self.seen = now;
            return None;
        }
        if now == self.read {
            return None;
        }
        self.read = now;
        Some(manifest::load(&self.dir))
    }
}

fn manifest_stamp(dir: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(dir.join(manifest::MANIFEST_FILE)).ok()?;
    Some((meta.modified().ok(), meta.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) {
        std::fs::write(dir.join(file), text).unwrap();
    }

    /// A change as text, to compare.
    fn said(change: &Change) -> String {
        match change {
            Change::Changed { file, source } => format!("changed {file}: {source}"),
            Change::Removed { file } => format!("removed {file}"),
            Change::Unreadable { file, error } => format!("unreadable {file}: {error}"),
        }
    }

    fn all_said(changes: &[Change]) -> Vec<String> {
        changes.iter().map(said).collect()
    }

    #[test]
    fn scan_lists_script_files_in_file_name_order() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "b.lua", "");
        write(dir.path(), "a.lua", "");
        write(dir.path(), "notes.txt", "");
        std::fs::create_dir(dir.path().join("lib.lua")).unwrap();
        let mut w = Watcher::new(dir.path(), &["lua"]);
        assert_eq!(
            all_said(&w.scan().unwrap()),
            ["changed a.lua: ", "changed b.lua: "]
        );
    }

    #[test]
    fn a_change_is_reported_once_it_has_settled_and_only_if_the_text_differs() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.lua", "print(1)");
        let mut w = Watcher::new(dir.path(), &["lua"]);
        w.scan().unwrap();
        assert!(w.poll().is_empty());
        // Same text written again: nothing to reload.
        write(dir.path(), "a.lua", "print(1)");
        assert!(w.poll().is_empty());
        assert!(w.poll().is_empty());
        write(dir.path(), "a.lua", "print(2) -- longer");
        let mut all = w.poll();
        all.extend(w.poll());
        assert_eq!(all_said(&all), ["changed a.lua: print(2) -- longer"]);
        assert!(w.poll().is_empty());
    }

    #[test]
    fn deleted_and_renamed_files_are_removals_and_additions() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.lua", "x = 1");
        write(dir.path(), "b.lua", "y = 1");
        let mut w = Watcher::new(dir.path(), &["lua"]);
        w.scan().unwrap();
        std::fs::remove_file(dir.path().join("a.lua")).unwrap();
        std::fs::rename(dir.path().join("b.lua"), dir.path().join("c.lua")).unwrap();
        let mut all = w.poll();
        all.extend(w.poll());
        assert_eq!(
            all_said(&all),
            ["removed a.lua", "removed b.lua", "changed c.lua: y = 1"]
        );
    }

    #[test]
    fn a_script_rewritten_as_invalid_utf8_is_said_once_then_its_fix_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.lua", "x = 1");
        let mut w = Watcher::new(dir.path(), &["lua"]);
        w.scan().unwrap();
        std::fs::write(dir.path().join("a.lua"), b"x = 1\ny = \"\xff\"").unwrap();
        let mut all = Vec::new();
        for _ in 0..4 {
            all.extend(w.poll());
        }
        assert_eq!(
            all_said(&all),
            ["unreadable a.lua: a.lua is not valid UTF-8 text (line 2)"]
        );
        write(dir.path(), "a.lua", "x = 2 -- fixed");
        let mut all = w.poll();
        all.extend(w.poll());
        assert_eq!(all_said(&all), ["changed a.lua: x = 2 -- fixed"]);
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_script() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.lua", "\u{feff}print(1)");
        let mut w = Watcher::new(dir.path(), &["lua"]);
        assert_eq!(all_said(&w.scan().unwrap()), ["changed a.lua: print(1)"]);
    }
}
