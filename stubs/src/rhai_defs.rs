//! Rhai definition files (`.d.rhai`), in the format of rhai's own
//! `Engine::definitions`.
//!
//! What is described: one function per key-baked call
//! (`NotifyObjectMessage__Player__Hurt(obj: Object, dmg: float)`, the key
//! argument removed, see [`gantry_host::baked_name`]) with its parameter
//! names and types, plus the generic API, the handle methods and the `GMP`
//! module. Rhai cannot type a closure's parameters, so each listener's
//! signature is written into the doc comment of its function.
//!
//! Why the text is written here and not by rhai: registering those
//! functions on an `Engine` and asking it for `Engine::definitions` is the
//! natural way to get rhai's format, and it was the first implementation —
//! but with 10,000 keys (about 110,000 functions) it took 14 s, where the
//! goal is 100 ms: rhai builds a string per comparison while sorting, maps
//! every type name through a chain of replacements, and then drops a module
//! of 110,000 registrations. So the functions are described once (`Sink`)
//! and rendered two ways: [`rhai_definitions`] writes rhai's format
//! directly, and the test `rhai_definitions_match_engine_definitions`
//! registers the same descriptions on an engine and requires
//! `Engine::definitions` to give the same files byte for byte, on a table
//! with every type, kind and naming corner. That test is what keeps the
//! format rhai's and not a guess: a rhai release that writes differently
//! fails it.
//!
//! The order is rhai's: a module's constants by name, then its functions by
//! name, parameter count and parameter text. No two functions here share a
//! name and a count (baked names are injective, generic arities differ), so
//! that order is total and never depends on rhai's hash maps; the writer
//! reaches it without sorting the 110,000 names (see `write_static`).

use gantry_host::{ApiFunction, KeyEntry, Kind, SignatureTable, Type, baked_name};

use crate::names::{self, Lang, one_line, param_name};
use crate::shape::{self, FunctionSet, Listener, Returns, Slot};

/// The Rhai type name of a table type, as definitions are registered with it.
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

/// How a type is written in the definitions: as Rhai's own definitions
/// write its standard types (`Array`, `Map`, `FnPtr`, never the
/// shorthands `array`, `map`, `Fn`), so the two read alike in an editor.
/// The engine test registers these names in a path, which Rhai prints so.
fn printed_type(registered: &'static str) -> &'static str {
    registered
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

/// The file of the global functions.
const STATIC_FILE: &str = "__static__.d.rhai";
/// The static module scripts reach as `GMP::...`.
const GMP_MODULE: &str = "GMP";
/// `GMP`'s constants, sorted (their values are the runtime's; definitions
/// only say they are `int`): the row encodings under Rhai's constant names
/// and under the other languages' names.
const GMP_CONSTANTS: [&str; 4] = [
    "ALL_ROWS",
    "ALL_ROWS_WITH_REMOVAL",
    "AllRows",
    "AllRowsWithRemoval",
];

/// Every definition file, as (file name, content), sorted by name:
/// `__static__.d.rhai` (the baked and generic functions) and `GMP.d.rhai`.
pub fn rhai_definitions(table: &SignatureTable) -> Vec<(String, String)> {
    let limits = Limits::of(table);
    let mut files = vec![
        (STATIC_FILE.to_owned(), write_static(table, limits)),
        (format!("{GMP_MODULE}.d.rhai"), write_gmp(limits)),
    ];
    files.sort();
    files
}

/// One registered parameter: name and registration type.
pub(crate) type ParamDef<'d> = (&'d str, &'static str);

/// One described function, in the terms rhai is given when registering it.
struct FnDef<'d> {
    /// The name, in pieces that join to it (a baked name is the function,
    /// `__` and the encoded key, so it is never allocated).
    name: &'d [&'d str],
    params: &'d [ParamDef<'d>],
    returns: &'static str,
    /// One doc comment (`///` lines joined by `\n`), in pieces; none if empty.
    comment: &'d [&'d str],
}

/// Where described functions go: the direct writer, or (in the test) an
/// engine.
trait Sink {
    fn function(&mut self, f: &FnDef<'_>);
}

/// Table-wide sizes of the generic forms.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// The most message parameters of any key: the generic message
    /// functions are described at each arity up to it.
    params: usize,
    /// The most response values of any request: `Response` arities.
    response: usize,
}

impl Limits {
    fn of(table: &SignatureTable) -> Limits {
        let keys = table.keys.values();
        Limits {
            params: keys.clone().map(|e| e.params.len()).max().unwrap_or(0),
            response: keys
                .filter_map(|e| e.response.as_ref().map(Vec::len))
                .max()
                .unwrap_or(0),
        }
    }
}

/// What the baked functions need of one key, computed once: its ten or so
/// functions share the doc line, parameter names and listener docs.
struct BakedKey<'a> {
    key: &'a str,
    entry: &'a KeyEntry,
    /// The functions baked for it, as globals.
    functions: FunctionSet,
    /// The encoded key of its baked names: `Player__Hurt`.
    suffix: String,
    /// ``/// `Player.Hurt` (event) (dmg: float) — Damage taken``.
    doc: String,
    /// The message parameter names, and after `world` / `obj` where those differ.
    names: Vec<String>,
    names_after_world: Option<Vec<String>>,
    names_after_obj: Option<Vec<String>>,
    /// `reply`, unless a message parameter took the name.
    reply_name: String,
    /// `\n/// handler: |...|` per listener kind the functions take, else empty.
    handler_message: String,
    handler_row: String,
    handler_hook: String,
    /// `\n/// reply: |...|` of a request, else empty.
    reply_doc: String,
}

impl<'a> BakedKey<'a> {
    fn new(key: &'a str, entry: &'a KeyEntry, suffix: String) -> BakedKey<'a> {
        // Every function is baked as a global, `GMP::Request` and
        // `GMP::StoredArray` too (the runtime registers them so).
        let functions = FunctionSet::of(entry);
        // Parameter names come from the table file: a newline in one must not
        // end the comment.
        let mut doc = format!(
            "/// `{key}` ({}) {}",
            entry.kind,
            one_line(&entry.signature_label())
        );
        let key_doc = one_line(&entry.doc);
        if !key_doc.is_empty() {
            doc.push_str(" — ");
            doc.push_str(&key_doc);
        }
        let raw = || entry.params.iter().map(|p| p.name.as_str());
        let names = names::param_names(raw(), Lang::Rhai, &[]);
        let names_after_world = names::param_names_after(&names, "world", raw(), Lang::Rhai, &[]);
        let names_after_obj = names::param_names_after(&names, "obj", raw(), Lang::Rhai, &[]);
        let mut reply_name = String::new();
        let mut reply_doc = String::new();
        if shape::is_request(entry) {
            let mut taken = vec!["obj".to_owned()];
            taken.extend_from_slice(names_after_obj.as_ref().unwrap_or(&names));
            reply_name = param_name("reply", Lang::Rhai, &taken);
            reply_doc = format!("\n/// reply: {}", one_line(&response_doc(entry)));
        }
        let handler = |listener: Listener, function: ApiFunction| {
            if functions.contains(function) {
                format!(
                    "\n/// handler: {}",
                    one_line(&listener_doc(listener, entry))
                )
            } else {
                String::new()
            }
        };
        BakedKey {
            key,
            entry,
            suffix,
            doc,
            names,
            names_after_world,
            names_after_obj,
            reply_name,
            handler_message: handler(Listener::Message, ApiFunction::ListenMessage),
            handler_row: handler(Listener::Row, ApiFunction::ListenRowMessage),
            handler_hook: handler(Listener::Hook, ApiFunction::ListenHook),
            reply_doc,
            functions,
        }
    }

    /// The baked function of (`function`, this key): the generic call's
    /// arguments without the key; optional arguments (options, reply) give
    /// a second arity. `slots` and `params` are reused buffers.
    fn describe<'k>(
        &'k self,
        function: ApiFunction,
        sink: &mut dyn Sink,
        slots: &mut Vec<Slot<'k>>,
        params: &mut Vec<ParamDef<'k>>,
    ) {
        let returns = returns_type(shape::shape_into(function, self.entry, slots), self.entry);
        let names = match slots.first() {
            Some(Slot::World) => self.names_after_world.as_ref(),
            Some(Slot::Object) => self.names_after_obj.as_ref(),
            _ => None,
        }
        .unwrap_or(&self.names);
        params.clear();
        let mut message = 0;
        let mut first_optional = None;
        let mut extra_doc = "";
        for &slot in slots.iter() {
            let param = match slot {
                Slot::Key => continue,
                Slot::Message(p) => {
                    message += 1;
                    (names[message - 1].as_str(), rhai_type(&p.ty))
                }
                Slot::Reply => {
                    extra_doc = &self.reply_doc;
                    (self.reply_name.as_str(), "FnPtr")
                }
                Slot::Listener(listener) => {
                    extra_doc = match listener {
                        Listener::Message => &self.handler_message,
                        Listener::Row => &self.handler_row,
                        Listener::Hook => &self.handler_hook,
                    };
                    HANDLER
                }
                Slot::World
                | Slot::Object
                | Slot::Owner
                | Slot::IdOrOwner
                | Slot::RowIndex
                | Slot::ListenOptions
                | Slot::HookOptions => fixed_param(slot).unwrap_or(HANDLER),
            };
            if slot.optional() && first_optional.is_none() {
                first_optional = Some(params.len());
            }
            params.push(param);
        }
        let name = [function.name(), "__", self.suffix.as_str()];
        debug_assert_eq!(name.concat(), baked_name(function, self.key));
        let comment = [self.doc.as_str(), extra_doc];
        let mut def = FnDef {
            name: &name,
            params,
            returns,
            comment: &comment,
        };
        // Without the optional trailing arguments, then with them.
        if let Some(n) = first_optional {
            def.params = &params[..n];
            sink.function(&def);
            def.params = params;
        }
        sink.function(&def);
    }
}

/// The listener argument: named alike for every key.
const HANDLER: ParamDef<'static> = ("handler", "FnPtr");

/// The Rhai name and registered type of an argument that is the same for
/// every key (a source, the owner, the options, the listener); `None` for
/// the key, a message value and the reply, which depend on the key.
pub(crate) fn fixed_param(slot: Slot<'_>) -> Option<ParamDef<'static>> {
    Some(match slot {
        Slot::World => ("world", "World"),
        Slot::Object => ("obj", "Object"),
        Slot::Owner => ("owner", "?"),
        Slot::IdOrOwner => ("id_or_owner", "?"),
        Slot::RowIndex => ("index", "int"),
        Slot::ListenOptions | Slot::HookOptions => ("opts", "Map"),
        Slot::Listener(_) => HANDLER,
        Slot::Key | Slot::Message(_) | Slot::Reply => return None,
    })
}

/// The encoded key of every baked name of `key`: `Player__Hurt`, as
/// [`baked_name`] encodes it after the function and `__`.
fn baked_suffix(key: &str) -> String {
    let probe = ApiFunction::NotifyMessage;
    baked_name(probe, key).split_off(probe.name().len() + 2)
}

pub(crate) fn returns_type(returns: Returns, entry: &KeyEntry) -> &'static str {
    match returns {
        Returns::Nothing => "()",
        Returns::Removed => "bool",
        Returns::Unbound => "int",
        Returns::ListenerId => "Connection",
        Returns::Response => match entry.response.as_deref().unwrap_or_default() {
            [] => "()",
            [one] => rhai_type(&one.ty),
            _ => "Array",
        },
        Returns::HookResult => "Map",
        Returns::StoredArray => "StoredArray",
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
            parts.push("ctx: HookCtx".to_owned());
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
/// described at each arity up to the longest message in the table. The
/// `gmp_only` functions (`Request`, `StoredArray`) are globals too in Rhai:
/// the runtime registers every generic function in both places.
fn describe_generic(sink: &mut dyn Sink, limits: Limits) {
    let arg_names: Vec<String> = (1..=limits.params).map(|i| format!("arg{i}")).collect();
    for function in ApiFunction::ALL {
        let head: &[ParamDef<'_>] = match function.source_index() {
            None => &[("key", "String")],
            Some(_)
                if matches!(
                    function,
                    ApiFunction::NotifyWorldMessage | ApiFunction::ListenWorldMessage
                ) =>
            {
                &[("world", "World"), ("key", "String")]
            }
            Some(_) => &[("obj", "Object"), ("key", "String")],
        };
        let comment = format!(
            "/// The generic `{}`: the key is looked up at each call.",
            function.name()
        );
        let mut describe = |tail: &[ParamDef<'_>], returns: &'static str| {
            let params = [head, tail].concat();
            sink.function(&FnDef {
                name: &[function.name()],
                params: &params,
                returns,
                comment: &[&comment],
            });
        };
        match function {
            ApiFunction::NotifyMessage
            | ApiFunction::NotifyWorldMessage
            | ApiFunction::NotifyObjectMessage
            | ApiFunction::StoreObjectMessage
            | ApiFunction::OnceObjectMessage
            | ApiFunction::SendObjectMessage
            | ApiFunction::Request => {
                let returns = match function {
                    ApiFunction::Request => "?",
                    _ => "()",
                };
                let args: Vec<ParamDef<'_>> = arg_names.iter().map(|n| (n.as_str(), "?")).collect();
                for n in 0..=limits.params {
                    describe(&args[..n], returns);
                }
            }
            ApiFunction::RunHook => describe(&[("payload", "?")], "Map"),
            ApiFunction::RemoveStoredObjectMessage => describe(&[], "bool"),
            ApiFunction::StoredArray => describe(&[], "StoredArray"),
            ApiFunction::UnbindMessage => describe(&[("id_or_owner", "?")], "int"),
            ApiFunction::ListenMessage
            | ApiFunction::ListenWorldMessage
            | ApiFunction::ListenObjectMessage => {
                describe(&[("owner", "?"), ("handler", "FnPtr")], "Connection");
                sink.function(&FnDef {
                    name: &[function.name()],
                    params: &[
                        head,
                        &[("owner", "?"), ("handler", "FnPtr"), ("opts", "Map")],
                    ]
                    .concat(),
                    returns: "Connection",
                    comment: &[&comment, "\n", MESSAGE_OPTIONS],
                });
            }
            ApiFunction::ListenHook => {
                describe(&[("owner", "?"), ("handler", "FnPtr")], "Connection");
                describe(
                    &[("owner", "?"), ("handler", "FnPtr"), ("opts", "Map")],
                    "Connection",
                );
            }
            ApiFunction::ListenRowMessage => {
                describe(
                    &[("owner", "?"), ("index", "int"), ("handler", "FnPtr")],
                    "Connection",
                );
                describe(
                    &[
                        ("owner", "?"),
                        ("index", "int"),
                        ("handler", "FnPtr"),
                        ("opts", "Map"),
                    ],
                    "Connection",
                );
            }
        }
    }
}

/// What the options of a message listen may say, under its generic form.
const MESSAGE_OPTIONS: &str = "/// `opts`: `#{ times, order, match, key, respond }`; `key: true` passes the \
sent key first, `respond: true` puts a request's responder in the last parameter.";

/// A fixed function: name, parameters, return type, doc comment.
type Fixed = (
    &'static str,
    &'static [ParamDef<'static>],
    &'static str,
    &'static str,
);

/// The functions of the handles scripts hold (objects, worlds, named
/// sources, responders, hook contexts, the stored-array writer and its rows:
/// `rhai/src/runtime/handles.rs`, `writer.rs`; `Response`:
/// [`describe_handles`]), and `This()`. The test `rhai_runtime` holds them
/// to what the runtime registers.
const HANDLE_METHODS: [Fixed; 24] = [
    (
        "World",
        &[("obj", "Object")],
        "World",
        "/// The world this object lives in (`()` once the object is destroyed).",
    ),
    ("Id", &[("obj", "Object")], "int", "/// The object's id."),
    ("Id", &[("world", "World")], "int", "/// The world's id."),
    (
        "IsAlive",
        &[("obj", "Object")],
        "bool",
        "/// Whether the object still exists.",
    ),
    (
        "Object",
        &[("named", "Named")],
        "?",
        "/// The object of a named source (`()` when it has none).",
    ),
    (
        "unbind",
        &[("conn", "Connection")],
        "bool",
        "/// Removes the listener; whether it was still there.",
    ),
    (
        "Id",
        &[("conn", "Connection")],
        "int",
        "/// The listener's integer id (what `UnbindMessage` also takes).",
    ),
    (
        "IsAnswered",
        &[("rsp", "Responder")],
        "bool",
        "/// Whether the request was answered already.",
    ),
    (
        "Handled",
        &[("ctx", "HookCtx")],
        "()",
        "/// Marks the hook handled; the remaining listeners still run.",
    ),
    (
        "Cancel",
        &[("ctx", "HookCtx")],
        "()",
        "/// Cancels the hook: the remaining listeners do not run.",
    ),
    (
        "Get",
        &[("items", "StoredArray"), ("i", "int")],
        "?",
        "/// A copy of row `i` (0-based).",
    ),
    (
        "Set",
        &[("items", "StoredArray"), ("i", "int"), ("item", "Map")],
        "()",
        "/// Replaces row `i`.",
    ),
    (
        "GetMutable",
        &[("items", "StoredArray"), ("i", "int")],
        "StoredRow",
        "/// Row `i`, marked changed: `row.field = value` writes into it.",
    ),
    (
        "Add",
        &[("items", "StoredArray"), ("item", "Map")],
        "()",
        "/// Appends a row.",
    ),
    (
        "Insert",
        &[("items", "StoredArray"), ("i", "int"), ("item", "Map")],
        "()",
        "/// Inserts a row at `i`.",
    ),
    (
        "RemoveAt",
        &[("items", "StoredArray"), ("i", "int")],
        "?",
        "/// Removes row `i`; returns it.",
    ),
    (
        "SetNum",
        &[("items", "StoredArray"), ("n", "int")],
        "()",
        "/// Grows or shrinks to `n` rows.",
    ),
    (
        "Num",
        &[("items", "StoredArray")],
        "int",
        "/// The number of rows.",
    ),
    (
        "len",
        &[("items", "StoredArray")],
        "int",
        "/// The number of rows.",
    ),
    (
        "Commit",
        &[("items", "StoredArray")],
        "int",
        "/// Publishes the changes now (otherwise when the writer's scope ends); returns how many listeners heard them.",
    ),
    (
        "commit",
        &[("items", "StoredArray")],
        "int",
        "/// Publishes the changes now (otherwise when the writer's scope ends); returns how many listeners heard them.",
    ),
    (
        "Row",
        &[("row", "StoredRow")],
        "int",
        "/// The row's index.",
    ),
    (
        "to_map",
        &[("row", "StoredRow")],
        "Map",
        "/// A copy of the row.",
    ),
    THIS,
];

/// `This()`: the object the running script is attached to (global and in `GMP`).
const THIS: Fixed = (
    "This",
    &[],
    "Object",
    "/// The object the running script is attached to.",
);

/// `GMP::WithRemoval(n)` and the object helpers (the constants: [`GMP_CONSTANTS`]).
const GMP_HELPERS: [Fixed; 7] = [
    (
        "WithRemoval",
        &[("n", "int")],
        "int",
        "/// Row `n`, also hearing its removal.",
    ),
    (
        "Spawn",
        &[],
        "Object",
        "/// Creates an object in the script's world.",
    ),
    (
        "Spawn",
        &[("world", "World")],
        "Object",
        "/// Creates an object in a world.",
    ),
    (
        "Destroy",
        &[("obj", "Object")],
        "()",
        "/// Destroys an object and everything it owns or sources.",
    ),
    (
        "Named",
        &[("obj", "Object"), ("name", "String")],
        "Named",
        "/// A composite source: the object plus a name.",
    ),
    (
        "RemoveNamed",
        &[("obj", "Object"), ("name", "String")],
        "int",
        "/// Removes the composite source (obj, name): its listeners and stored messages; returns how many went.",
    ),
    THIS,
];

fn describe_fixed(sink: &mut dyn Sink, fixed: &[Fixed]) {
    for &(name, params, returns, doc) in fixed {
        sink.function(&FnDef {
            name: &[name],
            params,
            returns,
            comment: &[doc],
        });
    }
}

/// The handle methods, and `Response` at each arity a request needs.
fn describe_handles(sink: &mut dyn Sink, limits: Limits) {
    describe_fixed(sink, &HANDLE_METHODS);
    let ret_names: Vec<String> = (1..=limits.response).map(|i| format!("ret{i}")).collect();
    let mut params: Vec<ParamDef<'_>> = vec![("rsp", "Responder")];
    params.extend(ret_names.iter().map(|n| (n.as_str(), "?")));
    for n in 0..=limits.response {
        sink.function(&FnDef {
            name: &["Response"],
            params: &params[..=n],
            returns: "bool",
            comment: &[
                "/// Answers a request, now or later, once; false if it was answered already.",
            ],
        });
    }
}

/// Everything `GMP` holds besides its constants.
fn describe_gmp(sink: &mut dyn Sink, limits: Limits) {
    describe_generic(sink, limits);
    describe_fixed(sink, &GMP_HELPERS);
}

/// Writes items in rhai's definition format, separated as rhai separates them.
struct Writer {
    out: String,
    empty: bool,
}

impl Writer {
    /// A file: rhai's `module NAME;` header, then the module's items.
    fn new(module: &str, capacity: usize) -> Writer {
        let mut out = String::with_capacity(capacity);
        out.push_str("module ");
        out.push_str(module);
        out.push_str(";\n\n");
        Writer { out, empty: true }
    }

    fn separate(&mut self) {
        if !self.empty {
            self.out.push_str("\n\n");
        }
        self.empty = false;
    }

    fn constant(&mut self, name: &str) {
        self.separate();
        self.out.push_str("const ");
        self.out.push_str(name);
        self.out.push_str(": int;");
    }
}

impl Sink for Writer {
    fn function(&mut self, f: &FnDef<'_>) {
        self.separate();
        let out = &mut self.out;
        if !f.comment.is_empty() {
            f.comment.iter().for_each(|piece| out.push_str(piece));
            out.push('\n');
        }
        // Rhai writes a name that is not an identifier as an operator, with
        // the parameter types only. Only a baked name can be one (a key
        // outside `[A-Za-z0-9_.]`, which a loaded table may hold); the fixed
        // names are identifiers and no baked name (it holds `__`) is a keyword.
        let operator = !names::rhai_identifier_bytes(f.name.iter().flat_map(|p| p.bytes()));
        out.push_str(if operator { "op " } else { "fn " });
        f.name.iter().for_each(|piece| out.push_str(piece));
        out.push('(');
        for (i, (name, ty)) in f.params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if !operator {
                out.push_str(name);
                out.push_str(": ");
            }
            out.push_str(printed_type(ty));
        }
        out.push_str(") -> ");
        out.push_str(printed_type(f.returns));
        out.push(';');
    }
}

/// A function with a short name, kept until its place among the others is known.
struct Owned {
    name: String,
    params: Vec<(String, &'static str)>,
    returns: &'static str,
    comment: String,
}

/// Collects the fixed functions (generic, handles, helpers): about a hundred.
#[derive(Default)]
struct Collect(Vec<Owned>);

impl Sink for Collect {
    fn function(&mut self, f: &FnDef<'_>) {
        self.0.push(Owned {
            name: f.name.concat(),
            params: f
                .params
                .iter()
                .map(|(n, t)| ((*n).to_owned(), *t))
                .collect(),
            returns: f.returns,
            comment: f.comment.concat(),
        });
    }
}

impl Owned {
    /// Rhai's order of the functions of a module: by name, parameter count,
    /// then the registered parameter text and return type joined (which
    /// orders `Id(obj: Object)` before `Id(world: World)`).
    fn order(&self) -> (&str, usize, String) {
        let mut text = String::new();
        for (name, ty) in &self.params {
            text.push_str(name);
            text.push_str(": ");
            text.push_str(ty);
        }
        text.push_str(self.returns);
        (&self.name, self.params.len(), text)
    }

    fn order_owned(&self) -> (String, usize, String) {
        let (name, n, text) = self.order();
        (name.to_owned(), n, text)
    }

    fn write(&self, writer: &mut Writer) {
        let params: Vec<ParamDef<'_>> = self.params.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        writer.function(&FnDef {
            name: &[&self.name],
            params: &params,
            returns: self.returns,
            comment: &[&self.comment],
        });
    }
}

/// `__static__.d.rhai`. Rhai sorts the functions by name, then by
/// parameter count ([`Owned::order`]). The ~100 fixed functions are sorted so; each baked
/// function is `F__<encoded key>`, and since no fixed name contains `__`,
/// all of `F`'s baked functions sort together, in the order of the encoded
/// keys, at the place of the string `F__` among the fixed names. So the
/// keys are sorted once (10,000 short strings), not the 110,000 names.
fn write_static(table: &SignatureTable, limits: Limits) -> String {
    let mut fixed = Collect::default();
    describe_generic(&mut fixed, limits);
    describe_handles(&mut fixed, limits);
    // Built in the order they are written in, so that each function's
    // walk over the keys reads memory front to back.
    let mut sorted: Vec<(String, &str, &KeyEntry)> = table
        .entries()
        .map(|(key, entry)| (baked_suffix(key), key, entry))
        .collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let keys: Vec<BakedKey<'_>> = sorted
        .into_iter()
        .map(|(suffix, key, entry)| BakedKey::new(key, entry, suffix))
        .collect();
    let sets: Vec<FunctionSet> = keys.iter().map(|k| k.functions).collect();

    enum Block {
        Fixed(usize),
        Baked(ApiFunction),
    }
    let baked_prefixes: Vec<(String, ApiFunction)> = ApiFunction::ALL
        .into_iter()
        .map(|f| (format!("{}__", f.name()), f))
        .collect();
    let mut blocks: Vec<((&str, usize, String), Block)> = fixed
        .0
        .iter()
        .enumerate()
        .map(|(i, f)| {
            debug_assert!(!f.name.contains("__"), "{}", f.name);
            (f.order(), Block::Fixed(i))
        })
        .chain(
            baked_prefixes
                .iter()
                .map(|(prefix, f)| ((prefix.as_str(), 0, String::new()), Block::Baked(*f))),
        )
        .collect();
    blocks.sort_by(|a, b| a.0.cmp(&b.0));

    // About 2.6 KB of definitions per key of the benchmark's mix: reserve a
    // little more, so the text is never copied into a buffer twice its size.
    let mut writer = Writer::new("static", 16_384 + keys.len() * 3072);
    // The engine's own global module comes first and is empty: rhai still
    // separates it from ours.
    writer.out.push_str("\n\n");
    let (mut slots, mut params) = (Vec::new(), Vec::new());
    for (_, block) in &blocks {
        match block {
            Block::Fixed(i) => fixed.0[*i].write(&mut writer),
            Block::Baked(function) => {
                for (key, set) in keys.iter().zip(&sets) {
                    if set.contains(*function) {
                        key.describe(*function, &mut writer, &mut slots, &mut params);
                    }
                }
            }
        }
    }
    writer.out
}

/// `GMP.d.rhai`: the constants, then the functions sorted by name and
/// parameter count, as rhai orders them.
fn write_gmp(limits: Limits) -> String {
    let mut fixed = Collect::default();
    describe_gmp(&mut fixed, limits);
    fixed.0.sort_by_cached_key(Owned::order_owned);
    let mut writer = Writer::new(GMP_MODULE, 16_384);
    debug_assert!(GMP_CONSTANTS.is_sorted());
    for name in GMP_CONSTANTS {
        writer.constant(name);
    }
    for f in &fixed.0 {
        f.write(&mut writer);
    }
    writer.out
}

/// The tables the integration tests generate from.
#[cfg(test)]
use gantry_test_support::signature_table as common;

#[cfg(test)]
mod tests {
    //! Rhai is the authority of the format: the same descriptions,
    //! registered on an engine, must give the same files through
    //! `Engine::definitions`.

    use std::any::TypeId;

    use gantry_host::{KeyDecl, Param};
    use rhai::{Dynamic, Engine, EvalAltResult, FuncRegistration, Module, RhaiFunc, Shared};

    use super::common;
    use super::*;

    /// Registers each described function on a module. The functions are
    /// never run: this engine only describes.
    struct Register<'m> {
        module: &'m mut Module,
        func: RhaiFunc,
    }

    impl Sink for Register<'_> {
        fn function(&mut self, f: &FnDef<'_>) {
            let mut info: Vec<String> = f
                .params
                .iter()
                .map(|(n, t)| format!("{n}: {}", rust_type(t)))
                .collect();
            info.push(rust_type(f.returns));
            let mut reg = FuncRegistration::new(f.name.concat())
                .in_global_namespace()
                .with_params_info(info);
            if !f.comment.is_empty() {
                reg = reg.with_comments(&[f.comment.concat()]);
            }
            let arg_types: Vec<TypeId> = f.params.iter().map(|(_, t)| type_id(t)).collect();
            reg.set_into_module_raw(self.module, arg_types, self.func.clone());
        }
    }

    /// A standard type's name in a path (`gantry::Map`): Rhai prints a
    /// path's last segment as written, where it would print the bare name
    /// or the Rust type by its shorthand (`map`, `array`, `Fn`).
    fn rust_type(name: &str) -> String {
        match name {
            "Map" | "Array" | "FnPtr" => format!("gantry::{name}"),
            other => other.to_owned(),
        }
    }

    /// A distinct Rust type per registered type name: rhai keys a function
    /// by name and parameter types, so `Id(obj: Object)` and
    /// `Id(world: World)` registered with the same types would be one.
    fn type_id(registered: &str) -> TypeId {
        struct Object;
        struct World;
        struct Named;
        struct Responder;
        struct HookCtx;
        struct Connection;
        struct StoredArray;
        struct StoredRow;
        match registered {
            "int" => TypeId::of::<rhai::INT>(),
            "float" => TypeId::of::<rhai::FLOAT>(),
            "bool" => TypeId::of::<bool>(),
            "String" => TypeId::of::<rhai::ImmutableString>(),
            "Map" => TypeId::of::<rhai::Map>(),
            "Array" => TypeId::of::<rhai::Array>(),
            "FnPtr" => TypeId::of::<rhai::FnPtr>(),
            "Object" => TypeId::of::<Object>(),
            "World" => TypeId::of::<World>(),
            "Named" => TypeId::of::<Named>(),
            "Responder" => TypeId::of::<Responder>(),
            "HookCtx" => TypeId::of::<HookCtx>(),
            "Connection" => TypeId::of::<Connection>(),
            "StoredArray" => TypeId::of::<StoredArray>(),
            "StoredRow" => TypeId::of::<StoredRow>(),
            _ => TypeId::of::<Dynamic>(),
        }
    }

    /// Everything the global module holds, in registration order: the generic
    /// API, each key's baked functions, the handle methods.
    fn describe_global(sink: &mut dyn Sink, table: &SignatureTable, limits: Limits) {
        describe_generic(sink, limits);
        for (key, entry) in table.entries() {
            let baked = BakedKey::new(key, entry, baked_suffix(key));
            let (mut slots, mut params) = (Vec::new(), Vec::new());
            for function in baked.functions.iter() {
                baked.describe(function, sink, &mut slots, &mut params);
            }
        }
        describe_handles(sink, limits);
    }

    /// The definition files rhai itself writes for the described API.
    fn engine_definitions(table: &SignatureTable) -> Vec<(String, String)> {
        let func = RhaiFunc::Pure {
            func: Shared::new(|_, _| {
                Err(Box::new(EvalAltResult::ErrorRuntime(
                    "gantry-stubs: this engine only describes the API".into(),
                    rhai::Position::NONE,
                )))
            }),
            has_context: false,
            is_pure: true,
            is_volatile: false,
        };
        let limits = Limits::of(table);
        let mut engine = Engine::new_raw();
        let mut global = Module::new();
        describe_global(
            &mut Register {
                module: &mut global,
                func: func.clone(),
            },
            table,
            limits,
        );
        engine.register_global_module(global.into());
        let mut gmp = Module::new();
        for name in GMP_CONSTANTS {
            gmp.set_var(name, 0 as rhai::INT);
        }
        describe_gmp(
            &mut Register {
                module: &mut gmp,
                func,
            },
            limits,
        );
        engine.register_static_module(GMP_MODULE, gmp.into());
        let mut files: Vec<(String, String)> = engine
            .definitions()
            .include_standard_packages(false)
            .iter_files()
            .collect();
        files.sort();
        files
    }

    /// The sample table (every type and kind) plus the corners of naming
    /// and shape: parameters named like the fixed ones (`obj`, `world`,
    /// `reply`) or reserved (`fn`), duplicates, a request without response
    /// values and one with a single value, a hook without payload, a
    /// collection of plain values, keys whose encodings sort differently
    /// from the keys (`_` against `.`), and a key a loaded table could hold
    /// that is no identifier.
    fn corner_table() -> SignatureTable {
        let mut t = common::sample_table();
        let decls = [
            (
                "Odd.Names",
                KeyDecl::event()
                    .param("obj", Type::Int)
                    .param("world", Type::String)
                    .param("reply", Type::Bool)
                    .param("fn", Type::Float)
                    .param("obj", Type::Any)
                    .response("reply", Type::Int),
            ),
            ("Ask.Nothing", {
                let mut ask = KeyDecl::event();
                ask.response = Some(Vec::new());
                ask
            }),
            ("Ask.One", KeyDecl::event().response("n", Type::Int)),
            ("Hook.Bare", KeyDecl::event().kind(Kind::Hook)),
            (
                "Plain.List",
                KeyDecl::event()
                    .kind(Kind::Collection)
                    .param("xs", Type::Array(Box::new(Type::Int))),
            ),
            ("A_B", KeyDecl::event()),
            ("A.B", KeyDecl::event()),
            ("A0", KeyDecl::event().kind(Kind::Store)),
            ("a", KeyDecl::event()),
        ];
        for (key, decl) in decls {
            t.declare(key, decl, None).expect("valid key");
        }
        t.keys.insert(
            "Bad-Key".to_owned(),
            KeyEntry {
                params: vec![Param::new("x", Type::Int)],
                ..Default::default()
            },
        );
        t
    }

    #[test]
    fn rhai_definitions_match_engine_definitions() {
        for table in [
            SignatureTable::new(),
            common::sample_table(),
            corner_table(),
        ] {
            let ours = rhai_definitions(&table);
            let rhai = engine_definitions(&table);
            assert_eq!(ours.len(), rhai.len());
            for ((name, text), (rhai_name, rhai_text)) in ours.iter().zip(&rhai) {
                assert_eq!(name, rhai_name);
                if text != rhai_text {
                    let line = text
                        .lines()
                        .zip(rhai_text.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or(text.lines().count().min(rhai_text.lines().count()));
                    panic!(
                        "{name} differs from rhai's at line {}:\nours: {:?}\nrhai: {:?}",
                        line + 1,
                        text.lines().nth(line),
                        rhai_text.lines().nth(line)
                    );
                }
            }
        }
    }

    #[test]
    fn a_key_that_is_no_identifier_is_written_as_rhai_writes_an_operator() {
        let text = &rhai_definitions(&corner_table())[1].1;
        assert!(
            text.contains("op NotifyMessage__Bad-Key(int) -> ();"),
            "{text}"
        );
    }
}
