//! The paths a subcommand is given, checked before it does anything.
//!
//! A mod folder that is not there is most likely a typo: every subcommand
//! says so and exits non-zero, rather than explain an empty mod ("sent
//! from: nowhere"), check nothing, or create the folder. A table path may
//! be absent (no run has recorded one yet), but something other than a
//! regular file there (a folder, a FIFO, a device) is refused before
//! anything opens it: reading a FIFO would block, and a checker that skips
//! it would silently check against some other table.
//!
//! The table of a mod folder is read inside it (a `.gantry` linked out of
//! the folder is refused); a `--table` the user named is read where it is.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use gantry_host::{DEFAULT_TABLE_PATH, SignatureTable, TableFile};

/// `dir` exists and is a folder.
pub fn mod_folder(dir: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => bail!("{} is not a folder", dir.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!("the mod folder {} does not exist", dir.display())
        }
        Err(e) => bail!("cannot open the mod folder {}: {e}", dir.display()),
    }
}

/// The table file of `dir`: `table` if given, else the default place. An
/// absent file is fine (an empty table); anything there that is not a
/// regular file is an error naming what it is.
pub fn table_path(dir: &Path, table: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = table
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join(DEFAULT_TABLE_PATH));
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => {}
        Ok(meta) => bail!(
            "the signature table {} is {}, not a file",
            path.display(),
            if meta.is_dir() {
                "a folder"
            } else {
                "a special file"
            }
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => bail!("cannot open the signature table {}: {e}", path.display()),
    }
    Ok(path)
}

/// The table of `dir` (or the `table` named), as [`table_path`] finds it;
/// a missing file is an empty table.
pub fn load_table(dir: &Path, table: Option<&Path>) -> anyhow::Result<SignatureTable> {
    let path = table_path(dir, table)?;
    match table {
        Some(path) => SignatureTable::load(path),
        None => SignatureTable::load_in(dir, Path::new(DEFAULT_TABLE_PATH)),
    }
    .with_context(|| format!("loading {}", path.display()))
}

/// The table file of `dir` (or the `table` named) for a run, which saves
/// back to it merging with what changed on disk meanwhile.
pub fn open_table(dir: &Path, table: Option<&Path>) -> anyhow::Result<TableFile> {
    let path = table_path(dir, table)?;
    match table {
        Some(path) => TableFile::open(path),
        None => TableFile::open_in(dir, Path::new(DEFAULT_TABLE_PATH)),
    }
    .with_context(|| format!("loading the signature table {}", path.display()))
}
