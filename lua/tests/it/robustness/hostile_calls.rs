//! Random hostile programs against the sandbox: sequences of API calls and
//! standard-library calls with random sizes (zero, huge, negative,
//! `math.maxinteger`), runaway loops in every place a script can put one
//! (message handlers, comparators, coroutines, listeners), floods of keys,
//! listeners and stored strings. Each program loads on a small sandbox and
//! the hub then ticks it; every call into the runtime must come back within
//! [`CALL_LIMIT`], and nothing may panic or abort (an abort ends the test
//! binary, which fails the run).
//!
//! The generator runs on its own thread per case, so that a hang is seen as
//! a hang (the case's thread is given [`CASE_LIMIT`] in all) rather than as a
//! test that never ends.

use std::time::Duration;

use gantry_host::face::ScriptRuntime;
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use proptest::prelude::*;

/// The longest any one call into the runtime (a load, a tick) may take.
const CALL_LIMIT: Duration = Duration::from_secs(2);
/// The longest a whole case may take before it counts as hung.
const CASE_LIMIT: Duration = Duration::from_secs(20);

/// Sizes a hostile script passes: the edges of Lua's integers and of the
/// sandbox's bounds.
const SIZES: &[&str] = &[
    "0",
    "1",
    "-1",
    "7",
    "1000",
    "100000",
    "1 << 20",
    "1 << 31",
    "math.maxinteger",
    "math.mininteger",
    "math.maxinteger - 1",
    "0/0",
    "1e308",
];

/// One statement of a hostile program, `{k}` a key and `{n}`/`{m}` sizes.
const STATEMENTS: &[&str] = &[
    r#"NotifyMessage("{k}", {n}, "x")"#,
    r#"NotifyMessage("{k}", {1, "a"})"#,
    r#"NotifyMessage("Game.Tick", "x", {1, 2})"#,
    r#"for i = 1, {m} do StoreObjectMessage(self, "{k}" .. i, string.rep("x", {n})) end"#,
    r#"for i = 1, {m} do NotifyMessage("K" .. i, i) end"#,
    r#"for i = 1, {m} do ListenMessage("{k}", self, function() end) end"#,
    r#"ListenMessage("{k}", self, function(a) while true do end end, { times = {n}, order = {m} })"#,
    r#"ListenMessage("Game.Tick", self, function() string.rep("x", {n}) end)"#,
    r#"UnbindMessage("{k}", {n})"#,
    r#"RunHook("{k}", { v = {n} })"#,
    r#"ListenHook("{k}", self, function(ctx) while true do end end)"#,
    r#"local a = GMP.StoredArray(self, "{k}"); a:SetNum({n}); a:Add({m})"#,
    r#"string.find(string.rep("a", {n}), string.rep("a-", 12) .. "b")"#,
    r#"string.gsub(string.rep("ab", {n}), "(a*)*b", "%1%1")"#,
    r#"string.rep("", {n})"#,
    r#"string.rep("xy", {n}, ",")"#,
    r#"table.move({}, 1, {n}, 1, {})"#,
    r#"table.concat({}, ",", 1, {n})"#,
    r#"table.unpack({}, 1, {n})"#,
    r#"string.format("%99d", {n})"#,
    r#"utf8.char({n})"#,
    r#"local t = {} for i = 1, {m} do t[#t + 1] = string.rep("x", {n}) end"#,
    r#"while true do end"#,
    r#"pcall(function() while true do end end) while true do end"#,
    r#"xpcall(function() while true do end end, function(e) while true do end end)"#,
    r#"while true do pcall(function() while true do end end) end"#,
    r#"coroutine.wrap(function() while true do end end)()"#,
    r#"table.sort({3, 2, 1, 5, 4}, function(a, b) while true do end end)"#,
    r#"local t = setmetatable({}, { __close = function() while true do end end }) do local c <close> = t end"#,
    r#"local function f(n) return f(n + 1) + 1 end f(1)"#,
    r#"local s = "x" while true do s = s .. s end"#,
];

/// A statement inside a `pcall`, so that the program goes on after an
/// ordinary error.
fn guarded(text: &str) -> String {
    format!("pcall(function() {text} end)\n")
}

fn program() -> impl Strategy<Value = String> {
    gantry_test_support::hostile_case::program(STATEMENTS, SIZES, guarded)
}

/// Runs `source` on a small sandbox on its own thread: load, then three
/// ticks and a poke of the hub. Returns the longest single call.
fn run_case(source: String) -> Duration {
    gantry_test_support::hostile_case::longest_call(
        CASE_LIMIT,
        |hub| {
            let rt = LuaRuntime::new(
                hub.clone(),
                LuaOptions {
                    memory_limit: Some(64 << 20),
                    hub_memory_limit: Some(16 << 20),
                    budget: Some(1_000_000),
                    time_limit: Some(Duration::from_millis(100)),
                    max_table_rows: Some(10_000),
                    ..LuaOptions::default()
                },
            )
            .expect("runtime");
            rt.on_print(|_| {});
            rt
        },
        move |rt, object| {
            let _ = rt.load_script("hostile.lua", &source, object);
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_hostile_lua_programs_never_hang_panic_or_abort_the_host(source in program()) {
        let longest = run_case(source);
        prop_assert!(longest <= CALL_LIMIT, "one call into the runtime took {longest:?}");
    }
}
