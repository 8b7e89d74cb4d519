//! Persistence of the signature table (issue 2, item 9).

use gantry_host::{Hub, KeyDecl, SignatureTable, Source, TableError, Type};

fn sample() -> SignatureTable {
    let hub = Hub::new();
    hub.declare(
        "Player.Hurt",
        KeyDecl::event()
            .param("dmg", Type::Float)
            .doc("Damage taken"),
    )
    .unwrap();
    hub.send_str("Game.Tick", Source::Global, (1i64, 0.016f64))
        .unwrap();
    hub.table_snapshot()
}

#[test]
fn persistence_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".gantry/signatures.json");
    let table = sample();
    assert!(table.save(&path).unwrap());
    let loaded = SignatureTable::load(&path).unwrap();
    assert_eq!(loaded, table);
}

#[test]
fn persistence_is_stable_saving_unchanged_table_changes_no_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    let table = sample();
    table.save(&path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let reloaded = SignatureTable::load(&path).unwrap();
    assert!(!reloaded.save(&path).unwrap(), "nothing to write");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        modified
    );
    // Keys are sorted.
    let text = String::from_utf8(before).unwrap();
    assert!(text.find("Game.Tick").unwrap() < text.find("Player.Hurt").unwrap());
}

#[test]
fn persistence_corrupt_file_is_an_error_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    std::fs::write(&path, "{ \"version\": 1, \"keys\": { oops").unwrap();
    let err = SignatureTable::load(&path).unwrap_err();
    assert!(matches!(err, TableError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("signatures.json"));
    assert!(
        sample().save(&path).is_err(),
        "a corrupt file is never overwritten"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{ \"version\": 1, \"keys\": { oops"
    );
}

/// A key or struct written twice (a hand merge) is a corrupt table naming
/// the name, the file and where it was noticed, and the file is left alone.
#[test]
fn persistence_a_name_written_twice_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    for (text, name, line) in [
        (
            "{\n  \"version\": 1,\n  \"keys\": {\n    \"A.Key\": {},\n    \"A.Key\": {}\n  }\n}\n",
            "A.Key",
            5,
        ),
        (
            "{\"version\": 1, \"structs\": {\"Item\": {}, \"Item\": {}}}",
            "Item",
            1,
        ),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = SignatureTable::load(&path).unwrap_err();
        let TableError::Corrupt { line: at, .. } = &err else {
            panic!("{err}")
        };
        // serde reports the place it noticed: the end of the second entry's
        // object, at or just after the second name's line.
        assert!((line..=line + 1).contains(at), "{err}");
        let message = err.to_string();
        assert!(
            message.contains(&format!("`{name}` is written twice"))
                && message.contains("signatures.json"),
            "{message}"
        );
        assert!(sample().save(&path).is_err(), "never overwritten");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn persistence_newer_version_is_an_error_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    let text = "{\n  \"version\": 99,\n  \"keys\": {}\n}\n";
    std::fs::write(&path, text).unwrap();
    let err = SignatureTable::load(&path).unwrap_err();
    assert!(
        matches!(err, TableError::NewerVersion { found: 99, .. }),
        "{err}"
    );
    assert!(sample().save(&path).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn persistence_invalid_key_in_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    std::fs::write(&path, "{\"version\":1,\"keys\":{\"bad key\":{}}}").unwrap();
    assert!(matches!(
        SignatureTable::load(&path),
        Err(TableError::InvalidKey { .. })
    ));
}

#[test]
fn persistence_observed_entries_merge_and_hand_written_docs_survive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    sample().save(&path).unwrap();
    // A user documents an observed key by hand.
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replacen(
        "\"origin\": \"observed\",",
        "\"origin\": \"observed\",\n      \"doc\": \"Once per frame\",",
        1,
    );
    std::fs::write(&path, &text).unwrap();
    let loaded = SignatureTable::load(&path).unwrap();
    assert_eq!(loaded.get("Game.Tick").unwrap().doc, "Once per frame");
    // A run observes more and the hub saves.
    let hub = Hub::with_table(loaded);
    hub.send_str("Game.Tick", Source::Global, (2i64, 0.016f64))
        .unwrap();
    hub.send_str("New.Key", Source::Global, ("x",)).unwrap();
    hub.table_snapshot().save(&path).unwrap();
    let after = SignatureTable::load(&path).unwrap();
    assert_eq!(after.get("Game.Tick").unwrap().doc, "Once per frame");
    assert_eq!(after.get("Player.Hurt").unwrap().doc, "Damage taken");
    assert!(after.get("New.Key").is_some());
}

#[test]
fn persistence_missing_file_is_an_empty_table() {
    let dir = tempfile::tempdir().unwrap();
    let t = SignatureTable::load(&dir.path().join("none.json")).unwrap();
    assert!(t.keys.is_empty());
}
