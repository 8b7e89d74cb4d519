//! Rhai definition files (`.d.rhai`), written by rhai itself.
//!
//! An engine without the standard packages gets one function registered per
//! key-baked call (`NotifyObjectMessage__Player__Hurt(obj: Object, dmg:
//! float)`, the key argument removed, see [`gantry_host::baked_name`]) with
//! its parameter names and types, plus the generic API and the `GMP` module;
//! then [`rhai::Engine::definitions`] renders them, so the format is rhai's
//! own and not a guess. The registered functions are never run: this engine
//! only describes.
//!
//! Rhai cannot type a closure's parameters, so each listener's signature is
//! written into the doc comment of its function.

use std::any::TypeId;

use gantry_host::{ApiFunction, KeyEntry, Kind, SignatureTable, Type, baked_name};
use rhai::{Dynamic, Engine, EvalAltResult, FuncRegistration, Module, RhaiFunc, Shared};

use crate::names::{Lang, one_line, param_name};
use crate::shape::{self, Listener, Returns, Slot};

/// The Rhai type name of a table type, as definitions write it.
pub fn rhai_type(ty: &Type) -> &'static str {
    match ty {
        Type::Any => "?",
        Type::Nil => "()",
        Type::Bool => "bool",
        Type::Int => "int",
        Type::Float => "float",
        Type::String => "String",
        Type::Object => "Object",
        Type::Struct(_) => "Map",
        Type::Array(_) => "Array",
    }
}

/// The Rhai-side rendering of a type for doc comments: keeps struct names and
/// element types, which the definition type system cannot express.
fn doc_type(ty: &Type) -> String {
    match ty {
        Type::Struct(name) => format!("Map /* {name} */"),
        Type::Array(inner) => format!(
            "Array /* of {} */",
            doc_type(inner).replace(" /*", "").replace(" */", "")
        ),
        other => rhai_type(other).to_owned(),
    }
}

/// Every definition file, as (file name, content), sorted by name:
/// `__static__.d.rhai` (the baked and generic functions) and `GMP.d.rhai`.
pub fn rhai_definitions(table: &SignatureTable) -> Vec<(String, String)> {
    let engine = definitions_engine(table);
    let mut files: Vec<(String, String)> = engine
        .definitions()
        .include_standard_packages(false)
        .iter_files()
        .collect();
    files.sort();
    files
}

/// The engine whose definitions are the stubs.
fn definitions_engine(table: &SignatureTable) -> Engine {
    let mut engine = Engine::new_raw();
    let describe_only = describe_only_fn();
    let mut global = Module::new();
    let max_params = table
        .keys
        .values()
        .map(|e| e.params.len())
        .max()
        .unwrap_or(0);
    register_generic(&mut global, &describe_only, max_params, false);
    for (key, entry) in table.entries() {
        for function in shape::functions_for(entry) {
            if function.gmp_only() && function != ApiFunction::Request {
                // The writer is reached through `GMP::StoredArray`, never baked as a global.
                continue;
            }
            register_baked(&mut global, &describe_only, key, entry, function);
        }
    }
    register_handles(&mut global, &describe_only, max_response(table));
    engine.register_global_module(global.into());

    let mut gmp = Module::new();
    register_generic(&mut gmp, &describe_only, max_params, true);
    register_gmp_helpers(&mut gmp, &describe_only);
    engine.register_static_module("GMP", gmp.into());
    engine
}

fn max_response(table: &SignatureTable) -> usize {
    table
        .keys
        .values()
        .filter_map(|e| e.response.as_ref().map(Vec::len))
        .max()
        .unwrap_or(0)
}

/// The body every described function shares: it only errors, because the
/// definitions engine never runs a script.
fn describe_only_fn() -> RhaiFunc {
    RhaiFunc::Pure {
        func: Shared::new(|_, _| {
            Err(Box::new(EvalAltResult::ErrorRuntime(
                "gantry-stubs: this engine only describes the API".into(),
                rhai::Position::NONE,
            )))
        }),
        has_context: false,
        is_pure: true,
        is_volatile: false,
    }
}

/// Registers one described function: `params` are `name: type` pairs, the
/// return type last, as `FuncRegistration::with_params_info` expects.
fn describe(
    module: &mut Module,
    func: &RhaiFunc,
    name: &str,
    params: &[String],
    returns: &str,
    comments: &[String],
) {
    let arg_types = vec![TypeId::of::<Dynamic>(); params.len()];
    let mut info: Vec<&str> = params.iter().map(String::as_str).collect();
    info.push(returns);
    let mut reg = FuncRegistration::new(name)
        .in_global_namespace()
        .with_params_info(info);
    if !comments.is_empty() {
        reg = reg.with_comments(comments);
    }
    reg.set_into_module_raw(module, arg_types, func.clone());
}

/// The baked function of (`function`, `key`): the generic call's arguments
/// without the key; optional arguments (options, reply) give a second arity.
fn register_baked(
    module: &mut Module,
    func: &RhaiFunc,
    key: &str,
    entry: &KeyEntry,
    function: ApiFunction,
) {
    let shape = shape::shape(function, entry);
    let mut params: Vec<String> = Vec::with_capacity(shape.slots.len());
    let mut names: Vec<String> = Vec::with_capacity(shape.slots.len());
    let mut optional = Vec::new();
    let mut comments = Vec::with_capacity(2);
    let mut doc = format!("/// `{key}` ({}) {}", entry.kind, entry.signature_label());
    let key_doc = one_line(&entry.doc);
    if !key_doc.is_empty() {
        doc.push_str(" — ");
        doc.push_str(&key_doc);
    }
    for slot in &shape.slots {
        let (raw_name, ty) = match slot {
            Slot::Key => continue,
            Slot::Message(param) => (param.name.as_str(), rhai_type(&param.ty).to_owned()),
            Slot::World => ("world", "World".to_owned()),
            Slot::Object => ("obj", "Object".to_owned()),
            Slot::Owner | Slot::IdOrOwner => (
                if *slot == Slot::Owner {
                    "owner"
                } else {
                    "id_or_owner"
                },
                "?".to_owned(),
            ),
            Slot::RowIndex => ("index", "int".to_owned()),
            Slot::ListenOptions | Slot::HookOptions => ("opts", "Map".to_owned()),
            Slot::Reply => ("reply", "FnPtr".to_owned()),
            Slot::Listener(listener) => {
                doc.push_str(&format!(
                    "\n/// handler: {}",
                    listener_doc(*listener, entry)
                ));
                ("handler", "FnPtr".to_owned())
            }
        };
        let name = param_name(raw_name, Lang::Rhai, &names);
        if slot.optional() {
            optional.push(params.len());
        }
        params.push(format!("{name}: {ty}"));
        names.push(name);
    }
    if let Some(reply) = shape.slots.iter().find(|s| **s == Slot::Reply) {
        debug_assert_eq!(*reply, Slot::Reply);
        doc.push_str(&format!("\n/// reply: {}", response_doc(entry)));
    }
    comments.push(doc);
    let returns = returns_type(shape.returns, entry);
    let name = baked_name(function, key);
    // Without the optional trailing arguments, then with them.
    if let Some(&first_optional) = optional.first() {
        describe(
            module,
            func,
            &name,
            &params[..first_optional],
            &returns,
            &comments,
        );
    }
    describe(module, func, &name, &params, &returns, &comments);
}

fn returns_type(returns: Returns, entry: &KeyEntry) -> String {
    match returns {
        Returns::Nothing => "()".to_owned(),
        Returns::ListenerId => "int".to_owned(),
        Returns::Response => match entry.response.as_deref().unwrap_or_default() {
            [] => "()".to_owned(),
            [one] => rhai_type(&one.ty).to_owned(),
            _ => "Array".to_owned(),
        },
        Returns::HookResult => "Map".to_owned(),
        Returns::StoredArray => "StoredArray".to_owned(),
    }
}

/// `|dmg: float, causer: Object|`: what a listener is called with.
fn listener_doc(listener: Listener, entry: &KeyEntry) -> String {
    let mut parts: Vec<String> = Vec::new();
    match listener {
        Listener::Message => {
            parts.extend(
                entry
                    .params
                    .iter()
                    .map(|p| format!("{}: {}", p.name, doc_type(&p.ty))),
            );
            if entry.response.is_some() {
                parts.push("rsp: Responder".to_owned());
            } else if entry.kind == Kind::Collection {
                parts.push("update: Map /* #{total, prev_total, ranges} */".to_owned());
            }
        }
        Listener::Row => {
            let element = shape::collection_element(entry).unwrap_or("?");
            parts.push("row: int".to_owned());
            parts.push(format!("item: Map /* {element} */"));
        }
        Listener::Hook => {
            let payload = entry
                .params
                .first()
                .map_or_else(|| "?".to_owned(), |p| doc_type(&p.ty));
            parts.push(format!("payload: {payload}"));
            parts.push("ctx: HookContext".to_owned());
        }
    }
    format!("|{}|", parts.join(", "))
}

fn response_doc(entry: &KeyEntry) -> String {
    let parts: Vec<String> = entry
        .response
        .iter()
        .flatten()
        .map(|p| format!("{}: {}", p.name, doc_type(&p.ty)))
        .collect();
    format!("|{}|", parts.join(", "))
}

/// The generic API: the string-key forms a script falls back to when the
/// key is not a literal. Rhai has no varargs, so message functions are
/// described at each arity up to the longest message in the table.
fn register_generic(module: &mut Module, func: &RhaiFunc, max_params: usize, in_gmp: bool) {
    for function in ApiFunction::ALL {
        if function.gmp_only() && !in_gmp {
            continue;
        }
        let (before_key, source): (Vec<String>, Option<String>) = match function.source_index() {
            Some(_) => {
                let ty = if matches!(
                    function,
                    ApiFunction::NotifyWorldMessage | ApiFunction::ListenWorldMessage
                ) {
                    "world: World"
                } else {
                    "obj: Object"
                };
                (vec![ty.to_owned()], Some(ty.to_owned()))
            }
            None => (Vec::new(), None),
        };
        let _ = source;
        let mut head = before_key;
        head.push("key: String".to_owned());
        let doc = vec![format!(
            "/// The generic `{}`: the key is looked up at each call.",
            function.name()
        )];
        let variants: Vec<(Vec<String>, &str)> = match function {
            ApiFunction::NotifyMessage
            | ApiFunction::NotifyWorldMessage
            | ApiFunction::NotifyObjectMessage
            | ApiFunction::StoreObjectMessage
            | ApiFunction::OnceObjectMessage
            | ApiFunction::SendObjectMessage
            | ApiFunction::Request
            | ApiFunction::RunHook => (0..=max_params)
                .map(|n| {
                    let args = (1..=n).map(|i| format!("arg{i}: ?")).collect();
                    let returns = match function {
                        ApiFunction::Request => "?",
                        ApiFunction::RunHook => "Map",
                        _ => "()",
                    };
                    (args, returns)
                })
                .collect(),
            ApiFunction::RemoveStoredObjectMessage => vec![(vec![], "()")],
            ApiFunction::StoredArray => vec![(vec![], "StoredArray")],
            ApiFunction::UnbindMessage => vec![(vec!["id_or_owner: ?".to_owned()], "()")],
            ApiFunction::ListenMessage
            | ApiFunction::ListenWorldMessage
            | ApiFunction::ListenObjectMessage
            | ApiFunction::ListenHook => {
                let base = vec!["owner: ?".to_owned(), "handler: FnPtr".to_owned()];
                let mut with_opts = base.clone();
                with_opts.push("opts: Map".to_owned());
                vec![(base, "int"), (with_opts, "int")]
            }
            ApiFunction::ListenRowMessage => vec![(
                vec![
                    "owner: ?".to_owned(),
                    "index: int".to_owned(),
                    "handler: FnPtr".to_owned(),
                ],
                "int",
            )],
        };
        for (args, returns) in variants {
            let mut params = head.clone();
            params.extend(args);
            describe(module, func, function.name(), &params, returns, &doc);
        }
    }
}

/// Methods of the handles scripts hold: objects, hook contexts, responders
/// and the stored-array writer.
fn register_handles(module: &mut Module, func: &RhaiFunc, max_response: usize) {
    let s = |v: &[&str]| v.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
    let methods: [(&str, Vec<String>, &str, &str); 11] = [
        (
            "World",
            s(&["obj: Object"]),
            "World",
            "/// The world this object lives in.",
        ),
        (
            "Handled",
            s(&["ctx: HookContext"]),
            "()",
            "/// Marks the hook handled; the remaining listeners still run.",
        ),
        (
            "Cancel",
            s(&["ctx: HookContext"]),
            "()",
            "/// Cancels the hook: the remaining listeners do not run.",
        ),
        (
            "Get",
            s(&["items: StoredArray", "i: int"]),
            "Map",
            "/// A copy of row `i` (0-based).",
        ),
        (
            "GetMutable",
            s(&["items: StoredArray", "i: int"]),
            "Map",
            "/// Row `i`, marked changed.",
        ),
        (
            "Add",
            s(&["items: StoredArray", "item: Map"]),
            "int",
            "/// Appends a row; returns its index.",
        ),
        (
            "Insert",
            s(&["items: StoredArray", "i: int", "item: Map"]),
            "()",
            "/// Inserts a row at `i`.",
        ),
        (
            "RemoveAt",
            s(&["items: StoredArray", "i: int"]),
            "()",
            "/// Removes row `i`.",
        ),
        (
            "SetNum",
            s(&["items: StoredArray", "n: int"]),
            "()",
            "/// Grows or shrinks to `n` rows.",
        ),
        (
            "Num",
            s(&["items: StoredArray"]),
            "int",
            "/// The number of rows.",
        ),
        (
            "commit",
            s(&["items: StoredArray"]),
            "()",
            "/// Publishes the changes now (otherwise when the writer's scope ends).",
        ),
    ];
    for (name, params, returns, doc) in methods {
        describe(module, func, name, &params, returns, &[doc.to_owned()]);
    }
    let doc = vec!["/// Answers a request, now or later, once.".to_owned()];
    for n in 0..=max_response {
        let mut params = vec!["rsp: Responder".to_owned()];
        params.extend((1..=n).map(|i| format!("ret{i}: ?")));
        describe(module, func, "Response", &params, "()", &doc);
    }
}

/// `GMP::AllRows`, `GMP::WithRemoval(n)`, the object helpers.
fn register_gmp_helpers(module: &mut Module, func: &RhaiFunc) {
    // Constants are described by their type; the values are the runtime's.
    module.set_var("AllRows", 0 as rhai::INT);
    module.set_var("AllRowsWithRemoval", 0 as rhai::INT);
    let s = |v: &[&str]| v.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
    let helpers: [(&str, Vec<String>, &str, &str); 5] = [
        (
            "WithRemoval",
            s(&["n: int"]),
            "int",
            "/// Row `n`, also hearing its removal.",
        ),
        (
            "Spawn",
            s(&[]),
            "Object",
            "/// Creates an object in the script's world.",
        ),
        (
            "Spawn",
            s(&["world: World"]),
            "Object",
            "/// Creates an object in a world.",
        ),
        (
            "Destroy",
            s(&["obj: Object"]),
            "()",
            "/// Destroys an object and everything it owns or sources.",
        ),
        (
            "Named",
            s(&["obj: Object", "name: String"]),
            "Object",
            "/// A composite source: the object plus a name.",
        ),
    ];
    for (name, params, returns, doc) in helpers {
        describe(module, func, name, &params, returns, &[doc.to_owned()]);
    }
}
