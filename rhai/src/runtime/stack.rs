//! The stack script calls run on.
//!
//! Rhai recurses over nested values in plain Rust — cloning, dropping,
//! measuring a value's size, hashing it — and no operation is counted
//! inside, so neither the operation nor the time limit stops it. A script
//! nesting arrays a few thousand deep (`loop { a = [a]; }`, or one level
//! per tick) overflowed the host thread's stack and aborted the process.
//!
//! What bounds the depth is Rhai's size check: an array counts every
//! element at every depth towards `max_array_size`, a map towards
//! `max_map_size`, so a value nests at most their sum deep. Every
//! outermost call into the engine (a top level, a handler the host runs)
//! therefore runs on a stack of this runtime sized for that depth (see
//! [`needed`]), made once and reused, so a call costs a stack switch and no
//! allocation. Handlers nested inside a call already run on it.
//!
//! Measured on Rhai 1.27, the deepest frame per level of nesting is a
//! map's clone: 2.2 KiB in an unoptimised build and 354 bytes in an
//! optimised one (drop, size, hash and `Debug` of arrays and maps take
//! less). The engine-level recursions, whose frames are larger (Rhai's
//! `==` and printing of arrays and maps call a script function per level:
//! 8 KiB a level unoptimised), are replaced by `nested`'s, which use only
//! plain recursion.

use std::cell::{Cell, RefCell};

use corosensei::stack::DefaultStack;

use super::RhaiOptions;

/// Stack per level of nesting, twice or more what was measured.
const PER_LEVEL: usize = if cfg!(debug_assertions) { 4096 } else { 1024 };

/// Stack for everything but nested values: Rhai's evaluator at the call
/// depth limit, through the hub's nesting of handler calls. A script
/// call's frames are tens of KiB unoptimised.
const HEADROOM: usize = 32 << 20;

/// Nesting assumed for a size limit of 0 (unlimited): no stack bounds an
/// unlimited depth, so such a runtime is only as safe as this. The
/// default limit's: a million levels reserved 4.3 GiB of address space in
/// a test build, past a 4 GiB `ulimit -v`.
pub const UNLIMITED_LEVELS: usize = 100_000;

/// The deepest value a script of a runtime with `options` can build: an
/// array level counts one element, a map level one entry.
pub fn deepest(options: &RhaiOptions) -> usize {
    let levels = |limit: usize| if limit == 0 { UNLIMITED_LEVELS } else { limit };
    levels(options.max_array_size).saturating_add(levels(options.max_map_size))
}

/// The stack a runtime with `options` runs its calls on, in bytes.
pub fn needed(options: &RhaiOptions) -> usize {
    deepest(options)
        .saturating_mul(PER_LEVEL)
        .saturating_add(HEADROOM)
}

/// A runtime's script stack: the size it needs. The stack itself is one
/// per thread, shared by every runtime on it (see [`ScriptStack::run`]), so
/// that a thread holding several runtimes reserves the address space once,
/// and a value dropped after its runtime is gone (a listener the hub drops
/// later) still finds it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScriptStack {
    size: usize,
}

thread_local! {
    /// This thread's script stack, made at the first call that needs it
    /// and remade larger for a runtime that needs more.
    static STACK: RefCell<Option<DefaultStack>> = const { RefCell::new(None) };
    /// The size of the script stack running now on this thread (0: none).
    static RUNNING: Cell<usize> = const { Cell::new(0) };
}

impl ScriptStack {
    pub fn new(options: &RhaiOptions) -> Self {
        Self {
            size: needed(options),
        }
    }

    /// Runs `f` on a script stack of at least this runtime's size; an
    /// error when it cannot be reserved. Code already on one as large runs
    /// `f` where it is: it is within that stack's budget (a handler a
    /// script's send sets off, a listener dropped during a call). A call
    /// into a runtime needing more, from one needing less, gets a stack of
    /// its own.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> std::io::Result<R> {
        let running = RUNNING.try_with(Cell::get).unwrap_or(0);
        if running >= self.size {
            return Ok(f());
        }
        let held = if running == 0 {
            STACK
                .try_with(|s| s.borrow_mut().take())
                .ok()
                .flatten()
                .filter(|stack| stack_size(stack) >= self.size)
        } else {
            None
        };
        let mut stack = match held {
            Some(stack) => stack,
            None => DefaultStack::new(self.size)?,
        };
        struct Restore(usize);
        impl Drop for Restore {
            fn drop(&mut self) {
                let _ = RUNNING.try_with(|r| r.set(self.0));
            }
        }
        let _restore = Restore(running);
        let _ = RUNNING.try_with(|r| r.set(stack_size(&stack)));
        let result = corosensei::on_stack(&mut stack, f);
        if running == 0 {
            let _ = STACK.try_with(|s| *s.borrow_mut() = Some(stack));
        }
        Ok(result)
    }
}

/// The usable size of `stack`.
fn stack_size(stack: &DefaultStack) -> usize {
    use corosensei::stack::Stack;
    stack.base().get() - stack.limit().get()
}
