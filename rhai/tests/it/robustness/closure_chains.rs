//! Closures capturing closures, and values curried into function pointers:
//! no size limit counts them, and Rhai drops, copies and prints them by
//! recursion, a frame per level. A chain grown over calls, or dropped where
//! the host's stack is (a listener the hub unbinds, a value handed to the
//! host), overflowed the stack and aborted the process. Each case runs on
//! a thread with the default 2 MiB stack; an overflow aborts this binary.

use std::time::Duration;

use gantry_host::Source;
use gantry_rhai::runtime::RhaiOptions;
use gantry_test_support::guard::within;

use crate::support::Fixture;

const DEADLINE: Duration = Duration::from_secs(10);

/// Values nest at most 2,000 levels (array and map limits of 1,000): the
/// script stack is sized for that, a few tens of MiB.
fn small_limits() -> RhaiOptions {
    RhaiOptions {
        max_array_size: 1000,
        max_map_size: 1000,
        ..RhaiOptions::default()
    }
}

/// Values nest at most 40,000 levels: 15,000 closures deep is allowed, and
/// far past what a 2 MiB stack drops.
fn room_for_chains() -> RhaiOptions {
    RhaiOptions {
        max_array_size: 20_000,
        max_map_size: 20_000,
        ..RhaiOptions::default()
    }
}

/// A function nesting `f` 15,000 closures deep, each capturing the last.
const CHAIN: &str = "fn chain() { let f = || 1; for i in 0..15000 { let g = f; f = || g; } f }\n";

#[test]
fn a_closure_chain_grown_every_call_is_cleared_at_the_nesting_limit() {
    within(DEADLINE, || {
        let f = Fixture::with(small_limits());
        f.load(
            "grow.rhai",
            "let f = || 1;\n\
             ListenMessage(\"Grow\", (), || { for i in 0..5000 { let g = f; f = || g; } });\n",
        );
        // 100,000 closures deep without the limit: past the script stack.
        for _ in 0..20 {
            f.hub.send_str("Grow", Source::Global, ()).unwrap();
        }
        let failures = f.failures();
        assert_eq!(failures.len(), 20, "{failures:?}");
        assert!(failures[0].starts_with("grow.rhai:2:"), "{}", failures[0]);
        assert!(
            failures[0].contains("captured nests deeper than 2000 levels"),
            "{}",
            failures[0]
        );
        drop(f);
    });
}

#[test]
fn a_curried_chain_of_arrays_grown_every_call_is_cleared_at_the_nesting_limit() {
    within(DEADLINE, || {
        let f = Fixture::with(small_limits());
        f.load(
            "grow.rhai",
            "let f = Fn(\"x\");\n\
             ListenMessage(\"Grow\", (), || { let h = f; for i in 0..1500 { h = Fn(\"x\").curry([take(h)]); } f = h; });\n",
        );
        for _ in 0..20 {
            f.hub.send_str("Grow", Source::Global, ()).unwrap();
        }
        let failures = f.failures();
        assert_eq!(failures.len(), 20, "{failures:?}");
        assert!(
            failures[0].contains("deeper than 2000 levels"),
            "{}",
            failures[0]
        );
    });
}

/// The listener's closure alone holds the chain; the hub drops it when it
/// is used up, when its object is destroyed, or when the hub goes after the
/// runtime.
fn chain_held_by_a_listener(drop_it: impl FnOnce(&Fixture, gantry_host::ObjectId)) {
    let f = Fixture::with(room_for_chains());
    let (_, object) = f.load(
        "hold.rhai",
        &format!(
            "{CHAIN}fn hold() {{ let f = chain(); ListenObjectMessage(This(), \"Held\", (), || type_of(f), #{{ times: 1 }}); }}\nhold();"
        ),
    );
    drop_it(&f, object);
    assert!(f.failures().is_empty());
}

#[test]
fn a_closure_chain_a_used_up_listener_held_is_dropped_without_overflow() {
    within(DEADLINE, || {
        chain_held_by_a_listener(|f, object| {
            f.hub.send_str("Held", Source::Object(object), ()).unwrap();
        })
    });
}

#[test]
fn a_closure_chain_a_destroyed_object_s_listener_held_is_dropped_without_overflow() {
    within(DEADLINE, || {
        chain_held_by_a_listener(|f, object| {
            f.hub.destroy(object).unwrap();
        })
    });
}

#[test]
fn a_closure_chain_outliving_its_runtime_is_dropped_without_overflow() {
    within(DEADLINE, || {
        let f = Fixture::with(room_for_chains());
        f.load(
            "hold.rhai",
            &format!("{CHAIN}fn hold() {{ let f = chain(); ListenMessage(\"Held\", (), || type_of(f)); }}\nhold();"),
        );
        let Fixture { hub, rt, .. } = f;
        drop(rt);
        drop(hub);
    });
}

#[test]
fn a_closure_chain_is_not_handed_to_the_host() {
    within(DEADLINE, || {
        let f = Fixture::with(room_for_chains());
        let (id, _) = f.load("hand.rhai", &format!("{CHAIN}let f = chain();\nlet n = 1;"));
        assert!(f.rt.global(id, "f").is_none());
        assert_eq!(f.rt.global(id, "n").and_then(|n| n.as_int().ok()), Some(1));
        let error = f.rt.call(id, "chain", vec![]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("returned a value nested deeper than 32 levels"),
            "{error}"
        );
    });
}

#[test]
fn a_top_level_that_fails_holding_a_closure_chain_drops_it_without_overflow() {
    within(DEADLINE, || {
        let f = Fixture::with(room_for_chains());
        let error = f.load_err(
            "fails.rhai",
            "let f = || 1;\n\
             for i in 0..15000 { let g = f; f = || g; }\n\
             throw \"the top level gave up\";\n",
        );
        assert!(error.starts_with("fails.rhai:3:"), "{error}");
        assert!(error.contains("the top level gave up"), "{error}");
        drop(f);
    });
}
