//! `gantry table DIR`: print what the signature table knows.

use std::path::Path;
use std::process::ExitCode;

use crate::out::{errln, out, outln};

pub fn run(dir: &Path, table: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    crate::folder::mod_folder(dir)?;
    let path = crate::folder::table_path(dir, table)?;
    if !path.exists() {
        errln!(
            "note: no signature table at {} yet (`gantry run {}` records one)",
            path.display(),
            dir.display()
        );
    }
    let table = crate::folder::load_table(dir, table)?;
    if json {
        out!("{}", table.to_json());
        return Ok(ExitCode::SUCCESS);
    }
    for (name, def) in &table.structs.defs {
        let fields: Vec<String> = def
            .fields
            .iter()
            .map(|f| format!("{}: {}", f.name, f.ty))
            .collect();
        let parent = def
            .parent
            .as_ref()
            .map(|p| format!(" : {p}"))
            .unwrap_or_default();
        outln!("struct {name}{parent} {{ {} }}", fields.join(", "));
    }
    for (key, entry) in table.entries() {
        let senders = entry.sites_with_role(gantry_host::Role::Send).count();
        let listeners = entry.sites_with_role(gantry_host::Role::Listen).count();
        outln!(
            "{key} {} [{}, {:?}] senders: {senders}, listeners: {listeners}{}",
            entry.signature_label(),
            entry.kind,
            entry.origin,
            if entry.doc.is_empty() {
                String::new()
            } else {
                format!(" — {}", entry.doc)
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
