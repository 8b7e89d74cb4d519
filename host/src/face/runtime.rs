//! What a host asks of any script runtime: load a script on an object,
//! check one without running it, unload or reload it in place, and hear
//! what its scripts print and the errors no hub report carries. The CLI
//! holds its runtimes as `dyn ScriptRuntime`, one per file extension.
//!
//! A runtime implements [`LanguageRuntime`] — the parts only its language
//! knows, in its own error type — and is a [`ScriptRuntime`] by the
//! impl here, which converts the errors and shares the rest.

use std::rc::Rc;

use crate::ObjectId;

use super::grants::ModGrants;

use super::error::ScriptError;
use super::output::ScriptOutput;
use super::scripts::ScriptId;

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
    /// is the name errors and recorded sites use. The id names the script
    /// to [`ScriptRuntime::unload`] and [`ScriptRuntime::reload`].
    fn load(&self, file: &str, source: &str, object: ObjectId) -> Result<ScriptId, RuntimeError>;
    /// [`ScriptRuntime::load`] for a script of a mod with `grants`: every
    /// API call the script makes is checked against them (`None`: it may
    /// use everything).
    fn load_granted(
        &self,
        file: &str,
        source: &str,
        object: ObjectId,
        grants: Option<Rc<ModGrants>>,
    ) -> Result<ScriptId, RuntimeError>;
    /// Unloads a script: removes every listener it registered (messages,
    /// partial keys, hooks, table rows, slots and whole tables, requests'
    /// responders; its pending replies are dropped unheard) and lets its
    /// environment go, so that nothing of it runs again. Its object stays,
    /// with what is stored on it, and so does what others registered on
    /// it. Safe from inside a listener, the script's own included: the
    /// send goes on without the script's remaining listeners. `false`:
    /// no such script was loaded.
    fn unload(&self, script: ScriptId) -> bool;
    /// Swaps a script for a new version of its source, in place: same
    /// file, object, grants and id. The new version loads first; if it
    /// does not compile, its top level fails or a registration is refused,
    /// what it registered is removed, the old version keeps running as it
    /// was and the error (at the new source's line) comes back. Once it
    /// loaded, the old version is unloaded (see [`ScriptRuntime::unload`]).
    /// What is stored on the object survives either way, so the new
    /// version's listeners hear the stored messages as any new listener
    /// does. While the new top level runs, the old version still listens.
    fn reload(&self, script: ScriptId, source: &str) -> Result<(), RuntimeError>;
    /// What the runtime's scripts print and the errors it keeps.
    fn output(&self) -> &ScriptOutput;
    /// Where `print` goes (stdout by default).
    fn on_print(&self, f: impl Fn(&str) + 'static)
    where
        Self: Sized,
    {
        self.output().set_print(Rc::new(f));
    }
    /// Called for each error filed for [`ScriptRuntime::take_errors`], as
    /// it is filed. A runtime may also tell it of a failing listener, which
    /// the hub reports too ([`crate::Report::ListenerFailed`]); a failing
    /// top level is returned by `load` instead.
    fn on_error(&self, f: impl Fn(&ScriptError) + 'static)
    where
        Self: Sized,
    {
        self.output().errors.set_sink(Rc::new(f));
    }
    /// Script errors filed since the last call that no hub report carries
    /// (a failing reply function, a resumed coroutine).
    fn take_errors(&self) -> Vec<ScriptError> {
        self.output().errors.take()
    }
}

/// What a language's runtime implements, in its own error type: checking,
/// loading, unloading and reloading its scripts, and where their output
/// goes. Every `LanguageRuntime` is a [`ScriptRuntime`] (see the impl
/// below), so a runtime neither converts its errors for the host nor
/// forwards a method; the host's trait is the one to read for what each
/// method promises.
pub trait LanguageRuntime {
    /// The runtime's own error: a [`ScriptError`] inside, or a setup
    /// failure.
    type Error: std::error::Error + 'static;
    /// The file extension of the scripts it runs (`lua`).
    const EXTENSION: &'static str;
    /// See [`ScriptRuntime::check`].
    fn check_syntax(&self, file: &str, source: &str) -> Result<(), Self::Error>;
    /// See [`ScriptRuntime::load_granted`].
    fn load_script_granted(
        &self,
        file: &str,
        source: &str,
        object: ObjectId,
        grants: Option<Rc<ModGrants>>,
    ) -> Result<ScriptId, Self::Error>;
    /// See [`ScriptRuntime::unload`].
    fn unload_script(&self, script: ScriptId) -> bool;
    /// See [`ScriptRuntime::reload`].
    fn reload_script(&self, script: ScriptId, source: &str) -> Result<(), Self::Error>;
    /// See [`ScriptRuntime::output`].
    fn script_output(&self) -> &ScriptOutput;
}

impl<T: LanguageRuntime> ScriptRuntime for T {
    fn extension(&self) -> &'static str {
        T::EXTENSION
    }

    fn check(&self, file: &str, source: &str) -> Result<(), RuntimeError> {
        Ok(self.check_syntax(file, source)?)
    }

    fn load(&self, file: &str, source: &str, object: ObjectId) -> Result<ScriptId, RuntimeError> {
        Ok(self.load_script_granted(file, source, object, None)?)
    }

    fn load_granted(
        &self,
        file: &str,
        source: &str,
        object: ObjectId,
        grants: Option<Rc<ModGrants>>,
    ) -> Result<ScriptId, RuntimeError> {
        Ok(self.load_script_granted(file, source, object, grants)?)
    }

    fn unload(&self, script: ScriptId) -> bool {
        self.unload_script(script)
    }

    fn reload(&self, script: ScriptId, source: &str) -> Result<(), RuntimeError> {
        Ok(self.reload_script(script, source)?)
    }

    fn output(&self) -> &ScriptOutput {
        self.script_output()
    }
}
