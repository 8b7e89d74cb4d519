//! A Rust game that hosts mods with `gantry-loader`: it opens a game
//! folder of mods (the `three_mods` example by default), declares its own
//! key, spawns its own objects in the mods' world, runs a game loop that
//! ticks the mods, and has one Rust system listening to a mod's key.
//!
//! Run with `cargo run -p gantry-loader --example game_host [GAME]`.

use std::cell::RefCell;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use gantry_host::{KeyDecl, Source, Type};
use gantry_loader::{Event, Game, Options, TableChoice};

/// Plays `ticks` ticks of the game in `dir`; the lines it printed.
pub fn play(dir: &Path, ticks: u32) -> Result<Vec<String>, Box<dyn Error>> {
    let lines = Rc::new(RefCell::new(Vec::new()));
    let options = Options {
        // The game keeps its own records; no signature table here.
        table: TableChoice::Off,
        ..Options::default()
    };
    let mut game = Game::open(dir, options)?;
    let said = lines.clone();
    let names = game.names();
    game.on_event(move |event| {
        let line = match event {
            Event::Print(text) => text.to_owned(),
            Event::Report(text) | Event::Error(text) => {
                let from = names.mod_of(text).unwrap_or_else(|| "game".to_owned());
                format!("error in {from}: {text}")
            }
            Event::Warning(text) => format!("warning: {text}"),
            _ => return,
        };
        said.borrow_mut().push(line);
    });
    for refusal in game.refused() {
        lines
            .borrow_mut()
            .push(format!("not loaded: {}", refusal.module));
    }

    // The game's own key, declared before any mod runs: a mod that sends
    // it with other arguments is refused at its line.
    let hub = game.hub().clone();
    let weather = hub.declare(
        "Host.Weather",
        KeyDecl::event()
            .param("kind", Type::String)
            .doc("The host's weather, sent on its world."),
    )?;
    // Its own objects, in the world the mods' scripts live in.
    let world = game.world();
    let miller = hub.spawn(world)?;
    // A name that outlives the run: what the mods' persisted keys store on
    // the miller is saved under it and is on the miller again next time.
    game.name_object(miller, "miller")?;
    // One Rust system: the reward ceremony, listening to the quest mod's key.
    let said = lines.clone();
    let _ceremony = hub.listen(
        "Quest.Done",
        Source::Global,
        move |id: String, reward: i64| {
            said.borrow_mut().push(format!(
                "[host] the miller thanks you for {id}: {reward} gold"
            ));
        },
    )?;

    game.load();
    for tick in 1..=ticks {
        if tick == 2 {
            hub.send(weather, world, ("rain".to_owned(),))?;
        }
        game.tick(1.0 / 60.0);
    }
    game.save_state();
    hub.destroy(miller)?;
    let played = lines.borrow().clone();
    Ok(played)
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/three_mods"));
    for line in play(&dir, 5)? {
        println!("{line}");
    }
    Ok(())
}
