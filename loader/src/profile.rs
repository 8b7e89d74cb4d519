//! `gantry run --profile`: where a run's tick time goes, per mod, key and
//! listener, and a flame graph of it (`--profile-out FILE.svg`).
//!
//! Built on the hub's tracer like `--trace`: the host chains
//! [`Profiler::on_event`] into the one tracer it installs, so profiling
//! off installs nothing and costs nothing. A listener's time is its own:
//! the [`TraceEvent::Called`] time less that of the listeners its sends
//! ran, which are counted where they ran. So the shares add up, and a
//! slow listener is named even when a fast one sent to it.
//!
//! With [`Profiler::count_operations`] the table has each Rhai
//! listener's operations (Rhai's unit of work, the one its budget
//! counts), its own as its time is; with [`Profiler::count_instructions`]
//! each Lua listener's VM instructions likewise. Two columns, not one:
//! an operation and an instruction are not the same amount of work, and
//! a shared column would invite comparing them. Lua's count is sampled
//! (see `gantry_lua::runtime::LuaOptions::instruction_counter`): exact
//! on average, within a few hundred instructions per call; and it slows
//! Lua code while it counts, so the CLI asks for it apart.
//!
//! Only the ticks are measured (the load's dispatches are one line):
//! what makes a game slow is what it does every tick. Everything kept
//! is bounded whatever the mods do: rows by [`MAX_ROWS`], flame graph
//! stacks by [`MAX_STACKS`], spikes by [`MAX_SPIKES`].

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gantry_host::TraceEvent;

use crate::game::{Game, ModNames};

/// The most (mod, key, listener) rows kept; the rest are one row.
pub const MAX_ROWS: usize = 10_000;
/// The most distinct flame graph stacks kept; the rest are one stack.
pub const MAX_STACKS: usize = 10_000;
/// The most spikes kept (the worst ones).
pub const MAX_SPIKES: usize = 20;
/// The rows the printed table shows, slowest first.
const SHOWN_ROWS: usize = 40;
/// The listeners a spike names, slowest first.
const SPIKE_NAMES: usize = 3;
/// A flame graph stack longer than this (in bytes) is cut.
const MAX_STACK_BYTES: usize = 4096;
/// The bytes of an existing file read to tell whether it is an SVG.
const SNIFF_BYTES: u64 = 1024;
/// What a listener's label (`file:line`) holds when it is Rhai's, Lua's.
const RHAI: &str = ".rhai:";
const LUA: &str = ".lua:";

/// A flame graph that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{path}: {why}")]
    Refused { path: String, why: &'static str },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// One row of the table: a listener of a key in a mod.
#[derive(Debug, Clone, Default)]
struct Row {
    calls: u64,
    /// Its own time, without the listeners its sends ran.
    total: Duration,
    max: Duration,
    /// Its own work, without that of its sends.
    work: Work,
}

/// Work counted by the runtimes: Rhai's operations, Lua's instructions
/// (each runtime counts its own listeners only).
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    ops: u64,
    instr: u64,
}

impl Work {
    fn since(self, mark: Work) -> Work {
        Work {
            ops: self.ops.saturating_sub(mark.ops),
            instr: self.instr.saturating_sub(mark.instr),
        }
    }

    fn add(&mut self, other: Work) {
        self.ops = self.ops.saturating_add(other.ops);
        self.instr = self.instr.saturating_add(other.instr);
    }
}

/// A dispatch under way.
struct Frame {
    key: String,
    /// When an outermost dispatch started (the tick's time is theirs).
    started: Option<Instant>,
    /// The flame graph stacks of the dispatches the listener running now
    /// caused (each starts with their key), for the listener's `Called`.
    pending: HashMap<String, u64>,
    /// The time the listeners of those dispatches took, to subtract.
    pending_time: Duration,
    /// This dispatch's stacks so far, each from its listener on, by the
    /// mod of that listener.
    stacks: HashMap<(String, String), u64>,
    /// The time its listeners took, their nested sends included.
    time: Duration,
    /// The work counted when its last listener returned (or it began),
    /// the work of the dispatches the listener running now caused, and
    /// its listeners' work, nested sends included.
    mark: Work,
    pending_work: Work,
    work: Work,
}

/// A tick that took longer than the spike threshold.
#[derive(Debug, Clone)]
struct Spike {
    tick: u32,
    time: Duration,
    /// Its slowest listeners, slowest first.
    top: Vec<(String, Duration)>,
}

#[derive(Default)]
struct State {
    stack: Vec<Frame>,
    rows: HashMap<(String, String, String), Row>,
    folded: HashMap<String, u64>,
    /// The ticks' time in outermost dispatches, and the load's.
    tick_time: Duration,
    load_time: Duration,
    load_calls: u64,
    /// The tick being summed, its time and its listeners' own times.
    current: Option<u32>,
    current_time: Duration,
    current_listeners: HashMap<String, Duration>,
    ticks: u32,
    spikes: Vec<Spike>,
    spike_count: u32,
}

/// Gathers a run's profile from its trace events.
pub struct Profiler {
    names: ModNames,
    /// A single mod's name (its files name no mod folder).
    single: Option<String>,
    /// The tick the host is in (0 while the scripts load).
    tick: Rc<Cell<u32>>,
    spike: Duration,
    /// Every Rhai operation of the run ([`Profiler::count_operations`]).
    operations: RefCell<Option<Rc<Cell<u64>>>>,
    /// Every Lua instruction of the run ([`Profiler::count_instructions`]).
    instructions: RefCell<Option<Arc<AtomicU64>>>,
    state: RefCell<State>,
}

impl Profiler {
    /// A profiler of `game`'s run; `tick` is the tick under way (0 while
    /// loading), `spike` the tick time over which a tick is listed.
    pub fn new(game: &Game, tick: Rc<Cell<u32>>, spike: Duration) -> Self {
        let single = (!game.is_game())
            .then(|| game.mods().first().map(|m| m.name.clone()))
            .flatten();
        Self {
            names: game.names(),
            single,
            tick,
            spike,
            operations: RefCell::default(),
            instructions: RefCell::default(),
            state: RefCell::default(),
        }
    }

    /// Counts each listener's Rhai operations from `counter`, the one the
    /// game's Rhai runtimes count into
    /// ([`gantry_rhai::RhaiOptions::operation_counter`]).
    pub fn count_operations(&self, counter: Rc<Cell<u64>>) {
        *self.operations.borrow_mut() = Some(counter);
    }

    /// Counts each listener's Lua instructions from `counter`, the one
    /// the game's Lua runtimes count into
    /// ([`gantry_lua::runtime::LuaOptions::instruction_counter`]).
    pub fn count_instructions(&self, counter: Arc<AtomicU64>) {
        *self.instructions.borrow_mut() = Some(counter);
    }

    /// The work counted so far (0 without a counter).
    fn work_now(&self) -> Work {
        Work {
            ops: self.operations.borrow().as_ref().map_or(0, |c| c.get()),
            instr: (self.instructions.borrow().as_ref()).map_or(0, |c| c.load(Ordering::Relaxed)),
        }
    }

    /// The mod a listener's file belongs to.
    fn mod_of(&self, file: Option<&str>) -> String {
        match file {
            None => "(host)".to_owned(),
            Some(file) => self
                .names
                .mod_of(file)
                .or_else(|| self.single.clone())
                .unwrap_or_else(|| "(mod)".to_owned()),
        }
    }

    /// The tracer's part.
    pub fn on_event(&self, event: &TraceEvent<'_>) {
        match event {
            TraceEvent::Dispatch { key, .. } => {
                let mut state = self.state.borrow_mut();
                let started = state.stack.is_empty().then(Instant::now);
                let mark = self.work_now();
                state.stack.push(Frame {
                    mark,
                    pending_work: Work::default(),
                    work: Work::default(),
                    key: key.to_string(),
                    started,
                    pending: HashMap::new(),
                    pending_time: Duration::ZERO,
                    stacks: HashMap::new(),
                    time: Duration::ZERO,
                });
            }
            TraceEvent::Called {
                key,
                listener,
                site,
                elapsed,
                ..
            } => {
                let label = site.map_or_else(|| listener.to_string(), |s| s.to_string());
                let module = self.mod_of(site.map(|s| s.file.as_str()));
                self.called(key, label, module, *elapsed);
            }
            TraceEvent::End { .. } | TraceEvent::HookDone { .. } => self.ended(),
            // An abort before the checks pushed nothing; one after them is
            // followed by its End.
            TraceEvent::Aborted { .. }
            | TraceEvent::Listened { .. }
            | TraceEvent::Dropped { .. } => {}
        }
    }

    fn called(&self, key: &str, label: String, module: String, elapsed: Duration) {
        let tick = self.tick.get();
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let Some(frame) = state.stack.last_mut().filter(|f| f.key == key) else {
            return;
        };
        let own = elapsed.saturating_sub(std::mem::take(&mut frame.pending_time));
        frame.time += elapsed;
        let work_now = self.work_now();
        let work_all = work_now.since(frame.mark);
        let own_work = work_all.since(std::mem::take(&mut frame.pending_work));
        frame.mark = work_now;
        frame.work.add(work_all);
        let label = frame_name(&label);
        for (suffix, nanos) in std::mem::take(&mut frame.pending) {
            let stack = cut(format!("{label};{suffix}"));
            add_bounded(&mut frame.stacks, (module.clone(), stack), nanos);
        }
        add_bounded(
            &mut frame.stacks,
            (module.clone(), label.clone()),
            nanos(own),
        );
        if tick == 0 {
            state.load_calls += 1;
            return;
        }
        self.enter_tick(state, tick);
        let slot = (module, key.to_owned(), label.clone());
        let row = if state.rows.len() < MAX_ROWS || state.rows.contains_key(&slot) {
            state.rows.entry(slot).or_default()
        } else {
            let other = (
                "…".to_owned(),
                "…".to_owned(),
                "(other listeners)".to_owned(),
            );
            state.rows.entry(other).or_default()
        };
        row.calls += 1;
        row.work.add(own_work);
        row.total += own;
        row.max = row.max.max(own);
        if state.current_listeners.len() < MAX_ROWS || state.current_listeners.contains_key(&label)
        {
            *state.current_listeners.entry(label).or_default() += own;
        }
    }

    fn ended(&self) {
        let tick = self.tick.get();
        let mut state = self.state.borrow_mut();
        let Some(frame) = state.stack.pop() else {
            return;
        };
        let key = frame_name(&frame.key);
        if let Some(caller) = state.stack.last_mut() {
            for ((_, stack), nanos) in frame.stacks {
                add_bounded(&mut caller.pending, cut(format!("{key};{stack}")), nanos);
            }
            caller.pending_time += frame.time;
            caller.pending_work.add(frame.work);
            return;
        }
        let took = frame.started.map_or(Duration::ZERO, |s| s.elapsed());
        if tick == 0 {
            state.load_time += took;
            return;
        }
        for ((module, stack), nanos) in frame.stacks {
            let module = frame_name(&module);
            add_bounded(
                &mut state.folded,
                cut(format!("{module};{key};{stack}")),
                nanos,
            );
        }
        self.enter_tick(&mut state, tick);
        state.tick_time += took;
        state.current_time += took;
    }

    /// `tick` is under way: the one summed before it, if another, is over.
    /// (A tick's first listener returns before its outermost dispatch ends.)
    fn enter_tick(&self, state: &mut State, tick: u32) {
        if state.current != Some(tick) {
            self.close_tick(state);
            state.current = Some(tick);
            state.ticks += 1;
        }
    }

    /// The tick summed so far is over: a spike if it took too long.
    fn close_tick(&self, state: &mut State) {
        let listeners = std::mem::take(&mut state.current_listeners);
        let time = std::mem::take(&mut state.current_time);
        let Some(tick) = state.current.take() else {
            return;
        };
        if time <= self.spike {
            return;
        }
        state.spike_count += 1;
        let mut top: Vec<(String, Duration)> = listeners.into_iter().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        top.truncate(SPIKE_NAMES);
        state.spikes.push(Spike { tick, time, top });
        if state.spikes.len() > MAX_SPIKES {
            // Keep the worst: drop the mildest.
            if let Some(mildest) = (0..state.spikes.len()).min_by_key(|&i| state.spikes[i].time) {
                state.spikes.remove(mildest);
            }
        }
    }

    /// The profile as text: a summary line, the table (slowest own time
    /// first), each mod's share, and the spikes.
    pub fn report(&self) -> String {
        let mut state = self.state.borrow_mut();
        self.close_tick(&mut state);
        let state = &*state;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let share = |d: Duration| {
            if state.tick_time.is_zero() {
                0.0
            } else {
                100.0 * d.as_secs_f64() / state.tick_time.as_secs_f64()
            }
        };
        let mut out = format!(
            "{} tick(s), {:.3} ms in dispatches; load {:.3} ms in {} listener call(s), not counted\n",
            state.ticks,
            ms(state.tick_time),
            ms(state.load_time),
            state.load_calls,
        );
        let mut rows: Vec<_> = state.rows.iter().collect();
        rows.sort_by(|a, b| b.1.total.cmp(&a.1.total).then_with(|| a.0.cmp(b.0)));
        if rows.is_empty() {
            out.push_str("no listener ran in a tick\n");
        } else {
            let width = |f: &dyn Fn(&(String, String, String)) -> usize, title: &str| {
                rows.iter()
                    .take(SHOWN_ROWS)
                    .map(|(k, _)| f(k))
                    .max()
                    .unwrap_or(0)
                    .max(title.chars().count())
            };
            let (wm, wk, wl) = (
                width(&|k| k.0.chars().count(), "mod"),
                width(&|k| k.1.chars().count(), "key"),
                width(&|k| k.2.chars().count(), "listener"),
            );
            // Each column is there when there is a listener of its
            // language to count.
            let ran = |ext: &str| rows.iter().any(|((_, _, l), _)| l.contains(ext));
            let counting_ops = self.operations.borrow().is_some() && ran(RHAI);
            let counting_instr = self.instructions.borrow().is_some() && ran(LUA);
            let column = |on: bool, text: &dyn std::fmt::Display| {
                if on {
                    format!("  {text:>12}")
                } else {
                    String::new()
                }
            };
            let _ = writeln!(
                out,
                "{:<wm$}  {:<wk$}  {:<wl$}  {:>8}  {:>10}  {:>9}  {:>9}  {:>6}{}{}",
                "mod",
                "key",
                "listener",
                "calls",
                "total ms",
                "mean ms",
                "max ms",
                "share",
                column(counting_ops, &"Rhai ops"),
                column(counting_instr, &"Lua instr"),
            );
            for ((module, key, listener), row) in rows.iter().take(SHOWN_ROWS) {
                let mean = row.total / u32::try_from(row.calls.max(1)).unwrap_or(u32::MAX);
                // Each runtime counts its own listeners' work; a row of
                // the other language says it has no count there.
                let count = |on: bool, ext: &str, n: u64| {
                    if listener.contains(ext) {
                        column(on, &n)
                    } else {
                        column(on, &"-")
                    }
                };
                let ops = count(counting_ops, RHAI, row.work.ops)
                    + count(counting_instr, LUA, row.work.instr).as_str();
                let _ = writeln!(
                    out,
                    "{:<wm$}  {:<wk$}  {:<wl$}  {:>8}  {:>10.3}  {:>9.3}  {:>9.3}  {:>5.1}%{ops}",
                    module,
                    key,
                    listener,
                    row.calls,
                    ms(row.total),
                    ms(mean),
                    ms(row.max),
                    share(row.total),
                );
            }
            if rows.len() > SHOWN_ROWS {
                let _ = writeln!(out, "… and {} more row(s)", rows.len() - SHOWN_ROWS);
            }
            let mut mods: HashMap<&str, Duration> = HashMap::new();
            for ((module, _, _), row) in &rows {
                *mods.entry(module.as_str()).or_default() += row.total;
            }
            let mut mods: Vec<_> = mods.into_iter().collect();
            mods.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let mods: Vec<String> = mods
                .iter()
                .map(|(m, t)| format!("{m} {:.1}%", share(*t)))
                .collect();
            let _ = writeln!(out, "by mod: {}", mods.join(", "));
        }
        let threshold = ms(self.spike);
        if state.spike_count == 0 {
            let _ = writeln!(out, "no tick over {threshold:.1} ms");
        } else {
            let _ = writeln!(
                out,
                "{} tick(s) over {threshold:.1} ms{}:",
                state.spike_count,
                if state.spike_count as usize > state.spikes.len() {
                    format!(" (the {} worst)", state.spikes.len())
                } else {
                    String::new()
                }
            );
            let mut spikes = state.spikes.clone();
            spikes.sort_by_key(|s| s.tick);
            for spike in spikes {
                let top: Vec<String> = spike
                    .top
                    .iter()
                    .map(|(l, t)| format!("{l} {:.3} ms", ms(*t)))
                    .collect();
                let _ = writeln!(
                    out,
                    "  tick {}: {:.3} ms — {}",
                    spike.tick,
                    ms(spike.time),
                    top.join(", ")
                );
            }
        }
        out
    }

    /// The flame graph's input: one `mod;key;listener;key;listener… ns`
    /// line per stack, sorted.
    pub fn folded(&self) -> Vec<String> {
        let state = self.state.borrow();
        let mut lines: Vec<String> = state
            .folded
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(stack, n)| format!("{stack} {n}"))
            .collect();
        lines.sort();
        lines
    }

    /// Writes the flame graph to `path` (see [`check_target`]).
    pub fn write_flame_graph(&self, path: &Path) -> Result<(), ProfileError> {
        check_target(path)?;
        let lines = self.folded();
        if lines.is_empty() {
            // inferno draws nothing from no stacks; an empty run still
            // gets a valid SVG that says so.
            let svg = "<?xml version=\"1.0\" standalone=\"no\"?>\n\
                <svg version=\"1.1\" width=\"1200\" height=\"60\" \
                xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"30\">\
                gantry profile: no listener ran in a tick</text></svg>\n";
            return std::fs::write(path, svg).map_err(|source| io_error(path, source));
        }
        let mut options = inferno::flamegraph::Options::default();
        options.title = "gantry profile: mod → key → listener → nested sends".to_owned();
        options.count_name = "ns".to_owned();
        options.name_type = String::new();
        options.deterministic = true;
        // Every frame is drawn, however thin beside a slow one: a search
        // for a listener finds it (the stacks are bounded, so is the file).
        options.min_width = 0.0;
        let mut svg = Vec::new();
        inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
            .map_err(|source| io_error(path, source))?;
        std::fs::write(path, svg).map_err(|source| io_error(path, source))
    }
}

/// May a flame graph be written at `path`? Nothing there, or an SVG: a
/// mistyped path never costs the user a file, and a FIFO, a device or a
/// symlink is never opened. Asked before the run too, so a long run is
/// not lost to a bad path.
pub fn check_target(path: &Path) -> Result<(), ProfileError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let refuse = |why| ProfileError::Refused {
        path: path.display().to_string(),
        why,
    };
    if !meta.file_type().is_file() {
        return Err(refuse("not a regular file; no flame graph written"));
    }
    if meta.len() == 0 {
        return Ok(());
    }
    let mut start = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(SNIFF_BYTES).read_to_end(&mut start))
        .map_err(|source| io_error(path, source))?;
    let text = String::from_utf8_lossy(&start);
    if !text.contains("<svg") {
        return Err(refuse("exists and is not an SVG; not overwritten"));
    }
    Ok(())
}

fn io_error(path: &Path, source: std::io::Error) -> ProfileError {
    ProfileError::Io {
        path: PathBuf::from(path).display().to_string(),
        source,
    }
}

/// A name as one flame graph frame: no `;` (the frame separator) and no
/// line breaks.
fn frame_name(name: &str) -> String {
    name.chars()
        .map(|c| if c == ';' || c.is_control() { ':' } else { c })
        .collect()
}

/// A stack cut to [`MAX_STACK_BYTES`] at a frame boundary.
fn cut(stack: String) -> String {
    if stack.len() <= MAX_STACK_BYTES {
        return stack;
    }
    let mut end = MAX_STACK_BYTES;
    while !stack.is_char_boundary(end) {
        end -= 1;
    }
    let head = &stack[..end];
    let head = head.rfind(';').map_or(head, |i| &head[..i]);
    format!("{head};…")
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Adds `n` to `key`'s count, or to one `…` entry once `map` is full.
fn add_bounded<K: std::hash::Hash + Eq + Clone + Other>(map: &mut HashMap<K, u64>, key: K, n: u64) {
    let key = if map.len() < MAX_STACKS || map.contains_key(&key) {
        key
    } else {
        K::other()
    };
    let count = map.entry(key).or_default();
    *count = count.saturating_add(n);
}

/// The one entry that stands for all the others of a full map.
trait Other {
    fn other() -> Self;
}

impl Other for String {
    fn other() -> Self {
        "…".to_owned()
    }
}

impl Other for (String, String) {
    fn other() -> Self {
        ("…".to_owned(), "…".to_owned())
    }
}
