//! The `luarc.json` / `emmyrc.json` written beside the stubs name the stubs
//! relative to the mod folder, so a copy of one in the mod folder works
//! wherever the folder is — and EmmyLua resolves it there.

use std::fs;

use gantry_test_support::signature_table::sample_table;

#[test]
fn configs_written_in_a_mod_folder_name_the_stubs_relative_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(".gantry/stubs");
    gantry_stubs::write_stubs_in(&sample_table(), dir.path(), &out).unwrap();
    let luarc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("luarc.json")).unwrap()).unwrap();
    assert_eq!(luarc["workspace.library"][0], ".gantry/stubs/lua");
    let emmyrc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("emmyrc.json")).unwrap()).unwrap();
    assert_eq!(emmyrc["workspace"]["library"][0], ".gantry/stubs/lua");
}

#[test]
fn a_copied_config_makes_emmylua_see_the_stubs_from_a_moved_mod_folder() {
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("written");
    gantry_stubs::write_stubs_in(&sample_table(), &written, &written.join(".gantry/stubs"))
        .unwrap();
    // The whole mod folder moves (a checkout elsewhere): the config still holds.
    let moved = dir.path().join("moved");
    fs::rename(&written, &moved).unwrap();
    let config = moved.join(".emmyrc.json");
    fs::copy(moved.join(".gantry/stubs/emmyrc.json"), &config).unwrap();
    fs::write(
        moved.join("bad.lua"),
        "NotifyMessage(\"Player.Hurt\", \"x\", self)\n",
    )
    .unwrap();
    let found = gantry_test_support::emmylua::check(&moved, &config);
    let bad = found.get("bad.lua").cloned().unwrap_or_default();
    assert!(
        bad.iter().any(|d| d.code == "param-type-mismatch"),
        "the stubs type the call: {found:?}"
    );
}

#[test]
fn stubs_written_outside_the_mod_folder_are_named_absolutely() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("elsewhere");
    let mod_dir = dir.path().join("mod");
    fs::create_dir_all(&mod_dir).unwrap();
    gantry_stubs::write_stubs_in(&sample_table(), &mod_dir, &out).unwrap();
    let luarc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("luarc.json")).unwrap()).unwrap();
    let library = luarc["workspace.library"][0].as_str().unwrap();
    assert!(std::path::Path::new(library).is_absolute(), "{library}");
    assert!(library.ends_with("/elsewhere/lua"), "{library}");
}
