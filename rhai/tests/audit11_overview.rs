//! Audit 11 from Rhai: rules of references 000 and 002 (and DESIGN.md) at
//! the edges the earlier audits leave open, each run with baking on and
//! off (baking must not change what a call does).

mod common;

use common::Fixture;
use gantry_host::{KeyDecl, Language, Param, Report, Role, StructDef, Type};
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

// ----- signature inference -----------------------------------------------------------

/// 002: "for an unregistered tag, types are inferred from the actual script
/// values (numbers split into integer and float; boolean, string and
/// userdata map across)" — from Rhai.
#[test]
fn signature_rhai_values_are_inferred_on_first_use() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"NotifyMessage("Infer.Rhai", SELF, 3, 4.0, false, "s", [1, 2]);"#,
        );
        assert_eq!(
            f.hub.table().get("Infer.Rhai").unwrap().param_types(),
            [
                Type::Object,
                Type::Int,
                Type::Float,
                Type::Bool,
                Type::String,
                Type::Array(Box::new(Type::Int)),
            ],
            "rewrite {rewrite}"
        );
    });
}

/// 002: dynamic callbacks "carry no static types, so they cannot be
/// inferred" — a Rhai listener on a new key records no parameter types; the
/// first send is what the key learns.
#[test]
fn signature_a_rhai_listener_on_a_new_key_records_no_types() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"ListenMessage("Fresh.Rhai", (), |a, b| print(`got ${a} ${b}`));"#,
        );
        assert!(
            f.hub
                .table()
                .get("Fresh.Rhai")
                .is_none_or(|e| e.params.is_empty()),
            "rewrite {rewrite}"
        );
        f.load("b.rhai", r#"NotifyMessage("Fresh.Rhai", "text", 2.5);"#);
        assert_eq!(f.printed(), ["got text 2.5"], "rewrite {rewrite}");
        assert_eq!(
            f.hub.table().get("Fresh.Rhai").unwrap().param_types(),
            [Type::String, Type::Float],
            "rewrite {rewrite}"
        );
    });
}

// ----- compatibility ------------------------------------------------------------------

/// DESIGN: "an int is accepted for a float and converted; nothing else
/// converts" — a Rhai float (even 2.0) is not an int.
#[test]
fn compat_a_rhai_float_is_not_accepted_for_an_int_parameter() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Count", KeyDecl::event().param("n", Type::Int))
            .unwrap();
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Count", (), |n| print(`got ${type_of(n)}`));
            NotifyMessage("Count", 2);
            "#,
        );
        assert_eq!(f.printed(), ["got i64"], "rewrite {rewrite}");
        let err = f.load_err("b.rhai", "\nNotifyMessage(\"Count\", 2.0);\n");
        assert!(
            err.starts_with("b.rhai:2:") && err.contains("expected int, got float"),
            "rewrite {rewrite}: {err}"
        );
        assert!(f.printed().is_empty());
    });
}

fn declare_pos(f: &Fixture) {
    f.hub.edit_table(|t| {
        t.declare_struct(
            "Pos",
            StructDef {
                fields: vec![Param::new("x", Type::Float), Param::new("y", Type::Float)],
                ..Default::default()
            },
        )
    });
    f.hub
        .declare(
            "Moved",
            KeyDecl::event().param("to", Type::Struct("Pos".into())),
        )
        .unwrap();
}

/// DESIGN: "an int is accepted for a float and converted" — in a struct's
/// fields too: `#{x: 1}` for a declared `Pos { x: float }` reaches a Rhai
/// listener as a float.
#[test]
fn compat_an_integer_in_a_float_field_of_a_struct_reaches_rhai_as_a_float() {
    both_ways(|f, rewrite| {
        declare_pos(f);
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Moved", (), |p| print(`${type_of(p.x)} ${type_of(p.y)}`));
            NotifyMessage("Moved", #{ x: 1, y: 2.5 });
            "#,
        );
        assert_eq!(f.printed(), ["f64 f64"], "rewrite {rewrite}");
    });
}

// ----- script rewriting preserves behaviour -------------------------------------------

/// DESIGN: "The rewrite must preserve behaviour" — a script defining its own
/// function of an API name calls its own, baked or not.
#[test]
fn rewrite_preserves_behaviour_when_a_script_defines_an_api_named_function() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            fn NotifyMessage(key, n) { print(`mine ${key} ${n}`); }
            ListenMessage("Wrapped", (), |n| print(`hub ${n}`));
            NotifyMessage("Wrapped", 1);
            GMP::NotifyMessage("Wrapped", 2);
            "#,
        );
        assert_eq!(
            f.printed(),
            ["mine Wrapped 1", "hub 2"],
            "rewrite {rewrite}"
        );
    });
}

/// 002: "Every script send and listen records the call site's file and
/// line" — a call spread over lines is recorded at the same line baked or
/// not, and its error names that line.
#[test]
fn call_site_of_a_multi_line_call_is_the_same_line_baked_or_generic() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Multi.Line", KeyDecl::event().param("n", Type::Int))
            .unwrap();
        f.load(
            "ml.rhai",
            "\nNotifyMessage(\n  \"Multi.Line\",\n  1);\nListenMessage(\n  \"Multi.Line\",\n  (),\n  || {});\n",
        );
        let table = f.hub.table();
        let sites: Vec<(u32, Role)> = table
            .get("Multi.Line")
            .unwrap()
            .sites
            .iter()
            .filter(|s| s.file == "ml.rhai" && s.language == Language::Rhai)
            .map(|s| (s.line, s.role))
            .collect();
        assert_eq!(
            sites,
            [(2, Role::Send), (5, Role::Listen)],
            "rewrite {rewrite}"
        );
        drop(table);
        let err = f.load_err(
            "bad.rhai",
            "\n\nNotifyMessage(\n  \"Multi.Line\",\n  \"x\");\n",
        );
        assert!(err.starts_with("bad.rhai:3:"), "rewrite {rewrite}: {err}");
    });
}

// ----- store / once / times -----------------------------------------------------------

/// 002 Once + Times from Rhai: a once message replayed to a `times: 2`
/// listener uses one call; one more live send and the listener is gone.
#[test]
fn store_once_replay_uses_one_of_a_rhai_listeners_times() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            OnceObjectMessage(SELF, "Boot.Done", 1);
            ListenObjectMessage(SELF, "Boot.Done", (), |n| print(`got ${n}`), #{ times: 2 });
            ListenObjectMessage(SELF, "Boot.Done", (), |n| print(`second ${n}`));
            NotifyObjectMessage(SELF, "Boot.Done", 2);
            NotifyObjectMessage(SELF, "Boot.Done", 3);
            "#,
        );
        assert_eq!(
            f.printed(),
            ["got 1", "got 2", "second 2", "second 3"],
            "rewrite {rewrite}"
        );
    });
}

/// 002 Store + partial matching from Rhai.
#[test]
fn store_replays_to_a_late_partial_rhai_listener() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            StoreObjectMessage(SELF, "Game.Ready", 7, "map");
            ListenObjectMessage(SELF, "Game", (), |n, s| print(`partial ${n} ${s}`), #{ "match": "partial" });
            ListenObjectMessage(SELF, "Game", (), || print("exact parent: never"));
            "#,
        );
        assert_eq!(f.printed(), ["partial 7 map"], "rewrite {rewrite}");
    });
}

/// 002 "the listener unlistens itself after N calls" — re-entrant calls
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

// ----- lifetime -----------------------------------------------------------------------

/// DESIGN "Destroying an object drops everything it owns and everything
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

// ----- request / response -------------------------------------------------------------

/// DESIGN: "an unanswered request is reported, not silently lost" — a Rhai
/// listener that ignores its responder leaves the request unanswered; the
/// requester is not called and the report is filed when the send is over.
#[test]
fn request_a_rhai_listener_ignoring_its_responder_is_reported_unanswered() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenObjectMessage(SELF, "Price", (), |item, rsp| print(`asked ${item}`));
            SendObjectMessage(SELF, "Price", "sword", |v| print(`reply ${v}`));
            print("after");
            "#,
        );
        assert_eq!(f.printed(), ["asked sword", "after"], "rewrite {rewrite}");
        let reports = f.hub.take_reports();
        assert!(
            reports
                .iter()
                .any(|r| matches!(r, Report::Unanswered { key, .. } if key == "Price")),
            "rewrite {rewrite}: {reports:?}"
        );
    });
}

/// 002 "the callback is one-shot": two Rhai listeners answering one request
/// call the reply closure once, with the first answer; the second answer is
/// refused.
#[test]
fn request_two_rhai_responders_reply_closure_runs_once_with_the_first_answer() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenObjectMessage(SELF, "Ask", (), |n, rsp| print(`first ${rsp.Response(n + 1)}`));
            ListenObjectMessage(SELF, "Ask", (), |n, rsp| print(`second ${rsp.Response(n + 2)}`));
            SendObjectMessage(SELF, "Ask", 1, |v| print(`reply ${v}`));
            "#,
        );
        assert_eq!(
            f.printed(),
            ["reply 2", "first true", "second false"],
            "rewrite {rewrite}"
        );
    });
}

/// 000: "A listener may drop trailing arguments" — a Rhai closure that
/// captures variables (curried in front by Rhai) still drops only the
/// message's trailing arguments.
#[test]
fn compat_a_capturing_rhai_closure_may_drop_trailing_parameters() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            let tag = "cap";
            let other = 40;
            ListenMessage("Three", (), |a| print(`${tag} ${a + other}`));
            ListenMessage("Three", (), |a, b| print(`${tag} ${a} ${b}`));
            NotifyMessage("Three", 2, "two", 3.0);
            "#,
        );
        assert_eq!(f.printed(), ["cap 42", "cap 2 two"], "rewrite {rewrite}");
        assert!(f.failures().is_empty(), "rewrite {rewrite}");
    });
}
