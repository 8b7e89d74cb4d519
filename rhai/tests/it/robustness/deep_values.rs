//! Arrays and maps a script nests thousands deep: Rhai recurses over them
//! (cloning, dropping, comparing, printing, measuring), which overflowed
//! the host thread's stack and aborted the process. Each case runs on a
//! thread with the default 2 MiB stack, where a few hundred levels of
//! Rhai's `==` or a thousand of its clone used to overflow; an overflow
//! aborts this whole test binary.

use std::time::Duration;

use gantry_host::Source;
use gantry_rhai::runtime::RhaiOptions;
use gantry_test_support::guard::within;

use crate::support::Fixture;

const DEADLINE: Duration = Duration::from_secs(10);
/// Deep enough for Rhai's clone, `==` and printing to overflow 2 MiB.
const DEPTH: usize = 2000;

/// Room for the values built here (nesting counts towards the size limits).
fn options() -> RhaiOptions {
    RhaiOptions {
        max_array_size: 20_000,
        max_map_size: 20_000,
        // Each level costs Rhai a size check over the whole value.
        time_limit: Some(Duration::from_secs(8)),
        ..RhaiOptions::default()
    }
}

/// Wraps `a` in an array (or a map) `levels` times in one call; `take`
/// moves `a` instead of copying it, so that building costs no more than
/// Rhai's size check.
fn wrap(levels: usize, map: bool) -> String {
    let wrapped = if map { "#{ x: take(a) }" } else { "[take(a)]" };
    format!("for i in 0..{levels} {{ a = {wrapped}; }}")
}

/// A script that nests `a` `DEPTH` deep in one call, then uses it every way
/// that recurses over it; the runtime and hub are dropped at the end.
fn nest_then_use(map: bool) {
    within(DEADLINE, move || {
        let f = Fixture::with(options());
        let source = format!(
            "let a = [];\n{}\n\
             print(a == a);\nprint(a != a);\nprint([a].contains(a));\n\
             print(a.to_string().len() > {DEPTH});\nprint(`${{a}}`.len() > {DEPTH});\n\
             let b = a;\nlet c = [a, b];\nprint(type_of(c));\ndebug(a);",
            wrap(DEPTH, map),
        );
        f.load("deep.rhai", &source);
        let printed = f.printed();
        assert_eq!(
            &printed[..6],
            &["true", "false", "true", "true", "true", "array"][..],
        );
        // `debug` writes the whole value.
        assert_eq!(
            printed[6].len(),
            if map { DEPTH * 8 + 2 } else { DEPTH * 2 + 2 }
        );
    });
}

#[test]
fn a_script_nesting_an_array_thousands_deep_can_compare_print_and_copy_it() {
    nest_then_use(false);
}

#[test]
fn a_script_nesting_a_map_thousands_deep_can_compare_print_and_copy_it() {
    nest_then_use(true);
}

/// Ticks of [`a_value_nested_deeper_each_tick_is_compared_printed_and_dropped`]:
/// 2,000 levels, past where Rhai's clone and `==` overflowed 2 MiB.
const TICKS: usize = 20;

/// A variable 100 levels deeper each tick, kept between calls by a
/// listener's closure, then compared, printed and dropped with the
/// runtime.
#[test]
fn a_value_nested_deeper_each_tick_is_compared_printed_and_dropped() {
    within(DEADLINE, || {
        let f = Fixture::with(options());
        f.load(
            "grow.rhai",
            "let a = [];\n\
             ListenMessage(\"Tick\", (), || { for i in 0..100 { a = [take(a)]; } });\n\
             ListenMessage(\"Look\", (), || { let b = a; print(a == b); print(a.to_string().len()); });",
        );
        for _ in 0..TICKS {
            f.hub.send_str("Tick", Source::Global, ()).unwrap();
        }
        f.hub.send_str("Look", Source::Global, ()).unwrap();
        assert!(f.failures().is_empty(), "{:?}", f.failures());
        assert_eq!(f.printed(), ["true", &(2 * TICKS * 100 + 2).to_string()]);
        drop(f);
    });
}

/// Nesting is bounded by the size limits: past them the script stops with
/// Rhai's size error at its line, and the host goes on.
#[test]
fn nesting_past_the_array_size_limit_is_an_error_at_its_line() {
    within(DEADLINE, || {
        let f = Fixture::with(RhaiOptions {
            max_array_size: DEPTH - 500,
            ..options()
        });
        let message = f.load_err("deep.rhai", &format!("let a = [];\n{}", wrap(DEPTH, false)));
        assert!(message.starts_with("deep.rhai:2:"), "{message}");
        assert!(message.contains("Size of array"), "{message}");
        f.load("next.rhai", "print(\"still here\");");
        assert_eq!(f.printed(), ["still here"]);
    });
}

/// A thrown deep value ends the script with a short message naming it.
#[test]
fn throwing_a_deeply_nested_array_is_a_short_error_at_its_line() {
    within(DEADLINE, || {
        let f = Fixture::with(options());
        let message = f.load_err(
            "throw.rhai",
            &format!("let a = [];\n{}\nthrow a;", wrap(DEPTH, false)),
        );
        assert!(
            message.starts_with("throw.rhai:3: [[[[[[[[…]]]]]]]]"),
            "{message}"
        );
    });
}

/// Sending a deep value refuses it, naming the key, instead of converting
/// it level by level.
#[test]
fn sending_a_deeply_nested_array_is_an_error_naming_the_key() {
    within(DEADLINE, || {
        let f = Fixture::with(options());
        let message = f.load_err(
            "send.rhai",
            &format!(
                "let a = [];\n{}\nNotifyMessage(\"Deep.Key\", a);",
                wrap(DEPTH, false)
            ),
        );
        assert!(message.starts_with("send.rhai:3:"), "{message}");
        assert!(message.contains("Deep.Key"), "{message}");
        assert!(message.contains("nested deeper than 32"), "{message}");
    });
}
