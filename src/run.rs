//! `gantry run DIR`: host the mod's scripts in one world and tick it.
//!
//! Every script file directly in DIR is loaded in file-name order, each on a
//! fresh object of one world (its `self`). Languages plug in as
//! [`ScriptEngine`]s, chosen by file extension, so a `.rhai` engine slots in
//! beside the Lua one. After the top levels run, each tick is
//! `NotifyMessage("Game.Tick", n, dt)` with n from 1. Script output goes to
//! stdout; every reported error goes to stderr with its file:line, and makes
//! the exit status 1.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;

use anyhow::Context;
use gantry_host::{DEFAULT_TABLE_PATH, Hub, ObjectId, SignatureTable, Source};
use gantry_lua::runtime::{LuaRuntime, RuntimeOptions};

/// The seconds one tick stands for.
const TICK_DT: f64 = 1.0 / 60.0;

/// The key each tick is sent on.
pub const TICK_KEY: &str = "Game.Tick";

/// One script language of the mod host.
pub trait ScriptEngine {
    /// The file extension this engine loads (`lua`).
    fn extension(&self) -> &'static str;
    /// Loads one script attached to `object` and runs its top level. The
    /// error names the file and line.
    fn load(&mut self, file: &str, source: &str, object: ObjectId) -> Result<(), String>;
    /// Errors filed since the last call that no hub report carries.
    fn take_errors(&mut self) -> Vec<String>;
}

/// Lua scripts through `gantry-lua`.
pub struct LuaEngine {
    runtime: LuaRuntime,
}

impl LuaEngine {
    pub fn new(hub: &Hub, dir: &Path) -> anyhow::Result<Self> {
        let options = RuntimeOptions {
            mod_dir: Some(dir.to_path_buf()),
            ..RuntimeOptions::default()
        };
        let runtime = LuaRuntime::new(hub.clone(), options).context("starting Lua")?;
        Ok(Self { runtime })
    }
}

impl ScriptEngine for LuaEngine {
    fn extension(&self) -> &'static str {
        "lua"
    }

    fn load(&mut self, file: &str, source: &str, object: ObjectId) -> Result<(), String> {
        self.runtime
            .load_script(file, source, object)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn take_errors(&mut self) -> Vec<String> {
        self.runtime
            .take_errors()
            .into_iter()
            .map(|e| e.to_string())
            .collect()
    }
}

/// What `gantry run` was asked to do.
pub struct RunArgs {
    pub dir: PathBuf,
    pub ticks: u32,
    /// The table file (default `DIR/.gantry/signatures.json`).
    pub table: Option<PathBuf>,
    /// Neither load nor save a table.
    pub no_table: bool,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.dir;
    anyhow::ensure!(dir.is_dir(), "{} is not a folder", dir.display());
    let table_path = (!args.no_table).then(|| {
        args.table
            .clone()
            .unwrap_or_else(|| dir.join(DEFAULT_TABLE_PATH))
    });
    let table = match &table_path {
        Some(path) => SignatureTable::load(path)
            .with_context(|| format!("loading the signature table {}", path.display()))?,
        None => SignatureTable::new(),
    };
    let hub = Hub::with_table(table);
    let errors = Rc::new(Cell::new(0usize));
    let count = errors.clone();
    hub.on_report(move |report| {
        count.set(count.get() + 1);
        eprintln!("error: {report}");
    });
    let mut engines: Vec<Box<dyn ScriptEngine>> = vec![Box::new(LuaEngine::new(&hub, dir)?)];
    let world = hub.create_world();
    let report_engine_errors = |engines: &mut Vec<Box<dyn ScriptEngine>>| {
        for engine in engines.iter_mut() {
            for error in engine.take_errors() {
                errors.set(errors.get() + 1);
                eprintln!("error: {error}");
            }
        }
    };
    for path in script_files(dir, &engines)? {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let source = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let object = hub.spawn(world).context("spawning a script object")?;
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if let Some(engine) = engines.iter_mut().find(|e| e.extension() == extension)
            && let Err(error) = engine.load(&file, &source, object)
        {
            errors.set(errors.get() + 1);
            eprintln!("error: {error}");
        }
        report_engine_errors(&mut engines);
    }
    let tick = hub.key(TICK_KEY)?;
    for n in 1..=args.ticks {
        // Errors of this send are the hub's reports, printed as they happen.
        let _ = hub.send(tick, Source::Global, (i64::from(n), TICK_DT));
        report_engine_errors(&mut engines);
    }
    if let Some(path) = &table_path {
        hub.table_snapshot()
            .save(path)
            .with_context(|| format!("saving the signature table {}", path.display()))?;
    }
    drop(engines);
    Ok(if errors.get() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The script files directly in `dir` that some engine loads, by file name.
fn script_files(dir: &Path, engines: &[Box<dyn ScriptEngine>]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let known = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| engines.iter().any(|e| e.extension() == ext));
        if known && path.is_file() {
            files.push(path);
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}
