//! The API call: one body for every keyed API function of every language.
//!
//! A script's `NotifyObjectMessage(obj, "Key", ...)`, `ListenMessage(...)`
//! or `RunHook(...)` arrives here as ([`ApiFunction`], [`KeyRef`], the
//! arguments after the key), whether the script called the generic
//! function or the loader baked the call. [`call_api`] takes the source,
//! checks and converts the arguments, records the site and asks the hub;
//! the runtime answers the questions only its language can through
//! [`Face`]: what a value is, how it converts, how its functions are
//! called and held.
//!
//! Generic over the face, so each runtime gets its own monomorphic copy:
//! no dynamic dispatch between a script's call and the hub.

use std::rc::Rc;

use crate::api::{kind_text, kinds_text};
use crate::collection::{RowFn, TableFn};
use crate::hook::HookResult;
use crate::listener::{HookFn, MessageFn};
use crate::signature::Origin;
use crate::{
    ApiFunction, Caller, Hub, HubError, ListenSpec, ListenerId, ListenerParams, Owner, Reply, Role,
    Site, Source, StoredArray, Type, Value,
};

use super::error::{ApiError, Call};
use super::grants::ModGrants;
use super::options::{Delivery, hook_options, listen_options, message_listen_options};
use super::sites::{KeyRef, SiteBook, Sites};
use super::{param_types, row_type};

/// A call's converted message values, inline up to four: a send allocates
/// nothing for them.
pub type Values = smallvec::SmallVec<[Value; 4]>;

/// What a listener function declares, as far as choosing its form goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declares {
    /// Exactly two parameters: on a key carrying a table it takes the table
    /// and the update; on a key carrying nothing known yet, what is sent
    /// decides.
    Two,
    /// Two parameters and a variable rest: on a table key, the table and
    /// the update.
    TwoAndRest,
    /// Anything else: a message listener.
    Other,
}

/// How a language writes a table of named fields, for messages that show
/// one: `a table {times=, order=}`, `an object map #{times:, order:}`.
pub struct TableShape {
    /// What the language calls it, with its opening brace (`a table {`).
    pub open: &'static str,
    /// What follows a field's name (`=`).
    pub field: &'static str,
    pub close: &'static str,
}

impl TableShape {
    /// A shape opened by `open`, each field followed by `field`.
    pub const fn new(open: &'static str, field: &'static str, close: &'static str) -> Self {
        Self { open, field, close }
    }

    /// The table of fields `names`, as the language writes it.
    pub fn with(&self, names: &[&str]) -> String {
        let fields: Vec<String> = names.iter().map(|n| format!("{n}{}", self.field)).collect();
        format!("{}{}{}", self.open, fields.join(", "), self.close)
    }
}

/// What the second argument of `UnbindMessage` stands for.
pub enum Unbind {
    /// A listener id.
    Id(i64),
    /// An owner (`None`: one that owns nothing, so nothing is removed).
    Owner(Option<Owner>),
    /// Neither.
    Neither,
}

/// What a runtime tells the face about its language, for one API call (the
/// implementor knows where the call stands: its script, its line).
pub trait Face {
    /// A value of the language.
    type Value: Default;
    /// A function of the language.
    type Function;
    /// A listener function as its owner holds it.
    type Held;
    /// An options table of the language.
    type Options;
    /// What the call returns to the script.
    type Out;
    /// The language's error, raised at the calling script's line.
    type Error;

    /// How the language names a listener function (`a function`).
    const FUNCTION: &'static str;
    /// How the language names a named source's constructor (`GMP.Named`).
    const NAMED: &'static str;
    /// How the language writes a table of named fields.
    const TABLE: TableShape;

    fn hub(&self) -> &Hub;
    /// The grants of the mod whose script makes the call, as the host gave
    /// them when it loaded the script (`None`: it may use everything).
    fn grants(&self) -> Option<&ModGrants>;
    /// The sites this call's script recorded from generic calls.
    fn book(&self) -> &SiteBook;
    /// Where the call stands, as a site in `role`.
    fn site(&self, role: Role) -> Site;
    /// `error` as the language's error, at the calling line.
    fn raise(&self, error: ApiError) -> Self::Error;

    /// The type name of a value, as the language says it (`table`).
    fn type_name(value: &Self::Value) -> &'static str;
    /// A wrong option or argument as a message names it: a number or short
    /// string by its value, anything else by its type (`an integer (5)`).
    fn describe(value: &Self::Value) -> String;
    fn is_nil(value: &Self::Value) -> bool;
    /// A whole number: an integer, or an integral float small enough to be
    /// exact.
    fn whole_number(value: &Self::Value) -> Option<i64>;
    /// Is the value the string `text`?
    fn is_text(value: &Self::Value, text: &str) -> bool;
    /// Is the value a table (a Lua table, a Rhai map): one that may take
    /// its struct from the key's declared type?
    fn is_table(value: &Self::Value) -> bool;

    /// The source a value stands for: a world (`world`: an object stands
    /// for its world) or an object, world or named source.
    fn source(&self, value: &Self::Value, world: bool) -> Option<Source>;
    /// Converts a message's values, tables by the key's signature.
    fn values(&self, key: &KeyRef, args: &[Self::Value]) -> Result<Values, ApiError>;
    /// Converts one value; `expected` is the declared type here.
    fn to_value(&self, value: &Self::Value, expected: Option<&Type>) -> Result<Value, String>;

    /// The listener function a value is: `None` when it is not one at all,
    /// an error when it names no function.
    fn function(&self, value: &Self::Value) -> Option<Result<Self::Function, String>>;
    /// A trailing reply function (only a function value, never a name).
    fn reply_function(value: &Self::Value) -> Option<Self::Function>;
    /// An options table, if the value is one.
    fn options(value: Self::Value) -> Option<Self::Options>;
    /// The option `name` of `options` (nil when absent).
    fn option(&self, options: &Self::Options, name: &str) -> Result<Self::Value, Self::Error>;
    /// Holds a listener function under the owner the script gave.
    /// How many parameters `f` takes at most (`None`: any number, a
    /// variadic or native function), for the arity rule.
    fn takes(&self, f: &Self::Function) -> Option<usize>;
    fn hold(&self, owner: &Self::Value, f: Self::Function) -> Result<(Owner, Self::Held), String>;
    fn declares(&self, held: &Self::Held) -> Declares;
    /// The hub callback of a message listener, handing it a dispatch as
    /// `delivery` says (the sent key first, the responder last).
    fn message_callback(&self, held: &Self::Held, delivery: Delivery) -> Rc<MessageFn>;
    fn table_callback(&self, held: &Self::Held) -> Rc<TableFn>;
    fn row_callback(&self, held: &Self::Held) -> Rc<RowFn>;
    fn hook_callback(&self, held: &Self::Held) -> Rc<HookFn>;
    /// After a listener that may take messages registered as `id`.
    fn listening(&self, id: ListenerId, held: &Self::Held) -> Result<(), Self::Error>;
    /// A `ListenRowMessage` index as the hub counts rows.
    fn row_index(&self, call: &Call, value: &Self::Value) -> Result<i32, ApiError>;
    fn unbind_target(&self, value: &Self::Value) -> Unbind;

    /// A request's reply, delivered to `f`.
    fn reply_to(&self, f: Self::Function) -> Box<dyn FnOnce(Reply<'_>)>;
    /// `GMP.Request`: sends the request and returns what the language
    /// returns for it.
    fn request(
        &self,
        key: &KeyRef,
        source: Source,
        values: &mut [Value],
        caller: Caller<'_>,
    ) -> Result<Self::Out, Self::Error>;
    /// What `RunHook` returns once the hook ran over `value` (converted from
    /// `payload` as `expected`).
    fn hook_ran(
        &self,
        payload: Self::Value,
        value: Value,
        expected: Option<Type>,
        result: HookResult,
    ) -> Result<Self::Out, Self::Error>;
    /// The writer `GMP.StoredArray` returns.
    fn stored_array(
        &self,
        key: &KeyRef,
        writer: StoredArray<'static>,
    ) -> Result<Self::Out, Self::Error>;

    /// What listening returns: a handle of the listener `id` on `key`
    /// (by default its id as a number).
    fn connection(&self, key: &str, id: ListenerId) -> Result<Self::Out, Self::Error> {
        let _ = key;
        Ok(Self::number(id.get() as i64))
    }

    fn nothing() -> Self::Out;
    fn number(n: i64) -> Self::Out;
    fn boolean(b: bool) -> Self::Out;
}

/// Takes argument `i` of `args` (nil when the call gave fewer).
fn take<V: Default>(args: &mut [V], i: usize) -> V {
    args.get_mut(i).map(std::mem::take).unwrap_or_default()
}

/// The core of every keyed API function. `args` are the call's arguments
/// without the key; `sites` says whether the call's site is recorded now.
pub fn call_api<F: Face>(
    face: &F,
    function: ApiFunction,
    key: &KeyRef,
    args: &mut [F::Value],
    sites: Sites,
) -> Result<F::Out, F::Error> {
    // Grants first: a call outside them reaches nothing, not even a
    // check of its arguments.
    if let Some(grants) = face.grants() {
        grants
            .check(function, key.key, &key.text)
            .map_err(|e| face.raise(ApiError::NotGranted(e)))?;
    }
    let (source, args) = take_source(face, function, args)?;
    let hub = face.hub();
    // Sends and stores have their key's kind checked where their
    // arguments are (admission), on data already loaded; every other
    // function, off the hot path, here.
    if !matches!(
        function,
        ApiFunction::NotifyMessage
            | ApiFunction::NotifyWorldMessage
            | ApiFunction::NotifyObjectMessage
            | ApiFunction::SendObjectMessage
            | ApiFunction::StoreObjectMessage
            | ApiFunction::OnceObjectMessage
    ) {
        let request = function == ApiFunction::Request;
        kind_fits(hub, function, &key.text, request).map_err(|e| face.raise(e.into()))?;
    }
    // Generic calls record their line once, beside the dispatch, so that
    // generic and baked calls hand the hub the same caller. Recorded before
    // the arguments are checked, as a baked call's site is at load: a call
    // refused for its arguments still stands where it stands.
    let record = || {
        if sites == Sites::PerCall {
            let site = face.site(Role::Send);
            if face.book().first(key.key, site.line, Role::Send) {
                hub.record_site(&key.text, site);
            }
        }
    };
    // Where this call is, asked only by a report (a refused send, an
    // unanswered request): the sites themselves are recorded above or at load.
    let place = || Some(face.site(Role::Send));
    let located = Caller::Located(&place);
    let fail = |e: ApiError| face.raise(e);
    let call = || Call::on(function, &key.text);
    // Positions in the call as written: the key and the source come first.
    let fixed = function.key_index() + 1;
    match function {
        ApiFunction::NotifyMessage
        | ApiFunction::NotifyWorldMessage
        | ApiFunction::NotifyObjectMessage => {
            record();
            let mut values = face.values(key, args).map_err(fail)?;
            hub.send_values(key.key, source, &mut values, located)
                .map_err(|e| fail(e.into()))?;
            Ok(F::nothing())
        }
        ApiFunction::SendObjectMessage => {
            let (args, reply) = match args.split_last() {
                Some((last, rest)) => match F::reply_function(last) {
                    Some(reply) => (rest, Some(reply)),
                    None => (&*args, None),
                },
                None => (&*args, None),
            };
            if reply.is_some() {
                kind_fits(hub, function, &key.text, true).map_err(|e| fail(e.into()))?;
            }
            record();
            let mut values = face.values(key, args).map_err(fail)?;
            match reply {
                None => hub
                    .send_values(key.key, source, &mut values, located)
                    .map(|_| ()),
                Some(reply) => hub
                    .request_values(key.key, source, &mut values, located, face.reply_to(reply))
                    .map(|_| ()),
            }
            .map_err(|e| fail(e.into()))?;
            Ok(F::nothing())
        }
        ApiFunction::Request => {
            record();
            let mut values = face.values(key, args).map_err(fail)?;
            face.request(key, source, &mut values, located)
        }
        ApiFunction::StoreObjectMessage | ApiFunction::OnceObjectMessage => {
            record();
            let values = face.values(key, args).map_err(fail)?.into_vec();
            let once = function == ApiFunction::OnceObjectMessage;
            hub.store_values(key.key, source, values, once, located)
                .map_err(|e| fail(e.into()))?;
            Ok(F::nothing())
        }
        ApiFunction::RemoveStoredObjectMessage => {
            record();
            Ok(F::boolean(hub.remove_stored(key.key, source)))
        }
        ApiFunction::ListenMessage
        | ApiFunction::ListenWorldMessage
        | ApiFunction::ListenObjectMessage => {
            let owner = take(args, 0);
            let f = listener(face, &call(), fixed + 2, &take(args, 1))?;
            // Options first: a refused call leaves no trace under its owner.
            let (options, delivery) = message_listen_options(face, &call(), take(args, 2))?;
            let with_key = delivery.key;
            // A listener that says how it is handed a dispatch is a message
            // listener, called by its callback only.
            let plain = delivery == Delivery::default();
            // The key passed first is one parameter more the key "carries".
            let takes = face
                .takes(&f)
                .map(|n| n.saturating_sub(usize::from(with_key)));
            if let Some(why) = takes_more_than_carried(hub, &key.text, takes) {
                return Err(fail(ApiError::Refused { call: call(), why }));
            }
            let (owner, held) = face
                .hold(&owner, f)
                .map_err(|why| fail(ApiError::Refused { call: call(), why }))?;
            let options = options.owner(owner);
            let site = face.site(Role::Listen);
            let params = param_types(hub, &key.text);
            let declares = face.declares(&held);
            // A function taking one parameter more than a collection
            // message carries gets the update after the table.
            // A listener asking for the key is a message listener.
            if plain && row_type(&params).is_some() && declares != Declares::Other {
                let callback = face.table_callback(&held);
                let id = hub
                    .listen_table_raw(&key.text, source, options, Some(site), callback)
                    .map_err(|e| fail(e.into()))?;
                return face.connection(&key.text, id);
            }
            // An empty table stored first says it is a list, not of what.
            let unknown = match params.as_slice() {
                [] => true,
                [Type::Array(element)] => **element == Type::Any,
                _ => false,
            };
            let id = if plain && unknown && declares == Declares::Two {
                // On a key that carries nothing known yet (or an empty
                // list), a function of two may be either: what is sent
                // decides, dispatch by dispatch.
                let table = face.table_callback(&held);
                let message = face.message_callback(&held, Delivery::default());
                hub.listen_table_or_message_raw(
                    &key.text,
                    source,
                    options,
                    Some(site),
                    table,
                    message,
                )
            } else {
                let callback = face.message_callback(&held, delivery);
                let spec = ListenSpec::message(source, options, ListenerParams::Dynamic, callback)
                    .site(site)
                    .with_responder();
                hub.listen_raw(&key.text, spec)
            }
            .map_err(|e| fail(e.into()))?;
            if plain {
                face.listening(id, &held)?;
            }
            face.connection(&key.text, id)
        }
        ApiFunction::ListenRowMessage => {
            // `owner, index, fn [, opts]`
            let owner = take(args, 0);
            let index = face.row_index(&call(), &take(args, 1)).map_err(fail)?;
            let f = listener(face, &call(), fixed + 3, &take(args, 2))?;
            let options = listen_options(face, &call(), take(args, 3))?;
            let (owner, held) = face
                .hold(&owner, f)
                .map_err(|why| fail(ApiError::Refused { call: call(), why }))?;
            let options = options.owner(owner);
            let site = face.site(Role::Listen);
            let callback = face.row_callback(&held);
            let id = hub
                .listen_rows_raw(&key.text, source, index, options, Some(site), callback)
                .map_err(|e| fail(e.into()))?;
            face.connection(&key.text, id)
        }
        ApiFunction::UnbindMessage => {
            let target = take(args, 0);
            let removed = match face.unbind_target(&target) {
                // An id unbinds only the listener it names on this key: a
                // mismatched pair removes nothing (0).
                Unbind::Id(id) => usize::from(
                    id > 0 && hub.unlisten_key(&key.text, ListenerId::from_raw(id as u64)),
                ),
                Unbind::Owner(Some(owner)) => hub.unlisten_owner_on(&key.text, &owner),
                Unbind::Owner(None) => 0,
                Unbind::Neither => {
                    return Err(fail(ApiError::BadArgument {
                        call: call(),
                        position: fixed + 1,
                        naming: None,
                        expected: "a listener id or an owner".into(),
                        got: F::describe(&target),
                    }));
                }
            };
            Ok(F::number(removed as i64))
        }
        ApiFunction::ListenHook => {
            let owner = take(args, 0);
            let f = listener(face, &call(), fixed + 2, &take(args, 1))?;
            // Options first: a refused call leaves no trace under its owner.
            let options = hook_options(face, &call(), take(args, 2))?;
            let (owner, held) = face
                .hold(&owner, f)
                .map_err(|why| fail(ApiError::Refused { call: call(), why }))?;
            let options = options.owner(owner);
            let site = face.site(Role::Listen);
            let callback = face.hook_callback(&held);
            let id = hub
                .listen_hook_raw(&key.text, options, Some(site), callback)
                .map_err(|e| fail(e.into()))?;
            face.connection(&key.text, id)
        }
        ApiFunction::RunHook => {
            record();
            let payload = take(args, 0);
            let expected: Option<Type> = if F::is_table(&payload) {
                param_types(hub, &key.text).into_iter().next()
            } else {
                None
            };
            let mut value = face
                .to_value(&payload, expected.as_ref())
                .map_err(|why| fail(ApiError::BadPayload { call: call(), why }))?;
            let result = hub.run_hook_key(key.key, &mut value);
            face.hook_ran(payload, value, expected, result)
        }
        ApiFunction::StoredArray => {
            record();
            let site = face.site(Role::Send);
            let writer = hub.stored_array_owned(key.key, source).at_site(site);
            face.stored_array(key, writer)
        }
    }
}

/// Refuses `function` on a key the table holds to another kind (see
/// [`ApiFunction::contradicts`]): a hook listened to as a message, a store
/// key run as a hook, a request of a declared key that answers nothing. A
/// key the table does not know yet fits every function: its first use
/// records its kind. `request`: the call asks for an answer (`GMP.Request`,
/// `SendObjectMessage` with a reply function).
pub(crate) fn kind_fits(
    hub: &Hub,
    function: ApiFunction,
    key: &str,
    request: bool,
) -> Result<(), HubError> {
    let table = hub.table();
    let Some(entry) = table.get(key) else {
        return Ok(());
    };
    let declared = entry.origin == Origin::Declared;
    let (kind, fits) = if function.contradicts(entry.kind, declared, !entry.params.is_empty()) {
        (kind_text(entry.kind).to_owned(), kinds_text(function))
    } else if request && declared && entry.response.is_none() {
        (
            format!("{} that answers nothing", kind_text(entry.kind)),
            "request keys, whose listeners answer",
        )
    } else {
        return Ok(());
    };
    Err(HubError::WrongKind {
        key: key.to_owned(),
        kind,
        declared,
        function,
        fits,
    })
}

/// Takes the source argument of functions that have one; the arguments
/// after it.
fn take_source<'a, F: Face>(
    face: &F,
    function: ApiFunction,
    args: &'a mut [F::Value],
) -> Result<(Source, &'a mut [F::Value]), F::Error> {
    if function.source_index().is_none() {
        return Ok((Source::Global, args));
    }
    let world = matches!(
        function,
        ApiFunction::NotifyWorldMessage | ApiFunction::ListenWorldMessage
    );
    let (arg, rest) = match args.split_first_mut() {
        Some((arg, rest)) => (&*arg, rest),
        None => (&F::Value::default(), &mut [][..]),
    };
    match face.source(arg, world) {
        Some(source) => Ok((source, rest)),
        None => Err(face.raise(ApiError::BadArgument {
            call: Call::of(function),
            position: 1,
            naming: None,
            expected: if world {
                "a world (or an object)".into()
            } else {
                format!("an object (a world, or a {} source)", F::NAMED).into()
            },
            got: format!("a {}", F::type_name(arg)),
        })),
    }
}

/// The arity rule where a listener registers: on a key whose parameters
/// are known, a function taking more than the key carries (its params, the
/// responder of a request, the update of a whole-table listener) is
/// refused, with the words of [`super::takes_too_many`]. A key known to
/// carry nothing yet (no params, or an empty list) is left to the first
/// call, as is a function taking any number.
fn takes_more_than_carried(hub: &Hub, key: &str, takes: Option<usize>) -> Option<String> {
    let takes = takes?;
    let table = hub.table();
    let entry = table.get(key)?;
    let unknown = match entry.param_types().as_slice() {
        [] => true,
        [Type::Array(element)] => **element == Type::Any,
        _ => false,
    };
    if unknown || takes <= entry.listener_params_allowed() {
        return None;
    }
    Some(super::takes_too_many(
        takes,
        key,
        entry.params.len(),
        entry.response.is_some(),
    ))
}

/// The listener function of a listen call, at `position` in the call.
fn listener<F: Face>(
    face: &F,
    call: &Call,
    position: usize,
    value: &F::Value,
) -> Result<F::Function, F::Error> {
    match face.function(value) {
        Some(Ok(f)) => Ok(f),
        Some(Err(why)) => Err(face.raise(ApiError::Refused {
            call: call.clone(),
            why,
        })),
        None => Err(face.raise(ApiError::BadArgument {
            call: call.clone(),
            position,
            naming: Some("the listener"),
            expected: F::FUNCTION.into(),
            got: format!("a {}", F::type_name(value)),
        })),
    }
}
