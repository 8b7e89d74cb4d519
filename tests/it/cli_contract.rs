//! `gantry run` holds a mod to its contract: the `mod.toml` it declares
//! (every finding of a malformed one, nothing run; a send contradicting a
//! declared key refused at its line), the host's own `Game.Tick`, the
//! names a listener gives parameters, and the table a run writes (keys
//! used one way only said with did-you-mean; `--locked` changes nothing).

use std::path::Path;
use std::process::Output;

use gantry_host::{Origin, SignatureTable};

use crate::support::{gantry, stderr as err, stdout as out, write};

fn run(dir: &Path, extra: &[&str]) -> Output {
    gantry()
        .arg("run")
        .arg(dir)
        .args(extra)
        .output()
        .expect("gantry runs")
}

fn table(dir: &Path) -> SignatureTable {
    SignatureTable::load(&dir.join(".gantry/signatures.json")).unwrap()
}

/// The parameter names the table recorded for `key`.
fn param_names(dir: &Path, key: &str) -> Vec<String> {
    let table = table(dir);
    let entry = table
        .get(key)
        .unwrap_or_else(|| panic!("{key} is recorded"));
    entry.params.iter().map(|p| p.name.clone()).collect()
}

const MANIFEST: &str = r#"[mod]
name = "questlog"

[keys."Quest.Start"]
kind = "event"
params = ["id: string", "reward: int"]
doc = "A quest begins."
"#;

#[test]
fn a_malformed_manifest_prints_every_error_at_its_line_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "mod.toml",
        r#"[mod]
name = "questlog"

[keys."Quest.Start"]
kind = "evnt"
params = ["id: strng"]
"#,
    );
    write(dir.path(), "a.lua", "print('ran')");
    let o = run(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert_eq!(out(&o), "", "nothing ran");
    let e = err(&o);
    assert!(e.contains("mod.toml:5:"), "the kind's line: {e}");
    assert!(e.contains("evnt"), "{e}");
    assert!(e.contains("mod.toml:6:"), "the params' line: {e}");
    assert!(e.contains("did you mean `string`?"), "{e}");
    assert!(
        !dir.path().join(".gantry/signatures.json").exists(),
        "no table written"
    );
}

#[test]
fn a_send_contradicting_a_declared_key_is_refused_at_the_scripts_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "mod.toml", MANIFEST);
    write(
        dir.path(),
        "a.lua",
        "ListenMessage(\"Quest.Start\", nil, function(id, reward) print('start', id, reward) end)\n\
         NotifyMessage(\"Quest.Start\", \"q2\", 5)\n\
         NotifyMessage(\"Quest.Start\", \"q1\", \"lots\")\n\
         print('never')\n",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(
        out(&o),
        "start\tq2\t5\n",
        "the right send is heard, the wrong one aborts the script"
    );
    let e = err(&o);
    assert!(
        e.contains("a.lua:3: `Quest.Start` argument 2: expected int, got string"),
        "{e}"
    );
    let t = table(dir.path());
    let entry = t.get("Quest.Start").unwrap();
    assert_eq!(entry.origin, Origin::Declared);
    assert_eq!(entry.doc, "A quest begins.");
}

#[test]
fn the_manifest_wins_over_what_the_table_file_observed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    write(
        dir.path(),
        ".gantry/signatures.json",
        r#"{ "version": 1, "keys": { "Quest.Start": { "kind": "event", "origin": "observed",
            "params": [ { "name": "arg1", "type": "int" } ] } } }"#,
    );
    write(dir.path(), "mod.toml", MANIFEST);
    write(
        dir.path(),
        "a.rhai",
        "NotifyMessage(\"Quest.Start\", \"q1\", 5);\nprint(\"sent\");",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(param_names(dir.path(), "Quest.Start"), ["id", "reward"]);
}

#[test]
fn game_tick_is_declared_with_a_doc_and_no_made_up_site() {
    let dir = tempfile::tempdir().unwrap();
    // A table of an older gantry, with the tick sent from a file that
    // never existed.
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    write(
        dir.path(),
        ".gantry/signatures.json",
        r#"{ "version": 1, "keys": { "Game.Tick": { "kind": "event", "origin": "declared",
            "params": [ { "name": "n", "type": "int" }, { "name": "dt", "type": "float" } ],
            "sites": [ { "file": "(gantry run)", "line": 0, "language": "rust", "role": "send" } ] } } }"#,
    );
    write(
        dir.path(),
        "a.lua",
        "ListenMessage(\"Game.Tick\", nil, function(n, dt) end)",
    );
    let o = run(dir.path(), &["--ticks", "1"]);
    assert!(o.status.success(), "{}", err(&o));
    let t = table(dir.path());
    let tick = t.get("Game.Tick").unwrap();
    assert!(tick.doc.contains("once per tick"), "{tick:?}");
    assert_eq!(param_names(dir.path(), "Game.Tick"), ["n", "dt"]);
    let files: Vec<&str> = tick.sites.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(files, ["a.lua"], "only the mod's own listen");
}

#[test]
fn a_lua_listener_registered_before_the_first_send_names_its_parameters() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage(\"Quest.Reward\", nil, function(id, gold) end)\n\
         ListenMessage(\"Game.Tick\", nil, function(n) NotifyMessage(\"Quest.Reward\", \"q1\", 10, true) end)\n",
    );
    let o = run(dir.path(), &["--ticks", "1"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        param_names(dir.path(), "Quest.Reward"),
        ["id", "gold", "arg3"],
        "arg3: nothing names it"
    );
}

#[test]
fn a_rhai_closure_names_the_parameters_of_a_key_it_listens_to() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.rhai",
        "NotifyMessage(\"Shop.Buy\", \"axe\", 3);\n\
         ListenMessage(\"Shop.Buy\", (), |item, price| { });\n",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(param_names(dir.path(), "Shop.Buy"), ["item", "price"]);
}

#[test]
fn a_run_says_which_keys_it_added_are_listened_to_but_never_sent_with_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage(\"Quest.Don\", nil, function(id) print('done', id) end)\n\
         ListenMessage(\"Game.Tick\", nil, function(n) end)\n",
    );
    write(
        dir.path(),
        "b.lua",
        "NotifyMessage(\"Quest.Done\", \"q1\")\n",
    );
    let o = run(dir.path(), &["--ticks", "1"]);
    assert!(o.status.success(), "a warning, not an error: {}", err(&o));
    let e = err(&o);
    assert!(
        e.contains(
            "warning: Quest.Don is listened to (a.lua:1) but sent nowhere in the mod — did you mean Quest.Done?"
        ),
        "{e}"
    );
    assert!(
        e.contains("warning: Quest.Done is sent (b.lua:1) but listened to nowhere in the mod"),
        "{e}"
    );
    assert!(!e.contains("Game.Tick"), "the host sends the tick: {e}");
}

#[test]
fn keys_used_both_ways_or_already_in_the_table_are_not_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage(\"Player\", nil, function() end, { match = \"partial\" })\n\
         ListenMessage(\"Shop.Open\", nil, function() end)\n\
         NotifyMessage(\"Player.Hurt\", 1)\n\
         NotifyMessage(\"Shop.Open\")\n",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(!err(&o).contains("warning"), "{}", err(&o));
    // A key only listened to, known from an earlier run, is not news.
    write(
        dir.path(),
        "b.lua",
        "ListenMessage(\"Late.Key\", nil, function() end)\n",
    );
    let first = run(dir.path(), &["--ticks", "0"]);
    assert!(err(&first).contains("Late.Key"), "{}", err(&first));
    let again = run(dir.path(), &["--ticks", "0"]);
    assert!(!err(&again).contains("Late.Key"), "{}", err(&again));
}

#[test]
fn a_locked_run_writes_no_table_and_fails_saying_what_it_would_add() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "NotifyMessage(\"Shop.Open\", 1)\nprint('ran')\n",
    );
    let first = run(dir.path(), &["--ticks", "0"]);
    assert!(first.status.success(), "{}", err(&first));
    let locked = run(dir.path(), &["--ticks", "0", "--locked"]);
    assert!(
        locked.status.success(),
        "the table is up to date: {}",
        err(&locked)
    );
    let saved = std::fs::read(dir.path().join(".gantry/signatures.json")).unwrap();
    write(
        dir.path(),
        "b.lua",
        "NotifyMessage(\"Shop.Close\", \"now\")\n",
    );
    let o = run(dir.path(), &["--ticks", "0", "--locked"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(out(&o), "ran\n", "the mod still ran");
    let e = err(&o);
    assert!(e.contains("--locked"), "{e}");
    assert!(e.contains("add key Shop.Close (arg1: string)"), "{e}");
    assert_eq!(
        std::fs::read(dir.path().join(".gantry/signatures.json")).unwrap(),
        saved,
        "the file is untouched"
    );
}
