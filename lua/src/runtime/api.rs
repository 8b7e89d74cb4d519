//! The script API as Lua reaches it: one face per call ([`LuaCall`]), the
//! generic global (`NotifyObjectMessage(obj, "Key", ...)`, key resolved and
//! call site recorded per call) and the baked function the loader rewrites
//! literal-key calls into (key resolved and site recorded once, at load).
//! Both run the host's one API call ([`call_api`]), so they behave the
//! same; what is Lua's here is what a value is, how a function is held
//! and called, and what `RunHook` and `GMP.Request` return.

use std::rc::Rc;

use gantry_host::collection::{RowFn, TableFn};
use gantry_host::face::call::{TableShape, Values};
use gantry_host::face::options::Delivery;
use gantry_host::face::reply::{on_answer, request_during_send};
use gantry_host::face::{
    ApiError, Call, Declares, Face, KeyRef, ModGrants, Registrations, SiteBook, Sites, Unbind,
    call_api,
};
use gantry_host::hook::HookResult;
use gantry_host::listener::{HookFn, MessageFn};
use gantry_host::{
    ApiFunction, Caller, Hub, Language, ListenerId, ObjectId, Owner, Reply, Role, Site, Source,
    StoredArray, Type, Value, WorldId,
};
use mlua::{Function, Lua, MultiValue, Table, Value as LuaValue, thread::ThreadStatus};

use super::collection;
use super::convert::{from_value, object_source_of_arg, to_value, world_of_arg};
use super::error::ScriptError;
use super::handles::ConnectionHandle;
use super::listen::{
    Takes, Target, existing_owner, hook_callback, message_callback, resolve_owner,
};
use super::shared::{Shared, caller_place, describe_value, error_here, whole_number};

/// One loaded chunk (a script or a module it requires): its file and object.
pub(crate) struct Ctx {
    pub file: Rc<str>,
    pub object: ObjectId,
    pub world: WorldId,
    pub shared: Rc<Shared>,
    /// The grants of the chunk's mod, as the host gave them at load (a
    /// module it requires gets the same); `None`: it may use everything.
    pub grants: Option<Rc<ModGrants>>,
    /// What the script this chunk belongs to registered (a module notes
    /// its listeners in the requiring script's), for unloading it.
    pub registered: Rc<Registrations>,
    /// Sites already recorded by generic calls of this chunk.
    recorded: SiteBook,
    /// The API function of each baked slot, once the chunk bakes any (for
    /// naming them in tracebacks).
    slots: std::cell::RefCell<Option<super::traceback::Slots>>,
}

impl Ctx {
    pub fn new(
        file: Rc<str>,
        object: ObjectId,
        world: WorldId,
        shared: Rc<Shared>,
        grants: Option<Rc<ModGrants>>,
    ) -> Self {
        Self {
            file,
            object,
            world,
            shared,
            grants,
            registered: Rc::default(),
            recorded: SiteBook::default(),
            slots: std::cell::RefCell::new(None),
        }
    }

    /// This chunk noting what it registers in `registered`: the script's
    /// record, shared by every module the script requires.
    pub fn noting_in(mut self, registered: Rc<Registrations>) -> Self {
        self.registered = registered;
        self
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

/// One API call from Lua: the chunk it is made in and the state.
struct LuaCall<'a> {
    ctx: &'a Rc<Ctx>,
    lua: &'a Lua,
}

/// A listener function as its owner holds it, with what it declares.
pub(crate) struct Held {
    target: Target,
    function: Function,
    params: u8,
    vararg: bool,
}

impl Face for LuaCall<'_> {
    type Value = LuaValue;
    type Function = Function;
    type Held = Held;
    type Options = Table;
    type Out = MultiValue;
    type Error = mlua::Error;

    const FUNCTION: &'static str = "a function";
    const NAMED: &'static str = "GMP.Named";
    const TABLE: TableShape = TableShape::new("a table {", "=", "}");

    fn hub(&self) -> &Hub {
        self.ctx.hub()
    }

    fn grants(&self) -> Option<&ModGrants> {
        self.ctx.grants.as_deref()
    }

    fn book(&self) -> &SiteBook {
        &self.ctx.recorded
    }

    fn site(&self, role: Role) -> Site {
        self.ctx.site_here(self.lua, role)
    }

    fn raise(&self, error: ApiError) -> mlua::Error {
        error_here(self.lua, error)
    }

    fn type_name(value: &LuaValue) -> &'static str {
        value.type_name()
    }

    fn describe(value: &LuaValue) -> String {
        describe_value(value)
    }

    fn is_nil(value: &LuaValue) -> bool {
        value.is_nil()
    }

    fn whole_number(value: &LuaValue) -> Option<i64> {
        whole_number(value)
    }

    fn is_text(value: &LuaValue, text: &str) -> bool {
        matches!(value, LuaValue::String(s) if *s.as_bytes() == *text.as_bytes())
    }

    fn is_table(value: &LuaValue) -> bool {
        matches!(value, LuaValue::Table(_))
    }

    fn source(&self, value: &LuaValue, world: bool) -> Option<Source> {
        if world {
            world_of_arg(value, self.hub()).map(Source::World)
        } else {
            object_source_of_arg(value)
        }
    }

    fn values(&self, key: &KeyRef, args: &[LuaValue]) -> Result<Values, ApiError> {
        self.ctx.shared.values_for(key, args)
    }

    fn to_value(&self, value: &LuaValue, expected: Option<&Type>) -> Result<Value, String> {
        let table = self.hub().table();
        to_value(value, expected, &table.structs)
    }

    fn function(&self, value: &LuaValue) -> Option<Result<Function, String>> {
        match value {
            LuaValue::Function(f) => Some(Ok(f.clone())),
            _ => None,
        }
    }

    fn reply_function(value: &LuaValue) -> Option<Function> {
        match value {
            LuaValue::Function(f) => Some(f.clone()),
            _ => None,
        }
    }

    fn options(value: LuaValue) -> Option<Table> {
        match value {
            LuaValue::Table(t) => Some(t),
            _ => None,
        }
    }

    fn option(&self, options: &Table, name: &str) -> mlua::Result<LuaValue> {
        options.get(name)
    }

    fn takes(&self, f: &Function) -> Option<usize> {
        let info = f.info();
        (!info.is_vararg).then_some(usize::from(info.num_params))
    }

    fn hold(&self, owner: &LuaValue, f: Function) -> Result<(Owner, Held), String> {
        // What the function declares, asked once here rather than per call.
        let info = f.info();
        let (owner, target) = resolve_owner(
            &self.ctx.shared,
            self.lua,
            self.ctx.object,
            owner,
            f.clone(),
        )?;
        Ok((
            owner,
            Held {
                target,
                function: f,
                params: info.num_params,
                vararg: info.is_vararg,
            },
        ))
    }

    fn declares(&self, held: &Held) -> Declares {
        match (held.params, held.vararg) {
            (2, false) => Declares::Two,
            (2, true) => Declares::TwoAndRest,
            _ => Declares::Other,
        }
    }

    fn message_callback(&self, held: &Held, delivery: Delivery) -> Rc<MessageFn> {
        let takes = Takes::new(held.params, held.vararg);
        message_callback(&self.ctx.shared, held.target.clone(), takes, delivery)
    }

    fn table_callback(&self, held: &Held) -> Rc<TableFn> {
        collection::table_callback(&self.ctx.shared, held.target.clone())
    }

    fn row_callback(&self, held: &Held) -> Rc<RowFn> {
        collection::row_callback(&self.ctx.shared, held.target.clone())
    }

    fn hook_callback(&self, held: &Held) -> Rc<HookFn> {
        hook_callback(&self.ctx.shared, held.target.clone())
    }

    fn listening(&self, id: ListenerId, held: &Held) -> mlua::Result<()> {
        // The fast lane may call a function the hub's callback holds; one
        // kept for a Lua-value owner is held by nothing else, so it goes
        // the slow way.
        if matches!(held.target, Target::Strong(_)) {
            self.ctx.shared.fast.remember(id, &held.function)?;
        }
        Ok(())
    }

    fn row_index(&self, call: &Call, value: &LuaValue) -> Result<i32, ApiError> {
        let index = whole_number(value).ok_or_else(|| ApiError::BadArgument {
            call: call.clone(),
            position: 4,
            naming: None,
            expected: "a row number (or GMP.AllRows)".into(),
            got: format!("a {}", value.type_name()),
        })?;
        collection::hub_index(index).map_err(|why| ApiError::Refused {
            call: call.clone(),
            why,
        })
    }

    fn unbind_target(&self, value: &LuaValue) -> Unbind {
        match value {
            LuaValue::Integer(id) => Unbind::Id(*id),
            LuaValue::UserData(ud) if ud.is::<ConnectionHandle>() => ud
                .borrow::<ConnectionHandle>()
                .map_or(Unbind::Neither, |c| Unbind::Id(c.id.get() as i64)),
            LuaValue::Nil => Unbind::Neither,
            owner => Unbind::Owner(existing_owner(&self.ctx.shared, owner)),
        }
    }

    fn reply_to(&self, reply: Function) -> Box<dyn FnOnce(Reply<'_>)> {
        let shared = Rc::downgrade(&self.ctx.shared);
        let file = self.ctx.file.clone();
        let registered = self.ctx.registered.clone();
        on_answer(move |values| {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            // A reply to a script unloaded since is dropped unheard.
            if !registered.is_loaded() {
                return;
            }
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
                shared.report(ScriptError::from_message(&file, shared.error_text(&e)));
            }
        })
    }

    /// `GMP.Request(obj, key, ...)` inside a coroutine: sends the request
    /// and returns `true, answer...` when it was answered during the send,
    /// or `false` — the Lua side then yields, and the answer resumes the
    /// coroutine.
    fn request(
        &self,
        key: &KeyRef,
        source: Source,
        values: &mut [Value],
        caller: Caller<'_>,
    ) -> mlua::Result<MultiValue> {
        // The Lua side checked that this runs in a coroutine that can yield.
        let thread = self.lua.current_thread();
        let shared = Rc::downgrade(&self.ctx.shared);
        let file = self.ctx.file.clone();
        let registered = self.ctx.registered.clone();
        let later = move |answer: Option<Vec<Value>>| {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            // A script unloaded since is not resumed.
            if !registered.is_loaded() {
                return;
            }
            let Some(lua) = shared.lua.try_upgrade() else {
                return;
            };
            if thread.status() != ThreadStatus::Resumable {
                return;
            }
            let result = shared.guarded(|| -> mlua::Result<()> {
                let args = answer
                    .iter()
                    .flatten()
                    .map(|v| from_value(&lua, v))
                    .collect::<mlua::Result<MultiValue>>()?;
                shared.fast.blocked(|| thread.resume::<()>(args))
            });
            if let Err(e) = result {
                shared.report(ScriptError::from_message(&file, shared.error_text(&e)));
            }
        };
        let answered = request_during_send(self.hub(), key.key, source, values, caller, later)
            .map_err(|e| self.raise(e.into()))?;
        match answered {
            Some(values) => {
                let mut out = MultiValue::new();
                out.push_back(LuaValue::Boolean(true));
                for v in values.unwrap_or_default() {
                    out.push_back(from_value(self.lua, &v)?);
                }
                Ok(out)
            }
            None => Ok(MultiValue::from_vec(vec![LuaValue::Boolean(false)])),
        }
    }

    fn hook_ran(
        &self,
        payload: LuaValue,
        value: Value,
        expected: Option<Type>,
        result: HookResult,
    ) -> mlua::Result<MultiValue> {
        let lua = self.lua;
        // "The payload itself (not a copy)": the caller's table reads the
        // listeners' changes back (nothing ran: nothing changed).
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

    fn stored_array(&self, key: &KeyRef, writer: StoredArray<'static>) -> mlua::Result<MultiValue> {
        let opened_at = match caller_place(self.lua) {
            Some((file, line)) => (file, Some(line)),
            None => (self.ctx.file.to_string(), None),
        };
        let writer =
            collection::LuaStoredArray::new(writer, key.text.clone(), opened_at, &self.ctx.shared);
        Ok(MultiValue::from_vec(vec![LuaValue::UserData(
            self.lua.create_userdata(writer)?,
        )]))
    }

    fn connection(&self, key: &str, id: ListenerId) -> mlua::Result<MultiValue> {
        // The script's listener, to take back when it unloads.
        (self.ctx.registered).listened(self.ctx.hub(), id);
        let handle = ConnectionHandle {
            key: Rc::from(key),
            id,
        };
        Ok(MultiValue::from_vec(vec![LuaValue::UserData(
            self.lua.create_userdata(handle)?,
        )]))
    }

    fn nothing() -> MultiValue {
        MultiValue::new()
    }

    fn number(n: i64) -> MultiValue {
        MultiValue::from_vec(vec![LuaValue::Integer(n)])
    }

    fn boolean(b: bool) -> MultiValue {
        MultiValue::from_vec(vec![LuaValue::Boolean(b)])
    }
}

/// Runs the API call of `function` on `key` from Lua.
fn call(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    function: ApiFunction,
    key: &KeyRef,
    mut args: MultiValue,
    sites: Sites,
) -> mlua::Result<MultiValue> {
    let out = call_api(
        &LuaCall { ctx, lua },
        function,
        key,
        args.make_contiguous(),
        sites,
    )?;
    Ok(out)
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
    use gantry_host::face::STRUCT_FIELD;
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
                return Err(error_here(
                    lua,
                    ApiError::BadArgument {
                        call: Call::of(function),
                        position: index + 1,
                        naming: None,
                        expected: "a key string".into(),
                        got: format!("a {}", other.as_ref().map_or("nil", LuaValue::type_name)),
                    },
                ));
            }
        };
        let key = ctx.hub().key(&text).map_err(|e| {
            error_here(
                lua,
                ApiError::Refused {
                    call: Call::of(function),
                    why: e.to_string(),
                },
            )
        })?;
        let key = KeyRef {
            key,
            text: Rc::from(text),
        };
        call(&ctx, lua, function, &key, args, Sites::PerCall)
    })
}

/// The function baked for (`function`, `key`): the key resolved now, its
/// call sites recorded by the loader.
///
/// The loader bakes a chunk's slots in slot order (1 first): the function
/// of each is recorded in that order, so a traceback can name slot `n`'s
/// local (`__ga3`) as the function the modder wrote.
pub(crate) fn baked_function(
    ctx: &Rc<Ctx>,
    lua: &Lua,
    function: ApiFunction,
    key: KeyRef,
) -> mlua::Result<Function> {
    ctx.slots
        .borrow_mut()
        .get_or_insert_with(|| ctx.shared.baked.chunk(&ctx.file))
        .borrow_mut()
        .push(function);
    let ctx = ctx.clone();
    lua.create_function(move |lua, args: MultiValue| {
        call(&ctx, lua, function, &key, args, Sites::AtLoad)
    })
}
