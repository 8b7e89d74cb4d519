//! `gantry run DIR`: a thin shell over [`gantry_loader::Game`].
//!
//! DIR is a game of many mods (`DIR/mods/*/mod.toml`, an optional
//! `DIR/game.toml`) or a single mod (a folder with `mod.toml`, or a bare
//! folder of scripts). The loader orders the mods by their dependencies,
//! loads each mod's scripts (each on a fresh object of one world, its
//! `self`), and each tick is `NotifyMessage("Game.Tick", n, dt)` with n
//! from 1. Script output goes to stdout; every reported error goes to
//! stderr with its file:line — in a game prefixed with its mod's name
//! (`[quest] mods/quest/main.lua:3: …`) — and makes the exit status 1.
//! A mod that cannot load (a missing dependency, a cycle) is said with
//! the chain, and the others run.
//!
//! With `--watch` the run keeps ticking every `--tick-ms` and the loader
//! reloads a script whose file changed, and `mod.toml` too. Ctrl-C stops
//! any run after its tick, interrupting a script that does not return
//! ([`crate::interrupt`]), saves the table and exits. `--budget`,
//! `--time-limit` and `--memory` bound each script call
//! ([`crate::limits`]). With `--trace` every dispatch is printed to
//! stderr; with `--why KEY` a report on KEY's listeners follows the run
//! ([`crate::why`]).
//!
//! The keys a mod declares `persist = true` are saved at exit (and every
//! `save_every` seconds of game.toml while watching) in
//! `DIR/.gantry/saved/<mod>.json`, and replayed before the next run's
//! scripts load ([`gantry_loader::saved`]).
//!
//! A single mod's `mod.toml` that cannot be used is every finding printed
//! and exit status 2, nothing run. After the run, the keys it added that
//! the mod uses one way only are said, with did-you-mean; `--locked`
//! saves nothing and fails if the run would have changed the table
//! ([`crate::contract`]).
//!
//! A game whose `game.toml` has a `[bridge]` table, or any run given
//! `--bridge URL`, shares the keys it lists with other game servers over
//! NATS ([`crate::bridge`]): peers' sends arrive before each tick.

use std::cell::Cell;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::Context;
use gantry_host::key::validate_key;
use gantry_host::{Source, TraceEvent};
use gantry_loader::{Event, Game, LoaderError, Options, TableChoice};
use gantry_lua::runtime::LuaOptions;
use gantry_rhai::RhaiOptions;

use crate::bridge::RunBridge;
use crate::error_printer::ErrorPrinter;
use crate::interrupt::{CtrlC, INTERRUPTED};
use crate::limits::LimitArgs;
use crate::out::{err, errln, out, outln};
use crate::trace_out::{KeyFilter, TracePrinter};
use crate::why::{Describe, WhyRecorder};

pub use gantry_loader::{TICK_KEY, tick_decl};

/// The seconds one tick stands for.
const TICK_DT: f64 = 1.0 / 60.0;

/// What `gantry run` was asked to do.
pub struct RunArgs {
    pub dir: PathBuf,
    /// Ticks to run (default: 1, or forever with `watch`).
    pub ticks: Option<u32>,
    /// The table file (default `DIR/.gantry/signatures.json`).
    pub table: Option<PathBuf>,
    /// Neither load nor save a table.
    pub no_table: bool,
    /// Keep running and reload changed scripts.
    pub watch: bool,
    /// The wall-clock length of a tick when watching.
    pub tick_ms: u64,
    /// Print one line per dispatch.
    pub trace: bool,
    /// Trace only this key and the keys below it (implies `trace`).
    pub trace_key: Option<String>,
    /// Keys to explain after the run (`--why`).
    pub why: Vec<String>,
    /// Print those reports on stdout (`gantry explain --ticks`), not stderr.
    pub why_on_stdout: bool,
    /// What one script call may spend.
    pub limits: LimitArgs,
    /// Change no table file: say what the run would have changed, and
    /// fail if it would have (`--locked`).
    pub locked: bool,
    /// Record the run's dispatches to this file (`--record`).
    pub record: Option<PathBuf>,
    /// The NATS server to bridge to (`--bridge URL`), over game.toml's
    /// `[bridge] url`.
    pub bridge: Option<String>,
    /// Profile the ticks (`--profile`, `--profile-out`, `--spike-ms`).
    pub profile: crate::profile_out::ProfileArgs,
}

/// The loader's options for this run: the limits, which table, the tick
/// budget and quarantine.
fn options(args: &RunArgs) -> anyhow::Result<Options> {
    let (mut lua, mut rhai) = (LuaOptions::default(), RhaiOptions::default());
    args.limits.apply(&mut lua, &mut rhai);
    rhai.operation_counter = args.profile.operation_counter();
    lua.instruction_counter = args.profile.instruction_counter();
    let table = if args.no_table {
        TableChoice::Off
    } else if let Some(path) = &args.table {
        TableChoice::At(path.clone())
    } else {
        TableChoice::Default
    };
    Ok(Options {
        lua,
        rhai,
        table,
        fresh: false,
        tick_budget: args.profile.tick_budget()?,
        quarantine_after: args.profile.quarantine,
    })
}

/// The loader's events printed: errors once per fault (in a game with
/// their mod's name before them), script output and progress on stdout.
fn print_events(game: &Game) -> Rc<ErrorPrinter> {
    let names = game.names();
    let prefix = move |text: &str| {
        names
            .mod_of(text)
            .map(|name| format!("[{name}] "))
            .unwrap_or_default()
    };
    let error_prefix = prefix.clone();
    let errors = Rc::new(ErrorPrinter::new(move |error| {
        errln!("error: {}{error}", error_prefix(error));
    }));
    let printer = errors.clone();
    game.on_event(move |event| match event {
        Event::Report(text) => printer.report(text.to_owned()),
        Event::Error(text) => printer.print(text),
        Event::StepEnd => printer.end_of_step(),
        Event::Warning(text) => errln!("warning: {}{text}", prefix(text)),
        Event::Note(text) => errln!("note: {text}"),
        Event::Progress(text) | Event::Print(text) => outln!("{text}"),
    });
    errors
}

/// Whether dispatches are traced (`--trace`, `--trace-key`).
fn printer_on(args: &RunArgs) -> bool {
    args.trace || args.trace_key.is_some()
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.dir;
    crate::folder::mod_folder(dir)?;
    // A key the run could never hear is a mistake to say now, not an
    // empty report after the run.
    for key in &args.why {
        validate_key(key).with_context(|| format!("--why {key:?}"))?;
    }
    if let Some(pattern) = &args.trace_key {
        validate_key(pattern.trim_end_matches(".*"))
            .with_context(|| format!("--trace-key {pattern:?}"))?;
    }
    // A single mod's manifest is its contract: one that cannot be used
    // stops the run before anything runs, every finding said.
    let mut game = match Game::open(dir, options(&args)?) {
        Ok(game) => game,
        Err(LoaderError::Manifest(errors)) => {
            return Ok(crate::contract::refuse_manifest(&errors, "nothing ran"));
        }
        Err(e) => return Err(e.into()),
    };
    // A bridge configuration that cannot be used stops the run before
    // anything runs, naming the field.
    let bridge_config = crate::bridge::config(&game, args.bridge.as_deref())?;
    let errors = print_events(&game);
    let hub = game.hub().clone();
    let tick_now = Rc::new(Cell::new(0u32));
    let printer = printer_on(&args).then(|| {
        TracePrinter::new(
            hub.clone(),
            tick_now.clone(),
            KeyFilter::new(args.trace_key.as_deref()),
            Box::new(|line| errln!("trace: {line}")),
        )
    });
    let why = (!args.why.is_empty()).then(|| Rc::new(WhyRecorder::new(hub.clone())));
    let record = match &args.record {
        Some(path) => Some(Rc::new(
            gantry_loader::record::Recorder::create(path, &game, tick_now.clone())
                .with_context(|| format!("--record {}", path.display()))?,
        )),
        None => None,
    };
    let profiler = args.profile.start(&game, tick_now.clone())?;
    // The recording is the hub's dispatch log, not a tracer.
    if printer.is_some() || why.is_some() || profiler.is_some() {
        let recorder = why.clone();
        let profiler = profiler.clone();
        // The game's: chained with its tick budgets and quarantine.
        game.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
            if let Some(printer) = &printer {
                printer.on_event(event);
            }
            if let Some(recorder) = &recorder {
                recorder.on_event(event);
            }
            if let Some(profiler) = &profiler {
                profiler.on_event(event);
            }
        })));
    }
    // Before the first script runs: a top level can loop too.
    let ctrl_c = CtrlC::install(game.interrupter())?;
    // Before the scripts too: its export listeners come first, and a top
    // level's sends wait in its buffer until it connects.
    let mut bridge = match bridge_config {
        Some(config) => Some(RunBridge::start(
            &game,
            config,
            args.bridge.as_deref(),
            printer_on(&args),
        )?),
        None => None,
    };
    game.load_until(&|| ctrl_c.pressed());
    if let Some(record) = &record {
        record.loaded();
    }

    let ticks = args.ticks.or((!args.watch).then_some(1));
    let tick_len = Duration::from_millis(args.tick_ms);
    // A tick's `dt` is its length: the wall-clock one when watching, a
    // sixtieth of a second when the ticks run back to back.
    let dt = if args.watch {
        tick_len.as_secs_f64()
    } else {
        TICK_DT
    };
    let mut next = Instant::now();
    let mut saved_at = Instant::now();
    while ticks.is_none_or(|t| game.ticks() < t) && !ctrl_c.pressed() {
        if args.watch {
            next += tick_len;
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                ctrl_c.sleep(wait);
            }
            if ctrl_c.pressed() {
                break;
            }
            if let Some(record) = &record {
                record.loading();
            }
            game.poll();
            if let Some(bridge) = &mut bridge {
                bridge.notice_policy(&game);
            }
            if let Some(record) = &record {
                record.loaded();
            }
            // The persisted keys, now and then: a crash loses little.
            if saved_at.elapsed() >= game.save_every() {
                game.save_state();
                saved_at = Instant::now();
            }
            if ctrl_c.pressed() {
                break;
            }
        }
        tick_now.set(game.ticks() + 1);
        if let Some(bridge) = &bridge {
            bridge.pump(&game, game.ticks() + 1);
        }
        game.tick(dt);
    }
    if let Some(bridge) = bridge {
        bridge.close();
    }
    ctrl_c.finished();
    if let Some(Err(error)) = record.as_ref().map(|r| r.finish()) {
        errln!("error: --record {error}");
    }
    let profile_failed = profiler.is_some_and(|p| args.profile.finish(&p));
    game.save_state();
    let refused = finish_table(&mut game, dir, args.locked)?;
    if let Some(why) = &why {
        let files = game.script_files();
        let names = hub.clone();
        let describe: Describe = Rc::new(move |source: Source| {
            let name = names.source_name(source);
            match source.object().and_then(|o| files.get(&o)) {
                Some(file) => format!("{name} ({file})"),
                None => name,
            }
        });
        for key in &args.why {
            let report = why.report(key, &describe);
            if args.why_on_stdout {
                out!("{report}");
            } else {
                err!("why: {report}");
            }
        }
    }
    // Errors printed once that happened again: how often, last.
    for (error, times) in errors.repeats() {
        errln!("error: {error} ×{times}");
    }
    let failed = errors.count() > 0 || game.failed() || refused || profile_failed;
    drop(game);
    // Ctrl-C is how a watching run ends; any other run it cuts short.
    if ctrl_c.pressed() && !args.watch {
        return Ok(ExitCode::from(INTERRUPTED));
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// After the run: the keys it added that the mod uses one way only are
/// said, then the table is saved (merged with what changed on disk since
/// the run read it; a part both changed keeps the file's version, said) —
/// or, `locked`, what would have changed is said and nothing saved.
/// Whether `--locked` refused.
fn finish_table(game: &mut Game, dir: &std::path::Path, locked: bool) -> anyhow::Result<bool> {
    let Some(path) = game.table_path().map(|p| p.display().to_string()) else {
        return Ok(false);
    };
    let before = game.table_before().clone();
    let after = game.hub().table_snapshot();
    // Only a run that writes a table can write a mistake into it.
    for finding in crate::contract::unpaired(dir, &before, &after) {
        errln!("warning: {finding}");
    }
    if locked {
        let changes = crate::contract::changes(&before, &after);
        if changes.is_empty() {
            return Ok(false);
        }
        errln!("error: --locked: the run would change the signature table {path}:");
        for change in &changes {
            errln!("  {change}");
        }
        errln!("note: run without --locked to record them, then commit the table");
        return Ok(true);
    }
    if let Some(saved) = game.save_table()? {
        for conflict in &saved.conflicts {
            errln!("warning: {path}: {conflict}");
        }
    }
    Ok(false)
}
