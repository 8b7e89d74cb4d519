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

use std::cell::RefCell;

use corosensei::stack::DefaultStack;

use super::RhaiOptions;

/// Stack per level of nesting, twice or more what was measured.
const PER_LEVEL: usize = if cfg!(debug_assertions) { 4096 } else { 1024 };

/// Stack for everything but nested values: Rhai's evaluator at the call
/// depth limit, through the hub's nesting of handler calls. A script
/// call's frames are tens of KiB unoptimised.
const HEADROOM: usize = 32 << 20;

/// Nesting assumed for a size limit of 0 (unlimited): no stack bounds an
/// unlimited depth, so such a runtime is only as safe as this.
pub const UNLIMITED_LEVELS: usize = 1_000_000;

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

/// A runtime's script stack, reserved at its first call (the memory is
/// only committed as deep calls touch it).
pub(crate) struct ScriptStack {
    size: usize,
    stack: RefCell<Option<DefaultStack>>,
}

impl std::fmt::Debug for ScriptStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptStack")
            .field("size", &self.size)
            .finish()
    }
}

impl ScriptStack {
    pub fn new(options: &RhaiOptions) -> Self {
        Self {
            size: needed(options),
            stack: RefCell::new(None),
        }
    }

    /// Runs `f` on the script stack; an error when the stack cannot be
    /// reserved. Not reentrant by design: only outermost calls switch, and
    /// a reentrant use gets a stack of its own.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> std::io::Result<R> {
        let held = self.stack.borrow_mut().take();
        let mut stack = match held {
            Some(stack) => stack,
            None => DefaultStack::new(self.size)?,
        };
        let result = corosensei::on_stack(&mut stack, f);
        *self.stack.borrow_mut() = Some(stack);
        Ok(result)
    }
}
