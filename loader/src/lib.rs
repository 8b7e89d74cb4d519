//! Gantry's mod loader as a library: what `gantry run` does, for a game
//! to embed.
//!
//! A folder is a game of many mods (`GAME/mods/*/mod.toml`, an optional
//! `GAME/game.toml` saying which are enabled) or a single mod (a folder
//! with `mod.toml` and no `mods/`, or a bare folder of scripts).
//! [`Game::open`] reads the manifests and orders the mods by their
//! dependencies ([`order`]); [`Game::load`] runs each mod's scripts,
//! dependencies first, every mod on its own runtimes (its `require` and
//! its memory its own); [`Game::tick`] sends `Game.Tick`; [`Game::poll`]
//! reloads what changed on disk; [`Game::save_table`] keeps the signature
//! table. What goes wrong is said through [`Game::on_event`] as it
//! happens, never panicking on a mod's mistake.
//!
//! ```no_run
//! use gantry_loader::{Event, Game, Options};
//!
//! let mut game = Game::open("my_game".as_ref(), Options::default())?;
//! game.on_event(|event| if let Event::Error(text) = event { eprintln!("{text}") });
//! game.load();
//! for _ in 0..60 {
//!     game.tick(1.0 / 60.0);
//! }
//! game.save_table()?;
//! # Ok::<(), gantry_loader::LoaderError>(())
//! ```

#![forbid(unsafe_code)]

pub mod budget;
mod context;
mod engines;
mod error;
mod event;
pub mod folder;
mod game;
mod guard;
pub mod layout;
mod needs;
pub mod order;
pub mod profile;
pub mod quarantine;
pub mod record;
pub mod saved;
pub mod testing;
mod unit;
pub mod watch;

pub use engines::{EXTENSIONS, Interrupt};
pub use error::LoaderError;
pub use event::{Event, Sink};
pub use game::{Game, ModNames, ModSummary, Options, TICK_KEY, TableChoice, tick_decl};
pub use layout::GamePolicy;
pub use order::Refusal;

use gantry_host::manifest::ManifestErrors;

/// Every finding of a manifest that cannot be used, one text each, named
/// from the game folder (`label` before the file: `mods/core/`), and how
/// many more were not shown.
pub fn manifest_findings(errors: &ManifestErrors, label: &str) -> Vec<String> {
    let mut out: Vec<String> = errors.iter().map(|e| format!("{label}{e}")).collect();
    if errors.omitted > 0 {
        out.push(format!(
            "{label}{}: and {} more error(s) not shown",
            errors.file, errors.omitted
        ));
    }
    out
}
