//! The table's lock file: one save at a time reads, merges and replaces
//! the table, so two runs saving one table at once each keep the other's
//! keys.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::TableError;
use crate::files::FileError;

/// How long a save waits for another one to finish before giving up.
const WAIT: Duration = Duration::from_secs(5);

/// A lock older than this was left by a run that died mid-save (a save
/// takes well under a second): it is removed.
const STALE: Duration = Duration::from_secs(30);

/// Held while a save reads and replaces the table; removed when dropped.
pub(crate) struct Lock {
    path: PathBuf,
}

impl Lock {
    /// `signatures.json.lock` beside `table`, created exclusively (an
    /// existing name, link or not, is never opened).
    pub(crate) fn acquire(table: &Path) -> Result<Lock, TableError> {
        let mut name = table.file_name().unwrap_or_default().to_owned();
        name.push(".lock");
        let path = table.with_file_name(name);
        let started = Instant::now();
        loop {
            match File::options().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    // Who holds it, for a user who finds it left behind.
                    let _ = writeln!(file, "{}", std::process::id());
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if is_stale(&path) {
                        tracing::warn!(lock = %path.display(), "removing a stale table lock");
                        let _ = fs::remove_file(&path);
                        continue;
                    }
                    if started.elapsed() > WAIT {
                        return Err(TableError::Locked {
                            path: table.to_owned(),
                            lock: path,
                        });
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(source) => {
                    return Err(TableError::Save {
                        path: table.to_owned(),
                        source: FileError::Write {
                            path: path.to_string_lossy().into_owned(),
                            source,
                        },
                    });
                }
            }
        }
    }
}

fn is_stale(path: &Path) -> bool {
    fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|at| {
            SystemTime::now()
                .duration_since(at)
                .is_ok_and(|age| age > STALE)
        })
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}
