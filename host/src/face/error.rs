//! The errors every script face reports alike.
//!
//! [`ScriptError`] is a script's fault at its place (file, line, column when
//! the engine knows it). [`ApiError`] is an API call the hub cannot take as
//! written: which function, which key, which argument, what it expected and
//! what it got. A runtime raises it in its language at the caller's line.

use std::borrow::Cow;
use std::fmt;
use std::rc::Rc;

use thiserror::Error;

use crate::{ApiFunction, HubError};

/// An error a script caused: where (its file, and the 1-based line and
/// column when the engine named them) and what went wrong, with the
/// engine's traceback when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// The script's file name as the runtime knows it (`player.lua`).
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

impl ScriptError {
    /// An error of `file` at `line` and `column`, when known.
    pub fn new(
        file: &str,
        line: Option<u32>,
        column: Option<u32>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }

    /// Builds an error from a message that may already name its place
    /// (`player.lua:3: ...`, as Lua writes them): the line is taken from
    /// there.
    pub fn from_message(file: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        let line = line_in(&message, file);
        Self::new(file, line, None, message)
    }
}

/// Finds `file:N:` in a message and returns N.
pub fn line_in(message: &str, file: &str) -> Option<u32> {
    let prefix = format!("{file}:");
    let mut rest = message;
    while let Some(at) = rest.find(&prefix) {
        let after = &rest[at + prefix.len()..];
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() && after[digits.len()..].starts_with(':') {
            return digits.parse().ok();
        }
        rest = after;
    }
    None
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A message that already starts with `file:line:` is not prefixed
        // again.
        if self
            .message
            .strip_prefix(self.file.as_str())
            .is_some_and(|rest| rest.starts_with(':'))
        {
            f.write_str(&self.message)
        } else {
            match self.line {
                Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
                None => write!(f, "{}: {}", self.file, self.message),
            }
        }
    }
}

impl std::error::Error for ScriptError {}

/// The API function a refused call was, and its key when it got that far:
/// `ListenHook `Opt.Hook``.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub function: ApiFunction,
    pub key: Option<Rc<str>>,
}

impl Call {
    /// A call of `function` on `key`.
    pub fn on(function: ApiFunction, key: &Rc<str>) -> Self {
        Self {
            function,
            key: Some(key.clone()),
        }
    }

    /// A call of `function` refused before its key was read.
    pub fn of(function: ApiFunction) -> Self {
        Self {
            function,
            key: None,
        }
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => write!(f, "{} `{key}`", self.function),
            None => write!(f, "{}", self.function),
        }
    }
}

/// Why an API call was refused, naming what the script wrote: the
/// function, the key, the argument by its 1-based position in the call as
/// written (key included), the option by its name.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ApiError {
    /// An argument of the wrong kind (`NotifyObjectMessage: argument 1
    /// must be an object (...), got a nil`). `naming` says what the
    /// argument is for, when the position alone would not (`the listener`).
    #[error("{call}: argument {position}{} must be {expected}, got {got}", naming.map(|n| format!(" ({n})")).unwrap_or_default())]
    BadArgument {
        call: Call,
        position: usize,
        naming: Option<&'static str>,
        expected: Cow<'static, str>,
        got: String,
    },
    /// A message value the hub cannot carry (`` `K` argument 1: expected
    /// int, got string ``): `position` counts the message's values from 1.
    #[error("`{key}` argument {position}: {why}")]
    BadValue {
        key: Rc<str>,
        position: usize,
        why: String,
    },
    /// A hook's payload the hub cannot carry.
    #[error("{call} payload: {why}")]
    BadPayload { call: Call, why: String },
    /// The options argument is not an options table.
    #[error("{call}: options must be {expected}, got {got}")]
    BadOptions {
        call: Call,
        expected: String,
        got: String,
    },
    /// One option of the wrong kind.
    #[error("{call}: option `{option}` must be {expected}, got {got}")]
    BadOption {
        call: Call,
        option: &'static str,
        expected: &'static str,
        got: String,
    },
    /// An owner that cannot own a listener, or a key the hub refuses.
    #[error("{call}: {why}")]
    Refused { call: Call, why: String },
    /// A send (or store) whose values contradict the key's signature. The
    /// hub's words say the dispatch was aborted; raised in the script, the
    /// error also stops the code that sent, which the words say too.
    #[error("{0}, and the script stopped at this line")]
    SendRefused(HubError),
    /// What else the hub refused (a spent quota, a key of another kind, ...).
    #[error(transparent)]
    Hub(HubError),
    /// A call outside its mod's grants: it reaches no listener.
    #[error(transparent)]
    NotGranted(super::grants::GrantError),
}

impl From<HubError> for ApiError {
    fn from(error: HubError) -> Self {
        match error {
            HubError::Mismatch { .. } => ApiError::SendRefused(error),
            other => ApiError::Hub(other),
        }
    }
}

/// Where a runtime's script errors go as they happen (the CLI prints them).
pub type ErrorSink = Rc<dyn Fn(&ScriptError)>;

/// The script errors of a runtime that no hub report carries (a failing
/// top level, reply function or resumed coroutine): told to the host's
/// sink as they happen, and kept until the host takes them.
#[derive(Default)]
pub struct ErrorLog {
    errors: std::cell::RefCell<Vec<ScriptError>>,
    on_error: std::cell::RefCell<Option<ErrorSink>>,
}

impl ErrorLog {
    /// Files `error`: logged, told to the sink, kept.
    pub fn report(&self, error: ScriptError) {
        tracing::warn!(file = %error.file, "{error}");
        self.notify(&error);
        self.errors.borrow_mut().push(error);
    }

    /// Tells the sink about `error` without keeping it: for an error the
    /// hub reports itself (a failing listener), so a host reading both
    /// sees it once.
    pub fn notify(&self, error: &ScriptError) {
        let sink = self.on_error.borrow().clone();
        if let Some(sink) = sink {
            sink(error);
        }
    }

    pub fn set_sink(&self, sink: ErrorSink) {
        *self.on_error.borrow_mut() = Some(sink);
    }

    /// The errors filed since the last call.
    pub fn take(&self) -> Vec<ScriptError> {
        std::mem::take(&mut self.errors.borrow_mut())
    }
}

/// Why a listener cannot be called with what its key carries, in the same
/// words in every language: refused where it registers on a key whose
/// parameters are known, reported at its first call otherwise. A listener
/// may take fewer parameters than a key carries, never more: the extra
/// ones would never get a value.
pub fn takes_too_many(takes: usize, key: &str, carries: usize, responder: bool) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let responder = if responder { " and a responder" } else { "" };
    format!(
        "the listener takes {takes} parameter{} but `{key}` carries {carries}{responder}",
        plural(takes)
    )
}
