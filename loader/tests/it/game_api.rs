//! The loader as a game uses it: open a folder, hear its events, load,
//! tick, unload a mod, and read why a mod was refused.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use gantry_loader::{Event, Game, LoaderError, Options, TableChoice};

fn add_mod(game: &Path, name: &str, extra: &str, script: &str) {
    let dir = game.join("mods").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mod.toml"),
        format!("[mod]\nname = \"{name}\"\n{extra}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("main.lua"), script).unwrap();
}

fn options() -> Options {
    Options {
        table: TableChoice::Off,
        ..Options::default()
    }
}

/// Opens `dir` with every event kept as `kind: text`.
fn open(dir: &Path) -> (Game, Rc<RefCell<Vec<String>>>) {
    let game = Game::open(dir, options()).unwrap();
    let events = Rc::new(RefCell::new(Vec::new()));
    let kept = events.clone();
    game.on_event(move |event| {
        let line = match event {
            Event::Print(t) => format!("print: {t}"),
            Event::Error(t) | Event::Report(t) => format!("error: {t}"),
            Event::Warning(t) => format!("warning: {t}"),
            Event::Progress(t) => format!("progress: {t}"),
            Event::Note(t) => format!("note: {t}"),
            Event::StepEnd => return,
        };
        kept.borrow_mut().push(line);
    });
    (game, events)
}

#[test]
fn a_game_lists_its_mods_in_load_order_and_ticks_them() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(
        dir.path(),
        "ui",
        "depends = [\"core\"]",
        "ListenMessage(\"Game.Tick\", nil, function(n) print(\"ui\", n) end)",
    );
    add_mod(
        dir.path(),
        "core",
        "version = \"1.0.0\"",
        "print(\"core up\")",
    );
    let (mut game, events) = open(dir.path());
    assert!(game.is_game());
    let names: Vec<String> = game.mods().into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["core", "ui"]);
    game.load();
    game.tick(0.5);
    game.tick(0.5);
    assert_eq!(
        *events.borrow(),
        ["print: core up", "print: ui\t1", "print: ui\t2"]
    );
    assert_eq!(game.ticks(), 2);
    assert!(!game.failed());
}

#[test]
fn unloading_a_mod_removes_its_listeners() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(
        dir.path(),
        "chatty",
        "",
        "ListenMessage(\"Game.Tick\", nil, function(n) print(\"tick\", n) end)",
    );
    let (mut game, events) = open(dir.path());
    game.load();
    game.tick(0.1);
    assert!(game.unload("chatty"));
    game.tick(0.1);
    assert_eq!(
        *events.borrow(),
        ["print: tick\t1", "progress: [unloaded mod chatty]"]
    );
    assert!(game.mods().is_empty());
}

#[test]
fn a_refused_mod_is_listed_with_its_chain_and_the_others_load() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(dir.path(), "core", "", "print(\"core\")");
    add_mod(
        dir.path(),
        "quest",
        "depends = [\"economy\"]",
        "print(\"quest\")",
    );
    let (mut game, events) = open(dir.path());
    let refused = game.refused();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].module, "quest");
    assert_eq!(refused[0].chain, ["quest", "economy"]);
    game.load();
    assert!(game.failed());
    assert!(events.borrow().contains(&"print: core".to_owned()));
    assert!(!events.borrow().contains(&"print: quest".to_owned()));
}

#[test]
fn a_single_mod_whose_manifest_cannot_be_used_is_an_error_with_every_finding() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mod.toml"),
        "[mod]\nname = \"Bad Name\"\nversoin = \"1\"\n",
    )
    .unwrap();
    match Game::open(dir.path(), options()) {
        Err(LoaderError::Manifest(errors)) => assert_eq!(errors.len(), 2, "{errors}"),
        other => panic!("expected the manifest's findings, got {:?}", other.err()),
    }
}

#[test]
fn persist_on_a_key_that_stores_nothing_is_a_finding_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mod.toml"),
        "[mod]\nname = \"quest\"\n\n[keys.\"Quest.Start\"]\nkind = \"event\"\npersist = true\n",
    )
    .unwrap();
    match Game::open(dir.path(), options()) {
        Err(LoaderError::Manifest(errors)) => assert_eq!(
            errors.to_string(),
            "mod.toml:6:11: expected `persist` only on a key that stores (kind `store` or `once`), \
             found event in keys.\"Quest.Start\".persist"
        ),
        other => panic!("expected the manifest's finding, got {:?}", other.err()),
    }
}

#[test]
fn a_dependency_that_is_not_a_version_requirement_refuses_the_mod_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    add_mod(dir.path(), "core", "version = \"1.0.0\"", "print(\"core\")");
    add_mod(
        dir.path(),
        "quest",
        "depends = [\"core >= one\"]",
        "print(\"quest\")",
    );
    let (mut game, events) = open(dir.path());
    game.load();
    let said = events.borrow().join("\n");
    assert!(
        said.contains(
            "mods/quest/mod.toml:3:12: mod.depends: `>= one` is not a version requirement"
        ),
        "{said}"
    );
    assert!(said.contains("quest is not loaded"), "{said}");
    assert!(!said.contains("print: quest"), "{said}");
}
