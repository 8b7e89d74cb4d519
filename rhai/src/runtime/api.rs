//! The script API as Rhai reaches it: one face per call ([`RhaiCall`]),
//! the generic function (`NotifyObjectMessage(obj, "Key", ...)`, key
//! resolved and call site recorded per call) and the per-key function the
//! loader bakes literal-key calls into (key resolved and site recorded once,
//! at load). Both run the host's one API call ([`call_api`]), so they
//! behave the same; what is Rhai's here is what a value is, how a function
//! is held and called, and what `RunHook` and `GMP::Request` return.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{RowFn, TableFn};
use gantry_host::face::call::{TableShape, Values};
use gantry_host::face::options::Delivery;
use gantry_host::face::reply::{on_answer, request_during_send};
use gantry_host::face::{
    ApiError, Call, Declares, Face, KeyRef, ModGrants, SiteBook, Sites, Unbind, call_api,
};
use gantry_host::hook::HookResult;
use gantry_host::listener::{HookFn, MessageFn};
use gantry_host::{
    ApiFunction, Caller, Hub, Language, ListenerId, Owner, Reply, Role, Site, Source, StoredArray,
    Type, Value,
};
use rhai::{Dynamic, FnPtr, INT, ImmutableString, Map, NativeCallContext};

use super::convert::{from_value, to_value};
use super::handles::{ConnectionHandle, NamedHandle, ObjectHandle, WorldHandle, fail};
use super::listen::{
    MessageHandler, declared_arities, hook_callback, message_callback, row_callback, table_callback,
};
use super::shared::{Script, Shared};
use super::writer::StoredArrayHandle;

type RhaiResult = Result<Dynamic, Box<rhai::EvalAltResult>>;

/// A call's arguments, taken out of Rhai's argument slots. Inline up to
/// four: a send allocates nothing for them.
pub(crate) type Args = smallvec::SmallVec<[Dynamic; 4]>;

/// One API call from Rhai: the script whose code makes it, and its line.
struct RhaiCall<'a> {
    shared: &'a Rc<Shared>,
    script: Rc<Script>,
    line: u32,
    /// The handler of the plain message listener this call makes, until
    /// the hub gives its id (see `lane`).
    handler: RefCell<Option<MessageHandler>>,
}

/// Runs the API call of `function` on `key` from Rhai.
pub(crate) fn call(
    shared: &Rc<Shared>,
    call: &NativeCallContext,
    function: ApiFunction,
    key: &KeyRef,
    mut args: Args,
    sites: Sites,
) -> RhaiResult {
    let script = shared
        .current()
        .ok_or_else(|| fail(format!("{function}: no script is running")))?;
    let line = call.call_position().line().unwrap_or(0) as u32;
    let face = RhaiCall {
        shared,
        script,
        line,
        handler: RefCell::new(None),
    };
    call_api(&face, function, key, &mut args, sites)
}

impl Face for RhaiCall<'_> {
    type Value = Dynamic;
    type Function = FnPtr;
    type Held = FnPtr;
    type Options = Map;
    type Out = Dynamic;
    type Error = Box<rhai::EvalAltResult>;

    const FUNCTION: &'static str = "a function pointer or closure";
    const NAMED: &'static str = "GMP::Named";
    const TABLE: TableShape = TableShape::new("an object map #{", ":", "}");

    fn hub(&self) -> &Hub {
        &self.shared.hub
    }

    fn grants(&self) -> Option<&ModGrants> {
        self.script.grants.as_deref()
    }

    fn book(&self) -> &SiteBook {
        &self.script.recorded
    }

    fn site(&self, role: Role) -> Site {
        Site::new(&*self.script.file, self.line, Language::Rhai, role)
    }

    fn raise(&self, error: ApiError) -> Box<rhai::EvalAltResult> {
        fail(error.to_string())
    }

    fn type_name(value: &Dynamic) -> &'static str {
        value.type_name()
    }

    fn describe(value: &Dynamic) -> String {
        if let Ok(i) = value.as_int() {
            return format!("an integer ({i})");
        }
        if let Ok(x) = value.as_float() {
            return format!("a number ({x})");
        }
        match value.clone().into_immutable_string() {
            Ok(s) if s.len() <= 40 => format!("\"{s}\""),
            Ok(_) => "a string".to_owned(),
            Err(_) => format!("a {}", value.type_name()),
        }
    }

    fn is_nil(value: &Dynamic) -> bool {
        value.is_unit()
    }

    fn whole_number(value: &Dynamic) -> Option<i64> {
        if let Ok(i) = value.as_int() {
            return Some(i);
        }
        match value.as_float() {
            Ok(x) if x.fract() == 0.0 && x.abs() <= 2f64.powi(53) => Some(x as i64),
            _ => None,
        }
    }

    fn is_text(value: &Dynamic, text: &str) -> bool {
        value.is_string()
            && value
                .clone()
                .into_immutable_string()
                .is_ok_and(|s| s == text)
    }

    fn is_table(value: &Dynamic) -> bool {
        value.is_map()
    }

    fn source(&self, value: &Dynamic, world: bool) -> Option<Source> {
        if let Some(w) = value.clone().try_cast::<WorldHandle>() {
            return Some(Source::World(w.0));
        }
        if let Some(o) = value.clone().try_cast::<ObjectHandle>() {
            return if world {
                self.shared.hub.world_of(o.0).map(Source::World)
            } else {
                Some(Source::Object(o.0))
            };
        }
        match value.clone().try_cast::<NamedHandle>() {
            Some(n) if !world => Some(n.0),
            _ => None,
        }
    }

    fn values(&self, key: &KeyRef, args: &[Dynamic]) -> Result<Values, ApiError> {
        self.shared.values_for(key, args)
    }

    fn to_value(&self, value: &Dynamic, expected: Option<&Type>) -> Result<Value, String> {
        let table = self.shared.hub.table();
        to_value(value, expected, &table.structs)
    }

    fn function(&self, value: &Dynamic) -> Option<Result<FnPtr, String>> {
        if value.is_fnptr() {
            return value.clone().try_cast::<FnPtr>().map(Ok);
        }
        let name = value.clone().into_immutable_string().ok()?;
        Some(FnPtr::new(name.as_str()).map_err(|e| e.to_string()))
    }

    fn reply_function(value: &Dynamic) -> Option<FnPtr> {
        if value.is_fnptr() {
            value.clone().try_cast::<FnPtr>()
        } else {
            None
        }
    }

    fn options(value: Dynamic) -> Option<Map> {
        value.try_cast::<Map>()
    }

    fn option(&self, options: &Map, name: &str) -> Result<Dynamic, Box<rhai::EvalAltResult>> {
        Ok(options.get(name).cloned().unwrap_or(Dynamic::UNIT))
    }

    fn takes(&self, f: &FnPtr) -> Option<usize> {
        // The overload taking the fewest is the one a call would reach.
        declared_arities(&self.script.ast, f).into_iter().min()
    }

    fn hold(&self, owner: &Dynamic, f: FnPtr) -> Result<(Owner, FnPtr), String> {
        Ok((resolve_owner(&self.script, owner)?, f))
    }

    fn declares(&self, f: &FnPtr) -> Declares {
        if declared_arities(&self.script.ast, f).contains(&2) {
            Declares::Two
        } else {
            Declares::Other
        }
    }

    fn message_callback(&self, f: &FnPtr, delivery: Delivery) -> Rc<MessageFn> {
        let (callback, handler) =
            message_callback(self.shared, &self.script, f.clone(), self.line, delivery);
        if delivery == Delivery::default() {
            *self.handler.borrow_mut() = Some(handler);
        }
        callback
    }

    fn table_callback(&self, f: &FnPtr) -> Rc<TableFn> {
        table_callback(self.shared, &self.script, f.clone(), self.line)
    }

    fn row_callback(&self, f: &FnPtr) -> Rc<RowFn> {
        let with_update = declared_arities(&self.script.ast, f)
            .iter()
            .any(|&n| n >= 3);
        row_callback(self.shared, &self.script, f.clone(), self.line, with_update)
    }

    fn hook_callback(&self, f: &FnPtr) -> Rc<HookFn> {
        hook_callback(self.shared, &self.script, f.clone(), self.line)
    }

    fn listening(&self, id: ListenerId, _: &FnPtr) -> Result<(), Box<rhai::EvalAltResult>> {
        if let Some(handler) = self.handler.borrow_mut().take() {
            self.shared.lane.remember(id, &handler);
        }
        Ok(())
    }

    fn row_index(&self, call: &Call, value: &Dynamic) -> Result<i32, ApiError> {
        value
            .as_int()
            .ok()
            .and_then(|i| i32::try_from(i).ok())
            .ok_or_else(|| ApiError::BadArgument {
                call: call.clone(),
                position: 4,
                naming: None,
                expected: "a row index (0-based, GMP::ALL_ROWS, GMP::WithRemoval(n))".into(),
                got: format!("a {}", value.type_name()),
            })
    }

    fn unbind_target(&self, value: &Dynamic) -> Unbind {
        if let Ok(id) = value.as_int() {
            return Unbind::Id(id);
        }
        if let Some(c) = value.read_lock::<ConnectionHandle>() {
            return Unbind::Id(c.id.get() as i64);
        }
        match value.clone().try_cast::<ObjectHandle>() {
            Some(o) => Unbind::Owner(Some(Owner::Object(o.0))),
            None => Unbind::Neither,
        }
    }

    fn reply_to(&self, reply: FnPtr) -> Box<dyn FnOnce(Reply<'_>)> {
        let weak = Rc::downgrade(self.shared);
        let script = self.script.clone();
        on_answer(move |values| {
            let Some(shared) = weak.upgrade() else {
                return;
            };
            // A reply to a script unloaded since is dropped unheard.
            if !script.registered.is_loaded() {
                return;
            }
            let mut args: Args = values.iter().map(from_value).collect();
            // A reply function may take fewer values than the answer carries.
            super::listen::fit_args(&declared_arities(&script.ast, &reply), &mut args);
            if let Err(e) = super::listen::call_fn(&shared, &script, &reply, args) {
                shared.report(e);
            }
        })
    }

    /// `GMP::Request(obj, key, ...)`: Rhai has no coroutines, so the
    /// request is synchronous — the reply is returned when a responder
    /// answers during the send (one value: that value; several: an array;
    /// none: `()`), and it is an error naming the key when nobody does (no
    /// responder, or one that answers later: that late answer is dropped).
    fn request(
        &self,
        key: &KeyRef,
        source: Source,
        values: &mut [Value],
        caller: Caller<'_>,
    ) -> RhaiResult {
        let text = key.text.clone();
        let late =
            move |_| tracing::debug!(key = %text, "a late answer to GMP::Request is dropped");
        let answered = request_during_send(&self.shared.hub, key.key, source, values, caller, late)
            .map_err(|e| fail(e.to_string()))?;
        match answered {
            Some(Some(values)) => Ok(match values.as_slice() {
                [] => Dynamic::UNIT,
                [one] => from_value(one),
                many => Dynamic::from_array(many.iter().map(from_value).collect()),
            }),
            Some(None) => Err(fail(format!(
                "GMP::Request `{}`: nobody answered (no listener took the request, or every \
                 responder was dropped unanswered)",
                key.text
            ))),
            None => Err(fail(format!(
                "GMP::Request `{}`: not answered during the send (Rhai has no coroutines, so \
                 GMP::Request cannot wait for a later answer; use SendObjectMessage with a \
                 reply function)",
                key.text
            ))),
        }
    }

    fn hook_ran(
        &self,
        _payload: Dynamic,
        value: Value,
        _expected: Option<Type>,
        result: HookResult,
    ) -> RhaiResult {
        let mut out = Map::new();
        out.insert("ran".into(), Dynamic::from_int(result.ran as INT));
        out.insert("handled".into(), Dynamic::from_bool(result.handled));
        out.insert("cancelled".into(), Dynamic::from_bool(result.cancelled));
        out.insert("payload".into(), from_value(&value));
        Ok(Dynamic::from_map(out))
    }

    fn stored_array(&self, key: &KeyRef, writer: StoredArray<'static>) -> RhaiResult {
        Ok(Dynamic::from(StoredArrayHandle::new(
            writer,
            key.text.clone(),
            Rc::downgrade(self.shared),
            self.script.file.clone(),
            self.line,
        )))
    }

    fn connection(&self, key: &str, id: ListenerId) -> Result<Dynamic, Self::Error> {
        // The script's listener, to take back when it unloads.
        (self.script.registered).listened(&self.shared.hub, id);
        Ok(Dynamic::from(ConnectionHandle {
            key: Rc::from(key),
            id,
        }))
    }

    fn nothing() -> Dynamic {
        Dynamic::UNIT
    }

    fn number(n: i64) -> Dynamic {
        Dynamic::from_int(n as INT)
    }

    fn boolean(b: bool) -> Dynamic {
        Dynamic::from_bool(b)
    }
}

/// `()` is the calling script's object; an object handle is that object.
fn resolve_owner(script: &Script, owner: &Dynamic) -> Result<Owner, String> {
    if owner.is_unit() {
        return Ok(Owner::Object(script.object));
    }
    if let Some(o) = owner.clone().try_cast::<ObjectHandle>() {
        return Ok(Owner::Object(o.0));
    }
    // A named source lives as long as its object: so does what it owns.
    if let Some(named) = owner.clone().try_cast::<NamedHandle>()
        && let Some(object) = named.0.object()
    {
        return Ok(Owner::Object(object));
    }
    Err(format!(
        "an owner must be () (this script's object), an object or a named source, got a {}",
        owner.type_name()
    ))
}

/// The generic key argument: its text, or the refusal naming `function`.
pub(crate) fn key_text(
    function: ApiFunction,
    key: &Dynamic,
) -> Result<ImmutableString, Box<rhai::EvalAltResult>> {
    key.clone().try_cast::<ImmutableString>().ok_or_else(|| {
        fail(
            ApiError::BadArgument {
                call: Call::of(function),
                position: function.key_index() + 1,
                naming: None,
                expected: "a key string".into(),
                got: format!("a {}", key.type_name()),
            }
            .to_string(),
        )
    })
}
