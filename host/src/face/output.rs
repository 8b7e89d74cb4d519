//! What a runtime's scripts tell the host outside the hub: the lines they
//! `print`, and the errors no hub report carries. Every runtime has one
//! [`ScriptOutput`]; the host reaches it through
//! [`ScriptRuntime`](super::ScriptRuntime)'s `on_print`, `on_error` and
//! `take_errors`, the same in every language.

use std::cell::RefCell;
use std::rc::Rc;

use super::error::{ErrorLog, ScriptError};

/// Where a script's `print` goes.
pub type PrintSink = Rc<dyn Fn(&str)>;

/// A runtime's printed lines and kept errors.
pub struct ScriptOutput {
    print: Rc<RefCell<PrintSink>>,
    /// Errors no hub report carries (see [`ErrorLog`]).
    pub errors: ErrorLog,
}

impl Default for ScriptOutput {
    fn default() -> Self {
        Self::new()
    }
}

impl ScriptOutput {
    /// Output printing to stdout, keeping errors for the host.
    pub fn new() -> Self {
        Self {
            print: Rc::new(RefCell::new(Rc::new(|line: &str| println!("{line}")))),
            errors: ErrorLog::default(),
        }
    }

    /// The sink `print` goes to, shared: an engine set up before its
    /// runtime (Rhai's `on_print`) reads it at each line.
    pub fn print_sink(&self) -> Rc<RefCell<PrintSink>> {
        self.print.clone()
    }

    /// The sink `print` goes to now.
    pub fn printer(&self) -> PrintSink {
        self.print.borrow().clone()
    }

    /// Sends `print`'s lines to `sink` from now on.
    pub fn set_print(&self, sink: PrintSink) {
        *self.print.borrow_mut() = sink;
    }

    /// Files an error no hub report carries: told to `on_error`, kept for
    /// `take_errors`.
    pub fn report(&self, error: ScriptError) {
        self.errors.report(error);
    }
}
