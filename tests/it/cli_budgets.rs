//! `gantry run --tick-budget MS` and `--quarantine N` (and game.toml's
//! `tick_budget_ms`, `quarantine_after`): a mod over its budget is said
//! with the listener and key that took the time; a listener failing N
//! times in a row is unlistened and said; a budget that is no time is
//! refused before anything runs.

use std::path::Path;
use std::process::Output;

use crate::support::{gantry, stderr as err, stdout as out, write};

/// Burns about 5 ms of every tick, at slow/main.lua:1.
const SLOW: &str = r#"ListenMessage("Game.Tick", nil, function(n)
  local start = os.clock()
  while os.clock() - start < 0.005 do end
end)
"#;

/// Fails on every tick, at broken/main.lua:1; says each call.
const BROKEN: &str = r#"ListenMessage("Game.Tick", nil, function(n)
  print("broken heard " .. n)
  error("no map loaded")
end)
"#;

fn game(game_toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, script) in [("slow", SLOW), ("broken", BROKEN)] {
        let folder = dir.path().join("mods").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        write(&folder, "mod.toml", &format!("[mod]\nname = \"{name}\"\n"));
        write(&folder, "main.lua", script);
    }
    write(dir.path(), "game.toml", game_toml);
    dir
}

fn run(dir: &Path, extra: &[&str]) -> Output {
    gantry()
        .arg("run")
        .arg(dir)
        .args(["--no-table", "--ticks", "4"])
        .args(extra)
        .output()
        .expect("gantry runs")
}

#[test]
fn a_mod_over_the_runs_tick_budget_is_said_with_the_listener_that_took_the_time() {
    let dir = game("");
    let output = run(dir.path(), &["--tick-budget", "1"]);
    let stderr = err(&output);
    let overruns: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("mod slow took"))
        .collect();
    assert_eq!(overruns.len(), 4, "{stderr}");
    assert!(
        overruns[0].starts_with("warning: [slow] mods/slow/main.lua:1: mod slow took "),
        "{stderr}"
    );
    assert!(
        overruns[0].contains(
            " in tick 1, over its tick budget of 1 ms; most in this listener of `Game.Tick`: "
        ),
        "{stderr}"
    );
}

#[test]
fn a_listener_failing_twice_in_a_row_is_quarantined_with_its_last_error() {
    let dir = game("");
    let output = run(dir.path(), &["--quarantine", "2"]);
    assert_eq!(output.status.code(), Some(1), "its failures are errors");
    assert_eq!(out(&output).matches("broken heard").count(), 2);
    let stderr = err(&output);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("quarantined"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].starts_with(
            "warning: [broken] mods/broken/main.lua:1: listener of mod broken on `Game.Tick` quarantined after 2 failures in a row"
        ),
        "{stderr}"
    );
    assert!(said[0].contains("no map loaded"), "{stderr}");
}

#[test]
fn game_toml_asks_for_budgets_and_quarantine_without_a_flag() {
    let dir = game("tick_budget_ms = 1\nquarantine_after = 3\n");
    let output = run(dir.path(), &[]);
    assert_eq!(out(&output).matches("broken heard").count(), 3);
    let stderr = err(&output);
    // The broken mod's error may take a millisecond too on a busy machine.
    let slow = stderr
        .lines()
        .filter(|l| l.contains("mod slow took") && l.contains("over its tick budget of 1 ms"))
        .count();
    assert_eq!(slow, 4, "{stderr}");
    assert_eq!(
        stderr.matches("quarantined after 3 failures").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn without_budgets_or_quarantine_nothing_is_said_and_the_listener_keeps_failing() {
    let dir = game("");
    let output = run(dir.path(), &[]);
    assert_eq!(out(&output).matches("broken heard").count(), 4);
    let stderr = err(&output);
    assert!(!stderr.contains("tick budget"), "{stderr}");
    assert!(!stderr.contains("quarantined"), "{stderr}");
}

#[test]
fn a_tick_budget_that_is_no_time_is_refused_before_anything_runs() {
    let dir = game("");
    for budget in ["0", "-3", "nan"] {
        let flag = format!("--tick-budget={budget}");
        let output = run(dir.path(), &[&flag]);
        assert_eq!(output.status.code(), Some(2), "--tick-budget {budget}");
        assert!(err(&output).contains("--tick-budget"), "{}", err(&output));
        assert!(!out(&output).contains("broken heard"));
    }
    let output = run(dir.path(), &["--quarantine", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(err(&output).contains("--quarantine"), "{}", err(&output));
}

#[test]
fn a_run_whose_game_quarantines_a_listener_replays_equal() {
    // Asks for the map, then fails: quarantined after two ticks, so the
    // recording has two asks, and so must the replay.
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("mods").join("asker");
    std::fs::create_dir_all(&folder).unwrap();
    write(&folder, "mod.toml", "[mod]\nname = \"asker\"\n");
    write(
        &folder,
        "main.lua",
        "ListenMessage(\"Game.Tick\", nil, function(n)\n  NotifyMessage(\"Map.Asked\", n)\n  error(\"no map loaded\")\nend)\n",
    );
    write(dir.path(), "game.toml", "quarantine_after = 2\n");
    let file = dir.path().join("play.gantry-rec");
    let recorded = run(dir.path(), &["--record", file.to_str().unwrap()]);
    assert!(err(&recorded).contains("quarantined after 2 failures"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches("\"out\":\"Map.Asked\"").count(), 2, "{text}");
    let replayed = gantry()
        .arg("replay")
        .arg(&file)
        .arg(dir.path())
        .output()
        .expect("gantry runs");
    assert!(
        out(&replayed).contains("replay: equal (4 inputs, 2 outputs"),
        "{}{}",
        out(&replayed),
        err(&replayed)
    );
}
