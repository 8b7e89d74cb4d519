//! `gantry run DIR`: host the mod's scripts in one world and tick it.
//!
//! Every script file (`*.lua`, `*.rhai`) directly in DIR is loaded in
//! file-name order, each on a fresh object of one world (its `self`). Languages plug in as
//! [`ScriptRuntime`]s, chosen by file extension. After the top levels run,
//! each tick is `NotifyMessage("Game.Tick", n, dt)` with n from 1. Script
//! output goes to stdout; every reported error goes to stderr with its
//! file:line, and makes the exit status 1.
//!
//! With `--watch` the host keeps ticking every `--tick-ms` and reloads a
//! script whose file changed (see [`crate::watch`]), and `mod.toml` too: an
//! edited manifest declares its keys again, a broken one is said and the
//! declarations stay. Ctrl-C stops any run
//! after its tick, interrupting a script that does not return
//! ([`crate::interrupt`]), saves the table and exits. `--budget`,
//! `--time-limit` and `--memory` bound each script call ([`crate::limits`]). With `--trace` every dispatch is printed to stderr; with
//! `--why KEY` a report on KEY's listeners follows the run ([`crate::why`]).
//!
//! The mod's `mod.toml`, if any, is read first: a manifest that cannot be
//! used is every finding printed and exit status 2, nothing run. Its keys
//! are declared on the hub after the table file is merged, as the host's
//! own `Game.Tick` is, so a send that contradicts one is refused at the
//! script's line. After the run, the keys it added that the mod uses one
//! way only are said, with did-you-mean; `--locked` saves nothing and
//! fails if the run would have changed the table ([`crate::contract`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use gantry_host::face::Faced;
use gantry_host::face::ScriptRuntime;
use gantry_host::files::FileError;
use gantry_host::key::validate_key;
use gantry_host::{Caller, Hub, KeyDecl, ObjectId, Source, TraceEvent, Type, Value, WorldId};
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use gantry_rhai::{RhaiOptions, RhaiRuntime};

use crate::error_printer::ErrorPrinter;
use crate::interrupt::{CtrlC, INTERRUPTED, Interrupt};
use crate::limits::LimitArgs;
use crate::out::{err, errln, out, outln};
use crate::trace_out::{KeyFilter, TracePrinter};
use crate::watch::{Change, ManifestWatch, Watcher};
use crate::why::{Describe, WhyRecorder};

/// The seconds one tick stands for.
const TICK_DT: f64 = 1.0 / 60.0;

/// The key each tick is sent on.
pub const TICK_KEY: &str = "Game.Tick";

/// The file name earlier versions recorded the tick's send site under: no
/// file a user could open, so a table that still has it loses it.
const OLD_TICK_SITE: &str = "(gantry run)";

/// The tick as `gantry run` declares it to every mod (and `gantry check`
/// and the language server know it from): no site, since no line of the
/// mod declares it and gantry's own source is no place to send a modder.
pub fn tick_decl() -> KeyDecl {
    KeyDecl::event()
        .doc("Sent by `gantry run` once per tick: the tick's number from 1, and its length in seconds.")
        .param("n", Type::Int)
        .param("dt", Type::Float)
}

/// Both languages, each resolving `require`/`import` in the mod folder,
/// under the run's limits.
fn engines(hub: &Hub, dir: &Path, limits: &LimitArgs) -> anyhow::Result<Engines> {
    let mut lua = LuaOptions {
        mod_dir: Some(dir.to_path_buf()),
        ..LuaOptions::default()
    };
    let mut rhai = RhaiOptions {
        mod_dir: Some(dir.to_path_buf()),
        ..RhaiOptions::default()
    };
    limits.apply(&mut lua, &mut rhai);
    let lua = LuaRuntime::new(hub.clone(), lua).context("starting Lua")?;
    let rhai = RhaiRuntime::new(hub.clone(), rhai).context("starting Rhai")?;
    // A script's `print` must not panic when stdout is closed (`| head`).
    lua.on_print(|line| outln!("{line}"));
    rhai.on_print(|line| outln!("{line}"));
    let (lua_stop, rhai_stop) = (lua.interrupter(), rhai.interrupter());
    Ok(Engines {
        interrupt: Arc::new(move || {
            lua_stop.interrupt();
            rhai_stop.interrupt();
        }),
        engines: vec![Box::new(lua), Box::new(rhai)],
    })
}

/// The run's engines, and what stops the call running in any of them
/// from another thread (Ctrl-C).
struct Engines {
    engines: Vec<Box<dyn ScriptRuntime>>,
    interrupt: Interrupt,
}

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
}

/// A loaded script: which object it lives on and the source it runs.
struct Loaded {
    file: String,
    object: ObjectId,
    source: String,
}

/// The running mod: the hub, its engines and the scripts they loaded.
struct ModHost {
    hub: Hub,
    world: WorldId,
    engines: Vec<Box<dyn ScriptRuntime>>,
    scripts: Vec<Loaded>,
    errors: Rc<ErrorPrinter>,
}

impl ModHost {
    fn error(&self, error: &str) {
        self.errors.print(error);
    }

    fn report_engine_errors(&mut self) {
        let errors: Vec<String> = self
            .engines
            .iter_mut()
            .flat_map(|e| e.take_errors())
            .map(|e| e.to_string())
            .collect();
        for error in errors {
            self.error(&error);
        }
        self.errors.end_of_step();
    }

    fn engine_for(&mut self, file: &str) -> Option<&mut Box<dyn ScriptRuntime>> {
        let extension = Path::new(file).extension()?.to_str()?;
        self.engines.iter_mut().find(|e| e.extension() == extension)
    }

    /// Loads `source` as `file` on a fresh object; the object on success.
    fn load(&mut self, file: &str, source: &str) -> Option<ObjectId> {
        let object = match self.hub.spawn(self.world) {
            Ok(object) => object,
            Err(e) => {
                self.error(&format!("{file}: {e}"));
                return None;
            }
        };
        let result = self.engine_for(file)?.load(file, source, object);
        if let Err(error) = &result {
            self.error(&error.to_string());
        }
        self.report_engine_errors();
        Some(object)
    }

    /// First load of a script.
    fn add(&mut self, file: &str, source: String) {
        if let Some(object) = self.load(file, &source) {
            self.scripts.push(Loaded {
                file: file.to_owned(),
                object,
                source,
            });
        }
    }

    /// Replaces a running script with a new version. A version that does
    /// not compile, or whose top level fails, is reported and the old one
    /// keeps running (reloaded on a fresh object in the second case).
    fn reload(&mut self, file: &str, source: String) {
        let Some(at) = self.scripts.iter().position(|s| s.file == file) else {
            self.add(file, source);
            return;
        };
        let checked = match self.engine_for(file) {
            Some(engine) => engine.check(file, &source),
            None => return,
        };
        if let Err(error) = checked {
            self.error(&format!("{error} (the previous version keeps running)"));
            return;
        }
        let old = self.scripts.remove(at);
        outln!("[reloading {file}]");
        // Its listeners, what it stored and what it owns go with its object.
        let _ = self.hub.destroy(old.object);
        let failures = self.errors.count();
        let object = self.load(file, &source);
        if self.errors.count() > failures {
            if let Some(object) = object {
                let _ = self.hub.destroy(object);
            }
            errln!("note: {file}: the previous version keeps running");
            if let Some(object) = self.load(file, &old.source) {
                self.scripts.insert(at, Loaded { object, ..old });
            }
            return;
        }
        if let Some(object) = object {
            self.scripts.insert(
                at,
                Loaded {
                    file: file.to_owned(),
                    object,
                    source,
                },
            );
        }
    }

    /// A new version of a script that cannot be read: said, and the
    /// previous version (if any) keeps running.
    fn unreadable(&mut self, file: &str, error: &FileError) {
        if self.scripts.iter().any(|s| s.file == file) {
            self.error(&format!("{error}; the previous version keeps running"));
        } else {
            self.error(&error.to_string());
        }
    }

    /// A script's file is gone: so is the script.
    fn remove(&mut self, file: &str) {
        if let Some(at) = self.scripts.iter().position(|s| s.file == file) {
            let old = self.scripts.remove(at);
            let _ = self.hub.destroy(old.object);
            outln!("[unloaded {file}]");
        }
    }
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
    // The manifest is the mod's contract: one that cannot be used stops
    // the run before anything runs, every finding said.
    let manifest = match crate::contract::load_manifest(dir) {
        Ok(manifest) => manifest,
        Err(code) => return Ok(code),
    };
    let mut table_file = if args.no_table {
        None
    } else {
        Some(crate::folder::open_table(dir, args.table.as_deref())?)
    };
    let before = table_file
        .as_ref()
        .map(|file| file.table().clone())
        .unwrap_or_default();
    let hub = Hub::with_table(before.clone());
    // The tick is the host's, declared before any script runs: a mod's
    // send that contradicts it is refused and records nothing, so the
    // ticks keep working (see `Hub::declare`).
    hub.declare_at(TICK_KEY, tick_decl(), None)?;
    hub.edit_table(|table| {
        if let Some(entry) = table.keys.get_mut(TICK_KEY) {
            entry.sites.retain(|site| site.file != OLD_TICK_SITE);
        }
    });
    // Declared after the table file is merged: the manifest is the newer
    // word, and its keys are held as the host's are.
    if let Some(manifest) = &manifest {
        manifest
            .declare_on(&hub)
            .with_context(|| format!("declaring the keys of {}", manifest.file))?;
    }
    let errors = Rc::new(ErrorPrinter::new(|error| errln!("error: {error}")));
    let printed = errors.clone();
    hub.on_report(move |report| printed.report(report.to_string()));
    let tick_now = Rc::new(Cell::new(0u32));
    let printer = (args.trace || args.trace_key.is_some()).then(|| {
        TracePrinter::new(
            hub.clone(),
            tick_now.clone(),
            KeyFilter::new(args.trace_key.as_deref()),
            Box::new(|line| errln!("trace: {line}")),
        )
    });
    let why = (!args.why.is_empty()).then(|| Rc::new(WhyRecorder::new(hub.clone())));
    if printer.is_some() || why.is_some() {
        let recorder = why.clone();
        hub.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
            if let Some(printer) = &printer {
                printer.on_event(event);
            }
            if let Some(recorder) = &recorder {
                recorder.on_event(event);
            }
        })));
    }
    let Engines { engines, interrupt } = engines(&hub, dir, &args.limits)?;
    // Before the first script runs: a top level can loop too.
    let ctrl_c = CtrlC::install(interrupt)?;
    let extensions: Vec<&'static str> = engines.iter().map(|e| e.extension()).collect();
    let world = hub.create_world();
    let mut host = ModHost {
        hub: hub.clone(),
        world,
        engines,
        scripts: Vec::new(),
        errors,
    };
    let mut watcher = Watcher::new(dir, &extensions);
    let mut manifest_watch = ManifestWatch::new(dir);
    // A script that cannot be read (a name or text that is not UTF-8, a
    // special file, a link out of the folder) is an error like one that
    // does not compile: said, and the others still run.
    for change in watcher.scan()? {
        if ctrl_c.pressed() {
            break;
        }
        match change {
            Change::Changed { file, source } => host.add(&file, source),
            Change::Unreadable { error, .. } => host.error(&error.to_string()),
            Change::Removed { .. } => {}
        }
    }

    let ticks = args.ticks.or((!args.watch).then_some(1));
    let tick = hub.key(TICK_KEY)?;
    let tick_len = Duration::from_millis(args.tick_ms);
    // A tick's `dt` is its length: the wall-clock one when watching, a
    // sixtieth of a second when the ticks run back to back.
    let dt = if args.watch {
        tick_len.as_secs_f64()
    } else {
        TICK_DT
    };
    let mut n: u32 = 0;
    let mut next = Instant::now();
    while ticks.is_none_or(|t| n < t) && !ctrl_c.pressed() {
        if args.watch {
            next += tick_len;
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                ctrl_c.sleep(wait);
            }
            if ctrl_c.pressed() {
                break;
            }
            // The manifest first: a script reloaded with it is held to it.
            if let Some(read) = manifest_watch.poll() {
                reload_manifest(&hub, read);
            }
            for change in watcher.poll() {
                match change {
                    Change::Changed { file, source } => host.reload(&file, source),
                    Change::Removed { file } => host.remove(&file),
                    Change::Unreadable { file, error } => host.unreadable(&file, &error),
                }
            }
            if ctrl_c.pressed() {
                break;
            }
        }
        n += 1;
        tick_now.set(n);
        // Errors of this send are the hub's reports, printed as they happen.
        // Unrecorded: the tick's one site is the host's, recorded below, not
        // a line of gantry's own source that moves with every edit.
        let mut args = [Value::Int(i64::from(n)), Value::Float(dt)];
        let _ = hub.send_values(tick, Source::Global, &mut args, Caller::Unrecorded);
        host.report_engine_errors();
    }
    ctrl_c.finished();
    let after = hub.table_snapshot();
    // Only a run that writes a table can write a mistake into it.
    if table_file.is_some() {
        for finding in crate::contract::unpaired(dir, &before, &after) {
            errln!("warning: {finding}");
        }
    }
    let mut refused = false;
    if let Some(file) = &mut table_file {
        let path = file.path().display().to_string();
        if args.locked {
            let changes = crate::contract::changes(&before, &after);
            if !changes.is_empty() {
                errln!("error: --locked: the run would change the signature table {path}:");
                for change in &changes {
                    errln!("  {change}");
                }
                errln!("note: run without --locked to record them, then commit the table");
                refused = true;
            }
        } else {
            // Merged with what changed on disk since the run read it (a
            // hand edit, another run's keys); a part both changed keeps
            // the file's version, said here.
            let saved = file
                .save(&after)
                .with_context(|| format!("saving the signature table {path}"))?;
            for conflict in &saved.conflicts {
                errln!("warning: {path}: {conflict}");
            }
        }
    }
    if let Some(why) = &why {
        let files: HashMap<ObjectId, String> = host
            .scripts
            .iter()
            .map(|s| (s.object, s.file.clone()))
            .collect();
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
    for (error, times) in host.errors.repeats() {
        errln!("error: {error} ×{times}");
    }
    let failed = host.errors.count() > 0 || refused;
    drop(host);
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

/// Declares a `mod.toml` read again while watching, its keys over the
/// table as at the start. One that cannot be used is said, every finding
/// at its line, and the declarations already made stay; so do those of a
/// manifest removed: a declaration is not taken back while the run lasts.
fn reload_manifest(
    hub: &Hub,
    read: Result<Option<gantry_host::manifest::Manifest>, gantry_host::manifest::ManifestErrors>,
) {
    match read {
        Ok(Some(manifest)) => {
            outln!("[reloading {}]", manifest.file);
            if let Err(e) = manifest.declare_on(hub) {
                errln!("error: declaring the keys of {}: {e}", manifest.file);
            }
        }
        Ok(None) => errln!(
            "note: {} was removed; what it declared stays until the run ends",
            gantry_host::manifest::MANIFEST_FILE
        ),
        Err(errors) => {
            let _ = crate::contract::refuse_manifest(&errors, "the previous declarations stay");
        }
    }
}
