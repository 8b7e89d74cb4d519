//! Errors of the Rhai runtime, each naming the script and position at
//! fault. A script's own error is the face's [`ScriptError`] (file, line
//! and column, as every runtime reports them); here is how Rhai's errors
//! and positions become one.

use rhai::{EvalAltResult, ParseError, Position};
use thiserror::Error;

pub use gantry_host::face::{NotLoaded, ScriptError};

/// An error of `file` at Rhai's `position` (line and column, when known).
pub fn at(file: &str, position: Position, message: impl Into<String>) -> ScriptError {
    ScriptError::new(
        file,
        position.line().map(|l| l as u32),
        position.position().map(|c| c as u32),
        message,
    )
}

/// A runtime error of `file`. The position is the innermost one Rhai
/// names (inside the handler that failed, not the call that reached it),
/// and the message drops Rhai's own `(line N, position M)` suffix, which
/// the error's `Display` puts in front as `file:line:`.
pub fn from_eval(file: &str, error: &EvalAltResult) -> ScriptError {
    let mut inner = error;
    while let EvalAltResult::ErrorInFunctionCall(_, _, cause, _) = inner {
        if cause.position().is_none() {
            break;
        }
        inner = cause;
    }
    let position = if inner.position().is_none() {
        error.position()
    } else {
        inner.position()
    };
    at(file, position, eval_message(error))
}

/// A compile error of `file`.
pub fn from_parse(file: &str, error: &ParseError) -> ScriptError {
    at(file, error.position(), error.err_type().to_string())
}

/// Rhai's message without positions, the operation limit's own text kept.
fn eval_message(error: &EvalAltResult) -> String {
    framed_message(error, true)
}

/// Rhai names a closure by a generated `anon$<hash>`, which names nothing
/// a modder wrote: the closure a listener is (`outermost`) is already named
/// by the listener's file:line in front of the error, so its frame is
/// left out; a closure it called is named by the line that called it.
fn framed_message(error: &EvalAltResult, outermost: bool) -> String {
    match error {
        EvalAltResult::ErrorTerminated(token, _) => token.to_string(),
        EvalAltResult::ErrorInFunctionCall(name, _, cause, position) if is_closure(name) => {
            let inner = framed_message(cause, false);
            match position.line() {
                _ if outermost => inner,
                Some(line) => format!("in the closure called at line {line}: {inner}"),
                None => format!("in a closure: {inner}"),
            }
        }
        EvalAltResult::ErrorInFunctionCall(name, _, cause, _) => {
            format!("in `{name}`: {}", framed_message(cause, false))
        }
        EvalAltResult::ErrorRuntime(value, _) => thrown_text(value),
        other => without_position(&other.to_string()).to_owned(),
    }
}

/// Whether Rhai generated `name` for a closure.
fn is_closure(name: &str) -> bool {
    name.starts_with("anon$")
}

/// Deepest level of a thrown array or map its message shows.
const THROWN_DEPTH: usize = 8;
/// Longest message of a thrown value, in bytes.
const THROWN_LENGTH: usize = 1000;

/// The message of a thrown value. A thrown array or map is shown to
/// [`THROWN_DEPTH`] levels and [`THROWN_LENGTH`] bytes (`…` for the rest):
/// Rhai's own text of it recurses over every level, and an error's message
/// is read on the host's stack, not the script stack.
fn thrown_text(value: &rhai::Dynamic) -> String {
    let mut out = String::new();
    shallow(value, THROWN_DEPTH, &mut out);
    out
}

fn shallow(value: &rhai::Dynamic, depth: usize, out: &mut String) {
    use std::fmt::Write;
    if out.len() > THROWN_LENGTH {
        return;
    }
    if value.is_array() || value.is_map() {
        if depth == 0 {
            out.push('…');
            return;
        }
        if let Some(items) = value.read_lock::<rhai::Array>() {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                shallow(item, depth - 1, out);
                if out.len() > THROWN_LENGTH {
                    out.push('…');
                    return;
                }
            }
            out.push(']');
        } else if let Some(map) = value.read_lock::<rhai::Map>() {
            out.push_str("#{");
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{key:?}: ");
                shallow(item, depth - 1, out);
                if out.len() > THROWN_LENGTH {
                    out.push('…');
                    return;
                }
            }
            out.push('}');
        }
        return;
    }
    let _ = write!(out, "{value}");
}

/// `error` with a thrown array or map replaced by its message, so that the
/// nested value is dropped where it was made (on the script stack), not
/// where the error is read.
pub(crate) fn without_thrown_values(mut error: Box<EvalAltResult>) -> Box<EvalAltResult> {
    match &mut *error {
        EvalAltResult::ErrorRuntime(value, _) if value.is_array() || value.is_map() => {
            *value = rhai::Dynamic::from(thrown_text(value));
        }
        EvalAltResult::ErrorInFunctionCall(_, _, cause, _) => {
            let inner = std::mem::replace(
                cause,
                Box::new(EvalAltResult::ErrorRuntime(
                    rhai::Dynamic::UNIT,
                    Position::NONE,
                )),
            );
            *cause = without_thrown_values(inner);
        }
        _ => {}
    }
    error
}

/// `message (line 3, position 5)` without the parenthesised position.
fn without_position(message: &str) -> &str {
    match message.rfind(" (line ") {
        Some(at) if message.ends_with(')') => &message[..at],
        _ => message,
    }
}

/// Errors of setting up the runtime or loading a script.
#[derive(Debug, Error)]
pub enum RhaiError {
    /// The script failed to compile or its top level failed.
    #[error("{0}")]
    Script(#[from] ScriptError),
    /// No script of this id is loaded (never was, or was unloaded).
    #[error(transparent)]
    NotLoaded(#[from] NotLoaded),
    /// The runtime could not do what was asked (no such object, busy engine).
    #[error("Rhai runtime: {0}")]
    Setup(String),
}
