//! The Rhai definitions against what the Rhai runtime really registers
//! (`gantry_rhai::runtime`: `handles.rs`, `writer.rs`, `register.rs`), read
//! from the runtime's own engine through `RhaiRuntime::definitions` — so a
//! function, a parameter, a type or a constant the runtime adds, drops or
//! changes fails here until the generator says the same.
//!
//! What is compared: every function of the `GMP` module, and every global
//! function that is part of the script API or takes one of the runtime's
//! types (rhai's own `to_string`/`to_debug`, indexers and operators aside);
//! the baked functions of every key of the sample table, registered by
//! loading a script that names each of them; and `GMP`'s constants. The
//! runtime may say `?` (Dynamic) where the definitions say more; where it
//! names a type, the definitions must name the same. A return type the
//! runtime cannot name (a fallible function prints as `EvalAltResult>>`) is
//! left to `rhai_defs`' own choice.

#[path = "../../test-support/src/signature_table.rs"]
mod common;

use std::collections::{BTreeMap, BTreeSet};

use gantry_host::{ApiFunction, Hub};
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime};
use gantry_stubs::rhai_definitions;
use gantry_stubs::shape::FunctionSet;

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
/// case (`string`); the generator writes the registered names.
fn normalize(ty: &str) -> String {
    match ty.trim() {
        "string" | "ImmutableString" => "String".to_owned(),
        "" => "()".to_owned(),
        other => other.to_owned(),
    }
}

/// Reads `fn` and `const` lines of definition text; `module X {` ... `}`
/// blocks (the runtime's single file) and `module X;` headers (our files)
/// set the module.
fn parse(text: &str, defs: &mut Defs, mut module: String) {
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
    let table = common::sample_table();
    let hub = Hub::with_table(table.clone());
    let world = hub.create_world();
    let rt = RhaiRuntime::new(hub.clone(), RhaiOptions::default()).expect("runtime");
    let object = hub.spawn(world).unwrap();
    rt.load_script("bakes.rhai", &baking_script(&table), object)
        .expect("the baking script loads");
    let mut defs = Defs::default();
    parse(&rt.definitions(), &mut defs, "static".to_owned());
    defs
}

fn our_defs() -> Defs {
    let mut defs = Defs::default();
    for (_, text) in rhai_definitions(&common::sample_table()) {
        parse(&text, &mut defs, String::new());
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
