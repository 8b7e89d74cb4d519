//! `gantry run --profile`, `--profile-out FILE.svg` and `--spike-ms`: the
//! flags, and what the run prints and writes after it
//! ([`gantry_loader::profile`] does the measuring); and the run's watch
//! over its mods, `--tick-budget MS` and `--quarantine N`
//! ([`gantry_loader::budget`], [`gantry_loader::quarantine`]).
//!
//! Neither flag given, no profiler exists and nothing is chained into the
//! tracer: profiling off costs nothing; so do budgets and quarantine
//! that neither the flags nor game.toml nor a mod.toml ask for.

use std::cell::Cell;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use anyhow::Context;
use gantry_loader::Game;
use gantry_loader::profile::{Profiler, check_target};

use crate::out::{err, errln};

/// How a run is profiled, and held to its budgets.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ProfileArgs {
    /// After the run, print to stderr where the ticks' time went: per mod,
    /// key and listener (file:line) its calls, total, mean and max own time,
    /// share of the tick time, (Rhai listeners) the operations Rhai's
    /// budget counts, exact, and the ticks over --spike-ms.
    #[arg(long)]
    pub profile: bool,
    /// With --profile, count each Lua listener's own VM instructions too
    /// (a `Lua instr` column): sampled about every 200 instructions, so
    /// right on average over many calls and within a few hundred for one
    /// call. Off by default: counting makes Lua code run two to three
    /// times slower, and the Lua listeners' times grow with it.
    #[arg(long, requires = "profile")]
    pub lua_instructions: bool,
    /// Write a flame graph of the ticks (mod → key → listener → nested
    /// sends) to FILE.svg; an existing file is replaced only if it is an SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub profile_out: Option<PathBuf>,
    /// With --profile, list the ticks that took longer than MS milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5.0, requires = "profile")]
    pub spike_ms: f64,
    /// Every mod's per-tick time budget in milliseconds, over game.toml's
    /// and mod.toml's `tick_budget_ms`: a mod whose listeners take longer
    /// in a tick is said, with the listener (file:line) and key that
    /// took most.
    #[arg(long, value_name = "MS")]
    pub tick_budget: Option<f64>,
    /// Quarantine a listener that fails N times in a row: it is
    /// unlistened and said (mod, key, file:line, its last error); over
    /// game.toml's `quarantine_after`. A call that succeeds starts the
    /// count again.
    #[arg(long, value_name = "N")]
    pub quarantine: Option<NonZeroU32>,
    /// What the Rhai runtimes count their operations into when the run
    /// is profiled ([`ProfileArgs::operation_counter`]).
    #[arg(skip)]
    pub operations: Rc<Cell<u64>>,
    /// What the Lua runtimes count their instructions into when the run
    /// is profiled ([`ProfileArgs::instruction_counter`]).
    #[arg(skip)]
    pub instructions: Arc<AtomicU64>,
}

impl ProfileArgs {
    /// `--tick-budget` as a duration, checked.
    pub fn tick_budget(&self) -> anyhow::Result<Option<Duration>> {
        let Some(ms) = self.tick_budget else {
            return Ok(None);
        };
        let max = gantry_loader::budget::MAX_BUDGET_MS;
        if !(ms.is_finite() && ms > 0.0 && ms <= max) {
            anyhow::bail!("--tick-budget {ms}: more than 0 and at most {max} milliseconds");
        }
        Ok(Some(Duration::from_secs_f64(ms / 1e3)))
    }

    /// The counter the run's Rhai runtimes count their operations into,
    /// for `--profile`'s table (`None`: not profiled, nothing counted).
    pub fn operation_counter(&self) -> Option<Rc<Cell<u64>>> {
        self.profile.then(|| self.operations.clone())
    }

    /// The counter the run's Lua runtimes count their instructions into,
    /// for `--profile --lua-instructions`'s table (`None`: not asked for;
    /// Lua runs as ever, its hook armed only for a call that runs long).
    pub fn instruction_counter(&self) -> Option<Arc<AtomicU64>> {
        (self.profile && self.lua_instructions).then(|| self.instructions.clone())
    }

    /// A profiler for the run when one is asked for, its flame graph's
    /// path checked now: a long run is not lost to a bad path.
    pub fn start(&self, game: &Game, tick: Rc<Cell<u32>>) -> anyhow::Result<Option<Rc<Profiler>>> {
        if !self.profile && self.profile_out.is_none() {
            return Ok(None);
        }
        if !(self.spike_ms.is_finite() && self.spike_ms >= 0.0 && self.spike_ms < 1e9) {
            anyhow::bail!("--spike-ms {}: not a number of milliseconds", self.spike_ms);
        }
        if let Some(path) = &self.profile_out {
            check_target(path).context("--profile-out")?;
        }
        let spike = Duration::from_secs_f64(self.spike_ms / 1e3);
        let profiler = Profiler::new(game, tick, spike);
        if let Some(counter) = self.operation_counter() {
            profiler.count_operations(counter);
        }
        if let Some(counter) = self.instruction_counter() {
            profiler.count_instructions(counter);
        }
        Ok(Some(Rc::new(profiler)))
    }

    /// After the run: the table printed, the flame graph written.
    /// Whether writing it failed.
    pub fn finish(&self, profiler: &Profiler) -> bool {
        if self.profile {
            err!("profile: {}", profiler.report());
        }
        match &self.profile_out {
            Some(path) => match profiler.write_flame_graph(path) {
                Ok(()) => false,
                Err(error) => {
                    errln!("error: --profile-out {error}");
                    true
                }
            },
            None => false,
        }
    }
}
