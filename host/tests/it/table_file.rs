//! Persistence of the signature table: stable, atomic, merged with what
//! changed on disk, and never fooled by a special file or a symbolic link.

#[path = "support/guard.rs"]
mod guard;

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

// ----- the table file is a mod's file: special files, size, symlinks --------

use std::path::Path;
use std::time::Duration;

use gantry_host::files::{FileError, MAX_TABLE_BYTES};
use gantry_host::{Conflict, DEFAULT_TABLE_PATH, TableFile};

#[cfg(unix)]
#[test]
fn a_fifo_as_the_table_file_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    guard::mkfifo(&path);
    let loaded = path.clone();
    let err = guard::within(Duration::from_secs(5), move || {
        SignatureTable::load(&loaded).unwrap_err()
    });
    let message = err.to_string();
    assert!(
        message.contains("signatures.json") && message.contains("FIFO"),
        "{message}"
    );
    let opened = path.clone();
    let err = guard::within(Duration::from_secs(5), move || {
        TableFile::open(&opened).unwrap_err()
    });
    assert!(err.to_string().contains("FIFO"), "{err}");
    let saved = path.clone();
    let err = guard::within(Duration::from_secs(5), move || {
        sample().save(&saved).unwrap_err()
    });
    assert!(err.to_string().contains("FIFO"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_table_path_leading_to_a_device_is_refused_before_reading_it() {
    // `/dev/zero` never ends; reading it would fill memory.
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("signatures.json");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    for path in [Path::new("/dev/zero"), link.as_path()] {
        let path = path.to_owned();
        let err = guard::within(Duration::from_secs(5), move || {
            SignatureTable::load(&path).unwrap_err()
        });
        assert!(err.to_string().contains("character device"), "{err}");
    }
}

#[test]
fn a_table_file_over_the_size_bound_is_refused_before_it_is_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    // Sparse: the size is what is checked, nothing is read.
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(MAX_TABLE_BYTES + 1).unwrap();
    drop(file);
    let err = SignatureTable::load(&path).unwrap_err();
    assert!(
        matches!(&err, TableError::File(FileError::TooLarge { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("larger than 64 MiB"), "{err}");
    assert!(sample().save(&path).is_err(), "never overwritten");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), MAX_TABLE_BYTES + 1);
}

#[test]
fn a_folder_as_the_table_path_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    std::fs::create_dir(&path).unwrap();
    let err = SignatureTable::load(&path).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("signatures.json") && message.contains("is a folder"),
        "{message}"
    );
}

#[test]
fn a_table_file_starting_with_a_byte_order_mark_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    sample().save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("\u{FEFF}{text}")).unwrap();
    assert_eq!(SignatureTable::load(&path).unwrap(), sample());
}

#[cfg(unix)]
#[test]
fn a_gantry_folder_that_is_a_symlink_out_of_the_mod_folder_is_never_written_through() {
    let root = tempfile::tempdir().unwrap();
    let mod_dir = root.path().join("mod");
    let victim = root.path().join("victim");
    std::fs::create_dir_all(&mod_dir).unwrap();
    std::fs::create_dir_all(&victim).unwrap();
    std::os::unix::fs::symlink("../victim", mod_dir.join(".gantry")).unwrap();
    let mut file = TableFile::open_in(&mod_dir, Path::new(DEFAULT_TABLE_PATH)).unwrap();
    let err = file.save(&sample()).unwrap_err();
    assert!(
        err.to_string()
            .contains(".gantry is a symbolic link; Gantry writes nothing through it"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
}

#[cfg(unix)]
#[test]
fn a_table_file_that_links_out_of_the_mod_folder_is_not_read() {
    let root = tempfile::tempdir().unwrap();
    let mod_dir = root.path().join("mod");
    std::fs::create_dir_all(mod_dir.join(".gantry")).unwrap();
    let outside = root.path().join("outside.json");
    sample().save(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, mod_dir.join(DEFAULT_TABLE_PATH)).unwrap();
    let err = TableFile::open_in(&mod_dir, Path::new(DEFAULT_TABLE_PATH)).unwrap_err();
    assert!(
        err.to_string()
            .contains(".gantry/signatures.json leads outside"),
        "{err}"
    );
    let err = SignatureTable::load_in(&mod_dir, Path::new(DEFAULT_TABLE_PATH)).unwrap_err();
    assert!(
        matches!(err, TableError::File(FileError::Outside { .. })),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn saving_over_a_symlinked_table_file_replaces_the_link_not_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere.json");
    let empty = SignatureTable::new();
    empty.save(&target).unwrap();
    let before = std::fs::read(&target).unwrap();
    let path = dir.path().join("signatures.json");
    std::os::unix::fs::symlink(&target, &path).unwrap();
    assert!(sample().save(&path).unwrap());
    assert_eq!(std::fs::read(&target).unwrap(), before, "target untouched");
    assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
    assert_eq!(SignatureTable::load(&path).unwrap(), sample());
}

// ----- no data lost: saving merges with what is on disk ----------------------

#[test]
fn a_hand_edit_made_while_a_run_holds_the_table_survives_its_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    sample().save(&path).unwrap();
    // The run reads the table...
    let mut file = TableFile::open(&path).unwrap();
    let hub = Hub::with_table(file.table().clone());
    // ...the user documents a key meanwhile...
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen(
            "\"origin\": \"observed\",",
            "\"origin\": \"observed\",\n      \"doc\": \"Once per frame\",",
            1,
        ),
    )
    .unwrap();
    // ...and the run observes more, then saves at its end.
    hub.send_str("New.Key", Source::Global, ("x",)).unwrap();
    let saved = file.save(&hub.table_snapshot()).unwrap();
    assert!(saved.written && saved.conflicts.is_empty(), "{saved:?}");
    let after = SignatureTable::load(&path).unwrap();
    assert_eq!(after.get("Game.Tick").unwrap().doc, "Once per frame");
    assert!(after.get("New.Key").is_some());
}

#[test]
fn two_runs_saving_one_table_at_once_each_keep_the_others_keys() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let path = dir.path().join(format!("signatures{round}.json"));
        sample().save(&path).unwrap();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let runs: Vec<_> = ["First", "Second"]
            .into_iter()
            .map(|name| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut file = TableFile::open(&path).unwrap();
                    let hub = Hub::with_table(file.table().clone());
                    for i in 0..3 {
                        hub.send_str(&format!("{name}.Key{i}"), Source::Global, (i,))
                            .unwrap();
                    }
                    let table = hub.table_snapshot();
                    barrier.wait();
                    file.save(&table).unwrap()
                })
            })
            .collect();
        for run in runs {
            let saved = run.join().unwrap();
            assert!(saved.conflicts.is_empty(), "{saved:?}");
        }
        let after = SignatureTable::load(&path).unwrap();
        for name in ["First", "Second"] {
            for i in 0..3 {
                assert!(
                    after.get(&format!("{name}.Key{i}")).is_some(),
                    "round {round}: {name}.Key{i} lost"
                );
            }
        }
        assert!(after.get("Player.Hurt").is_some());
        assert!(
            !dir.path()
                .join(format!("signatures{round}.json.lock"))
                .exists()
        );
    }
}

#[test]
fn a_key_changed_differently_in_the_file_and_by_the_run_is_reported_and_the_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    sample().save(&path).unwrap();
    let mut file = TableFile::open(&path).unwrap();
    let mut ours = file.table().clone();
    ours.declare(
        "Player.Hurt",
        KeyDecl::event().param("dmg", Type::Int).doc("From the run"),
        None,
    )
    .unwrap();
    let mut theirs = file.table().clone();
    theirs
        .declare(
            "Player.Hurt",
            KeyDecl::event().param("dmg", Type::String).doc("By hand"),
            None,
        )
        .unwrap();
    theirs.save(&path).unwrap();
    let saved = file.save(&ours).unwrap();
    let conflicts: Vec<String> = saved.conflicts.iter().map(ToString::to_string).collect();
    assert_eq!(
        saved.conflicts,
        [
            Conflict::Key {
                key: "Player.Hurt".into(),
                field: "doc".into()
            },
            Conflict::Key {
                key: "Player.Hurt".into(),
                field: "params".into()
            }
        ],
        "{conflicts:?}"
    );
    assert!(conflicts[1].contains("key `Player.Hurt`: `params` was changed both in the file"));
    let after = SignatureTable::load(&path).unwrap();
    assert_eq!(after.get("Player.Hurt").unwrap().doc, "By hand");
    assert_eq!(after.get("Player.Hurt").unwrap().params[0].ty, Type::String);
}

#[test]
fn two_runs_recording_different_sites_of_one_new_key_keep_both() {
    use gantry_host::{Language, Role, Site};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    let mut first = TableFile::open(&path).unwrap();
    let mut second = TableFile::open(&path).unwrap();
    let with_site = |file: &str| {
        let mut table = SignatureTable::new();
        table.record_site("Shared.Key", Site::new(file, 3, Language::Lua, Role::Send));
        table
    };
    assert!(
        first
            .save(&with_site("a.lua"))
            .unwrap()
            .conflicts
            .is_empty()
    );
    assert!(
        second
            .save(&with_site("b.lua"))
            .unwrap()
            .conflicts
            .is_empty()
    );
    let sites: Vec<String> = SignatureTable::load(&path)
        .unwrap()
        .get("Shared.Key")
        .unwrap()
        .sites
        .iter()
        .map(|s| s.file.clone())
        .collect();
    assert_eq!(sites, ["a.lua", "b.lua"]);
}

#[test]
fn unknown_fields_in_the_table_file_are_kept_on_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    std::fs::write(
        &path,
        r#"{
  "version": 1,
  "generator": {"tool": "mod-kit", "v": 3},
  "keys": {
    "Game.Tick": {
      "kind": "event",
      "params": [],
      "deprecated": true
    }
  }
}
"#,
    )
    .unwrap();
    // Saved as it is...
    let table = SignatureTable::load(&path).unwrap();
    let mut changed = table.clone();
    changed.record_args(
        "New.Key",
        gantry_host::Kind::Event,
        &[gantry_host::Value::Int(1)],
    );
    assert!(changed.save(&path).unwrap());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["generator"]["tool"], "mod-kit");
    assert_eq!(json["keys"]["Game.Tick"]["deprecated"], true);
    // ...and merged by a run.
    let mut file = TableFile::open(&path).unwrap();
    let hub = Hub::with_table(file.table().clone());
    hub.send_str("Game.Tick", Source::Global, (1i64,)).unwrap();
    assert!(
        file.save(&hub.table_snapshot())
            .unwrap()
            .conflicts
            .is_empty()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["generator"]["v"], 3);
    assert_eq!(json["keys"]["Game.Tick"]["deprecated"], true);
    assert_eq!(
        json["keys"]["Game.Tick"]["params"][0]["type"], "int",
        "{text}"
    );
    assert_eq!(text.matches("\"deprecated\"").count(), 1, "{text}");
}

#[test]
fn a_table_file_with_crlf_line_endings_stays_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    std::fs::write(&path, sample().to_json().replace('\n', "\r\n")).unwrap();
    // Unchanged: not a byte written.
    assert!(!SignatureTable::load(&path).unwrap().save(&path).unwrap());
    let mut file = TableFile::open(&path).unwrap();
    let hub = Hub::with_table(file.table().clone());
    hub.send_str("New.Key", Source::Global, ("x",)).unwrap();
    assert!(file.save(&hub.table_snapshot()).unwrap().written);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("New.Key"));
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "{text}"
    );
}

#[test]
fn a_lock_left_by_a_run_that_died_does_not_stop_a_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    let lock = dir.path().join("signatures.json.lock");
    let file = std::fs::File::create(&lock).unwrap();
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(120))
        .unwrap();
    drop(file);
    assert!(sample().save(&path).unwrap());
    assert!(!lock.exists());
}
