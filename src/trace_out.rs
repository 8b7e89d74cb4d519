//! `gantry run --trace`: one line per dispatch, printed when it ends.
//!
//! The hub hands out [`TraceEvent`]s as a dispatch happens; this module
//! gathers the events of one dispatch into a record and prints it at the
//! end, so a line names every listener that ran with its order and time.
//! Dispatches nest (a listener that sends): a dispatch's line prints
//! before the lines of the dispatches it caused, which are indented by
//! their depth. So an inner line, finished first, waits in its caller's
//! record until the caller's own line is printed.

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::rc::Rc;
use std::time::Duration;

use gantry_host::{Delivery, Hub, TraceEvent, Value};

/// How many arguments a line shows before `…`.
const MAX_ARGS: usize = 6;
/// How many characters of one argument a line shows.
const MAX_ARG_CHARS: usize = 24;

/// Which keys to trace: all, or a key and the keys below it.
#[derive(Debug, Clone, Default)]
pub struct KeyFilter(Option<String>);

impl KeyFilter {
    /// `Player` (or `Player.*`) traces `Player` and every `Player.…` key.
    pub fn new(pattern: Option<&str>) -> Self {
        Self(pattern.map(|p| p.trim_end_matches(".*").trim_end_matches('.').to_owned()))
    }

    pub fn matches(&self, key: &str) -> bool {
        match &self.0 {
            None => true,
            Some(prefix) => {
                key == prefix
                    || key
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            }
        }
    }
}

/// One dispatch being traced.
struct Record {
    key: String,
    hook: bool,
    head: String,
    calls: Vec<String>,
    aborted: Option<String>,
    shown: bool,
    /// The lines of the dispatches this one caused, indented, in the
    /// order they started: printed after this one's line.
    nested: Vec<String>,
}

/// Formats trace events into lines for `out`.
pub struct TracePrinter {
    hub: Hub,
    /// The tick being run (0 while the scripts' top levels load).
    tick: Rc<Cell<u32>>,
    filter: KeyFilter,
    stack: RefCell<Vec<Record>>,
    out: Box<dyn Fn(&str)>,
}

impl TracePrinter {
    pub fn new(hub: Hub, tick: Rc<Cell<u32>>, filter: KeyFilter, out: Box<dyn Fn(&str)>) -> Self {
        Self {
            hub,
            tick,
            filter,
            stack: RefCell::new(Vec::new()),
            out,
        }
    }

    fn when(&self) -> String {
        match self.tick.get() {
            0 => "[load]".to_owned(),
            n => format!("[tick {n}]"),
        }
    }

    pub fn on_event(&self, event: &TraceEvent<'_>) {
        match event {
            TraceEvent::Dispatch {
                key,
                source,
                args,
                delivery,
            } => {
                let from = match delivery {
                    Delivery::Replay => "to a listener on",
                    Delivery::Hook => "",
                    _ => "from",
                };
                let mut head = format!("{} {delivery} {key}", self.when());
                if !from.is_empty() {
                    let _ = write!(head, " {from} {}", self.hub.source_name(*source));
                }
                let _ = write!(head, " ({})", shorten(args));
                self.stack.borrow_mut().push(Record {
                    key: key.to_string(),
                    hook: *delivery == Delivery::Hook,
                    head,
                    calls: Vec::new(),
                    aborted: None,
                    shown: self.filter.matches(key),
                    nested: Vec::new(),
                });
            }
            TraceEvent::Called {
                key,
                listener,
                site,
                order,
                elapsed,
            } => {
                let mut stack = self.stack.borrow_mut();
                if let Some(record) = stack.last_mut().filter(|r| r.key == *key) {
                    let at = site.map_or_else(|| listener.to_string(), |s| s.to_string());
                    let what = if record.hook { "priority" } else { "order" };
                    record
                        .calls
                        .push(format!("{at} ({what} {order}, {})", micros(*elapsed)));
                }
            }
            TraceEvent::Aborted { key, reason } => {
                let mut stack = self.stack.borrow_mut();
                match stack.last_mut() {
                    // Aborted after its checks began: the End that follows prints it.
                    Some(record) if record.key == *key && record.calls.is_empty() => {
                        record.aborted = Some(reason.to_string());
                    }
                    _ => {
                        drop(stack);
                        if self.filter.matches(key) {
                            let line = format!("{} ABORTED {key}: {reason}", self.when());
                            self.emit(vec![line]);
                        }
                    }
                }
            }
            TraceEvent::End { .. } => self.finish(None),
            TraceEvent::HookDone {
                ran,
                handled,
                cancelled,
                ..
            } => {
                let mut result = format!("ran {ran}");
                if *handled {
                    result.push_str(", handled");
                }
                if *cancelled {
                    result.push_str(", cancelled");
                }
                self.finish(Some(result));
            }
            // Listeners joining and leaving are `--why`'s business.
            TraceEvent::Listened { .. } | TraceEvent::Dropped { .. } => {}
        }
    }

    /// Finishes the innermost record: its line, then the lines of the
    /// dispatches it caused.
    fn finish(&self, result: Option<String>) {
        let Some(record) = self.stack.borrow_mut().pop() else {
            return;
        };
        let mut lines = Vec::with_capacity(1 + record.nested.len());
        if record.shown {
            let mut line = record.head;
            if let Some(reason) = record.aborted {
                let _ = write!(line, " ABORTED: {reason}");
            } else if record.calls.is_empty() {
                line.push_str(" → no listener");
            } else {
                let _ = write!(line, " → {}", record.calls.join(", "));
            }
            if let Some(result) = result {
                let _ = write!(line, "; {result}");
            }
            lines.push(line);
        }
        lines.extend(record.nested);
        self.emit(lines);
    }

    /// Lines finished at the current depth, indented by it: kept by the
    /// dispatch that caused them until its own line is printed, or
    /// printed now at the top.
    fn emit(&self, lines: Vec<String>) {
        let mut stack = self.stack.borrow_mut();
        let depth = stack.len();
        let indented = lines.into_iter().map(|line| {
            if depth == 0 {
                line
            } else {
                format!("  {line}")
            }
        });
        match stack.last_mut() {
            Some(caller) => caller.nested.extend(indented),
            None => {
                drop(stack);
                for line in indented {
                    (self.out)(&line);
                }
            }
        }
    }
}

/// `2.5, "ann", object#3, …`.
fn shorten(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if i == MAX_ARGS {
            out.push('…');
            break;
        }
        let text = match arg {
            Value::Str(s) => format!("{s:?}"),
            Value::Float(f) => {
                // Four decimals; a float keeps its point (`2.0`, not `2`).
                let text = format!("{f:.4}");
                let text = text.trim_end_matches('0');
                if text.ends_with('.') {
                    format!("{text}0")
                } else {
                    text.to_owned()
                }
            }
            other => other.to_string(),
        };
        if text.chars().count() > MAX_ARG_CHARS {
            out.extend(text.chars().take(MAX_ARG_CHARS - 1));
            out.push('…');
        } else {
            out.push_str(&text);
        }
    }
    out
}

fn micros(elapsed: Duration) -> String {
    format!("{:.1}µs", elapsed.as_secs_f64() * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gantry_host::{ListenOptions, Source};

    fn printer(hub: &Hub, filter: Option<&str>) -> Rc<RefCell<Vec<String>>> {
        let lines = Rc::new(RefCell::new(Vec::new()));
        let sink = lines.clone();
        let printer = TracePrinter::new(
            hub.clone(),
            Rc::new(Cell::new(2)),
            KeyFilter::new(filter),
            Box::new(move |l| sink.borrow_mut().push(l.to_owned())),
        );
        hub.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
            printer.on_event(event)
        })));
        lines
    }

    /// Times vary; the tests compare lines with them blanked.
    fn blank_times(line: &str) -> String {
        let mut out = String::new();
        for part in line.split(", ") {
            if !out.is_empty() {
                out.push_str(", ");
            }
            match part.find("µs") {
                Some(end) => {
                    let start = part[..end]
                        .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
                        .map_or(0, |i| i + 1);
                    out.push_str(&part[..start]);
                    out.push('T');
                    out.push_str(&part[end + "µs".len()..]);
                }
                None => out.push_str(part),
            }
        }
        out
    }

    #[test]
    fn trace_prints_one_line_per_dispatch_with_each_listener_its_order_and_time() {
        let hub = Hub::new();
        let lines = printer(&hub, None);
        let _a = hub
            .listen_with(
                "Player.Hurt",
                Source::Global,
                ListenOptions::new().order(-10),
                |_: f64, _: String| {},
            )
            .unwrap();
        hub.send_str(
            "Player.Hurt",
            Source::Global,
            (2.5, "a very long name that goes on and on"),
        )
        .unwrap();
        let lines = lines.borrow();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line = blank_times(&lines[0]);
        assert!(
            line.starts_with(
                "[tick 2] send Player.Hurt from global (2.5, \"a very long name that …) → "
            ),
            "{line}"
        );
        assert!(line.ends_with("(order -10, T)"), "{line}");
        assert!(
            line.contains("src/trace_out.rs:"),
            "the Rust listener's site: {line}"
        );
    }

    #[test]
    fn trace_key_focuses_on_a_key_and_the_keys_below_it() {
        let hub = Hub::new();
        let lines = printer(&hub, Some("Player"));
        hub.send_str("Player.Hurt", Source::Global, (1_i64,))
            .unwrap();
        hub.send_str("Playerx", Source::Global, (1_i64,)).unwrap();
        hub.send_str("Game.Tick", Source::Global, (1_i64,)).unwrap();
        let lines = lines.borrow();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("Player.Hurt"), "{lines:?}");
        assert!(lines[0].ends_with("→ no listener"), "{lines:?}");
    }

    #[test]
    fn trace_shows_aborted_dispatches_with_the_reason() {
        let hub = Hub::new();
        let lines = printer(&hub, None);
        let key = hub.key("K").unwrap();
        hub.send(key, Source::Global, (1_i64,)).unwrap();
        let _ = hub.send(key, Source::Global, ("one",));
        let lines = lines.borrow();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(
            lines[1],
            "[tick 2] ABORTED K: argument 1: expected int, got string"
        );
    }

    #[test]
    fn a_dispatch_prints_before_the_dispatches_it_causes_indented_by_depth() {
        let hub = Hub::new();
        let lines = printer(&hub, None);
        let (outer, middle) = (hub.clone(), hub.clone());
        let _outer = hub
            .listen("Outer", Source::Global, move |n: i64| {
                outer.send_str("Middle", Source::Global, (n,)).unwrap();
                outer.send_str("Second", Source::Global, (n,)).unwrap();
            })
            .unwrap();
        let _middle = hub
            .listen("Middle", Source::Global, move |n: i64| {
                middle.send_str("Inner", Source::Global, (n,)).unwrap();
            })
            .unwrap();
        hub.send_str("Outer", Source::Global, (7_i64,)).unwrap();
        hub.send_str("After", Source::Global, (8_i64,)).unwrap();
        let lines = lines.borrow();
        let starts: Vec<&str> = lines
            .iter()
            .map(|l| &l[..l.find(" (").unwrap_or(l.len())])
            .collect();
        assert_eq!(
            starts,
            [
                "[tick 2] send Outer from global",
                "  [tick 2] send Middle from global",
                "    [tick 2] send Inner from global",
                "  [tick 2] send Second from global",
                "[tick 2] send After from global",
            ],
            "{lines:?}"
        );
    }
}
