//! The paths a game is opened with, checked before anything is read.
//!
//! A folder that is not there is most likely a typo: said, rather than
//! run an empty game or create the folder. A table path may be absent (no
//! run has recorded one yet), but something other than a regular file
//! there (a folder, a FIFO, a device) is refused before anything opens it:
//! reading a FIFO would block.
//!
//! The table of a game or mod folder is read inside it (a `.gantry` linked
//! out of the folder is refused); a table path the user named is read
//! where it is.

use std::path::{Path, PathBuf};

use gantry_host::{DEFAULT_TABLE_PATH, TableFile};

use crate::LoaderError;

/// `dir` exists and is a folder.
pub fn mod_folder(dir: &Path) -> Result<(), LoaderError> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(LoaderError::NotAFolder(dir.to_path_buf())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(LoaderError::NoFolder(dir.to_path_buf()))
        }
        Err(error) => Err(LoaderError::Folder {
            path: dir.to_path_buf(),
            error,
        }),
    }
}

/// The table file of `dir`: `table` if given, else the default place. An
/// absent file is fine (an empty table); anything there that is not a
/// regular file is an error naming what it is.
pub fn table_path(dir: &Path, table: Option<&Path>) -> Result<PathBuf, LoaderError> {
    let path = table
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join(DEFAULT_TABLE_PATH));
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => {}
        Ok(meta) => {
            let what = if meta.is_dir() {
                "a folder"
            } else {
                "a special file"
            };
            return Err(LoaderError::TableNotFile { path, what });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(LoaderError::TableUnreadable { path, error }),
    }
    Ok(path)
}

/// The table file of `dir` (or the `table` named) for a run, which saves
/// back to it merging with what changed on disk meanwhile.
pub fn open_table(dir: &Path, table: Option<&Path>) -> Result<TableFile, LoaderError> {
    let path = table_path(dir, table)?;
    match table {
        Some(path) => TableFile::open(path),
        None => TableFile::open_in(dir, Path::new(DEFAULT_TABLE_PATH)),
    }
    .map_err(|error| LoaderError::Table { path, error })
}
