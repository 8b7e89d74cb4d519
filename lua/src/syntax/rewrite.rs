//! The load-time rewriter: a text transform, no runtime.
//!
//! Every API call whose key is a valid string-literal key becomes a call of
//! a key-baked function for (function, key), without the key argument:
//!
//! ```text
//! NotifyObjectMessage(self, "Player.Hurt", dmg)   -- what the author wrote
//! __ga1              (self,               dmg)   -- what runs
//! ```
//!
//! # Layout guarantees
//! - Every line stays where it was: nothing adds or removes a newline, and
//!   newlines inside a removed region are kept. Errors and recorded call sites
//!   point at the author's line.
//! - Every token after the key keeps its byte column; so do earlier arguments
//!   (`self` above). Only line 1 shifts right, by the prologue's length.
//! - Strings, comments, method calls, field calls on other tables, shadowed
//!   names (a local `_ENV` shadows them all) and non-literal or invalid keys
//!   are untouched (they stay on the generic path). So are calls of a
//!   function the script assigns itself (`NotifyMessage = f`,
//!   `_G.NotifyMessage = f`, `function GMP.RunHook() end`): the baked call
//!   would bypass it. A script that may write its environment (or `GMP`)
//!   in a way the scanner cannot follow — an alias (`local env = _ENV`),
//!   an argument (`rawset(_G, k, f)`), a computed key, any use of `load` —
//!   keeps every call of that table on the generic path (see `scan`).
//! - A source Lua would refuse is returned unchanged, so Lua reports its
//!   own error with its own line numbers. tree-sitter's grammar accepts
//!   more than Lua's (see `refusal`): no `ERROR` node is not enough.
//!
//! # Runtime contract
//! When [`Rewrite::bakes`] is empty, [`Rewrite::source`] is the original text
//! byte for byte: run it as any chunk. Otherwise:
//! - Load `source` as text under the script's own chunk name.
//! - Call the chunk with exactly **one argument**, a table `bakes` with
//!   `bakes[slot]` = the baked function for that slot, for every slot in
//!   `1..=`[`Rewrite::slot_count`] ([`Rewrite::slots`] lists each slot's
//!   function and key). The rewriter never rewrites a chunk whose main body
//!   reads `...`, so the script cannot observe the argument.
//! - The prologue, on line 1 (replacing a `#` shebang line, which Lua's
//!   `load` would reject), is
//!   `local __ga=...;local __ga1,__ga2=__ga[1],__ga[2];`: the first
//!   [`BAKES_PROLOGUE_MAX_LOCALS`] slots (fewer if the script declares many
//!   locals itself, as Lua allows 200 per function, or its main chunk has a
//!   statement needing many registers, as Lua allows 254; a chunk with no
//!   room left even for the table's own local is not rewritten) become
//!   locals, reached as upvalues; later slots are called as
//!   `__ga[151](...)`, so the table must outlive the chunk and stay
//!   unmodified. The prefix (`__ga`) is the first of `__ga`..`__gz` that
//!   occurs nowhere in the source, so no script name can capture or
//!   shadow it.
//! - A baked function receives the call's arguments without the key, in the
//!   same order (`NotifyObjectMessage(obj, "K", a, b)` → `f(obj, a, b)`,
//!   `ListenMessage("K", owner, fn)` → `f(owner, fn)`), and must behave as
//!   the generic function called with the key, returning what it returns.

use std::collections::HashMap;
use std::ops::Range;

use gantry_host::key::validate_key;
use gantry_host::{ApiFunction, Span};

use super::parse::parse;
use super::refusal::{Above, Check};
use super::registers::main_temporaries;
use super::scan::{ChunkLocals, ChunkScan, Found, scan_chunk_checked};

/// At most this many slots become locals of the main chunk; the rest are
/// indexed from the bakes table at each call. Keeps well below Lua's limits
/// of 200 locals per function and 255 upvalues per closure.
pub const BAKES_PROLOGUE_MAX_LOCALS: usize = 150;

/// Lua's limit on active locals per function, minus a safety margin for
/// the prologue's table local and temporaries.
const LOCALS_BUDGET: usize = 190;

/// Lua's limit on the registers of a function (below `MAXREGS`, 255),
/// minus the prologue's table local and a margin.
const REGISTERS_BUDGET: usize = 250;

/// Lua's limit on the active locals of a function (`MAXVARS`).
const LUA_MAX_LOCALS: usize = 200;

/// One rewritten call.
#[derive(Debug, Clone, PartialEq)]
pub struct Bake {
    /// 1-based index into the bakes table the chunk is called with; one slot
    /// per distinct (function, key).
    pub slot: usize,
    pub function: ApiFunction,
    pub key: String,
    /// The call as written in the original source (same lines in the output).
    pub site: Span,
    /// The parameter names of a listen's function literal
    /// (`function(id, reward)`), which name the key's parameters where
    /// nothing declares them; `None` for any other call.
    pub listener_params: Option<Vec<String>>,
}

/// The rewritten chunk and what it needs from the runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    pub source: String,
    /// Every rewritten call, in source order.
    pub bakes: Vec<Bake>,
}

impl Rewrite {
    /// Whether `source` differs from the original (and so needs the bakes table).
    pub fn is_rewritten(&self) -> bool {
        !self.bakes.is_empty()
    }

    /// How many slots the bakes table must fill (`1..=slot_count`).
    pub fn slot_count(&self) -> usize {
        self.bakes.iter().map(|b| b.slot).max().unwrap_or(0)
    }

    /// The first bake of each slot, in slot order: what to put at `bakes[slot]`.
    pub fn slots(&self) -> impl Iterator<Item = &Bake> {
        let mut next = 1;
        self.bakes.iter().filter(move |b| {
            // Slots are numbered in order of their first call.
            let first = b.slot == next;
            if first {
                next += 1;
            }
            first
        })
    }
}

/// Rewrites every bakeable call in `source`. Never fails: anything it cannot
/// rewrite safely stays as written.
///
/// A source of 64 KiB or more is parsed in two halves at once when it can
/// be cut at a top-level statement (see `split`); the calls found are the
/// same either way.
pub fn rewrite(source: &str) -> Rewrite {
    let split = source.len() >= super::split::SPLIT_MIN_BYTES
        && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    rewrite_with(source, split)
}

/// [`rewrite`], parsing in two halves when `split` asks and the source
/// allows it.
pub(crate) fn rewrite_with(source: &str, split: bool) -> Rewrite {
    let unchanged = || Rewrite {
        source: source.to_owned(),
        bakes: Vec::new(),
    };
    if split
        && let Some(at) = super::split::split_point(source)
        && let Some((scan, temporaries)) = super::split::scan_halves(source, at)
    {
        return rewrite_scanned(source, &scan, temporaries).unwrap_or_else(unchanged);
    }
    let Some(tree) = parse(source, None) else {
        return unchanged();
    };
    let check = Check::new(&tree, source, 0..source.len(), &Above::default(), true);
    let (scan, refusal) = scan_chunk_checked(&tree, source, ChunkLocals::default(), check);
    if let Some(refusal) = refusal {
        tracing::debug!(
            at = refusal.at,
            why = refusal.why,
            "Lua would refuse the source; left for Lua to report"
        );
        return unchanged();
    }
    rewrite_scanned(source, &scan, main_temporaries(&tree)).unwrap_or_else(unchanged)
}

/// The rewrite of `source` from its scan; `temporaries` bounds what a
/// statement of its main chunk needs in registers beyond its locals.
fn rewrite_scanned(source: &str, scan: &ChunkScan, temporaries: usize) -> Option<Rewrite> {
    let bakeable = |f: &&Found| {
        f.call
            .literal_key()
            .is_some_and(|k| validate_key(k).is_ok())
            && !scan.may_be_replaced(f.call.function, f.call.via_gmp)
    };
    if !scan.calls.iter().any(|f| bakeable(&f)) {
        return None;
    }
    if scan.main_reads_varargs {
        tracing::debug!("chunk reads `...` at top level; left on the generic path");
        return None;
    }
    let Some(prefix) = (b'a'..=b'z')
        .map(|c| format!("__g{}", c as char))
        .find(|p| !source.contains(p.as_str()))
    else {
        tracing::debug!("no free bakes prefix; left on the generic path");
        return None;
    };
    // The prologue's locals sit under the chunk's own in its registers:
    // they must leave room for the chunk's locals and for its widest
    // statement (`x = a..b..c` of 100 operands needs 100).
    if scan.main_locals >= LUA_MAX_LOCALS || scan.main_locals + temporaries >= REGISTERS_BUDGET {
        // Even the prologue's table local (`__ga`) might be one too many.
        tracing::debug!("no local or register left for the bakes table; left on the generic path");
        return None;
    }
    let local_slots = BAKES_PROLOGUE_MAX_LOCALS
        .min(LOCALS_BUDGET.saturating_sub(scan.main_locals))
        .min(REGISTERS_BUDGET.saturating_sub(scan.main_locals + temporaries));

    let mut out = source.as_bytes().to_vec();
    let mut slots: HashMap<(ApiFunction, &str), usize> = HashMap::new();
    let mut bakes = Vec::new();
    for found in scan.calls.iter().filter(bakeable) {
        let call = &found.call;
        let key = call.literal_key()?;
        let slot = slots
            .get(&(call.function, key))
            .copied()
            .unwrap_or(slots.len() + 1);
        let callee = if slot <= local_slots {
            format!("{prefix}{slot}")
        } else {
            format!("{prefix}[{slot}]")
        };
        let Some(edits) = plan(found, &callee, source.as_bytes()) else {
            tracing::debug!(
                key,
                line = call.call.start_pos.line + 1,
                "baked name does not fit; left generic"
            );
            continue;
        };
        for (range, text) in edits {
            overwrite(&mut out, range, &text);
        }
        slots.entry((call.function, key)).or_insert(slot);
        bakes.push(Bake {
            slot,
            function: call.function,
            key: key.to_owned(),
            site: call.call,
            listener_params: call.listener_arg().and_then(|a| a.function_params.clone()),
        });
    }
    if bakes.is_empty() {
        return None;
    }
    let body = String::from_utf8(out).ok()?;
    let prologue = prologue(&prefix, slots.len().min(local_slots));
    let mut rewritten = String::with_capacity(prologue.len() + body.len());
    rewritten.push_str(&prologue);
    if body.starts_with('#') {
        // Lua skips a first line starting with `#` only when loading files;
        // the prologue takes its place, keeping every later line in place.
        rewritten.push_str(&body[body.find('\n').unwrap_or(body.len())..]);
    } else {
        rewritten.push_str(&body);
    }
    Some(Rewrite {
        source: rewritten,
        bakes,
    })
}

/// `local __ga=...;local __ga1,__ga2=__ga[1],__ga[2];`
fn prologue(prefix: &str, locals: usize) -> String {
    let mut p = format!("local {prefix}=...;");
    if locals > 0 {
        let names: Vec<String> = (1..=locals).map(|s| format!("{prefix}{s}")).collect();
        let values: Vec<String> = (1..=locals).map(|s| format!("{prefix}[{s}]")).collect();
        p.push_str(&format!("local {}={};", names.join(","), values.join(",")));
    }
    p
}

/// The length-preserving edits that turn `found` into a call of `callee`
/// without its key, or `None` if the new callee does not fit in place.
fn plan(found: &Found, callee: &str, source: &[u8]) -> Option<Vec<(Range<usize>, String)>> {
    let call = &found.call;
    let key_index = call.function.key_index();
    let key = call.args.get(key_index)?.span;
    let has_later_args = call.args.len() > key_index + 1;
    if found.commas.len() + 1 != call.args.len() {
        return None;
    }
    let edits = if key_index == 0 {
        // Nothing but `(` sits between the callee and the key: write
        // `baked(` over `Name("Key",` in one piece.
        let (end, text) = if !found.parenthesized {
            (key.end, format!("{callee}()")) // NotifyMessage"Key"
        } else if has_later_args {
            (found.commas[0] + 1, format!("{callee}("))
        } else {
            (key.end, format!("{callee}("))
        };
        vec![(call.callee.start..end, text)]
    } else {
        // Earlier arguments stay put: the callee is overwritten in place
        // (`f (x)` is a valid call), the key and one comma are blanked.
        let cut = if has_later_args {
            key.start..found.commas[key_index] + 1
        } else {
            found.commas[key_index - 1]..key.end
        };
        vec![
            (call.callee.start..call.callee.end, callee.to_owned()),
            (cut, String::new()),
        ]
    };
    edits
        .iter()
        .all(|(range, text)| first_line_len(source, range) >= text.len())
        .then_some(edits)
}

/// Bytes of `range` before its first line break.
fn first_line_len(source: &[u8], range: &Range<usize>) -> usize {
    source.get(range.clone()).map_or(0, |r| {
        r.iter().take_while(|&&b| b != b'\n' && b != b'\r').count()
    })
}

/// Writes `text` at the start of `range` and blanks the rest, keeping line
/// breaks so no line moves. Byte-for-byte, so later columns do not move either.
fn overwrite(out: &mut [u8], range: Range<usize>, text: &str) {
    let Some(region) = out.get_mut(range) else {
        return;
    };
    for (i, byte) in region.iter_mut().enumerate() {
        if let Some(&t) = text.as_bytes().get(i) {
            *byte = t;
        } else if *byte != b'\n' && *byte != b'\r' {
            *byte = b' ';
        }
    }
}

#[cfg(test)]
mod tests;
