//! The instruction budget, without slowing normal dispatch.
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
use std::thread::JoinHandle;
use std::time::Duration;

use mlua::ffi;

/// Instructions between two hook calls once armed.
pub const STEP: i32 = 1000;

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

impl Budget {
    fn find(main: *mut ffi::lua_State) -> Option<Arc<Budget>> {
        let list = BUDGETS.lock().unwrap_or_else(|e| e.into_inner());
        list.iter()
            .find(|(p, _)| *p == main as usize)
            .map(|(_, b)| b.clone())
    }

    /// Marks the start of an outermost call into Lua.
    #[inline]
    pub fn enter(&self) {
        self.used.store(0, Ordering::Relaxed);
        self.forgiven.store(0, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Marks the end of an outermost call; disarms the hook if it was armed.
    #[inline]
    pub fn exit(&self) {
        self.generation.fetch_add(1, Ordering::Release);
        if self.armed.load(Ordering::Acquire) {
            self.disarm();
        }
    }

    #[cold]
    fn disarm(&self) {
        let main = self.main.load(Ordering::Acquire);
        if !main.is_null() {
            // SAFETY: `main` is the live main state of the runtime that owns
            // this budget (cleared before the state closes); we are on the
            // thread that runs it, outside any Lua code.
            unsafe { ffi::lua_sethook(main, None, 0, 0) };
        }
        self.spent.store(false, Ordering::Release);
        std::mem::take(&mut *self.spent_error.lock().unwrap_or_else(|e| e.into_inner()));
        self.armed.store(false, Ordering::Release);
    }

    /// A listener's call, stopped by the budget, has returned to the host,
    /// which reports it: the stop was that listener's, and its caller and
    /// the other listeners go on (DESIGN: one failing handler does not stop
    /// the others). The call under way goes on with half a budget; after
    /// [`MAX_FORGIVEN`] stopped listeners it stays spent, so that a caller
    /// that sends again and again to a runaway listener is itself stopped:
    /// one outermost call runs at most `(1 + MAX_FORGIVEN / 2)` budgets.
    /// A no-op when the budget is not spent.
    pub fn forgive(&self) {
        if !self.spent.load(Ordering::Acquire)
            || self.forgiven.fetch_add(1, Ordering::Relaxed) >= MAX_FORGIVEN
        {
            return;
        }
        let limit = self.limit.load(Ordering::Relaxed);
        self.used.store(limit / 2, Ordering::Relaxed);
        std::mem::take(&mut *self.spent_error.lock().unwrap_or_else(|e| e.into_inner()));
        // Threads left at one instruction go back to a hook call per STEP
        // at their next instruction (see `budget_hook`).
        self.spent.store(false, Ordering::Release);
    }

    pub fn set_limit(&self, instructions: u64) {
        self.limit.store(instructions, Ordering::Relaxed);
    }

    /// Sets the hook on a coroutine for its whole life.
    ///
    /// # Safety
    /// `thread` must be a live Lua thread of this budget's state, not running
    /// on another OS thread.
    pub unsafe fn hook_thread(thread: *mut ffi::lua_State) {
        unsafe { ffi::lua_sethook(thread, Some(budget_hook), ffi::LUA_MASKCOUNT, STEP) };
    }
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
    pub unsafe fn start(
        main: *mut ffi::lua_State,
        limit: u64,
        memory_limit: Option<usize>,
        interval: Duration,
    ) -> std::io::Result<Watchdog> {
        let memory_limit = memory_limit.map_or(0, |m| m as u64);
        let budget = Arc::new(Budget {
            generation: AtomicU64::new(0),
            armed: AtomicBool::new(false),
            main: AtomicPtr::new(main),
            used: AtomicU64::new(0),
            limit: AtomicU64::new(limit),
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
        });
        BUDGETS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((main as usize, budget.clone()));
        let watched = budget.clone();
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
}

fn watch(budget: &Budget, interval: Duration) {
    let mut last = u64::MAX;
    while !budget.stop.load(Ordering::Acquire) {
        std::thread::park_timeout(interval);
        let generation = budget.generation.load(Ordering::Acquire);
        if generation % 2 == 1 && generation == last && !budget.armed.load(Ordering::Acquire) {
            let main = budget.main.load(Ordering::Acquire);
            if !main.is_null() && !budget.stop.load(Ordering::Acquire) {
                budget.armed.store(true, Ordering::Release);
                tracing::debug!("a Lua call runs long; arming the instruction budget");
                // SAFETY: lua_sethook only stores the hook and sets the
                // trap flags of the running frames; Lua allows calling it
                // asynchronously (lua.c does so from a signal handler).
                unsafe { ffi::lua_sethook(main, Some(budget_hook), ffi::LUA_MASKCOUNT, STEP) };
            }
        }
        last = generation;
    }
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

/// The count hook: adds a step; past the budget, marks it spent and raises
/// an error at the running line (and at every instruction after, until the
/// outermost call exits); past the soft memory limit, raises an error at
/// the running line.
unsafe extern "C-unwind" fn budget_hook(state: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) {
    // SAFETY: called by Lua with a valid state and activation record, on
    // the thread that runs the state.
    unsafe {
        ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_MAINTHREAD);
        let main = ffi::lua_tothread(state, -1);
        ffi::lua_pop(state, 1);
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
                raise(state, ar, Stop::Budget(limit));
            } else {
                raise_text(state, again);
            }
            return;
        }
        if ffi::lua_gethookcount(state) != STEP {
            // A thread left at one instruction by a spent budget, now
            // running under a new one: back to a hook call per STEP.
            ffi::lua_sethook(state, Some(budget_hook), ffi::LUA_MASKCOUNT, STEP);
            return;
        }
        let used = budget.used.fetch_add(STEP as u64, Ordering::Relaxed) + STEP as u64;
        if used > limit {
            budget.spent.store(true, Ordering::Release);
            // Exit must disarm the main thread (the hook may have been
            // armed on a coroutine only).
            budget.armed.store(true, Ordering::Release);
            ffi::lua_sethook(state, Some(budget_hook), ffi::LUA_MASKCOUNT, 1);
            if main != state {
                ffi::lua_sethook(main, Some(budget_hook), ffi::LUA_MASKCOUNT, 1);
            }
            let message = message_of(state, ar, Stop::Budget(limit));
            budget
                .spent_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone_from(&message);
            drop(budget);
            raise_text(state, message);
            return;
        }
        let (soft, hard) = (budget.memory_soft, budget.memory_limit);
        drop(budget);
        if soft != 0 && memory_in_use(state) > soft {
            // Garbage counts until it is collected; the hard limit collects
            // before it refuses, so do the same before calling it exceeded.
            ffi::lua_gc(state, ffi::LUA_GCCOLLECT, 0);
            let in_use = memory_in_use(state);
            if in_use > soft {
                raise(state, ar, Stop::Memory { hard, in_use });
            }
        }
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
    Memory { hard: u64, in_use: u64 },
}

/// Raises the error of `stop` at the running line (does not return).
///
/// # Safety
/// Called from the hook with its state and activation record.
unsafe fn raise(state: *mut ffi::lua_State, ar: *mut ffi::lua_Debug, stop: Stop) {
    // SAFETY: as the caller promises.
    unsafe { raise_text(state, message_of(state, ar, stop)) }
}

/// Raises `message` as a Lua error (does not return).
///
/// # Safety
/// Called from the hook, with its state.
unsafe fn raise_text(state: *mut ffi::lua_State, message: String) {
    // SAFETY: as the caller promises; the message is dropped before
    // `lua_error` unwinds past this frame.
    unsafe {
        ffi::lua_pushlstring(state, message.as_ptr().cast(), message.len());
        drop(message);
        ffi::lua_error(state);
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
