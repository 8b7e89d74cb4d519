//! The lane: a baked send from Rhai delivered to Rhai listeners without
//! the hub's values.
//!
//! Through the hub, a Rhai → Rhai send converts its arguments into
//! `Value`s, has the hub admit and route them, and converts them back per
//! listener — more, for one listener, than a hand-written Rhai bus (an
//! object map of arrays of closures) costs in all. A baked send knows its
//! function and key, so it asks the hub once what a send from its source
//! does ([`Hub::lane_snapshot`](gantry_host::Hub::lane_snapshot)) and, while
//! the hub's epoch stands, calls the listeners' handlers itself with the
//! sender's values. The hub's contract is kept:
//! - The lane is used only for plain message listeners this runtime
//!   registered (no `key` or `respond` delivery), whose functions take no
//!   more than the key carries; a Rust, Lua or other runtime's listener,
//!   `times`, tracing, a key whose types are still being
//!   learned or a source the lane does not read sends the slow way.
//! - Arguments are checked against the key's types: an integer, a float, a
//!   boolean or a string each, exactly the key's arity, none a shared
//!   (captured) value; anything else — a map, an object, an integer for a
//!   float, an extra or a missing argument — goes the slow way, which
//!   converts, refuses or records exactly as before. The grants of the
//!   sending script are checked first, as the slow way checks them.
//! - Listeners run in delivery order, each in its turn, each a call of its
//!   own under the per-call budget as the hub would run it; a failing one
//!   is reported as the hub reports it (`Report::ListenerFailed` with its
//!   site) and the rest still run. A listener removed during the send is
//!   skipped (asked of the hub only once the epoch moved mid-send).
//! - A dispatch log (a recording) keeps the lane: each send it takes is
//!   logged through the snapshot's log handle, with its values as they are
//!   in Rhai, before its listeners run and ended after, as the hub logs
//!   the sends it delivers.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use gantry_host::{ApiFunction, Key, ListenerId, LogHandle, PlainArg, Site, Source, Type};
use rhai::{Dynamic, ImmutableString};

use super::api::Args;
use super::handles::{ObjectHandle, WorldHandle};
use super::listen::{Handler, MessageHandler, OnStack};
use super::shared::Shared;

/// The plain message listeners of this runtime, by id: what a lane calls.
/// Weak: the hub's callback holds the handler, and a removed listener's
/// entry is pruned as the map grows.
#[derive(Default)]
pub(crate) struct Listeners {
    handlers: RefCell<HashMap<ListenerId, Weak<OnStack<Handler>>>>,
    /// The map's size at which dead entries are next pruned.
    prune_at: Cell<usize>,
}

impl Listeners {
    /// Listener `id` calls `handler`: a lane may call it directly.
    pub fn remember(&self, id: ListenerId, handler: &MessageHandler) {
        let mut handlers = self.handlers.borrow_mut();
        if handlers.len() >= self.prune_at.get() {
            handlers.retain(|_, h| h.strong_count() > 0);
            self.prune_at.set((handlers.len() * 2).max(64));
        }
        handlers.insert(id, Rc::downgrade(handler));
    }

    fn get(&self, id: ListenerId) -> Option<Weak<OnStack<Handler>>> {
        self.handlers.borrow().get(&id).cloned()
    }
}

/// The lanes of one baked send function while the epoch stands: the last
/// one taken, and those of the other sources it was sent from (an object
/// send from many objects takes each object's lane once per epoch, not
/// once per send).
#[derive(Default)]
pub(crate) struct SendLane {
    kept: RefCell<Kept>,
}

#[derive(Default)]
struct Kept {
    last: Option<Rc<Lane>>,
    by_source: HashMap<Source, Rc<Lane>>,
}

/// Most sources a send function keeps lanes for; past it they are all
/// taken again.
const MAX_SOURCES: usize = 64;

impl SendLane {
    /// The lane kept for `source` at `epoch`, or a new one taken now.
    #[inline]
    fn lane(&self, shared: &Shared, key: Key, source: Source, epoch: u64) -> Rc<Lane> {
        {
            let kept = self.kept.borrow();
            if let Some(lane) = &kept.last
                && lane.epoch == epoch
                && lane.source == source
            {
                return lane.clone();
            }
        }
        self.other_lane(shared, key, source, epoch)
    }

    #[cold]
    fn other_lane(&self, shared: &Shared, key: Key, source: Source, epoch: u64) -> Rc<Lane> {
        let found = (self.kept.borrow().by_source.get(&source))
            .filter(|lane| lane.epoch == epoch)
            .cloned();
        // Taken with nothing borrowed: taking may drop listeners.
        let lane = found.unwrap_or_else(|| Rc::new(take(shared, key, source)));
        let mut kept = self.kept.borrow_mut();
        let stale = (kept.by_source.values().next()).is_some_and(|l| l.epoch != lane.epoch);
        if stale || kept.by_source.len() >= MAX_SOURCES {
            kept.by_source.clear();
        }
        kept.by_source.insert(source, lane.clone());
        kept.last = Some(lane.clone());
        lane
    }
}

/// What a send of one key from one source does, while `epoch` stands.
struct Lane {
    epoch: u64,
    source: Source,
    /// `None`: the send goes the slow way (a listener the lane cannot call,
    /// a type it does not check, tracing, ...).
    open: Option<Open>,
}

struct Open {
    params: Box<[Kind]>,
    listeners: Box<[Listener]>,
    /// The hub's dispatch log, if one is installed.
    log: Option<LogHandle>,
}

struct Listener {
    id: ListenerId,
    site: Option<Site>,
    handler: Weak<OnStack<Handler>>,
    /// How many of the key's values its function takes.
    passes: usize,
}

/// A parameter type the lane checks an argument against.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    Float,
    Bool,
    Str,
}

impl Kind {
    fn of(ty: &Type) -> Option<Kind> {
        Some(match ty {
            Type::Int => Kind::Int,
            Type::Float => Kind::Float,
            Type::Bool => Kind::Bool,
            Type::String => Kind::Str,
            _ => return None,
        })
    }

    #[inline]
    fn fits(self, value: &Dynamic) -> bool {
        !value.is_shared()
            && match self {
                Kind::Int => value.is_int(),
                Kind::Float => value.is_float(),
                Kind::Bool => value.is_bool(),
                Kind::Str => value.is_string(),
            }
    }
}

/// Can a send of `function` take a lane at all?
pub(crate) fn takes_lane(function: ApiFunction) -> bool {
    matches!(
        function,
        ApiFunction::NotifyMessage
            | ApiFunction::NotifyObjectMessage
            | ApiFunction::NotifyWorldMessage
    )
}

/// The source a send names in its first argument, when the lane reads it
/// (an object for an object send, a world for a world send), and the
/// arguments after it.
#[inline]
fn source_of<'a, 'b>(
    function: ApiFunction,
    args: &'a [&'b mut Dynamic],
) -> Option<(Source, &'a [&'b mut Dynamic])> {
    match function {
        ApiFunction::NotifyMessage => Some((Source::Global, args)),
        ApiFunction::NotifyObjectMessage => {
            let (first, rest) = args.split_first()?;
            let object = first.read_lock::<ObjectHandle>()?.0;
            Some((Source::Object(object), rest))
        }
        ApiFunction::NotifyWorldMessage => {
            let (first, rest) = args.split_first()?;
            let world = first.read_lock::<WorldHandle>()?.0;
            Some((Source::World(world), rest))
        }
        _ => None,
    }
}

impl SendLane {
    /// Delivers the send of `function` on `key` with `args` (as the baked
    /// function got them) down the lane, if it may; `false`: nothing was
    /// done, the send goes the slow way.
    pub fn send(
        &self,
        shared: &Shared,
        function: ApiFunction,
        key: Key,
        text: &str,
        args: &[&mut Dynamic],
    ) -> bool {
        let Some((source, args)) = source_of(function, args) else {
            return false;
        };
        let hub = &shared.hub;
        let epoch = hub.epoch();
        let lane = self.lane(shared, key, source, epoch);
        let Some(open) = &lane.open else {
            return false;
        };
        if args.len() != open.params.len()
            || !(open.params.iter().zip(args)).all(|(kind, arg)| kind.fits(arg))
        {
            return false;
        }
        // A call outside the sender's grants (or from no script) is
        // refused the slow way. Asked last: a send the lane does not take
        // pays nothing for it.
        let Some(script) = shared.current() else {
            return false;
        };
        if let Some(grants) = &script.grants
            && grants.check(function, key, text).is_err()
        {
            return false;
        }
        drop(script);
        if let Some(log) = &open.log {
            log_send(log, key, source, &open.params, args);
        }
        for listener in &open.listeners {
            // Removed by an earlier listener of this send: skipped, as the
            // hub skips it.
            if hub.epoch() != lane.epoch && !hub.is_listening(listener.id) {
                continue;
            }
            let Some(handler) = listener.handler.upgrade() else {
                continue;
            };
            // A plain loop: `collect` into the small vector costs more
            // than the copy of an integer.
            let mut values = Args::new();
            for a in &args[..listener.passes] {
                values.push((**a).clone());
            }
            if let Err(e) = handler.call_plain(shared, values) {
                hub.listener_failed(key, e.message, listener.site.clone());
            }
        }
        if let Some(log) = &open.log {
            log.end();
        }
        true
    }
}

/// Logs a send down the lane whose `args` fit `kinds` (checked already).
fn log_send(log: &LogHandle, key: Key, source: Source, kinds: &[Kind], args: &[&mut Dynamic]) {
    let texts: smallvec::SmallVec<[Option<ImmutableString>; 4]> = args
        .iter()
        .map(|a| a.read_lock::<ImmutableString>().map(|s| s.clone()))
        .collect();
    let plain: smallvec::SmallVec<[PlainArg<'_>; 4]> = (kinds.iter().zip(args).zip(&texts))
        .map(|((kind, a), text)| match kind {
            Kind::Int => PlainArg::Int(a.as_int().unwrap_or_default()),
            Kind::Float => PlainArg::Float(a.as_float().unwrap_or_default()),
            Kind::Bool => PlainArg::Bool(a.as_bool().unwrap_or_default()),
            Kind::Str => PlainArg::Str(text.as_ref().map_or("", |s| s.as_str())),
        })
        .collect();
    log.begin_send(key, source, &plain);
}

/// The lane of `key` from `source` now (see the module doc).
fn take(shared: &Shared, key: Key, source: Source) -> Lane {
    let snapshot = match shared.hub.lane_snapshot(key, source) {
        Ok(snapshot) => snapshot,
        Err(_) => {
            return Lane {
                epoch: shared.hub.epoch(),
                source,
                open: None,
            };
        }
    };
    let open = (|| {
        let params: Box<[Kind]> = snapshot
            .params
            .iter()
            .map(Kind::of)
            .collect::<Option<_>>()?;
        let carried = params.len();
        let listeners = (snapshot.listeners.into_iter())
            .map(|l| {
                let weak = shared.lane.get(l.id)?;
                let handler = weak.upgrade()?;
                // A function taking more than the key carries fails at its
                // call, in the slow way's words.
                if handler.fewest().is_some_and(|n| n > carried) {
                    return None;
                }
                Some(Listener {
                    id: l.id,
                    site: l.site,
                    passes: handler.passes(carried),
                    handler: weak,
                })
            })
            .collect::<Option<_>>()?;
        Some(Open {
            params,
            listeners,
            log: snapshot.log.clone(),
        })
    })();
    Lane {
        epoch: snapshot.epoch,
        source,
        open,
    }
}
