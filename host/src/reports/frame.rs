//! A mod's per-frame budget: "mod M may spend X µs per frame".
//!
//! A game gives each mod's runtimes (its Lua and its Rhai one) the same
//! [`FrameBudget`] and starts each frame with [`FrameBudget::new_frame`].
//! Every call the host makes into the mod's scripts is charged its
//! wall-clock time; a call that reaches what is left of the frame's budget
//! is stopped at its line, and the mod's later calls that frame are
//! skipped (they stop at their first step). Who spent it (mod, file:line,
//! time) is kept ([`FrameBudget::spender`]) and filed once per frame to a
//! [`ReportStream`] when one is attached ([`FrameBudget::report_to`]).
//!
//! Shared between threads only so that a runtime's watchdog may read it:
//! the counts are atomics, and nothing here blocks for long.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{ItemKind, ReportStream};

/// The call that spent a mod's frame budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spender {
    pub mod_name: String,
    /// Where the call was when the budget ran out (`loop.lua:2`), when the
    /// runtime could tell.
    pub place: Option<String>,
    /// How long that call had run.
    pub time: Duration,
}

/// What the stop of a mod's calls says: the same text for the call that
/// spent the budget and for the calls skipped after it, and frame after
/// frame while the same call spends it, so a report stream keeps it as
/// one item with a count. (How long the call ran varies from frame to
/// frame: it is the [`Spender::time`], and in the log.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spent {
    pub limit: Duration,
    pub spender: Spender,
}

impl fmt::Display for Spent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.spender;
        write!(
            f,
            "mod `{}` spent its frame budget of {} µs",
            s.mod_name,
            self.limit.as_micros()
        )?;
        if let Some(place) = &s.place {
            write!(f, " at {place}")?;
        }
        f.write_str("; its other calls this frame are skipped")
    }
}

struct Inner {
    mod_name: String,
    /// The budget per frame in nanoseconds (0: none).
    limit: AtomicU64,
    /// Nanoseconds charged this frame.
    spent: AtomicU64,
    /// The budget ran out this frame.
    over: AtomicBool,
    spender: Mutex<Option<Spender>>,
    /// Where the frame's stop is filed (once per frame).
    stream: Mutex<Option<StreamSlot>>,
}

/// A [`ReportStream`] is single-threaded; the budget only touches it from
/// the thread that runs the scripts (see [`FrameBudget::report_to`]).
struct StreamSlot(ReportStream);

// SAFETY: the stream is only used by `file_once`, called from the thread
// that runs the mod's scripts (the runtimes' own thread), never from a
// watchdog; `report_to` documents that it must be that thread too.
unsafe impl Send for StreamSlot {}

/// A mod's per-frame budget, shared by its runtimes (a cheap handle).
#[derive(Clone)]
pub struct FrameBudget(Arc<Inner>);

impl fmt::Debug for FrameBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameBudget")
            .field("mod", &self.0.mod_name)
            .field("limit", &self.limit())
            .field("spent", &self.spent())
            .finish()
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl FrameBudget {
    /// Mod `mod_name` may spend `per_frame` of wall-clock time in its
    /// scripts each frame.
    pub fn new(mod_name: impl Into<String>, per_frame: Duration) -> Self {
        Self(Arc::new(Inner {
            mod_name: mod_name.into(),
            limit: AtomicU64::new(nanos(per_frame).max(1)),
            spent: AtomicU64::new(0),
            over: AtomicBool::new(false),
            spender: Mutex::new(None),
            stream: Mutex::new(None),
        }))
    }

    pub fn mod_name(&self) -> &str {
        &self.0.mod_name
    }

    /// The budget per frame.
    pub fn limit(&self) -> Duration {
        Duration::from_nanos(self.0.limit.load(Ordering::Relaxed))
    }

    /// Changes the budget per frame, from the next call on.
    pub fn set_limit(&self, per_frame: Duration) {
        self.0
            .limit
            .store(nanos(per_frame).max(1), Ordering::Relaxed);
    }

    /// What the mod spent this frame.
    pub fn spent(&self) -> Duration {
        Duration::from_nanos(self.0.spent.load(Ordering::Relaxed))
    }

    /// A new frame: the whole budget again, the mod's calls run again.
    pub fn new_frame(&self) {
        self.0.spent.store(0, Ordering::Relaxed);
        self.0.over.store(false, Ordering::Release);
        *self.0.spender.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Has the mod spent this frame's budget (its calls are skipped)?
    pub fn is_spent(&self) -> bool {
        self.0.over.load(Ordering::Acquire)
    }

    /// What is left of this frame's budget for the next call.
    pub fn remaining(&self) -> Duration {
        let limit = self.0.limit.load(Ordering::Relaxed);
        let spent = self.0.spent.load(Ordering::Relaxed);
        Duration::from_nanos(limit.saturating_sub(spent))
    }

    /// Charges a call's time (a runtime, when the call returns). Reaching
    /// the budget spends it, the spender unknown if the runtime did not
    /// name it first ([`FrameBudget::spend`]).
    pub fn charge(&self, time: Duration) {
        let limit = self.0.limit.load(Ordering::Relaxed);
        let spent = self
            .0
            .spent
            .fetch_add(nanos(time), Ordering::Relaxed)
            .saturating_add(nanos(time));
        if spent >= limit && !self.is_spent() {
            self.spend(None, time);
        }
    }

    /// The budget ran out in a call that had run `time`, at `place`
    /// (a runtime, as it stops the call). The first spender of a frame is
    /// kept and filed; returns the stop's text.
    pub fn spend(&self, place: Option<String>, time: Duration) -> String {
        let mut spender = self.0.spender.lock().unwrap_or_else(|e| e.into_inner());
        let first = spender.is_none();
        let who = spender
            .get_or_insert_with(|| Spender {
                mod_name: self.0.mod_name.clone(),
                place,
                time,
            })
            .clone();
        drop(spender);
        self.0.over.store(true, Ordering::Release);
        let text = Spent {
            limit: self.limit(),
            spender: who,
        }
        .to_string();
        if first {
            tracing::warn!(r#mod = %self.0.mod_name, ran = ?time, "{text}");
            self.file_once(&text);
        }
        text
    }

    /// The text a skipped call stops with: the frame's stop.
    pub fn skipped(&self) -> String {
        let spender = self
            .0
            .spender
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| Spender {
                mod_name: self.0.mod_name.clone(),
                place: None,
                time: Duration::ZERO,
            });
        Spent {
            limit: self.limit(),
            spender,
        }
        .to_string()
    }

    /// Who spent this frame's budget, if anyone did.
    pub fn spender(&self) -> Option<Spender> {
        self.0
            .spender
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Files each frame's stop to `stream` (a [`ItemKind::FrameBudgetSpent`]
    /// item, remembered for the frame so that the skipped calls' failures
    /// that carry it are the same fault). Call it from the thread that
    /// runs the mod's scripts: the stream is used from there only.
    pub fn report_to(&self, stream: &ReportStream) {
        *self.0.stream.lock().unwrap_or_else(|e| e.into_inner()) = Some(StreamSlot(stream.clone()));
    }

    fn file_once(&self, text: &str) {
        let stream = self
            .0
            .stream
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|slot| slot.0.clone());
        if let Some(stream) = stream {
            stream.push_text(ItemKind::FrameBudgetSpent, text, true);
        }
    }
}
