//! The compatibility rule from Lua: an integer is accepted (and arrives as a
//! float) for a float, a float never for an int; a prefix send reaches
//! listeners, a longer one is refused; a mismatch names key, position,
//! expected, got and the script's line; unchecked mode lets it through.

use gantry_host::{KeyDecl, Kind, Language, Param, Report, StructDef, Type};

use crate::support::Fixture;

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

/// "an int is accepted for a float and converted; nothing else
/// converts" — a Lua float (even 2.0) is not an int.
#[test]
fn compat_a_lua_float_is_not_accepted_for_an_int_parameter() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Count", KeyDecl::event().param("n", Type::Int))
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenMessage("Count", nil, function(n) print("got", math.type(n)) end)
            NotifyMessage("Count", 2)
            print(pcall(NotifyMessage, "Count", 2.0))
            local ok = pcall(function() NotifyMessage("Count", 2.0) end)
            print("baked call refused", not ok)
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed[0], "got\tinteger", "rewrite {rewrite}");
        assert!(
            printed[1].starts_with("false") && printed[1].contains("expected int, got float"),
            "rewrite {rewrite}: {printed:?}"
        );
        assert_eq!(printed[2], "baked call refused\ttrue", "rewrite {rewrite}");
        assert_eq!(printed.len(), 3);
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
/// fields too: `{x = 1}` for a declared `Pos { x: float }` reaches a Lua
/// listener as a float.
#[test]
fn compat_an_integer_in_a_float_field_of_a_struct_reaches_lua_as_a_float() {
    both_ways(|f, rewrite| {
        declare_pos(f);
        f.load(
            "a.lua",
            r#"
            ListenMessage("Moved", nil, function(p) print(math.type(p.x), math.type(p.y)) end)
            NotifyMessage("Moved", {x = 1, y = 2.5})
            "#,
        );
        assert_eq!(f.printed(), ["float\tfloat"], "rewrite {rewrite}");
    });
}

/// "nothing else converts ... no listener is called with wrong
/// types" — a field of a declared struct that carries the wrong type is a
/// mismatch, not a string handed to a listener expecting a float.
#[test]
fn compat_a_wrong_typed_field_of_a_declared_struct_is_refused() {
    both_ways(|f, rewrite| {
        declare_pos(f);
        f.load(
            "a.lua",
            r#"
            ListenMessage("Moved", nil, function(p) print("called with", type(p.x)) end)
            print(pcall(NotifyMessage, "Moved", {x = "far", y = 1.0}))
            "#,
        );
        let printed = f.printed();
        assert!(
            printed.len() == 1 && printed[0].starts_with("false"),
            "rewrite {rewrite}: {printed:?}"
        );
    });
}

fn declare_int_key(f: &Fixture, key: &str) {
    f.hub
        .declare(
            key,
            KeyDecl::event().kind(Kind::Store).param("n", Type::Int),
        )
        .unwrap();
}

#[test]
fn compat_script_mismatch_is_reported_with_key_position_expected_got_and_the_scripts_line() {
    both_ways(|f, rewrite| {
        declare_int_key(f, "Typed.Key");
        f.load(
            "listen.lua",
            "ListenMessage('Typed.Key', nil, function(n) print('called', n) end)\n",
        );
        for (function, call) in [
            ("NotifyMessage", "NotifyMessage('Typed.Key', 'oops')"),
            (
                "NotifyObjectMessage",
                "NotifyObjectMessage(self, 'Typed.Key', 'oops')",
            ),
            (
                "SendObjectMessage",
                "SendObjectMessage(self, 'Typed.Key', 'oops')",
            ),
            (
                "StoreObjectMessage",
                "StoreObjectMessage(self, 'Typed.Key', 'oops')",
            ),
            ("generic", "local k = 'Typed.Key'\nNotifyMessage(k, 'oops')"),
        ] {
            f.hub.take_reports();
            let source = format!("\n\n{call}\n");
            let line = 2 + call.lines().count() as u32;
            let err =
                f.rt.load_script("m.lua", &source, f.spawn())
                    .unwrap_err()
                    .to_string();
            assert!(
                err.contains(&format!("m.lua:{line}:")) && err.contains("Typed.Key"),
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
            assert_eq!((key.as_str(), *position), ("Typed.Key", 0));
            assert_eq!((expected.as_str(), got.as_str()), ("int", "string"));
            assert_eq!(
                (site.file.as_str(), site.line, site.language),
                ("m.lua", line, Language::Lua),
                "{function}, rewrite {rewrite}"
            );
        }
    });
}

#[test]
fn compat_unchecked_mode_lets_a_lua_send_through() {
    both_ways(|f, rewrite| {
        declare_int_key(f, "Typed.Key");
        f.hub.set_checked(false);
        f.load(
            "a.lua",
            r#"
            ListenMessage("Typed.Key", nil, function(n) print("got", n) end)
            NotifyMessage("Typed.Key", "text")
            "#,
        );
        assert_eq!(f.printed(), vec!["got\ttext"], "rewrite {rewrite}");
        assert!(f.hub.take_reports().is_empty());
    });
}

#[test]
fn compat_int_for_float_reaches_lua_listeners_as_a_float() {
    both_ways(|f, rewrite| {
        f.hub
            .declare(
                "Speed",
                KeyDecl::event().kind(Kind::Store).param("v", Type::Float),
            )
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenMessage("Speed", nil, function(v) print(math.type(v), v) end)
            NotifyMessage("Speed", 5)
            local k = "Speed"
            NotifyMessage(k, 6)
            StoreObjectMessage(self, "Speed", 7)
            ListenObjectMessage(self, "Speed", nil, function(v) print("replayed", math.type(v)) end)
            "#,
        );
        assert_eq!(
            f.printed(),
            vec!["float\t5.0", "float\t6.0", "float\t7.0", "replayed\tfloat"],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn compat_a_send_missing_or_adding_a_declared_parameter_is_refused() {
    both_ways(|f, rewrite| {
        f.hub
            .declare(
                "Pair",
                KeyDecl::event()
                    .param("a", Type::Int)
                    .param("b", Type::String),
            )
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenMessage("Pair", nil, function(a, b) print("got", a, b) end)
            print(pcall(function() NotifyMessage("Pair", 1) end))
            NotifyMessage("Pair", 2, "two")
            print(pcall(NotifyMessage, "Pair", 3, "three", true))
            "#,
        );
        let printed = f.printed();
        assert!(
            printed[0].starts_with("false")
                && printed[0].contains("argument 2: expected string, got nothing"),
            "rewrite {rewrite}: {printed:?}"
        );
        assert_eq!(printed[1], "got\t2\ttwo", "rewrite {rewrite}");
        assert!(
            printed[2].starts_with("false") && printed[2].contains("at most 2"),
            "rewrite {rewrite}: {printed:?}"
        );
    });
}
