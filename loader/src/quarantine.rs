//! Quarantine: a listener that fails N times in a row is unlistened and
//! said, when the game asks for it (`game.toml` `quarantine_after = 3`,
//! `gantry run --quarantine 3`, [`crate::Options::quarantine_after`]). A
//! call that succeeds starts the count again. Off by default: a failing
//! listener is said each time and keeps being called.
//!
//! Which listener failed is told by two things the hub says in order: a
//! [`Report::ListenerFailed`] during a listener's call, then that
//! listener's [`TraceEvent::Called`] in the same dispatch. So the
//! quarantine is a tracer, and a hook on the hub's reports; neither exists
//! while it is off.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

use gantry_host::{Hub, ListenerId, Report, TraceEvent};

/// The most listeners with a count of failures kept; past it the counts
/// start again (each is at most one behind).
const MAX_COUNTED: usize = 100_000;
/// The most quarantined listeners remembered for [`crate::Game::quarantined`].
const MAX_KEPT: usize = 1000;
/// The longest last error kept (its first line), in bytes.
const MAX_ERROR_BYTES: usize = 2048;

/// A listener taken off the hub for failing too often in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    /// Its mod (`None` for a listener of no mod's script).
    pub module: Option<String>,
    /// The key it listened on.
    pub key: String,
    /// Where it was registered (`mods/ui/main.lua:12`).
    pub listener: String,
    /// Its failures in a row.
    pub failures: u32,
    /// What its last call said.
    pub last_error: String,
}

impl fmt::Display for Quarantined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let of = self
            .module
            .as_ref()
            .map(|m| format!(" of mod {m}"))
            .unwrap_or_default();
        write!(
            f,
            "{}: listener{of} on `{}` quarantined after {} {} in a row: it is no longer called; its last error: {}",
            self.listener,
            self.key,
            self.failures,
            if self.failures == 1 {
                "failure"
            } else {
                "failures"
            },
            self.last_error
        )
    }
}

/// The mod a file belongs to.
pub(crate) type ModOf = Box<dyn Fn(&str) -> Option<String>>;

#[derive(Default)]
struct State {
    /// Per dispatch under way: the failure reported in it whose
    /// listener's `Called` has not come yet.
    stack: Vec<Option<String>>,
    failures: HashMap<ListenerId, u32>,
    quarantined: Vec<Quarantined>,
}

/// Counts each listener's failures in a row and unlistens it at `after`.
pub(crate) struct Quarantine {
    after: u32,
    hub: Hub,
    /// The mod a file belongs to.
    mod_of: ModOf,
    state: RefCell<State>,
}

impl Quarantine {
    pub fn new(after: u32, hub: Hub, mod_of: ModOf) -> Self {
        Self {
            after: after.max(1),
            hub,
            mod_of,
            state: RefCell::default(),
        }
    }

    /// The failures in a row that quarantine a listener.
    pub fn after(&self) -> u32 {
        self.after
    }

    /// The hub's report hook's part: a failure, for the listener whose
    /// `Called` comes next in this dispatch.
    pub fn on_report(&self, report: &Report) {
        if let Report::ListenerFailed { message, .. } = report
            && let Some(pending) = self.state.borrow_mut().stack.last_mut()
        {
            // Its first line: the error at its file:line; the traceback
            // after it was said with the failure.
            let mut message = message.lines().next().unwrap_or_default().to_owned();
            if message.len() > MAX_ERROR_BYTES {
                let mut end = MAX_ERROR_BYTES;
                while !message.is_char_boundary(end) {
                    end -= 1;
                }
                message.truncate(end);
                message.push('…');
            }
            *pending = Some(message);
        }
    }

    /// The tracer's part; a listener quarantined now, to be said.
    pub fn on_event(&self, event: &TraceEvent<'_>) -> Option<Quarantined> {
        match event {
            TraceEvent::Dispatch { .. } => {
                self.state.borrow_mut().stack.push(None);
                None
            }
            TraceEvent::End { .. } | TraceEvent::HookDone { .. } => {
                self.state.borrow_mut().stack.pop();
                None
            }
            TraceEvent::Called {
                key,
                listener,
                site,
                ..
            } => {
                let quarantined = {
                    let mut state = self.state.borrow_mut();
                    let failure = state.stack.last_mut().and_then(Option::take);
                    let Some(last_error) = failure else {
                        state.failures.remove(listener);
                        return None;
                    };
                    if state.failures.len() >= MAX_COUNTED && !state.failures.contains_key(listener)
                    {
                        state.failures.clear();
                    }
                    let count = state.failures.entry(*listener).or_default();
                    *count += 1;
                    if *count < self.after {
                        return None;
                    }
                    let failures = *count;
                    state.failures.remove(listener);
                    let quarantined = Quarantined {
                        module: site.and_then(|s| (self.mod_of)(&s.file)),
                        key: key.to_string(),
                        listener: site
                            .map_or_else(|| format!("listener {listener:?}"), |s| s.to_string()),
                        failures,
                        last_error,
                    };
                    if state.quarantined.len() < MAX_KEPT {
                        state.quarantined.push(quarantined.clone());
                    }
                    quarantined
                };
                // Borrows released: the hub tells the tracer of the drop.
                self.hub.unlisten(*listener);
                Some(quarantined)
            }
            TraceEvent::Aborted { .. }
            | TraceEvent::Listened { .. }
            | TraceEvent::Dropped { .. } => None,
        }
    }

    /// The listeners quarantined so far (the first [`MAX_KEPT`]).
    pub fn quarantined(&self) -> Vec<Quarantined> {
        self.state.borrow().quarantined.clone()
    }
}
