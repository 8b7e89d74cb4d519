//! The loader's own watch over the mods, when the game asks for it: tick
//! budgets ([`crate::budget`]) and quarantine ([`crate::quarantine`]),
//! chained with the host's tracer ([`crate::Game::set_tracer`]) into the
//! one tracer a hub has.
//!
//! Asked for nothing, the hub gets the host's tracer alone (or none): the
//! dispatch path stays as fast as without a loader.

use std::cell::RefCell;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::rc::{Rc, Weak};
use std::time::Duration;

use gantry_host::{Hub, Report, TraceEvent, TraceFn};

use crate::budget::{BudgetMeter, Overrun};
use crate::context::Context;
use crate::event::Event;
use crate::game::ModNames;
use crate::quarantine::{Quarantine, Quarantined};

/// What the game asks to watch, worked out from its options, game.toml
/// and the mods' manifests.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Watch {
    /// Each mod's per-tick budget (only the mods that have one).
    pub budgets: HashMap<String, Duration>,
    pub quarantine_after: Option<NonZeroU32>,
}

#[derive(Default)]
pub(crate) struct Guards {
    budget: RefCell<Option<Rc<BudgetMeter>>>,
    quarantine: RefCell<Option<Rc<Quarantine>>>,
    /// The host's tracer (`--trace`, `--record`, `--profile`).
    host: RefCell<Option<Rc<TraceFn>>>,
    ctx: RefCell<Weak<Context>>,
    /// What is watched now: the same asked again changes nothing (a
    /// new tracer would cost the mods' sends their cached routes).
    now: RefCell<Option<Watch>>,
}

impl Guards {
    /// Watches what `watch` asks on `ctx`'s hub from now on.
    pub fn configure(
        self: &Rc<Self>,
        ctx: &Rc<Context>,
        names: &ModNames,
        single: Option<String>,
        watch: Watch,
    ) {
        if self.now.borrow().as_ref() == Some(&watch) {
            return;
        }
        *self.now.borrow_mut() = Some(watch.clone());
        *self.ctx.borrow_mut() = Rc::downgrade(ctx);
        let budget = if watch.budgets.is_empty() {
            None
        } else if let Some(meter) = self.budget.borrow().clone() {
            meter.set_budgets(watch.budgets);
            Some(meter)
        } else {
            Some(Rc::new(BudgetMeter::new(
                names.clone(),
                single.clone(),
                watch.budgets,
            )))
        };
        *self.budget.borrow_mut() = budget;
        let quarantine = match watch.quarantine_after {
            None => None,
            Some(after) => match self.quarantine.borrow().clone() {
                Some(q) if q.after() == after.get() => Some(q),
                _ => {
                    let names = names.clone();
                    let mod_of = move |file: &str| names.mod_of(file).or_else(|| single.clone());
                    Some(Rc::new(Quarantine::new(
                        after.get(),
                        ctx.hub.clone(),
                        Box::new(mod_of),
                    )))
                }
            },
        };
        *self.quarantine.borrow_mut() = quarantine;
        self.install(&ctx.hub);
    }

    /// The host's tracer from now on, chained with the loader's own.
    pub fn set_host(self: &Rc<Self>, hub: &Hub, tracer: Option<Rc<TraceFn>>) {
        *self.host.borrow_mut() = tracer;
        self.install(hub);
    }

    /// Gives the hub the one tracer that calls each part in use.
    fn install(self: &Rc<Self>, hub: &Hub) {
        let own = self.budget.borrow().is_some() || self.quarantine.borrow().is_some();
        if !own {
            hub.set_tracer(self.host.borrow().clone());
            return;
        }
        // Weak: the hub holds its tracer, and the quarantine holds the hub.
        let guards = Rc::downgrade(self);
        hub.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
            if let Some(guards) = guards.upgrade() {
                guards.on_event(event);
            }
        })));
    }

    fn on_event(&self, event: &TraceEvent<'_>) {
        // Each part cloned out first: a quarantine's unlisten comes back
        // here with its `Dropped`.
        let host = self.host.borrow().clone();
        if let Some(host) = host {
            host(event);
        }
        let budget = self.budget.borrow().clone();
        if let Some(budget) = budget {
            budget.on_event(event);
        }
        let quarantine = self.quarantine.borrow().clone();
        if let Some(quarantined) = quarantine.and_then(|q| q.on_event(event)) {
            let ctx = self.ctx.borrow().upgrade();
            if let Some(ctx) = ctx {
                ctx.say(Event::Warning(&quarantined.to_string()));
            }
        }
    }

    /// The hub's report hook's part.
    pub fn on_report(&self, report: &Report) {
        let quarantine = self.quarantine.borrow().clone();
        if let Some(quarantine) = quarantine {
            quarantine.on_report(report);
        }
    }

    /// A tick starts.
    pub fn begin_tick(&self) {
        if let Some(budget) = self.budget.borrow().as_ref() {
            budget.begin();
        }
    }

    /// Tick `tick` is over: the mods over their budget.
    pub fn end_tick(&self, tick: u32) -> Vec<Overrun> {
        let budget = self.budget.borrow().clone();
        budget.map(|b| b.end(tick)).unwrap_or_default()
    }

    /// The listeners quarantined so far.
    pub fn quarantined(&self) -> Vec<Quarantined> {
        self.quarantine
            .borrow()
            .as_ref()
            .map(|q| q.quarantined())
            .unwrap_or_default()
    }
}
