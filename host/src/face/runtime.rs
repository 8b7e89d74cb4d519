//! What a host asks of any script runtime: load a script on an object,
//! check one without running it, and hear the errors no hub report
//! carries. The CLI holds its runtimes as `dyn ScriptRuntime`, one per
//! file extension.

use crate::ObjectId;

use super::error::ScriptError;

/// A runtime's refusal to check or load a script: its own error type
/// (a [`ScriptError`] naming file and line, or a setup failure).
pub type RuntimeError = Box<dyn std::error::Error>;

/// A script language's runtime, as a host drives it.
pub trait ScriptRuntime {
    /// The file extension of the scripts it runs (`lua`).
    fn extension(&self) -> &'static str;
    /// Compiles a script without running it: what a host checks before it
    /// replaces a running script with a new version.
    fn check(&self, file: &str, source: &str) -> Result<(), RuntimeError>;
    /// Loads a script attached to `object` and runs its top level; `file`
    /// is the name errors and recorded sites use.
    fn load(&self, file: &str, source: &str, object: ObjectId) -> Result<(), RuntimeError>;
    /// Script errors filed since the last call that no hub report carries
    /// (a failing reply function, a resumed coroutine).
    fn take_errors(&self) -> Vec<ScriptError>;
}
