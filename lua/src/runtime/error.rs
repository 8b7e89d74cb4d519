//! Errors of the Lua runtime. A script's own error is the face's
//! [`ScriptError`] (file and line, as every runtime reports them).

use thiserror::Error;

pub use gantry_host::face::{NotLoaded, ScriptError};

/// Errors of setting up the runtime or loading a script.
#[derive(Debug, Error)]
pub enum LuaError {
    /// The script failed to compile or its top level failed.
    #[error("{0}")]
    Script(#[from] ScriptError),
    /// No script of this id is loaded (never was, or was unloaded).
    #[error(transparent)]
    NotLoaded(#[from] NotLoaded),
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
