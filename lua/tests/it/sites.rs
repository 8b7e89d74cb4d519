//! The table's call sites stay true across runs: a run that loads a script
//! again replaces that file's sites with the ones it records now, so
//! editing one line changes that line's sites only, and a reload in the
//! same session starts the file over.

use std::collections::BTreeSet;
use std::path::Path;

use gantry_host::{DEFAULT_TABLE_PATH, Hub, Language, Role, Site, TableFile};
use gantry_lua::runtime::{LuaOptions, LuaRuntime};

/// One run of a game: reads the table of `dir`, loads the scripts, saves.
fn run(dir: &Path, scripts: &[(&str, &str)]) {
    let mut file = TableFile::open_in(dir, Path::new(DEFAULT_TABLE_PATH)).unwrap();
    let hub = Hub::with_table(file.table().clone());
    let world = hub.create_world();
    let rt = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
    for (name, source) in scripts {
        let object = hub.spawn(world).unwrap();
        rt.load_script(name, source, object).unwrap();
    }
    let saved = file.save(&hub.table_snapshot()).unwrap();
    assert!(saved.conflicts.is_empty(), "{:?}", saved.conflicts);
}

/// Every `(key, site)` of the table file of `dir`.
fn sites(dir: &Path) -> BTreeSet<(String, Site)> {
    let file = TableFile::open_in(dir, Path::new(DEFAULT_TABLE_PATH)).unwrap();
    file.table()
        .entries()
        .flat_map(|(key, entry)| entry.sites.iter().map(move |s| (key.to_owned(), s.clone())))
        .collect()
}

fn send(key: &str, line: u32) -> (String, Site) {
    (
        key.to_owned(),
        Site::new("goblin.lua", line, Language::Lua, Role::Send),
    )
}

const GOBLIN: &str = r#"-- a goblin
NotifyMessage("Goblin.Spawned", 1)
NotifyMessage("Goblin.Roar", "grr")
NotifyMessage("Goblin.Spawned", 2)
"#;

#[test]
fn editing_one_line_of_a_script_changes_only_that_lines_sites_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), &[("goblin.lua", GOBLIN)]);
    let before = sites(dir.path());
    assert!(before.contains(&send("Goblin.Spawned", 2)), "{before:?}");

    // Line 2 now roars instead.
    let edited = GOBLIN.replace(
        r#"NotifyMessage("Goblin.Spawned", 1)"#,
        r#"NotifyMessage("Goblin.Roar", "rrr")"#,
    );
    run(dir.path(), &[("goblin.lua", &edited)]);
    let after = sites(dir.path());
    let gone: Vec<_> = before.difference(&after).cloned().collect();
    let new: Vec<_> = after.difference(&before).cloned().collect();
    assert_eq!(gone, [send("Goblin.Spawned", 2)]);
    assert_eq!(new, [send("Goblin.Roar", 2)]);
}

#[test]
fn a_line_inserted_above_moves_the_sites_instead_of_adding_them() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), &[("goblin.lua", GOBLIN)]);
    run(dir.path(), &[("goblin.lua", &format!("\n{GOBLIN}"))]);
    let lines: Vec<u32> = sites(dir.path()).iter().map(|(_, s)| s.line).collect();
    assert_eq!(lines, [4, 3, 5], "Roar at 4, Spawned at 3 and 5");
}

#[test]
fn the_sites_of_another_script_survive_a_run_that_did_not_load_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let other = r#"NotifyMessage("Orc.Spawned", 1)"#;
    run(dir.path(), &[("goblin.lua", GOBLIN), ("orc.lua", other)]);
    run(dir.path(), &[("goblin.lua", GOBLIN)]);
    let orc = Site::new("orc.lua", 1, Language::Lua, Role::Send);
    assert!(sites(dir.path()).contains(&("Orc.Spawned".to_owned(), orc)));
}

#[test]
fn the_same_script_on_two_objects_keeps_the_sites_the_first_recorded() {
    let hub = Hub::new();
    let world = hub.create_world();
    let rt = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
    // A generic call records its line when it runs, not at load.
    let script = r#"
        local key = "Goblin." .. "Spawned"
        ListenMessage("Goblin.Poke", nil, function() NotifyMessage(key, 1) end)
    "#;
    let object = hub.spawn(world).unwrap();
    rt.load_script("goblin.lua", script, object).unwrap();
    hub.send_str("Goblin.Poke", gantry_host::Source::Global, ())
        .unwrap();
    let object = hub.spawn(world).unwrap();
    rt.load_script("goblin.lua", script, object).unwrap();
    let table = hub.table();
    let spawned = table.get("Goblin.Spawned").unwrap();
    let lines: Vec<u32> = spawned.sites.iter().map(|s| s.line).collect();
    assert_eq!(lines, [3]);
    let poke = table.get("Goblin.Poke").unwrap();
    let lua: Vec<u32> = poke
        .sites
        .iter()
        .filter(|s| s.language == Language::Lua)
        .map(|s| s.line)
        .collect();
    assert_eq!(lua, [3]);
}

#[test]
fn a_script_reloaded_with_new_text_in_the_same_session_keeps_only_its_new_sites() {
    let hub = Hub::new();
    let world = hub.create_world();
    let rt = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
    let object = hub.spawn(world).unwrap();
    rt.load_script("goblin.lua", GOBLIN, object).unwrap();
    let object = hub.spawn(world).unwrap();
    rt.load_script("goblin.lua", &format!("\n\n{GOBLIN}"), object)
        .unwrap();
    let lines: BTreeSet<u32> = hub
        .table()
        .entries()
        .flat_map(|(_, e)| e.sites.iter().map(|s| s.line).collect::<Vec<_>>())
        .collect();
    assert_eq!(lines, BTreeSet::from([4, 5, 6]));
}
