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

use anyhow::Context;
use gantry_host::{DEFAULT_TABLE_PATH, SignatureTable};

/// `dir` exists and is a folder.
pub fn mod_folder(dir: &Path) -> anyhow::Result<()> {
    Ok(gantry_loader::folder::mod_folder(dir)?)
}

/// The table file of `dir`: `table` if given, else the default place. An
/// absent file is fine (an empty table); anything there that is not a
/// regular file is an error naming what it is.
pub fn table_path(dir: &Path, table: Option<&Path>) -> anyhow::Result<PathBuf> {
    Ok(gantry_loader::folder::table_path(dir, table)?)
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
