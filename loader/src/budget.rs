//! Per-mod tick budgets: the time a mod's listeners may take in one tick,
//! and what is said when a mod takes more.
//!
//! A budget comes from, first to last: the run's (`gantry run
//! --tick-budget`, [`crate::Options::tick_budget`]) for every mod; the
//! game's for that mod (`game.toml` `[tick_budgets] ui = 1.5`); the
//! mod's own word (`mod.toml` `[mod] tick_budget_ms`); the game's
//! default (`game.toml` `tick_budget_ms`). With none of them set the
//! meter does not exist and nothing is measured: budgets off cost
//! nothing.
//!
//! The meter is a tracer ([`gantry_host::TraceEvent`]): each listener's
//! own time (its [`TraceEvent::Called`] time less that of the listeners
//! its sends ran, counted where they ran) goes to the mod its script
//! belongs to. At the end of the tick each mod over its budget is one
//! [`Overrun`] naming the listener and key that cost it most.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use gantry_host::{ListenerId, TraceEvent};

use crate::game::ModNames;

/// The most listeners whose mod is remembered; past it the memory starts
/// again (a game that makes listeners without end stays bounded).
const MAX_KNOWN: usize = 100_000;

/// A mod that took longer than its budget in one tick.
#[derive(Debug, Clone, PartialEq)]
pub struct Overrun {
    /// The mod's name.
    pub module: String,
    pub tick: u32,
    /// Its listeners' own time in the tick.
    pub took: Duration,
    pub budget: Duration,
    /// The listener that cost it most (`mods/ui/main.lua:12`).
    pub listener: String,
    /// The key that listener heard.
    pub key: String,
    /// That listener's own time in the tick.
    pub listener_took: Duration,
}

impl fmt::Display for Overrun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: mod {} took {} in tick {}, over its tick budget of {}; most in this listener of `{}`: {}",
            self.listener,
            self.module,
            measured(self.took),
            self.tick,
            ms(self.budget),
            self.key,
            measured(self.listener_took),
        )
    }
}

/// A measured time in milliseconds, to the microsecond (`3.412 ms`).
fn measured(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// A duration in milliseconds as a budget is written (`2 ms`, `0.25 ms`).
pub(crate) fn ms(d: Duration) -> String {
    let text = format!("{:.3}", d.as_secs_f64() * 1e3);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} ms")
}

/// A listener as its overrun names it.
struct Who {
    /// Its mod; `None` for a listener of no mod's script (the host's).
    module: Option<Rc<str>>,
    label: Rc<str>,
    key: Rc<str>,
}

/// A mod's time in a tick, and its costliest listener with its time.
type ModTick = (Duration, Option<(Rc<Who>, Duration)>);

#[derive(Default)]
struct State {
    /// Per dispatch under way: its listeners' time (their nested sends
    /// included), and the time of the nested dispatches of the listener
    /// running now, to subtract from it.
    stack: Vec<(Duration, Duration)>,
    who: HashMap<ListenerId, Rc<Who>>,
    /// Each listener's own time in this tick.
    tick: HashMap<ListenerId, (Rc<Who>, Duration)>,
}

/// Measures each mod's listeners per tick against its budget.
pub(crate) struct BudgetMeter {
    names: ModNames,
    /// A single mod's name (its files name no mod folder).
    single: Option<String>,
    budgets: RefCell<HashMap<String, Duration>>,
    state: RefCell<State>,
}

impl BudgetMeter {
    pub fn new(
        names: ModNames,
        single: Option<String>,
        budgets: HashMap<String, Duration>,
    ) -> Self {
        Self {
            names,
            single,
            budgets: RefCell::new(budgets),
            state: RefCell::default(),
        }
    }

    /// The budgets from now on (game.toml read again, a mod added).
    pub fn set_budgets(&self, budgets: HashMap<String, Duration>) {
        *self.budgets.borrow_mut() = budgets;
    }

    /// The tracer's part.
    pub fn on_event(&self, event: &TraceEvent<'_>) {
        match event {
            TraceEvent::Dispatch { .. } => {
                self.state
                    .borrow_mut()
                    .stack
                    .push((Duration::ZERO, Duration::ZERO));
            }
            TraceEvent::Called {
                key,
                listener,
                site,
                elapsed,
                ..
            } => {
                let mut state = self.state.borrow_mut();
                let state = &mut *state;
                let Some((time, nested)) = state.stack.last_mut() else {
                    return;
                };
                let own = elapsed.saturating_sub(std::mem::take(nested));
                *time += *elapsed;
                if state.who.len() >= MAX_KNOWN && !state.who.contains_key(listener) {
                    state.who.clear();
                }
                let who = state
                    .who
                    .entry(*listener)
                    .or_insert_with(|| {
                        let module = site.filter(|s| s.language.is_script()).and_then(|s| {
                            self.names.mod_of(&s.file).or_else(|| self.single.clone())
                        });
                        Rc::new(Who {
                            module: module.map(Rc::from),
                            label: site.map_or_else(
                                || Rc::from(format!("listener {listener:?}")),
                                |s| Rc::from(s.to_string()),
                            ),
                            key: Rc::from(*key),
                        })
                    })
                    .clone();
                if who.module.is_some() {
                    state
                        .tick
                        .entry(*listener)
                        .or_insert((who, Duration::ZERO))
                        .1 += own;
                }
            }
            TraceEvent::End { .. } | TraceEvent::HookDone { .. } => {
                let mut state = self.state.borrow_mut();
                if let Some((time, _)) = state.stack.pop()
                    && let Some((_, nested)) = state.stack.last_mut()
                {
                    *nested += time;
                }
            }
            TraceEvent::Aborted { .. }
            | TraceEvent::Listened { .. }
            | TraceEvent::Dropped { .. } => {}
        }
    }

    /// A tick starts: what ran since the last one (loading, a reload, the
    /// game's own sends between ticks) is not the tick's.
    pub fn begin(&self) {
        self.state.borrow_mut().tick.clear();
    }

    /// Tick `tick` is over: each mod over its budget, by name.
    pub fn end(&self, tick: u32) -> Vec<Overrun> {
        let spent = std::mem::take(&mut self.state.borrow_mut().tick);
        let budgets = self.budgets.borrow();
        // Per mod: its time, and its costliest listener.
        let mut mods: BTreeMap<Rc<str>, ModTick> = BTreeMap::new();
        for (who, took) in spent.into_values() {
            let Some(module) = who.module.clone() else {
                continue;
            };
            let entry = mods.entry(module).or_default();
            entry.0 += took;
            let costlier = entry.1.as_ref().is_none_or(|(worst, most)| {
                took > *most || (took == *most && who.label < worst.label)
            });
            if costlier {
                entry.1 = Some((who, took));
            }
        }
        mods.into_iter()
            .filter_map(|(module, (took, worst))| {
                let budget = *budgets.get(&*module)?;
                let (who, listener_took) = worst?;
                (took > budget).then(|| Overrun {
                    module: module.to_string(),
                    tick,
                    took,
                    budget,
                    listener: who.label.to_string(),
                    key: who.key.to_string(),
                    listener_took,
                })
            })
            .collect()
    }
}

/// The largest budget: a minute, past which a budget bounds nothing a
/// tick does (as `mod.toml`'s).
pub const MAX_BUDGET_MS: f64 = gantry_host::manifest::MAX_TICK_BUDGET_MS;

/// A budget as game.toml writes it: milliseconds, an integer or a float,
/// more than 0 and at most [`MAX_BUDGET_MS`]. One out of range is an
/// error at its line, naming the field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetMs(pub Duration);

impl<'de> serde::Deserialize<'de> for BudgetMs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ms = f64::deserialize(d)?;
        if ms.is_finite() && ms > 0.0 && ms <= MAX_BUDGET_MS {
            Ok(Self(Duration::from_secs_f64(ms / 1e3)))
        } else {
            Err(serde::de::Error::custom(format!(
                "{ms} is out of range: more than 0 and at most {MAX_BUDGET_MS} milliseconds"
            )))
        }
    }
}

/// Each mod's budget, first to last: the run's for every mod, the game's
/// for that mod, the mod's own, the game's default. `mods` are the mods'
/// names and their manifests' budgets.
pub(crate) fn resolve<'a>(
    run: Option<Duration>,
    policy: &crate::GamePolicy,
    mods: impl IntoIterator<Item = (&'a str, Option<Duration>)>,
) -> HashMap<String, Duration> {
    mods.into_iter()
        .filter_map(|(name, own)| {
            let budget = run
                .or_else(|| policy.tick_budgets.get(name).map(|b| b.0))
                .or(own)
                .or(policy.tick_budget_ms.map(|b| b.0))?;
            Some((name.to_owned(), budget))
        })
        .collect()
}
