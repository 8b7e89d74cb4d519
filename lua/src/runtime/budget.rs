//! The instruction budget and the time limit, without slowing normal
//! dispatch.
//!
//! A Lua count hook makes every instruction go through the hook check (it
//! roughly doubles the cost of plain Lua code), so the hook is *not* set while
//! calls are short. Instead:
//! - entering Lua from the host (a top level, a handler call, a reply or a
//!   coroutine resume) bumps a generation counter; leaving bumps it again,
//!   so an odd generation means "a call is running" — two relaxed atomic adds
//!   per outermost call, nothing per instruction;
//! - a watchdog thread wakes every `interval`; when it sees the same odd
//!   generation twice, that call has run for at least one interval, and it
//!   arms the count hook on the main Lua thread (`lua_sethook` is designed to
//!   be called asynchronously: the reference interpreter calls it from a
//!   signal handler);
//! - once armed, every [`STEP`] instructions add to the call's count; past the
//!   budget the hook raises an error naming the script and line; the outermost
//!   exit disarms the hook.
//!
//! So the budget counts instructions from the moment a call is found running
//! long; a runaway loop is stopped within `interval` plus `budget`
//! instructions. Coroutines a script creates carry the hook from their start
//! (they are not the hot path), so a runaway coroutine is stopped as well.
//!
//! **A spent budget stays spent.** A script may catch the budget's error
//! (`pcall`, `xpcall`, a coroutine's resume, the fast lane's per-listener
//! protected call): were the hook to raise once per [`STEP`], `while true do
//! pcall(runaway) end` would run for ever. So once the budget is spent, the
//! hook re-arms itself at one instruction on the running thread and on the
//! main thread, and raises at every instruction after (the same message,
//! naming the line where the budget ran out), until the outermost
//! call returns to the host ([`Budget::exit`] disarms the main thread and
//! clears the mark). A coroutine's hook left at one instruction is put back
//! to [`STEP`] by its next hook call once a new budget runs. None of this
//! touches the time before the budget is spent: the hook still runs once
//! per [`STEP`] and only once armed.
//!
//! **The time limit.** The watchdog also notes when it first saw a call's
//! generation; once that call has run for longer than the time limit, it
//! marks the call timed out and arms the hook at one instruction, on the
//! main thread and on the coroutine the sandbox resumed last (see
//! [`Budget::track`]), so the next instruction raises — however few
//! instructions the call runs between costly C calls. No clock is read on
//! the hot path: the time is the watchdog's, so a call is stopped between
//! `time_limit` and `time_limit` plus two intervals after it started. A C
//! function that can itself run long (pattern matching, the table
//! functions' loops: see `bounded`) asks [`Budget::stop_due`] as it goes
//! and stops with the same error ([`raise_stop`]).
//!
//! **The call budget.** A game's per-call allowance in wall-clock time
//! ([`Budget::set_call_budget`], milliseconds where the time limit is
//! seconds): each outermost call notes its deadline as it enters (one
//! clock read), counted from its first instruction. While a call budget
//! is set the watchdog ticks every quarter of it ([`watch_tick`]), so a
//! call still running at its second look has the hook armed, which then
//! reads the clock every [`STEP`] instructions and stops the call at its
//! deadline with "call budget of N µs exceeded" at its line. Arming the
//! hook at the call's first instruction instead would make every
//! instruction of every call pay the hook's trap (half again the bus
//! benchmark's send); as it is, a call within its budget pays the clock
//! read only. A mod's per-frame budget ([`Budget::set_frame`],
//! [`FrameBudget`]) moves the deadline nearer when less is left of the
//! frame, and a call after the frame's budget is spent stops at its
//! first instruction.
//!
//! **Interrupting.** An [`Interrupter`] (another thread: the CLI's Ctrl-C)
//! sets a flag that stays set and wakes the watchdog, which arms the hook
//! at one instruction: the running call stops at its next instruction, and
//! any later call once it has run for an interval.
//!
//! **Every stop is final.** The budget, the time limit, an interrupt and
//! the soft memory limit all mark the budget spent: the error is raised
//! again at every instruction until the outermost call returns (a
//! forgiven listener aside, [`Budget::forgive`]). An error raised inside
//! the hook reaches a message handler with Lua's hooks off, so the
//! sandbox's `xpcall` does not call the script's handler for a stop
//! (`bounded::calls`); and a coroutine killed inside the hook keeps its
//! hooks off, so closing it runs none of its `__close` handlers.
//!
//! **Counting for a profile.** With a counter ([`Limits::counter`],
//! `gantry run --profile --lua-instructions`) the hook is armed on the
//! main thread from the start and never disarmed, and called at random
//! steps around [`PROFILE_STEP`]; each call adds the step that ended to
//! the counter and to the budget's count (one hook for both), so the
//! budget then counts from a call's first instruction. The trap the hook
//! sets on every instruction is the cost (two to three times slower Lua),
//! which is why nothing counts unless asked.
//!
//! **The soft memory limit.** Lua raises an allocation refused at the
//! memory limit as a memory error, which calls no message handler, so
//! nothing can tell where it happened. The armed hook therefore also checks
//! the memory in use against a soft limit a little below the hard one
//! ([`soft_memory_limit`]); past it (after a full collection) it raises an
//! ordinary error at the running line. The hard limit (mlua's) stays the
//! backstop; what reaches it — a single allocation larger than what is left
//! below the limit, or memory filled before the watchdog armed the hook —
//! is reported without a line (see `shared::error_text`). The sandbox's
//! `string.rep`, the one function that turns a small input into a huge
//! string, checks its result's size before it allocates.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use gantry_host::reports::FrameBudget;
use mlua::ffi;

/// Instructions between two hook calls once armed.
pub const STEP: i32 = 1000;

/// The mean of the instructions between two hook calls while a profile
/// counts them ([`Limits::counter`]); each step is drawn between half and
/// one and a half of it.
pub const PROFILE_STEP: i32 = 200;

/// Listener calls one outermost call may see stopped by the budget and go
/// on ([`Budget::forgive`]).
pub const MAX_FORGIVEN: u64 = 4;

/// One Lua state's budget, shared with the watchdog thread and the hook.
pub struct Budget {
    generation: AtomicU64,
    armed: AtomicBool,
    main: AtomicPtr<ffi::lua_State>,
    used: AtomicU64,
    limit: AtomicU64,
    stop: AtomicBool,
    /// Set by the hook when the budget is spent; cleared when the outermost
    /// call exits. While set, every instruction raises.
    spent: AtomicBool,
    /// The error raised when the budget was spent, raised again (the same
    /// text, so it names the runaway line) at every instruction after.
    spent_error: Mutex<String>,
    /// Handler calls of this outermost call stopped by the budget and
    /// forgiven ([`Budget::forgive`]).
    forgiven: AtomicU64,
    /// The hard memory limit in bytes (0: none).
    memory_limit: u64,
    /// [`soft_memory_limit`] of `memory_limit` (0: none).
    memory_soft: u64,
    /// The time limit of one outermost call, in nanoseconds.
    time_limit: AtomicU64,
    /// The [`Budget::token`] of the call the watchdog found past its time
    /// limit (0: none). A token, not a flag: a stale one (the call has
    /// returned, or a listener's stop was forgiven) matches nothing.
    timed_out: AtomicU64,
    /// Set by an [`Interrupter`]; stays set.
    interrupted: AtomicBool,
    /// The coroutine the sandbox resumed and that runs now (null: the main
    /// thread), which the watchdog arms with the main thread. Kept alive by
    /// a registry slot while it is here ([`Budget::track`]).
    running: AtomicPtr<ffi::lua_State>,
    /// Set while the watchdog arms `running`: [`Budget::track`] waits for
    /// it before the thread it replaced can be collected.
    arming: AtomicBool,
    /// The wall-clock budget of one outermost call in nanoseconds (0:
    /// none), see [`Budget::set_call_budget`].
    call_budget: AtomicU64,
    /// When the running call's budget runs out, in nanoseconds since
    /// `born` (0: no call budget running).
    deadline: AtomicU64,
    /// The origin of `deadline`.
    born: Instant,
    /// The mod's per-frame budget (see [`Budget::set_frame`]), with
    /// `has_frame` the one load a call without one pays.
    frame: Mutex<Option<FrameBudget>>,
    has_frame: AtomicBool,
    /// When the running call started (with a frame budget), since `born`.
    call_start: AtomicU64,
    /// `deadline` is what is left of the frame's budget, not the call's.
    deadline_is_frame: AtomicBool,
    /// The frame's budget was spent before this call: it stops at its
    /// first instruction.
    skip: AtomicBool,
    /// Every instruction counted is added here too (`gantry run
    /// --profile`): see [`Limits::counter`]. While it is set, the hook
    /// is armed from the start and stays armed.
    counter: Option<Arc<AtomicU64>>,
    /// The state of the profile's step draws (xorshift; the Lua thread
    /// alone uses it).
    draw: AtomicU64,
}

/// The memory in use past which the armed hook raises an ordinary error:
/// the limit less a sixteenth of it (between 64 KiB and 16 MiB), room
/// enough for what a [`STEP`] of ordinary code allocates between two
/// checks.
pub fn soft_memory_limit(limit: u64) -> u64 {
    let margin = (limit / 16).clamp(64 * 1024, 16 * 1024 * 1024);
    limit.saturating_sub(margin).max(1)
}

/// Budgets by main-thread pointer, for the hook (a plain C function).
static BUDGETS: Mutex<Vec<(usize, Arc<Budget>)>> = Mutex::new(Vec::new());

/// The registry slot that keeps [`Budget::running`] alive.
static RUNNING_KEY: u8 = 0;

impl Budget {
    fn find(main: *mut ffi::lua_State) -> Option<Arc<Budget>> {
        let list = BUDGETS.lock().unwrap_or_else(|e| e.into_inner());
        list.iter()
            .find(|(p, _)| *p == main as usize)
            .map(|(_, b)| b.clone())
    }

    /// Marks the start of an outermost call into Lua; with a call budget,
    /// starts its clock (see [`Budget::start_clock`]).
    #[inline]
    pub fn enter(&self) {
        self.used.store(0, Ordering::Relaxed);
        self.forgiven.store(0, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::Release);
        let call_budget = self.call_budget.load(Ordering::Relaxed);
        if self.has_frame.load(Ordering::Relaxed) {
            self.enter_frame(call_budget);
        } else if call_budget != 0 {
            self.start_clock(call_budget);
        }
    }

    /// [`Budget::enter`] with a frame budget: a mod that spent this
    /// frame's budget has the call stop at its first instruction; else the
    /// call's deadline is the nearer of its own budget and what is left of
    /// the frame's.
    #[cold]
    fn enter_frame(&self, call_budget: u64) {
        let frame = self.frame.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(frame) = frame else {
            if call_budget != 0 {
                self.start_clock(call_budget);
            }
            return;
        };
        self.call_start.store(self.now(), Ordering::Relaxed);
        if frame.is_spent() {
            self.skip.store(true, Ordering::Relaxed);
            let main = self.main.load(Ordering::Acquire);
            if !main.is_null() {
                self.armed.store(true, Ordering::Release);
                // SAFETY: `main` is the live main state (cleared before it
                // closes); we are on its thread, about to call into it.
                unsafe { ffi::lua_sethook(main, Some(budget_hook), ffi::LUA_MASKCOUNT, 1) };
            }
            return;
        }
        let left = nanos(frame.remaining()).max(1);
        let is_frame = call_budget == 0 || left < call_budget;
        self.deadline_is_frame.store(is_frame, Ordering::Relaxed);
        self.start_clock(if is_frame { left } else { call_budget });
    }

    /// [`Budget::exit`] with a frame budget: the call's time is charged.
    #[cold]
    fn exit_frame(&self) {
        let frame = self.frame.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(frame) = frame {
            let ran = self
                .now()
                .saturating_sub(self.call_start.load(Ordering::Relaxed));
            frame.charge(Duration::from_nanos(ran));
        }
        self.skip.store(false, Ordering::Relaxed);
        self.deadline_is_frame.store(false, Ordering::Relaxed);
    }

    /// Charges every call to a mod's per-frame budget (`None`: none); see
    /// [`FrameBudget`].
    pub fn set_frame(&self, frame: Option<FrameBudget>) {
        let has = frame.is_some();
        *self.frame.lock().unwrap_or_else(|e| e.into_inner()) = frame;
        self.has_frame.store(has, Ordering::Relaxed);
    }

    /// Starts the running call's clock: its deadline, counted from its
    /// first instruction. The hook is not set here: a count hook makes
    /// every instruction pay a trap (half again the cost of the bus
    /// benchmark's send), so, as for the instruction budget, the watchdog
    /// arms it once it sees the call still running, its ticks a quarter
    /// of the call budget while one is set ([`watch_tick`]); from then on
    /// the hook reads the clock every [`STEP`] instructions (a clock read
    /// per few microseconds of a tight loop). A call stops within about
    /// its budget, however late the hook was armed within it.
    fn start_clock(&self, call_budget: u64) {
        let deadline = self.now().saturating_add(call_budget).max(1);
        self.deadline.store(deadline, Ordering::Relaxed);
    }

    /// Nanoseconds since `born`.
    #[inline]
    fn now(&self) -> u64 {
        nanos(self.born.elapsed())
    }

    /// Sets the wall-clock budget of each outermost call (`None`: none).
    pub fn set_call_budget(&self, budget: Option<Duration>) {
        let nanos = budget.map_or(0, |b| nanos(b).max(1));
        self.call_budget.store(nanos, Ordering::Relaxed);
    }

    /// Marks the end of an outermost call; disarms the hook if it was armed.
    #[inline]
    pub fn exit(&self) {
        self.generation.fetch_add(1, Ordering::Release);
        self.deadline.store(0, Ordering::Relaxed);
        if self.has_frame.load(Ordering::Relaxed) {
            self.exit_frame();
        }
        if self.armed.load(Ordering::Acquire) {
            self.disarm();
        }
    }

    /// Disarms the hook after an outermost call. While counting
    /// instructions the hook stays armed (its step running on across
    /// calls, so a call shorter than a step is sampled too); only a main
    /// thread left at one instruction goes back to a step.
    #[cold]
    fn disarm(&self) {
        let main = self.main.load(Ordering::Acquire);
        let counting = self.counter.is_some();
        if !main.is_null() {
            // SAFETY: `main` is the live main state of the runtime that owns
            // this budget (cleared before the state closes); we are on the
            // thread that runs it, outside any Lua code.
            unsafe {
                if !counting {
                    ffi::lua_sethook(main, None, 0, 0);
                } else if ffi::lua_gethookcount(main) == 1 {
                    ffi::lua_sethook(main, Some(budget_hook), ffi::LUA_MASKCOUNT, self.step());
                }
            }
        }
        self.spent.store(false, Ordering::Release);
        std::mem::take(&mut *self.spent_error.lock().unwrap_or_else(|e| e.into_inner()));
        self.deadline.store(0, Ordering::Relaxed);
        self.armed.store(counting, Ordering::Release);
    }

    /// The hook's next step: [`STEP`], or while counting instructions one
    /// drawn between half and one and a half [`PROFILE_STEP`].
    fn step(&self) -> i32 {
        if self.counter.is_none() {
            return STEP;
        }
        let mut x = self.draw.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.draw.store(x, Ordering::Relaxed);
        let spread = u64::try_from(PROFILE_STEP).unwrap_or(1);
        PROFILE_STEP / 2 + i32::try_from(x % spread).unwrap_or(0)
    }

    /// A listener's call, stopped by the budget, has returned to the host,
    /// which reports it: the stop was that listener's, and its caller and
    /// the other listeners go on (one failing handler does not stop the
    /// others). The call under way goes on with half a budget (and,
    /// stopped by the time limit, half a time limit: the watchdog restarts
    /// its clock when it sees the forgiven count move); after
    /// [`MAX_FORGIVEN`] stopped listeners it stays spent, so that a caller
    /// that sends again and again to a runaway listener is itself stopped:
    /// one outermost call runs at most `(1 + MAX_FORGIVEN / 2)` budgets.
    /// An interrupt is never forgiven. A no-op when the budget is not spent.
    pub fn forgive(&self) {
        if !self.spent.load(Ordering::Acquire)
            || self.interrupted.load(Ordering::Acquire)
            || self.forgiven.fetch_add(1, Ordering::Relaxed) >= MAX_FORGIVEN
        {
            return;
        }
        let limit = self.limit.load(Ordering::Relaxed);
        self.used.store(limit / 2, Ordering::Relaxed);
        if self.deadline.load(Ordering::Relaxed) != 0
            && !self.deadline_is_frame.load(Ordering::Relaxed)
        {
            let half = self.call_budget.load(Ordering::Relaxed) / 2;
            let deadline = self.now().saturating_add(half).max(1);
            self.deadline.store(deadline, Ordering::Relaxed);
        }
        std::mem::take(&mut *self.spent_error.lock().unwrap_or_else(|e| e.into_inner()));
        // Threads left at one instruction go back to a hook call per STEP
        // at their next instruction (see `budget_hook`).
        self.spent.store(false, Ordering::Release);
    }

    pub fn set_limit(&self, instructions: u64) {
        self.limit.store(instructions, Ordering::Relaxed);
    }

    pub fn set_time_limit(&self, limit: Duration) {
        self.time_limit.store(nanos(limit), Ordering::Relaxed);
    }

    fn time_limit(&self) -> Duration {
        Duration::from_nanos(self.time_limit.load(Ordering::Relaxed))
    }

    /// Identifies the running outermost call and how many of its listeners
    /// were forgiven; never 0 while a call runs (the generation is odd).
    fn token(&self) -> u64 {
        let generation = self.generation.load(Ordering::Acquire);
        let forgiven = self.forgiven.load(Ordering::Relaxed).min(0xff);
        (generation << 8) | forgiven
    }

    /// The stop the watchdog or an interrupter asked for, if any.
    fn requested(&self) -> Option<Stop> {
        if self.interrupted.load(Ordering::Acquire) {
            return Some(Stop::Interrupted);
        }
        let timed_out = self.timed_out.load(Ordering::Acquire);
        if timed_out != 0 && timed_out == self.token() {
            return Some(Stop::Time(self.time_limit()));
        }
        if self.skip.load(Ordering::Relaxed) {
            return self.frame().map(Stop::FrameSkipped);
        }
        let deadline = self.deadline.load(Ordering::Relaxed);
        if deadline == 0 {
            return None;
        }
        let now = self.now();
        if now < deadline {
            return None;
        }
        if self.deadline_is_frame.load(Ordering::Relaxed) {
            let ran = now.saturating_sub(self.call_start.load(Ordering::Relaxed));
            if let Some(frame) = self.frame() {
                return Some(Stop::Frame(frame, Duration::from_nanos(ran)));
            }
        }
        Some(Stop::CallBudget(Duration::from_nanos(
            self.call_budget.load(Ordering::Relaxed),
        )))
    }

    fn frame(&self) -> Option<FrameBudget> {
        self.frame.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Should a long C function stop now ([`raise_stop`])? Cheap: a few
    /// atomic loads, for a C loop to ask every thousand steps or so.
    #[inline]
    pub fn stop_due(&self) -> bool {
        self.spent.load(Ordering::Acquire) || self.requested().is_some()
    }

    /// Sets the hook on a coroutine for its whole life.
    ///
    /// # Safety
    /// `thread` must be a live Lua thread of this budget's state, not running
    /// on another OS thread.
    pub unsafe fn hook_thread(thread: *mut ffi::lua_State) {
        // SAFETY: the caller keeps this function's contract (a live thread
        // of this state, on this OS thread); `budget_hook` is ours.
        unsafe { ffi::lua_sethook(thread, Some(budget_hook), ffi::LUA_MASKCOUNT, STEP) };
    }

    /// Notes that `thread` runs now (the sandbox's resume, before resuming
    /// it, and with the resuming thread after), so that the watchdog arms
    /// it when the call runs out of time. The registry keeps it alive while
    /// it is noted; a noted thread that has stopped running (an error
    /// between the two notes) is harmless: arming it only makes its next
    /// hook call set its count back. A thread resumed while a stop is due is
    /// armed here at one instruction.
    ///
    /// # Safety
    /// `state` is the running thread of this budget's Lua state, with
    /// `thread` at stack index `index` (a live thread of the same state).
    pub unsafe fn track(&self, state: *mut ffi::lua_State, index: i32) {
        // SAFETY: as the caller promises.
        unsafe {
            let thread = ffi::lua_tothread(state, index);
            // Alive through the registry first, then published.
            ffi::lua_pushvalue(state, index);
            ffi::lua_rawsetp(
                state,
                ffi::LUA_REGISTRYINDEX,
                &RUNNING_KEY as *const u8 as _,
            );
            self.running.store(thread, Ordering::SeqCst);
            // The watchdog may be arming the thread noted before, which the
            // registry no longer keeps: it must finish before the next
            // collection, which cannot happen before this returns.
            while self.arming.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            if thread != state && self.requested().is_some() {
                ffi::lua_sethook(thread, Some(budget_hook), ffi::LUA_MASKCOUNT, 1);
            }
        }
    }

    /// Arms the main thread and the noted running thread at one
    /// instruction (from the watchdog thread), for a stop that is due.
    fn arm_stop(&self, main: *mut ffi::lua_State) {
        self.armed.store(true, Ordering::Release);
        self.arming.store(true, Ordering::SeqCst);
        let running = self.running.load(Ordering::SeqCst);
        // SAFETY: lua_sethook only stores the hook and sets the trap flags
        // of the running frames; Lua allows calling it asynchronously
        // (lua.c does so from a signal handler). `main` lives until the
        // watchdog stops; `running` is kept alive by the registry until
        // `track` replaces it, which then waits for `arming` to clear.
        unsafe {
            ffi::lua_sethook(main, Some(budget_hook), ffi::LUA_MASKCOUNT, 1);
            if !running.is_null() && running != main {
                ffi::lua_sethook(running, Some(budget_hook), ffi::LUA_MASKCOUNT, 1);
            }
        }
        self.arming.store(false, Ordering::SeqCst);
    }
}

/// A handle that stops the scripts of one runtime from any thread (the
/// CLI's Ctrl-C): see [`Interrupter::interrupt`].
#[derive(Clone)]
pub struct Interrupter {
    budget: Arc<Budget>,
    watchdog: Thread,
}

impl Interrupter {
    /// Stops the call running in the runtime at its next instruction, with
    /// an error "interrupted by the host" at the script's line (a long
    /// pattern match or table loop stops within a few thousand steps). The
    /// interrupt stays: every later call is stopped as well, at the latest
    /// once it has run for one watchdog interval, and no message handler,
    /// `pcall` or listener forgiveness gets past it. A host stops calling
    /// into the runtime after interrupting it (the CLI saves the table and
    /// exits).
    pub fn interrupt(&self) {
        self.budget.interrupted.store(true, Ordering::SeqCst);
        self.watchdog.unpark();
    }

    /// Has [`Interrupter::interrupt`] been called on this runtime?
    pub fn is_interrupted(&self) -> bool {
        self.budget.interrupted.load(Ordering::SeqCst)
    }
}

impl std::fmt::Debug for Interrupter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupter")
            .field("interrupted", &self.is_interrupted())
            .finish()
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// What the watchdog watches with.
pub struct Limits {
    pub instructions: u64,
    pub memory: Option<usize>,
    pub time: Duration,
    pub interval: Duration,
    /// The wall-clock budget of one outermost call, counted from its
    /// first instruction.
    pub call: Option<Duration>,
    /// Count every instruction into this (`None`: count none beyond the
    /// budget's). With a counter the hook is armed from the first
    /// instruction and never disarmed, and calls it every
    /// [`PROFILE_STEP`] instructions on average, the step drawn at random
    /// each time: the instructions of a step are added when it ends, so
    /// whoever reads the counter around a call gets an unbiased sample of
    /// its instructions (a fixed step would alias with a game's periodic
    /// ticks). The budget then counts from a call's first instruction too.
    pub counter: Option<Arc<AtomicU64>>,
}

/// Owns the watchdog thread; stops it (and forgets the state) when dropped,
/// which must happen before the Lua state closes.
pub struct Watchdog {
    budget: Arc<Budget>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching the state whose main thread is `main`.
    ///
    /// # Safety
    /// `main` must be the main thread of a Lua state that outlives this
    /// watchdog, and Lua code of that state must run only on the thread that
    /// creates the watchdog.
    pub unsafe fn start(main: *mut ffi::lua_State, limits: Limits) -> std::io::Result<Watchdog> {
        let memory_limit = limits.memory.map_or(0, |m| m as u64);
        let budget = Arc::new(Budget {
            generation: AtomicU64::new(0),
            armed: AtomicBool::new(false),
            main: AtomicPtr::new(main),
            used: AtomicU64::new(0),
            limit: AtomicU64::new(limits.instructions),
            stop: AtomicBool::new(false),
            spent: AtomicBool::new(false),
            spent_error: Mutex::new(String::new()),
            forgiven: AtomicU64::new(0),
            memory_limit,
            memory_soft: if memory_limit == 0 {
                0
            } else {
                soft_memory_limit(memory_limit)
            },
            time_limit: AtomicU64::new(nanos(limits.time)),
            timed_out: AtomicU64::new(0),
            interrupted: AtomicBool::new(false),
            running: AtomicPtr::new(std::ptr::null_mut()),
            arming: AtomicBool::new(false),
            call_budget: AtomicU64::new(limits.call.map_or(0, |b| nanos(b).max(1))),
            deadline: AtomicU64::new(0),
            born: Instant::now(),
            frame: Mutex::new(None),
            has_frame: AtomicBool::new(false),
            call_start: AtomicU64::new(0),
            deadline_is_frame: AtomicBool::new(false),
            skip: AtomicBool::new(false),
            counter: limits.counter,
            draw: AtomicU64::new(0x9e37_79b9_7f4a_7c15),
        });
        BUDGETS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((main as usize, budget.clone()));
        if budget.counter.is_some() {
            budget.armed.store(true, Ordering::Release);
            // SAFETY: as the caller promises, `main` is the live main
            // thread, on this thread, outside any Lua code.
            unsafe { ffi::lua_sethook(main, Some(budget_hook), ffi::LUA_MASKCOUNT, budget.step()) };
        }
        let watched = budget.clone();
        let interval = limits.interval;
        let thread = std::thread::Builder::new()
            .name("gantry-lua-watchdog".into())
            .spawn(move || watch(&watched, interval))?;
        Ok(Watchdog {
            budget,
            thread: Some(thread),
        })
    }

    pub fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    /// A handle that interrupts this runtime's calls from any thread.
    pub fn interrupter(&self) -> Interrupter {
        let watchdog = match &self.thread {
            Some(thread) => thread.thread().clone(),
            None => std::thread::current(),
        };
        Interrupter {
            budget: self.budget.clone(),
            watchdog,
        }
    }
}

/// The watchdog: arms the instruction budget's hook once a call has run for
/// an interval, marks it timed out past the time limit, and arms the hook
/// at one instruction while a stop is due.
fn watch(budget: &Budget, interval: Duration) {
    let mut last = u64::MAX;
    // When `last` was first seen running, and its forgiven count then.
    let mut since = Instant::now();
    let mut forgiven_seen = 0;
    while !budget.stop.load(Ordering::Acquire) {
        std::thread::park_timeout(watch_tick(budget, interval));
        let generation = budget.generation.load(Ordering::Acquire);
        let main = budget.main.load(Ordering::Acquire);
        if generation & 1 == 0 || main.is_null() || budget.stop.load(Ordering::Acquire) {
            last = generation;
            continue;
        }
        let now = Instant::now();
        if generation != last {
            last = generation;
            since = now;
            forgiven_seen = budget.forgiven.load(Ordering::Relaxed);
        } else {
            if !budget.armed.load(Ordering::Acquire) {
                budget.armed.store(true, Ordering::Release);
                tracing::debug!("a Lua call runs long; arming the instruction budget");
                // SAFETY: as in `Budget::arm_stop`.
                unsafe { ffi::lua_sethook(main, Some(budget_hook), ffi::LUA_MASKCOUNT, STEP) };
            }
            let limit = budget.time_limit();
            let forgiven = budget.forgiven.load(Ordering::Relaxed);
            if forgiven != forgiven_seen {
                // A listener stopped by the limit was forgiven: its caller
                // goes on with half a time limit.
                forgiven_seen = forgiven;
                since = now.checked_sub(limit / 2).unwrap_or(now);
            }
            if now.duration_since(since) >= limit {
                let token = budget.token();
                if budget.timed_out.swap(token, Ordering::AcqRel) != token {
                    tracing::debug!(?limit, "a Lua call ran past its time limit; stopping it");
                }
            }
        }
        if budget.requested().is_some() {
            budget.arm_stop(main);
        }
    }
}

/// How long the watchdog sleeps: `interval`, or a quarter of the call
/// budget (at least 100 µs) while one is set or a frame budget runs, so
/// that a call running past its deadline has the hook armed within half
/// its budget.
fn watch_tick(budget: &Budget, interval: Duration) -> Duration {
    let call = budget.call_budget.load(Ordering::Relaxed);
    let tick = if budget.has_frame.load(Ordering::Relaxed) {
        let frame = budget
            .frame
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(u64::MAX, |f| nanos(f.limit()));
        frame.min(if call == 0 { u64::MAX } else { call })
    } else {
        call
    };
    if tick == 0 || tick == u64::MAX {
        return interval;
    }
    Duration::from_nanos(tick / 4)
        .max(Duration::from_micros(100))
        .min(interval)
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.budget.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
        let main = self
            .budget
            .main
            .swap(std::ptr::null_mut(), Ordering::AcqRel);
        BUDGETS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(p, _)| *p != main as usize);
    }
}

/// The count hook: a stop that is due (time limit, interrupt) or the
/// budget spent raise at the running line, and mark the budget spent so
/// that every instruction after raises too, until the outermost call
/// exits; past the soft memory limit likewise.
unsafe extern "C-unwind" fn budget_hook(state: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) {
    // SAFETY: called by Lua with a valid state and activation record, on
    // the thread that runs the state.
    unsafe {
        let main = main_of(state);
        let Some(budget) = Budget::find(main) else {
            return;
        };
        let limit = budget.limit.load(Ordering::Relaxed);
        if budget.spent.load(Ordering::Acquire) {
            // Still spent: this thread may have been left at STEP (a
            // coroutine resumed after the budget was spent).
            if ffi::lua_gethookcount(state) != 1 {
                ffi::lua_sethook(state, Some(budget_hook), ffi::LUA_MASKCOUNT, 1);
            }
            let again = budget
                .spent_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            drop(budget);
            if again.is_empty() {
                raise_text(state, message_of(state, ar, Stop::Budget(limit)));
            } else {
                raise_text(state, again);
            }
        }
        if let Some(stop) = budget.requested() {
            let message = spend(&budget, state, main, ar, stop);
            drop(budget);
            raise_text(state, message);
        }
        let count = ffi::lua_gethookcount(state);
        let counter = budget.counter.as_ref();
        if count == 1 || (counter.is_none() && count != STEP) {
            // A thread left at one instruction by a spent budget or a stop
            // no longer due, now running under a new one: back to a hook
            // call per step.
            ffi::lua_sethook(state, Some(budget_hook), ffi::LUA_MASKCOUNT, budget.step());
            return;
        }
        // The instructions since the last call: STEP, or while counting
        // the step drawn then, which the next draw replaces.
        let ran = u64::try_from(count).unwrap_or(0);
        if let Some(counter) = counter {
            counter.fetch_add(ran, Ordering::Relaxed);
            ffi::lua_sethook(state, Some(budget_hook), ffi::LUA_MASKCOUNT, budget.step());
        }
        let used = budget.used.fetch_add(ran, Ordering::Relaxed) + ran;
        if used > limit {
            let message = spend(&budget, state, main, ar, Stop::Budget(limit));
            drop(budget);
            raise_text(state, message);
        }
        let (soft, hard) = (budget.memory_soft, budget.memory_limit);
        if soft != 0 && memory_in_use(state) > soft {
            // Garbage counts until it is collected; the hard limit collects
            // before it refuses, so do the same before calling it exceeded.
            ffi::lua_gc(state, ffi::LUA_GCCOLLECT, 0);
            let in_use = memory_in_use(state);
            if in_use > soft {
                let message = spend(&budget, state, main, ar, Stop::Memory { hard, in_use });
                drop(budget);
                raise_text(state, message);
            }
        }
    }
}

/// The main thread of `state`'s Lua state.
///
/// # Safety
/// `state` is a live Lua state, on the thread running it.
unsafe fn main_of(state: *mut ffi::lua_State) -> *mut ffi::lua_State {
    // SAFETY: as the caller promises.
    unsafe {
        ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_MAINTHREAD);
        let main = ffi::lua_tothread(state, -1);
        ffi::lua_pop(state, 1);
        main
    }
}

/// Marks the budget spent by `stop` (the hook at one instruction on
/// `state` and on the main thread, so that every instruction after raises
/// again) and returns the error to raise, which names the running line.
///
/// # Safety
/// `state` is the running thread, `main` its main thread, `ar` a frame of
/// `state`.
unsafe fn spend(
    budget: &Budget,
    state: *mut ffi::lua_State,
    main: *mut ffi::lua_State,
    ar: *mut ffi::lua_Debug,
    stop: Stop,
) -> String {
    // SAFETY: as the caller promises.
    unsafe {
        budget.spent.store(true, Ordering::Release);
        // Exit must disarm the main thread (the hook may have been armed
        // on a coroutine only).
        budget.armed.store(true, Ordering::Release);
        ffi::lua_sethook(state, Some(budget_hook), ffi::LUA_MASKCOUNT, 1);
        if main != state {
            ffi::lua_sethook(main, Some(budget_hook), ffi::LUA_MASKCOUNT, 1);
        }
        let message = message_of(state, ar, stop);
        budget
            .spent_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone_from(&message);
        message
    }
}

/// Raises the stop that [`Budget::stop_due`] found, from a C function
/// (not the hook): the same error the hook raises, naming the script line
/// that called the function, and the budget spent from then on.
///
/// # Safety
/// `state` is the running thread of `budget`'s state, inside a C function
/// called from Lua, with no Rust value that needs dropping in the frames
/// this error unwinds.
pub unsafe fn raise_stop(budget: &Budget, state: *mut ffi::lua_State) -> ! {
    // SAFETY: as the caller promises; level 0 is the C function itself.
    unsafe {
        let mut frame: ffi::lua_Debug = std::mem::zeroed();
        ffi::lua_getstack(state, 0, &mut frame);
        let message = if budget.spent.load(Ordering::Acquire) {
            let again = budget
                .spent_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if again.is_empty() {
                let limit = budget.limit.load(Ordering::Relaxed);
                message_of(state, &mut frame, Stop::Budget(limit))
            } else {
                again
            }
        } else {
            let stop = budget
                .requested()
                .unwrap_or(Stop::Time(budget.time_limit()));
            spend(budget, state, main_of(state), &mut frame, stop)
        };
        raise_text(state, message)
    }
}

/// Is `thread` dead from an error raised inside the budget's hook? Lua
/// leaves such a thread with its hooks off (`allowhook`), so closing it
/// would run its `__close` handlers out of the budget's reach. The hook
/// sets a thread's count to one before it raises there, which nothing
/// else leaves on a dead thread (the sandbox sets no other hook).
///
/// # Safety
/// `thread` is a live Lua thread, not running on another OS thread.
pub unsafe fn stopped_by_hook(thread: *mut ffi::lua_State) -> bool {
    // SAFETY: as the caller promises.
    unsafe {
        let status = ffi::lua_status(thread);
        status != ffi::LUA_OK
            && status != ffi::LUA_YIELD
            && ffi::lua_gethook(thread).is_some()
            && ffi::lua_gethookmask(thread) == ffi::LUA_MASKCOUNT
            && ffi::lua_gethookcount(thread) == 1
    }
}

/// Bytes the Lua state uses, as Lua counts them.
///
/// # Safety
/// `state` is a live Lua state, on the thread running it.
unsafe fn memory_in_use(state: *mut ffi::lua_State) -> u64 {
    // SAFETY: as the caller promises.
    unsafe {
        let kib = ffi::lua_gc(state, ffi::LUA_GCCOUNT, 0).max(0) as u64;
        let rest = ffi::lua_gc(state, ffi::LUA_GCCOUNTB, 0).max(0) as u64;
        kib * 1024 + rest
    }
}

/// Why the hook stops the running code.
enum Stop {
    Budget(u64),
    CallBudget(Duration),
    /// The call reached what was left of its mod's frame budget, having
    /// run this long.
    Frame(FrameBudget, Duration),
    /// The mod's frame budget was spent before the call.
    FrameSkipped(FrameBudget),
    Memory {
        hard: u64,
        in_use: u64,
    },
    Time(Duration),
    Interrupted,
}

/// Raises `message` as a Lua error (does not return).
///
/// # Safety
/// Called from the hook or a C function, with its state.
unsafe fn raise_text(state: *mut ffi::lua_State, message: String) -> ! {
    // SAFETY: as the caller promises; the message is dropped before
    // `lua_error` unwinds past this frame.
    unsafe {
        ffi::lua_pushlstring(state, message.as_ptr().cast(), message.len());
        drop(message);
        ffi::lua_error(state)
    }
}

/// The error of `stop` at the running line: the first frame with a line
/// that is not the runtime's own Lua (`=gantry-…` chunks, such as the
/// sandbox's coroutine wrappers).
///
/// # Safety
/// Called from the hook with its state and activation record.
unsafe fn message_of(state: *mut ffi::lua_State, ar: *mut ffi::lua_Debug, stop: Stop) -> String {
    // SAFETY: as the caller promises.
    unsafe {
        let mut place = place_of(state, ar);
        if place.is_empty() {
            let mut frame: ffi::lua_Debug = std::mem::zeroed();
            let mut level = 1;
            while place.is_empty() && level < 16 && ffi::lua_getstack(state, level, &mut frame) != 0
            {
                place = place_of(state, &mut frame);
                level += 1;
            }
        }
        match stop {
            Stop::Budget(limit) => {
                format!("{place}instruction budget of {limit} exceeded (runaway loop?)")
            }
            Stop::Memory { hard, in_use } => {
                format!("{place}memory limit of {hard} bytes exceeded ({in_use} bytes in use)")
            }
            Stop::Time(limit) => {
                format!("{place}time limit exceeded: the call ran longer than {limit:?}")
            }
            Stop::CallBudget(budget) => format!(
                "{place}call budget of {} µs exceeded: the call ran longer than its budget (runaway loop?)",
                budget.as_micros()
            ),
            Stop::Frame(frame, ran) => {
                let at = place.strip_suffix(": ").map(str::to_owned);
                format!("{place}{}", frame.spend(at, ran))
            }
            Stop::FrameSkipped(frame) => format!("{place}{}", frame.skipped()),
            Stop::Interrupted => format!("{place}interrupted by the host"),
        }
    }
}

/// `src:line: ` of the frame `ar` describes, or empty when it has no line
/// or is the runtime's own Lua.
///
/// # Safety
/// `ar` describes a live frame of `state`.
unsafe fn place_of(state: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) -> String {
    // SAFETY: as the caller promises.
    unsafe {
        if ffi::lua_getinfo(state, c"Sl".as_ptr(), ar) == 0 || (*ar).currentline < 0 {
            return String::new();
        }
        if !(*ar).source.is_null()
            && CStr::from_ptr((*ar).source)
                .to_bytes()
                .starts_with(b"=gantry-")
        {
            return String::new();
        }
        let src = CStr::from_ptr((*ar).short_src.as_ptr()).to_string_lossy();
        format!("{src}:{}: ", (*ar).currentline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Lua state watched with `counter` (if any); the watchdog first,
    /// so it stops before the state closes.
    fn watched(counter: Option<Arc<AtomicU64>>) -> (Watchdog, mlua::Lua) {
        let lua = mlua::Lua::new();
        let mut main = std::ptr::null_mut();
        // SAFETY: called from host code, so the state is the main thread.
        unsafe { lua.exec_raw::<()>((), |state| main = state) }.unwrap();
        let limits = Limits {
            instructions: u64::MAX,
            memory: None,
            time: Duration::MAX,
            interval: Duration::from_secs(60),
            call: None,
            counter,
        };
        // SAFETY: `main` is the main thread of `lua`, which outlives the
        // watchdog in every test (dropped first), run on this thread.
        let watchdog = unsafe { Watchdog::start(main, limits) }.unwrap();
        (watchdog, lua)
    }

    /// The instructions `code` runs, counted one by one by mlua's hook on
    /// a state of its own.
    fn exact(code: &str) -> u64 {
        let lua = mlua::Lua::new();
        let count = Arc::new(AtomicU64::new(0));
        let seen = count.clone();
        lua.set_hook(
            mlua::HookTriggers::new().every_nth_instruction(1),
            move |_, _| {
                seen.fetch_add(1, Ordering::Relaxed);
                Ok(mlua::VmState::Continue)
            },
        )
        .unwrap();
        let f = lua.load(code).into_function().unwrap();
        count.store(0, Ordering::Relaxed);
        f.call::<()>(()).unwrap();
        count.load(Ordering::Relaxed)
    }

    /// Runs `code` as one outermost call, as the runtime does.
    fn run(watchdog: &Watchdog, lua: &mlua::Lua, code: &str) {
        watchdog.budget().enter();
        let result = lua.load(code).exec();
        watchdog.budget().exit();
        result.unwrap();
    }

    #[test]
    fn a_counted_loop_counts_about_its_instructions() {
        let counter = Arc::new(AtomicU64::new(0));
        let (watchdog, lua) = watched(Some(counter.clone()));
        let code = "local x = 0 for i = 1, 100000 do x = x + i end";
        run(&watchdog, &lua, code);
        let (counted, expected) = (counter.load(Ordering::Relaxed), exact(code));
        assert!(expected > 200_000);
        assert!(
            counted.abs_diff(expected) < expected / 50,
            "counted {counted} for {expected} instructions"
        );
    }

    #[test]
    fn short_calls_are_counted_on_average() {
        let counter = Arc::new(AtomicU64::new(0));
        let (watchdog, lua) = watched(Some(counter.clone()));
        let code = "local x = 0 for i = 1, 10 do x = x + i end";
        let short = lua.load(code).into_function().unwrap();
        // Each call far shorter than a step, yet they add up.
        for _ in 0..20_000 {
            watchdog.budget().enter();
            short.call::<()>(()).unwrap();
            watchdog.budget().exit();
        }
        let counted = counter.load(Ordering::Relaxed);
        let expected = 20_000 * exact(code);
        assert!(
            counted.abs_diff(expected) < expected / 20,
            "counted {counted} for about {expected} instructions"
        );
    }

    #[test]
    fn a_counted_runaway_loop_is_still_stopped_by_the_budget() {
        let counter = Arc::new(AtomicU64::new(0));
        let (watchdog, lua) = watched(Some(counter.clone()));
        watchdog.budget().set_limit(1_000_000);
        watchdog.budget().enter();
        let stopped = lua.load("while true do end").exec();
        watchdog.budget().exit();
        let error = stopped.expect_err("the loop is stopped").to_string();
        assert!(
            error.contains("instruction budget of 1000000 exceeded"),
            "{error}"
        );
        let before = counter.load(Ordering::Relaxed);
        assert!(
            before >= 1_000_000,
            "the loop's instructions are counted: {before}"
        );
        // The next call runs and is counted as before.
        run(
            &watchdog,
            &lua,
            "local x = 0 for i = 1, 100000 do x = x + i end",
        );
        let after = counter.load(Ordering::Relaxed) - before;
        assert!((190_000..220_000).contains(&after), "counted {after}");
    }

    #[test]
    fn without_a_counter_the_hook_is_not_armed_between_calls() {
        let (watchdog, lua) = watched(None);
        run(&watchdog, &lua, "local x = 1");
        let main = watchdog.budget().main.load(Ordering::Acquire);
        // SAFETY: the live main thread, on this thread, outside Lua code.
        assert!(unsafe { ffi::lua_gethook(main) }.is_none());
    }

    #[test]
    fn steps_are_drawn_around_the_profile_step() {
        let counter = Arc::new(AtomicU64::new(0));
        let (watchdog, _lua) = watched(Some(counter));
        let steps: Vec<i32> = (0..10_000).map(|_| watchdog.budget().step()).collect();
        assert!(
            steps
                .iter()
                .all(|s| (PROFILE_STEP / 2..PROFILE_STEP * 3 / 2).contains(s))
        );
        let mean = steps.iter().map(|&s| f64::from(s)).sum::<f64>() / steps.len() as f64;
        assert!((mean - f64::from(PROFILE_STEP)).abs() < f64::from(PROFILE_STEP) / 20.0);
    }
}
