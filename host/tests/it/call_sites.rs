//! The table's call sites stay true: a run replaces the sites of each file
//! it records again (a Rust caller's file too), and the sites of a script
//! the folder no longer has go.

use gantry_host::{Hub, Language, Role, SignatureTable, Site, Source};

/// A table as an earlier run saved it: a send of `Game.Hit` from this
/// file at a line this file no longer sends from, and one from a file
/// this run does not touch.
fn earlier_run() -> SignatureTable {
    let mut table = SignatureTable::new();
    table.record_site(
        "Game.Hit",
        Site::new(file!(), 1, Language::Rust, Role::Send),
    );
    table.record_site(
        "Game.Hit",
        Site::new("other.rs", 5, Language::Rust, Role::Send),
    );
    // Read back from its file: a new session.
    SignatureTable::from_json(&table.to_json(), std::path::Path::new("t.json")).unwrap()
}

#[test]
fn a_rust_callers_sites_are_those_this_run_recorded() {
    let hub = Hub::with_table(earlier_run());
    let line = line!() + 1;
    hub.send_str("Game.Hit", Source::Global, (3i64,)).unwrap();
    let table = hub.table();
    let sites: Vec<(String, u32)> = table
        .get("Game.Hit")
        .unwrap()
        .sites
        .iter()
        .map(|s| (s.file.clone(), s.line))
        .collect();
    assert_eq!(
        sites,
        [(file!().to_owned(), line), ("other.rs".to_owned(), 5)],
        "the stale line 1 of this file went, other.rs stayed"
    );
}

#[test]
fn the_sites_of_a_deleted_script_go_when_the_folder_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kept.lua"), "").unwrap();
    let mut table = SignatureTable::new();
    for file in ["kept.lua", "gone.lua", "../outside.lua"] {
        table.record_site("K.A", Site::new(file, 1, Language::Lua, Role::Send));
    }
    table.record_site(
        "K.A",
        Site::new("src/main.rs", 1, Language::Rust, Role::Send),
    );
    assert!(table.forget_missing_files(dir.path()));
    let files: Vec<&str> = table
        .get("K.A")
        .unwrap()
        .sites
        .iter()
        .map(|s| s.file.as_str())
        .collect();
    assert_eq!(files, ["kept.lua", "src/main.rs"]);
    assert!(
        !table.forget_missing_files(dir.path()),
        "nothing more to forget"
    );
}

#[test]
fn recording_the_same_file_twice_in_a_session_keeps_both_sites() {
    let mut table = SignatureTable::new();
    table.record_site("K.A", Site::new("a.lua", 1, Language::Lua, Role::Send));
    table.record_site("K.B", Site::new("a.lua", 2, Language::Lua, Role::Listen));
    assert_eq!(table.get("K.A").unwrap().sites.len(), 1);
    assert_eq!(table.get("K.B").unwrap().sites.len(), 1);
}
