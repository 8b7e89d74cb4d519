//! How deep a value nests, counting what Rhai's size limits do not.
//!
//! Rhai counts the elements of nested arrays and maps towards its size
//! limits, so their nesting is bounded, but not the values a closure
//! captures or a function pointer curries: `let g = f; f = || g;` in a
//! loop nests closures as deep as the script has operations, and an array
//! inside a curried function pointer escapes the count. Rhai drops, copies
//! and prints such a chain by recursion, a frame per level, so a chain
//! grown over many calls (kept in a listener's captured variables) would
//! overflow any stack. The runtime measures what it keeps between calls
//! and what it hands to the host, and refuses a value past its limit (see
//! `listen::call_fn`, `RhaiRuntime::global`).
//!
//! The walk recurses, but never deeper than the limit it checks, and it
//! runs on the script stack, whose budget per level (see `stack`) is many
//! times its frame.

use std::collections::HashMap;

use rhai::{Array, Dynamic, FnPtr, Map};

/// Is `value` nested deeper than `limit` levels? A level is an array, a
/// map, a function pointer with curried values, or a shared variable (what
/// a closure captures). A shared variable reached again is walked again
/// only when reached deeper than before, so a cycle (`f = || f`) ends and
/// a shared part costs once per depth it is reached at.
pub(crate) fn deeper_than(value: &Dynamic, limit: usize) -> bool {
    // Every listener call checks its result and captures: a plain value
    // is answered before any walk is set up.
    if !nests(value) {
        return false;
    }
    Walk { limit, seen: None }.deeper(value, 0)
}

struct Walk {
    limit: usize,
    /// The deepest each shared variable was reached at, by its address;
    /// made at the first shared part that nests (a map's hasher costs as
    /// much as the rest of a shallow walk).
    seen: Option<HashMap<usize, usize>>,
}

impl Walk {
    /// Is `value`, at `depth` levels, deeper than the limit?
    fn deeper(&mut self, value: &Dynamic, depth: usize) -> bool {
        if !nests(value) {
            return false;
        }
        if depth >= self.limit {
            return true;
        }
        let depth = depth + 1;
        if value.is_shared() {
            // Being written now (by the code that holds it): not walked.
            let Some(inner) = value.read_lock::<Dynamic>() else {
                return false;
            };
            // A captured number or string ends the walk here, before the
            // bookkeeping of shared parts (which allocates): the common
            // case of every listener call (`total += v`).
            if !nests(&inner) {
                return false;
            }
            let address = &*inner as *const Dynamic as usize;
            let seen = self.seen.get_or_insert_with(HashMap::new);
            if seen.get(&address).is_some_and(|&d| d >= depth) {
                return false;
            }
            seen.insert(address, depth);
            return self.deeper(&inner, depth);
        }
        if let Some(items) = value.read_lock::<Array>() {
            return items.iter().any(|x| self.deeper(x, depth));
        }
        if let Some(items) = value.read_lock::<Map>() {
            return items.values().any(|x| self.deeper(x, depth));
        }
        if let Some(f) = value.read_lock::<FnPtr>() {
            return f.iter_curry().any(|x| self.deeper(x, depth));
        }
        false
    }
}

/// Can `value` hold other values?
fn nests(value: &Dynamic) -> bool {
    value.is_shared()
        || value.is_array()
        || value.is_map()
        || (value.is_fnptr() && value.read_lock::<FnPtr>().is_some_and(|f| f.is_curried()))
}
