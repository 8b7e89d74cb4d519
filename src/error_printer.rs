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
//! That test is a hash lookup per candidate position, a line's suffix
//! hashes prepared in one backward pass over it (seven bytes a step): a hostile mod's 40,000
//! distinct refused sends in one tick print in tens of milliseconds, where
//! testing every error against every earlier report took 45 s. The hash is
//! polynomial modulo the prime 2^61 - 1 with a base drawn per process, so a
//! mod cannot craft colliding reports (modulo 2^64 it could, whatever the
//! base); a collision would cost one string comparison, never a wrong
//! answer.
//!
//! Across the whole run, an error whose text (its file:line included) was
//! printed before is not printed again but counted: a listener failing
//! every tick prints once, and [`ErrorPrinter::repeats`] gives the
//! `×N` summary the run ends with. One hash lookup per error keeps that
//! linear too; the texts it remembers are bounded ([`MAX_SEEN`],
//! [`MAX_SEEN_BYTES`]), past which new texts are printed each time.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// Reports of one step remembered for the test; past this many, later
/// reports are still printed but a later error repeating one of them may
/// be printed too (the memory a flood of reports takes stays bounded).
const MAX_RECENT: usize = 1 << 16;

/// Distinct error texts remembered for the run's repeat count.
const MAX_SEEN: usize = 1 << 16;
/// Bytes of error text remembered for the run's repeat count.
const MAX_SEEN_BYTES: usize = 16 << 20;

/// Prints errors through a sink, each fault once per load or tick and
/// each text once per run (later ones counted).
pub struct ErrorPrinter {
    count: Cell<usize>,
    recent: RefCell<Recent>,
    seen: RefCell<Seen>,
    sink: Box<dyn Fn(&str)>,
}

/// Every error text printed in this run: when first printed (its order)
/// and how many times it occurred.
#[derive(Default)]
struct Seen {
    times: HashMap<String, (usize, usize)>,
    bytes: usize,
}

impl Seen {
    /// Counts `text`; whether it was printed before.
    fn again(&mut self, text: &str) -> bool {
        if let Some((_, times)) = self.times.get_mut(text) {
            *times += 1;
            return true;
        }
        if self.times.len() < MAX_SEEN && self.bytes + text.len() <= MAX_SEEN_BYTES {
            self.bytes += text.len();
            let order = self.times.len();
            self.times.insert(text.to_owned(), (order, 1));
        }
        false
    }
}

/// The reports of the load or tick under way, by the hash and length of
/// their first line.
struct Recent {
    base: u64,
    reports: Vec<String>,
    /// The latest report with a first line of this hash and length...
    by_first_line: HashMap<(u64, usize), usize, Prehashed>,
    /// ...and, for each report, the one before it with the same key.
    same_key_before: Vec<Option<usize>>,
    /// The suffix hashes of the line being scanned (kept to reuse the
    /// allocation).
    suffixes: Suffixes,
}

/// The keys are hashes already (of a per-process random base): hashing
/// them again would only cost time; one multiply spreads them.
#[derive(Default, Clone, Copy)]
struct Prehashed;

impl BuildHasher for Prehashed {
    type Hasher = PrehashedHasher;
    fn build_hasher(&self) -> PrehashedHasher {
        PrehashedHasher(0)
    }
}

struct PrehashedHasher(u64);

impl Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        // Spread to the top bits, which the table also reads.
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = self.0.wrapping_add(n as u64);
    }
}

impl ErrorPrinter {
    /// A printer handing each error to print to `sink` (which adds the
    /// `error: ` prefix and picks the stream).
    pub fn new(sink: impl Fn(&str) + 'static) -> Self {
        Self {
            count: Cell::new(0),
            recent: RefCell::new(Recent {
                base: random_base(),
                reports: Vec::new(),
                by_first_line: HashMap::default(),
                same_key_before: Vec::new(),
                suffixes: Suffixes::default(),
            }),
            seen: RefCell::default(),
            sink: Box::new(sink),
        }
    }

    /// How many faults occurred: those printed and those that repeated
    /// the text of one printed before (a step's fault carried by several
    /// texts counts once).
    pub fn count(&self) -> usize {
        self.count.get()
    }

    /// Each error that occurred more than once in the run, as its first
    /// line and how many times, in the order they were first printed.
    pub fn repeats(&self) -> Vec<(String, usize)> {
        let seen = self.seen.borrow();
        let mut repeated: Vec<_> = seen
            .times
            .iter()
            .filter(|&(_, &(_, times))| times > 1)
            .map(|(text, &(order, times))| (order, first_line_of(text).to_owned(), times))
            .collect();
        repeated.sort_unstable_by_key(|&(order, ..)| order);
        repeated
            .into_iter()
            .map(|(_, line, times)| (line, times))
            .collect()
    }

    /// Prints `error` unless it only repeats a report of this load or tick.
    pub fn print(&self, error: &str) {
        let (repeated, _) = self.recent.borrow_mut().scan(error);
        if !repeated {
            self.emit(error);
        }
    }

    /// A hub report: printed (unless it repeats an earlier one), and kept
    /// until the load or tick ends.
    pub fn report(&self, report: String) {
        let (repeated, first_line) = self.recent.borrow_mut().scan(&report);
        if !repeated {
            self.emit(&report);
        }
        self.recent.borrow_mut().remember(report, first_line);
    }

    fn emit(&self, error: &str) {
        self.count.set(self.count.get() + 1);
        if !self.seen.borrow_mut().again(error) {
            (self.sink)(error);
        }
    }

    /// The load or tick is over: its reports are no longer repeated.
    pub fn end_of_step(&self) {
        let mut recent = self.recent.borrow_mut();
        recent.reports.clear();
        recent.by_first_line.clear();
        recent.same_key_before.clear();
    }
}

impl Recent {
    /// Keeps `report`, whose first line hashes to `first_line`.
    fn remember(&mut self, report: String, first_line: u64) {
        if self.reports.len() >= MAX_RECENT {
            return;
        }
        let key = (first_line, first_line_of(&report).len());
        let before = self.by_first_line.insert(key, self.reports.len());
        self.same_key_before.push(before);
        self.reports.push(report);
    }

    /// Does `text` carry a remembered report whole, at a line start or
    /// after a `: `, to the end of that line and beyond? And the hash of
    /// its first line (to remember it by, when it is a report).
    fn scan(&mut self, text: &str) -> (bool, u64) {
        let mut suffixes = std::mem::take(&mut self.suffixes);
        let mut first_line = None;
        let mut repeated = false;
        let mut line_start = 0;
        for line in text.split('\n') {
            let bytes = line.as_bytes();
            suffixes.prepare(self.base, bytes);
            first_line.get_or_insert_with(|| suffixes.of(bytes, 0));
            if self.reports.is_empty() {
                break;
            }
            if self.carries_at(text, line_start, bytes, &suffixes) {
                repeated = true;
                break;
            }
            line_start += line.len() + 1;
        }
        self.suffixes = suffixes;
        (repeated, first_line.unwrap_or_default())
    }

    /// Does a remembered report start at a candidate position of the line
    /// `bytes` (at `line_start` in `text`, its suffixes hashed)?
    fn carries_at(&self, text: &str, line_start: usize, bytes: &[u8], suffixes: &Suffixes) -> bool {
        let candidates = std::iter::once(0).chain(
            bytes
                .windows(2)
                .enumerate()
                .filter(|(_, pair)| pair == b": ")
                .map(|(at, _)| at + 2),
        );
        for at in candidates {
            let key = (suffixes.of(bytes, at), bytes.len() - at);
            let rest = &text[line_start + at..];
            let mut report = self.by_first_line.get(&key).copied();
            while let Some(r) = report {
                if rest.starts_with(&self.reports[r]) {
                    return true;
                }
                report = self.same_key_before[r];
            }
        }
        false
    }
}

fn first_line_of(text: &str) -> &str {
    text.split('\n').next().unwrap_or_default()
}

/// The modulus of the hash, the Mersenne prime 2^61 - 1.
const MODULUS: u64 = (1 << 61) - 1;

/// `a * b + c` modulo [`MODULUS`], for `a`, `b`, `c` below it.
fn mul_add(a: u64, b: u64, c: u64) -> u64 {
    let product = u128::from(a) * u128::from(b) + u128::from(c);
    let folded = (product as u64 & MODULUS) + (product >> 61) as u64;
    let folded = (folded & MODULUS) + (folded >> 61);
    if folded >= MODULUS {
        folded - MODULUS
    } else {
        folded
    }
}

/// A base for the hash, below [`MODULUS`] and not 0 or 1, drawn per process.
fn random_base() -> u64 {
    let drawn = std::collections::hash_map::RandomState::new().hash_one(0u64);
    2 + drawn % (MODULUS - 2)
}

/// Up to seven bytes as one digit of the hash (below 2^56, so below the
/// modulus).
fn digit(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |v, &b| v << 8 | u64::from(b))
}

/// The hashes of every suffix of one line, in O(1) each after one pass.
///
/// A text's hash is polynomial in `base` over its seven-byte digits
/// counted from its end (digit 0 is the last seven bytes), the bytes left
/// over at its start one last, shorter digit. Counted from the end, the
/// digits of a suffix are the line's own, but for that first one: so the
/// sums of the line's last k digits, prepared once, give every suffix's
/// hash. Texts are compared by hash and length, and among texts of one
/// length the digits are unambiguous.
#[derive(Default)]
struct Suffixes {
    /// `sums[k]`: the hash of the line's last `7 k` bytes.
    sums: Vec<u64>,
    /// `powers[k]`: `base^k`.
    powers: Vec<u64>,
}

impl Suffixes {
    fn prepare(&mut self, base: u64, line: &[u8]) {
        self.sums.clear();
        self.powers.clear();
        self.sums.push(0);
        self.powers.push(1);
        for (k, chunk) in line.rchunks_exact(7).enumerate() {
            let power = self.powers[k];
            self.sums.push(mul_add(digit(chunk), power, self.sums[k]));
            self.powers.push(mul_add(power, base, 0));
        }
    }

    /// The hash of `line[at..]` (`line` the one prepared).
    fn of(&self, line: &[u8], at: usize) -> u64 {
        let len = line.len() - at;
        let k = len / 7;
        mul_add(digit(&line[at..at + len % 7]), self.powers[k], self.sums[k])
    }
}

/// The hash of a whole text, as [`Suffixes`] computes it.
#[cfg(test)]
fn hash(base: u64, text: &[u8]) -> u64 {
    let mut suffixes = Suffixes::default();
    suffixes.prepare(base, text);
    suffixes.of(text, 0)
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
        // A later step's same fault counts again (printed once per run).
        printer.print(REFUSED);
        assert_eq!(*printed.borrow(), [REFUSED, &longer, &inside]);
        assert_eq!(printer.count(), 4);
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
    fn an_error_repeated_across_steps_is_printed_once_and_counted() {
        let (printer, printed) = printer();
        let failing = "a.lua:3: attempt to index a nil value\nstack traceback:\n\ta.lua:3";
        for _ in 0..5 {
            printer.report(failing.to_owned());
            printer.print("b.rhai:1: other");
            printer.end_of_step();
        }
        printer.print("c.lua:9: once");
        assert_eq!(
            *printed.borrow(),
            [failing, "b.rhai:1: other", "c.lua:9: once"]
        );
        assert_eq!(printer.count(), 11);
        assert_eq!(
            printer.repeats(),
            [
                ("a.lua:3: attempt to index a nil value".to_owned(), 5),
                ("b.rhai:1: other".to_owned(), 5)
            ]
        );
    }

    #[test]
    fn the_hash_of_a_suffix_is_the_hash_of_that_text() {
        let base = random_base();
        let text = b"a.lua:2: listener of `K.B` failed: x: y: z";
        let mut suffixes = Suffixes::default();
        suffixes.prepare(base, text);
        for at in 0..=text.len() {
            assert_eq!(suffixes.of(text, at), hash(base, &text[at..]), "at {at}");
        }
        // Texts of one length that differ anywhere hash apart.
        assert_ne!(hash(base, b"abcdefghij"), hash(base, b"abcdefghik"));
        assert_ne!(hash(base, b"abcdefghij"), hash(base, b"bbcdefghij"));
    }

    #[test]
    fn the_hash_is_taken_modulo_a_prime() {
        assert_eq!(mul_add(MODULUS - 1, MODULUS - 1, 0), 1);
        assert_eq!(mul_add(MODULUS - 1, 1, 1), 0);
        assert_eq!(mul_add(1 << 40, 1 << 40, 5), (1 << 19) + 5);
    }
}
