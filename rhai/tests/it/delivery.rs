//! Rhai listeners' `times`, owners and re-entrancy: re-entrant calls count,
//! a listener may unbind itself, listen and send; one whose object is
//! destroyed mid dispatch is skipped, and an owner already destroyed is an
//! error at the line.

use crate::support::{Fixture, both_ways};

/// "the listener unlistens itself after N calls" — re-entrant calls
/// count: a `times: 1` Rhai listener sending its own key is called once.
#[test]
fn listen_options_times_counts_a_rhai_listeners_reentrant_calls() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Echo", (), |n| {
                print(`called ${n}`);
                if n < 3 { NotifyMessage("Echo", n + 1); }
            }, #{ times: 1 });
            NotifyMessage("Echo", 0);
            NotifyMessage("Echo", 10);
            "#,
        );
        assert_eq!(f.printed(), ["called 0"], "rewrite {rewrite}");
    });
}

/// "Destroying an object drops everything it owns and everything
/// sourced from it" — mid-dispatch: later listeners of the destroyed
/// object are not called.
#[test]
fn destroying_the_source_object_mid_dispatch_skips_its_rhai_listeners() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            let o = GMP::Spawn();
            ListenMessage("Boom", (), || { print("killer"); GMP::Destroy(o); }, #{ order: -1 });
            ListenObjectMessage(o, "Boom", o, || print("object tier: never"));
            ListenMessage("Boom", o, || print("owned by o: never"));
            ListenWorldMessage(SELF.World(), "Boom", (), || print("world"));
            NotifyObjectMessage(o, "Boom");
            "#,
        );
        assert_eq!(f.printed(), ["killer", "world"], "rewrite {rewrite}");
        assert!(f.failures().is_empty(), "rewrite {rewrite}");
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

/// A send from an object that is gone is an error at the line, in the
/// words listening there gives, while a global send goes on.
#[test]
fn a_send_from_a_destroyed_object_is_an_error_at_the_line_like_listening_there() {
    both_ways(|f, rewrite| {
        let prelude = "ListenMessage(\"Ping\", (), || print(\"heard\"));\nlet o = GMP::Spawn();\nfor i in 0..3 { NotifyObjectMessage(o, \"Ping\"); }\nGMP::Destroy(o);\n";
        let listen = f.load_err(
            "l.rhai",
            &format!("{prelude}ListenObjectMessage(o, \"Ping\", (), || {{}});\n"),
        );
        for (send, line) in [
            ("NotifyObjectMessage(o, \"Ping\");\n", 5),
            ("let key = \"Ping\";\nNotifyObjectMessage(o, key);\n", 6),
        ] {
            let err = f.load_err("s.rhai", &format!("{prelude}{send}"));
            assert!(
                err.starts_with(&format!("s.rhai:{line}:")) && err.contains("does not exist"),
                "rewrite {rewrite}: {err}"
            );
            // The words after the object (each load spawns its own).
            let words = |e: &str| {
                e.split_once(": object#")
                    .and_then(|(_, w)| w.split_once(' '))
                    .map(|(_, w)| w.to_owned())
            };
            assert_eq!(words(&err), words(&listen), "rewrite {rewrite}");
        }
        f.load("g.rhai", "NotifyMessage(\"Ping\");");
        assert_eq!(f.printed().last().map(String::as_str), Some("heard"));
    });
}

/// Rhai calls closures `anon$<hash>`, a name no modder wrote: a failing
/// listener's error names the listener by its file:line only, and a
/// closure it called by the line that called it.
#[test]
fn a_failing_closure_is_named_by_its_line_never_by_a_generated_name() {
    let f = Fixture::new();
    f.load(
        "c.rhai",
        r#"
ListenMessage("Boom", (), |n| {
  let inner = |x| { throw `bad ${x}`; };
  inner.call(n);
});
NotifyMessage("Boom", 1);
"#,
    );
    let failures = f.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("in the closure called at line 4: bad 1"),
        "{failures:?}"
    );
    assert!(!failures[0].contains("anon$"), "{failures:?}");
}
