//! `gantry stubs --luals-addon DIR`: a LuaLS addon folder (`config.json`
//! and `library/`) with no path outside it; a link or a file at DIR, or a
//! user's own file where the addon writes, is refused and left alone.

use std::fs;

use gantry_stubs::luals::LIBRARY_FILE;
use gantry_stubs::{StubsError, write_luals_addon};

#[test]
fn the_addon_holds_a_config_and_the_meta_file_and_moves_with_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let addon = dir.path().join("gantry");
    let table = gantry_test_support::signature_table::sample_table();
    let report = write_luals_addon(&table, &addon).unwrap();
    assert!(report.written.contains(&"config.json".to_owned()));
    assert!(report.written.contains(&LIBRARY_FILE.to_owned()));
    let config = fs::read_to_string(addon.join("config.json")).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&config).unwrap();
    assert_eq!(parsed["settings"]["Lua.runtime.version"], "Lua 5.4");
    assert!(
        !config.contains(&dir.path().display().to_string()),
        "{config}"
    );
    let library = fs::read_to_string(addon.join(LIBRARY_FILE)).unwrap();
    assert!(library.contains("NotifyMessage"), "{library}");
    // Moved elsewhere, it is the same addon: a second run there changes nothing.
    let moved = dir.path().join("moved");
    fs::rename(&addon, &moved).unwrap();
    let again = write_luals_addon(&table, &moved).unwrap();
    assert!(!again.changed_anything(), "{again:?}");
}

#[cfg(unix)]
#[test]
fn an_addon_folder_that_is_a_link_is_refused_and_nothing_is_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere");
    fs::create_dir(&target).unwrap();
    let link = dir.path().join("addon");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let table = gantry_test_support::signature_table::sample_table();
    let error = write_luals_addon(&table, &link).unwrap_err();
    assert!(error.to_string().contains("is a symbolic link"), "{error}");
    assert!(error.to_string().contains("addon"), "{error}");
    assert_eq!(fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn an_addon_folder_that_is_a_file_is_refused_and_the_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("addon");
    fs::write(&file, "mine").unwrap();
    let table = gantry_test_support::signature_table::sample_table();
    let error = write_luals_addon(&table, &file).unwrap_err();
    assert!(matches!(error, StubsError::NotAFolder { .. }), "{error}");
    assert!(
        error.to_string().contains("is a file, not a folder"),
        "{error}"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn a_users_own_config_json_in_the_addon_folder_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("config.json"), "{ \"name\": \"mine\" }\n").unwrap();
    let table = gantry_test_support::signature_table::sample_table();
    let error = write_luals_addon(&table, dir.path()).unwrap_err();
    assert!(matches!(error, StubsError::NotOurs { .. }), "{error}");
    assert_eq!(
        fs::read_to_string(dir.path().join("config.json")).unwrap(),
        "{ \"name\": \"mine\" }\n"
    );
    assert!(!dir.path().join(LIBRARY_FILE).exists());
}
