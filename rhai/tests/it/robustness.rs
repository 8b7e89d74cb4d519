//! Never panics on user input: random text and random Rhai token soup as
//! scripts (loaded, then the hub sends to whatever they registered).

use gantry_host::face::ScriptRuntime;
use gantry_host::{KeyDecl, ObjectId, Param, StructDef, Type};
use gantry_rhai::runtime::{RhaiError, RhaiOptions};
use gantry_test_support::hub_poke;
use proptest::prelude::*;

use crate::support::{Fixture, INVENTORY};

/// Pieces of Rhai a modder might type: the API names, keys good and bad,
/// strings, comments, numbers, maps, closures, control flow, and whole
/// calls (so that the soup often holds real listeners and sends).
static PIECES: &[&str] = &[
    "NotifyMessage",
    "NotifyWorldMessage",
    "NotifyObjectMessage",
    "SendObjectMessage",
    "ListenMessage",
    "ListenObjectMessage",
    "ListenRowMessage",
    "StoreMessage",
    "StoreObjectMessage",
    "OnceObjectMessage",
    "RemoveStoredObjectMessage",
    "UnbindMessage",
    "ListenHook",
    "RunHook",
    "GMP::",
    "GMP::StoredArray",
    "GMP::Spawn()",
    "GMP::ALL_ROWS",
    "GMP",
    "SELF",
    "SELF.World()",
    "This()",
    "(",
    ")",
    "{",
    "}",
    "#{",
    "[",
    "]",
    ",",
    ";",
    ".",
    "::",
    "=",
    "|",
    "||",
    "|x|",
    " ",
    "\n",
    "\"Game.Tick\"",
    "\"Game.Echo\"",
    "\"Inv.Items\"",
    "\"Hook.Go\"",
    "\"bad key\"",
    "\"\"",
    "\"",
    "`",
    "`${",
    "'c'",
    "#\"raw\"#",
    "\\",
    "//",
    "/*",
    "*/",
    "1",
    "-2.5",
    "9223372036854775807",
    "1e308",
    "()",
    "true",
    "x",
    "let",
    "const",
    "fn",
    "return",
    "if",
    "else",
    "while",
    "loop",
    "for",
    "in",
    "break",
    "throw",
    "try",
    "catch",
    "import",
    "eval",
    "#{ __struct: \"Item\", name: \"x\", count: 1 }",
    "NotifyMessage(\"Game.Tick\", 1, 2.5);\n",
    "NotifyMessage(\"Game.Echo\", 7);\n",
    "ListenMessage(\"Game.Tick\", (), |a, b| NotifyMessage(\"Game.Echo\", a));\n",
    "ListenMessage(\"Game.Echo\", (), |v| print(v));\n",
    "StoreObjectMessage(SELF, \"Inv.Items\", [#{ __struct: \"Item\", id: 1, name: \"a\", count: 1 }, #{ __struct: \"Item\", id: 2 }]);\n",
    "ListenRowMessage(SELF, \"Inv.Items\", (), GMP::ALL_ROWS, |row, item| print(row));\n",
    "ListenHook(\"Hook.Go\", (), |p, ctx| ctx.Handled());\n",
    "RunHook(\"Hook.Go\", 1);\n",
    "let items = GMP::StoredArray(SELF, \"Inv.Items\"); items.SetNum(3);\n",
    "fn f(n) { if n > 0 { f(n - 1) } }\nf(100);\n",
];

/// The last pieces: whole statements.
const STATEMENTS: usize = 10;

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.join(" "))
}

/// No separator: tokens run into each other.
fn tight_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

/// A runtime that gives up on runaway scripts fast, on a hub that declares
/// `Inv.Items` as a table of `Item`. Script recursion deeper than the call
/// depth limit is a script error.
fn fixture(rewrite: bool) -> Fixture {
    let (f, _) = crate::support::inventory(RhaiOptions {
        budget: Some(20_000),
        top_level_budget: Some(100_000),
        max_string_size: 1 << 16,
        max_array_size: 1000,
        max_map_size: 1000,
        // Rhai's own debug-build default is 8: a debug frame of a script
        // call is large, and 64 of them overflow a 2 MiB test thread.
        max_call_depth: 16,
        rewrite,
        ..RhaiOptions::default()
    });
    f
}

/// Loads `source`; a failure must be a script error naming the file.
fn load_and_poke(f: &Fixture, source: &str) {
    let object = f.spawn();
    match f.rt.load_script("soup.rhai", source, object) {
        Ok(_) => {}
        Err(RhaiError::Script(e)) => {
            assert_eq!(e.file, "soup.rhai");
            assert!(e.to_string().contains("soup.rhai"), "{e}");
        }
        Err(other) => panic!("a bad script is a script error, got {other}"),
    }
    poke(f, object);
}

/// Sends on every key the soup knows, every way, with a few values.
fn poke(f: &Fixture, object: ObjectId) {
    hub_poke::poke(
        &f.hub,
        f.world,
        object,
        &["Game.Tick", "Game.Echo", INVENTORY, "Hook.Go", "A"],
    );
    let _ = f.rt.take_errors();
    let _ = f.hub.destroy(object);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn rhai_script_random_text_load_is_a_script_error_never_a_panic(
        text in any::<String>(),
        rewrite in any::<bool>(),
    ) {
        let f = fixture(rewrite);
        load_and_poke(&f, &text);
    }

    #[test]
    fn rhai_script_token_soup_loads_or_errors_and_sends_never_panic(
        source in prop_oneof![soup(), tight_soup()],
        rewrite in any::<bool>(),
    ) {
        let f = fixture(rewrite);
        load_and_poke(&f, &source);
    }

    #[test]
    fn rhai_scripts_with_well_formed_calls_in_random_order_never_panic(
        calls in prop::collection::vec(
            prop::sample::select(&PIECES[PIECES.len() - STATEMENTS..]),
            1..12,
        ),
    ) {
        let f = fixture(true);
        let source = calls.concat();
        load_and_poke(&f, &source);
        // The same script loaded twice, on a hub that already heard it.
        load_and_poke(&f, &source);
    }
}

/// A listener that sends its own key (or a hook that runs itself) recurses
/// through the hub: a limit stops it with an error, not a crash.
#[test]
fn rhai_listener_resending_its_own_key_is_stopped_not_a_crash() {
    let f = fixture(true);
    let object = f.spawn();
    let sources = [
        "ListenMessage(\"Loop\", (), |n| NotifyMessage(\"Loop\", n + 1));\nNotifyMessage(\"Loop\", 1);",
        "ListenHook(\"H\", (), |p, c| RunHook(\"H\", p));\nRunHook(\"H\", 1);",
    ];
    for source in sources {
        let loaded = f.rt.load_script("loop.rhai", source, object);
        let reports = f.hub.take_reports();
        let errors = f.rt.take_errors();
        assert!(
            loaded.is_err() || !reports.is_empty() || !errors.is_empty(),
            "the runaway recursion was not reported: {source}"
        );
    }
}

/// A table file may define a struct that contains itself; a script's map
/// of it leaves the field out, which is filled with the field's default.
/// That default recursed forever before `Value::default_of` closed loops.
#[test]
fn rhai_map_of_a_self_containing_struct_converts_without_overflow() {
    let f = fixture(true);
    f.hub.edit_table(|t| {
        t.declare_struct(
            "Node",
            StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![
                    Param::new("next", Type::Struct("Node".into())),
                    Param::new("n", Type::Int),
                ],
            },
        );
    });
    f.hub
        .declare(
            "Node.Sent",
            KeyDecl::event().param("node", Type::Struct("Node".into())),
        )
        .unwrap();
    f.load(
        "node.rhai",
        "ListenMessage(\"Node.Sent\", (), |node| print(`${node.n} ${node.next.n} ${type_of(node.next.next)}`));\n\
         NotifyMessage(\"Node.Sent\", #{ __struct: \"Node\", n: 3 });",
    );
    assert_eq!(f.printed(), vec!["3 0 ()"]);
}

/// Each handler the hub ran from inside an API call started Rhai's call
/// depth at 0, so a listener that recursed near `max_call_depth` and then
/// sent its own key nested 32 handlers of 60 calls each, about 1,900 Rhai
/// call levels: with the default options that overflowed an 8 MiB stack in
/// a release build and aborted the process. A nested handler now goes on
/// from the depth of the call that sent, so the limit holds across nested
/// handlers: the recursion is a reported script error.
#[test]
fn rhai_recursion_across_nested_handlers_is_an_error_not_a_stack_overflow() {
    let joined = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(|| {
            let f = Fixture::new();
            let source = "fn f(n, d) { if n > 0 { f(n - 1, d) } else { NotifyMessage(\"Loop\", d + 1) } }\n\
                          ListenMessage(\"Loop\", (), |d| { print(`in ${d}`); f(60, d) });\n\
                          NotifyMessage(\"Loop\", 1);";
            let _ = f.rt.load_script("nest.rhai", source, f.spawn());
            let failures = f.failures();
            assert!(
                failures.iter().any(|m| m.contains("nest.rhai")),
                "the too-deep call is reported: {failures:?}"
            );
            // The first handler ran its 60 calls; the next stopped at the
            // call limit (64 in all, not 64 per handler, which let 32
            // handlers run 60 calls each).
            let printed = f.printed();
            assert_eq!(printed.first().map(String::as_str), Some("in 1"));
            assert!(printed.len() <= 2, "{printed:?}");
        })
        .unwrap()
        .join();
    assert!(joined.is_ok());
}

/// Only a deep call's depth is carried into the handlers it runs: a chain
/// of handlers each sending the next from a shallow call, 20 deep, still
/// runs to its end under the default limit.
#[test]
fn rhai_a_chain_of_handlers_sending_from_shallow_calls_runs_to_its_end() {
    let joined = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(|| {
            let f = Fixture::new();
            f.load(
                "chain.rhai",
                "ListenMessage(\"Count\", (), |n| { if n > 0 { NotifyMessage(\"Count\", n - 1) } else { print(\"done\") } });\n\
                 NotifyMessage(\"Count\", 20);",
            );
            assert_eq!(f.printed(), vec!["done"]);
            assert!(f.failures().is_empty());
        })
        .unwrap()
        .join();
    assert!(joined.is_ok());
}

// ----- type rules and bounds, at the line that broke them ---------------------

/// The error of a script that must fail to load, with its line.
fn load_error(f: &Fixture, file: &str, source: &str) -> (Option<u32>, String) {
    let object = f.spawn();
    match f.rt.load_script(file, source, object) {
        Err(RhaiError::Script(e)) => (e.line, e.message),
        Err(other) => panic!("a script error was expected, got {other}"),
        Ok(_) => panic!("{file} loaded: it should have failed"),
    }
}

#[test]
fn rhai_an_array_mixing_types_is_refused_at_its_line_on_every_run() {
    let source = "let n = 1;\nNotifyMessage(\"Mixed\", [1, \"a\"]);\n";
    let first_run = Fixture::new();
    let (line, first) = load_error(&first_run, "mixed.rhai", source);
    assert_eq!(line, Some(2), "{first}");
    assert!(first.contains("array mixing int and string"), "{first}");
    let second_run = Fixture::new();
    second_run.hub.merge_table(&first_run.hub.table_snapshot());
    let (line, second) = load_error(&second_run, "mixed.rhai", source);
    assert_eq!(line, Some(2));
    assert_eq!(first, second);
}

#[test]
fn rhai_stored_array_refuses_a_row_of_the_wrong_type_at_its_line_naming_key_and_row() {
    let (f, key) = crate::support::inventory(RhaiOptions::default());
    let object = f.spawn();
    f.hub
        .store(
            key,
            object,
            (gantry_host::Value::array(vec![crate::support::item(1)]),),
        )
        .unwrap();
    let source = "let items = GMP::StoredArray(SELF, \"Inv.Items\");\n\
                  items.Add(#{ id: 2, name: \"b\", count: \"many\" });\n";
    let (line, message) = match f.rt.load_script("items.rhai", source, object) {
        Err(RhaiError::Script(e)) => (e.line, e.message),
        other => panic!("a script error was expected, got {other:?}"),
    };
    assert_eq!(line, Some(2), "{message}");
    assert!(
        message
            .contains("`Inv.Items` row 1: expected Item, got Item whose field `count` is string"),
        "{message}"
    );
    assert_eq!(
        f.hub.stored(key, object).unwrap()[0]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn rhai_a_key_over_the_segment_limit_is_an_error_at_its_line() {
    let f = Fixture::new();
    let source = "let k = \"S\";\nfor i in 0..16 { k += \".S\"; }\nNotifyMessage(k, 1);\n";
    let (line, message) = load_error(&f, "deep.rhai", source);
    assert_eq!(line, Some(3), "{message}");
    assert!(
        message.contains("has 17 segments; a key has at most 16"),
        "{message}"
    );
    // A literal one is refused as the script loads, naming it.
    let deep = vec!["S"; 17].join(".");
    let (_, message) = load_error(&f, "deep.rhai", &format!("NotifyMessage(\"{deep}\", 1);"));
    assert!(
        message.contains(&deep) && message.contains("at most 16"),
        "{message}"
    );
}

mod closure_chains;
mod deep_values;
mod hostile_calls;

// ----- what a script keeps in the hub is bounded --------------------------------

const MIB: usize = 1 << 20;

#[test]
fn rhai_storing_past_the_hub_memory_limit_is_an_error_at_its_line_not_an_abort() {
    let f = Fixture::with(RhaiOptions {
        hub_memory_limit: Some(8 * MIB),
        ..RhaiOptions::default()
    });
    let (line, message) = load_error(
        &f,
        "hoard.rhai",
        "let big = \"x\";\nwhile big.len() < 1048576 { big += big; }\n\
         for i in 0..5000 {\n  StoreObjectMessage(SELF, `K${i}`, big);\n}\n",
    );
    assert_eq!(line, Some(4), "{message}");
    assert!(
        message.contains("storing this message needs 1.0 MiB of hub memory, over this runtime's hub memory limit of 8 MiB"),
        "{message}"
    );
    let quota = f.rt.hub().quota().expect("a runtime's handle is charged");
    assert!(quota.used() <= 8 * MIB);
}

#[test]
fn rhai_forty_thousand_listeners_on_one_key_register_and_hear_a_send() {
    let f = Fixture::with(RhaiOptions {
        // A debug build's pace: what is measured is that it ends.
        time_limit: Some(std::time::Duration::from_secs(30)),
        top_level_budget: None,
        ..RhaiOptions::default()
    });
    let started = std::time::Instant::now();
    f.load(
        "many.rhai",
        "for i in 0..40000 { ListenMessage(\"Crowd\", (), || print(\"heard\")); }\n",
    );
    f.load("send.rhai", "NotifyMessage(\"Crowd\");");
    assert!(f.errors().is_empty(), "{:?}", f.errors());
    assert_eq!(f.printed().len(), 40_000);
    // Registering was quadratic: 40,000 took 6.5 s in a release build.
    assert!(started.elapsed().as_secs() < 8, "{:?}", started.elapsed());
}

#[test]
fn rhai_a_mod_cannot_retype_a_key_the_host_declared() {
    let f = Fixture::new();
    f.hub
        .declare_at(
            "Game.Tick",
            KeyDecl::event()
                .param("n", Type::Int)
                .param("dt", Type::Float),
            None,
        )
        .unwrap();
    let declared = f
        .hub
        .table_snapshot()
        .get("Game.Tick")
        .unwrap()
        .params
        .clone();
    f.load(
        "listener.rhai",
        "ListenMessage(\"Game.Tick\", (), |n, dt| print(`tick ${n}`));",
    );
    let (line, message) = load_error(
        &f,
        "poison.rhai",
        "let x = 1;\nNotifyMessage(\"Game.Tick\", \"x\", [1, 2]);\n",
    );
    assert_eq!(line, Some(2), "{message}");
    assert!(
        message.contains("`Game.Tick` argument 1: expected int, got string"),
        "{message}"
    );
    assert_eq!(
        f.hub.table_snapshot().get("Game.Tick").unwrap().params,
        declared
    );
    f.hub
        .send_str("Game.Tick", gantry_host::Source::Global, (1i64, 0.016f64))
        .unwrap();
    assert_eq!(f.printed(), ["tick 1"]);
}

#[test]
fn rhai_a_source_name_over_256_bytes_is_an_error_at_its_line() {
    let f = Fixture::new();
    let (line, message) = load_error(
        &f,
        "named.rhai",
        "let name = \"n\";\nwhile name.len() < 300 { name += name; }\nlet part = GMP::Named(SELF, name);\n",
    );
    assert_eq!(line, Some(3), "{message}");
    assert!(
        message.contains("a source name has at most 256 bytes"),
        "{message}"
    );
}
