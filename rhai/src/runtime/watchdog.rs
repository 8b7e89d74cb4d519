//! The wall-clock bound of script calls and the host's interrupt.
//!
//! Rhai calls the engine's progress callback once per operation. Reading a
//! clock there would cost a clock read per operation (a system call on some
//! machines); instead a watchdog thread watches which outermost call runs
//! and raises the signal once one has run longer than the time limit. The
//! progress callback pays one relaxed atomic load to see it. The host's
//! [`Interrupter`] raises the same signal from any thread.
//!
//! Only outermost calls are timed: a handler the hub runs from inside a
//! script call spends its caller's time, so a call and everything it sets
//! off end by one deadline.
//!
//! **The call budget** ([`Clock::set_call_budget`]) is a game's per-call
//! allowance, milliseconds rather than seconds, too fine for the
//! watchdog's ticks: the runtime thread reads the clock itself, once every
//! [`CHECK_EVERY`] operations of a call that has a budget, from the call's
//! first operation (a clock read per few microseconds of script). Without
//! a budget, the progress callback pays one more `Cell` read.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use gantry_host::reports::FrameBudget;

/// [`Watch::signal`] when the host interrupted; any other non-zero value
/// is the sequence number of the outermost call that ran out of time.
const INTERRUPT: u64 = u64::MAX;

/// Operations between two clock reads of a call with a budget.
pub(crate) const CHECK_EVERY: u32 = 256;

/// Idle ticks after which the watchdog sleeps until a call starts.
const IDLE_TICKS: u32 = 20;

/// What the runtime thread and the watchdog (and interrupters) share.
#[derive(Debug, Default)]
struct Watch {
    /// 0, [`INTERRUPT`], or the number of the call whose time is up.
    signal: AtomicU64,
    /// The number of the outermost call running now (0: none).
    call: AtomicU64,
    /// The time limit in nanoseconds (0: none).
    limit: AtomicU64,
    /// The watchdog sleeps until a call starts and wakes it.
    drowsy: AtomicBool,
    /// The runtime is gone: the watchdog ends.
    closed: AtomicBool,
}

/// Why a call was stopped by the clock or the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    TimeUp(Duration),
    Interrupted,
    /// The mod's frame budget ran out (in this call, or before it): the
    /// text of [`gantry_host::reports::Spent`].
    Frame(String),
}

/// The runtime thread's side: starts and ends outermost calls, reads the
/// signal, owns the watchdog thread.
#[derive(Debug)]
pub(crate) struct Clock {
    watch: Arc<Watch>,
    /// The number of the last outermost call started.
    seq: Cell<u64>,
    /// The running call was stopped by an interrupt, which it consumes.
    interrupt_seen: Cell<bool>,
    watchdog: RefCell<Option<Thread>>,
    /// The wall-clock budget of each outermost call (`None`: none).
    call_budget: Cell<Option<Duration>>,
    /// When the running call's budget runs out (`None`: no budget runs).
    deadline: Cell<Option<Instant>>,
    /// Operations left before the next clock read.
    countdown: Cell<u32>,
    /// The running call has spent its budget.
    over: Cell<bool>,
    /// The mod's per-frame budget (see [`Clock::set_frame`]).
    frame: RefCell<Option<FrameBudget>>,
    /// When the running call started (with a frame budget).
    call_start: Cell<Option<Instant>>,
    /// The deadline is what is left of the frame's budget.
    deadline_is_frame: Cell<bool>,
    /// The frame's budget was spent before this call.
    skip: Cell<bool>,
}

impl Clock {
    /// A clock bounding calls to `limit` (zero: no bound, no thread).
    pub fn new(limit: Duration) -> std::io::Result<Self> {
        let clock = Self {
            watch: Arc::new(Watch::default()),
            seq: Cell::new(0),
            interrupt_seen: Cell::new(false),
            watchdog: RefCell::new(None),
            call_budget: Cell::new(None),
            deadline: Cell::new(None),
            countdown: Cell::new(CHECK_EVERY),
            over: Cell::new(false),
            frame: RefCell::new(None),
            call_start: Cell::new(None),
            deadline_is_frame: Cell::new(false),
            skip: Cell::new(false),
        };
        clock.set_limit(limit)?;
        Ok(clock)
    }

    /// Changes the time limit (zero: none); starts the watchdog thread the
    /// first time there is one.
    pub fn set_limit(&self, limit: Duration) -> std::io::Result<()> {
        let nanos = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
        self.watch.limit.store(nanos, Ordering::Relaxed);
        let mut watchdog = self.watchdog.borrow_mut();
        match &*watchdog {
            Some(thread) => thread.unpark(),
            None if nanos > 0 => {
                let watch = self.watch.clone();
                let handle = thread::Builder::new()
                    .name("gantry-rhai-watchdog".into())
                    .stack_size(64 * 1024)
                    .spawn(move || watch_calls(&watch))?;
                *watchdog = Some(handle.thread().clone());
            }
            None => {}
        }
        Ok(())
    }

    pub fn limit(&self) -> Duration {
        Duration::from_nanos(self.watch.limit.load(Ordering::Relaxed))
    }

    /// Sets the wall-clock budget of each outermost call from its first
    /// operation (`None`: none); a call past it stops with a time-up
    /// error naming the budget.
    pub fn set_call_budget(&self, budget: Option<Duration>) {
        self.call_budget.set(budget.filter(|b| !b.is_zero()));
    }

    /// An outermost call starts.
    #[inline]
    pub fn begin(&self) {
        let seq = self.seq.get() + 1;
        self.seq.set(seq);
        // Sequentially consistent with the watchdog's going to sleep: one
        // of the two sees the other (see `watch_calls`).
        self.watch.call.store(seq, Ordering::SeqCst);
        if self.watch.drowsy.load(Ordering::SeqCst) {
            self.wake();
        }
        if self.frame.borrow().is_some() {
            self.begin_frame();
        } else if let Some(budget) = self.call_budget.get() {
            self.deadline.set(Some(Instant::now() + budget));
            self.countdown.set(CHECK_EVERY);
        }
    }

    /// [`Clock::begin`] with a frame budget: a mod that spent this frame's
    /// budget has the call stop at its first operation; else the deadline
    /// is the nearer of the call budget and what is left of the frame's.
    #[cold]
    fn begin_frame(&self) {
        let Some(frame) = self.frame.borrow().clone() else {
            return;
        };
        let now = Instant::now();
        self.call_start.set(Some(now));
        self.countdown.set(CHECK_EVERY);
        if frame.is_spent() {
            self.skip.set(true);
            self.over.set(true);
            self.deadline.set(Some(now));
            return;
        }
        let left = frame.remaining();
        let (budget, is_frame) = match self.call_budget.get() {
            Some(call) if call <= left => (call, false),
            _ => (left, true),
        };
        self.deadline_is_frame.set(is_frame);
        self.deadline.set(Some(now + budget));
    }

    /// Charges every outermost call to a mod's per-frame budget (`None`:
    /// none); see [`FrameBudget`].
    pub fn set_frame(&self, frame: Option<FrameBudget>) {
        *self.frame.borrow_mut() = frame;
    }

    #[cold]
    fn wake(&self) {
        if self.watch.drowsy.swap(false, Ordering::SeqCst)
            && let Some(thread) = &*self.watchdog.borrow()
        {
            thread.unpark();
        }
    }

    /// The outermost call ended: its time-up signal, and the interrupt it
    /// was stopped by, are spent.
    #[inline]
    pub fn end(&self) {
        self.watch.call.store(0, Ordering::Relaxed);
        self.deadline.set(None);
        self.over.set(false);
        if let Some(started) = self.call_start.take() {
            if let Some(frame) = &*self.frame.borrow() {
                frame.charge(started.elapsed());
            }
            self.skip.set(false);
            self.deadline_is_frame.set(false);
        }
        let signal = self.watch.signal.load(Ordering::Relaxed);
        if signal != 0 || self.interrupt_seen.get() {
            self.clear(signal);
        }
    }

    #[cold]
    fn clear(&self, signal: u64) {
        let seen = self.interrupt_seen.replace(false);
        if signal == self.seq.get() || (signal == INTERRUPT && seen) {
            let _ =
                self.watch
                    .signal
                    .compare_exchange(signal, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// Is the signal raised? The progress callback's one atomic load.
    #[inline]
    pub fn signalled(&self) -> bool {
        self.watch.signal.load(Ordering::Relaxed) != 0
            || (self.deadline.get().is_some() && self.past_deadline())
    }

    /// Counts an operation of a call with a budget; every
    /// [`CHECK_EVERY`] of them, reads the clock. True once past.
    #[inline]
    fn past_deadline(&self) -> bool {
        if self.over.get() {
            return true;
        }
        let left = self.countdown.get().saturating_sub(1);
        if left > 0 {
            self.countdown.set(left);
            return false;
        }
        self.countdown.set(CHECK_EVERY);
        let over = self.deadline.get().is_some_and(|d| Instant::now() >= d);
        self.over.set(over);
        over
    }

    /// Must the running call stop, and why? A time-up signal left from an
    /// earlier call is dropped here.
    #[cold]
    pub fn stop(&self) -> Option<Stop> {
        match self.watch.signal.load(Ordering::Relaxed) {
            0 if self.over.get() => self.over_stop(),
            0 => None,
            INTERRUPT => {
                self.interrupt_seen.set(true);
                Some(Stop::Interrupted)
            }
            call if call == self.seq.get() => Some(Stop::TimeUp(self.limit())),
            stale => {
                let _ = self.watch.signal.compare_exchange(
                    stale,
                    0,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                None
            }
        }
    }

    /// The stop of a call past its deadline: the frame's, or its own.
    fn over_stop(&self) -> Option<Stop> {
        let frame = self.frame.borrow().clone();
        match frame {
            Some(frame) if self.skip.get() => Some(Stop::Frame(frame.skipped())),
            Some(frame) if self.deadline_is_frame.get() => {
                let ran = self
                    .call_start
                    .get()
                    .map_or(Duration::ZERO, |s| s.elapsed());
                Some(Stop::Frame(frame.spend(None, ran)))
            }
            _ => self.call_budget.get().map(Stop::TimeUp),
        }
    }

    pub fn interrupter(&self) -> Interrupter {
        Interrupter {
            watch: self.watch.clone(),
        }
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        self.watch.closed.store(true, Ordering::SeqCst);
        if let Some(thread) = &*self.watchdog.borrow() {
            thread.unpark();
        }
    }
}

/// Stops the script call running now at its next operation, from any
/// thread (a Ctrl-C handler): the call fails with an `interrupted` error.
/// With no call running, the next call to start is stopped instead, so an
/// interrupt arriving between two calls is not lost; one stopped outermost
/// call (with the handler calls it set off) consumes it, and later calls
/// run normally — a host that means to quit stops calling.
#[derive(Debug, Clone)]
pub struct Interrupter {
    watch: Arc<Watch>,
}

impl Interrupter {
    pub fn interrupt(&self) {
        self.watch.signal.store(INTERRUPT, Ordering::Relaxed);
    }
}

/// How often the watchdog looks: a twentieth of the limit, within 1 to 50
/// ms, so a call stops between the limit and the limit plus two ticks.
fn tick(limit: Duration) -> Duration {
    (limit / 20).clamp(Duration::from_millis(1), Duration::from_millis(50))
}

/// The watchdog thread: notes when each outermost call was first seen and
/// raises the signal for it once it has run longer than the limit. Sleeps
/// until woken when no call has run for a while.
fn watch_calls(watch: &Watch) {
    let mut seen = 0;
    let mut since = Instant::now();
    let mut idle = 0;
    while !watch.closed.load(Ordering::SeqCst) {
        let limit = Duration::from_nanos(watch.limit.load(Ordering::Relaxed));
        if limit.is_zero() {
            // No bound: nothing to watch until `Clock::set_limit` wakes us.
            seen = 0;
            thread::park();
            continue;
        }
        let call = watch.call.load(Ordering::SeqCst);
        if call == 0 {
            seen = 0;
            idle += 1;
            if idle >= IDLE_TICKS {
                idle = 0;
                // Sequentially consistent with `Clock::begin`: either it
                // sees `drowsy` and wakes us, or we see its call here.
                watch.drowsy.store(true, Ordering::SeqCst);
                if watch.call.load(Ordering::SeqCst) == 0 && !watch.closed.load(Ordering::SeqCst) {
                    thread::park();
                }
                watch.drowsy.store(false, Ordering::SeqCst);
                continue;
            }
        } else {
            idle = 0;
            if call != seen {
                seen = call;
                since = Instant::now();
            } else if since.elapsed() >= limit {
                let _ =
                    watch
                        .signal
                        .compare_exchange(0, call, Ordering::Relaxed, Ordering::Relaxed);
            }
        }
        thread::park_timeout(tick(limit));
    }
}
