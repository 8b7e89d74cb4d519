//! Random hostile programs against the sandbox: sequences of API calls and
//! built-in calls with random sizes (zero, huge, negative, the edges of
//! Rhai's integers), runaway loops in every place a script can put one
//! (listeners, hook listeners, comparators and other callbacks, `try`),
//! floods of keys, listeners and stored strings. Each program loads on a
//! small sandbox and the hub then ticks it; every call into the runtime
//! must come back within [`CALL_LIMIT`], and nothing may panic or abort (an
//! abort ends the test binary, which fails the run).
//!
//! Each case runs on its own thread, so that a hang is seen as a hang (the
//! case is given [`CASE_LIMIT`] in all) rather than as a test that never
//! ends.

use std::time::Duration;

use gantry_host::face::ScriptRuntime;
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime};
use proptest::prelude::*;

/// The longest any one call into the runtime (a load, a tick) may take.
const CALL_LIMIT: Duration = Duration::from_secs(2);
/// The longest a whole case may take before it counts as hung.
const CASE_LIMIT: Duration = Duration::from_secs(20);

/// Sizes a hostile script passes: the edges of Rhai's integers and of the
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
    "9223372036854775807",
    "-9223372036854775807",
];

/// One statement of a hostile program, `{k}` a key and `{n}`/`{m}` sizes.
const STATEMENTS: &[&str] = &[
    r#"NotifyMessage("{k}", {n}, "x");"#,
    r#"NotifyMessage("{k}", [1, "a"]);"#,
    r#"NotifyMessage("Game.Tick", "x", [1, 2]);"#,
    r#"for i in 0..{m} { let s = ""; s.pad({n}, 'x'); StoreObjectMessage(SELF, "{k}" + i, s); }"#,
    r#"for i in 0..{m} { NotifyMessage("K" + i, i); }"#,
    r#"for i in 0..{m} { ListenMessage("{k}", SELF, |a| {}); }"#,
    r#"ListenMessage("{k}", SELF, |a| { loop {} }, #{ times: {n}, order: {m} });"#,
    r#"ListenMessage("Game.Tick", SELF, |n, dt| { let s = ""; s.pad({n}, 'x'); });"#,
    r#"UnbindMessage("{k}", {n});"#,
    r#"RunHook("{k}", #{ v: {n} });"#,
    r#"ListenHook("{k}", SELF, |ctx| { loop {} });"#,
    r#"let a = GMP::StoredArray(SELF, "{k}"); a.SetNum({n}); a.Add({m});"#,
    r#"let a = []; a.pad({n}, 0);"#,
    r#"let b = blob({n});"#,
    r#"let s = "ab"; s.pad({n}, 'c'); s.replace("a", "aaaa");"#,
    r#"sleep({n});"#,
    r#"loop {}"#,
    r#"try { loop {} } catch { loop {} }"#,
    r#"loop { try { loop {} } catch {} }"#,
    r#"[2, 1, 3].sort(|x, y| { loop {} });"#,
    r#"loop { [2, 1].sort(|x, y| { loop {} }); }"#,
    r#"[1, 2, 3].map(|x| { loop {} });"#,
    r#"[1, 2, 3].filter(|x| { loop {} });"#,
    r#"[1, 2, 3].reduce(|s, x| { loop {} }, 0);"#,
    r#"fn f(n) { f(n + 1) + 1 } f(1);"#,
    r#"let s = "x"; loop { s += s; }"#,
    r#"let m = #{}; for i in 0..{m} { m["k" + i] = i; }"#,
    r#"range(0, {n}).map(|x| x);"#,
];

/// A statement inside a `try`, so that the program goes on after an
/// ordinary error.
fn guarded(text: &str) -> String {
    format!("try {{ {text} }} catch {{}}\n")
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
            let rt = RhaiRuntime::new(
                hub.clone(),
                RhaiOptions {
                    time_limit: Some(Duration::from_millis(100)),
                    hub_memory_limit: Some(16 << 20),
                    ..RhaiOptions::default()
                },
            )
            .expect("runtime");
            rt.on_print(|_| {});
            rt
        },
        move |rt, object| {
            let _ = rt.load_script("hostile.rhai", &source, object);
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_hostile_rhai_programs_never_hang_panic_or_abort_the_host(source in program()) {
        let longest = run_case(source);
        prop_assert!(longest <= CALL_LIMIT, "one call into the runtime took {longest:?}");
    }
}
