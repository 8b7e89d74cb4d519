//! Userdata handles scripts hold: objects, worlds, named sources,
//! responders, hook contexts and owner tokens.
//!
//! Handles are plain ids; they compare by id (`__eq`), so two handles of the
//! same object are equal even when they are different userdata.
//!
//! Every method of a handle is added through [`method`] (or
//! [`method_mut`]): called with a dot instead of a colon (`self.World()`),
//! it gets no handle, and says so at the script's line rather than with a
//! conversion error.

use std::cell::Cell;
use std::rc::Rc;

use gantry_host::{ListenerId, ObjectId, Responder, Source, WorldId};
use mlua::{
    AnyUserData, FromLuaMulti, IntoLuaMulti, Lua, MetaMethod, MultiValue, UserData,
    UserDataMethods, Value as LuaValue,
};

use super::shared::{error_here, shared_of};

/// The handle a method is called on, or the dot-for-colon error: `recv`
/// is what the docs call such a handle (`self`, `items`), `name` the method.
fn receiver<T: 'static>(
    lua: &Lua,
    args: &mut MultiValue,
    recv: &str,
    name: &str,
) -> mlua::Result<AnyUserData> {
    match args.pop_front() {
        Some(LuaValue::UserData(ud)) if ud.is::<T>() => Ok(ud),
        _ => Err(error_here(
            lua,
            format!("use {recv}:{name}(), not {recv}.{name}() (a method is called with a colon)"),
        )),
    }
}

/// A method's arguments after the handle, an error naming the method.
fn arguments<A: FromLuaMulti>(
    lua: &Lua,
    args: MultiValue,
    recv: &str,
    name: &str,
) -> mlua::Result<A> {
    A::from_lua_multi(args, lua).map_err(|e| error_here(lua, format!("{recv}:{name}: {e}")))
}

/// Adds method `name` of a handle that the docs call `recv`.
pub(crate) fn method<T, A, R, M>(
    methods: &mut M,
    recv: &'static str,
    name: &'static str,
    f: impl Fn(&Lua, &T, A) -> mlua::Result<R> + 'static,
) where
    T: UserData + 'static,
    A: FromLuaMulti,
    R: IntoLuaMulti,
    M: UserDataMethods<T>,
{
    methods.add_function(name, move |lua, mut args: MultiValue| {
        let this = receiver::<T>(lua, &mut args, recv, name)?;
        let args = arguments(lua, args, recv, name)?;
        let this = this.borrow::<T>()?;
        f(lua, &this, args)
    });
}

/// [`method`] of a method that changes its handle.
pub(crate) fn method_mut<T, A, R, M>(
    methods: &mut M,
    recv: &'static str,
    name: &'static str,
    mut f: impl FnMut(&Lua, &mut T, A) -> mlua::Result<R> + 'static,
) where
    T: UserData + 'static,
    A: FromLuaMulti,
    R: IntoLuaMulti,
    M: UserDataMethods<T>,
{
    methods.add_function_mut(name, move |lua, mut args: MultiValue| {
        let this = receiver::<T>(lua, &mut args, recv, name)?;
        let args = arguments(lua, args, recv, name)?;
        let mut this = this.borrow_mut::<T>()?;
        f(lua, &mut this, args)
    });
}

/// A hub object (`self`, spawned objects, object arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectHandle(pub ObjectId);

impl UserData for ObjectHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        method(methods, "self", "World", |lua, this: &Self, ()| {
            let shared = shared_of(lua)?;
            match shared.hub.world_of(this.0) {
                Some(world) => Ok(Some(WorldHandle(world))),
                None => Ok(None),
            }
        });
        method(methods, "self", "Id", |_, this: &Self, ()| Ok(this.0.get()));
        method(methods, "self", "IsAlive", |lua, this: &Self, ()| {
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
        method(methods, "world", "Id", |_, this: &Self, ()| {
            Ok(this.0.get())
        });
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
        method(methods, "named", "Object", |_, this: &Self, ()| {
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
        method(
            methods,
            "rsp",
            "Response",
            |lua, this: &Self, args: MultiValue| {
                let shared = shared_of(lua)?;
                let values = shared.response_values(&this.key, args)?;
                Ok(this.responder.respond_values(&values))
            },
        );
        method(methods, "rsp", "IsAnswered", |_, this: &Self, ()| {
            Ok(this.responder.is_answered())
        });
    }
}

/// A listener's connection, what listening returns: `conn:Unbind()`
/// removes the listener, `UnbindMessage(key, conn)` too; it prints as its
/// key and id (`Connection(Quest.Start#12)`) and compares equal to any
/// handle of the same listener.
#[derive(Debug, Clone)]
pub struct ConnectionHandle {
    pub key: Rc<str>,
    pub id: ListenerId,
}

impl UserData for ConnectionHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        method(methods, "conn", "Unbind", |lua, this: &Self, ()| {
            Ok(shared_of(lua)?.hub.unlisten_key(&this.key, this.id))
        });
        method(methods, "conn", "Id", |_, this: &Self, ()| {
            Ok(this.id.get() as i64)
        });
        methods.add_meta_method(MetaMethod::Eq, |_, this, other: AnyUserData| {
            Ok(other
                .borrow::<ConnectionHandle>()
                .is_ok_and(|o| o.id == this.id))
        });
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format!("Connection({}#{})", this.key, this.id.get()))
        });
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
        method(methods, "ctx", "Handled", |_, this: &Self, ()| {
            this.handled.set(true);
            Ok(())
        });
        method(methods, "ctx", "Cancel", |_, this: &Self, ()| {
            this.cancelled.set(true);
            Ok(())
        });
    }
}

/// Kept alive by a Lua owner (through an ephemeron table); the hub holds a
/// weak reference, so the owner's collection ends its listeners.
pub struct OwnerToken(pub Rc<()>);

impl UserData for OwnerToken {}
