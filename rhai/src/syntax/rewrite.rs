//! Source-level key baking for Rhai, keeping the author's positions.
//!
//! Every call the scanner finds whose key is a valid string literal becomes a
//! call of the function baked for that key (`gantry_host::baked_name`), with
//! the key argument removed: `NotifyObjectMessage(obj, "Player.Hurt", 5)`
//! runs as `NotifyObjectMessage__Player__Hurt(obj, 5)`. The runtime registers
//! a native function of that name with parameter names and types, so Rhai's
//! own dispatch checks arity, and the hub resolves the key once, at load.
//!
//! Errors and recorded call sites must point at the author's text, so the
//! rewrite keeps every line exactly (newlines inside removed text stay) and,
//! wherever the new text is not longer, the column of every following token:
//! the space the key argument frees is filled with blanks, after absorbing
//! what the longer callee name took. Only a baked name longer than the callee
//! plus the removed key text shifts the rest of its line, best effort.

use gantry_host::{ApiFunction, ScannedCall, Span, baked_name, key::validate_key};
use rhai::{Engine, OptimizationLevel};

use super::scanner::scan;

/// A script after baking.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    /// The text to compile: the author's, with literal-key calls baked.
    pub source: String,
    /// Every baked call, in source order: the functions the runtime must
    /// register before compiling [`Rewrite::source`].
    pub bakes: Vec<Bake>,
}

/// One baked call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bake {
    pub function: ApiFunction,
    pub key: String,
    /// The baked function's name, `gantry_host::baked_name(function, key)`.
    pub name: String,
    /// The whole call in the author's source.
    pub site: Span,
    /// The parameter names of a listen's closure (`|id, reward|`), which
    /// name the key's parameters where nothing declares them; `None` for
    /// any other call.
    pub listener_params: Option<Vec<String>>,
}

/// Bake every literal-key call of `source`.
///
/// A script that does not compile is returned unchanged with no bakes (the
/// engine then reports its own error at the author's position); so is one
/// whose rewrite would not compile, which would be a bug, logged as such.
/// Calls with a non-literal or invalid key keep the generic function.
pub fn rewrite(source: &str) -> Rewrite {
    let unchanged = || Rewrite {
        source: source.to_owned(),
        bakes: Vec::new(),
    };
    let checker = checker();
    if let Err(error) = checker.compile(source) {
        tracing::debug!(%error, "script does not compile; not baked");
        return unchanged();
    }
    let mut edits = Vec::new();
    let mut bakes = Vec::new();
    for call in scan(source) {
        if let Some(bake) = plan(&call, &mut edits) {
            bakes.push(bake);
        }
    }
    if bakes.is_empty() {
        return unchanged();
    }
    let rewritten = apply(source, &mut edits);
    if let Err(error) = checker.compile(&rewritten) {
        tracing::error!(%error, "baked script no longer compiles; running it unbaked");
        return unchanged();
    }
    Rewrite {
        source: rewritten,
        bakes,
    }
}

/// An engine that only parses: no packages, no optimization (which could
/// call functions), default nesting limits.
fn checker() -> Engine {
    let mut engine = Engine::new_raw();
    engine.set_optimization_level(OptimizationLevel::None);
    engine
}

/// Replace `start..end` with `text`, keeping the region's newlines.
#[derive(Debug)]
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

/// The edits that bake `call`, if its key is a valid string literal.
fn plan(call: &ScannedCall, edits: &mut Vec<Edit>) -> Option<Bake> {
    let key = call.literal_key()?;
    if validate_key(key).is_err() {
        return None;
    }
    let k = call.function.key_index();
    let key_span = call.args.get(k)?.span;
    // The key and one separating comma go; so does a trailing comma after a
    // lone key (`f("K",)` must not become `f(,)`).
    let (start, end) = match (k.checked_sub(1), call.args.get(k + 1)) {
        (Some(before), _) => (call.args[before].span.end, key_span.end),
        (None, Some(next)) => (key_span.start, next.span.start),
        (None, None) => (key_span.start, call.arg_list.end.saturating_sub(1)),
    };
    if end < start {
        return None;
    }
    let name = baked_name(call.function, key);
    edits.push(Edit {
        start: call.callee.start,
        end: call.callee.end,
        text: name.clone(),
    });
    edits.push(Edit {
        start,
        end,
        text: String::new(),
    });
    Some(Bake {
        function: call.function,
        key: key.to_owned(),
        name,
        site: call.call,
        listener_params: call.listener_arg().and_then(|a| a.function_params.clone()),
    })
}

/// Apply non-overlapping edits, carrying the column growth of a longer
/// replacement along the line until a removed region absorbs it.
fn apply(src: &str, edits: &mut [Edit]) -> String {
    edits.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(src.len());
    // How many columns the current output line runs ahead of the source.
    let mut carry = 0usize;
    let mut cursor = 0usize;
    for edit in edits.iter() {
        if edit.start < cursor || edit.end > src.len() {
            // Overlap cannot come from the scanner; skip rather than corrupt.
            tracing::error!(?edit, "overlapping bake edit skipped");
            continue;
        }
        let kept = &src[cursor..edit.start];
        if kept.contains('\n') {
            carry = 0;
        }
        out.push_str(kept);

        let original = &src[edit.start..edit.end];
        let mut segments = original.split('\n');
        let first = segments.next().unwrap_or_default();
        let first_width = first.chars().count();
        let new_width = edit.text.chars().count();
        out.push_str(&edit.text);
        if new_width >= first_width {
            carry += new_width - first_width;
        } else {
            let room = first_width - new_width;
            let absorbed = room.min(carry);
            carry -= absorbed;
            push_spaces(&mut out, room - absorbed);
        }
        // Later lines of the region: blank, with the last one keeping the
        // columns of what follows it.
        let rest: Vec<&str> = segments.collect();
        if let Some((last, middle)) = rest.split_last() {
            for _ in middle {
                out.push('\n');
            }
            out.push('\n');
            push_spaces(&mut out, last.chars().count());
            carry = 0;
        }
        cursor = edit.end;
    }
    out.push_str(&src[cursor..]);
    out
}

fn push_spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}
