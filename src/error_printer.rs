//! Printing each fault of a run once: `gantry run`'s face of the host's
//! [`ReportStream`], which does the work a game embedding the hub gets as
//! well.
//!
//! Within a load or tick (a frame) a text that only carries an earlier
//! report whole (a refused send's report, the listener it failed, the
//! script error it became) is the same fault, printed once; across the
//! run, a text printed before is counted instead, and
//! [`ErrorPrinter::repeats`] gives the `×N` summary the run ends with.
//! Both stay linear in what is printed, a hostile mod's flood included
//! (see `gantry_host::reports`).

use gantry_host::reports::{ItemKind, ReportStream};

/// Prints errors through a sink, each fault once per load or tick and
/// each text once per run (later ones counted).
pub struct ErrorPrinter {
    stream: ReportStream,
}

impl ErrorPrinter {
    /// A printer handing each error to print to `sink` (which adds the
    /// `error: ` prefix and picks the stream).
    pub fn new(sink: impl Fn(&str) + 'static) -> Self {
        let stream = ReportStream::new();
        stream.on_item(move |item| sink(&item.message));
        Self { stream }
    }

    /// How many faults occurred: those printed and those that repeated
    /// the text of one printed before (a step's fault carried by several
    /// texts counts once).
    pub fn count(&self) -> usize {
        self.stream.count()
    }

    /// Each error that occurred more than once in the run, as its first
    /// line and how many times, in the order they were first printed.
    pub fn repeats(&self) -> Vec<(String, usize)> {
        self.stream.repeats()
    }

    /// Prints `error` unless it only repeats a report of this load or tick.
    pub fn print(&self, error: &str) {
        self.stream.push_text(ItemKind::ScriptError, error, false);
    }

    /// A hub report: printed (unless it repeats an earlier one), and kept
    /// until the load or tick ends.
    pub fn report(&self, report: String) {
        self.stream.push_text(ItemKind::ScriptError, report, true);
    }

    /// The load or tick is over: its reports are no longer repeated.
    pub fn end_of_step(&self) {
        self.stream.end_frame();
    }
}

// The bench `report_printer` includes this file too, where `#[test]`s are
// not compiled: the tests' imports live inside them.
#[cfg(test)]
mod tests {

    const REFUSED: &str = "a.lua:2: `K.A1` argument 1: expected int, got string; dispatch aborted";

    #[test]
    fn a_fault_carried_by_several_texts_and_repeated_across_steps_prints_once() {
        use super::ErrorPrinter;
        use std::cell::RefCell;
        use std::rc::Rc;
        let printed = Rc::new(RefCell::new(Vec::new()));
        let sink = printed.clone();
        let printer = ErrorPrinter::new(move |e| sink.borrow_mut().push(e.to_owned()));
        for _ in 0..3 {
            printer.report(REFUSED.to_owned());
            printer.print(&format!("{REFUSED}\nstack traceback:\n\t[C]: in ?"));
            printer.end_of_step();
        }
        assert_eq!(*printed.borrow(), [REFUSED]);
        assert_eq!(printer.count(), 3);
        assert_eq!(printer.repeats(), [(REFUSED.to_owned(), 3)]);
    }
}
