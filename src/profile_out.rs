//! `gantry run --profile`, `--profile-out FILE.svg` and `--spike-ms`: the
//! flags, and what the run prints and writes after it
//! ([`gantry_loader::profile`] does the measuring).
//!
//! Neither flag given, no profiler exists and nothing is chained into the
//! tracer: profiling off costs nothing.

use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use anyhow::Context;
use gantry_loader::Game;
use gantry_loader::profile::{Profiler, check_target};

use crate::out::{err, errln};

/// How a run is profiled.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ProfileArgs {
    /// After the run, print to stderr where the ticks' time went: per mod,
    /// key and listener (file:line) its calls, total, mean and max own time
    /// and share of the tick time, and the ticks over --spike-ms.
    #[arg(long)]
    pub profile: bool,
    /// Write a flame graph of the ticks (mod → key → listener → nested
    /// sends) to FILE.svg; an existing file is replaced only if it is an SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub profile_out: Option<PathBuf>,
    /// With --profile, list the ticks that took longer than MS milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5.0, requires = "profile")]
    pub spike_ms: f64,
}

impl ProfileArgs {
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
        Ok(Some(Rc::new(Profiler::new(game, tick, spike))))
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
