//! Spec audit from Rhai: rules of DESIGN.md and references 000, 002 and 003
//! that the other Rhai tests leave untested, each run with baking on and
//! off (baking must not change what a call does).

mod common;

use common::Fixture;
use gantry_host::{KeyDecl, Language, Report, Type};
use gantry_rhai::runtime::RhaiOptions;

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::with(RhaiOptions {
            rewrite,
            ..RhaiOptions::default()
        });
        test(&f, rewrite);
    }
}

fn declare_pair(f: &Fixture) {
    f.hub
        .declare(
            "Pair",
            KeyDecl::event()
                .param("a", Type::Int)
                .param("b", Type::String),
        )
        .unwrap();
}

#[test]
fn keys_bad_keys_are_errors_at_the_callers_line_literal_or_not() {
    both_ways(|f, rewrite| {
        for (source, line, key) in [
            ("\n\nNotifyMessage(\"bad key!\", 1);\n", 3, "bad key!"),
            (
                "let k = \"A..B\";\nListenMessage(k, (), || {});\n",
                2,
                "A..B",
            ),
            ("\nGMP::StoreObjectMessage(SELF, \"Bad.\", 1);\n", 2, "Bad."),
        ] {
            let err = f.load_err("k.rhai", source);
            assert!(
                err.starts_with(&format!("k.rhai:{line}:")) && err.contains(key),
                "rewrite {rewrite}: {err}"
            );
        }
    });
}

/// Every API function by its global name and under `GMP::`, the same
/// script in both spellings.
const EVERY_FUNCTION: &str = r#"
let id = ListenMessage("P.A", (), |n| print(`a ${n}`));
NotifyMessage("P.A", 1);
ListenWorldMessage(SELF.World(), "P.W", (), || print("w"));
NotifyWorldMessage(SELF.World(), "P.W");
ListenObjectMessage(SELF, "P.O", (), |x, rsp| rsp.Response(x + 1));
SendObjectMessage(SELF, "P.O", 1, |v| print(`reply ${v}`));
ListenObjectMessage(SELF, "P.N", (), |x| print(`object ${x}`));
NotifyObjectMessage(SELF, "P.N", 5);
StoreObjectMessage(SELF, "P.S", "kept");
OnceObjectMessage(SELF, "P.Once", 7);
ListenObjectMessage(SELF, "P.S", (), |s| print(`stored ${s}`));
ListenObjectMessage(SELF, "P.Once", (), |n| print(`once ${n}`));
ListenObjectMessage(SELF, "P.Once", (), |n| print(`once again ${n}`));
print(`${RemoveStoredObjectMessage(SELF, "P.S")}`);
print(`${UnbindMessage("P.A", id)}`);
NotifyMessage("P.A", 2);
ListenHook("P.H", (), |p, ctx| { ctx.Handled(); });
let r = RunHook("P.H", 1);
print(`${r.ran} ${r.handled} ${r.cancelled}`);
print(`${Request(SELF, "P.O", 3)}`);
"#;

#[test]
fn api_every_function_works_as_a_global_and_under_gmp() {
    let expected = [
        "a 1",
        "w",
        "reply 2",
        "object 5",
        "stored kept",
        "once 7",
        "true",
        "1",
        "1 true false",
        "4",
    ];
    both_ways(|f, rewrite| {
        f.load("global.rhai", EVERY_FUNCTION);
        assert_eq!(f.printed(), expected, "rewrite {rewrite}");
        let mut gmp = EVERY_FUNCTION.to_owned();
        for name in [
            "ListenMessage",
            "ListenWorldMessage",
            "ListenObjectMessage",
            "NotifyMessage",
            "NotifyWorldMessage",
            "NotifyObjectMessage",
            "SendObjectMessage",
            "StoreObjectMessage",
            "OnceObjectMessage",
            "RemoveStoredObjectMessage",
            "UnbindMessage",
            "ListenHook",
            "RunHook",
            "Request",
        ] {
            gmp = gmp.replace(&format!("{name}("), &format!("GMP::{name}("));
        }
        // (No name above is a part of another, so each call is
        // qualified once.)
        assert!(!gmp.contains("GMP::GMP::"));
        let f2 = Fixture::with(RhaiOptions {
            rewrite,
            ..RhaiOptions::default()
        });
        f2.load("gmp.rhai", &gmp);
        assert_eq!(f2.printed(), expected, "rewrite {rewrite}:\n{gmp}");
    });
}

#[test]
fn compat_a_prefix_send_on_a_declared_key_reaches_listeners_baked_or_not() {
    both_ways(|f, rewrite| {
        declare_pair(f);
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Pair", (), |a| print(`got ${a}`));
            NotifyMessage("Pair", 1);
            NotifyMessage("Pair", 2, "two");
            "#,
        );
        assert_eq!(f.printed(), ["got 1", "got 2"], "rewrite {rewrite}");
        let err = f.load_err("b.rhai", "\nNotifyMessage(\"Pair\", 3, \"three\", true);\n");
        assert!(
            err.starts_with("b.rhai:2:") && err.contains("at most 2"),
            "rewrite {rewrite}: {err}"
        );
    });
}

#[test]
fn compat_script_mismatch_is_reported_with_key_position_expected_got_and_the_scripts_line() {
    both_ways(|f, rewrite| {
        declare_pair(f);
        f.load(
            "listen.rhai",
            "ListenMessage(\"Pair\", (), |a| print(`called ${a}`));\n",
        );
        for (function, call) in [
            ("NotifyMessage", "NotifyMessage(\"Pair\", \"oops\");"),
            (
                "NotifyObjectMessage",
                "NotifyObjectMessage(SELF, \"Pair\", \"oops\");",
            ),
            (
                "SendObjectMessage",
                "SendObjectMessage(SELF, \"Pair\", \"oops\");",
            ),
            (
                "StoreObjectMessage",
                "StoreObjectMessage(SELF, \"Pair\", \"oops\");",
            ),
            ("generic", "let k = \"Pair\";\nNotifyMessage(k, \"oops\");"),
        ] {
            f.hub.take_reports();
            let source = format!("\n\n{call}\n");
            let line = 2 + call.lines().count() as u32;
            let err = f.load_err("m.rhai", &source);
            assert!(
                err.starts_with(&format!("m.rhai:{line}:"))
                    && err.contains("`Pair` argument 1: expected int, got string"),
                "{function}, rewrite {rewrite}: {err}"
            );
            assert!(f.printed().is_empty(), "no listener is called");
            let reports = f.hub.take_reports();
            let [
                Report::Mismatch {
                    key,
                    position,
                    expected,
                    got,
                    site: Some(site),
                    ..
                },
            ] = reports.as_slice()
            else {
                panic!("{function}, rewrite {rewrite}: {reports:?}");
            };
            assert_eq!((key.as_str(), *position), ("Pair", 0));
            assert_eq!((expected.as_str(), got.as_str()), ("int", "string"));
            assert_eq!(
                (site.file.as_str(), site.line, site.language),
                ("m.rhai", line, Language::Rhai),
                "{function}, rewrite {rewrite}"
            );
        }
    });
}

#[test]
fn compat_unchecked_mode_lets_a_rhai_send_through_baked_or_not() {
    both_ways(|f, rewrite| {
        declare_pair(f);
        f.hub.set_checked(false);
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Pair", (), |a, b| print(`got ${a} ${b}`));
            NotifyMessage("Pair", "text", 2);
            "#,
        );
        assert_eq!(f.printed(), ["got text 2"], "rewrite {rewrite}");
        assert!(f.hub.take_reports().is_empty());
    });
}

#[test]
fn compat_int_for_float_reaches_rhai_listeners_as_a_float() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Speed", KeyDecl::event().param("v", Type::Float))
            .unwrap();
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Speed", (), |v| print(`${type_of(v)} ${v}`));
            NotifyMessage("Speed", 5);
            let k = "Speed";
            NotifyMessage(k, 6);
            "#,
        );
        assert_eq!(f.printed(), ["f64 5.0", "f64 6.0"], "rewrite {rewrite}");
    });
}

#[test]
fn listen_by_function_name_and_unit_options_work_baked_or_not() {
    both_ways(|f, rewrite| {
        declare_pair(f);
        f.load(
            "a.rhai",
            r#"
            fn on_pair(a, b) { print(`named ${a} ${b}`); }
            ListenMessage("Pair", (), "on_pair");
            ListenMessage("Pair", (), |a| print(`unit options ${a}`), ());
            ListenMessage("Fresh.Key", (), "on_pair", #{ times: 1 });
            NotifyMessage("Pair", 1, "x");
            NotifyMessage("Fresh.Key", 2, "y");
            NotifyMessage("Fresh.Key", 3, "z");
            "#,
        );
        assert_eq!(
            f.printed(),
            ["named 1 x", "unit options 1", "named 2 y"],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn request_unanswered_from_rhai_is_reported_with_the_scripts_line() {
    both_ways(|f, rewrite| {
        f.load(
            "ask.rhai",
            "\nSendObjectMessage(SELF, \"Nobody.Answers\", 1, |v| print(\"never\"));\n",
        );
        assert!(f.printed().is_empty());
        let reports = f.hub.take_reports();
        let Some(Report::Unanswered {
            key,
            site: Some(site),
            ..
        }) = reports.first()
        else {
            panic!("rewrite {rewrite}: {reports:?}");
        };
        assert_eq!(key, "Nobody.Answers");
        assert_eq!((site.file.as_str(), site.line), ("ask.rhai", 2));
    });
}

#[test]
fn owner_already_destroyed_is_an_error_at_the_line_not_a_listener_kept_forever() {
    both_ways(|f, rewrite| {
        for (source, line) in [
            (
                "let o = GMP::Spawn();\nGMP::Destroy(o);\nListenMessage(\"Late\", o, || {});\n",
                3,
            ),
            (
                "let o = GMP::Spawn();\nGMP::Destroy(o);\n\nListenObjectMessage(o, \"Late\", (), || {});\n",
                4,
            ),
            (
                "let o = GMP::Spawn();\nGMP::Destroy(o);\nStoreObjectMessage(o, \"Late\", 1);\n",
                3,
            ),
        ] {
            let err = f.load_err("o.rhai", source);
            assert!(
                err.starts_with(&format!("o.rhai:{line}:")) && err.contains("does not exist"),
                "rewrite {rewrite}: {err}"
            );
        }
        assert_eq!(f.hub.listener_count(), 0);
    });
}

#[test]
fn hooks_run_highest_priority_first_ties_by_registration_partial_above_included() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenHook("Combat.Hit", (), |p, ctx| print("exact 0 first"));
            ListenHook("Combat", (), |p, ctx| print("partial 5"), #{ priority: 5, "match": "partial" });
            ListenHook("Combat.Hit", (), |p, ctx| print("exact 0 second"));
            ListenHook("Combat", (), |p, ctx| print("exact on parent: never"), #{ priority: 9 });
            ListenHook("Combat.Hit", (), |p, ctx| { print("exact -1 cancels"); ctx.Cancel(); }, #{ priority: -1 });
            ListenHook("Combat.Hit", (), |p, ctx| print("after cancel: never"), #{ priority: -2 });
            let r = RunHook("Combat.Hit", 1);
            print(`${r.ran} ${r.handled} ${r.cancelled}`);
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "partial 5",
                "exact 0 first",
                "exact 0 second",
                "exact -1 cancels",
                "4 false true"
            ],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn reentrancy_a_rhai_listener_may_unbind_itself_listen_and_send() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            fn outer() {
                print("outer");
                UnbindMessage("Outer", This());
                ListenMessage("Inner", (), |n| print(`inner ${n}`));
                NotifyMessage("Inner", 1);
            }
            ListenMessage("Outer", (), Fn("outer"));
            NotifyMessage("Outer");
            NotifyMessage("Outer");
            NotifyMessage("Inner", 2);
            "#,
        );
        assert_eq!(
            f.printed(),
            ["outer", "inner 1", "inner 2"],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn compat_rhai_listeners_may_drop_trailing_parameters() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Three", (), || print("none"));
            ListenMessage("Three", (), |a| print(`one ${a}`));
            ListenMessage("Three", (), |a, b, c| print(`all ${a} ${b} ${c}`));
            NotifyMessage("Three", 1, "two", 3.0);
            ListenHook("Hook.One", (), |p| print(`hook ${p}`));
            RunHook("Hook.One", 5);
            ListenObjectMessage(SELF, "Ask.Two", (), |rsp| rsp.Response(1, 2));
            SendObjectMessage(SELF, "Ask.Two", |first| print(`first ${first}`));
            "#,
        );
        assert_eq!(
            f.printed(),
            ["none", "one 1", "all 1 two 3.0", "hook 5", "first 1"],
            "rewrite {rewrite}"
        );
        assert!(f.failures().is_empty(), "rewrite {rewrite}");
    });
}
