//! Recordings of a run, and their replay: how a player's bug report
//! becomes a regression test.
//!
//! A recording is JSON lines, appended as the run goes, so a crash leaves
//! a readable prefix:
//!
//! ```text
//! {"gantry_recording":1,"mods":[{"name":"quest","version":"0.1.0"}],"table":"9f2c…"}
//! {"t":0,"out":"Quest.Start","src":"object#3","args":["wolves",{"struct":"Reward","fields":{"gold":50}}]}
//! {"t":1,"in":"Game.Tick","src":"global","args":[1,0.016666666666666666]}
//! {"t":1,"out":"Quest.Done","src":"object#4","args":["wolves"]}
//! {"end":true,"ticks":1}
//! ```
//!
//! The header names the format's version, the mods and their versions and
//! a hash of the signature table the run started with. Then one line per
//! dispatch: an *input* (`in`) is one that enters the mods from outside
//! (made by the host once the mods are loaded, outside any listener: the
//! ticks, a game's events), an *output* (`out`) every other (what the
//! mods send, their top levels' too, at tick 0). `t` is the tick. A run
//! that ends cleanly writes `end`; a recording without it was cut.
//!
//! Values are JSON: `null`, booleans, integers, floats (always with a `.`
//! or an exponent; `{"float":"nan"}` and `±inf` spelled so), strings,
//! arrays, `{"struct":name,"fields":{…}}`, `{"object":id}`.
//!
//! The recorder is the hub's dispatch log ([`gantry_host::dispatch_log`]),
//! not a tracer, so a script runtime's own delivery (the Lua lane) stays
//! on and logs its sends itself; without `--record` none is installed and
//! recording costs nothing. On the game thread a dispatch costs a compact
//! record appended to a buffer; a thread of its own formats the lines and
//! writes the file (`writer`: the `tracing-appender` non-blocking pattern).
//! The buffer is lent to the Lua lanes ([`gantry_host::SendSink`]): a
//! lane's send nested in a dispatch appends its record there itself, with
//! the head the recorder made for the lane once, and calls the recorder
//! only when the buffer is full, the tick moved or the send is outermost.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use gantry_host::face::Faced;
use gantry_host::trace::Delivery;
use gantry_host::value::StructValue;
use gantry_host::{
    Caller, DispatchLog, Hub, Key, LaneSink, Logged, ObjectId, Source, TraceEvent, Value,
};
use serde_json::{Map, Number, Value as Json, json};

use crate::Game;

mod writer;

/// The format's version, written in the header and checked on replay.
pub const VERSION: u64 = 1;
/// The largest recording replay reads, in bytes.
pub const MAX_RECORDING_BYTES: u64 = 256 * 1024 * 1024;
/// The largest one line of a recording may be, in bytes.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// A dispatch as recorded: its tick, key, source and values.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    pub tick: u64,
    pub key: String,
    pub source: String,
    pub args: Json,
}

impl std::fmt::Display for Dispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let args: Vec<String> = match &self.args {
            Json::Array(items) => items.iter().map(Json::to_string).collect(),
            other => vec![other.to_string()],
        };
        write!(f, "{}({}) from {}", self.key, args.join(", "), self.source)
    }
}

/// A value as a recording writes it.
pub fn value_to_json(value: &Value) -> Json {
    match value {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::from(*n),
        Value::Float(x) => match Number::from_f64(*x) {
            Some(n) => Json::Number(n),
            None => json!({ "float": format!("{x}") }),
        },
        Value::Str(s) => Json::String(s.to_string()),
        Value::Object(o) => json!({ "object": o.get() }),
        Value::Struct(s) => {
            let fields: Map<String, Json> = s
                .fields
                .iter()
                .map(|(name, v)| (name.to_string(), value_to_json(v)))
                .collect();
            json!({ "struct": s.name.to_string(), "fields": fields })
        }
        Value::Array(items) => Json::Array(items.iter().map(value_to_json).collect()),
    }
}

/// Writes `value` as [`value_to_json`] would, byte for byte, without
/// building it: what the recorder does for every dispatch, so a value
/// costs its bytes and no allocation.
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(x) => write_float(out, *x),
        Value::Str(s) => write_str(out, s),
        Value::Object(o) => {
            let _ = write!(out, "{{\"object\":{}}}", o.get());
        }
        Value::Struct(s) => {
            out.extend_from_slice(b"{\"struct\":");
            write_str(out, &s.name);
            out.extend_from_slice(b",\"fields\":{");
            for (i, (name, v)) in s.fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, name);
                out.push(b':');
                write_value(out, v);
            }
            out.extend_from_slice(b"}}");
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, v);
            }
            out.push(b']');
        }
    }
}

/// A float as [`value_to_json`] writes it: a JSON number, or
/// `{"float":"NaN"}` and `±inf` spelled so.
fn write_float(out: &mut Vec<u8>, x: f64) {
    if x.is_finite() {
        let _ = serde_json::to_writer(&mut *out, &x);
    } else {
        let _ = write!(out, "{{\"float\":\"{x}\"}}");
    }
}

/// A JSON string, escaped as serde_json escapes it.
fn write_str(out: &mut Vec<u8>, text: &str) {
    let _ = serde_json::to_writer(&mut *out, text);
}

/// A recorded value read back; `None` when it is no value a recording
/// writes.
pub fn json_to_value(json: &Json) -> Option<Value> {
    Some(match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) if !n.is_f64() => Value::Int(i),
            _ => Value::Float(n.as_f64()?),
        },
        Json::String(s) => Value::str(s),
        Json::Array(items) => Value::array(items.iter().map(json_to_value).collect::<Option<_>>()?),
        Json::Object(map) => {
            if let Some(text) = map.get("float").and_then(Json::as_str) {
                Value::Float(text.parse().ok()?)
            } else if let Some(id) = map.get("object").and_then(Json::as_u64) {
                Value::Object(ObjectId::from_raw(id)?)
            } else {
                let name = map.get("struct")?.as_str()?;
                let mut value = StructValue::new(name);
                for (field, v) in map.get("fields")?.as_object()? {
                    value.set(field, json_to_value(v)?);
                }
                Value::structure(value)
            }
        }
    })
}

/// FNV-1a, 64 bits: stable across runs and builds.
fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// A stable hash of the signature table (of its JSON), so a replay can
/// say the table changed since the recording.
pub fn table_hash(hub: &Hub) -> String {
    let text = serde_json::to_string(&hub.table_snapshot()).unwrap_or_default();
    format!("{:016x}", fnv(text.bytes()))
}

/// A hash of the saved state a game loads before its first tick (the
/// regular files of `GAME/.gantry/saved/`, names and contents, each read
/// up to 64 MiB); `None` when there is none. The state is an input the
/// loader replays, so a replay from another state may differ from tick 0.
pub fn saved_state_hash(root: &Path) -> Option<String> {
    const MAX_READ: u64 = 64 * 1024 * 1024;
    let dir = root.join(crate::saved::SAVED_DIR);
    if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file()))
        .collect();
    if files.is_empty() {
        return None;
    }
    files.sort();
    let mut all = Vec::new();
    for file in files {
        all.extend(file.file_name()?.to_string_lossy().bytes());
        all.push(0);
        if let Ok(f) = std::fs::File::open(&file) {
            let _ = f.take(MAX_READ).read_to_end(&mut all);
        }
        all.push(0);
    }
    Some(format!("{:016x}", fnv(all)))
}

/// The header line of a recording of `game`.
fn header(game: &Game) -> Json {
    let mods: Vec<Json> = game
        .mods()
        .iter()
        .map(|m| json!({ "name": m.name, "version": m.version }))
        .collect();
    json!({
        "gantry_recording": VERSION,
        "mods": mods,
        "table": table_hash(game.hub()),
        "saved": saved_state_hash(game.root()),
    })
}

/// Tells inputs from outputs as the dispatches go by: an input is a
/// dispatch at the outermost level once the mods are loaded.
struct Classifier {
    depth: Cell<usize>,
    loaded: Cell<bool>,
}

impl Classifier {
    fn new() -> Self {
        Self {
            depth: Cell::new(0),
            loaded: Cell::new(false),
        }
    }

    /// For a traced event: `Some(is_input)` for a dispatch.
    fn on_event(&self, event: &TraceEvent<'_>) -> Option<bool> {
        match event {
            TraceEvent::Dispatch { delivery, .. } => {
                let depth = self.depth.get();
                self.depth.set(depth + 1);
                Some(depth == 0 && self.loaded.get() && *delivery != Delivery::Replay)
            }
            TraceEvent::End { .. } | TraceEvent::HookDone { .. } => {
                self.depth.set(self.depth.get().saturating_sub(1));
                None
            }
            _ => None,
        }
    }
}

/// What the recorder keeps on the game thread.
struct GameSide {
    batch: writer::Batcher,
    /// The keys whose names the writer has been told, by index.
    named: Vec<bool>,
    /// The tick the buffer was last handed over in.
    handed: u32,
    /// The last named source and its name (a mod's sends come from a few
    /// sources, one after another).
    last_named: Option<(Source, String)>,
    /// The first failure (recording stops there).
    failed: Option<String>,
    /// Recording has stopped (it failed, or the writer was closed).
    stopped: bool,
    /// The recording's path, for an error.
    path: PathBuf,
}

/// The recorder's dispatch log: one compact record per dispatch.
struct Log {
    hub: Hub,
    tick: Rc<Cell<u32>>,
    loaded: Cell<bool>,
    side: RefCell<GameSide>,
}

impl DispatchLog for Log {
    /// Runs for every dispatch of the run, a Lua lane's too: the common
    /// case (an output of a key already named, in the tick of the last
    /// record, from a source named by its id) is one record appended.
    #[inline]
    fn dispatch(&self, d: &Logged<'_>) {
        let Ok(mut side) = self.side.try_borrow_mut() else {
            return;
        };
        let side = &mut *side;
        let input = d.outermost && self.loaded.get() && d.delivery != Delivery::Replay;
        let tick = self.tick.get();
        let key = d.key.index();
        let common = !input
            && tick == side.batch.sink().stamped()
            && side.named.get(key) == Some(&true)
            && !matches!(d.source, Source::Named(..))
            && !side.stopped;
        if !common && !self.prepare(side, d, input, tick) {
            return;
        }
        let named = match d.source {
            Source::Named(..) => side.last_named.as_ref().map(|(_, name)| name.as_str()),
            _ => None,
        };
        let Some(mut buf) = side.batch.buf() else {
            return;
        };
        writer::dispatch(&mut buf, input, key as u32, d.source, named, d.args);
        let full = buf.len() >= writer::BATCH_BYTES;
        drop(buf);
        if full {
            side.hand_over();
        }
    }

    /// A lane's sends nested in a dispatch are outputs of one key from one
    /// source: the lane is lent the batch buffer with their record's head
    /// made once, and the key is named here. A named source's sends take
    /// the general way.
    fn lane_sink(&self, key: Key, source: Source, params: usize) -> Option<LaneSink> {
        if matches!(source, Source::Named(..)) {
            return None;
        }
        let mut side = self.side.try_borrow_mut().ok()?;
        let side = &mut *side;
        if side.stopped {
            return None;
        }
        let head = writer::lane_head(key.index() as u32, source, params)?;
        if side.named.get(key.index()) != Some(&true) {
            let mut buf = side.batch.buf()?;
            name_key(&mut side.named, &mut buf, &self.hub, key);
        }
        Some(LaneSink::new(side.batch.sink().clone(), head, params))
    }
}

impl Log {
    /// What a dispatch needs before its record, out of the common case:
    /// an input hands the buffer over in a new tick; a new tick, a key
    /// not named yet and a named source are told the writer. `false`:
    /// recording has stopped.
    #[cold]
    fn prepare(&self, side: &mut GameSide, d: &Logged<'_>, input: bool, tick: u32) -> bool {
        if side.stopped {
            return false;
        }
        if input && tick != side.handed {
            // What came before a new tick's input is handed over: a crash
            // loses at most the tick under way.
            side.handed = tick;
            side.hand_over();
            if side.stopped {
                return false;
            }
        }
        let Some(mut buf) = side.batch.buf() else {
            return false;
        };
        let sink = side.batch.sink();
        if tick != sink.stamped() {
            sink.stamp(tick);
            writer::tick(&mut buf, tick);
        }
        if side.named.get(d.key.index()) != Some(&true) {
            name_key(&mut side.named, &mut buf, &self.hub, d.key);
        }
        drop(buf);
        if matches!(d.source, Source::Named(..))
            && side.last_named.as_ref().is_none_or(|(s, _)| *s != d.source)
        {
            side.last_named = Some((d.source, self.hub.source_name(d.source)));
        }
        true
    }
}

/// Tells the writer `key`'s name (before its first record) and notes it
/// told: `named` is by key index.
fn name_key(named: &mut Vec<bool>, buf: &mut Vec<u8>, hub: &Hub, key: Key) {
    let index = key.index();
    if named.len() <= index {
        named.resize(index + 1, false);
    }
    named[index] = true;
    writer::key(buf, index as u32, &hub.key_name(key));
}

impl GameSide {
    fn hand_over(&mut self) {
        if !self.stopped && self.batch.hand_over().is_err() {
            self.writer_gone();
        }
    }

    /// The writer stopped (a write failed): its error, and recording stops.
    #[cold]
    fn writer_gone(&mut self) {
        let error = match self.batch.close() {
            Err(e) => e.to_string(),
            Ok(()) => "the writer stopped".to_owned(),
        };
        self.failed = Some(format!(
            "{}: {error}; recording stopped",
            self.path.display()
        ));
        self.stopped = true;
    }
}

/// Writes a recording while a game runs: installed as the hub's dispatch
/// log by [`Recorder::create`]; call [`Recorder::loaded`] once the mods
/// are loaded and [`Recorder::finish`] at the end (dropped unfinished, it
/// writes what it has, without the end line).
pub struct Recorder {
    log: Rc<Log>,
}

impl Recorder {
    /// Creates (or truncates) `path`, writes the header of `game` and
    /// starts recording every dispatch of its hub; `tick` is the tick the
    /// host is in (0 while loading).
    ///
    /// A file already there is replaced only if it is a recording: a
    /// mistyped path never costs the user a script, and a FIFO or device is
    /// never opened.
    pub fn create(path: &Path, game: &Game, tick: Rc<Cell<u32>>) -> std::io::Result<Self> {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            let refuse = |why: &str| Err(std::io::Error::other(why.to_owned()));
            if !meta.file_type().is_file() {
                return refuse("not a regular file; nothing recorded");
            }
            let mut start = Vec::new();
            std::fs::File::open(path)?
                .take(64)
                .read_to_end(&mut start)?;
            if meta.len() > 0 && !start.starts_with(b"{\"gantry_recording\"") {
                return refuse("exists and is not a recording; not overwritten");
            }
        }
        let mut file = std::fs::File::create(path)?;
        file.write_all(format!("{}\n", header(game)).as_bytes())?;
        Self::start(file, path, game, tick)
    }

    /// Starts recording to `file` (named `path`), its header written.
    fn start(
        file: std::fs::File,
        path: &Path,
        game: &Game,
        tick: Rc<Cell<u32>>,
    ) -> std::io::Result<Self> {
        let batch = writer::Batcher::start(file, tick.clone())?;
        let log = Rc::new(Log {
            hub: game.hub().clone(),
            tick,
            loaded: Cell::new(false),
            side: RefCell::new(GameSide {
                batch,
                named: Vec::new(),
                handed: 0,
                last_named: None,
                failed: None,
                stopped: false,
                path: path.to_path_buf(),
            }),
        });
        game.hub().set_dispatch_log(Some(log.clone()));
        Ok(Self { log })
    }

    /// Scripts load (a reload while watching): outermost dispatches are
    /// their top levels' sends, outputs, until [`Recorder::loaded`].
    pub fn loading(&self) {
        self.log.loaded.set(false);
    }

    /// The mods are loaded: outermost dispatches from now on are inputs.
    /// What was recorded so far is handed to the writer.
    pub fn loaded(&self) {
        self.log.loaded.set(true);
        self.log.side.borrow_mut().hand_over();
    }

    /// Stops recording: writes the end line, lets the writer finish and
    /// joins it; the first write that failed, if any.
    pub fn finish(&self) -> Result<(), String> {
        self.stop(true)
    }

    fn stop(&self, clean: bool) -> Result<(), String> {
        let hub = &self.log.hub;
        if hub.dispatch_log().is_some() {
            hub.set_dispatch_log(None);
        }
        let mut side = self.log.side.borrow_mut();
        let side = &mut *side;
        if !side.stopped {
            side.stopped = true;
            if clean && let Some(mut buf) = side.batch.buf() {
                writer::end(&mut buf, self.log.tick.get());
            }
            if let Err(e) = side.batch.close() {
                side.failed = Some(format!("{}: {e}; recording stopped", side.path.display()));
            }
        }
        match side.failed.clone() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.stop(false);
    }
}

/// A recording read for replay.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The mods and versions it was made with.
    pub mods: Vec<(String, Option<String>)>,
    pub table: String,
    /// The hash of the saved state it started from ([`saved_state_hash`]).
    pub saved: Option<String>,
    pub lines: Vec<Line>,
    /// Whether it ends with its `end` line; if not, where it was cut.
    pub complete: bool,
}

/// One dispatch line of a recording.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Input(Dispatch),
    Output(Dispatch),
}

/// A recording that cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("{path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}: not a regular file")]
    NotAFile { path: String },
    #[error("{path}: over {MAX_RECORDING_BYTES} bytes, more than a recording may have")]
    TooLarge { path: String },
    #[error("{path}: not a gantry recording (its first line is no recording header)")]
    NoHeader { path: String },
    #[error("{path}: a recording of format version {found}; this gantry reads version {VERSION}")]
    Version { path: String, found: u64 },
    #[error("{path}:{line}: {what}")]
    Line {
        path: String,
        line: usize,
        what: String,
    },
}

impl Recording {
    /// Reads the recording at `path`: a regular file (never a FIFO) of at
    /// most [`MAX_RECORDING_BYTES`]. A last line cut short (no newline,
    /// not a record) or a missing `end` is a cut recording, not an error.
    pub fn read(path: &Path) -> Result<Self, RecordingError> {
        let name = path.display().to_string();
        let read_err = |error| RecordingError::Read {
            path: name.clone(),
            error,
        };
        let meta = std::fs::metadata(path).map_err(read_err)?;
        if !meta.is_file() {
            return Err(RecordingError::NotAFile { path: name });
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(read_err)?
            .take(MAX_RECORDING_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read_err)?;
        if bytes.len() as u64 > MAX_RECORDING_BYTES {
            return Err(RecordingError::TooLarge { path: name });
        }
        let text = String::from_utf8_lossy(&bytes);
        Self::parse(&text, &name)
    }

    /// Parses a recording's text (`path` names it in errors).
    pub fn parse(text: &str, path: &str) -> Result<Self, RecordingError> {
        let ends_whole = text.ends_with('\n');
        let all: Vec<&str> = text.lines().collect();
        let mut lines = all.iter().enumerate();
        let header: Json = lines
            .next()
            .and_then(|(_, l)| serde_json::from_str(l).ok())
            .ok_or_else(|| RecordingError::NoHeader { path: path.into() })?;
        let version = header
            .get("gantry_recording")
            .and_then(Json::as_u64)
            .ok_or_else(|| RecordingError::NoHeader { path: path.into() })?;
        if version != VERSION {
            return Err(RecordingError::Version {
                path: path.into(),
                found: version,
            });
        }
        let mut recording = Recording {
            table: header
                .get("table")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned(),
            saved: header
                .get("saved")
                .and_then(Json::as_str)
                .map(str::to_owned),
            ..Recording::default()
        };
        for m in header
            .get("mods")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = m.get("name").and_then(Json::as_str) {
                let version = m.get("version").and_then(Json::as_str).map(str::to_owned);
                recording.mods.push((name.to_owned(), version));
            }
        }
        for (at, text) in lines {
            let number = at + 1;
            let last = number == all.len();
            let bad = |what: String| RecordingError::Line {
                path: path.into(),
                line: number,
                what,
            };
            if text.len() > MAX_LINE_BYTES {
                return Err(bad(format!("a line over {MAX_LINE_BYTES} bytes")));
            }
            let json: Json = match serde_json::from_str(text) {
                Ok(json) => json,
                // A crash mid-write: the prefix before it is the recording.
                Err(_) if last && !ends_whole => break,
                Err(e) => return Err(bad(format!("not a record: {e}"))),
            };
            if json.get("end").is_some() {
                recording.complete = true;
                break;
            }
            let dispatch = |key: &Json| -> Result<Dispatch, RecordingError> {
                Ok(Dispatch {
                    tick: json
                        .get("t")
                        .and_then(Json::as_u64)
                        .ok_or_else(|| bad("no tick `t`".into()))?,
                    key: key
                        .as_str()
                        .ok_or_else(|| bad("its key is not a string".into()))?
                        .to_owned(),
                    source: json
                        .get("src")
                        .and_then(Json::as_str)
                        .unwrap_or("global")
                        .to_owned(),
                    args: match json.get("args") {
                        Some(args @ Json::Array(_)) => args.clone(),
                        _ => return Err(bad("no `args` array".into())),
                    },
                })
            };
            if let Some(key) = json.get("in") {
                recording.lines.push(Line::Input(dispatch(key)?));
            } else if let Some(key) = json.get("out") {
                recording.lines.push(Line::Output(dispatch(key)?));
            } else {
                return Err(bad("neither an `in`, an `out` nor the `end`".into()));
            }
        }
        Ok(recording)
    }
}

/// How a replay ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every output the recording has was sent again, in order.
    Equal { inputs: usize, outputs: usize },
    /// The first difference: at tick `tick`, `expected` (`None`: nothing
    /// more) against `got` (`None`: nothing).
    Differs {
        tick: u64,
        expected: Option<Box<Dispatch>>,
        got: Option<Box<Dispatch>>,
    },
}

/// Replays `recording` on `game` (opened, not loaded): loads the mods,
/// then sends each recorded input as the host did, comparing what the
/// mods send (key and values) with what was recorded, in order. For a cut
/// recording the prefix is compared: what the mods send after its last
/// line is not a difference.
pub fn replay(game: &mut Game, recording: &Recording) -> Verdict {
    let hub = game.hub().clone();
    let tick = Rc::new(Cell::new(0u64));
    let produced: Rc<RefCell<VecDeque<Dispatch>>> = Rc::default();
    let classify = Rc::new(Classifier::new());
    let (keep, now, names, sort) = (
        produced.clone(),
        tick.clone(),
        hub.clone(),
        classify.clone(),
    );
    // The game's: a quarantine game.toml asks for acts as in the run.
    game.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
        if sort.on_event(event) == Some(false)
            && let TraceEvent::Dispatch {
                key, source, args, ..
            } = event
        {
            keep.borrow_mut().push_back(Dispatch {
                tick: now.get(),
                key: (*key).to_owned(),
                source: names.source_name(*source),
                args: Json::Array(args.iter().map(value_to_json).collect()),
            });
        }
    })));
    game.load();
    classify.loaded.set(true);
    let (mut inputs, mut outputs) = (0, 0);
    let same = |a: &Dispatch, b: &Dispatch| a.key == b.key && a.args == b.args;
    let verdict = 'replay: {
        for line in &recording.lines {
            match line {
                Line::Output(expected) => {
                    let got = produced.borrow_mut().pop_front();
                    match got {
                        Some(got) if same(expected, &got) => outputs += 1,
                        got => {
                            break 'replay Verdict::Differs {
                                tick: expected.tick,
                                expected: Some(Box::new(expected.clone())),
                                got: got.map(Box::new),
                            };
                        }
                    }
                }
                Line::Input(input) => {
                    if let Some(extra) = produced.borrow_mut().pop_front() {
                        break 'replay Verdict::Differs {
                            tick: extra.tick,
                            expected: None,
                            got: Some(Box::new(extra)),
                        };
                    }
                    tick.set(input.tick);
                    send_input(&hub, input);
                    inputs += 1;
                }
            }
        }
        if recording.complete
            && let Some(extra) = produced.borrow_mut().pop_front()
        {
            break 'replay Verdict::Differs {
                tick: extra.tick,
                expected: None,
                got: Some(Box::new(extra)),
            };
        }
        Verdict::Equal { inputs, outputs }
    };
    game.set_tracer(None);
    verdict
}

/// Sends a recorded input as the host did: from its object if that is
/// alive still, else globally. Values that cannot be read back are sent
/// as nil (the comparison then says where it matters).
fn send_input(hub: &Hub, input: &Dispatch) {
    let Ok(key) = hub.key(&input.key) else {
        return;
    };
    let mut args: Vec<Value> = input
        .args
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|j| json_to_value(j).unwrap_or(Value::Nil))
                .collect()
        })
        .unwrap_or_default();
    let source = input
        .source
        .strip_prefix("object#")
        .and_then(|id| id.parse().ok())
        .and_then(ObjectId::from_raw)
        .filter(|o| hub.is_alive(*o))
        .map_or(Source::Global, Source::from);
    let _ = hub.send_values(key, source, &mut args, Caller::Unrecorded);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(value: Value) -> Value {
        let text = value_to_json(&value).to_string();
        json_to_value(&serde_json::from_str(&text).unwrap()).unwrap()
    }

    #[test]
    fn every_kind_of_value_reads_back_as_it_was_written() {
        let reward = StructValue::new("Reward")
            .with("gold", 50i64)
            .with("item", "sword");
        for value in [
            Value::Nil,
            Value::Bool(true),
            Value::Int(-7),
            Value::Float(1.0),
            Value::Float(f64::INFINITY),
            Value::Float(f64::NAN),
            Value::str("wolves"),
            Value::Object(ObjectId::from_raw(3).unwrap()),
            Value::structure(reward),
            Value::array(vec![Value::Int(1), Value::Float(2.5)]),
        ] {
            assert_eq!(round_trip(value.clone()), value);
        }
    }

    #[test]
    fn a_recording_cut_before_its_first_dispatch_is_an_empty_cut_recording() {
        let text =
            "{\"gantry_recording\":1,\"mods\":[],\"table\":\"0\"}\n{\"t\":1,\"in\":\"Game.Ti";
        let recording = Recording::parse(text, "r.rec").unwrap();
        assert!(recording.lines.is_empty());
        assert!(!recording.complete);
    }

    #[test]
    fn a_recording_whose_disk_is_full_stops_with_its_error_and_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("main.lua"),
            r#"
            ListenMessage("Hit", nil, function(i, s) end)
            ListenMessage("Run", nil, function(n)
              for i = 1, n do NotifyMessage("Hit", i, "some forty bytes of text to fill it up") end
            end)
            "#,
        )
        .unwrap();
        let options = crate::Options {
            table: crate::TableChoice::Off,
            ..crate::Options::default()
        };
        let mut game = Game::open(dir.path(), options).unwrap();
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let tick = Rc::new(Cell::new(0u32));
        let recorder = Recorder::start(full, Path::new("/dev/full"), &game, tick.clone()).unwrap();
        game.load();
        recorder.loaded();
        let run = game.hub().key("Run").unwrap();
        // Far more than the buffers in flight: the writer's failure
        // reaches the game thread, and the sends go on unrecorded.
        for t in 1..=20u32 {
            tick.set(t);
            game.hub().send(run, Source::Global, (2_000i64,)).unwrap();
        }
        assert!(game.hub().take_reports().is_empty(), "the sends all ran");
        let error = recorder.finish().unwrap_err();
        assert!(
            error.starts_with("/dev/full: ") && error.ends_with("; recording stopped"),
            "{error}"
        );
    }

    #[test]
    fn a_broken_line_before_the_last_is_an_error_naming_its_line() {
        let text = "{\"gantry_recording\":1}\nnot json\n{\"end\":true}\n";
        let error = Recording::parse(text, "r.rec").unwrap_err().to_string();
        assert!(error.starts_with("r.rec:2: not a record"), "{error}");
    }
}
