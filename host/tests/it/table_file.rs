//! The signature table file: stable, sorted and human-diffable, written
//! atomically, merged with what changed on disk, a corrupt or newer file
//! an error naming it and never overwritten, and never fooled by a special
//! file or a symbolic link.

use std::path::Path;
use std::time::Duration;

use gantry_host::files::{FileError, MAX_TABLE_BYTES};
use gantry_host::{
    Conflict, DEFAULT_TABLE_PATH, Hub, KeyDecl, Language, Param, Role, SignatureTable, Site,
    Source, StructDef, StructValue, TableError, TableFile, Type, Value,
};
use gantry_test_support::guard;

fn populated(order: bool) -> SignatureTable {
    let hub = Hub::new();
    let sends: [(&str, Value); 3] = [
        ("Zeta.Last", Value::Int(1)),
        ("Alpha.First", Value::str("a")),
        (
            "Mid.Key",
            Value::structure(StructValue::new("Thing").with("x", 1i64)),
        ),
    ];
    let mut sends = sends.to_vec();
    if order {
        sends.reverse();
    }
    for (key, value) in sends {
        hub.send_str(key, Source::Global, (value,)).unwrap();
    }
    let mut table = hub.table_snapshot();
    // Sites of other files, recorded in either order.
    let mut sites = vec![
        gantry_host::Site::new("b.lua", 3, Language::Lua, Role::Send),
        gantry_host::Site::new("a.rhai", 9, Language::Rhai, Role::Listen),
        gantry_host::Site::new("a.lua", 1, Language::Lua, Role::Listen),
    ];
    if order {
        sites.reverse();
    }
    for site in sites {
        table.record_site("Mid.Key", site);
    }
    // Rust sites of this file differ in column only between the two
    // orders; drop them.
    for entry in table.keys.values_mut() {
        entry.sites.retain(|s| s.language != Language::Rust);
    }
    table
}

#[test]
fn persistence_text_is_sorted_and_independent_of_the_order_things_were_seen() {
    let a = populated(false).to_json();
    let b = populated(true).to_json();
    assert_eq!(a, b);
    assert!(a.ends_with('\n'));
    let at = |needle: &str| a.find(needle).unwrap_or_else(|| panic!("{needle} in {a}"));
    assert!(at("Alpha.First") < at("Mid.Key") && at("Mid.Key") < at("Zeta.Last"));
    assert!(at("a.lua") < at("a.rhai") && at("a.rhai") < at("b.lua"));
    assert!(a.contains("\"version\": 1"));
}

#[test]
fn persistence_save_is_atomic_replacing_a_readable_file_and_leaving_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/signatures.json");
    populated(false).save(&path).unwrap();
    let mut bigger = populated(false);
    bigger
        .declare("New.Key", KeyDecl::event().param("n", Type::Int), None)
        .unwrap();
    assert!(bigger.save(&path).unwrap());
    assert_eq!(SignatureTable::load(&path).unwrap(), bigger);
    let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["signatures.json"], "no temporary file is left");
}

#[test]
fn persistence_unreadable_shapes_are_corrupt_errors_naming_the_place_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    for text in [
        "",
        "{}",
        "{\"version\": \"1\", \"keys\": {}}",
        "{\"version\": 1, \"keys\": []}",
        "{\"version\": 1, \"keys\": {\"A\": {\"params\": [{\"name\": \"x\", \"type\": \"9lives\"}]}}}",
        "[1, 2]",
        "{\"version\": 1,\n \"keys\": {\n  \"A\": {\"kind\": \"sometimes\"}}}",
    ] {
        std::fs::write(&path, text).unwrap();
        let err = SignatureTable::load(&path).unwrap_err();
        assert!(matches!(err, TableError::Corrupt { .. }), "{text:?}: {err}");
        let message = err.to_string();
        assert!(
            message.contains("signatures.json") && message.contains("line"),
            "{message}"
        );
        assert!(populated(false).save(&path).is_err(), "{text:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    // The version is read before anything else: a newer file whose shape
    // this Gantry does not know is "newer", not "corrupt".
    let newer = "{\"version\": 2, \"keys\": [\"a new shape\"]}";
    std::fs::write(&path, newer).unwrap();
    assert!(matches!(
        SignatureTable::load(&path),
        Err(TableError::NewerVersion { found: 2, .. })
    ));
    assert!(populated(false).save(&path).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), newer);
}

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

fn sorted_sample(n: usize) -> SignatureTable {
    let hub = Hub::new();
    hub.declare(
        "Player.Hurt",
        KeyDecl::event()
            .param("dmg", Type::Float)
            .doc("Damage taken"),
    )
    .unwrap();
    for i in 0..n {
        hub.send_str(
            &format!("Gen.Key{i}"),
            Source::Global,
            (i as i64, "padding text"),
        )
        .unwrap();
    }
    hub.table_snapshot()
}

fn leftovers(dir: &Path, keep: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != keep)
        .collect()
}

#[test]
fn saving_into_a_folder_that_cannot_be_made_is_a_write_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gantry"), "a file, not a folder").unwrap();
    let path = dir.path().join(".gantry/signatures.json");
    let err = sorted_sample(1).save(&path).unwrap_err();
    assert!(err.to_string().contains("signatures.json"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gantry")).unwrap(),
        "a file, not a folder"
    );
}

#[test]
fn a_failed_save_leaves_no_temporary_file_and_nothing_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    // The target is a folder (with something in it): the rename fails.
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("keep"), "x").unwrap();
    assert!(sorted_sample(1).save(&path).is_err());
    assert_eq!(
        leftovers(dir.path(), "signatures.json"),
        Vec::<String>::new()
    );
    assert!(path.join("keep").exists());
}

#[test]
fn a_successful_save_leaves_only_the_table_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    assert!(sorted_sample(3).save(&path).unwrap());
    assert!(sorted_sample(4).save(&path).unwrap());
    assert_eq!(
        leftovers(dir.path(), "signatures.json"),
        Vec::<String>::new()
    );
    assert_eq!(SignatureTable::load(&path).unwrap(), sorted_sample(4));
}

#[test]
fn an_empty_file_is_corrupt_named_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    std::fs::write(&path, "").unwrap();
    let err = SignatureTable::load(&path).unwrap_err();
    assert!(matches!(err, TableError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
    assert!(sorted_sample(1).save(&path).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"");
}

#[test]
fn a_file_that_is_not_utf8_is_an_error_naming_it_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    let bytes = b"{\"version\": 1, \"keys\": {\"A\xff\": {}}}".to_vec();
    std::fs::write(&path, &bytes).unwrap();
    let err = SignatureTable::load(&path).unwrap_err();
    assert!(err.to_string().contains("signatures.json"), "{err}");
    assert!(sorted_sample(1).save(&path).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn a_merge_conflict_left_in_the_file_is_corrupt_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    let text = "{\n  \"version\": 1,\n<<<<<<< HEAD\n  \"keys\": {}\n=======\n  \"keys\": {\"A\": {}}\n>>>>>>> theirs\n}\n";
    std::fs::write(&path, text).unwrap();
    let err = SignatureTable::load(&path).unwrap_err();
    match &err {
        TableError::Corrupt { line, .. } => assert_eq!(*line, 3, "{err}"),
        other => panic!("not corrupt: {other}"),
    }
    assert!(err.to_string().contains("signatures.json"), "{err}");
    assert!(sorted_sample(1).save(&path).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn a_newer_version_is_told_even_when_its_body_is_not_understood() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    for (text, found) in [
        ("{\"version\": 2, \"keys\": [\"a new layout\"]}", 2u64),
        ("{\"version\": 4294967296, \"keys\": {}}", 4_294_967_296),
        ("{\"keys\": {}, \"version\": 3, \"extra\": true}", 3),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = SignatureTable::load(&path).unwrap_err();
        assert!(
            matches!(err, TableError::NewerVersion { found: f, .. } if f == found),
            "{text}: {err}"
        );
        assert!(err.to_string().contains("signatures.json"), "{err}");
        assert!(sorted_sample(1).save(&path).is_err(), "{text}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn the_file_is_sorted_keys_structs_and_sites_but_params_keep_their_order() {
    let hub = Hub::new();
    hub.edit_table(|t| {
        t.declare_struct(
            "Zed",
            StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![Param::new("z", Type::Int), Param::new("a", Type::Int)],
            },
        );
        t.declare_struct(
            "Alpha",
            StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![Param::new("only", Type::Bool)],
            },
        );
    });
    hub.declare(
        "Zz.Last",
        KeyDecl::event()
            .param("zeta", Type::Int)
            .param("alpha", Type::Float),
    )
    .unwrap();
    hub.declare("Aa.First", KeyDecl::event()).unwrap();
    hub.record_site("Zz.Last", Site::new("z.lua", 9, Language::Lua, Role::Send));
    hub.record_site(
        "Zz.Last",
        Site::new("a.lua", 20, Language::Lua, Role::Listen),
    );
    hub.record_site("Zz.Last", Site::new("a.lua", 3, Language::Lua, Role::Send));
    let text = hub.table_snapshot().to_json();
    let at = |s: &str| {
        text.find(s)
            .unwrap_or_else(|| panic!("{s} missing: {text}"))
    };
    assert!(at("\"Aa.First\"") < at("\"Zz.Last\""), "{text}");
    assert!(at("\"Alpha\"") < at("\"Zed\""), "{text}");
    assert!(
        at("\"zeta\"") < at("\"alpha\""),
        "params keep their order: {text}"
    );
    assert!(at("\"z\"") < at("\"a\""), "fields keep their order: {text}");
    let sites: Vec<usize> = ["\"line\": 3,", "\"line\": 20,", "\"line\": 9,"]
        .iter()
        .map(|s| at(s))
        .collect();
    assert!(
        sites[0] < sites[1] && sites[1] < sites[2],
        "sites sorted by file then line: {text}"
    );
    assert!(text.ends_with("}\n"));
    // Human-diffable: one value per line, two-space indentation.
    assert!(
        text.contains("\n  \"keys\": {\n    \"Aa.First\": {\n"),
        "{text}"
    );
}

#[test]
fn a_compact_hand_written_file_is_rewritten_canonically_once_then_stable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    std::fs::write(
        &path,
        r#"{"keys":{"B.Key":{"params":[{"name":"n","type":"int"}]},"A.Key":{"doc":"by hand"}},"version":1}"#,
    )
    .unwrap();
    let table = SignatureTable::load(&path).unwrap();
    assert_eq!(table.get("A.Key").unwrap().doc, "by hand");
    assert!(
        table.save(&path).unwrap(),
        "rewritten in the canonical form"
    );
    let first = std::fs::read_to_string(&path).unwrap();
    let again = SignatureTable::load(&path).unwrap();
    assert!(!again.save(&path).unwrap(), "then stable");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
    assert!(first.find("A.Key").unwrap() < first.find("B.Key").unwrap());
}

#[test]
fn hand_written_param_names_and_struct_docs_survive_a_run_that_observes_more() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    std::fs::write(
        &path,
        r#"{
  "version": 1,
  "structs": { "Hit": { "doc": "One blow", "fields": [ { "name": "amount", "type": "int" } ] } },
  "keys": {
    "Player.Hurt": {
      "kind": "event",
      "origin": "observed",
      "doc": "When the player takes damage",
      "params": [ { "name": "dmg", "type": "float" } ]
    }
  }
}
"#,
    )
    .unwrap();
    let hub = Hub::with_table(SignatureTable::load(&path).unwrap());
    hub.send_str("Player.Hurt", Source::Global, (2.5, "goblin"))
        .unwrap();
    hub.send_str(
        "Combat.Blow",
        Source::Global,
        (gantry_host::Value::structure(
            gantry_host::StructValue::new("Hit").with("amount", 3i64),
        ),),
    )
    .unwrap();
    hub.table_snapshot().save(&path).unwrap();
    let after = SignatureTable::load(&path).unwrap();
    let entry = after.get("Player.Hurt").unwrap();
    assert_eq!(entry.doc, "When the player takes damage");
    assert_eq!(entry.params[0].name, "dmg");
    assert_eq!(
        entry.params.len(),
        2,
        "the new trailing parameter merged in"
    );
    assert_eq!(after.structs.get("Hit").unwrap().doc, "One blow");
}

/// "written atomically (temp file + rename)": two tables saved to the same
/// path at the same time (two hubs, two threads of one process: a game
/// server with a world per thread, or a test suite) must never leave or
/// show a partial file, and a save must not fail because another one ran.
/// Every save uses the same temporary name (`.signatures.json.<pid>.tmp`),
/// so one writer's rename takes the other's half-made file: seen here as
/// "No such file or directory" from the loser (intermittent: about half of
/// 1 s runs on this machine; 2.5 s makes it likely, not certain).
#[test]
fn concurrent_saves_in_one_process_never_expose_a_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    sorted_sample(1).save(&path).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let path = path.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut bad = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Err(e) = SignatureTable::load(&path) {
                    bad.push(e.to_string());
                }
            }
            bad
        })
    };
    let start = std::sync::Arc::new(std::sync::Barrier::new(2));
    let writers: Vec<_> = [300usize, 250]
        .into_iter()
        .map(|n| {
            let path = path.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                // Each thread has its own hub and table (neither is Send).
                let table = sorted_sample(n);
                let mut failures = Vec::new();
                start.wait();
                let until = std::time::Instant::now() + std::time::Duration::from_millis(2500);
                while std::time::Instant::now() < until {
                    // Writes each time: the other writer changed the file.
                    if let Err(e) = table.save(&path) {
                        failures.push(e.to_string());
                    }
                }
                failures
            })
        })
        .collect();
    let mut failures: Vec<String> = Vec::new();
    for w in writers {
        failures.extend(w.join().unwrap());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let bad_reads = reader.join().unwrap();
    let final_load = SignatureTable::load(&path);
    assert!(
        final_load.is_ok(),
        "the file left behind is not a whole table: {}",
        final_load.unwrap_err()
    );
    assert!(
        bad_reads.is_empty() && failures.is_empty(),
        "{} partial reads (first: {:?}); {} failed saves (first: {:?})",
        bad_reads.len(),
        bad_reads.first(),
        failures.len(),
        failures.first()
    );
}

/// A key written twice in the file (a hand merge) is not a table this
/// version can hold: silently keeping the last one would drop the first
/// one's hand-written doc at the next save. (Ambiguous: the texts say
/// "corrupt", JSON only says names SHOULD be unique.)
#[test]
fn a_key_written_twice_is_an_error_not_a_silent_drop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    let text = r#"{"version": 1, "keys": {"A.Key": {"doc": "mine"}, "A.Key": {"doc": "theirs"}}}"#;
    std::fs::write(&path, text).unwrap();
    let loaded = SignatureTable::load(&path);
    assert!(
        loaded.is_err(),
        "loaded, keeping only {:?}",
        loaded.unwrap().get("A.Key").map(|e| e.doc.clone())
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
