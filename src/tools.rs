//! The editor-side commands: `check`, `stubs` and `lsp`, thin shells over
//! `gantry-lsp` and `gantry-stubs`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::out::{out, outln};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// `file:line:col: severity code: message`
    Text,
    /// One JSON document with every finding.
    Json,
}

/// The keys `gantry run` declares to every mod before it runs (see
/// `run.rs`): `check` and the server know them with no table.
fn host_keys() -> Vec<gantry_lsp::HostKey> {
    vec![gantry_lsp::HostKey {
        key: crate::run::TICK_KEY.to_owned(),
        decl: crate::run::tick_decl(),
    }]
}

/// `gantry check DIR`: exit 1 on any error, or on any warning too with
/// `deny_warnings`.
pub fn check(dir: &Path, format: Format, deny_warnings: bool) -> anyhow::Result<ExitCode> {
    crate::folder::mod_folder(dir)?;
    // The checker looks for the nearest table file and would pass over a
    // folder in its place, checking against a parent's table or none.
    crate::folder::table_path(dir, None)?;
    let options = gantry_lsp::CheckOptions { host: host_keys() };
    let files = gantry_lsp::check::check_dir_with(dir, &options)
        .with_context(|| format!("checking {}", dir.display()))?;
    match format {
        Format::Text => out!("{}", gantry_lsp::check::format_text(&files)),
        Format::Json => outln!("{}", gantry_lsp::check::format_json(&files)),
    }
    let fails = gantry_lsp::check::has_errors(&files)
        || (deny_warnings && gantry_lsp::check::has_warnings(&files));
    Ok(if fails {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `gantry stubs DIR`: the stubs of the table `check` checks against
/// (the table file, the host's keys, `mod.toml`), so that the stubs show
/// the declared names, docs, kinds and structs. A manifest that cannot be
/// used is every finding printed and exit 2, nothing written: stubs
/// without its declarations would pass what `check` flags.
pub fn stubs(
    dir: &Path,
    out: Option<&Path>,
    table: Option<&Path>,
    luals_addon: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    // A mod folder that is not there is most likely a typo: say so rather
    // than create it and write the stubs of an empty table into it.
    crate::folder::mod_folder(dir)?;
    let table = crate::folder::load_table(dir, table)?;
    let contract = gantry_host::manifest::Contract::over(table, &host_keys(), Some(dir));
    if let Some(errors) = &contract.manifest_errors {
        return Ok(crate::contract::refuse_manifest(errors, "no stubs written"));
    }
    let table = contract.table;
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join(".gantry/stubs"));
    let (out, report) = match luals_addon {
        Some(addon) => (
            addon.to_path_buf(),
            gantry_stubs::write_luals_addon(&table, addon)
                .with_context(|| format!("writing the LuaLS addon to {}", addon.display()))?,
        ),
        None => {
            let report = gantry_stubs::write_stubs_in(&table, dir, &out)
                .with_context(|| format!("writing stubs to {}", out.display()))?;
            (out, report)
        }
    };
    for file in &report.written {
        outln!("wrote {file}");
    }
    for file in &report.removed {
        outln!("removed {file}");
    }
    outln!(
        "{} written, {} unchanged, {} removed in {}",
        report.written.len(),
        report.unchanged.len(),
        report.removed.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// LSP: exit code 0 after `shutdown` + `exit`, 1 for an `exit` without
/// `shutdown` before it.
pub fn lsp() -> anyhow::Result<ExitCode> {
    let ending = gantry_lsp::run_stdio_with(host_keys())?;
    Ok(ExitCode::from(ending.exit_code()))
}
