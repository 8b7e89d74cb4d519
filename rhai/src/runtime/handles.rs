//! Custom types scripts hold: objects, worlds, named sources, responders and
//! hook contexts, with their methods.
//!
//! Handles are plain ids and compare by id (`==`), so two handles of the
//! same object are equal.

use std::cell::Cell;
use std::rc::{Rc, Weak};

use gantry_host::{ListenerId, ObjectId, Responder, Source, WorldId};
use rhai::{Dynamic, Engine, EvalAltResult, INT};

use super::shared::Shared;

/// A hub object (`SELF`, spawned objects, object arguments). Rhai type name
/// `Object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectHandle(pub ObjectId);

/// A world (`obj.World()`). Rhai type name `World`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorldHandle(pub WorldId);

/// A composite (object, name) source from `GMP::Named`. Rhai type name `Named`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedHandle(pub Source);

/// The right to answer a request: `rsp.Response(...)`, now or later, once.
#[derive(Clone)]
pub struct ResponderHandle {
    pub responder: Responder,
    /// The request's key, for converting map answers by the response types.
    pub key: Rc<str>,
}

/// What a hook listener can do besides changing the payload:
/// `ctx.Handled()`, `ctx.Cancel()`.
#[derive(Clone, Default)]
pub struct HookCtx {
    pub handled: Rc<Cell<bool>>,
    pub cancelled: Rc<Cell<bool>>,
}

/// A listener's connection, what listening returns: `conn.unbind()`
/// removes the listener, `UnbindMessage(key, conn)` too; it prints as its
/// key and id (`Connection(Quest.Start#12)`) and compares equal to any
/// handle of the same listener. Rhai type name `Connection`.
#[derive(Clone, Debug)]
pub struct ConnectionHandle {
    pub key: Rc<str>,
    pub id: ListenerId,
}

impl ConnectionHandle {
    fn text(&self) -> String {
        format!("Connection({}#{})", self.key, self.id.get())
    }
}

/// Registers the handle types and their methods.
pub(crate) fn register(engine: &mut Engine, shared: &Weak<Shared>) {
    engine.register_type_with_name::<ObjectHandle>("Object");
    engine.register_type_with_name::<WorldHandle>("World");
    engine.register_type_with_name::<NamedHandle>("Named");
    engine.register_type_with_name::<ResponderHandle>("Responder");
    engine.register_type_with_name::<HookCtx>("HookCtx");
    engine.register_type_with_name::<ConnectionHandle>("Connection");

    let weak = shared.clone();
    engine.register_fn("unbind", move |c: &mut ConnectionHandle| -> bool {
        weak.upgrade()
            .is_some_and(|s| s.hub.unlisten_key(&c.key, c.id))
    });
    engine.register_fn("Id", |c: &mut ConnectionHandle| c.id.get() as INT);
    engine.register_fn("==", |a: ConnectionHandle, b: ConnectionHandle| {
        a.id == b.id
    });
    engine.register_fn("!=", |a: ConnectionHandle, b: ConnectionHandle| {
        a.id != b.id
    });
    engine.register_fn("to_string", |c: &mut ConnectionHandle| c.text());
    engine.register_fn("to_debug", |c: &mut ConnectionHandle| c.text());

    let weak = shared.clone();
    engine.register_fn("World", move |o: &mut ObjectHandle| -> Dynamic {
        weak.upgrade()
            .and_then(|s| s.hub.world_of(o.0))
            .map_or(Dynamic::UNIT, |w| Dynamic::from(WorldHandle(w)))
    });
    let weak = shared.clone();
    engine.register_fn("IsAlive", move |o: &mut ObjectHandle| -> bool {
        weak.upgrade().is_some_and(|s| s.hub.is_alive(o.0))
    });
    engine.register_fn("Id", |o: &mut ObjectHandle| o.0.get() as INT);
    engine.register_fn("Id", |w: &mut WorldHandle| INT::from(w.0.get()));
    engine.register_fn("Object", |n: &mut NamedHandle| -> Dynamic {
        n.0.object()
            .map_or(Dynamic::UNIT, |o| Dynamic::from(ObjectHandle(o)))
    });
    engine.register_fn("==", |a: ObjectHandle, b: ObjectHandle| a == b);
    engine.register_fn("!=", |a: ObjectHandle, b: ObjectHandle| a != b);
    engine.register_fn("==", |a: WorldHandle, b: WorldHandle| a == b);
    engine.register_fn("!=", |a: WorldHandle, b: WorldHandle| a != b);
    engine.register_fn("==", |a: NamedHandle, b: NamedHandle| a == b);
    engine.register_fn("to_string", |o: &mut ObjectHandle| o.0.to_string());
    engine.register_fn("to_debug", |o: &mut ObjectHandle| o.0.to_string());
    engine.register_fn("to_string", |w: &mut WorldHandle| w.0.to_string());
    engine.register_fn("to_debug", |w: &mut WorldHandle| w.0.to_string());

    engine.register_fn("Handled", |c: &mut HookCtx| c.handled.set(true));
    engine.register_fn("Cancel", |c: &mut HookCtx| c.cancelled.set(true));
    engine.register_fn("IsAnswered", |r: &mut ResponderHandle| {
        r.responder.is_answered()
    });
}

/// `Box<EvalAltResult>` from a message (a runtime error at the call).
pub(crate) fn fail(message: impl Into<String>) -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorRuntime(
        Dynamic::from(message.into()),
        rhai::Position::NONE,
    ))
}
