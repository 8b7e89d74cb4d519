//! Lua functions as hub listeners: message listeners (with a responder for
//! requests) and hook listeners, and how their owners keep them alive.
//!
//! Owners:
//! - `nil` (the calling script's object) or an object handle: the hub owns
//!   the listener by object; destroying the object drops it.
//! - a table (or other userdata): the function is kept in an ephemeron table
//!   under the owner, next to an [`OwnerToken`] the hub watches weakly. The
//!   hub's callback holds only a slot number and finds the function through
//!   a weak-valued table. Nothing outside the owner keeps the function (and
//!   so whatever it captures, the owner included) alive: once the owner is
//!   collected, the token dies and the hub drops the listener.

use std::rc::{Rc, Weak};

use gantry_host::hook::HookCall;
use gantry_host::listener::{HookFn, MessageFn};
use gantry_host::{ListenerError, Message, Owner, Type, Value};
use mlua::{AnyUserData, Function, Lua, MultiValue, Table, Value as LuaValue};

use gantry_host::face::options::Delivery;
use gantry_host::face::{STRUCT_FIELD, takes_too_many};

use super::convert::{from_value, to_value};
use super::handles::{HookCtx, NamedHandle, ObjectHandle, OwnerToken, ResponderHandle};
use super::shared::Shared;

/// How the hub's callback reaches the Lua function.
#[derive(Clone)]
pub(crate) enum Target {
    /// Held directly (object owners: dropped with the object).
    Strong(Function),
    /// Found by slot in the weak-valued table (Lua owners).
    Slot(i64),
}

impl Target {
    fn function(&self, shared: &Shared) -> Option<Function> {
        match self {
            Target::Strong(f) => Some(f.clone()),
            Target::Slot(slot) => shared.owned_fns.raw_get::<Option<Function>>(*slot).ok()?,
        }
    }
}

/// Resolves a listen call's owner into the hub's owner and the target.
pub(crate) fn resolve_owner(
    shared: &Shared,
    lua: &Lua,
    default_object: gantry_host::ObjectId,
    owner: &LuaValue,
    f: Function,
) -> Result<(Owner, Target), String> {
    match owner {
        LuaValue::Nil => Ok((Owner::Object(default_object), Target::Strong(f))),
        LuaValue::UserData(ud) if ud.is::<ObjectHandle>() => {
            let id = ud.borrow::<ObjectHandle>().map_err(|e| e.to_string())?.0;
            Ok((Owner::Object(id), Target::Strong(f)))
        }
        // A named source lives as long as its object: so does what it owns.
        LuaValue::UserData(ud) if ud.is::<NamedHandle>() => {
            let source = ud.borrow::<NamedHandle>().map_err(|e| e.to_string())?.0;
            let id = source
                .object()
                .ok_or("a named source without an object cannot own a listener")?;
            Ok((Owner::Object(id), Target::Strong(f)))
        }
        LuaValue::Table(_) | LuaValue::UserData(_) => {
            let entry = owner_entry(shared, lua, owner).map_err(|e| e.to_string())?;
            let token: AnyUserData = entry.raw_get("token").map_err(|e| e.to_string())?;
            let token = token.borrow::<OwnerToken>().map_err(|e| e.to_string())?;
            let slot = shared.next_slot();
            entry.raw_set(slot, &f).map_err(|e| e.to_string())?;
            shared
                .owned_fns
                .raw_set(slot, f)
                .map_err(|e| e.to_string())?;
            Ok((Owner::of(&token.0), Target::Slot(slot)))
        }
        other => Err(format!(
            "an owner must be nil, an object, a table or a userdata, got a {}",
            other.type_name()
        )),
    }
}

/// The hub owner a Lua value stands for, if it owns anything (for unbind).
pub(crate) fn existing_owner(shared: &Shared, owner: &LuaValue) -> Option<Owner> {
    if let LuaValue::UserData(ud) = owner {
        if let Ok(o) = ud.borrow::<ObjectHandle>() {
            return Some(Owner::Object(o.0));
        }
        if let Ok(named) = ud.borrow::<NamedHandle>() {
            return named.0.object().map(Owner::Object);
        }
    }
    let entry: Table = shared.owned.raw_get(owner.clone()).ok()?;
    let token: AnyUserData = entry.raw_get("token").ok()?;
    let token = token.borrow::<OwnerToken>().ok()?;
    Some(Owner::of(&token.0))
}

fn owner_entry(shared: &Shared, lua: &Lua, owner: &LuaValue) -> mlua::Result<Table> {
    if let Some(entry) = shared.owned.raw_get::<Option<Table>>(owner.clone())? {
        return Ok(entry);
    }
    let entry = lua.create_table()?;
    entry.raw_set("token", OwnerToken(Rc::new(())))?;
    shared.owned.raw_set(owner.clone(), &entry)?;
    Ok(entry)
}

/// Runs a Lua listener for the hub: finds its function (nothing to do once
/// the runtime or the owner is gone), refuses runaway nesting, and turns a
/// Lua error into the hub's listener error. Every listener form calls
/// through here, so they all fail and nest the same way.
pub(crate) fn run_listener(
    weak: &Weak<Shared>,
    target: &Target,
    call: impl FnOnce(&Shared, &Lua, &Function) -> mlua::Result<()>,
) -> Result<(), ListenerError> {
    let Some(shared) = weak.upgrade() else {
        return Ok(());
    };
    let Some(lua) = shared.lua.try_upgrade() else {
        return Ok(());
    };
    let Some(f) = target.function(&shared) else {
        // The owner was collected; the hub drops this listener.
        return Ok(());
    };
    if shared.too_deep() {
        return Err(nesting_error());
    }
    shared.guarded(|| call(&shared, &lua, &f)).map_err(|e| {
        // Stopped by the budget: that was this listener's stop.
        shared.budget.forgive();
        ListenerError::new(shared.error_text(&e))
    })
}

/// How many arguments a listener function can take, read once from its
/// debug info when it is registered (a vararg or C function: any number).
#[derive(Clone, Copy)]
pub(crate) struct Takes(usize);

impl Takes {
    /// A function declaring `params` parameters (and a rest, `vararg`).
    pub fn new(params: u8, vararg: bool) -> Takes {
        Takes(if vararg {
            usize::MAX
        } else {
            usize::from(params)
        })
    }

    /// The parameters the function takes beyond what a message carries
    /// (`args`, and a request's responder): the arity rule, at the first
    /// call of a listener registered before its key was known.
    #[inline]
    fn beyond(self, args: usize, responder: bool) -> Option<usize> {
        (self.0 != usize::MAX && self.0 > args + usize::from(responder)).then_some(self.0)
    }

    /// Does a function called with `args` arguments have a parameter left
    /// for a responder?
    #[inline]
    fn responder_after(self, args: usize) -> bool {
        self.0 > args
    }

    /// Makes room for a responder in the function's last parameter,
    /// dropping the values beyond the others (a function of none has no
    /// room; one of any number takes it after every value).
    fn room_for_responder(self, values: &mut MultiValue) -> bool {
        if self.0 == usize::MAX {
            return true;
        }
        let Some(before) = self.0.checked_sub(1) else {
            return false;
        };
        values.truncate(before);
        true
    }
}

/// The hub callback of a Lua message listener. A request's responder is
/// passed after the arguments only when the function has a parameter left
/// for it (`takes`): one that cannot take it holds no responder, so a
/// request it leaves unanswered is reported when the send ends (as the
/// other faces do), not whenever the collector frees a responder nobody
/// could use. A listener that said it responds (`delivery.respond`) gets it
/// in its last parameter whatever the request carries.
pub(crate) fn message_callback(
    shared: &Rc<Shared>,
    target: Target,
    takes: Takes,
    delivery: Delivery,
) -> Rc<MessageFn> {
    let weak: Weak<Shared> = Rc::downgrade(shared);
    let key_first = usize::from(delivery.key);
    Rc::new(move |m: &Message<'_>| -> Result<(), ListenerError> {
        let carries = m.args.len() + key_first;
        if let Some(takes) = takes.beyond(carries, m.responder.is_some()) {
            return Err(ListenerError::new(takes_too_many(
                takes - key_first,
                &m.key_name(),
                m.args.len(),
                m.responder.is_some(),
            )));
        }
        run_listener(&weak, &target, |_, lua, f| {
            if delivery.key || (delivery.respond && m.responder.is_some()) {
                call_delivered(lua, f, m, takes, delivery)
            } else {
                call_with_message(lua, f, m, takes)
            }
        })
    })
}

/// Calls a listener as its `delivery` asks: the sent key first if it asked
/// for it, then the message's values, then a request's responder — in the
/// last declared parameter for a listener that said it responds (the
/// values it has no room for dropped), otherwise after every value when it
/// has room for it.
fn call_delivered(
    lua: &Lua,
    f: &Function,
    m: &Message<'_>,
    takes: Takes,
    delivery: Delivery,
) -> mlua::Result<()> {
    let mut all = MultiValue::with_capacity(m.args.len() + 2);
    if delivery.key {
        all.push_back(LuaValue::String(lua.create_string(&*m.key_name())?));
    }
    for a in m.args {
        all.push_back(from_value(lua, a)?);
    }
    if let Some(responder) = m.responder {
        let room = if delivery.respond {
            takes.room_for_responder(&mut all)
        } else {
            takes.responder_after(all.len())
        };
        if room {
            all.push_back(LuaValue::UserData(lua.create_userdata(
                ResponderHandle {
                    responder: responder.clone(),
                    key: m.key_name(),
                },
            )?));
        }
    }
    f.call::<()>(all)
}

#[inline]
fn call_with_message(lua: &Lua, f: &Function, m: &Message<'_>, takes: Takes) -> mlua::Result<()> {
    let v = |value: &Value| from_value(lua, value);
    match (m.args, m.responder) {
        ([], None) => f.call::<()>(()),
        ([a], None) => f.call::<()>(v(a)?),
        ([a, b], None) => f.call::<()>((v(a)?, v(b)?)),
        ([a, b, c], None) => f.call::<()>((v(a)?, v(b)?, v(c)?)),
        (args, responder) => {
            let mut all = MultiValue::with_capacity(args.len() + 1);
            for a in args {
                all.push_back(v(a)?);
            }
            if let Some(responder) = responder
                && takes.responder_after(args.len())
            {
                all.push_back(LuaValue::UserData(lua.create_userdata(
                    ResponderHandle {
                        responder: responder.clone(),
                        key: m.key_name(),
                    },
                )?));
            }
            f.call::<()>(all)
        }
    }
}

/// The hub callback of a Lua hook listener: `fn(payload, ctx)`. A table
/// payload is changed in place and read back; a function that returns a
/// value replaces the payload with it.
pub(crate) fn hook_callback(shared: &Rc<Shared>, target: Target) -> Rc<HookFn> {
    let weak: Weak<Shared> = Rc::downgrade(shared);
    Rc::new(
        move |call: &mut HookCall<'_>| -> Result<(), ListenerError> {
            run_listener(&weak, &target, |shared, lua, f| {
                let payload = from_value(lua, call.payload)?;
                let ctx = lua.create_userdata(HookCtx::default())?;
                let returned: LuaValue = f.call((payload.clone(), &ctx))?;
                let expected = match &*call.payload {
                    Value::Struct(s) => Some(Type::Struct(s.name.clone())),
                    _ => None,
                };
                let changed = if returned.is_nil() { payload } else { returned };
                if let LuaValue::Table(t) = &changed {
                    // Keep the struct's name even if the listener dropped it.
                    if t.raw_get::<LuaValue>(STRUCT_FIELD)?.is_nil()
                        && let Some(Type::Struct(name)) = &expected
                    {
                        t.raw_set(STRUCT_FIELD, &**name)?;
                    }
                }
                let converted = {
                    let table = shared.hub.table();
                    to_value(&changed, expected.as_ref(), &table.structs)
                };
                *call.payload =
                    converted.map_err(|e| mlua::Error::runtime(format!("hook payload: {e}")))?;
                let ctx = ctx.borrow::<HookCtx>()?;
                if ctx.handled.get() {
                    call.handled();
                }
                if ctx.cancelled.get() {
                    call.cancel();
                }
                Ok(())
            })
        },
    )
}

fn nesting_error() -> ListenerError {
    ListenerError::new(format!(
        "not called: Lua handlers nested {} deep (a listener sending what it listens to?)",
        super::shared::MAX_NESTING
    ))
}
