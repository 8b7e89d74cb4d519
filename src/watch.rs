//! Finding the mod's script files, and noticing when they change.
//!
//! Polling, not OS notifications: a mod folder holds a handful of files and
//! the host already wakes every tick. Editors save in several steps
//! (truncate, write, rename), so a change is reported only once a file has
//! looked the same for two polls in a row, and only if its text differs
//! from the version last handed out. A renamed file is a removal and an
//! addition; a file that vanishes between listing and reading is skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;

/// What a poll found.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    /// A new file, or a new version of a known one.
    Changed { file: String, source: String },
    /// The file is gone (deleted or renamed away).
    Removed { file: String },
}

/// What a file looked like on the disk.
type Stamp = (Option<SystemTime>, u64);

#[derive(Debug)]
struct Tracked {
    /// The stamp seen by the previous poll.
    seen: Stamp,
    /// The text last handed out (`None`: not handed out yet).
    source: Option<String>,
}

/// Watches the script files directly in one folder.
pub struct Watcher {
    dir: PathBuf,
    extensions: Vec<&'static str>,
    files: BTreeMap<String, Tracked>,
}

impl Watcher {
    pub fn new(dir: &Path, extensions: &[&'static str]) -> Self {
        Self {
            dir: dir.to_path_buf(),
            extensions: extensions.to_vec(),
            files: BTreeMap::new(),
        }
    }

    /// The script files now, by file name, and remembers them as loaded.
    pub fn scan(&mut self) -> anyhow::Result<Vec<(String, PathBuf)>> {
        let listed = self
            .list()
            .with_context(|| format!("reading {}", self.dir.display()))?;
        let mut out = Vec::new();
        for (file, stamp) in listed {
            let path = self.dir.join(&file);
            let source = std::fs::read_to_string(&path).ok();
            self.files.insert(
                file.clone(),
                Tracked {
                    seen: stamp,
                    source,
                },
            );
            out.push((file, path));
        }
        Ok(out)
    }

    /// The changes since the previous poll that have settled.
    pub fn poll(&mut self) -> Vec<Change> {
        let Ok(listed) = self.list() else {
            return Vec::new();
        };
        let mut changes = Vec::new();
        let gone: Vec<String> = self
            .files
            .keys()
            .filter(|f| !listed.contains_key(*f))
            .cloned()
            .collect();
        for file in gone {
            self.files.remove(&file);
            changes.push(Change::Removed { file });
        }
        for (file, stamp) in listed {
            let tracked = self.files.entry(file.clone()).or_insert(Tracked {
                seen: (None, u64::MAX),
                source: None,
            });
            if tracked.seen != stamp {
                // Still being written, or just appeared: look again next poll.
                tracked.seen = stamp;
                continue;
            }
            let Ok(source) = std::fs::read_to_string(self.dir.join(&file)) else {
                continue;
            };
            if tracked.source.as_deref() != Some(source.as_str()) {
                tracked.source = Some(source.clone());
                changes.push(Change::Changed { file, source });
            }
        }
        changes
    }

    fn list(&self) -> std::io::Result<BTreeMap<String, Stamp>> {
        let mut out = BTreeMap::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            let known = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|ext| self.extensions.contains(&ext));
            let Ok(meta) = entry.metadata() else { continue };
            if !known || !meta.is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            out.insert(name, (meta.modified().ok(), meta.len()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) {
        std::fs::write(dir.join(file), text).unwrap();
    }

    #[test]
    fn scan_lists_script_files_in_file_name_order() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "b.lua", "");
        write(dir.path(), "a.lua", "");
        write(dir.path(), "notes.txt", "");
        std::fs::create_dir(dir.path().join("lib.lua")).unwrap();
        let mut w = Watcher::new(dir.path(), &["lua"]);
        let files: Vec<String> = w.scan().unwrap().into_iter().map(|(f, _)| f).collect();
        assert_eq!(files, ["a.lua", "b.lua"]);
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
        let first = w.poll();
        let second = w.poll();
        let all: Vec<Change> = first.into_iter().chain(second).collect();
        assert_eq!(
            all,
            [Change::Changed {
                file: "a.lua".into(),
                source: "print(2) -- longer".into()
            }]
        );
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
            all,
            [
                Change::Removed {
                    file: "a.lua".into()
                },
                Change::Removed {
                    file: "b.lua".into()
                },
                Change::Changed {
                    file: "c.lua".into(),
                    source: "y = 1".into()
                },
            ]
        );
    }
}
