//! `gantry replay FILE DIR`: feeds a recording's inputs (`gantry run
//! --record`) to the mods in DIR, tick by tick, and compares what they
//! send with what was recorded ([`gantry_loader::record`]). Equal: exit 0;
//! the first difference (tick, key, expected and got): exit 1. A cut
//! recording replays its prefix and says so. The signature table is read
//! as a run reads it and never written.

use std::path::Path;
use std::process::ExitCode;

use gantry_loader::record::{self, Recording, Verdict};
use gantry_loader::{Event, Game, LoaderError, Options};
use gantry_lua::runtime::LuaOptions;
use gantry_rhai::RhaiOptions;

use crate::limits::LimitArgs;
use crate::out::{errln, outln};

pub fn run(file: &Path, dir: &Path, limits: &LimitArgs) -> anyhow::Result<ExitCode> {
    crate::folder::mod_folder(dir)?;
    let recording = Recording::read(file)?;
    let (mut lua, mut rhai) = (LuaOptions::default(), RhaiOptions::default());
    limits.apply(&mut lua, &mut rhai);
    // A run recorded without saved state is replayed without it, whatever
    // the recorded run (or later ones) saved at exit.
    let options = Options {
        lua,
        rhai,
        fresh: recording.saved.is_none(),
        ..Options::default()
    };
    let mut game = match Game::open(dir, options) {
        Ok(game) => game,
        Err(LoaderError::Manifest(errors)) => {
            return Ok(crate::contract::refuse_manifest(
                &errors,
                "nothing replayed",
            ));
        }
        Err(e) => return Err(e.into()),
    };
    game.on_event(|event| match event {
        Event::Report(text) | Event::Error(text) => errln!("error: {text}"),
        Event::Warning(text) => errln!("warning: {text}"),
        _ => {}
    });
    let now: Vec<(String, Option<String>)> = game
        .mods()
        .into_iter()
        .map(|m| (m.name, m.version))
        .collect();
    if now != recording.mods {
        errln!(
            "warning: recorded with the mods {}; replaying {}",
            mods_text(&recording.mods),
            mods_text(&now)
        );
    }
    if record::table_hash(game.hub()) != recording.table {
        errln!("note: the signature table changed since the recording");
    }
    if recording.saved.is_some() && record::saved_state_hash(dir) != recording.saved {
        errln!(
            "note: the saved state in {} is not the one the recording started from \
             (a run saves its own at exit): the replay may differ from tick 0",
            dir.join(gantry_loader::saved::SAVED_DIR).display()
        );
    }
    let verdict = record::replay(&mut game, &recording);
    drop(game);
    match verdict {
        Verdict::Equal { inputs, outputs } => {
            outln!("replay: equal ({inputs} inputs, {outputs} outputs as recorded)");
            if !recording.complete {
                let last = recording.lines.last().map_or(0, |line| match line {
                    record::Line::Input(d) | record::Line::Output(d) => d.tick,
                });
                outln!(
                    "note: {} was cut after tick {last} (no end line): its prefix replayed",
                    file.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Verdict::Differs {
            tick,
            expected,
            got,
        } => {
            let key = expected
                .as_ref()
                .or(got.as_ref())
                .map_or("", |d| d.key.as_str());
            outln!("replay: differs at tick {tick}, key {key}");
            let say = |d: Option<_>| d.map_or_else(|| "nothing".to_owned(), |d| format!("{d}"));
            outln!("  expected: {}", say(expected));
            outln!("  got:      {}", say(got));
            Ok(ExitCode::from(1))
        }
    }
}

fn mods_text(mods: &[(String, Option<String>)]) -> String {
    let names: Vec<String> = mods
        .iter()
        .map(|(name, version)| match version {
            Some(v) => format!("{name} {v}"),
            None => name.clone(),
        })
        .collect();
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}
