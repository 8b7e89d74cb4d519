//! `gantry run DIR --why KEY`: after the run, for every listener that would
//! hear KEY, whether it fired and, when it did not, why.
//!
//! The ledger is built from the hub's trace events (the same ones `--trace`
//! prints): listeners joining and leaving with their reason, each dispatch
//! with its source, each listener called, aborted dispatches and cancelled
//! hook runs. It keeps counts, not lines, so a long run costs little; and
//! with no `--why` (and no `--trace`) no tracer is installed at all.
//!
//! The reasons, in the order they are tried, so the first that applies is
//! the one a modder needs to hear:
//! 1. the listener left before anything reached it (owner collected,
//!    object destroyed, unbound);
//! 2. nothing sent the key: every send was aborted (a type or arity
//!    mismatch), or a key a typo away was sent instead, or simply nothing;
//! 3. a higher-priority hook listener cancelled every run before it;
//! 4. a slot listener whose row never changed;
//! 5. the key was sent, but never at a scope this listener hears;
//! 6. otherwise: sent where it listens, yet not called — the trace shows
//!    the dispatches.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::rc::Rc;

use gantry_host::{
    Delivery, DropReason, Hub, Language, ListenerId, ListenerKind, Site, Source, TraceEvent,
    WorldId,
};

/// Names a source for a report line (`object#6 (6_player.lua)`).
pub type Describe = Rc<dyn Fn(Source) -> String>;

/// What happened to one listener.
struct ListenerLog {
    key: String,
    scope: Source,
    site: Option<Site>,
    kind: ListenerKind,
    partial: bool,
    calls: u32,
    /// How many dispatches its key had had when it joined.
    joined_after: u32,
    dropped: Option<DropReason>,
    /// Hook runs cancelled before this listener's turn, and by whom.
    cancelled_before: u32,
    cancelled_by: Option<String>,
}

/// What happened on one key.
#[derive(Default)]
struct KeyLog {
    /// Sends, requests, stores and hook runs (not replays).
    dispatches: u32,
    /// Where they came from, with the world of an object source.
    sources: BTreeMap<Source, (u32, Option<WorldId>)>,
    /// Dispatches aborted before any listener ran, by reason.
    aborted: BTreeMap<String, u32>,
}

/// One dispatch in progress: the listeners it called so far.
struct Frame {
    called: Vec<ListenerId>,
}

#[derive(Default)]
struct Ledger {
    listeners: BTreeMap<ListenerId, ListenerLog>,
    keys: HashMap<String, KeyLog>,
    stack: Vec<Frame>,
}

/// Collects the ledger from trace events.
pub struct WhyRecorder {
    hub: Hub,
    ledger: RefCell<Ledger>,
}

impl WhyRecorder {
    pub fn new(hub: Hub) -> Self {
        Self {
            hub,
            ledger: RefCell::new(Ledger::default()),
        }
    }

    pub fn on_event(&self, event: &TraceEvent<'_>) {
        let mut ledger = self.ledger.borrow_mut();
        let ledger = &mut *ledger;
        match event {
            TraceEvent::Listened {
                key,
                listener,
                scope,
                site,
                kind,
                partial,
            } => {
                let joined_after = ledger.keys.get(*key).map_or(0, |k| k.dispatches);
                ledger.listeners.insert(
                    *listener,
                    ListenerLog {
                        key: (*key).to_owned(),
                        scope: *scope,
                        site: site.cloned(),
                        kind: *kind,
                        partial: *partial,
                        calls: 0,
                        joined_after,
                        dropped: None,
                        cancelled_before: 0,
                        cancelled_by: None,
                    },
                );
            }
            TraceEvent::Dropped { listener, reason } => {
                if let Some(log) = ledger.listeners.get_mut(listener) {
                    log.dropped = Some(*reason);
                }
            }
            TraceEvent::Dispatch {
                key,
                source,
                delivery,
                ..
            } => {
                if *delivery != Delivery::Replay {
                    let log = key_log(&mut ledger.keys, key);
                    log.dispatches += 1;
                    let world = match source {
                        Source::Object(o) | Source::Named(o, _) => self.hub.world_of(*o),
                        Source::World(w) => Some(*w),
                        Source::Global => None,
                    };
                    log.sources.entry(*source).or_insert((0, world)).0 += 1;
                }
                ledger.stack.push(Frame { called: Vec::new() });
            }
            TraceEvent::Called { listener, .. } => {
                if let Some(log) = ledger.listeners.get_mut(listener) {
                    log.calls += 1;
                }
                if let Some(frame) = ledger.stack.last_mut() {
                    frame.called.push(*listener);
                }
            }
            TraceEvent::Aborted { key, reason } => {
                let log = key_log(&mut ledger.keys, key);
                *log.aborted.entry((*reason).to_owned()).or_default() += 1;
            }
            TraceEvent::End { .. } => {
                ledger.stack.pop();
            }
            TraceEvent::HookDone { key, cancelled, .. } => {
                let frame = ledger.stack.pop();
                if *cancelled && let Some(frame) = frame {
                    let canceller = frame
                        .called
                        .last()
                        .and_then(|id| ledger.listeners.get(id))
                        .map(site_text);
                    for (id, log) in ledger.listeners.iter_mut() {
                        let hears = log.key == *key || (log.partial && is_below(key, &log.key));
                        if hears
                            && matches!(log.kind, ListenerKind::Hook { .. })
                            && log.dropped.is_none()
                            && !frame.called.contains(id)
                        {
                            log.cancelled_before += 1;
                            log.cancelled_by.clone_from(&canceller);
                        }
                    }
                }
            }
        }
    }

    /// The report for `key`: one line for the key, one per listener that
    /// would hear it.
    pub fn report(&self, key: &str, describe: &Describe) -> String {
        let ledger = self.ledger.borrow();
        let mut out = String::new();
        let sent = ledger.keys.get(key);
        let _ = write!(out, "{key}: ");
        match sent {
            Some(log) if log.dispatches > 0 => {
                let _ = write!(
                    out,
                    "{} during the run (from {})",
                    times(log.dispatches, "dispatched"),
                    sources_text(log, describe)
                );
            }
            _ => out.push_str("never dispatched during the run"),
        }
        if let Some(log) = sent
            && !log.aborted.is_empty()
        {
            let _ = write!(out, "; aborted: {}", aborted_text(log));
        }
        out.push('\n');
        let listeners: Vec<&ListenerLog> = ledger
            .listeners
            .values()
            .filter(|l| l.key == key || (l.partial && is_below(key, &l.key)))
            .collect();
        if listeners.is_empty() {
            let _ = writeln!(out, "  no listener of {key} joined during the run{}", {
                near_sent(&ledger, key)
                    .map(|(k, n)| format!(" (but {k} was sent {})", times(n, "")))
                    .unwrap_or_default()
            });
        }
        for listener in listeners {
            let _ = writeln!(
                out,
                "  {} ({}): {}",
                site_text(listener),
                scope_text(listener, describe),
                fate(&ledger, key, listener, describe)
            );
        }
        out
    }
}

/// The log of `key`, made on its first event (no allocation after that:
/// this runs on every dispatch while `--why` is on).
fn key_log<'l>(keys: &'l mut HashMap<String, KeyLog>, key: &str) -> &'l mut KeyLog {
    if !keys.contains_key(key) {
        keys.insert(key.to_owned(), KeyLog::default());
    }
    keys.get_mut(key).expect("inserted above")
}

/// Fired how often, or why not.
fn fate(ledger: &Ledger, key: &str, l: &ListenerLog, describe: &Describe) -> String {
    if l.calls > 0 {
        let mut text = format!("fired {}", times(l.calls, ""));
        if let Some(reason) = l.dropped {
            let _ = write!(text, ", then left: {reason}");
        }
        return text;
    }
    let mut text = String::from("never fired: ");
    if let Some(reason) = l.dropped {
        let _ = write!(text, "{reason} before anything reached it");
        return text;
    }
    // What this listener could hear: its key, and the keys below a partial.
    let heard: Vec<(&String, &KeyLog)> = ledger
        .keys
        .iter()
        .filter(|(k, _)| k.as_str() == l.key || (l.partial && is_below(k, &l.key)))
        .collect();
    let dispatches: u32 = heard.iter().map(|(_, log)| log.dispatches).sum();
    if dispatches == 0 {
        let aborted: Vec<String> = heard
            .iter()
            .filter(|(_, log)| !log.aborted.is_empty())
            .map(|(_, log)| aborted_text(log))
            .collect();
        if !aborted.is_empty() {
            let _ = write!(
                text,
                "every send of {} was aborted before any listener ran ({})",
                l.key,
                aborted.join("; ")
            );
        } else if let Some((near, n)) = near_sent(ledger, &l.key) {
            let _ = write!(
                text,
                "nothing sent {}, but {near} was sent {} — a typo?",
                l.key,
                times(n, "")
            );
        } else {
            let _ = write!(text, "nothing sent {} during the run", l.key);
        }
        return text;
    }
    if let ListenerKind::Hook { .. } = l.kind
        && l.cancelled_before > 0
    {
        let _ = write!(
            text,
            "a higher-priority hook listener ({}) cancelled the run before its turn {}",
            l.cancelled_by.as_deref().unwrap_or("unknown site"),
            times(l.cancelled_before, "")
        );
        return text;
    }
    let reaching: Vec<(&Source, u32)> = heard
        .iter()
        .flat_map(|(_, log)| log.sources.iter())
        .filter(|(source, (_, world))| reaches(**source, *world, l.scope))
        .map(|(source, (n, _))| (source, *n))
        .collect();
    if reaching.is_empty() {
        let from: Vec<String> = heard
            .iter()
            .map(|(_, log)| sources_text(log, describe))
            .collect();
        let _ = write!(
            text,
            "{} was sent only from {}, and a listener on {} hears {}",
            key,
            from.join(", "),
            describe(l.scope),
            scope_rule(l.scope)
        );
        return text;
    }
    if let ListenerKind::Rows {
        slot: Some(slot), ..
    } = l.kind
    {
        let shown = match l.site.as_ref().map(|s| s.language) {
            Some(Language::Lua) => i64::from(slot) + 1,
            _ => i64::from(slot),
        };
        let since = ledger
            .keys
            .get(&l.key)
            .map_or(0, |k| k.dispatches.saturating_sub(l.joined_after));
        let _ = write!(
            text,
            "{} changed {} since it joined, but never at row {shown}",
            l.key,
            times(since, "")
        );
        return text;
    }
    let _ = write!(
        text,
        "{} was dispatched where it listens, yet it was not called (a listener whose \
         parameters contradict the message is skipped and reported): run with \
         `--trace-key {}` to see each dispatch",
        l.key, l.key
    );
    text
}

/// Does a dispatch from `source` reach a listener on `scope` (the tier
/// fan-out: an object send reaches its object, its world and global)?
fn reaches(source: Source, world: Option<WorldId>, scope: Source) -> bool {
    match scope {
        Source::Global => true,
        Source::World(w) => source == Source::World(w) || world == Some(w),
        other => other == source,
    }
}

fn scope_rule(scope: Source) -> &'static str {
    match scope {
        Source::Global => "every send",
        Source::World(_) => "only sends at that world or its objects",
        Source::Object(_) => "only sends at that object",
        Source::Named(..) => "only sends at that named source",
    }
}

/// Is `key` strictly below `ancestor` (`Player.Hurt` below `Player`)?
fn is_below(key: &str, ancestor: &str) -> bool {
    key.strip_prefix(ancestor)
        .is_some_and(|rest| rest.starts_with('.'))
}

/// The most-sent key one or two edits away from `key`.
fn near_sent(ledger: &Ledger, key: &str) -> Option<(String, u32)> {
    ledger
        .keys
        .iter()
        .filter(|(k, log)| {
            log.dispatches > 0 && k.as_str() != key && crate::explain::distance(k, key) <= 2
        })
        .max_by_key(|(k, log)| (log.dispatches, std::cmp::Reverse((*k).clone())))
        .map(|(k, log)| (k.clone(), log.dispatches))
}

fn site_text(l: &ListenerLog) -> String {
    match &l.site {
        Some(site) => format!("{}:{}", site.file, site.line),
        None => "a listener with no recorded site".to_owned(),
    }
}

fn scope_text(l: &ListenerLog, describe: &Describe) -> String {
    let what = match l.kind {
        ListenerKind::Message => "listener".to_owned(),
        ListenerKind::Table => "whole-table listener".to_owned(),
        ListenerKind::Rows { slot: None, .. } => "row listener".to_owned(),
        ListenerKind::Rows { slot: Some(_), .. } => "slot listener".to_owned(),
        ListenerKind::Hook { priority } => format!("hook listener, priority {priority}"),
    };
    let partial = if l.partial { "partial " } else { "" };
    format!("{partial}{what} on {}", describe(l.scope))
}

fn sources_text(log: &KeyLog, describe: &Describe) -> String {
    log.sources
        .iter()
        .map(|(source, (n, _))| format!("{} ×{n}", describe(*source)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn aborted_text(log: &KeyLog) -> String {
    log.aborted
        .iter()
        .map(|(reason, n)| format!("{reason} (×{n})"))
        .collect::<Vec<_>>()
        .join("; ")
}

fn times(n: u32, verb: &str) -> String {
    let word = if n == 1 { "time" } else { "times" };
    if verb.is_empty() {
        format!("{n} {word}")
    } else {
        format!("{verb} {n} {word}")
    }
}
