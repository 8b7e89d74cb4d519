//! `gantry table DIR`: print what the signature table knows.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use gantry_host::{DEFAULT_TABLE_PATH, SignatureTable};

pub fn run(dir: &Path, table: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let path = table
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join(DEFAULT_TABLE_PATH));
    let table =
        SignatureTable::load(&path).with_context(|| format!("loading {}", path.display()))?;
    if json {
        print!("{}", table.to_json());
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
        println!("struct {name}{parent} {{ {} }}", fields.join(", "));
    }
    for (key, entry) in table.entries() {
        let senders = entry.sites_with_role(gantry_host::Role::Send).count();
        let listeners = entry.sites_with_role(gantry_host::Role::Listen).count();
        println!(
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
