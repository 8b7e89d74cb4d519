//! End-to-end: `gantry run DIR` with Lua mods.

use std::path::Path;
use std::process::{Command, Output};

mod support;

use support::{copy_dir, stderr, stdout};

fn gantry(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gantry"))
        .args(args)
        .env("GANTRY_LOG", "off")
        .output()
        .expect("gantry runs")
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn run_loads_scripts_in_file_name_order_then_ticks_with_n_and_dt() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "b.lua",
        "print('b loaded')\nListenMessage('Game.Tick', nil, function(n, dt) print('tick', n, math.type(n), math.type(dt), dt > 0) end)",
    );
    write(dir.path(), "a.lua", "print('a loaded', self ~= nil)");
    write(dir.path(), "notes.txt", "not a script");
    let out = gantry(&["run", dir.path().to_str().unwrap(), "--ticks", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "a loaded\ttrue\nb loaded\ntick\t1\tinteger\tfloat\ttrue\ntick\t2\tinteger\tfloat\ttrue\n"
    );
}

#[test]
fn run_scripts_share_one_world_through_their_objects() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "1.lua",
        "ListenWorldMessage(self:World(), 'Hello', nil, function(who) print('hello from', who == self) end)",
    );
    write(
        dir.path(),
        "2.lua",
        "NotifyObjectMessage(self, 'Hello', self)",
    );
    let out = gantry(&["run", dir.path().to_str().unwrap(), "--no-table"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello from\tfalse\n");
}

#[test]
fn run_reports_script_errors_with_file_and_line_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bad.lua",
        "local x = 1\nerror('top level broke')\n",
    );
    write(
        dir.path(),
        "handler.lua",
        "ListenMessage('Game.Tick', nil, function()\n  local t\n  return t.x\nend)\nListenMessage('Game.Tick', nil, function(n) print('still ticking', n) end)\n",
    );
    let out = gantry(&["run", dir.path().to_str().unwrap(), "--no-table"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("bad.lua:2:"), "{err}");
    assert!(err.contains("handler.lua:3:"), "{err}");
    assert_eq!(stdout(&out), "still ticking\t1\n");
}

#[test]
fn run_saves_the_signature_table_and_loads_it_next_time() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('Player.Hurt', 5, 0.5)");
    let out = gantry(&["run", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = dir.path().join(".gantry/signatures.json");
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(text.contains("Player.Hurt"), "{text}");
    assert!(text.contains("a.lua"), "{text}");
    // Next run: the recorded types hold; a float where an int was recorded
    // is a mismatch reported with its line.
    write(
        dir.path(),
        "a.lua",
        "\nNotifyMessage('Player.Hurt', 5.5, 0.5)",
    );
    let out = gantry(&["run", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("a.lua:2"), "{}", stderr(&out));
}

#[test]
fn run_with_no_table_writes_nothing_and_table_flag_picks_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('K.A', 1)");
    let out = gantry(&["run", dir.path().to_str().unwrap(), "--no-table"]);
    assert!(out.status.success());
    assert!(!dir.path().join(".gantry").exists());
    let custom = dir.path().join("custom.json");
    let out = gantry(&[
        "run",
        dir.path().to_str().unwrap(),
        "--table",
        custom.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&custom).unwrap().contains("K.A"));
}

#[test]
fn run_refuses_a_corrupt_table_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('K.A', 1)");
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    let table = dir.path().join(".gantry/signatures.json");
    std::fs::write(&table, "{ not json").unwrap();
    let out = gantry(&["run", dir.path().to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("signatures.json"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&table).unwrap(), "{ not json");
}

#[test]
fn run_the_arena_example_mod() {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/arena");
    copy_dir(&example, dir.path());
    let out = gantry(&["run", dir.path().to_str().unwrap(), "--ticks", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let readme = std::fs::read_to_string(example.join("README.md")).unwrap();
    let pinned = readme
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the arena README shows its transcript");
    assert_eq!(
        stdout(&out),
        pinned,
        "the transcript the arena README shows"
    );
    assert_eq!(
        stdout(&out),
        "[ui] slot 1: sword x1\n\
         a goblin lurks in the arena\n\
         ann steps into the arena\n\
         -- tick 1 --\n\
         [ui] slot 2: potion x1\n\
         ann buys a potion for 4 gold (6 left)\n\
         -- tick 2 --\n\
         the goblin swings (5)\n\
         [armour] blocks 2 of 5\n\
         ann takes 3 (17 hp)\n\
         first blood!\n\
         -- tick 3 --\n\
         the goblin swings (6)\n\
         [armour] blocks 2 of 6\n\
         ann takes 4 (13 hp)\n\
         -- tick 4 --\n\
         the goblin swings (7)\n\
         [shrine] the shrine's light turns the blow aside\n\
         the goblin curses\n\
         -- tick 5 --\n\
         the goblin swings (8)\n\
         [armour] blocks 2 of 8\n\
         ann takes 6 (7 hp)\n\
         [ui] slot 2: (empty)\n\
         ann drinks a potion (15 hp)\n"
    );
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    for key in [
        "Inv.Items",
        "Inv.Add",
        "Inv.Use",
        "Shop.Buy",
        "Combat.Damage",
        "Boot.Done",
        "Player.Hurt",
        "Game.Tick",
    ] {
        assert!(table.contains(key), "{key} missing from {table}");
    }
}
