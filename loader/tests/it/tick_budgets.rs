//! Per-mod tick budgets: a mod whose listeners take longer in a tick than
//! its budget (from its mod.toml, game.toml or the run's options) is said,
//! naming the mod, the tick, the time, the budget and the listener and
//! key that took it; a mod within its budget, or a game without budgets,
//! is said nothing.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use gantry_loader::{Event, Game, Options, TableChoice};

/// A listener that takes at least `ms` milliseconds of wall-clock time:
/// a million steps of Lua's loop per millisecond, two VM instructions
/// each, which no machine runs in under a millisecond. (Not `os.clock()`:
/// it is the process's CPU time, which the other tests running in
/// parallel advance faster than the wall clock the budget measures.)
fn slow_listener(ms: u32) -> String {
    format!(
        "-- spins {ms} ms at least\n\
         ListenMessage(\"Game.Tick\", nil, function(n)\n\
         local x = 0\n\
         for i = 1, {ms} * 1000000 do x = x + i end\n\
         end)\n"
    )
}

const FAST: &str =
    "count = 0\nListenMessage(\"Game.Tick\", nil, function(n) count = count + 1 end)\n";

fn add_mod(game: &Path, name: &str, manifest_extra: &str, script: &str) {
    let dir = game.join("mods").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mod.toml"),
        format!("[mod]\nname = \"{name}\"\n{manifest_extra}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("main.lua"), script).unwrap();
}

/// Opens `dir` with `options`, loads it and runs `ticks` ticks; the
/// warnings said.
fn warnings_of(dir: &Path, options: Options, ticks: u32) -> Vec<String> {
    let mut game = Game::open(dir, options).unwrap();
    let warnings = Rc::new(RefCell::new(Vec::new()));
    let kept = warnings.clone();
    game.on_event(move |event| {
        if let Event::Warning(text) = event {
            kept.borrow_mut().push(text.to_owned());
        }
    });
    game.load();
    for _ in 0..ticks {
        game.tick(1.0 / 60.0);
    }
    assert!(!game.failed(), "the mods run without errors");
    warnings.take()
}

fn options() -> Options {
    Options {
        table: TableChoice::Off,
        ..Options::default()
    }
}

#[test]
fn a_mod_over_its_manifest_budget_is_said_with_the_listener_that_took_the_time() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(dir.path(), "slow", "tick_budget_ms = 1", &slow_listener(5));
    add_mod(dir.path(), "fast", "tick_budget_ms = 50", FAST);
    let warnings = warnings_of(dir.path(), options(), 2);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    for (tick, warning) in warnings.iter().enumerate() {
        assert!(
            warning.starts_with("mods/slow/main.lua:2: mod slow took "),
            "{warning}"
        );
        assert!(
            warning.contains(&format!(
                " in tick {}, over its tick budget of 1 ms; most in this listener of `Game.Tick`: ",
                tick + 1
            )),
            "{warning}"
        );
    }
}

#[test]
fn the_games_budget_for_a_mod_wins_over_the_mods_own() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(dir.path(), "slow", "tick_budget_ms = 1", &slow_listener(3));
    std::fs::write(
        dir.path().join("game.toml"),
        "[tick_budgets]\nslow = 1000\n",
    )
    .unwrap();
    assert_eq!(warnings_of(dir.path(), options(), 2), Vec::<String>::new());
}

#[test]
fn the_games_default_budget_holds_every_mod_without_one_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(dir.path(), "slow", "", &slow_listener(3));
    add_mod(dir.path(), "fast", "", FAST);
    std::fs::write(dir.path().join("game.toml"), "tick_budget_ms = 0.5\n").unwrap();
    let warnings = warnings_of(dir.path(), options(), 1);
    // The fast mod is held too, but a busy machine may stall it.
    let slow: Vec<&String> = warnings
        .iter()
        .filter(|w| w.contains("mod slow took "))
        .collect();
    assert_eq!(slow.len(), 1, "{warnings:?}");
    assert!(slow[0].contains("budget of 0.5 ms"), "{warnings:?}");
}

#[test]
fn the_runs_budget_holds_every_mod_of_a_single_mod_folder_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.lua"), slow_listener(3)).unwrap();
    let options = Options {
        tick_budget: Some(Duration::from_millis(1)),
        ..options()
    };
    let warnings = warnings_of(dir.path(), options, 1);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("main.lua:2: mod "), "{warnings:?}");
    assert!(warnings[0].contains("in tick 1, over its tick budget of 1 ms"));
}

#[test]
fn without_a_budget_a_slow_mod_is_said_nothing() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(dir.path(), "slow", "", &slow_listener(3));
    assert_eq!(warnings_of(dir.path(), options(), 1), Vec::<String>::new());
}

#[test]
fn a_budget_out_of_range_in_game_toml_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(dir.path(), "slow", "", FAST);
    std::fs::write(dir.path().join("game.toml"), "tick_budget_ms = -2\n").unwrap();
    let error = Game::open(dir.path(), options()).err().expect("refused");
    let text = error.to_string();
    assert!(text.contains("game.toml"), "{text}");
    assert!(text.contains("tick_budget_ms"), "{text}");
    assert!(text.contains("out of range"), "{text}");
}
