//! The script API: one core per function, reached two ways — the generic
//! function (`NotifyObjectMessage(obj, "Key", ...)`, key resolved and call
//! site recorded per call) and the per-key function the loader bakes
//! literal-key calls into (key resolved and site recorded once, at load).
//! Both run the same core, so they behave the same.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gantry_host::hook::HookOptions;
use gantry_host::{
    ApiFunction, Caller, Key, Language, ListenOptions, ListenSpec, ListenerId, ListenerParams,
    Match, Owner, Reply, Role, Site, Source, Type,
};
use rhai::{Dynamic, FnPtr, INT, Map, NativeCallContext};

use super::convert::{from_value, to_value};
use super::handles::{NamedHandle, ObjectHandle, WorldHandle, fail};
use super::listen::{
    declared_arities, hook_callback, message_callback, row_callback, table_callback,
};
use super::shared::{Script, Shared};
use super::writer::StoredArrayHandle;

type RhaiResult = Result<Dynamic, Box<rhai::EvalAltResult>>;

/// A call's arguments, taken out of Rhai's argument slots. Inline up to
/// four: a send allocates nothing for them.
pub(crate) type Args = smallvec::SmallVec<[Dynamic; 4]>;

/// How a call names its key.
#[derive(Clone)]
pub(crate) struct KeyRef {
    pub key: Key,
    pub text: Rc<str>,
}

/// A send's converted values, inline up to four.
type Values = smallvec::SmallVec<[gantry_host::Value; 4]>;

/// Whether a call site still has to be recorded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sites {
    /// Generic call: record this line once.
    PerCall,
    /// Baked call: recorded at load.
    AtLoad,
}

/// The core of every keyed API function; `args` are the call's arguments
/// without the key.
pub(crate) fn call_api(
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
    let hub = &shared.hub;
    let line = call.call_position().line().unwrap_or(0) as u32;
    let source = take_source(shared, function, &mut args)?;
    let record_send = || {
        if sites == Sites::PerCall
            && script
                .recorded
                .borrow_mut()
                .insert((key.key, line, Role::Send))
        {
            hub.record_site(
                &key.text,
                Site::new(&*script.file, line, Language::Rhai, Role::Send),
            );
        }
    };
    // Where this call is, asked only by a report (a refused send, an
    // unanswered request): the sites themselves are recorded by
    // `record_send` or at load.
    let place = || Some(Site::new(&*script.file, line, Language::Rhai, Role::Send));
    let located = Caller::Located(&place);
    let hub_err = |e: gantry_host::HubError| fail(e.to_string());
    match function {
        ApiFunction::NotifyMessage
        | ApiFunction::NotifyWorldMessage
        | ApiFunction::NotifyObjectMessage => {
            record_send();
            let mut values: Values = convert(shared, key, &args)?;
            hub.send_values(key.key, source, &mut values, located)
                .map_err(hub_err)?;
            Ok(Dynamic::UNIT)
        }
        ApiFunction::SendObjectMessage => {
            let reply = match args.last() {
                Some(last) if last.is_fnptr() => args.pop().and_then(|f| f.try_cast::<FnPtr>()),
                _ => None,
            };
            record_send();
            let mut values: Values = convert(shared, key, &args)?;
            match reply {
                None => {
                    hub.send_values(key.key, source, &mut values, located)
                        .map_err(hub_err)?;
                }
                Some(reply) => {
                    let on_reply = reply_to_function(shared, &script, reply);
                    hub.request_values(key.key, source, &mut values, located, on_reply)
                        .map_err(hub_err)?;
                }
            }
            Ok(Dynamic::UNIT)
        }
        ApiFunction::StoreObjectMessage | ApiFunction::OnceObjectMessage => {
            record_send();
            let values = convert(shared, key, &args)?;
            let once = function == ApiFunction::OnceObjectMessage;
            hub.store_values(key.key, source, values, once, located)
                .map_err(hub_err)?;
            Ok(Dynamic::UNIT)
        }
        ApiFunction::RemoveStoredObjectMessage => {
            record_send();
            Ok(Dynamic::from_bool(hub.remove_stored(key.key, source)))
        }
        ApiFunction::ListenMessage
        | ApiFunction::ListenWorldMessage
        | ApiFunction::ListenObjectMessage => {
            let (owner, f, opts) = listen_args(function, key, args)?;
            let options = listen_options(function, key, &script, &owner, opts.as_ref())?;
            let site = Site::new(&*script.file, line, Language::Rhai, Role::Listen);
            // A function taking one more parameter than a collection key's
            // message (the table) is a whole-table listener: `|items, update|`.
            let takes_two = declared_arities(&script.ast, &f).contains(&2);
            if takes_two && shared.is_table_key(&key.text) {
                let callback = table_callback(shared, &script, f, line);
                let id = hub
                    .listen_table_raw(&key.text, source, options, Some(site), callback)
                    .map_err(hub_err)?;
                return Ok(Dynamic::from_int(id.get() as INT));
            }
            // On a key that carries nothing known yet, a function of two
            // may be either: what is sent decides, dispatch by dispatch.
            if takes_two && shared.param_types(&key.text).is_empty() {
                let table = table_callback(shared, &script, f.clone(), line);
                let message = message_callback(shared, &script, f, line);
                let id = hub
                    .listen_table_or_message_raw(
                        &key.text,
                        source,
                        options,
                        Some(site),
                        table,
                        message,
                    )
                    .map_err(hub_err)?;
                return Ok(Dynamic::from_int(id.get() as INT));
            }
            let callback = message_callback(shared, &script, f, line);
            let spec = ListenSpec::message(source, options, ListenerParams::Dynamic, callback)
                .site(site)
                .with_responder();
            let id = hub.listen_raw(&key.text, spec).map_err(hub_err)?;
            Ok(Dynamic::from_int(id.get() as INT))
        }
        ApiFunction::ListenRowMessage => {
            // `owner, index, fn [, opts]`
            let index = if args.len() > 1 {
                args.remove(1)
            } else {
                Dynamic::UNIT
            };
            let index = index
                .as_int()
                .ok()
                .and_then(|i| i32::try_from(i).ok())
                .ok_or_else(|| {
                    fail(format!(
                        "ListenRowMessage `{}`: argument 4 must be a row index (0-based, \
                         GMP::ALL_ROWS, GMP::WithRemoval(n)), got {}",
                        key.text,
                        index.type_name()
                    ))
                })?;
            let (owner, f, opts) = listen_args(function, key, args)?;
            let options = listen_options(function, key, &script, &owner, opts.as_ref())?;
            let site = Site::new(&*script.file, line, Language::Rhai, Role::Listen);
            let with_update = declared_arities(&script.ast, &f).iter().any(|&n| n >= 3);
            let callback = row_callback(shared, &script, f, line, with_update);
            let id = hub
                .listen_rows_raw(&key.text, source, index, options, Some(site), callback)
                .map_err(hub_err)?;
            Ok(Dynamic::from_int(id.get() as INT))
        }
        ApiFunction::UnbindMessage => {
            let target = args.pop().unwrap_or(Dynamic::UNIT);
            let removed = if let Ok(id) = target.as_int() {
                usize::from(id > 0 && hub.unlisten(ListenerId::from_raw(id as u64)))
            } else if let Some(o) = target.clone().try_cast::<ObjectHandle>() {
                hub.unlisten_owner_on(&key.text, &Owner::Object(o.0))
            } else {
                return Err(fail(format!(
                    "UnbindMessage `{}`: give a listener id or an owner object, got a {}",
                    key.text,
                    target.type_name()
                )));
            };
            Ok(Dynamic::from_int(removed as INT))
        }
        ApiFunction::ListenHook => {
            let (owner, f, opts) = listen_args(function, key, args)?;
            let owner = resolve_owner(&script, &owner)
                .map_err(|e| fail(format!("ListenHook `{}`: {e}", key.text)))?;
            let mut options = HookOptions::new().owner(owner);
            if let Some(opts) = &opts {
                if let Some(priority) = int_option(opts, "priority")? {
                    options = options.priority(priority);
                }
                options.matching = match_option(opts)?;
            }
            let site = Site::new(&*script.file, line, Language::Rhai, Role::Listen);
            let callback = hook_callback(shared, &script, f, line);
            let id = hub
                .listen_hook_raw(&key.text, options, Some(site), callback)
                .map_err(hub_err)?;
            Ok(Dynamic::from_int(id.get() as INT))
        }
        ApiFunction::RunHook => {
            record_send();
            let payload = args.pop().unwrap_or(Dynamic::UNIT);
            let expected: Option<Type> = if payload.is_map() {
                shared.param_types(&key.text).into_iter().next()
            } else {
                None
            };
            let converted = {
                let table = hub.table();
                to_value(&payload, expected.as_ref(), &table.structs)
            };
            let mut value =
                converted.map_err(|e| fail(format!("RunHook `{}` payload: {e}", key.text)))?;
            let result = hub.run_hook_key(key.key, &mut value);
            let mut out = Map::new();
            out.insert("ran".into(), Dynamic::from_int(result.ran as INT));
            out.insert("handled".into(), Dynamic::from_bool(result.handled));
            out.insert("cancelled".into(), Dynamic::from_bool(result.cancelled));
            out.insert("payload".into(), from_value(&value));
            Ok(Dynamic::from_map(out))
        }
        ApiFunction::Request => {
            record_send();
            let values = convert(shared, key, &args)?;
            request_now(shared, key, source, values, located)
        }
        ApiFunction::StoredArray => {
            record_send();
            let site = Site::new(&*script.file, line, Language::Rhai, Role::Send);
            let writer = hub.stored_array_owned(key.key, source).at_site(site);
            Ok(Dynamic::from(StoredArrayHandle::new(
                writer,
                key.text.clone(),
                Rc::downgrade(shared),
                script.file.clone(),
                line,
            )))
        }
    }
}

/// `GMP::Request(obj, key, ...)`: Rhai has no coroutines, so the request is
/// synchronous — the reply is returned when a responder answers during the
/// send (one value: that value; several: an array; none: `()`), and it is
/// an error naming the key when nobody does (no responder, or one that
/// answers later: that late answer is dropped).
fn request_now(
    shared: &Rc<Shared>,
    key: &KeyRef,
    source: Source,
    mut values: Vec<gantry_host::Value>,
    caller: Caller<'_>,
) -> RhaiResult {
    type Answer = Option<Option<Vec<gantry_host::Value>>>;
    let answer: Rc<RefCell<Answer>> = Rc::new(RefCell::new(None));
    let sent = Rc::new(Cell::new(false));
    let on_reply = {
        let answer = answer.clone();
        let sent = sent.clone();
        let key = key.text.clone();
        Box::new(move |reply: Reply<'_>| {
            if sent.get() {
                tracing::debug!(key = %key, "a late answer to GMP::Request is dropped");
                return;
            }
            *answer.borrow_mut() = Some(match reply {
                Reply::Answer(values) => Some(values.to_vec()),
                Reply::Unanswered => None,
            });
        })
    };
    let result = shared
        .hub
        .request_values(key.key, source, &mut values, caller, on_reply);
    sent.set(true);
    result.map_err(|e| fail(e.to_string()))?;
    let answered = answer.borrow_mut().take();
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

/// The options of a listen: owner, `times`, `order`, `match`.
fn listen_options(
    function: ApiFunction,
    key: &KeyRef,
    script: &Script,
    owner: &Dynamic,
    opts: Option<&Map>,
) -> Result<ListenOptions, Box<rhai::EvalAltResult>> {
    let owner = resolve_owner(script, owner)
        .map_err(|e| fail(format!("{function} `{}`: {e}", key.text)))?;
    let mut options = ListenOptions::new().owner(owner);
    if let Some(opts) = opts {
        if let Some(times) = int_option(opts, "times")? {
            options = options.times(times);
        }
        if let Some(order) = int_option(opts, "order")? {
            options = options.order(order);
        }
        options = options.matching(match_option(opts)?);
    }
    Ok(options)
}

fn convert<C: FromIterator<gantry_host::Value>>(
    shared: &Shared,
    key: &KeyRef,
    args: &[Dynamic],
) -> Result<C, Box<rhai::EvalAltResult>> {
    shared
        .values_for(&key.text, args)
        .map_err(|e| fail(format!("`{}` {e}", key.text)))
}

/// Takes the source argument of functions that have one.
fn take_source(
    shared: &Shared,
    function: ApiFunction,
    args: &mut Args,
) -> Result<Source, Box<rhai::EvalAltResult>> {
    if function.source_index().is_none() {
        return Ok(Source::Global);
    }
    if args.is_empty() {
        return Err(fail(format!("{function}: argument 1 must be an object")));
    }
    let arg = args.remove(0);
    let world_fn = matches!(
        function,
        ApiFunction::NotifyWorldMessage | ApiFunction::ListenWorldMessage
    );
    if let Some(w) = arg.clone().try_cast::<WorldHandle>() {
        return Ok(Source::World(w.0));
    }
    if let Some(o) = arg.clone().try_cast::<ObjectHandle>() {
        if world_fn {
            return shared
                .hub
                .world_of(o.0)
                .map(Source::World)
                .ok_or_else(|| fail(format!("{function}: {} does not exist", o.0)));
        }
        return Ok(Source::Object(o.0));
    }
    if let (Some(n), false) = (arg.clone().try_cast::<NamedHandle>(), world_fn) {
        return Ok(n.0);
    }
    Err(fail(format!(
        "{function}: argument 1 must be {}, got a {}",
        if world_fn {
            "a world (or an object)"
        } else {
            "an object (a world, or a GMP::Named source)"
        },
        arg.type_name()
    )))
}

/// Splits `owner, fn [, opts]`.
fn listen_args(
    function: ApiFunction,
    key: &KeyRef,
    args: Args,
) -> Result<(Dynamic, FnPtr, Option<Map>), Box<rhai::EvalAltResult>> {
    let mut args = args.into_iter();
    let owner = args.next().unwrap_or(Dynamic::UNIT);
    let f = args.next().unwrap_or(Dynamic::UNIT);
    let f = if f.is_fnptr() {
        f.cast::<FnPtr>()
    } else if f.is_string() {
        FnPtr::new(f.to_string()).map_err(|e| fail(format!("{function} `{}`: {e}", key.text)))?
    } else {
        return Err(fail(format!(
            "{function} `{}`: the listener must be a function pointer or closure, got a {}",
            key.text,
            f.type_name()
        )));
    };
    let opts = match args.next() {
        None => None,
        Some(o) if o.is_unit() => None,
        Some(o) if o.is_map() => Some(o.cast::<Map>()),
        Some(o) => {
            return Err(fail(format!(
                "{function} `{}`: options must be an object map #{{times:, order:, match:}}, got a {}",
                key.text,
                o.type_name()
            )));
        }
    };
    Ok((owner, f, opts))
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

fn int_option(opts: &Map, name: &str) -> Result<Option<i32>, Box<rhai::EvalAltResult>> {
    match opts.get(name) {
        None => Ok(None),
        Some(v) => v
            .as_int()
            .ok()
            .and_then(|i| i32::try_from(i).ok())
            .map(Some)
            .ok_or_else(|| {
                fail(format!(
                    "option `{name}` must be an integer, got a {}",
                    v.type_name()
                ))
            }),
    }
}

fn match_option(opts: &Map) -> Result<Match, Box<rhai::EvalAltResult>> {
    match opts.get("match") {
        None => Ok(Match::Exact),
        Some(v) => match v.to_string().as_str() {
            "exact" => Ok(Match::Exact),
            "partial" => Ok(Match::Partial),
            other => Err(fail(format!(
                "match must be \"exact\" or \"partial\", got \"{other}\""
            ))),
        },
    }
}

/// A request's reply, delivered to a Rhai function of `script`.
fn reply_to_function(
    shared: &Rc<Shared>,
    script: &Rc<Script>,
    reply: FnPtr,
) -> Box<dyn FnOnce(Reply<'_>)> {
    let weak = Rc::downgrade(shared);
    let script = script.clone();
    Box::new(move |answer: Reply<'_>| {
        let Reply::Answer(values) = answer else {
            // The hub reports unanswered requests.
            return;
        };
        let Some(shared) = weak.upgrade() else {
            return;
        };
        let mut args: Args = values.iter().map(from_value).collect();
        // A reply function may take fewer values than the answer carries.
        super::listen::fit_args(&declared_arities(&script.ast, &reply), &mut args);
        if let Err(e) = super::listen::call_fn(&shared, &script, &reply, args) {
            shared.report(e);
        }
    })
}
