//! `gantry run --watch`: a new or edited script is (re)loaded while the game
//! runs in place on the same object (what the old version stored there
//! survives, and stored state replays to it), a failed reload keeps the old
//! version running untouched,
//! ticks carry `dt`, a hand edit of the table survives, an edited
//! `mod.toml` is declared again, and Ctrl-C exits 0 saving the table.

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use gantry_host::Hub;
use gantry_lua::runtime::{LuaOptions, LuaRuntime};

use crate::support::{Watching, gantry, stderr as err, stdout as out, write};

/// Waits for a child for at most `limit`; kills it if still running.
fn wait_or_kill(mut child: std::process::Child, limit: Duration) -> Option<Output> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn watch_loads_a_new_file_and_ctrl_c_exits_0_saving_the_table() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "print('a loaded')");
    let w = Watching::start(dir.path());
    w.wait_for("a loaded");
    write(
        dir.path(),
        "b.lua",
        "print('b loaded')\nNotifyMessage('New.Key', 1)",
    );
    w.wait_for("b loaded");
    let (status, stderr) = w.interrupt();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(table.contains("New.Key"), "{table}");
}

/// Removing a script's file while watching destroys the script's object:
/// what it stored on its own object goes; what it stored on its world is
/// the world's (other scripts may rely on it) and stays, as a store on any
/// other source does. (A reload keeps the object; see below.)
#[test]
fn destroying_a_scripts_object_drops_what_it_stored_there_and_keeps_the_worlds() {
    let hub = Hub::new();
    let rt = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    rt.load_script(
        "a.lua",
        "StoreObjectMessage(self, 'Mine.Value', 1)\nStoreObjectMessage(self:World(), 'World.Value', 2)\n",
        object,
    )
    .unwrap();
    let mine = hub.key("Mine.Value").unwrap();
    let shared = hub.key("World.Value").unwrap();
    assert!(
        hub.stored(mine, gantry_host::Source::Object(object))
            .is_some()
    );
    hub.destroy(object).unwrap();
    assert!(
        hub.stored(mine, gantry_host::Source::Object(object))
            .is_none()
    );
    assert!(
        hub.stored(shared, gantry_host::Source::World(world))
            .is_some()
    );
}

/// `--watch` keeps "ticking at a fixed rate, `--tick-ms`"; each
/// tick is `Game.Tick(n, dt)` with dt "a float" — the tick's length in
/// seconds is what a game loop hands its systems. (Ambiguous: the texts do
/// not say dt follows `--tick-ms`; Gantry always sends 1/60.)
#[test]
fn watch_ticks_carry_dt_of_the_tick_length() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage('Game.Tick', nil, function(n, dt) print(n, string.format('%.3f', dt)) end)",
    );
    let child = gantry()
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--no-table",
            "--watch",
            "--tick-ms",
            "50",
            "--ticks",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_or_kill(child, Duration::from_secs(10)).expect("ends after 2 ticks");
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "1\t0.050\n2\t0.050\n");
}

#[test]
fn watch_reloads_an_edited_script_and_stored_state_replays_to_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "1_state.lua",
        r#"StoreObjectMessage(self:World(), "Arena.Size", 20)"#,
    );
    let v1 = r#"
ListenWorldMessage(self:World(), "Arena.Size", nil, function(n) print("v1 size " .. n) end)
"#;
    write(dir.path(), "2_ui.lua", v1);
    let run = Watching::start(dir.path());
    run.wait_for("v1 size 20");
    // An editor saving in steps: first a half-written file that does not compile...
    write(
        dir.path(),
        "2_ui.lua",
        "ListenWorldMessage(self:World(), \"Arena.Size\", nil, function(n)",
    );
    std::thread::sleep(Duration::from_millis(150));
    // ...then the whole new version.
    write(
        dir.path(),
        "2_ui.lua",
        r#"
ListenWorldMessage(self:World(), "Arena.Size", nil, function(n) print("v2 size " .. n) end)
"#,
    );
    run.wait_for("[reloading 2_ui.lua]");
    run.wait_for("v2 size 20");
    let (status, _stderr) = run.interrupt();
    assert!(
        status.code().is_some(),
        "exited on its own terms: {status:?}"
    );
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(
        table.contains("Arena.Size"),
        "Ctrl-C saved the table: {table}"
    );
}

#[test]
fn watch_keeps_a_failed_reloads_old_version_unloads_deleted_and_follows_renamed() {
    let dir = tempfile::tempdir().unwrap();
    let alive = "local said = false\nListenMessage('Game.Tick', nil, function(n)\n  if not said then print('a alive'); said = true end\n  if n % 10 == 0 then print('a ticks') end\nend)\n";
    write(dir.path(), "a.lua", alive);
    write(
        dir.path(),
        "b.lua",
        r#"
ListenMessage("Game.Tick", nil, function(n)
  if n % 10 == 0 then print("b tick") end
end)
"#,
    );
    let run = Watching::start(dir.path());
    run.wait_for("a alive");
    run.wait_for("b tick");
    // A top level that fails: reported, and the old a.lua goes on running
    // as it was, in place (it does not start again: no second "a alive").
    write(dir.path(), "a.lua", "error('broken on purpose')");
    run.wait_for("[reloading a.lua]");
    run.wait_for_error("a.lua:1: broken on purpose");
    let seen = run.wait_for("a ticks");
    assert!(!seen.contains(&"a alive".to_owned()), "{seen:?}");
    std::fs::remove_file(dir.path().join("b.lua")).unwrap();
    run.wait_for("[unloaded b.lua]");
    // A rename is the old name gone and a new script: unloaded, then loaded
    // under its new name (a fresh object, so it says so again). The file on
    // disk is still the broken one: mend it first.
    write(dir.path(), "a.lua", alive);
    run.wait_for("[reloading a.lua]");
    run.wait_for("a alive");
    std::fs::rename(dir.path().join("a.lua"), dir.path().join("c.lua")).unwrap();
    run.wait_for("[unloaded a.lua]");
    run.wait_for("a alive");
    let (status, stderr) = run.interrupt();
    assert!(status.code().is_some(), "{stderr}");
}

#[test]
fn watch_reloads_a_script_in_place_and_what_it_stored_on_its_object_survives() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = r#"
ListenMessage("Game.Tick", nil, function(n)
  if n == 1 then StoreObjectMessage(self, "Player.Gold", 40) end
  if n % 10 == 0 then print("v1 running") end
end)
"#;
    write(dir.path(), "player.lua", v1);
    let run = Watching::start(dir.path());
    run.wait_for("v1 running");
    // The new version hears what the old one stored on the same object.
    write(
        dir.path(),
        "player.lua",
        r#"
ListenObjectMessage(self, "Player.Gold", nil, function(gold) print("v2 sees gold " .. gold) end)
ListenMessage("Game.Tick", nil, function(n)
  if n % 10 == 0 then print("v2 running") end
end)
"#,
    );
    run.wait_for("[reloading player.lua]");
    run.wait_for("v2 sees gold 40");
    // ...and the old version's listener went with it.
    let seen = run.wait_for("v2 running");
    assert!(!seen.iter().any(|l| l == "v1 running"), "{seen:?}");
    let (status, stderr) = run.interrupt();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn a_hand_edit_of_the_table_made_during_a_watch_run_survives_its_exit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('Mod.Loaded', 1)");
    let first = gantry()
        .args(["run", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(first.status.success());
    let table = dir.path().join(".gantry/signatures.json");
    write(
        dir.path(),
        "b.lua",
        "ListenMessage('Game.Tick', nil, function(n) if n == 2 then print('b ticking') end end)\n\
         NotifyMessage('Mod.Ready', true)",
    );
    let run = Watching::start(dir.path());
    run.wait_for("b ticking");
    // The user documents a key by hand while the game runs.
    let text = std::fs::read_to_string(&table).unwrap();
    let edited = text.replacen(
        "\"keys\": {",
        "\"keys\": {\n    \"Hand.Made\": { \"kind\": \"event\", \"origin\": \"declared\", \"doc\": \"written by hand\" },",
        1,
    );
    assert_ne!(text, edited);
    std::fs::write(&table, edited).unwrap();
    let (_, stderr) = run.interrupt();
    let saved = std::fs::read_to_string(&table).unwrap();
    assert!(saved.contains("written by hand"), "{stderr}\n{saved}");
    assert!(saved.contains("Mod.Ready"), "the run's key too:\n{saved}");
    assert!(saved.contains("Mod.Loaded"), "{saved}");
}

/// A `mod.toml` edited while watching is read again: its declarations hold
/// the scripts from then on, and a broken version is said at its line
/// while the run goes on with the declarations it had.
#[test]
fn watch_reloads_the_manifest_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = |ty: &str| {
        format!(
            "[mod]\nname = \"quest\"\n\n[keys.\"Quest.Start\"]\nkind = \"event\"\nparams = [\"id: {ty}\"]\n"
        )
    };
    write(dir.path(), "mod.toml", &manifest("string"));
    write(
        dir.path(),
        "a.lua",
        "print('string heard', (pcall(NotifyMessage, 'Quest.Start', 'wolves')))",
    );
    let w = Watching::start_with(dir.path(), &["--no-table"]);
    w.wait_for("string heard\ttrue");

    write(dir.path(), "mod.toml", &manifest("int"));
    w.wait_for("[reloading mod.toml]");
    write(
        dir.path(),
        "b.lua",
        "print('string heard', (pcall(NotifyMessage, 'Quest.Start', 'wolves')))",
    );
    w.wait_for("string heard\tfalse");

    write(
        dir.path(),
        "mod.toml",
        "[mod]\nname = \"quest\"\n\n[keys.\"Quest.Start\"]\nkind = \"evnt\"\n",
    );
    w.wait_for_error("mod.toml:5:");
    w.wait_for_error("the previous declarations stay");
    write(
        dir.path(),
        "c.lua",
        "print('int heard', (pcall(NotifyMessage, 'Quest.Start', 7)))",
    );
    w.wait_for("int heard\ttrue");
    let (status, stderr) = w.interrupt();
    assert_eq!(status.code(), Some(1), "b.lua's refused send: {stderr}");
    assert!(!stderr.contains("c.lua"), "{stderr}");
}
