//! `gantry doc --out DIR`: writes the book's API reference, generated from
//! the API table (`gantry_stubs::reference`), into DIR. The book's tests
//! fail when the committed page differs from what this writes.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use gantry_stubs::reference::{REFERENCE_FILE, api_reference};

use crate::out::outln;

/// Writes the reference page into `out` (created if missing); a page that
/// is already up to date is left alone.
pub fn run(out: &Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join(REFERENCE_FILE);
    let page = api_reference();
    if std::fs::read_to_string(&path).is_ok_and(|old| old == page) {
        outln!("{} is up to date", path.display());
    } else {
        std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
        outln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
