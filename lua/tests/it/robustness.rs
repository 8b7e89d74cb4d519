//! Never panics on user input: random bytes and random Lua token soup as
//! scripts (loaded, then the hub sends to whatever they registered), and the
//! runtime-free scanner and rewriter on random text.

use std::time::Duration;

use gantry_host::face::ScriptRuntime;
use gantry_host::{KeyDecl, ObjectId, Param, StructDef, Type};
use gantry_lua::runtime::{LuaError, LuaOptions};
use gantry_lua::syntax::{rewrite, scan};
use gantry_test_support::hub_poke;
use proptest::prelude::*;

use crate::support::Fixture;

/// Pieces of Lua a modder might type: the API names, keys good and bad,
/// strings, long brackets, comments, numbers, tables, control flow, and
/// whole calls (so that the soup often holds real listeners and sends).
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
    "GMP.",
    "GMP.Request",
    "GMP.StoredArray",
    "GMP.Spawn()",
    "GMP.AllRows",
    "GMP",
    "self",
    "self:World()",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ".",
    ":",
    "=",
    "..",
    "...",
    "#",
    "~",
    " ",
    "\n",
    "\"Game.Tick\"",
    "\"Game.Echo\"",
    "\"Inv.Items\"",
    "\"Hook.Go\"",
    "\"bad key\"",
    "\"\"",
    "'A..B'",
    "\"",
    "'",
    "\"\\z",
    "\\",
    "[[Game.Tick]]",
    "[==[x]]==]",
    "[[",
    "]]",
    "--",
    "--[[",
    "--[==[",
    "1",
    "-2.5",
    "0x7fffffffffffffff",
    "1e308",
    "0/0",
    "math.mininteger",
    "nil",
    "true",
    "false",
    "x",
    "local",
    "function",
    "end",
    "return",
    "if",
    "then",
    "else",
    "do",
    "for",
    "in",
    "while",
    "repeat",
    "until",
    "goto",
    "::l::",
    "_ENV",
    "error",
    "pcall",
    "coroutine.wrap",
    "{__struct = \"Item\", name = \"x\", count = 1}",
    "NotifyMessage(\"Game.Tick\", 1, 2.5)\n",
    "NotifyMessage(\"Game.Echo\", x)\n",
    "ListenMessage(\"Game.Tick\", self, function(a, b) NotifyMessage(\"Game.Echo\", a) end)\n",
    "ListenMessage(\"Game.Echo\", nil, function(...) x = ... end)\n",
    "StoreObjectMessage(self, \"Inv.Items\", {{__struct = \"Item\", name = \"a\", count = 1}, {__struct = \"Item\", name = \"b\"}})\n",
    "ListenRowMessage(self, \"Inv.Items\", nil, GMP.AllRows, function(row, item) end)\n",
    "ListenHook(\"Hook.Go\", self, function(p, ctx) ctx:Handled() end)\n",
    "RunHook(\"Hook.Go\", {__struct = \"Hit\", a = 1})\n",
    "local t <close> = GMP.StoredArray(self, \"Inv.Items\")\n",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.join(" "))
}

/// Half the time, no separator: tokens run into each other.
fn tight_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

/// A runtime that gives up on runaway scripts fast, on a hub that declares
/// `Inv.Items` as a collection of `Item`.
fn fixture(rewrite: bool) -> Fixture {
    crate::support::inventory(LuaOptions {
        memory_limit: Some(32 * 1024 * 1024),
        budget: Some(200_000),
        watchdog_interval: Duration::from_millis(1),
        rewrite,
        mod_dir: None,
        max_table_rows: Some(1000),
        ..LuaOptions::default()
    })
}

/// Loads `source`; a failure must be a script error naming the file.
fn load_and_poke(f: &Fixture, source: &str) {
    let object = f.spawn();
    match f.rt.load_script("soup.lua", source, object) {
        Ok(_) => {}
        Err(LuaError::Script(e)) => {
            assert_eq!(e.file, "soup.lua");
            assert!(e.to_string().contains("soup.lua"), "{e}");
        }
        Err(other) => panic!("a bad script is a script error, got {other}"),
    }
    poke(f, object);
}

/// Whether Lua 5.4 refuses to load `source` as a chunk of text.
fn lua_refuses(source: &str) -> bool {
    mlua::Lua::new()
        .load(source)
        .set_mode(mlua::chunk::ChunkMode::Text)
        .into_function()
        .is_err()
}

/// Sends on every key the soup knows, every way, with a few values.
fn poke(f: &Fixture, object: ObjectId) {
    hub_poke::poke(
        &f.hub,
        f.world,
        object,
        &["Game.Tick", "Game.Echo", "Inv.Items", "Hook.Go", "A"],
    );
    let _ = f.rt.take_errors();
    let _ = f.rt.collect_garbage();
    let _ = f.hub.destroy(object);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn lua_script_random_bytes_load_is_a_script_error_never_a_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        rewrite in any::<bool>(),
    ) {
        let f = fixture(rewrite);
        load_and_poke(&f, &String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn lua_script_token_soup_loads_or_errors_and_sends_never_panic(
        source in prop_oneof![soup(), tight_soup()],
        rewrite in any::<bool>(),
    ) {
        let f = fixture(rewrite);
        load_and_poke(&f, &source);
    }

    #[test]
    fn lua_scripts_with_well_formed_calls_in_random_order_never_panic(
        calls in prop::collection::vec(prop::sample::select(&PIECES[PIECES.len() - 10..]), 1..12),
    ) {
        let f = fixture(true);
        let source = calls.concat();
        load_and_poke(&f, &source);
        // The same script loaded twice, on a hub that already heard it.
        load_and_poke(&f, &source);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn lua_scan_and_rewrite_of_random_text_never_panic(text in any::<String>()) {
        let calls = scan(&text);
        for call in &calls {
            prop_assert!(call.call.start <= call.call.end && call.call.end <= text.len());
        }
        let _ = rewrite(&text);
    }

    /// Lua's own parser is the judge of a syntax error: tree-sitter's
    /// grammar accepts more (a `#` line after a space, `local nil`, ...).
    #[test]
    fn lua_rewrite_leaves_sources_with_syntax_errors_unchanged(
        source in prop_oneof![soup(), tight_soup()],
    ) {
        let calls = scan(&source);
        for call in &calls {
            prop_assert!(call.call.start <= call.call.end && call.call.end <= source.len());
            for arg in &call.args {
                prop_assert!(arg.span.start <= arg.span.end && arg.span.end <= source.len());
            }
        }
        let out = rewrite(&source);
        // The rewriter reads a `#` first line as a file's, which Lua skips.
        let judged = match source.strip_prefix('#') {
            Some(rest) => &rest[rest.find('\n').unwrap_or(rest.len())..],
            None => source.as_str(),
        };
        if lua_refuses(judged) {
            prop_assert_eq!(&out.source, &source);
            prop_assert!(out.bakes.is_empty());
        } else if out.is_rewritten() {
            // A source Lua loads rewrites to one it loads, with the same lines.
            prop_assert!(!lua_refuses(&out.source), "{}", out.source);
            prop_assert_eq!(out.source.lines().count(), source.lines().count());
        } else {
            prop_assert_eq!(&out.source, &source);
        }
    }
}

/// A table file may define a struct that contains itself; a script's table
/// of it leaves the field out, which is filled with the field's default.
/// That default recursed forever (a stack overflow) before
/// `Value::default_of` closed loops with nil.
#[test]
fn lua_table_of_a_self_containing_struct_converts_without_overflow() {
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
        "node.lua",
        "ListenMessage(\"Node.Sent\", self, function(node) print(node.n, node.next.n, node.next.next) end)\n\
         NotifyMessage(\"Node.Sent\", {__struct = \"Node\", n = 3})",
    );
    // The default of `next` is a `Node` whose own `next` closes the loop.
    assert_eq!(f.printed(), vec!["3\t0\tnil"]);
}

/// A listener that sends its own key (or a hook that runs itself) recurses
/// through the hub: Lua's C-stack limit stops it with an error, before the
/// Rust stack runs out.
#[test]
fn lua_listener_resending_its_own_key_is_stopped_not_a_crash() {
    let f = fixture(true);
    let object = f.spawn();
    let sources = [
        "ListenMessage(\"Loop\", self, function(n) NotifyMessage(\"Loop\", n + 1) end)\n\
         NotifyMessage(\"Loop\", 1)",
        "ListenHook(\"H\", self, function(p, c) RunHook(\"H\", p) end)\nRunHook(\"H\", 1)",
    ];
    for source in sources {
        let _ = f.rt.load_script("loop.lua", source, object);
        let reports = f.hub.take_reports();
        let errors = f.rt.take_errors();
        assert!(
            !reports.is_empty() || !errors.is_empty(),
            "the runaway recursion was not reported: {source}"
        );
    }
}

// ----- type rules and bounds, at the line that broke them ---------------------

/// The Lua error of a script that must fail to load, with its line.
fn load_error(f: &Fixture, file: &str, source: &str) -> (Option<u32>, String) {
    load_error_on(f, file, source, f.spawn())
}

fn load_error_on(f: &Fixture, file: &str, source: &str, object: ObjectId) -> (Option<u32>, String) {
    match f.rt.load_script(file, source, object) {
        Err(LuaError::Script(e)) => (e.line, e.message),
        Err(other) => panic!("a script error was expected, got {other}"),
        Ok(_) => panic!("{file} loaded: it should have failed"),
    }
}

#[test]
fn lua_an_array_mixing_types_is_refused_at_its_line_on_every_run() {
    let source = "local n = 1\nNotifyMessage(\"Mixed\", {1, \"a\"})\n";
    let first_run = Fixture::new();
    let (line, first) = load_error(&first_run, "mixed.lua", source);
    assert_eq!(line, Some(2), "{first}");
    assert!(first.contains("array mixing int and string"), "{first}");
    let second_run = Fixture::new();
    second_run.hub.merge_table(&first_run.hub.table_snapshot());
    let (line, second) = load_error(&second_run, "mixed.lua", source);
    assert_eq!(line, Some(2));
    assert_eq!(first.lines().next(), second.lines().next());
}

#[test]
fn lua_stored_array_refuses_a_row_of_the_wrong_type_at_its_line_naming_key_and_row() {
    for (item, got) in [("\"x\"", "string"), ("true", "bool"), ("{3}", "array<int>")] {
        let f = Fixture::new();
        let source = format!(
            "StoreObjectMessage(self, \"Nums\", {{1, 2}})\n\
             local w <close> = GMP.StoredArray(self, \"Nums\")\n\
             w:Add({item})\n"
        );
        let object = f.spawn();
        let (line, message) = load_error_on(&f, "nums.lua", &source, object);
        assert_eq!(line, Some(3), "{message}");
        let expected = format!("`Nums` row 3: expected int, got {got}");
        assert!(message.contains(&expected), "{message}");
        let key = f.hub.key("Nums").unwrap();
        let stored = f.hub.stored(key, object).unwrap();
        assert_eq!(stored[0].to_string(), "[1, 2]", "the table is as it was");
    }
}

#[test]
fn lua_a_key_over_the_length_limit_is_an_error_at_its_line() {
    let f = Fixture::new();
    let (line, message) = load_error(
        &f,
        "long.lua",
        "local k = string.rep(\"K\", 300)\nNotifyMessage(k, 1)\n",
    );
    assert_eq!(line, Some(2), "{message}");
    assert!(message.contains("at most 256 bytes"), "{message}");
}

#[test]
fn lua_a_source_name_over_256_bytes_is_an_error_at_its_line() {
    let f = Fixture::new();
    let (line, message) = load_error(
        &f,
        "named.lua",
        "local name = string.rep(\"n\", 300)\nlocal part = GMP.Named(self, name)\n",
    );
    assert_eq!(line, Some(2), "{message}");
    assert!(message.contains("GMP.Named"), "{message}");
    assert!(
        message.contains("a source name has at most 256 bytes"),
        "{message}"
    );
}

// ----- what a script keeps in the hub is bounded --------------------------------

const MIB: usize = 1 << 20;

fn with_hub_memory(limit: usize) -> Fixture {
    Fixture::with(LuaOptions {
        hub_memory_limit: Some(limit),
        ..LuaOptions::default()
    })
}

#[test]
fn lua_storing_past_the_hub_memory_limit_is_an_error_at_its_line_not_an_abort() {
    let f = with_hub_memory(8 * MIB);
    let (line, message) = load_error(
        &f,
        "hoard.lua",
        "local big = string.rep(\"x\", 1 << 20)\n\
         for i = 1, 60 do\n\
         \x20 StoreObjectMessage(self, \"K\" .. i, big)\n\
         end\n",
    );
    assert_eq!(line, Some(3), "{message}");
    assert!(
        message.contains("storing this message needs 1.0 MiB of hub memory, over this runtime's hub memory limit of 8 MiB"),
        "{message}"
    );
    let quota = f.rt.hub().quota().expect("a runtime's handle is charged");
    assert!(quota.used() <= 8 * MIB);
}

#[test]
fn lua_a_million_distinct_keys_are_refused_at_the_line_once_the_limit_is_reached() {
    let f = with_hub_memory(8 * MIB);
    let (line, message) = load_error(
        &f,
        "keys.lua",
        "for i = 1, 1000000 do\n  NotifyMessage(\"Spam.K\" .. i, i)\nend\n",
    );
    assert_eq!(line, Some(2), "{message}");
    assert!(message.contains("this new key needs"), "{message}");
    assert!(f.hub.table_snapshot().entries().count() < 20_000);
}

#[test]
fn lua_a_hundred_thousand_listeners_on_one_key_register_and_hear_a_send() {
    let f = Fixture::with(LuaOptions {
        // A debug build's pace: what is measured is that it ends.
        time_limit: Some(Duration::from_secs(30)),
        ..LuaOptions::default()
    });
    let started = std::time::Instant::now();
    f.load(
        "many.lua",
        "heard = 0\n\
         for i = 1, 100000 do\n\
         \x20 ListenMessage(\"Crowd\", self, function() heard = heard + 1 end)\n\
         end\n\
         NotifyMessage(\"Crowd\")\n\
         print(heard)\n",
    );
    assert_eq!(f.printed(), ["100000"]);
    // Registering was quadratic: 80,000 took 28 s in a release build, and
    // 100,000 would take minutes in a debug one. Linear, it takes about 3 s
    // in a debug build; the bound leaves room for a loaded machine.
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
}

mod hostile_calls;

#[test]
fn lua_a_mod_cannot_retype_a_key_the_host_declared() {
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
        "listener.lua",
        "ListenMessage(\"Game.Tick\", self, function(n, dt) print(\"tick\", n) end)",
    );
    let (line, message) = load_error(
        &f,
        "poison.lua",
        "local x = 1\nNotifyMessage(\"Game.Tick\", \"x\", {1, 2})\n",
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
    assert_eq!(f.printed(), ["tick\t1"]);
}
