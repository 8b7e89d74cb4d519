//! How the script API reaches the engine: the generic functions (global and
//! under `GMP::`), the object functions, and the per-key baked functions.
//!
//! Rhai has no variadic functions, so every function with trailing message
//! arguments is registered once per arity (0..=[`MAX_ARGS`] message
//! arguments). Baked functions are registered lazily, per key, before the
//! script that uses them compiles: when the key's parameters are known, with
//! their names and types (so [`rhai::Engine::definitions`] describes them),
//! else for every arity. Either way a baked function also takes every
//! argument list its generic function takes, so a call the typed layout
//! does not fit (a prefix of the parameters, a mismatch, anything in
//! unchecked mode) reaches the hub, which checks, converts and reports it
//! exactly as for the generic call: baking never changes what a call does.

use std::any::TypeId;
use std::rc::{Rc, Weak};

use gantry_host::{ApiFunction, Type, baked_name};
use rhai::{
    Array, Dynamic, Engine, FnPtr, FuncRegistration, INT, ImmutableString, Map, Module,
    NativeCallContext, RhaiFunc,
};

use gantry_host::face::{ApiError, Call, KeyRef, Sites};

use super::api::{Args, call, key_text};
use super::handles::{NamedHandle, ObjectHandle, ResponderHandle, WorldHandle, fail};
use super::lane::SendLane;
use super::shared::Shared;

/// Most message arguments a generic or untyped baked call takes.
pub const MAX_ARGS: usize = 8;

type RhaiResult = Result<Dynamic, Box<rhai::EvalAltResult>>;

/// The API functions the runtime serves: all of them (`GMP::Request` is
/// synchronous, as Rhai has no coroutines).
const SERVED: [ApiFunction; 16] = ApiFunction::ALL;

/// How many arguments follow the key (and source): the allowed counts.
fn trailing_arities(function: ApiFunction) -> std::ops::RangeInclusive<usize> {
    match function {
        ApiFunction::NotifyMessage
        | ApiFunction::NotifyWorldMessage
        | ApiFunction::NotifyObjectMessage
        | ApiFunction::StoreObjectMessage
        | ApiFunction::OnceObjectMessage
        | ApiFunction::Request => 0..=MAX_ARGS,
        ApiFunction::SendObjectMessage => 0..=MAX_ARGS + 1,
        ApiFunction::RemoveStoredObjectMessage | ApiFunction::StoredArray => 0..=0,
        ApiFunction::ListenRowMessage => 3..=4,
        ApiFunction::ListenMessage
        | ApiFunction::ListenWorldMessage
        | ApiFunction::ListenObjectMessage
        | ApiFunction::ListenHook => 2..=3,
        ApiFunction::UnbindMessage | ApiFunction::RunHook => 1..=1,
    }
}

/// Adds a native function taking its arguments by value.
fn add_raw(
    module: &mut Module,
    name: &str,
    types: Vec<TypeId>,
    params_info: Vec<String>,
    f: impl Fn(NativeCallContext, &mut [&mut Dynamic]) -> RhaiResult + 'static,
) {
    // The last entry of the params info is the return type.
    let mut params_info = params_info;
    if params_info.len() == types.len() {
        params_info.push("Dynamic".into());
    }
    let func = RhaiFunc::Pure {
        func: rhai::Shared::new(
            move |ctx: Option<NativeCallContext>, args: &mut [&mut Dynamic]| match ctx {
                Some(ctx) => {
                    // Rhai does not place errors of every call form (a
                    // `GMP::` call in an interpolation): place them here.
                    let at = ctx.call_position();
                    // A handler this call runs (a send to a Rhai listener)
                    // goes on from this call's depth, when it is deep.
                    let level = ctx.call_level();
                    let _depth = (level > super::listen::FREE_DEPTH)
                        .then(|| super::listen::CallDepth::enter(level));
                    f(ctx, args).map_err(|mut e| {
                        if e.position().is_none() {
                            e.set_position(at);
                        }
                        e
                    })
                }
                None => Err(fail("called without a context")),
            },
        ),
        has_context: true,
        is_pure: true,
        is_volatile: true,
    };
    FuncRegistration::new(name)
        .in_global_namespace()
        .with_params_info(params_info)
        .set_into_module_raw(module, types, func);
}

fn take_all(args: &mut [&mut Dynamic]) -> Args {
    args.iter_mut().map(|a| std::mem::take(*a)).collect()
}

fn shared_of(weak: &Weak<Shared>) -> Result<Rc<Shared>, Box<rhai::EvalAltResult>> {
    weak.upgrade()
        .ok_or_else(|| fail("the gantry runtime is gone"))
}

/// The generic functions, one per arity, into `module`.
pub(crate) fn generic_functions(module: &mut Module, shared: &Weak<Shared>) {
    for function in SERVED {
        let fixed = function.key_index() + 1;
        for trailing in trailing_arities(function) {
            let n = fixed + trailing;
            let weak = shared.clone();
            let mut info: Vec<String> = (0..n).map(|i| format!("arg{i}: Dynamic")).collect();
            info[function.key_index()] = "key: String".to_owned();
            add_raw(
                module,
                function.name(),
                vec![TypeId::of::<Dynamic>(); n],
                info,
                move |ctx, args| {
                    let shared = shared_of(&weak)?;
                    let mut args = take_all(args);
                    let text = key_text(function, &args.remove(function.key_index()))?;
                    let key = shared.hub.key(&text).map_err(|e| {
                        let why = e.to_string();
                        fail(
                            ApiError::Refused {
                                call: Call::of(function),
                                why,
                            }
                            .to_string(),
                        )
                    })?;
                    let key = KeyRef {
                        key,
                        text: Rc::from(text.as_str()),
                    };
                    call(&shared, &ctx, function, &key, args, Sites::PerCall)
                },
            );
        }
    }
}

/// The object functions: `Spawn`, `Destroy`, `Named`, `This`.
pub(crate) fn object_functions(module: &mut Module, shared: &Weak<Shared>) {
    add_this(module, shared);
    let weak = shared.clone();
    add_raw(
        module,
        "Spawn",
        vec![],
        vec!["Object".into()],
        move |_, _| {
            let shared = shared_of(&weak)?;
            let script = shared
                .current()
                .ok_or_else(|| fail("Spawn: no script is running"))?;
            let world = shared.hub.world_of(script.object).unwrap_or(script.world);
            let o = shared
                .hub
                .spawn(world)
                .map_err(|e| fail(format!("Spawn: {e}")))?;
            Ok(Dynamic::from(ObjectHandle(o)))
        },
    );
    let weak = shared.clone();
    add_raw(
        module,
        "Spawn",
        vec![TypeId::of::<WorldHandle>()],
        vec!["world: World".into(), "Object".into()],
        move |_, args| {
            let shared = shared_of(&weak)?;
            let world = std::mem::take(args[0]).cast::<WorldHandle>();
            let o = shared
                .hub
                .spawn(world.0)
                .map_err(|e| fail(format!("Spawn: {e}")))?;
            Ok(Dynamic::from(ObjectHandle(o)))
        },
    );
    let weak = shared.clone();
    add_raw(
        module,
        "Destroy",
        vec![TypeId::of::<ObjectHandle>()],
        vec!["obj: Object".into()],
        move |_, args| {
            let shared = shared_of(&weak)?;
            let o = std::mem::take(args[0]).cast::<ObjectHandle>();
            shared
                .hub
                .destroy(o.0)
                .map_err(|e| fail(format!("Destroy: {e}")))?;
            Ok(Dynamic::UNIT)
        },
    );
    let weak = shared.clone();
    add_raw(
        module,
        "Named",
        vec![
            TypeId::of::<ObjectHandle>(),
            TypeId::of::<ImmutableString>(),
        ],
        vec!["obj: Object".into(), "name: String".into(), "Named".into()],
        move |_, args| {
            let shared = shared_of(&weak)?;
            let o = std::mem::take(args[0]).cast::<ObjectHandle>();
            let name = std::mem::take(args[1]).cast::<ImmutableString>();
            let named = shared
                .hub
                .try_named(o.0, &name)
                .map_err(|e| fail(format!("GMP::Named: {e}")))?;
            Ok(Dynamic::from(NamedHandle(named)))
        },
    );
    let weak = shared.clone();
    add_raw(
        module,
        "RemoveNamed",
        vec![
            TypeId::of::<ObjectHandle>(),
            TypeId::of::<ImmutableString>(),
        ],
        vec!["obj: Object".into(), "name: String".into(), "INT".into()],
        move |_, args| {
            let shared = shared_of(&weak)?;
            let o = std::mem::take(args[0]).cast::<ObjectHandle>();
            let name = std::mem::take(args[1]).cast::<ImmutableString>();
            // A gone object has no named sources left: nothing to remove.
            let removed = shared.hub.remove_named(o.0, &name).unwrap_or(0);
            Ok(Dynamic::from(removed as INT))
        },
    );
}

/// `rsp.Response(...)` for every arity.
pub(crate) fn responder_functions(module: &mut Module, shared: &Weak<Shared>) {
    for n in 0..=MAX_ARGS {
        let weak = shared.clone();
        let mut types = vec![TypeId::of::<ResponderHandle>()];
        types.extend(std::iter::repeat_n(TypeId::of::<Dynamic>(), n));
        let mut info = vec!["rsp: Responder".to_owned()];
        info.extend((0..n).map(|i| format!("value{i}: Dynamic")));
        info.push("bool".into());
        add_raw(module, "Response", types, info, move |_, args| {
            let shared = shared_of(&weak)?;
            let mut args = take_all(args);
            let rsp = args.remove(0).cast::<ResponderHandle>();
            let values = shared.response_values(&rsp.key, &args).map_err(fail)?;
            Ok(Dynamic::from_bool(rsp.responder.respond_values(&values)))
        });
    }
}

/// The Rhai type a baked parameter of `ty` is checked as. Floats take ints
/// (the hub's compatibility rule), so they stay dynamic.
fn type_id_of(ty: &Type) -> (TypeId, &'static str) {
    match ty {
        Type::Int => (TypeId::of::<INT>(), "INT"),
        Type::Bool => (TypeId::of::<bool>(), "bool"),
        Type::String => (TypeId::of::<ImmutableString>(), "String"),
        Type::Object => (TypeId::of::<ObjectHandle>(), "Object"),
        Type::Struct(_) => (TypeId::of::<Map>(), "Map"),
        Type::Array(_) => (TypeId::of::<Array>(), "Array"),
        Type::Float => (TypeId::of::<Dynamic>(), "FLOAT"),
        Type::Any | Type::Nil => (TypeId::of::<Dynamic>(), "Dynamic"),
    }
}

/// One parameter list of a baked function: (types, params info).
type Layout = (Vec<TypeId>, Vec<String>);

/// Every parameter list the baked function for (`function`, `key`) takes.
fn baked_layouts(shared: &Shared, function: ApiFunction, key: &str) -> Vec<Layout> {
    let dynamic = |name: &str| (TypeId::of::<Dynamic>(), format!("{name}: Dynamic"));
    let mut head: Vec<(TypeId, String)> = Vec::new();
    if function.source_index().is_some() {
        head.push(dynamic("source"));
    }
    // Known once a first use recorded parameters; a key seen only at call
    // sites so far takes any arity.
    let known: Option<Vec<(String, Type)>> = shared.hub.table().get(key).and_then(|e| {
        (!e.params.is_empty()).then(|| {
            e.params
                .iter()
                .map(|p| (p.name.clone(), p.ty.clone()))
                .collect()
        })
    });
    let layout =
        |extra: Vec<(TypeId, String)>| -> Layout { head.iter().cloned().chain(extra).unzip() };
    let untyped = |range: std::ops::RangeInclusive<usize>| -> Vec<Layout> {
        range
            .map(|n| layout((0..n).map(|i| dynamic(&format!("arg{i}"))).collect()))
            .collect()
    };
    let mut layouts = match function {
        ApiFunction::NotifyMessage
        | ApiFunction::NotifyWorldMessage
        | ApiFunction::NotifyObjectMessage
        | ApiFunction::StoreObjectMessage
        | ApiFunction::OnceObjectMessage
        | ApiFunction::SendObjectMessage
        | ApiFunction::Request => {
            let mut layouts = match &known {
                Some(params) => {
                    let typed: Vec<(TypeId, String)> = params
                        .iter()
                        .map(|(name, ty)| {
                            let (id, rhai) = type_id_of(ty);
                            (id, format!("{name}: {rhai}"))
                        })
                        .collect();
                    vec![layout(typed)]
                }
                None => untyped(0..=MAX_ARGS),
            };
            if function == ApiFunction::SendObjectMessage {
                let with_reply: Vec<Layout> = layouts
                    .iter()
                    .map(|(types, info)| {
                        let mut types = types.clone();
                        let mut info = info.clone();
                        types.push(TypeId::of::<FnPtr>());
                        info.push("reply: FnPtr".into());
                        (types, info)
                    })
                    .collect();
                layouts.extend(with_reply);
            }
            layouts
        }
        ApiFunction::ListenMessage
        | ApiFunction::ListenWorldMessage
        | ApiFunction::ListenObjectMessage
        | ApiFunction::ListenHook => {
            let base = vec![
                dynamic("owner"),
                (TypeId::of::<FnPtr>(), "listener: FnPtr".to_owned()),
            ];
            let mut with_opts = base.clone();
            with_opts.push((TypeId::of::<Map>(), "options: Map".to_owned()));
            vec![layout(base), layout(with_opts)]
        }
        ApiFunction::ListenRowMessage => {
            let base = vec![
                dynamic("owner"),
                (TypeId::of::<INT>(), "index: INT".to_owned()),
                (TypeId::of::<FnPtr>(), "listener: FnPtr".to_owned()),
            ];
            let mut with_opts = base.clone();
            with_opts.push((TypeId::of::<Map>(), "options: Map".to_owned()));
            vec![layout(base), layout(with_opts)]
        }
        ApiFunction::RemoveStoredObjectMessage | ApiFunction::StoredArray => {
            vec![layout(vec![])]
        }
        ApiFunction::UnbindMessage => vec![layout(vec![dynamic("id_or_owner")])],
        ApiFunction::RunHook => vec![layout(vec![dynamic("payload")])],
    };
    // Whatever the generic function takes, the baked one takes too (see
    // the module doc): Rhai picks the typed layout when the arguments fit
    // it exactly and one of these otherwise.
    for (types, info) in untyped(trailing_arities(function)) {
        if !layouts.iter().any(|(known, _)| *known == types) {
            layouts.push((types, info));
        }
    }
    layouts
}

/// Adds the baked function for (`function`, `key`) to `module` unless the
/// engine has it already. Returns whether it was added.
pub(crate) fn bake(
    module: &mut Module,
    shared: &Rc<Shared>,
    function: ApiFunction,
    key: &str,
) -> Result<bool, gantry_host::HubError> {
    let name = baked_name(function, key);
    if shared.baked.borrow().contains(&name) {
        return Ok(false);
    }
    let key = KeyRef {
        key: shared.hub.key(key)?,
        text: Rc::from(key),
    };
    // One lane for every layout of the function (see `lane`).
    let lane = super::lane::takes_lane(function).then(|| Rc::new(SendLane::default()));
    for (types, info) in baked_layouts(shared, function, &key.text) {
        let weak = Rc::downgrade(shared);
        let key = key.clone();
        let lane = lane.clone();
        add_raw(module, &name, types, info, move |ctx, args| {
            let shared = shared_of(&weak)?;
            if let Some(lane) = &lane
                && lane.send(&shared, function, key.key, &key.text, args)
            {
                return Ok(Dynamic::UNIT);
            }
            call(&shared, &ctx, function, &key, take_all(args), Sites::AtLoad)
        });
    }
    shared.baked.borrow_mut().insert(name);
    Ok(true)
}

/// Registers the generic API, object and responder functions on `engine`.
pub(crate) fn install(engine: &mut Engine, shared: &Weak<Shared>) {
    let mut global = Module::new();
    generic_functions(&mut global, shared);
    responder_functions(&mut global, shared);
    add_this(&mut global, shared);
    engine.register_global_module(global.into());
    let mut gmp = Module::new();
    generic_functions(&mut gmp, shared);
    object_functions(&mut gmp, shared);
    row_constants(&mut gmp);
    engine.register_static_module("GMP", gmp.into());
}

fn add_this(module: &mut Module, shared: &Weak<Shared>) {
    let weak = shared.clone();
    add_raw(
        module,
        "This",
        vec![],
        vec!["Object".into()],
        move |_, _| {
            let shared = shared_of(&weak)?;
            let script = shared
                .current()
                .ok_or_else(|| fail("This: no script is running"))?;
            Ok(Dynamic::from(ObjectHandle(script.object)))
        },
    );
}

/// The row-index encoding of `ListenRowMessage`, as in
/// `gantry_host::collection`: `GMP::ALL_ROWS` (every changed row),
/// `GMP::ALL_ROWS_WITH_REMOVAL` (and told of removed rows),
/// `GMP::WithRemoval(n)` (slot `n`, told when it disappears). `AllRows` and
/// `AllRowsWithRemoval` are the same values under the other languages' names.
fn row_constants(module: &mut Module) {
    use gantry_host::collection::{ALL_ROWS, ALL_ROWS_WITH_REMOVAL, with_removal};
    for (name, value) in [
        ("ALL_ROWS", ALL_ROWS),
        ("AllRows", ALL_ROWS),
        ("ALL_ROWS_WITH_REMOVAL", ALL_ROWS_WITH_REMOVAL),
        ("AllRowsWithRemoval", ALL_ROWS_WITH_REMOVAL),
    ] {
        module.set_var(name, INT::from(value));
    }
    add_raw(
        module,
        "WithRemoval",
        vec![TypeId::of::<INT>()],
        vec!["n: INT".into(), "INT".into()],
        |_, args| {
            let n = args[0].as_int().unwrap_or_default();
            let n = i32::try_from(n).map_err(|_| {
                fail(format!(
                    "WithRemoval: a row index is a 32-bit number, got {n}"
                ))
            })?;
            Ok(Dynamic::from_int(INT::from(with_removal(n))))
        },
    );
}
