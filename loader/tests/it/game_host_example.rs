//! The `game_host` example plays the `three_mods` game folder: the mods
//! load in dependency order, the host's Rust system hears the quest
//! mod's key, and the gold a session earned is there the next session.

use std::path::Path;

#[allow(dead_code)]
#[path = "../../../examples/game_host/main.rs"]
mod example;

/// Copies a folder (the example game) into a test's own.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != ".gantry" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_rust_host_example_plays_the_three_mods_and_their_gold_survives_a_restart() {
    let game = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/three_mods");
    copy_dir(&examples, game.path());
    let first = example::play(game.path(), 5).unwrap();
    assert_eq!(
        first,
        [
            "[ui] quest started: wolves",
            "[ui] The miller needs help with the wolves.",
            "[host] the miller thanks you for wolves: 50 gold",
            "[ui] gold: 50",
            "[ui] quest done: wolves (+50 gold)",
        ]
    );
    let second = example::play(game.path(), 5).unwrap();
    assert_eq!(
        second[0], "[ui] gold: 50",
        "the saved gold, before the first tick"
    );
    assert!(second.contains(&"[ui] gold: 100".to_owned()), "{second:?}");
}
