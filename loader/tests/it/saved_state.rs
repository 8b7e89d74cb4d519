//! Saved state on the sources a game names: what a persisted key stores
//! on an object the game gave a stable name (and on its named sources)
//! is there again on the object named the same in the next run; what is
//! stored on an object without one is not saved; a name the next run
//! does not give yet keeps its messages waiting, and in the file.

use std::path::Path;

use gantry_host::{Source, Value};
use gantry_loader::{Game, Options, TableChoice};

/// A game of one mod, `inv`, persisting `Bag.Count`.
fn bag_game() -> tempfile::TempDir {
    let game = tempfile::tempdir().unwrap();
    let dir = game.path().join("mods/inv");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mod.toml"),
        "[mod]\nname = \"inv\"\n[keys.\"Bag.Count\"]\nkind = \"store\"\nparams = [\"count: int\"]\npersist = true\n",
    )
    .unwrap();
    std::fs::write(dir.join("main.lua"), "-- stores nothing itself\n").unwrap();
    game
}

fn open(dir: &Path) -> Game {
    let options = Options {
        table: TableChoice::Off,
        ..Options::default()
    };
    let mut game = Game::open(dir, options).unwrap();
    game.load();
    game
}

fn stored(game: &Game, source: Source) -> Option<Vec<Value>> {
    let key = game.hub().key("Bag.Count").unwrap();
    game.hub().stored(key, source).map(|v| v.to_vec())
}

/// The first run: `player` named, a stray object not, each stored on.
fn first_run(dir: &Path) {
    let mut game = open(dir);
    let hub = game.hub().clone();
    let key = hub.key("Bag.Count").unwrap();
    let stray = hub.spawn(game.world()).unwrap();
    let player = hub.spawn(game.world()).unwrap();
    game.name_object(player, "player").unwrap();
    hub.store(key, player, (3_i64,)).unwrap();
    hub.store(key, hub.named(player, "bag"), (5_i64,)).unwrap();
    hub.store(key, stray, (9_i64,)).unwrap();
    assert!(game.save_state());
}

#[test]
fn what_is_stored_on_an_object_the_game_named_is_there_again_on_the_object_named_the_same() {
    let dir = bag_game();
    first_run(dir.path());
    let saved = std::fs::read_to_string(dir.path().join(".gantry/saved/inv.json")).unwrap();
    assert!(saved.contains("\"object\": \"player\""), "{saved}");
    assert!(saved.contains("\"source\": \"bag\""), "{saved}");
    assert!(
        !saved.contains('9'),
        "an object with no stable name is not saved: {saved}"
    );

    let mut game = open(dir.path());
    let hub = game.hub().clone();
    // Other objects first: the player's number is not the last run's.
    for _ in 0..3 {
        hub.spawn(game.world()).unwrap();
    }
    let player = hub.spawn(game.world()).unwrap();
    assert_eq!(stored(&game, Source::Object(player)), None);
    game.name_object(player, "player").unwrap();
    assert_eq!(
        stored(&game, Source::Object(player)),
        Some(vec![Value::Int(3)])
    );
    assert_eq!(
        stored(&game, hub.named(player, "bag")),
        Some(vec![Value::Int(5)])
    );
}

#[test]
fn a_name_the_next_run_does_not_give_keeps_its_messages_in_the_save() {
    let dir = bag_game();
    first_run(dir.path());
    // A run that never names the player saves what it could not place.
    let mut game = open(dir.path());
    assert!(game.save_state());
    drop(game);
    let saved = std::fs::read_to_string(dir.path().join(".gantry/saved/inv.json")).unwrap();
    assert!(saved.contains("\"object\": \"player\""), "{saved}");
    // The run after it names the player and finds them.
    let mut game = open(dir.path());
    let player = game.hub().spawn(game.world()).unwrap();
    game.name_object(player, "player").unwrap();
    assert_eq!(
        stored(&game, Source::Object(player)),
        Some(vec![Value::Int(3)])
    );
}

#[test]
fn a_stable_name_is_one_objects_and_never_empty() {
    let dir = bag_game();
    let mut game = open(dir.path());
    let hub = game.hub().clone();
    let (a, b) = (
        hub.spawn(game.world()).unwrap(),
        hub.spawn(game.world()).unwrap(),
    );
    game.name_object(a, "player").unwrap();
    let taken = game.name_object(b, "player").unwrap_err().to_string();
    assert_eq!(
        taken,
        format!("cannot name {b} `player`: the name is {a}'s")
    );
    let empty = game.name_object(b, "").unwrap_err().to_string();
    assert_eq!(
        empty,
        format!("cannot name {b} ``: a name has 1 to 256 bytes")
    );
    // Once the holder is gone, the name is free again.
    hub.destroy(a).unwrap();
    game.name_object(b, "player").unwrap();
}
