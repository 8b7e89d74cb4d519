//! The `arena_game` example (`examples/arena_game/`) plays as its README
//! says: the game's body is its `play` function, run here on a table in a
//! fresh folder.

use std::path::Path;

use gantry_host::{TableFile, Type};

#[allow(dead_code)] // its `main` is the example's, not the test's
#[path = "../../examples/arena_game/main.rs"]
mod arena_game;

/// What one play prints, in order: the README's transcript (its first
/// `text` block), so that the README stays true.
fn transcript() -> Vec<String> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/arena_game/README.md");
    let readme = std::fs::read_to_string(readme).unwrap();
    let block = readme
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README shows what the game prints in a text block");
    block.lines().map(str::to_owned).collect()
}

fn play(table: &Path) -> Vec<String> {
    arena_game::play(table).unwrap_or_else(|e| panic!("the arena game failed: {e}"))
}

#[test]
fn the_arena_game_prints_what_its_readme_says_and_reports_the_rhai_mistake_once() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(play(&dir.path().join("signatures.json")), transcript());
}

#[test]
fn a_script_reloaded_or_unloaded_on_the_player_keeps_what_it_stored_there() {
    let dir = tempfile::tempdir().unwrap();
    let said = play(&dir.path().join("signatures.json"));
    let scars: Vec<&str> = said
        .iter()
        .filter(|line| line.starts_with("[scars"))
        .map(String::as_str)
        .collect();
    // v1 counts one blow; v2 (reloaded in place) and v3 (loaded again
    // after an unload, with a tick unheard between) count on from it.
    assert_eq!(
        scars,
        [
            "[scars v1] 1, 28 hp left",
            "[scars v2] 2, 24 hp left",
            "[scars v3] 3, 16 hp left"
        ]
    );
}

#[test]
fn the_arena_game_saves_its_declared_keys_and_plays_again_from_the_saved_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    play(&path);
    let saved = TableFile::open(&path).unwrap();
    let hurt = &saved.table().keys["Player.Hurt"];
    let params: Vec<(&str, &Type)> = hurt
        .params
        .iter()
        .map(|p| (p.name.as_str(), &p.ty))
        .collect();
    assert_eq!(params, [("damage", &Type::Float), ("hp", &Type::Int)]);
    assert_eq!(hurt.doc, "The player took damage.");
    assert!(
        saved.table().structs.get("Item").is_some(),
        "the bag's row struct is saved"
    );
    assert_eq!(
        play(&path),
        transcript(),
        "a second play reads the saved table"
    );
}
