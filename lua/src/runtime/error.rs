//! Errors of the Lua runtime, each naming the script (and line) at fault.

use std::fmt;

use thiserror::Error;

/// An error a script caused: where (script file and line, when known) and
/// what Lua said, traceback included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// The script's file name as the runtime knows it (`player.lua`).
    pub file: String,
    /// The 1-based line of the error, when Lua named one.
    pub line: Option<u32>,
    /// The message, with Lua's traceback when there is one.
    pub message: String,
}

impl ScriptError {
    /// Builds an error from a Lua message, taking `file:line:` from its
    /// start when it names the script.
    pub fn from_message(file: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        let line = line_in(&message, file);
        Self {
            file: file.to_owned(),
            line,
            message,
        }
    }
}

/// Finds `file:N:` in a Lua message and returns N.
pub(crate) fn line_in(message: &str, file: &str) -> Option<u32> {
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
        // Lua messages already start with `file:line:`; don't repeat it.
        if self.message.starts_with(&format!("{}:", self.file)) {
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

/// Errors of setting up the runtime or loading a script.
#[derive(Debug, Error)]
pub enum LuaError {
    /// The script failed to compile or its top level failed.
    #[error("{0}")]
    Script(#[from] ScriptError),
    /// The Lua state could not be set up.
    #[error("Lua setup failed: {0}")]
    Setup(String),
    /// Reading a script file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl From<mlua::Error> for LuaError {
    fn from(e: mlua::Error) -> Self {
        LuaError::Setup(e.to_string())
    }
}
