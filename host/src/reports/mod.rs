//! One stream of everything that went wrong: the hub's [`Report`]s and the
//! runtimes' [`ScriptError`]s as [`ReportItem`]s of one type (kind, mod,
//! file:line, message, count), each fault once.
//!
//! A game would otherwise collect three sources (the hub's reports, each
//! runtime's errors), then trim and de-duplicate them itself. The stream
//! does what `gantry run` prints by:
//! - **frame trimming** (`trim`): within one frame (a load, a tick: call
//!   [`ReportStream::end_frame`] between them) a text that only carries an
//!   earlier report whole (a refused send's report, then the listener it
//!   failed, then the script error it became) is the same fault, kept once;
//! - **de-duplication** (`repeats`): across the run, a text seen before
//!   (its `file:line` included) is not a new item but counts on the first
//!   one: a listener failing every tick is one item with a count
//!   ([`ReportStream::repeats`] gives the `×N` summary).
//!
//! Items reach the game by a callback ([`ReportStream::on_item`], at their
//! first occurrence) or by [`ReportStream::drain`] (with their count so
//! far). Everything kept is bounded: a hostile mod's flood costs linear
//! time and bounded memory.
//!
//! ```
//! use gantry_host::reports::{ItemKind, ReportStream};
//! use gantry_host::{Hub, KeyDecl, Source, Type};
//!
//! let hub = Hub::new();
//! let reports = ReportStream::new();
//! reports.collect_from(&hub);
//! hub.declare("Demo.Hit", KeyDecl::event().param("damage", Type::Int))
//!     .unwrap();
//! for _ in 0..3 {
//!     // Refused, and reported: the key carries an int.
//!     let _ = hub.send_str("Demo.Hit", Source::Global, ("lots",));
//!     reports.end_frame();
//! }
//! let items = reports.drain();
//! assert_eq!(items.len(), 1);
//! assert_eq!(items[0].kind, ItemKind::Mismatch);
//! assert_eq!(items[0].count, 3);
//! ```

mod frame;
mod repeats;
mod trim;

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use crate::face::ScriptError;
use crate::report::Report;

pub use frame::{FrameBudget, Spender, Spent};
use repeats::Seen;
use trim::{Recent, first_line_of};

/// What an item is: a hub report's kind, or a script's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemKind {
    /// Arguments contradicted a key's signature ([`Report::Mismatch`]).
    Mismatch,
    /// A listener's parameters did not fit ([`Report::ListenRejected`]).
    ListenRejected,
    /// A listener failed ([`Report::ListenerFailed`]).
    ListenerFailed,
    /// A request answered twice ([`Report::AnsweredTwice`]).
    AnsweredTwice,
    /// A request nobody answered ([`Report::Unanswered`]).
    Unanswered,
    /// A hook payload a listener could not take
    /// ([`Report::HookPayloadSkipped`]).
    HookPayloadSkipped,
    /// A script's error no hub report carries (a failing top level,
    /// reply or coroutine), or a text the host files itself.
    ScriptError,
    /// A mod spent its frame budget; the rest of its calls this frame
    /// were skipped.
    FrameBudgetSpent,
}

impl ItemKind {
    /// The kind of a hub report.
    pub fn of(report: &Report) -> Self {
        match report {
            Report::Mismatch { .. } => Self::Mismatch,
            Report::ListenRejected { .. } => Self::ListenRejected,
            Report::ListenerFailed { .. } => Self::ListenerFailed,
            Report::AnsweredTwice { .. } => Self::AnsweredTwice,
            Report::Unanswered { .. } => Self::Unanswered,
            Report::HookPayloadSkipped { .. } => Self::HookPayloadSkipped,
        }
    }
}

/// One fault, as the stream hands it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportItem {
    pub kind: ItemKind,
    /// The mod the fault's file belongs to, when the game said how to tell
    /// ([`ReportStream::set_mod_of`]).
    pub mod_name: Option<String>,
    /// The file the fault names first (`goblin.lua`), when it names one.
    pub file: Option<String>,
    /// The 1-based line in `file`, when known.
    pub line: Option<u32>,
    /// The whole text, starting with `file:line: ` when it has a place
    /// (a script error's traceback included).
    pub message: String,
    /// How many times this text occurred in the run, so far.
    pub count: usize,
}

impl ReportItem {
    /// The message's first line (without a traceback).
    pub fn first_line(&self) -> &str {
        first_line_of(&self.message)
    }
}

impl fmt::Display for ReportItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if self.count > 1 {
            write!(f, " (×{})", self.count)?;
        }
        Ok(())
    }
}

type ModOf = Box<dyn Fn(&str) -> Option<String>>;
type OnItem = Rc<dyn Fn(&ReportItem)>;

/// Items waiting for [`ReportStream::drain`] at most; past it new items
/// still reach [`ReportStream::on_item`] and the counts.
pub const MAX_QUEUED: usize = 1 << 16;

#[derive(Default)]
struct Inner {
    recent: Recent,
    seen: Seen,
    /// Faults: items and their repeats (a frame's fault carried by several
    /// texts counts once).
    faults: usize,
    queue: Vec<ReportItem>,
    mod_of: Option<ModOf>,
    on_item: Option<OnItem>,
}

/// The stream: a cheap handle (clones share it), single-threaded like the
/// hub. See the [module](self) documentation.
#[derive(Clone, Default)]
pub struct ReportStream(Rc<RefCell<Inner>>);

impl fmt::Debug for ReportStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReportStream")
            .field("faults", &self.count())
            .finish()
    }
}

impl ReportStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the hub's reports from now on (as [`crate::Hub::on_report`],
    /// which it replaces).
    pub fn collect_from(&self, hub: &crate::Hub) {
        let stream = self.clone();
        hub.on_report(move |report| stream.push_report(report));
    }

    /// A sink for a runtime's errors (`rt.on_error(stream.error_sink())`),
    /// which [`ReportStream::push_error`]s each.
    pub fn error_sink(&self) -> impl Fn(&ScriptError) + 'static {
        let stream = self.clone();
        move |error| stream.push_error(error)
    }

    /// How to tell a file's mod (`mods/goblins/a.lua` → `goblins`), for
    /// [`ReportItem::mod_name`].
    pub fn set_mod_of(&self, f: impl Fn(&str) -> Option<String> + 'static) {
        self.0.borrow_mut().mod_of = Some(Box::new(f));
    }

    /// Called with each new item at its first occurrence (count 1), in
    /// place of queueing it for [`ReportStream::drain`].
    pub fn on_item(&self, f: impl Fn(&ReportItem) + 'static) {
        self.0.borrow_mut().on_item = Some(Rc::new(f));
    }

    /// A hub report: a new item unless it repeats one (this frame's
    /// reports are remembered, to trim the texts that carry them).
    pub fn push_report(&self, report: &Report) {
        self.push(ItemKind::of(report), report.to_string(), true);
    }

    /// A runtime's error (`take_errors`, `on_error`, a failed load).
    pub fn push_error(&self, error: &ScriptError) {
        self.push(ItemKind::ScriptError, error.to_string(), false);
    }

    /// A text the host files itself, of `kind`; `is_report` texts are
    /// remembered for the frame as hub reports are.
    pub fn push_text(&self, kind: ItemKind, text: impl Into<String>, is_report: bool) {
        self.push(kind, text.into(), is_report);
    }

    fn push(&self, kind: ItemKind, text: String, is_report: bool) {
        let new = {
            let mut inner = self.0.borrow_mut();
            let inner = &mut *inner;
            let (repeated, first_line) = inner.recent.scan(&text);
            let new = !repeated && inner.fault(&text);
            let item = new.then(|| inner.item(kind, &text));
            if is_report {
                inner.recent.remember(text, first_line);
            }
            item
        };
        if let Some(item) = new {
            let on_item = self.0.borrow().on_item.clone();
            match on_item {
                Some(f) => f(&item),
                None => {
                    let mut inner = self.0.borrow_mut();
                    if inner.queue.len() < MAX_QUEUED {
                        inner.queue.push(item);
                    }
                }
            }
        }
    }

    /// The frame (a load, a tick) is over: its reports no longer trim
    /// later texts.
    pub fn end_frame(&self) {
        self.0.borrow_mut().recent.clear();
    }

    /// The items new since the last drain, each with its count so far.
    pub fn drain(&self) -> Vec<ReportItem> {
        let mut inner = self.0.borrow_mut();
        let mut items = std::mem::take(&mut inner.queue);
        for item in &mut items {
            item.count = inner.seen.times(&item.message).max(1);
        }
        items
    }

    /// How many faults occurred: items and their repeats.
    pub fn count(&self) -> usize {
        self.0.borrow().faults
    }

    /// Each text that occurred more than once in the run, as its first
    /// line and how many times, in the order they first occurred: the
    /// `×N` summary a run ends with.
    pub fn repeats(&self) -> Vec<(String, usize)> {
        self.0.borrow().seen.repeats()
    }
}

impl Inner {
    /// Counts a fault; whether its text is new to the run.
    fn fault(&mut self, text: &str) -> bool {
        self.faults += 1;
        !self.seen.again(text)
    }

    fn item(&self, kind: ItemKind, text: &str) -> ReportItem {
        let (file, line) = place_of(text);
        let mod_name = match (&self.mod_of, &file) {
            (Some(f), Some(file)) => f(file),
            _ => None,
        };
        ReportItem {
            kind,
            mod_name,
            file,
            line,
            message: text.to_owned(),
            count: 1,
        }
    }
}

/// The `file:line: ` a text starts with (`file: ` without a line).
fn place_of(text: &str) -> (Option<String>, Option<u32>) {
    let first = first_line_of(text);
    let Some(colon) = first.find(": ") else {
        return (None, None);
    };
    let place = &first[..colon];
    if place.contains(' ') || place.is_empty() {
        return (None, None);
    }
    let mut parts = place.split(':');
    let file = parts.next().unwrap_or_default();
    if !file.contains('.') {
        return (None, None);
    }
    let line = parts.next().and_then(|l| l.parse().ok());
    (Some(file.to_owned()), line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> (ReportStream, Rc<RefCell<Vec<String>>>) {
        let kept = Rc::new(RefCell::new(Vec::new()));
        let sink = kept.clone();
        let stream = ReportStream::new();
        stream.on_item(move |item| sink.borrow_mut().push(item.message.clone()));
        (stream, kept)
    }

    const REFUSED: &str = "a.lua:2: `K.A1` argument 1: expected int, got string; dispatch aborted";

    #[test]
    fn a_refused_send_and_the_errors_that_carry_it_are_one_item() {
        let (stream, kept) = stream();
        stream.push_text(ItemKind::Mismatch, REFUSED, true);
        // The listener it failed, the top level it reached, with tracebacks.
        stream.push_text(
            ItemKind::ListenerFailed,
            format!(
                "a.lua:2: listener of `K.B` failed: {REFUSED}\nstack traceback:\n\ta.lua:2: in function <a.lua:2>"
            ),
            true,
        );
        stream.push_error(&ScriptError::from_message(
            "a.lua",
            format!("{REFUSED}\nstack traceback:\n\t[C]: in ?"),
        ));
        stream.push_text(ItemKind::ScriptError, REFUSED, false);
        assert_eq!(*kept.borrow(), [REFUSED]);
        assert_eq!(stream.count(), 1);
    }

    #[test]
    fn a_report_trims_only_within_its_frame_and_only_whole() {
        let (stream, kept) = stream();
        stream.push_text(ItemKind::Mismatch, REFUSED, true);
        // The same words ending differently, or mid-word: other faults.
        let longer = format!("{REFUSED} twice");
        stream.push_text(ItemKind::ScriptError, longer.clone(), false);
        let inside = format!("x{REFUSED}");
        stream.push_text(ItemKind::ScriptError, inside.clone(), false);
        stream.end_frame();
        // A later frame's same fault counts again (kept once per run).
        stream.push_text(ItemKind::ScriptError, REFUSED, false);
        assert_eq!(*kept.borrow(), [REFUSED, &longer, &inside]);
        assert_eq!(stream.count(), 4);
    }

    #[test]
    fn a_multi_line_report_trims_only_with_all_its_lines() {
        let (stream, kept) = stream();
        let report = "a.lua:3: listener of `K` failed: boom\nstack traceback:\n\ta.lua:3";
        stream.push_text(ItemKind::ListenerFailed, report, true);
        stream.push_text(
            ItemKind::ScriptError,
            format!("top: {report}\n\tmore"),
            false,
        );
        stream.push_text(
            ItemKind::ScriptError,
            "top: a.lua:3: listener of `K` failed: boom\nother traceback",
            false,
        );
        assert_eq!(kept.borrow().len(), 2, "{:?}", kept.borrow());
    }

    #[test]
    fn an_error_repeated_across_frames_is_one_item_with_its_count() {
        let stream = ReportStream::new();
        let failing = "a.lua:3: attempt to index a nil value\nstack traceback:\n\ta.lua:3";
        for _ in 0..5 {
            stream.push_text(ItemKind::ListenerFailed, failing, true);
            stream.push_text(ItemKind::ScriptError, "b.rhai:1: other", false);
            stream.end_frame();
        }
        stream.push_text(ItemKind::ScriptError, "c.lua:9: once", false);
        let items = stream.drain();
        let seen: Vec<_> = items
            .iter()
            .map(|i| (i.file.as_deref(), i.line, i.count, i.kind))
            .collect();
        assert_eq!(
            seen,
            [
                (Some("a.lua"), Some(3), 5, ItemKind::ListenerFailed),
                (Some("b.rhai"), Some(1), 5, ItemKind::ScriptError),
                (Some("c.lua"), Some(9), 1, ItemKind::ScriptError),
            ]
        );
        assert_eq!(
            items[0].first_line(),
            "a.lua:3: attempt to index a nil value"
        );
        assert_eq!(stream.count(), 11);
        assert_eq!(
            stream.repeats(),
            [
                ("a.lua:3: attempt to index a nil value".to_owned(), 5),
                ("b.rhai:1: other".to_owned(), 5)
            ]
        );
        assert!(stream.drain().is_empty(), "drained once");
    }

    #[test]
    fn an_item_names_the_mod_its_file_belongs_to() {
        let stream = ReportStream::new();
        stream.set_mod_of(|file| {
            file.strip_prefix("mods/")
                .and_then(|f| f.split('/').next())
                .map(str::to_owned)
        });
        stream.push_text(ItemKind::ScriptError, "mods/goblins/a.lua:4: boom", false);
        stream.push_text(ItemKind::ScriptError, "no place here", false);
        let items = stream.drain();
        assert_eq!(items[0].mod_name.as_deref(), Some("goblins"));
        assert_eq!(items[0].line, Some(4));
        assert_eq!(items[1].file, None);
    }
}
