//! Quarantine: when the game asks for it, a listener that fails N times
//! in a row is unlistened and said (mod, key, file:line, its last error);
//! a call that succeeds starts the count again; the other listeners keep
//! running. In Lua and in Rhai alike.

use std::cell::RefCell;
use std::num::NonZeroU32;
use std::path::Path;
use std::rc::Rc;

use gantry_loader::{Event, Game, Options, TableChoice};

/// Fails on every tick but those `n % 3 == 0` when `flaky`, else always;
/// prints each call.
const LUA: &str = r#"
ListenMessage("Game.Tick", nil, function(n)
  print("lua heard " .. n)
  if FLAKY and n % 3 == 0 then return end
  error("broken on tick " .. n)
end)
ListenMessage("Game.Tick", nil, function(n) print("lua other " .. n) end)
"#;

const RHAI: &str = r#"
ListenMessage("Game.Tick", (), |n, dt| {
    print(`rhai heard ${n}`);
    if FLAKY && n % 3 == 0 { return; }
    throw `broken on tick ${n}`;
});
ListenMessage("Game.Tick", (), |n, dt| { print(`rhai other ${n}`); });
"#;

fn add_mod(game: &Path, name: &str, file: &str, script: &str) {
    let dir = game.join("mods").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mod.toml"), format!("[mod]\nname = \"{name}\"\n")).unwrap();
    std::fs::write(dir.join(file), script).unwrap();
}

/// Runs `ticks` ticks; what was printed and warned.
fn run(dir: &Path, options: Options, ticks: u32) -> (Game, Vec<String>, Vec<String>) {
    let mut game = Game::open(dir, options).unwrap();
    let said = Rc::new(RefCell::new((Vec::new(), Vec::new())));
    let kept = said.clone();
    game.on_event(move |event| match event {
        Event::Print(text) => kept.borrow_mut().0.push(text.to_owned()),
        Event::Warning(text) => kept.borrow_mut().1.push(text.to_owned()),
        _ => {}
    });
    game.load();
    for _ in 0..ticks {
        game.tick(1.0 / 60.0);
    }
    let (prints, warnings) = said.take();
    (game, prints, warnings)
}

fn game_of(flaky: bool, game_toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let flaky = if flaky { "true" } else { "false" };
    add_mod(
        dir.path(),
        "luamod",
        "main.lua",
        &format!("FLAKY = {flaky}\n{}", LUA.trim_start()),
    );
    add_mod(
        dir.path(),
        "rhaimod",
        "main.rhai",
        &format!("const FLAKY = {flaky};\n{}", RHAI.trim_start()),
    );
    std::fs::write(dir.path().join("game.toml"), game_toml).unwrap();
    dir
}

fn options() -> Options {
    Options {
        table: TableChoice::Off,
        ..Options::default()
    }
}

fn count(lines: &[String], text: &str) -> usize {
    lines.iter().filter(|l| l.starts_with(text)).count()
}

#[test]
fn a_listener_failing_three_times_in_a_row_is_unlistened_and_said_in_lua_and_rhai() {
    let dir = game_of(false, "quarantine_after = 3\n");
    let (game, prints, warnings) = run(dir.path(), options(), 6);
    // Called on ticks 1 to 3, then no more; the other listener each tick.
    assert_eq!(count(&prints, "lua heard"), 3, "{prints:?}");
    assert_eq!(count(&prints, "rhai heard"), 3, "{prints:?}");
    assert_eq!(count(&prints, "lua other"), 6, "{prints:?}");
    assert_eq!(count(&prints, "rhai other"), 6, "{prints:?}");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let lua = warnings.iter().find(|w| w.contains("luamod")).unwrap();
    assert!(
        lua.starts_with(
            "mods/luamod/main.lua:2: listener of mod luamod on `Game.Tick` quarantined after 3 failures in a row"
        ),
        "{lua}"
    );
    assert!(lua.contains("broken on tick 3"), "{lua}");
    let rhai = warnings.iter().find(|w| w.contains("rhaimod")).unwrap();
    assert!(
        rhai.starts_with(
            "mods/rhaimod/main.rhai:2: listener of mod rhaimod on `Game.Tick` quarantined"
        ),
        "{rhai}"
    );
    assert!(rhai.contains("broken on tick 3"), "{rhai}");
    let quarantined = game.quarantined();
    assert_eq!(quarantined.len(), 2);
    assert!(
        quarantined
            .iter()
            .all(|q| q.key == "Game.Tick" && q.failures == 3)
    );
}

#[test]
fn a_success_between_failures_starts_the_count_again() {
    // Fails on ticks 1, 2, succeeds on 3, fails 4, 5, succeeds 6…: never
    // three in a row.
    let dir = game_of(true, "quarantine_after = 3\n");
    let (game, prints, warnings) = run(dir.path(), options(), 9);
    assert_eq!(count(&prints, "lua heard"), 9, "{prints:?}");
    assert_eq!(count(&prints, "rhai heard"), 9, "{prints:?}");
    assert_eq!(warnings, Vec::<String>::new());
    assert!(game.quarantined().is_empty());
}

#[test]
fn without_quarantine_a_failing_listener_keeps_being_called() {
    let dir = game_of(false, "");
    let (_, prints, warnings) = run(dir.path(), options(), 5);
    assert_eq!(count(&prints, "lua heard"), 5, "{prints:?}");
    assert_eq!(count(&prints, "rhai heard"), 5, "{prints:?}");
    assert_eq!(warnings, Vec::<String>::new());
}

#[test]
fn the_runs_quarantine_wins_over_game_toml() {
    let dir = game_of(false, "quarantine_after = 5\n");
    let options = Options {
        quarantine_after: NonZeroU32::new(1),
        ..options()
    };
    let (_, prints, warnings) = run(dir.path(), options, 4);
    assert_eq!(count(&prints, "lua heard"), 1, "{prints:?}");
    assert_eq!(count(&prints, "rhai heard"), 1, "{prints:?}");
    assert!(
        warnings
            .iter()
            .all(|w| w.contains("after 1 failure in a row")),
        "{warnings:?}"
    );
}
