//! Userdata handles scripts hold: objects, worlds, named sources,
//! responders, hook contexts and owner tokens.
//!
//! Handles are plain ids; they compare by id (`__eq`), so two handles of the
//! same object are equal even when they are different userdata.

use std::cell::Cell;
use std::rc::Rc;

use gantry_host::{ObjectId, Responder, Source, WorldId};
use mlua::{AnyUserData, MetaMethod, UserData, UserDataMethods};

use super::shared::shared_of;

/// A hub object (`self`, spawned objects, object arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectHandle(pub ObjectId);

impl UserData for ObjectHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("World", |lua, this, ()| {
            let shared = shared_of(lua)?;
            match shared.hub.world_of(this.0) {
                Some(world) => Ok(Some(WorldHandle(world))),
                None => Ok(None),
            }
        });
        methods.add_method("Id", |_, this, ()| Ok(this.0.get()));
        methods.add_method("IsAlive", |lua, this, ()| {
            Ok(shared_of(lua)?.hub.is_alive(this.0))
        });
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: AnyUserData| {
            Ok(other.borrow::<ObjectHandle>().is_ok_and(|o| o.0 == this.0))
        });
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(this.0.to_string()));
    }
}

/// A world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorldHandle(pub WorldId);

impl UserData for WorldHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("Id", |_, this, ()| Ok(this.0.get()));
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: AnyUserData| {
            Ok(other.borrow::<WorldHandle>().is_ok_and(|o| o.0 == this.0))
        });
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(this.0.to_string()));
    }
}

/// A composite (object, name) source from `GMP.Named`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedHandle(pub Source);

impl UserData for NamedHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("Object", |_, this, ()| {
            Ok(this.0.object().map(ObjectHandle))
        });
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: AnyUserData| {
            Ok(other.borrow::<NamedHandle>().is_ok_and(|o| o.0 == this.0))
        });
        methods.add_meta_method(MetaMethod::ToString, |lua, this, ()| {
            Ok(shared_of(lua)?.hub.source_name(this.0))
        });
    }
}

/// The right to answer a request: `rsp:Response(...)`, now or later, once.
pub struct ResponderHandle {
    pub responder: Responder,
    /// The request's key, for converting table answers by the response types.
    pub key: Rc<str>,
}

impl UserData for ResponderHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("Response", |lua, this, args: mlua::MultiValue| {
            let shared = shared_of(lua)?;
            let values = shared.response_values(&this.key, args)?;
            Ok(this.responder.respond_values(&values))
        });
        methods.add_method("IsAnswered", |_, this, ()| Ok(this.responder.is_answered()));
    }
}

/// What a hook listener can do besides changing the payload.
#[derive(Default)]
pub struct HookCtx {
    pub handled: Cell<bool>,
    pub cancelled: Cell<bool>,
}

impl UserData for HookCtx {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("Handled", |_, this, ()| {
            this.handled.set(true);
            Ok(())
        });
        methods.add_method("Cancel", |_, this, ()| {
            this.cancelled.set(true);
            Ok(())
        });
    }
}

/// Kept alive by a Lua owner (through an ephemeron table); the hub holds a
/// weak reference, so the owner's collection ends its listeners.
pub struct OwnerToken(pub Rc<()>);

impl UserData for OwnerToken {}
