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

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use mlua::ffi;

/// Instructions between two hook calls once armed.
pub const STEP: i32 = 1000;

/// One Lua state's budget, shared with the watchdog thread and the hook.
pub struct Budget {
    generation: AtomicU64,
    armed: AtomicBool,
    main: AtomicPtr<ffi::lua_State>,
    used: AtomicU64,
    limit: AtomicU64,
    stop: AtomicBool,
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
        self.armed.store(false, Ordering::Release);
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
        interval: Duration,
    ) -> std::io::Result<Watchdog> {
        let budget = Arc::new(Budget {
            generation: AtomicU64::new(0),
            armed: AtomicBool::new(false),
            main: AtomicPtr::new(main),
            used: AtomicU64::new(0),
            limit: AtomicU64::new(limit),
            stop: AtomicBool::new(false),
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

/// The count hook: adds a step; past the budget, raises an error at the
/// running line.
unsafe extern "C-unwind" fn budget_hook(state: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) {
    // SAFETY: called by Lua with a valid state and activation record.
    unsafe {
        ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_MAINTHREAD);
        let main = ffi::lua_tothread(state, -1);
        ffi::lua_pop(state, 1);
        let Some(budget) = Budget::find(main) else {
            return;
        };
        let used = budget.used.fetch_add(STEP as u64, Ordering::Relaxed) + STEP as u64;
        let limit = budget.limit.load(Ordering::Relaxed);
        if used <= limit {
            return;
        }
        drop(budget);
        let mut place = String::new();
        if ffi::lua_getinfo(state, c"Sl".as_ptr(), ar) != 0 {
            let src = CStr::from_ptr((*ar).short_src.as_ptr()).to_string_lossy();
            place = format!("{src}:{}: ", (*ar).currentline);
        }
        let message = format!("{place}instruction budget of {limit} exceeded (runaway loop?)");
        ffi::lua_pushlstring(state, message.as_ptr().cast(), message.len());
        drop(message);
        drop(place);
        ffi::lua_error(state);
    }
}
