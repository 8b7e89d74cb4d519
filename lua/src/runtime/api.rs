//! The script API: one core per function, reached two ways —
//! the generic global (`NotifyObjectMessage(obj, "Key", ...)`, key resolved
//! and call site recorded per call) and the baked function the loader
//! rewrites literal-key calls into (key resolved and site recorded once, at
//! load). Both run the same core, so they behave the same.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::hook::HookOptions;
use gantry_host::{
    ApiFunction, Caller, Hub, Key, Language, ListenOptions, ListenSpec, ListenerId, ListenerParams,
    Match, ObjectId, Reply, Role, Site, Source, Type, Value, WorldId,
};
use mlua::{Function, Lua, MultiValue, Table, Value as LuaValue, thread::ThreadStatus};
use rustc_hash::FxHashSet;

use super::collection;
use super::convert::{from_value, object_source_of_arg, to_value, world_of_arg};
use super::error::ScriptError;
use super::listen::{existing_owner, hook_callback, message_callback, resolve_owner};
use super::shared::{Shared, caller_place, describe_value, error_here, error_text, whole_number};

/// One loaded chunk (a script or a module it requires): its file and object.
pub(crate) struct Ctx {
    pub file: Rc<str>,
    pub object: ObjectId,
    pub world: WorldId,
    pub shared: Rc<Shared>,
    /// (key, line, role) already recorded by generic calls of this chunk.
    recorded: RefCell<FxHashSet<(Key, u32, Role)>>,
}

impl Ctx {
    pub fn new(file: Rc<str>, object: ObjectId, world: WorldId, shared: Rc<Shared>) -> Self {
        Self {
            file,
            object,
            world,
            shared,
            recorded: RefCell::new(FxHashSet::default()),
        }
    }

    fn hub(&self) -> &Hub {
        &self.shared.hub
    }

    /// The site of the Lua line calling the current API function.
    fn site_here(&self, lua: &Lua, role: Role) -> Site {
        let (file, line) = caller_place(lua).unwrap_or_else(|| (self.file.to_string(), 0));
        Site::new(file, line, Language::Lua, role)
    }
}

/// How a call names its key.
#[derive(Clone)]
pub(crate) struct KeyRef {
    pub key: Key,
    pub text: Rc<str>,
}

/// Whether a call site still has to be recorded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sites {
    /// Generic call: record this line once.
    PerCall,
    /// Baked call: recorded at load.
    AtLoad,
}

fn runtime_err(lua: &Lua, message: impl std::fmt::Display) -> mlua::Error {
    error_here(lua, message)
}

/// Takes the source argument of functions that have one.
fn take_source(
    ctx: &Ctx,
    lua: &Lua,
    function: ApiFunction,
    args: &mut std::collections::VecDeque<LuaValue>,
) -> mlua::Result<Source> {
    if function.source_index().is_none() {
        return Ok(Source::Global);
    }
    let arg = args.pop_front().unwrap_or(LuaValue::Nil);
    let world_fn = matches!(
        function,
        ApiFunction::NotifyWorldMessage | ApiFunction::ListenWorldMessage
    );
    if world_fn {
        return world_of_arg(&arg, ctx.hub())
            .map(Source::World)
            .ok_or_else(|| {
                runtime_err(
                    lua,
                    format!(
                        "{}: argument 1 must be a world (or an object), got a {}",
                        function,
                        arg.type_name()
                    ),
                )
            });
    }
    object_source_of_arg(&arg).ok_or_else(|| {
        runtime_err(
            lua,
            format!(
                "{}: argument 1 must be an object (a world, or a GMP.Named source), got a {}",
                function,
                arg.type_name()
            ),
        )
    })
}

/// The core of every keyed API function. `args` are the call's arguments
/// without the key.
pub(crate) fn call_api(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    function: ApiFunction,
    key: &KeyRef,
    args: MultiValue,
    sites: Sites,
) -> mlua::Result<MultiValue> {
    let mut args = args;
    let source = take_source(ctx, lua, function, &mut args)?;
    let hub = ctx.hub();
    // Generic calls record their line once, beside the dispatch, so that
    // generic and baked calls hand the hub the same caller (and a mismatch
    // reads the same either way; the Lua error names the line).
    let send_site = |role: Role| -> Option<Site> {
        if sites == Sites::PerCall {
            let site = ctx.site_here(lua, role);
            if ctx.recorded.borrow_mut().insert((key.key, site.line, role)) {
                hub.record_site(&key.text, site);
            }
        }
        None
    };
    // Where this call is, asked only by a report (a refused send, an
    // unanswered request): the sites themselves are recorded above or at load.
    let place = || Some(ctx.site_here(lua, Role::Send));
    let located = Caller::Located(&place);
    let fail = |e: gantry_host::HubError| runtime_err(lua, e);
    match function {
        ApiFunction::NotifyMessage
        | ApiFunction::NotifyWorldMessage
        | ApiFunction::NotifyObjectMessage => {
            let mut values = convert_args(ctx, lua, key, args.make_contiguous())?;
            let site = send_site(Role::Send);
            let caller = site.as_ref().map_or(located, Caller::Script);
            hub.send_values(key.key, source, &mut values, caller)
                .map_err(fail)?;
            Ok(MultiValue::new())
        }
        ApiFunction::SendObjectMessage => {
            let reply = match args.back() {
                Some(LuaValue::Function(_)) => match args.pop_back() {
                    Some(LuaValue::Function(f)) => Some(f),
                    _ => None,
                },
                _ => None,
            };
            let mut values = convert_args(ctx, lua, key, args.make_contiguous())?;
            let site = send_site(Role::Send);
            let caller = site.as_ref().map_or(located, Caller::Script);
            match reply {
                None => {
                    hub.send_values(key.key, source, &mut values, caller)
                        .map_err(fail)?;
                }
                Some(reply) => {
                    let on_reply = reply_to_function(ctx, reply);
                    hub.request_values(key.key, source, &mut values, caller, on_reply)
                        .map_err(fail)?;
                }
            }
            Ok(MultiValue::new())
        }
        ApiFunction::Request => {
            request_in_coroutine(ctx, lua, key, source, args, send_site, located)
        }
        ApiFunction::StoreObjectMessage | ApiFunction::OnceObjectMessage => {
            let values = convert_args(ctx, lua, key, args.make_contiguous())?.into_vec();
            let site = send_site(Role::Send);
            let caller = site.as_ref().map_or(located, Caller::Script);
            let once = function == ApiFunction::OnceObjectMessage;
            hub.store_values(key.key, source, values, once, caller)
                .map_err(fail)?;
            Ok(MultiValue::new())
        }
        ApiFunction::RemoveStoredObjectMessage => {
            if let Some(site) = send_site(Role::Send) {
                hub.record_site(&key.text, site);
            }
            let removed = hub.remove_stored(key.key, source);
            Ok(MultiValue::from_vec(vec![LuaValue::Boolean(removed)]))
        }
        ApiFunction::ListenMessage
        | ApiFunction::ListenWorldMessage
        | ApiFunction::ListenObjectMessage => {
            let owner = args.pop_front().unwrap_or(LuaValue::Nil);
            let f = match args.pop_front() {
                Some(LuaValue::Function(f)) => f,
                other => {
                    return Err(runtime_err(
                        lua,
                        format!(
                            "{function} `{}`: the listener must be a function, got a {}",
                            key.text,
                            other.as_ref().map_or("nil", LuaValue::type_name)
                        ),
                    ));
                }
            };
            let opts = args.pop_front();
            let id = listen(ctx, lua, function, key, source, &owner, f, opts.as_ref())?;
            Ok(MultiValue::from_vec(vec![LuaValue::Integer(
                id.get() as i64
            )]))
        }
        ApiFunction::UnbindMessage => {
            let target = args.pop_front().unwrap_or(LuaValue::Nil);
            let removed = match &target {
                LuaValue::Integer(id) if *id > 0 => {
                    usize::from(hub.unlisten(ListenerId::from_raw(*id as u64)))
                }
                LuaValue::Nil => {
                    return Err(runtime_err(
                        lua,
                        format!(
                            "UnbindMessage `{}`: give a listener id or an owner",
                            key.text
                        ),
                    ));
                }
                owner => match existing_owner(&ctx.shared, owner) {
                    Some(owner) => hub.unlisten_owner_on(&key.text, &owner),
                    None => 0,
                },
            };
            Ok(MultiValue::from_vec(vec![LuaValue::Integer(
                removed as i64,
            )]))
        }
        ApiFunction::ListenHook => {
            let owner = args.pop_front().unwrap_or(LuaValue::Nil);
            let Some(LuaValue::Function(f)) = args.pop_front() else {
                return Err(runtime_err(
                    lua,
                    format!("ListenHook `{}`: the listener must be a function", key.text),
                ));
            };
            let opts = args.pop_front();
            // Options first: a refused call leaves no trace under its owner.
            let options = hook_options(lua, key, opts.as_ref())?;
            let (owner, target) = resolve_owner(&ctx.shared, lua, ctx.object, &owner, f)
                .map_err(|e| runtime_err(lua, format!("ListenHook `{}`: {e}", key.text)))?;
            let options = options.owner(owner);
            let site = ctx.site_here(lua, Role::Listen);
            let callback = hook_callback(&ctx.shared, target);
            let id = hub
                .listen_hook_raw(&key.text, options, Some(site), callback)
                .map_err(fail)?;
            Ok(MultiValue::from_vec(vec![LuaValue::Integer(
                id.get() as i64
            )]))
        }
        ApiFunction::RunHook => {
            if let Some(site) = send_site(Role::Send) {
                hub.record_site(&key.text, site);
            }
            let payload = args.pop_front().unwrap_or(LuaValue::Nil);
            let expected: Option<Type> = match &payload {
                LuaValue::Table(_) => ctx.shared.param_types(&key.text).into_iter().next(),
                _ => None,
            };
            let converted = {
                let table = hub.table();
                to_value(&payload, expected.as_ref(), &table.structs)
            };
            let mut value = converted
                .map_err(|e| runtime_err(lua, format!("RunHook `{}` payload: {e}", key.text)))?;
            let result = hub.run_hook_key(key.key, &mut value);
            // "The payload itself (not a copy)": the caller's table reads
            // the listeners' changes back (nothing ran: nothing changed).
            if result.ran > 0
                && let LuaValue::Table(mine) = &payload
            {
                let converted_as = match &expected {
                    Some(Type::Struct(name)) => Some(&**name),
                    _ => None,
                };
                write_back(lua, mine, &value, converted_as)?;
            }
            let summary = lua.create_table()?;
            summary.raw_set("ran", result.ran)?;
            summary.raw_set("handled", result.handled)?;
            summary.raw_set("cancelled", result.cancelled)?;
            Ok(MultiValue::from_vec(vec![
                LuaValue::Table(summary),
                from_value(lua, &value)?,
            ]))
        }
        ApiFunction::ListenRowMessage => {
            let owner = args.pop_front().unwrap_or(LuaValue::Nil);
            let index = args.pop_front();
            let index = match index.as_ref().and_then(whole_number) {
                Some(index) => index,
                None => {
                    return Err(runtime_err(
                        lua,
                        format!(
                            "ListenRowMessage `{}`: argument 4 must be a row number (or GMP.AllRows), got a {}",
                            key.text,
                            index.as_ref().map_or("nil", LuaValue::type_name)
                        ),
                    ));
                }
            };
            let index = collection::hub_index(index)
                .map_err(|e| runtime_err(lua, format!("ListenRowMessage `{}`: {e}", key.text)))?;
            let Some(LuaValue::Function(f)) = args.pop_front() else {
                return Err(runtime_err(
                    lua,
                    format!(
                        "ListenRowMessage `{}`: the listener must be a function",
                        key.text
                    ),
                ));
            };
            let opts = args.pop_front();
            let (owner, target) = resolve_owner(&ctx.shared, lua, ctx.object, &owner, f)
                .map_err(|e| runtime_err(lua, format!("ListenRowMessage `{}`: {e}", key.text)))?;
            let options = listen_options(lua, function, key, owner, opts.as_ref())?;
            let site = ctx.site_here(lua, Role::Listen);
            let callback = collection::row_callback(&ctx.shared, target);
            let id = hub
                .listen_rows_raw(&key.text, source, index, options, Some(site), callback)
                .map_err(fail)?;
            Ok(MultiValue::from_vec(vec![LuaValue::Integer(
                id.get() as i64
            )]))
        }
        ApiFunction::StoredArray => {
            let site = ctx.site_here(lua, Role::Send);
            let writer = hub.stored_array_owned(key.key, source).at_site(site);
            let writer = collection::LuaStoredArray::new(
                writer,
                key.text.clone(),
                ctx.file.clone(),
                &ctx.shared,
            );
            Ok(MultiValue::from_vec(vec![LuaValue::UserData(
                lua.create_userdata(writer)?,
            )]))
        }
    }
}

/// Writes a hook's resulting `value` back into the caller's payload table
/// `mine`, in place: fields (or elements) set, those the listeners removed
/// cleared, its metatable kept, and nested tables updated in place too, so
/// that what the caller holds of the payload reads the changes.
/// A payload a listener replaced by a scalar leaves the table alone (the
/// second result of `RunHook` carries it). `converted_as` is the struct an
/// unnamed table was taken for (the key's declared payload type).
fn write_back(
    lua: &Lua,
    mine: &Table,
    value: &Value,
    converted_as: Option<&str>,
) -> mlua::Result<()> {
    // Tables already written: one met again (a payload holding the same
    // table twice) gets a fresh table rather than a second, clashing write.
    let mut written: Vec<*const std::ffi::c_void> = Vec::new();
    write_table(lua, mine, value, Some(converted_as), &mut written, 0)
}

/// Deepest nesting written back in place; deeper tables are replaced.
const MAX_WRITE_DEPTH: usize = 32;

/// [`write_back`] of one table; `converted_as` as there, `None` for nested
/// tables (not known: an unnamed one is left unnamed).
fn write_table(
    lua: &Lua,
    mine: &Table,
    value: &Value,
    converted_as: Option<Option<&str>>,
    written: &mut Vec<*const std::ffi::c_void>,
    depth: usize,
) -> mlua::Result<()> {
    use super::convert::STRUCT_FIELD;
    if !matches!(value, Value::Struct(_) | Value::Array(_)) {
        return Ok(());
    }
    written.push(mine.to_pointer());
    // What the table holds now that the result does not: cleared.
    let mut stale: Vec<LuaValue> = Vec::new();
    for pair in mine.pairs::<LuaValue, LuaValue>() {
        let (k, _) = pair?;
        let keep = match (value, &k) {
            (Value::Struct(s), LuaValue::String(name)) => {
                let name = name.as_bytes();
                // The table's own `__struct` stays (updated below).
                &*name == STRUCT_FIELD.as_bytes()
                    || s.fields.iter().any(|(f, _)| f.as_bytes() == &*name)
            }
            (Value::Array(items), LuaValue::Integer(i)) => *i >= 1 && (*i as usize) <= items.len(),
            _ => false,
        };
        if !keep {
            stale.push(k);
        }
    }
    for k in stale {
        mine.raw_set(k, LuaValue::Nil)?;
    }
    let mut set = |k: LuaValue, v: &Value| -> mlua::Result<()> {
        let nested = matches!(v, Value::Struct(_) | Value::Array(_));
        if nested
            && depth + 1 < MAX_WRITE_DEPTH
            && let LuaValue::Table(inner) = mine.raw_get::<LuaValue>(k.clone())?
            && !written.contains(&inner.to_pointer())
        {
            return write_table(lua, &inner, v, None, written, depth + 1);
        }
        mine.raw_set(k, from_value(lua, v)?)
    };
    match value {
        Value::Struct(s) => {
            for (field, v) in &s.fields {
                set(LuaValue::String(lua.create_string(&**field)?), v)?;
            }
            // The struct's name: the table's own `__struct` follows it; an
            // unnamed table is named only if a listener made it another
            // struct than the one it was taken for.
            let named: LuaValue = mine.raw_get(STRUCT_FIELD)?;
            let renamed = match &named {
                LuaValue::Nil => converted_as.is_some_and(|c| c != Some(&*s.name)),
                LuaValue::String(n) => n.as_bytes().as_ref() != s.name.as_bytes(),
                _ => true,
            };
            if renamed {
                mine.raw_set(STRUCT_FIELD, &*s.name)?;
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                set(LuaValue::Integer(i as i64 + 1), v)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn convert_args(
    ctx: &Ctx,
    lua: &Lua,
    key: &KeyRef,
    args: &[LuaValue],
) -> mlua::Result<super::shared::Args> {
    ctx.shared
        .values_for(key.key, args)
        .map_err(|e| runtime_err(lua, format!("`{}` {e}", key.text)))
}

/// The `match` option of `function`'s options table `opts` on `key`.
fn match_option(
    lua: &Lua,
    function: ApiFunction,
    key: &KeyRef,
    opts: &Table,
) -> mlua::Result<Match> {
    let value: LuaValue = opts.get("match")?;
    match &value {
        LuaValue::Nil => return Ok(Match::Exact),
        LuaValue::String(s) => match s.as_bytes().as_ref() {
            b"exact" => return Ok(Match::Exact),
            b"partial" => return Ok(Match::Partial),
            _ => {}
        },
        _ => {}
    }
    Err(runtime_err(
        lua,
        format!(
            "{function} `{}`: option `match` must be \"exact\" or \"partial\", got {}",
            key.text,
            describe_value(&value)
        ),
    ))
}

/// An integer option (`times`, `order`, `priority`) of `function`'s options
/// table `opts` on `key`: a 32-bit integer (an integral float counts).
fn int_option(
    lua: &Lua,
    function: ApiFunction,
    key: &KeyRef,
    opts: &Table,
    name: &str,
) -> mlua::Result<Option<i32>> {
    let value: LuaValue = opts.get(name)?;
    if value.is_nil() {
        return Ok(None);
    }
    let n = whole_number(&value).and_then(|i| i32::try_from(i).ok());
    n.map(Some).ok_or_else(|| {
        runtime_err(
            lua,
            format!(
                "{function} `{}`: option `{name}` must be a 32-bit integer, got {}",
                key.text,
                describe_value(&value)
            ),
        )
    })
}

#[allow(clippy::too_many_arguments)]
fn listen(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    function: ApiFunction,
    key: &KeyRef,
    scope: Source,
    owner: &LuaValue,
    f: Function,
    opts: Option<&LuaValue>,
) -> mlua::Result<ListenerId> {
    // What the function declares, asked once here rather than per call.
    let info = f.info();
    // A whole-table listener that takes one parameter more than a
    // collection message carries gets the update after the table.
    let params = ctx.shared.param_types(&key.text);
    let wants_update = collection::element_type(&params).is_some() && info.num_params == 2;
    // On a key that carries nothing known yet, a function of two may be
    // either: what is sent decides, dispatch by dispatch.
    let undecided = params.is_empty() && info.num_params == 2 && !info.is_vararg;
    let takes = super::listen::Takes::of(&info);
    let held = f.clone();
    let (owner, target) = resolve_owner(&ctx.shared, lua, ctx.object, owner, f)
        .map_err(|e| runtime_err(lua, format!("{function} `{}`: {e}", key.text)))?;
    // The fast lane may call a function the hub's callback holds; one kept
    // for a Lua-value owner is held by nothing else, so it goes the slow way.
    let lane_may_call = matches!(target, super::listen::Target::Strong(_));
    let options = listen_options(lua, function, key, owner, opts)?;
    let site = ctx.site_here(lua, Role::Listen);
    if wants_update {
        let callback = collection::table_callback(&ctx.shared, target);
        return ctx
            .hub()
            .listen_table_raw(&key.text, scope, options, Some(site), callback)
            .map_err(|e| runtime_err(lua, e));
    }
    if undecided {
        let table = collection::table_callback(&ctx.shared, target.clone());
        let message = message_callback(&ctx.shared, target, takes);
        let id = ctx
            .hub()
            .listen_table_or_message_raw(&key.text, scope, options, Some(site), table, message)
            .map_err(|e| runtime_err(lua, e))?;
        // Once its key turns out to carry no table, the lane calls it as
        // any message listener.
        if lane_may_call {
            ctx.shared.fast.remember(id, &held)?;
        }
        return Ok(id);
    }
    let callback = message_callback(&ctx.shared, target, takes);
    let spec = ListenSpec::message(scope, options, ListenerParams::Dynamic, callback)
        .site(site)
        .with_responder();
    let id = ctx
        .hub()
        .listen_raw(&key.text, spec)
        .map_err(|e| runtime_err(lua, e))?;
    if lane_may_call {
        ctx.shared.fast.remember(id, &held)?;
    }
    Ok(id)
}

/// `{priority=, match=}` of a `ListenHook` call (`nil` or absent: the
/// defaults); anything but a table is refused, as a message listen's
/// options are, naming the key.
fn hook_options(lua: &Lua, key: &KeyRef, opts: Option<&LuaValue>) -> mlua::Result<HookOptions> {
    let mut options = HookOptions::new();
    match opts {
        None | Some(LuaValue::Nil) => {}
        Some(LuaValue::Table(t)) => {
            let function = ApiFunction::ListenHook;
            if let Some(priority) = int_option(lua, function, key, t, "priority")? {
                options = options.priority(priority);
            }
            options.matching = match_option(lua, function, key, t)?;
        }
        Some(other) => {
            return Err(runtime_err(
                lua,
                format!(
                    "ListenHook `{}`: options must be a table {{priority=, match=}}, got {}",
                    key.text,
                    describe_value(other)
                ),
            ));
        }
    }
    Ok(options)
}

/// `{times=, order=, match=}` of a listen call.
fn listen_options(
    lua: &Lua,
    function: ApiFunction,
    key: &KeyRef,
    owner: gantry_host::Owner,
    opts: Option<&LuaValue>,
) -> mlua::Result<ListenOptions> {
    let mut options = ListenOptions::new().owner(owner);
    match opts {
        None | Some(LuaValue::Nil) => {}
        Some(LuaValue::Table(t)) => {
            if let Some(times) = int_option(lua, function, key, t, "times")? {
                options = options.times(times);
            }
            if let Some(order) = int_option(lua, function, key, t, "order")? {
                options = options.order(order);
            }
            options = options.matching(match_option(lua, function, key, t)?);
        }
        Some(other) => {
            return Err(runtime_err(
                lua,
                format!(
                    "{function} `{}`: options must be a table {{times=, order=, match=}}, got {}",
                    key.text,
                    describe_value(other)
                ),
            ));
        }
    }
    Ok(options)
}

/// A request's reply, delivered to a Lua function.
fn reply_to_function(ctx: &Rc<Ctx>, reply: Function) -> Box<dyn FnOnce(Reply<'_>)> {
    let shared = Rc::downgrade(&ctx.shared);
    let file = ctx.file.clone();
    Box::new(move |answer: Reply<'_>| {
        let Reply::Answer(values) = answer else {
            // The hub reports unanswered requests.
            return;
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let Some(lua) = shared.lua.try_upgrade() else {
            return;
        };
        let result = shared.guarded(|| -> mlua::Result<()> {
            let args = values
                .iter()
                .map(|v| from_value(&lua, v))
                .collect::<mlua::Result<MultiValue>>()?;
            reply.call::<()>(args)
        });
        if let Err(e) = result {
            shared.report(ScriptError::from_message(&file, error_text(&e)));
        }
    })
}

/// `GMP.Request(obj, key, ...)` inside a coroutine: sends the request and
/// returns `true, answer...` when it was answered during the send, or
/// `false` — the Lua side then yields, and the answer resumes the coroutine.
fn request_in_coroutine(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    key: &KeyRef,
    source: Source,
    mut args: MultiValue,
    send_site: impl Fn(Role) -> Option<Site>,
    located: Caller<'_>,
) -> mlua::Result<MultiValue> {
    // The Lua side checked that this runs in a coroutine that can yield.
    let thread = lua.current_thread();
    let mut values = convert_args(ctx, lua, key, args.make_contiguous())?;
    let site = send_site(Role::Send);
    let caller = site.as_ref().map_or(located, Caller::Script);
    // Answered during the send: kept here and returned directly.
    let early: Rc<RefCell<Option<Option<Vec<Value>>>>> = Rc::new(RefCell::new(None));
    let sent = Rc::new(std::cell::Cell::new(false));
    let shared = Rc::downgrade(&ctx.shared);
    let file = ctx.file.clone();
    let on_reply = {
        let early = early.clone();
        let sent = sent.clone();
        Box::new(move |answer: Reply<'_>| {
            let values = match answer {
                Reply::Answer(values) => Some(values.to_vec()),
                Reply::Unanswered => None,
            };
            if !sent.get() {
                *early.borrow_mut() = Some(values);
                return;
            }
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let Some(lua) = shared.lua.try_upgrade() else {
                return;
            };
            if thread.status() != ThreadStatus::Resumable {
                return;
            }
            let result = shared.guarded(|| -> mlua::Result<()> {
                let args = match &values {
                    Some(values) => values
                        .iter()
                        .map(|v| from_value(&lua, v))
                        .collect::<mlua::Result<MultiValue>>()?,
                    None => MultiValue::new(),
                };
                shared.fast.blocked(|| thread.resume::<()>(args))
            });
            if let Err(e) = result {
                shared.report(ScriptError::from_message(&file, error_text(&e)));
            }
        })
    };
    let result = ctx
        .hub()
        .request_values(key.key, source, &mut values, caller, on_reply);
    sent.set(true);
    result.map_err(|e| runtime_err(lua, e))?;
    let answered = early.borrow_mut().take();
    match answered {
        Some(values) => {
            let mut out = MultiValue::new();
            out.push_back(LuaValue::Boolean(true));
            for v in values.unwrap_or_default() {
                out.push_back(from_value(lua, &v)?);
            }
            Ok(out)
        }
        None => Ok(MultiValue::from_vec(vec![LuaValue::Boolean(false)])),
    }
}

/// The generic global for `function`: takes the key from its argument.
pub(crate) fn generic_function(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    function: ApiFunction,
) -> mlua::Result<Function> {
    let ctx = ctx.clone();
    lua.create_function(move |lua, args: MultiValue| {
        let mut args = args;
        let index = function.key_index();
        let key_arg = if index < args.len() {
            args.remove(index)
        } else {
            None
        };
        let text = match &key_arg {
            Some(LuaValue::String(s)) => s.to_str()?.to_string(),
            other => {
                return Err(runtime_err(
                    lua,
                    format!(
                        "{function}: argument {} must be a key string, got a {}",
                        index + 1,
                        other.as_ref().map_or("nil", LuaValue::type_name)
                    ),
                ));
            }
        };
        let key = ctx
            .hub()
            .key(&text)
            .map_err(|e| runtime_err(lua, format!("{function}: {e}")))?;
        let key = KeyRef {
            key,
            text: Rc::from(text),
        };
        call_api(&ctx, lua, function, &key, args, Sites::PerCall)
    })
}

/// The function baked for (`function`, `key`): the key resolved now, its
/// call sites recorded by the loader.
pub(crate) fn baked_function(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    function: ApiFunction,
    key: KeyRef,
) -> mlua::Result<Function> {
    let ctx = ctx.clone();
    lua.create_function(move |lua, args: MultiValue| {
        call_api(&ctx, lua, function, &key, args, Sites::AtLoad)
    })
}
