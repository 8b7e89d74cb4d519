//! Regeneration: a second run writes nothing; keys added or removed in the
//! table appear in or disappear from the stubs; stale generated files go;
//! the user's own files are never touched.

use std::fs;

use gantry_host::{KeyDecl, Type};
use gantry_stubs::{LUA_FILE, StubsError, write_stubs};

fn read(dir: &std::path::Path, rel: &str) -> String {
    fs::read_to_string(dir.join(rel)).unwrap()
}

#[test]
fn running_twice_writes_nothing_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let table = gantry_test_support::signature_table::sample_table();
    let first = write_stubs(&table, dir.path()).unwrap();
    assert!(first.written.contains(&LUA_FILE.to_owned()));
    assert!(first.written.contains(&"rhai/__static__.d.rhai".to_owned()));
    let mtime = fs::metadata(dir.path().join(LUA_FILE))
        .unwrap()
        .modified()
        .unwrap();
    let second = write_stubs(&table, dir.path()).unwrap();
    assert!(!second.changed_anything(), "{second:?}");
    assert_eq!(second.unchanged.len(), first.written.len());
    let mtime_after = fs::metadata(dir.path().join(LUA_FILE))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(mtime, mtime_after);
}

#[test]
fn a_key_added_to_the_table_appears() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = gantry_test_support::signature_table::sample_table();
    write_stubs(&table, dir.path()).unwrap();
    table
        .declare(
            "Door.Open",
            KeyDecl::event().param("door", Type::Object),
            None,
        )
        .unwrap();
    let report = write_stubs(&table, dir.path()).unwrap();
    assert!(report.written.contains(&LUA_FILE.to_owned()));
    assert!(
        report
            .written
            .contains(&"rhai/__static__.d.rhai".to_owned())
    );
    assert!(read(dir.path(), LUA_FILE).contains(r#"fun(key: "Door.Open", door: GantryObject)"#));
    assert!(
        read(dir.path(), "rhai/__static__.d.rhai")
            .contains("fn NotifyMessage__Door__Open(door: Object) -> ();")
    );
}

#[test]
fn a_removed_key_disappears() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = gantry_test_support::signature_table::sample_table();
    write_stubs(&table, dir.path()).unwrap();
    assert!(read(dir.path(), LUA_FILE).contains("\"Game.Tick\""));
    table.keys.remove("Game.Tick");
    write_stubs(&table, dir.path()).unwrap();
    assert!(!read(dir.path(), LUA_FILE).contains("Game.Tick"));
    assert!(!read(dir.path(), "rhai/__static__.d.rhai").contains("Game__Tick"));
}

#[test]
fn stale_generated_files_are_removed_and_foreign_files_kept() {
    let dir = tempfile::tempdir().unwrap();
    let table = gantry_test_support::signature_table::sample_table();
    write_stubs(&table, dir.path()).unwrap();
    // Pretend an older version generated a file this one no longer does.
    fs::write(dir.path().join("rhai/old.d.rhai"), "module static;\n").unwrap();
    let manifest = dir.path().join(gantry_stubs::MANIFEST);
    let mut listed = fs::read_to_string(&manifest).unwrap();
    listed.push_str("rhai/old.d.rhai\n");
    fs::write(&manifest, listed).unwrap();
    fs::write(dir.path().join("rhai/mine.d.rhai"), "// the user's\n").unwrap();

    let report = write_stubs(&table, dir.path()).unwrap();
    assert_eq!(report.removed, ["rhai/old.d.rhai"]);
    assert!(!dir.path().join("rhai/old.d.rhai").exists());
    assert!(dir.path().join("rhai/mine.d.rhai").exists());
}

#[test]
fn a_users_file_in_the_way_is_an_error_not_an_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("lua")).unwrap();
    fs::write(dir.path().join(LUA_FILE), "-- mine\n").unwrap();
    let err = write_stubs(
        &gantry_test_support::signature_table::sample_table(),
        dir.path(),
    )
    .unwrap_err();
    assert!(matches!(err, StubsError::NotOurs { .. }), "{err}");
    assert!(err.to_string().contains("gantry.lua"), "{err}");
    assert_eq!(read(dir.path(), LUA_FILE), "-- mine\n");
}
