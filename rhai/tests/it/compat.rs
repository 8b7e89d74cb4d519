//! The compatibility rule from Rhai: an integer is accepted (and arrives as a
//! float) for a float, a float never for an int; listeners (capturing
//! closures too) may drop trailing parameters; a prefix send reaches
//! listeners; a mismatch names key, position, expected, got and the
//! script's line; unchecked mode lets it through, baked or not.

use gantry_host::{KeyDecl, Kind, Language, Param, Report, StructDef, Type};

use crate::support::{Fixture, both_ways};

/// "an int is accepted for a float and converted; nothing else
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

/// "an int is accepted for a float and converted" — in a struct's
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

/// "A listener may drop trailing arguments" — a Rhai closure that
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

fn declare_pair(f: &Fixture) {
    f.hub
        .declare(
            "Pair",
            KeyDecl::event()
                .kind(Kind::Store)
                .param("a", Type::Int)
                .param("b", Type::String),
        )
        .unwrap();
}

#[test]
fn compat_a_send_missing_or_adding_a_declared_parameter_is_refused_baked_or_not() {
    both_ways(|f, rewrite| {
        declare_pair(f);
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Pair", (), |a| print(`got ${a}`));
            NotifyMessage("Pair", 2, "two");
            "#,
        );
        assert_eq!(f.printed(), ["got 2"], "rewrite {rewrite}");
        let err = f.load_err("c.rhai", "\nNotifyMessage(\"Pair\", 1);\n");
        assert!(
            err.starts_with("c.rhai:2:")
                && err.contains("argument 2: expected string, got nothing"),
            "rewrite {rewrite}: {err}"
        );
        let err = f.load_err("b.rhai", "\nNotifyMessage(\"Pair\", 3, \"three\", true);\n");
        assert!(
            err.starts_with("b.rhai:2:") && err.contains("at most 2"),
            "rewrite {rewrite}: {err}"
        );
        assert_eq!(f.printed(), Vec::<String>::new(), "rewrite {rewrite}");
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
