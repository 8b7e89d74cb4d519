//! Printing each fault of a run once, in time linear in what is printed.
//!
//! A refused send is the hub's report *and* an error raised in the script
//! that sent it, which may fail a listener in turn (another report) and
//! reach the script's top level (an engine error): one fault, printed and
//! counted once. The later texts carry the first report whole: at the start
//! of a line (`a.lua:4: …; dispatch aborted` then a traceback) or after a
//! `: ` (`a.lua:2: listener of `K.B` failed: a.lua:2: …`), running to the
//! end of that line. So an error repeats a report of the same load or tick
//! when, at a line start or after a `: `, the rest of its line is the
//! report's first line and the report's other lines follow.
//!
//! That test is a hash lookup per candidate position, the hashes of all of
//! a line's suffixes computed in one backward pass: a hostile mod's 40,000
//! distinct refused sends in one tick print in milliseconds, where testing
//! every error against every earlier report took 45 s. The hash's base is
//! drawn per process, so a mod cannot craft colliding reports; a collision
//! would cost one string comparison, never a wrong answer.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::BuildHasher;

/// Reports of one step remembered for the test; past this many, later
/// reports are still printed but a later error repeating one of them may
/// be printed too (the memory a flood of reports takes stays bounded).
const MAX_RECENT: usize = 1 << 16;

/// Prints errors through a sink, each fault once per load or tick.
pub struct ErrorPrinter {
    count: Cell<usize>,
    recent: RefCell<Recent>,
    sink: Box<dyn Fn(&str)>,
}

/// The reports of the load or tick under way, by the hash and length of
/// their first line.
struct Recent {
    base: u64,
    reports: Vec<String>,
    by_first_line: HashMap<(u64, usize), Vec<usize>>,
}

impl ErrorPrinter {
    /// A printer handing each error to print to `sink` (which adds the
    /// `error: ` prefix and picks the stream).
    pub fn new(sink: impl Fn(&str) + 'static) -> Self {
        Self {
            count: Cell::new(0),
            recent: RefCell::new(Recent {
                // Odd, so powers of it never vanish modulo 2^64.
                base: std::collections::hash_map::RandomState::new().hash_one(0u64) | 1,
                reports: Vec::new(),
                by_first_line: HashMap::new(),
            }),
            sink: Box::new(sink),
        }
    }

    /// How many errors were printed.
    pub fn count(&self) -> usize {
        self.count.get()
    }

    /// Prints `error` unless it only repeats a report of this load or tick.
    pub fn print(&self, error: &str) {
        if self.recent.borrow().repeated_in(error) {
            return;
        }
        self.count.set(self.count.get() + 1);
        (self.sink)(error);
    }

    /// A hub report: printed, and kept until the load or tick ends.
    pub fn report(&self, report: String) {
        self.print(&report);
        self.recent.borrow_mut().remember(report);
    }

    /// The load or tick is over: its reports are no longer repeated.
    pub fn end_of_step(&self) {
        let mut recent = self.recent.borrow_mut();
        recent.reports.clear();
        recent.by_first_line.clear();
    }
}

impl Recent {
    fn remember(&mut self, report: String) {
        if self.reports.len() >= MAX_RECENT {
            return;
        }
        let first = first_line(&report);
        let key = (hash(self.base, first.as_bytes()), first.len());
        self.by_first_line
            .entry(key)
            .or_default()
            .push(self.reports.len());
        self.reports.push(report);
    }

    /// Does `text` carry a remembered report whole, at a line start or
    /// after a `: `, to the end of that line and beyond?
    fn repeated_in(&self, text: &str) -> bool {
        if self.reports.is_empty() {
            return false;
        }
        let mut suffixes: Vec<u64> = Vec::new();
        let mut line_start = 0;
        for line in text.split('\n') {
            let bytes = line.as_bytes();
            suffix_hashes(self.base, bytes, &mut suffixes);
            let candidates = std::iter::once(0).chain(
                bytes
                    .windows(2)
                    .enumerate()
                    .filter(|(_, pair)| pair == b": ")
                    .map(|(at, _)| at + 2),
            );
            for at in candidates {
                let key = (suffixes[at], bytes.len() - at);
                let Some(reports) = self.by_first_line.get(&key) else {
                    continue;
                };
                let rest = &text[line_start + at..];
                if reports.iter().any(|&r| rest.starts_with(&self.reports[r])) {
                    return true;
                }
            }
            line_start += line.len() + 1;
        }
        false
    }
}

fn first_line(text: &str) -> &str {
    text.split('\n').next().unwrap_or_default()
}

/// The polynomial hash of `bytes`: the sum of `bytes[i] * base^i`.
fn hash(base: u64, bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0u64, |h, &b| {
        u64::from(b).wrapping_add(base.wrapping_mul(h))
    })
}

/// `out[i]` = [`hash`] of `bytes[i..]`, for every `i` up to `bytes.len()`.
fn suffix_hashes(base: u64, bytes: &[u8], out: &mut Vec<u64>) {
    out.clear();
    out.resize(bytes.len() + 1, 0);
    for i in (0..bytes.len()).rev() {
        out[i] = u64::from(bytes[i]).wrapping_add(base.wrapping_mul(out[i + 1]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    fn printer() -> (ErrorPrinter, Rc<RefCell<Vec<String>>>) {
        let printed = Rc::new(RefCell::new(Vec::new()));
        let sink = printed.clone();
        let printer = ErrorPrinter::new(move |e| sink.borrow_mut().push(e.to_owned()));
        (printer, printed)
    }

    const REFUSED: &str = "a.lua:2: `K.A1` argument 1: expected int, got string; dispatch aborted";

    #[test]
    fn a_refused_send_and_the_errors_that_carry_it_are_printed_once() {
        let (printer, printed) = printer();
        printer.report(REFUSED.to_owned());
        // The listener it failed, the top level it reached, with tracebacks.
        printer.report(format!(
            "a.lua:2: listener of `K.B` failed: {REFUSED}\nstack traceback:\n\ta.lua:2: in function <a.lua:2>"
        ));
        printer.print(&format!("{REFUSED}\nstack traceback:\n\t[C]: in ?"));
        printer.print(REFUSED);
        assert_eq!(*printed.borrow(), [REFUSED]);
        assert_eq!(printer.count(), 1);
    }

    #[test]
    fn a_report_is_repeated_only_within_its_step_and_only_whole() {
        let (printer, printed) = printer();
        printer.report(REFUSED.to_owned());
        // The same words ending differently, or mid-word: other faults.
        let longer = format!("{REFUSED} twice");
        printer.print(&longer);
        let inside = format!("x{REFUSED}");
        printer.print(&inside);
        printer.end_of_step();
        printer.print(REFUSED);
        assert_eq!(*printed.borrow(), [REFUSED, &longer, &inside, REFUSED]);
    }

    #[test]
    fn a_multi_line_report_is_repeated_only_with_all_its_lines() {
        let (printer, printed) = printer();
        let report = "a.lua:3: listener of `K` failed: boom\nstack traceback:\n\ta.lua:3";
        printer.report(report.to_owned());
        printer.print(&format!("top: {report}\n\tmore"));
        printer.print("top: a.lua:3: listener of `K` failed: boom\nother traceback");
        assert_eq!(printed.borrow().len(), 2, "{:?}", printed.borrow());
    }

    #[test]
    fn the_hash_of_a_suffix_is_the_hash_of_that_text() {
        let base = 0x9e37_79b9_7f4a_7c15;
        let text = b"x: y: z";
        let mut suffixes = Vec::new();
        suffix_hashes(base, text, &mut suffixes);
        for at in 0..=text.len() {
            assert_eq!(suffixes[at], hash(base, &text[at..]));
        }
    }
}
