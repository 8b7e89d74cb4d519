//! `gantry run GAME` on a game folder of many mods (`GAME/mods/*/mod.toml`,
//! an optional `GAME/game.toml`): dependencies load first, a mod that
//! cannot load is said with its chain while the others run, each mod's
//! errors carry its name, `game.toml` disables mods, and what a mod's
//! persisted keys store survives a restart.

use std::path::Path;
use std::process::Output;

use crate::support::{Watching, gantry, stderr, stdout};

/// Writes mod `name` into `game/mods/<name>/`: its manifest's `[mod]`
/// lines (`extra`, after the name) and its scripts.
fn add_mod(game: &Path, name: &str, extra: &str, scripts: &[(&str, &str)]) {
    let dir = game.join("mods").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mod.toml"),
        format!("[mod]\nname = \"{name}\"\n{extra}\n"),
    )
    .unwrap();
    for (file, source) in scripts {
        std::fs::write(dir.join(file), source).unwrap();
    }
}

/// A game whose every mod prints its name as it loads.
fn game_of(mods: &[(&str, &str)]) -> tempfile::TempDir {
    let game = tempfile::tempdir().unwrap();
    for (name, extra) in mods {
        add_mod(
            game.path(),
            name,
            extra,
            &[("main.lua", &format!("print(\"loaded {name}\")\n"))],
        );
    }
    game
}

fn run(game: &Path, flags: &[&str]) -> Output {
    gantry()
        .arg("run")
        .arg(game)
        .args(["--no-table"])
        .args(flags)
        .output()
        .unwrap()
}

fn loaded(output: &Output) -> Vec<String> {
    stdout(output)
        .lines()
        .filter_map(|l| l.strip_prefix("loaded ").map(str::to_owned))
        .collect()
}

#[test]
fn mods_load_after_their_dependencies_and_ties_go_by_name() {
    let game = game_of(&[
        ("alpha", "depends = [\"quest\"]"),
        ("core", "version = \"1.2.0\""),
        ("quest", "depends = [\"core >= 1.0\"]\noptional = [\"ui\"]"),
        ("ui", "optional = [\"nowhere\"]"),
        ("zeta", ""),
    ]);
    let output = run(game.path(), &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(loaded(&output), ["core", "ui", "quest", "alpha", "zeta"]);
}

#[test]
fn a_missing_dependency_is_named_with_its_chain_and_the_other_mods_run() {
    let game = game_of(&[
        ("core", ""),
        ("quest", "depends = [\"core\", \"economy\"]"),
        ("ui", "depends = [\"quest\"]"),
    ]);
    let output = run(game.path(), &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(loaded(&output), ["core"]);
    assert!(
        err.contains(
            "error: [quest] mods/quest/mod.toml:3:20: quest needs economy, which is not in the game; quest is not loaded"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "ui needs quest, which is not loaded (ui → quest → economy); ui is not loaded"
        ),
        "{err}"
    );
}

#[test]
fn a_dependency_of_the_wrong_version_is_refused_naming_both_versions() {
    let game = game_of(&[
        ("core", "version = \"0.1.0\""),
        ("quest", "depends = [\"core >= 0.2\"]"),
    ]);
    let output = run(game.path(), &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(loaded(&output), ["core"]);
    assert!(
        err.contains("quest needs core >=0.2, but core is 0.1.0; quest is not loaded"),
        "{err}"
    );
}

#[test]
fn a_dependency_cycle_is_named_and_the_mods_outside_it_run() {
    let game = game_of(&[
        ("a", "depends = [\"b\"]"),
        ("b", "depends = [\"c\"]"),
        ("c", "depends = [\"a\"]"),
        ("free", ""),
    ]);
    let output = run(game.path(), &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(loaded(&output), ["free"]);
    assert!(
        err.contains("a is in a dependency cycle: a → b → c → a"),
        "{err}"
    );
    assert!(err.contains("c is in a dependency cycle"), "{err}");
}

#[test]
fn a_mod_disabled_in_game_toml_does_not_load_and_the_run_succeeds() {
    let game = game_of(&[("core", ""), ("ui", "")]);
    std::fs::write(game.path().join("game.toml"), "disabled = [\"ui\"]\n").unwrap();
    let output = run(game.path(), &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(loaded(&output), ["core"]);
    assert!(stderr(&output).contains("ui is disabled in game.toml"));
}

#[test]
fn a_mistyped_field_in_game_toml_stops_the_game_naming_it() {
    let game = game_of(&[("core", "")]);
    std::fs::write(game.path().join("game.toml"), "disable = [\"ui\"]\n").unwrap();
    let output = run(game.path(), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("unknown field `disable`"),
        "{}",
        stderr(&output)
    );
    assert!(loaded(&output).is_empty());
}

#[test]
fn a_script_error_in_a_game_is_prefixed_with_its_mod_and_names_its_file_from_the_game() {
    let game = game_of(&[("core", "")]);
    add_mod(
        game.path(),
        "quest",
        "",
        &[(
            "main.lua",
            "print(\"loaded quest\")\nerror(\"no quests today\")\n",
        )],
    );
    let output = run(game.path(), &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: [quest] mods/quest/main.lua:2: no quests today"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_mod_folder_linked_out_of_the_game_is_refused_and_the_rest_runs() {
    let outside = game_of(&[("evil", "")]);
    let game = game_of(&[("core", "")]);
    std::os::unix::fs::symlink(
        outside.path().join("mods/evil"),
        game.path().join("mods/evil"),
    )
    .unwrap();
    let output = run(game.path(), &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(loaded(&output), ["core"]);
    assert!(
        err.contains("mods/evil: a link out of the game folder"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_named_mod_toml_is_refused_without_blocking() {
    let game = game_of(&[("core", "")]);
    let dir = game.path().join("mods/pipe");
    std::fs::create_dir_all(&dir).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("mod.toml"))
        .status()
        .unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let output = run(game.path(), &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(loaded(&output), ["core"]);
    assert!(err.contains("mods/pipe/mod.toml"), "{err}");
}

#[test]
fn a_depends_list_of_a_hundred_thousand_entries_is_one_clear_error() {
    let game = game_of(&[("core", "")]);
    let list: Vec<String> = (0..100_000).map(|i| format!("\"m{i}\"")).collect();
    add_mod(
        game.path(),
        "huge",
        &format!("depends = [{}]", list.join(", ")),
        &[],
    );
    let started = std::time::Instant::now();
    let output = run(game.path(), &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(loaded(&output), ["core"]);
    assert!(err.contains("more than 256 dependencies"), "{err}");
}

#[test]
fn a_game_folder_of_ten_thousand_mods_is_refused_as_too_many_without_loading_any() {
    let game = tempfile::tempdir().unwrap();
    for i in 0..10_000 {
        std::fs::create_dir_all(game.path().join(format!("mods/m{i}"))).unwrap();
    }
    let started = std::time::Instant::now();
    let output = run(game.path(), &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("a game holds at most 1000 mods"),
        "{}",
        stderr(&output)
    );
}

/// Writes `text` as `<mod>`'s save file in the game at `root`, as a past
/// run (or a broken disk) left it; the save folder.
fn write_save(root: &Path, module: &str, text: &str) -> std::path::PathBuf {
    let saved = root.join(".gantry/saved");
    std::fs::create_dir_all(&saved).unwrap();
    std::fs::write(saved.join(format!("{module}.json")), text).unwrap();
    saved
}

const SAVER: &str =
    "[keys.\"Quest.Progress\"]\nkind = \"store\"\nparams = [\"done: int\"]\npersist = true\n";

/// The quest mod: at the first tick it prints what it finds stored (the
/// saved state is replayed before that tick), then stores one more.
const QUEST: &str = "local world = self:World()\n\
                     local done = 0\n\
                     ListenWorldMessage(world, \"Quest.Progress\", nil, function(n) done = n end)\n\
                     ListenMessage(\"Game.Tick\", nil, function(n)\n\
                       print(\"found\", done)\n\
                       StoreObjectMessage(world, \"Quest.Progress\", done + 1)\n\
                     end)\n";

#[test]
fn what_a_persisted_key_stores_survives_a_restart() {
    let game = tempfile::tempdir().unwrap();
    add_mod(game.path(), "quest", SAVER, &[("main.lua", QUEST)]);
    for want in ["found\t0", "found\t1", "found\t2"] {
        let output = run(game.path(), &["--ticks", "1"]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(stdout(&output).trim(), want, "{}", stderr(&output));
    }
    let saved = std::fs::read_to_string(game.path().join(".gantry/saved/quest.json")).unwrap();
    assert!(saved.contains("\"version\": 2"), "{saved}");
    assert!(
        saved.contains("\"params\": [\n        \"done: int\""),
        "{saved}"
    );
}

#[test]
fn a_corrupt_save_is_kept_aside_under_its_date_and_the_mod_starts_fresh() {
    let game = tempfile::tempdir().unwrap();
    add_mod(game.path(), "quest", SAVER, &[("main.lua", QUEST)]);
    let saved = write_save(game.path(), "quest", "{ this is not json");
    let output = run(game.path(), &["--ticks", "1"]);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert_eq!(stdout(&output).trim(), "found\t0");
    assert!(
        err.contains("warning: [quest] .gantry/saved/quest.json: not a save file"),
        "{err}"
    );
    assert!(err.contains("the mod starts fresh"), "{err}");
    let aside: Vec<String> = std::fs::read_dir(&saved)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("quest.json.") && n.ends_with(".bad"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(
        std::fs::read_to_string(saved.join(&aside[0])).unwrap(),
        "{ this is not json",
        "kept untouched"
    );
    // The fresh run saved anew beside it.
    let again = run(game.path(), &["--ticks", "1"]);
    assert_eq!(stdout(&again).trim(), "found\t1");
}

#[test]
fn a_save_from_a_newer_gantry_is_kept_aside_not_overwritten() {
    let game = tempfile::tempdir().unwrap();
    add_mod(game.path(), "quest", SAVER, &[("main.lua", QUEST)]);
    write_save(game.path(), "quest", "{\"version\": 99, \"keys\": {}}");
    let output = run(game.path(), &["--ticks", "1"]);
    let err = stderr(&output);
    assert!(err.contains("saved by a newer gantry (version 99"), "{err}");
    assert_eq!(stdout(&output).trim(), "found\t0");
}

#[test]
fn a_mod_disabled_in_game_toml_while_watching_is_unloaded_with_its_listeners() {
    let game = tempfile::tempdir().unwrap();
    add_mod(
        game.path(),
        "core",
        "",
        &[(
            "main.lua",
            "ListenMessage(\"Game.Tick\", nil, function(n) if n % 5 == 0 then print(\"core tick\") end end)\n",
        )],
    );
    add_mod(
        game.path(),
        "chatty",
        "",
        &[(
            "main.lua",
            "ListenMessage(\"Game.Tick\", nil, function(n) if n % 5 == 0 then print(\"chatty tick\") end end)\n",
        )],
    );
    let run = Watching::start_with(game.path(), &["--no-table"]);
    run.wait_for("chatty tick");
    crate::support::write(game.path(), "game.toml", "disabled = [\"chatty\"]\n");
    run.wait_for("[unloaded mod chatty]");
    // Its listener went with it: the other mod ticks on alone.
    run.wait_for("core tick");
    let after = run.wait_for("core tick");
    assert!(!after.contains(&"chatty tick".to_owned()), "{after:?}");
    let (status, stderr) = run.interrupt();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn a_saved_message_the_changed_declaration_no_longer_takes_is_dropped_and_said() {
    let game = tempfile::tempdir().unwrap();
    add_mod(game.path(), "quest", SAVER, &[("main.lua", QUEST)]);
    // Saved when Quest.Progress carried a string; it carries an int now.
    write_save(
        game.path(),
        "quest",
        "{\"version\": 1, \"mod\": \"quest\", \"keys\": {\"Quest.Progress\": {\"world\": [\"half\"]}}}",
    );
    let output = run(game.path(), &["--ticks", "1"]);
    let err = stderr(&output);
    assert_eq!(stdout(&output).trim(), "found\t0", "{err}");
    assert!(
        err.contains(
            "Quest.Progress changed since it was saved (now (done: int)); its saved message on world \
             is dropped: `done: int` kept no value, and only an `any`, `nil` or array parameter can \
             start empty; drops done (\"half\": int declared now)"
        ),
        "{err}"
    );
}

#[test]
fn a_mod_whose_folder_is_removed_while_watching_is_unloaded_and_the_rest_ticks_on() {
    let game = tempfile::tempdir().unwrap();
    for name in ["core", "gone"] {
        add_mod(
            game.path(),
            name,
            "",
            &[(
                "main.lua",
                &format!(
                    "ListenMessage(\"Game.Tick\", nil, function(n) if n % 5 == 0 then print(\"{name} tick\") end end)\n"
                ),
            )],
        );
    }
    let run = Watching::start_with(game.path(), &["--no-table"]);
    run.wait_for("gone tick");
    std::fs::remove_dir_all(game.path().join("mods/gone")).unwrap();
    run.wait_for("[unloaded mod gone]");
    run.wait_for("core tick");
    let after = run.wait_for("core tick");
    assert!(!after.contains(&"gone tick".to_owned()), "{after:?}");
    let (status, stderr) = run.interrupt();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn a_script_of_a_games_mod_reloads_while_watching_and_its_state_is_saved_every_few_seconds() {
    let game = tempfile::tempdir().unwrap();
    std::fs::write(game.path().join("game.toml"), "save_every = 1\n").unwrap();
    add_mod(
        game.path(),
        "quest",
        SAVER,
        &[(
            "main.lua",
            "StoreObjectMessage(self:World(), \"Quest.Progress\", 7)\nprint(\"quest v1\")\n",
        )],
    );
    let run = Watching::start_with(game.path(), &["--no-table"]);
    run.wait_for("quest v1");
    crate::support::write(
        &game.path().join("mods/quest"),
        "main.lua",
        "print(\"quest v2\")\n",
    );
    run.wait_for("[reloading mods/quest/main.lua]");
    run.wait_for("quest v2");
    // Saved while the run goes on, not only at its exit.
    let saved = game.path().join(".gantry/saved/quest.json");
    let started = std::time::Instant::now();
    while !saved.exists() && started.elapsed() < std::time::Duration::from_secs(8) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&saved).expect("saved while watching");
    assert!(text.contains("\"world\""), "{text}");
    let (status, stderr) = run.interrupt();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// A mod that sends `Quest.Start` at load, and a listener that says so.
fn sender_game(grants: &str) -> tempfile::TempDir {
    let game = tempfile::tempdir().unwrap();
    add_mod(
        game.path(),
        "ear",
        "",
        &[(
            "main.lua",
            "ListenMessage(\"Quest\", nil, function(id) print(\"heard\", id) end, { match = \"partial\" })\n",
        )],
    );
    add_mod(
        game.path(),
        "quest",
        &format!("depends = [\"ear\"]\n{grants}"),
        &[("main.lua", "NotifyMessage(\"Quest.Start\", \"wolves\")\n")],
    );
    game
}

#[test]
fn game_toml_narrows_a_mods_grants_and_a_call_outside_them_reaches_no_listener() {
    let game = sender_game("\n[grants]\nsend = [\"Quest\"]\n");
    let output = run(game.path(), &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "heard\twolves");
    std::fs::write(
        game.path().join("game.toml"),
        "[grants.quest]\nsend = [\"Ui\"]\n",
    )
    .unwrap();
    let output = run(game.path(), &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(stdout(&output).trim(), "");
    assert!(err.contains("[quest] mods/quest/main.lua:1:"), "{err}");
    assert!(
        err.contains("mod \"quest\" may not send \"Quest.Start\""),
        "{err}"
    );
}

#[test]
fn with_require_grants_a_mod_without_grants_may_use_nothing() {
    let game = sender_game("");
    std::fs::write(game.path().join("game.toml"), "require_grants = true\n").unwrap();
    let output = run(game.path(), &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("mod \"quest\" may not send \"Quest.Start\""),
        "{err}"
    );
}

#[test]
fn a_mod_folder_that_appears_while_watching_loads_when_its_dependency_runs() {
    let game = tempfile::tempdir().unwrap();
    add_mod(
        game.path(),
        "core",
        "version = \"1.0.0\"",
        &[("main.lua", "print(\"core up\")\n")],
    );
    let run = Watching::start_with(game.path(), &["--no-table"]);
    run.wait_for("core up");
    // Written aside, then moved in whole: the folder appears complete.
    let staging = tempfile::tempdir_in(game.path()).unwrap();
    add_mod(
        staging.path(),
        "late",
        "depends = [\"core >= 1\"]",
        &[("main.lua", "print(\"late up\")\n")],
    );
    add_mod(
        staging.path(),
        "orphan",
        "depends = [\"nowhere\"]",
        &[("main.lua", "print(\"orphan up\")\n")],
    );
    std::fs::rename(
        staging.path().join("mods/late"),
        game.path().join("mods/late"),
    )
    .unwrap();
    run.wait_for("[loading mod late]");
    run.wait_for("late up");
    std::fs::rename(
        staging.path().join("mods/orphan"),
        game.path().join("mods/orphan"),
    )
    .unwrap();
    run.wait_for_error("error: [orphan] mods/orphan/mod.toml:3:12: orphan needs nowhere, which is not loaded; orphan is not loaded");
    let (status, _) = run.interrupt();
    assert_eq!(
        status.code(),
        Some(1),
        "a mod that could not load fails the run"
    );
}

#[test]
fn a_saved_message_keeps_the_values_a_shortened_declaration_still_carries() {
    let game = tempfile::tempdir().unwrap();
    add_mod(game.path(), "quest", SAVER, &[("main.lua", QUEST)]);
    // Saved when Quest.Progress also carried who made it; it no longer does.
    write_save(
        game.path(),
        "quest",
        "{\"version\": 1, \"mod\": \"quest\", \"keys\": {\"Quest.Progress\": {\"world\": [4, \"ann\"]}}}",
    );
    let output = run(game.path(), &["--ticks", "1"]);
    let err = stderr(&output);
    assert_eq!(stdout(&output).trim(), "found\t4", "{err}");
    assert!(
        err.contains(
            "Quest.Progress changed since it was saved (now (done: int)); its saved message on world \
             keeps done; drops #2 (\"ann\": no longer a parameter)"
        ),
        "{err}"
    );
}

/// `gantry check GAME`'s lines about grants.
fn check_grant_lines(game: &Path) -> (Output, Vec<String>) {
    let output = gantry()
        .arg("check")
        .arg(game)
        .env("GANTRY_LOG", "off")
        .output()
        .unwrap();
    let lines = stdout(&output)
        .lines()
        .filter(|l| l.contains("not-granted"))
        .map(str::to_owned)
        .collect();
    (output, lines)
}

/// The words of the run's refusal of quest's `Quest.Start`.
fn run_refusal(game: &Path) -> String {
    let err = stderr(&run(game, &[]));
    let at = err
        .find("mod \"quest\" may not send")
        .unwrap_or_else(|| panic!("the run refuses the send: {err}"));
    err[at..].lines().next().unwrap().to_owned()
}

#[test]
fn check_holds_a_games_mod_to_the_grants_game_toml_leaves_it_in_the_runs_words() {
    let game = sender_game("\n[grants]\nsend = [\"Quest\"]\n");
    let (output, lines) = check_grant_lines(game.path());
    assert!(lines.is_empty(), "its own grants allow it: {lines:?}");
    assert!(output.status.success(), "{}", stdout(&output));
    std::fs::write(
        game.path().join("game.toml"),
        "[grants.quest]\nsend = [\"Ui\"]\n",
    )
    .unwrap();
    let (output, lines) = check_grant_lines(game.path());
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let refusal = run_refusal(game.path());
    assert_eq!(
        lines,
        [format!(
            "{}: error not-granted: {refusal}",
            game.path().join("mods/quest/main.lua:1:15").display()
        )]
    );
    // Its own `Quest` narrowed to the game's `Ui`: nothing is left.
    assert!(
        refusal.ends_with("its grants send no key (no `send` grant)"),
        "{refusal}"
    );
}

#[test]
fn check_holds_a_mod_without_grants_to_nothing_when_the_game_requires_grants() {
    let game = sender_game("");
    let (_, lines) = check_grant_lines(game.path());
    assert!(lines.is_empty(), "{lines:?}");
    std::fs::write(game.path().join("game.toml"), "require_grants = true\n").unwrap();
    let (output, lines) = check_grant_lines(game.path());
    assert_eq!(output.status.code(), Some(1));
    let refusal = run_refusal(game.path());
    // The listening mod is held to nothing too.
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with(&format!("error not-granted: {refusal}"))),
        "{lines:?} / {refusal}"
    );
}

#[test]
fn check_names_a_mistake_in_game_toml_grants() {
    let game = sender_game("");
    std::fs::write(game.path().join("game.toml"), "[grants.quest]\nsned = []\n").unwrap();
    let output = gantry()
        .arg("check")
        .arg(game.path())
        .env("GANTRY_LOG", "off")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains(
            "game.toml:1:1: error manifest-error: game.toml: grants.quest: unknown field `sned` \
             (expected one of send, listen, hook, store)"
        ),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_mod_enabled_in_game_toml_while_watching_loads_without_a_restart() {
    let game = tempfile::tempdir().unwrap();
    std::fs::write(game.path().join("game.toml"), "disabled = [\"chatty\"]\n").unwrap();
    for name in ["core", "chatty"] {
        add_mod(
            game.path(),
            name,
            "",
            &[(
                "main.lua",
                &format!(
                    "ListenMessage(\"Game.Tick\", nil, function(n) if n % 5 == 0 then print(\"{name} tick\") end end)\n"
                ),
            )],
        );
    }
    let run = Watching::start_with(game.path(), &["--no-table"]);
    let before = run.wait_for("core tick");
    assert!(!before.contains(&"chatty tick".to_owned()), "{before:?}");
    crate::support::write(game.path(), "game.toml", "disabled = []\n");
    run.wait_for("[loading mod chatty]");
    run.wait_for("chatty tick");
    // And disabled again, it goes again.
    crate::support::write(game.path(), "game.toml", "disabled = [\"chatty\"]\n");
    run.wait_for("[unloaded mod chatty]");
    let (status, stderr) = run.interrupt();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn a_mod_whose_folder_comes_back_while_watching_loads_again() {
    let game = tempfile::tempdir().unwrap();
    add_mod(
        game.path(),
        "core",
        "",
        &[("main.lua", "print(\"core up\")\n")],
    );
    add_mod(
        game.path(),
        "back",
        "",
        &[("main.lua", "print(\"back up\")\n")],
    );
    let run = Watching::start_with(game.path(), &["--no-table"]);
    run.wait_for("back up");
    let aside = tempfile::tempdir_in(game.path()).unwrap();
    std::fs::rename(game.path().join("mods/back"), aside.path().join("back")).unwrap();
    run.wait_for("[unloaded mod back]");
    std::fs::rename(aside.path().join("back"), game.path().join("mods/back")).unwrap();
    run.wait_for("[loading mod back]");
    run.wait_for("back up");
    let (status, stderr) = run.interrupt();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// A script that keeps its progress on a named source of its own object:
/// it prints what it finds at the first tick, then stores one more.
const SLOT: &str = "local slot = GMP.Named(self, \"slot\")\n\
                    local done = 0\n\
                    ListenObjectMessage(slot, \"Quest.Progress\", nil, function(n) done = n end)\n\
                    ListenMessage(\"Game.Tick\", nil, function(n)\n\
                      print(\"found\", done)\n\
                      StoreObjectMessage(slot, \"Quest.Progress\", done + 1)\n\
                    end)\n";

#[test]
fn what_a_script_stores_on_a_named_source_of_its_own_object_survives_a_restart() {
    let game = tempfile::tempdir().unwrap();
    add_mod(game.path(), "quest", SAVER, &[("main.lua", SLOT)]);
    for want in ["found\t0", "found\t1", "found\t2"] {
        let output = run(game.path(), &["--ticks", "1"]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(stdout(&output).trim(), want, "{}", stderr(&output));
    }
    let saved = std::fs::read_to_string(game.path().join(".gantry/saved/quest.json")).unwrap();
    assert!(
        saved.contains("\"script\": \"mods/quest/main.lua\"")
            && saved.contains("\"source\": \"slot\""),
        "{saved}"
    );
    // Renamed, the script is another script: it starts fresh, and what
    // the old name saved waits, kept in the file.
    std::fs::rename(
        game.path().join("mods/quest/main.lua"),
        game.path().join("mods/quest/quest.lua"),
    )
    .unwrap();
    let output = run(game.path(), &["--ticks", "1"]);
    assert_eq!(stdout(&output).trim(), "found\t0", "{}", stderr(&output));
    let saved = std::fs::read_to_string(game.path().join(".gantry/saved/quest.json")).unwrap();
    assert!(
        saved.contains("\"script\": \"mods/quest/main.lua\""),
        "{saved}"
    );
}

#[test]
fn a_saved_message_keeps_its_values_by_parameter_name_when_the_declaration_is_reordered() {
    let game = tempfile::tempdir().unwrap();
    let saver = "[keys.\"Quest.Progress\"]\nkind = \"store\"\nparams = [\"who: string\", \"done: int\"]\npersist = true\n";
    add_mod(
        game.path(),
        "quest",
        saver,
        &[(
            "main.lua",
            "ListenWorldMessage(self:World(), \"Quest.Progress\", nil, function(who, n) print(who, n) end)\n",
        )],
    );
    write_save(
        game.path(),
        "quest",
        "{\"version\": 2, \"mod\": \"quest\", \"keys\": {\"Quest.Progress\": {\
         \"params\": [\"done: int\", \"who: string\", \"mood: string\"], \
         \"stored\": [{\"on\": \"world\", \"args\": [4, \"ann\", \"glad\"]}]}}}",
    );
    let output = run(game.path(), &["--ticks", "0"]);
    let err = stderr(&output);
    assert_eq!(stdout(&output).trim(), "ann\t4", "{err}");
    assert!(
        err.contains(
            "Quest.Progress changed since it was saved (now (who: string, done: int)); its saved \
             message on world keeps who, done; drops mood (\"glad\": no longer a parameter)"
        ),
        "{err}"
    );
}

#[test]
fn a_saved_message_whose_new_parameter_cannot_start_empty_is_dropped_saying_why() {
    let game = tempfile::tempdir().unwrap();
    let saver = "[keys.\"Quest.Progress\"]\nkind = \"store\"\nparams = [\"done: int\", \"who: string\", \"log: array<string>\"]\npersist = true\n";
    add_mod(
        game.path(),
        "quest",
        saver,
        &[("main.lua", "print(\"up\")\n")],
    );
    write_save(
        game.path(),
        "quest",
        "{\"version\": 2, \"mod\": \"quest\", \"keys\": {\"Quest.Progress\": {\
         \"params\": [\"done: int\"], \"stored\": [{\"on\": \"world\", \"args\": [4]}]}}}",
    );
    let output = run(game.path(), &["--ticks", "0"]);
    let err = stderr(&output);
    assert!(
        err.contains(
            "Quest.Progress changed since it was saved (now (done: int, who: string, log: \
             array<string>)); its saved message on world is dropped: `who: string` has no saved \
             value, and only an `any`, `nil` or array parameter can start empty"
        ),
        "{err}"
    );
}

#[test]
fn a_saved_struct_keeps_the_fields_its_declaration_still_has_by_name() {
    let game = tempfile::tempdir().unwrap();
    let saver = "[structs.Quest]\nfields = [\"id: string\", \"giver: string\"]\n\
                 [keys.\"Quest.Current\"]\nkind = \"store\"\nparams = [\"quest: Quest\"]\npersist = true\n";
    add_mod(
        game.path(),
        "quest",
        saver,
        &[(
            "main.lua",
            "ListenWorldMessage(self:World(), \"Quest.Current\", nil, function(q) print(q.id, q.giver, q.reward) end)\n",
        )],
    );
    write_save(
        game.path(),
        "quest",
        "{\"version\": 2, \"mod\": \"quest\", \"keys\": {\"Quest.Current\": {\
         \"params\": [\"quest: Quest\"], \"stored\": [{\"on\": \"world\", \"args\": \
         [{\"struct\": \"Quest\", \"fields\": {\"id\": \"q1\", \"reward\": 3}}]}]}}}",
    );
    let output = run(game.path(), &["--ticks", "0"]);
    let err = stderr(&output);
    assert_eq!(stdout(&output).trim(), "q1\tnil\tnil", "{err}");
    assert!(
        err.contains(
            "Quest.Current changed since it was saved (now (quest: Quest)); its saved message on \
             world keeps quest; drops quest.reward (3: no longer a field of Quest)"
        ),
        "{err}"
    );
}

#[test]
fn a_mod_refused_for_a_disabled_dependency_loads_once_the_dependency_is_enabled_while_watching() {
    let game = tempfile::tempdir().unwrap();
    std::fs::write(game.path().join("game.toml"), "disabled = [\"core\"]\n").unwrap();
    add_mod(
        game.path(),
        "core",
        "",
        &[("main.lua", "print(\"core up\")\n")],
    );
    add_mod(
        game.path(),
        "quest",
        "depends = [\"core\"]",
        &[("main.lua", "print(\"quest up\")\n")],
    );
    let run = Watching::start_with(game.path(), &["--no-table"]);
    run.wait_for_error("quest needs core, which is disabled in game.toml; quest is not loaded");
    crate::support::write(game.path(), "game.toml", "disabled = []\n");
    let lines = run.wait_for("quest up");
    let core = lines.iter().position(|l| l == "core up");
    let quest = lines.iter().position(|l| l == "[loading mod quest]");
    assert!(
        core.is_some() && core < quest,
        "dependency first: {lines:?}"
    );
    run.interrupt();
}
