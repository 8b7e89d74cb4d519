//! The Rhai definition files: every line parses as rhai's definition syntax,
//! every kind of key and every naming corner is baked, the runtime's types
//! are used, and the definitions describe what the Rhai runtime really
//! registers (read from its own engine through `RhaiRuntime::definitions`):
//! a function, parameter, type or constant the runtime adds, drops or
//! changes fails here until the generator says the same.

use std::collections::{BTreeMap, BTreeSet};

use gantry_host::{ApiFunction, Hub, KeyDecl, Kind, Param, SignatureTable, StructDef, Type};
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime};
use gantry_stubs::rhai_definitions;
use gantry_stubs::shape::FunctionSet;
use gantry_test_support::signature_table::{array, sample_table, strukt};

fn declare(t: &mut SignatureTable, key: &str, decl: KeyDecl) {
    t.declare(key, decl, None).expect("valid key");
}

/// Keys are dot-separated segments of `[A-Za-z0-9_]`: segments
/// may be Lua or Rhai reserved words or start with a digit. Parameter and
/// field names may be reserved words too (`end`, `self`, `this`, `fn`).
fn naming_table() -> SignatureTable {
    let mut t = SignatureTable::new();
    t.declare_struct(
        "Slot",
        StructDef {
            parent: None,
            doc: "A UI slot.".into(),
            fields: vec![Param::new("end", Type::Int), Param::new("x", Type::Float)],
        },
    );
    let decls = [
        (
            "Game.end",
            KeyDecl::event()
                .doc("The game ended")
                .param("winner", Type::String),
        ),
        (
            "UI.2D.Show",
            KeyDecl::event()
                .param("slot", strukt("Slot"))
                .param("end", Type::Bool),
        ),
        ("function.local", KeyDecl::event().param("n", Type::Int)),
        (
            "0",
            KeyDecl::event()
                .param("fn", Type::Int)
                .param("this", Type::String),
        ),
        (
            "A_B",
            KeyDecl::event()
                .param("self", Type::Int)
                .param("y", Type::String),
        ),
        (
            "A.B",
            KeyDecl::event().kind(Kind::Store).param("nil", Type::Float),
        ),
        (
            "Hud.Slots",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("slots", array(strukt("Slot"))),
        ),
    ];
    for (key, decl) in decls {
        declare(&mut t, key, decl);
    }
    t
}

/// Rhai's identifier rule (no unicode-xid): letters, digits, `_`, a letter
/// before any digit.
fn rhai_ident(s: &str) -> bool {
    let mut letter = false;
    for b in s.bytes() {
        match b {
            b'_' => {}
            _ if b.is_ascii_alphabetic() => letter = true,
            _ if b.is_ascii_digit() && letter => {}
            _ => return false,
        }
    }
    letter
}

/// Can `name` name a parameter in Rhai? Asked of rhai's own parser.
fn rhai_param_ok(name: &str) -> bool {
    thread_local! {
        static SEEN: std::cell::RefCell<BTreeMap<String, bool>> = Default::default();
    }
    SEEN.with(|seen| {
        *seen.borrow_mut().entry(name.to_owned()).or_insert_with(|| {
            rhai::Engine::new_raw()
                .compile(format!("fn f({name}) {{ }}"))
                .is_ok()
        })
    })
}

/// One `.d.rhai` declaration line, parsed by rhai's definition grammar:
/// `fn name(p: T, ...) -> T;`, `const N: T;`, `module M;`. Returns the
/// function name, or None for non-functions.
fn parse_rhai_decl(line: &str) -> Result<Option<String>, String> {
    if let Some(rest) = line.strip_prefix("module ") {
        let name = rest.strip_suffix(';').ok_or("module without ;")?;
        return if rhai_ident(name) {
            Ok(None)
        } else {
            Err(format!("module name {name:?}"))
        };
    }
    if let Some(rest) = line.strip_prefix("const ") {
        let (name, ty) = rest
            .strip_suffix(';')
            .and_then(|r| r.split_once(": "))
            .ok_or("const form")?;
        return if rhai_ident(name) && !ty.is_empty() {
            Ok(None)
        } else {
            Err("const".into())
        };
    }
    let rest = line
        .strip_prefix("fn ")
        .ok_or("neither fn, const nor module")?;
    let (name, rest) = rest.split_once('(').ok_or("no (")?;
    if !rhai_ident(name) {
        return Err(format!("function name {name:?} is no identifier"));
    }
    let (params, rest) = rest.split_once(") -> ").ok_or("no ) ->")?;
    let ret = rest.strip_suffix(';').ok_or("no ;")?;
    if ret.is_empty() || ret.contains(' ') {
        return Err(format!("return type {ret:?}"));
    }
    if !params.is_empty() {
        for p in params.split(", ") {
            let (pname, ty) = p.split_once(": ").ok_or(format!("param {p:?}"))?;
            if !rhai_ident(pname) || !rhai_param_ok(pname) {
                return Err(format!("parameter name {pname:?}"));
            }
            if ty.is_empty() || ty.contains(' ') {
                return Err(format!("parameter type {ty:?}"));
            }
        }
    }
    Ok(Some(name.to_owned()))
}

/// Every line of every file is a doc comment, blank, or a declaration in
/// rhai's definition grammar; returns the function names by file.
fn rhai_functions(table: &SignatureTable) -> BTreeMap<String, Vec<String>> {
    let (out, errors) = rhai_functions_and_errors(table);
    assert!(errors.is_empty(), "{errors:#?}");
    out
}

fn rhai_functions_and_errors(
    table: &SignatureTable,
) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let mut errors = Vec::new();
    let mut out = BTreeMap::new();
    for (file, text) in rhai_definitions(table) {
        let mut names = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with("///") {
                continue;
            }
            match parse_rhai_decl(line) {
                Ok(Some(name)) => names.push(name),
                Ok(None) => {}
                Err(e) => {
                    errors.push(format!("{file}:{}: {e}: {line:?}", i + 1));
                    if let Some(name) = line.strip_prefix("fn ").and_then(|r| r.split_once('(')) {
                        names.push(name.0.to_owned());
                    }
                }
            }
        }
        out.insert(file, names);
    }
    (out, errors)
}

/// Definition files are in the format rhai's `Engine::definitions`
/// writes (`module static;`, `fn name(param: type) -> ret;`), one function
/// per key-baked call with its parameter names and types. Keys with
/// reserved-word or digit segments and parameters named like Rhai keywords
/// still give identifiers; names are `gantry_host::baked_name`'s.
#[test]
fn rhai_definitions_parse_and_bake_every_naming_corner() {
    let table = naming_table();
    let (files, errors) = rhai_functions_and_errors(&table);
    let statics = &files["__static__.d.rhai"];
    let text = &rhai_definitions(&table)[1].1;
    assert!(text.starts_with("module static;"), "{text}");
    for (key, function) in [
        ("Game.end", gantry_host::ApiFunction::NotifyMessage),
        ("UI.2D.Show", gantry_host::ApiFunction::NotifyObjectMessage),
        ("function.local", gantry_host::ApiFunction::ListenMessage),
        ("0", gantry_host::ApiFunction::NotifyWorldMessage),
        ("A_B", gantry_host::ApiFunction::SendObjectMessage),
        ("A.B", gantry_host::ApiFunction::StoreObjectMessage),
        ("Hud.Slots", gantry_host::ApiFunction::ListenRowMessage),
    ] {
        let name = gantry_host::baked_name(function, key);
        assert!(
            statics.contains(&name),
            "{name} (for {key}) is not described"
        );
    }
    assert!(
        text.contains("fn NotifyMessage__0(fn_: int, this_: String) -> ();"),
        "{text}"
    );
    assert!(text.contains("fn NotifyMessage__UI__2D__Show(slot: Map, end: bool) -> ();"));
    assert!(
        errors.is_empty(),
        "not rhai's definition syntax: {errors:#?}"
    );
}

/// Every kind gets its baked functions, and only those its key can use.
#[test]
fn rhai_definitions_cover_every_kind_of_key() {
    let table = sample_table();
    let files = rhai_functions(&table);
    let statics = &files["__static__.d.rhai"];
    let has = |n: &str| statics.iter().any(|f| f == n);
    for present in [
        "NotifyMessage__Player__Hurt",
        "ListenObjectMessage__Player__Hurt",
        "StoreObjectMessage__Player__Score",
        "RemoveStoredObjectMessage__Player__Score",
        "ListenRowMessage__Inv__Items",
        "Request__Shop__Buy",
        "SendObjectMessage__Shop__Buy",
        "ListenHook__Combat__Hit",
        "RunHook__Combat__Hit",
        "UnbindMessage__Combat__Hit",
    ] {
        assert!(has(present), "{present} missing");
    }
    for absent in [
        "NotifyMessage__Combat__Hit",
        "StoreObjectMessage__Player__Hurt",
        "ListenRowMessage__Player__Score",
        "Request__Player__Hurt",
        "RunHook__Player__Hurt",
    ] {
        assert!(!has(absent), "{absent} should not exist");
    }
    let text = &rhai_definitions(&table)[1].1;
    assert!(text.contains(
        "fn SendObjectMessage__Shop__Buy(obj: Object, item: Map, count: int, reply: FnPtr) -> ();"
    ));
    assert!(
        text.contains("/// handler: |row: int, item: Map /* Item */|"),
        "row listener doc"
    );
    assert!(
        text.contains("/// reply: |ok: bool, price: int|"),
        "reply doc"
    );
    let gmp = &files["GMP.d.rhai"];
    for f in [
        "Request",
        "StoredArray",
        "WithRemoval",
        "Spawn",
        "Named",
        "Destroy",
    ] {
        assert!(gmp.iter().any(|g| g == f), "GMP::{f} missing");
    }
}

/// The definitions are what rhai's `Engine::definitions` writes on an
/// engine with the per-key functions registered: what the
/// Rhai runtime registers for scripts (`rhai/src/runtime/handles.rs`,
/// `writer.rs`, `register.rs`) must be described, or Rhai tooling reports a
/// correct script's calls as unknown.
#[test]
fn rhai_definitions_describe_what_the_rhai_runtime_registers() {
    let files = rhai_definitions(&sample_table());
    let all: String = files.iter().map(|(_, t)| t.as_str()).collect();
    let mut missing = Vec::new();
    for decl in [
        "fn IsAlive(",          // handles.rs: obj.IsAlive()
        "fn Id(",               // handles.rs: obj.Id(), world.Id()
        "fn Object(",           // handles.rs: named.Object()
        "fn IsAnswered(",       // handles.rs: rsp.IsAnswered()
        "fn Set(",              // writer.rs: items.Set(i, row)
        "fn Commit(",           // writer.rs: "Commit" and "commit"
        "fn This(",             // register.rs: This()
        "const ALL_ROWS: int;", // register.rs: GMP::ALL_ROWS
        "const ALL_ROWS_WITH_REMOVAL: int;",
    ] {
        if !all.contains(decl) {
            missing.push(decl);
        }
    }
    assert!(missing.is_empty(), "not described: {missing:?}");
}

/// What is described must say what the runtime returns: the writer's
/// `Add` returns nothing and `RemoveAt` the removed row
/// (`rhai/src/runtime/writer.rs`), `Commit` the listener count; a hook
/// context is registered as `HookCtx` and a named source as `Named`
/// (`handles.rs`).
#[test]
fn rhai_definitions_use_the_runtimes_types() {
    let text = &rhai_definitions(&sample_table())[1].1;
    let gmp = &rhai_definitions(&sample_table())[0].1;
    let mut wrong = Vec::new();
    for (expect, why) in [
        (
            "fn Add(items: StoredArray, item: Map) -> ();",
            "Add returns ()",
        ),
        (
            "fn RemoveAt(items: StoredArray, i: int) -> ?;",
            "RemoveAt returns the row",
        ),
        (
            "fn commit(items: StoredArray) -> int;",
            "commit returns the listener count",
        ),
        (
            "fn Handled(ctx: HookCtx) -> ();",
            "the type is registered as HookCtx",
        ),
    ] {
        if !text.contains(expect) {
            wrong.push(why);
        }
    }
    if !gmp.contains("fn Named(obj: Object, name: String) -> Named;") {
        wrong.push("GMP::Named returns a Named");
    }
    assert!(wrong.is_empty(), "{wrong:?}");
}

/// One `fn` line: parameter types and return type.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decl {
    params: Vec<String>,
    returns: String,
}

/// module ("static" or "GMP") → function name → declarations; and the
/// constants by module.
#[derive(Debug, Default)]
struct Defs {
    fns: BTreeMap<(String, String), Vec<Decl>>,
    consts: BTreeSet<(String, String)>,
}

/// Rhai prints a type the runtime registered by its Rust name in lower
/// case (`string`, `map`, `array`, `Fn`); the generator writes the names
/// Rhai's own definitions write (`String`, `Map`, `Array`, `FnPtr`).
fn normalize(ty: &str) -> String {
    match ty.trim() {
        "string" | "ImmutableString" => "String".to_owned(),
        "map" => "Map".to_owned(),
        "array" => "Array".to_owned(),
        "Fn" => "FnPtr".to_owned(),
        "" => "()".to_owned(),
        other => other.to_owned(),
    }
}

/// Reads `fn` and `const` lines of definition text; `module X {` ... `}`
/// blocks (the runtime's single file) and `module X;` headers (our files)
/// set the module.
fn parse_definitions(text: &str, defs: &mut Defs, mut module: String) {
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("module ") {
            module = rest.trim_end_matches([';', '{', ' ']).to_owned();
            continue;
        }
        if line == "}" {
            module = "static".to_owned();
            continue;
        }
        if let Some(rest) = line.strip_prefix("const ") {
            let name = rest.split(':').next().unwrap().trim().to_owned();
            defs.consts.insert((module.clone(), name));
            continue;
        }
        let Some(rest) = line.strip_prefix("fn ") else {
            continue;
        };
        let (name, rest) = rest.split_once('(').expect("fn name(");
        // `fn print(data: ?);`: rhai leaves out a `()` return.
        let (params, returns) = match rest.rsplit_once(") -> ") {
            Some((params, returns)) => (params, normalize(returns.trim_end_matches(';'))),
            None => (rest.trim_end_matches(");"), "()".to_owned()),
        };
        let params = if params.is_empty() {
            Vec::new()
        } else {
            params
                .split(", ")
                .map(|p| normalize(p.split_once(':').map_or(p, |(_, t)| t)))
                .collect()
        };
        defs.fns
            .entry((module.clone(), name.to_owned()))
            .or_default()
            .push(Decl { params, returns });
    }
}

/// The types the runtime registers for scripts.
const RUNTIME_TYPES: [&str; 7] = [
    "Object",
    "World",
    "Named",
    "Responder",
    "HookCtx",
    "StoredArray",
    "StoredRow",
];

/// Rhai's own conventions, which tools know without definitions.
fn rhai_convention(name: &str) -> bool {
    matches!(name, "to_string" | "to_debug") || name.contains('$')
}

fn is_generic(name: &str) -> bool {
    ApiFunction::ALL.iter().any(|f| f.name() == name)
}

/// Is this function of the runtime's static module one the definitions
/// must describe? (`len` of an array is rhai's; `len` of a writer is ours.)
fn is_script_api(name: &str, decl: &Decl) -> bool {
    if rhai_convention(name) {
        return false;
    }
    is_per_arity(name)
        || name.contains("__")
        || name == "This"
        || decl
            .params
            .iter()
            .any(|p| RUNTIME_TYPES.contains(&p.as_str()))
}

/// Registered by the runtime once per arity up to its `MAX_ARGS`; described
/// up to what the table needs (the longest message or response).
fn is_per_arity(name: &str) -> bool {
    is_generic(name) || name == "Response"
}

/// Does our declaration say what the runtime's says? `?` in the runtime
/// takes any type of ours.
fn fits(ours: &Decl, runtime: &Decl) -> bool {
    ours.params.len() == runtime.params.len()
        && ours
            .params
            .iter()
            .zip(&runtime.params)
            .all(|(o, r)| r == "?" || o == r)
        && (runtime.returns == "?"
            || runtime.returns.contains('>')
            || ours.returns == runtime.returns)
}

/// A script naming every (function, key) pair the sample table allows,
/// inside a function that never runs: loading it bakes them all.
fn baking_script(table: &gantry_host::SignatureTable) -> String {
    let mut src = String::from("fn never() {\n");
    for (key, entry) in table.entries() {
        for function in FunctionSet::of(entry).iter() {
            let prefix = if function.gmp_only() { "GMP::" } else { "" };
            let source = if function.source_index().is_some() {
                "This(), "
            } else {
                ""
            };
            src.push_str(&format!(
                "    {prefix}{}({source}\"{key}\");\n",
                function.name()
            ));
        }
    }
    src.push_str("}\n");
    src
}

fn runtime_defs() -> Defs {
    let table = gantry_test_support::signature_table::sample_table();
    let hub = Hub::with_table(table.clone());
    let world = hub.create_world();
    let rt = RhaiRuntime::new(hub.clone(), RhaiOptions::default()).expect("runtime");
    let object = hub.spawn(world).unwrap();
    rt.load_script("bakes.rhai", &baking_script(&table), object)
        .expect("the baking script loads");
    let mut defs = Defs::default();
    parse_definitions(&rt.definitions(), &mut defs, "static".to_owned());
    defs
}

fn our_defs() -> Defs {
    let mut defs = Defs::default();
    for (_, text) in rhai_definitions(&gantry_test_support::signature_table::sample_table()) {
        parse_definitions(&text, &mut defs, String::new());
    }
    defs
}

#[test]
fn the_definitions_describe_what_the_rhai_runtime_registers() {
    let runtime = runtime_defs();
    let ours = our_defs();
    let mut wrong = Vec::new();

    // Every runtime function of the script API is described, as it is.
    let mut baked = 0;
    for ((module, name), decls) in &runtime.fns {
        let decls: Vec<&Decl> = decls
            .iter()
            .filter(|d| module != "static" || is_script_api(name, d))
            .collect();
        if decls.is_empty() {
            continue;
        }
        let Some(mine) = ours.fns.get(&(module.clone(), name.clone())) else {
            wrong.push(format!("{module}::{name} is not described"));
            continue;
        };
        if name.contains("__") {
            baked += 1;
            // A baked function takes every argument list its generic
            // function takes (untyped, all `?`) besides its typed layouts;
            // ours describes the typed ones, so each is held to the runtime's
            // typed layouts of its arity where there are any.
            for decl in mine {
                let same_arity = decls.iter().filter(|r| r.params.len() == decl.params.len());
                let typed: Vec<&&Decl> = same_arity
                    .clone()
                    .filter(|r| r.params.iter().any(|p| p != "?"))
                    .collect();
                let fitting = if typed.is_empty() {
                    same_arity.clone().any(|r| fits(decl, r))
                } else {
                    typed.iter().any(|r| fits(decl, r))
                };
                if !fitting {
                    wrong.push(format!(
                        "{module}::{name}{decl:?} is none of the runtime's {decls:?}"
                    ));
                }
            }
            continue;
        }
        let max_ours = mine.iter().map(|d| d.params.len()).max().unwrap_or(0);
        for decl in decls {
            if is_per_arity(name) && decl.params.len() > max_ours {
                continue;
            }
            if !mine.iter().any(|m| fits(m, decl)) {
                wrong.push(format!(
                    "{module}::{name}: runtime {decl:?}, described {mine:?}"
                ));
            }
        }
    }
    assert!(baked > 50, "the script baked only {baked} functions");

    // Nothing is described that the runtime lacks.
    for ((module, name), decls) in &ours.fns {
        let Some(theirs) = runtime.fns.get(&(module.clone(), name.clone())) else {
            wrong.push(format!("{module}::{name} is described but not registered"));
            continue;
        };
        for decl in decls {
            if !theirs.iter().any(|t| t.params.len() == decl.params.len()) {
                wrong.push(format!(
                    "{module}::{name}{decl:?}: the runtime has no such arity"
                ));
            }
        }
    }

    if ours.consts != runtime.consts {
        wrong.push(format!(
            "constants: described {:?}, registered {:?}",
            ours.consts, runtime.consts
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
