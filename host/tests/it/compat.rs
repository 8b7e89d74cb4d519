//! Parameter compatibility: a listener hears a message when its parameters
//! are a prefix of the message's, position by position; an int is accepted
//! for a float (and converted, in sends, stores, replays, arrays and struct
//! fields), a child struct for its parent, and `any` for everything. A
//! mismatch aborts the send and reports key, position, expected, got and
//! the call site; unchecked mode lets it through.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::Faced;
use gantry_host::{
    Hub, HubError, KeyDecl, Language, ListenOptions, Reply, Report, Role, Source, StructDef,
    StructValue, Type, Value,
};
use gantry_test_support::log::{Log, log, pusher, taken};

fn push(log: &Log, s: impl Into<String>) {
    log.borrow_mut().push(s.into());
}

fn abc_hub() -> Hub {
    let hub = Hub::new();
    hub.edit_table(|t| {
        for name in ["TypeA", "TypeB", "TypeC", "T4"] {
            t.declare_struct(name, StructDef::default());
        }
    });
    hub.declare(
        "ABC",
        KeyDecl::event()
            .param("a", Type::Struct("TypeA".into()))
            .param("b", Type::Struct("TypeB".into()))
            .param("c", Type::Struct("TypeC".into())),
    )
    .unwrap();
    hub
}

macro_rules! struct_param {
    ($name:ident, $text:literal) => {
        #[derive(Debug)]
        struct $name;
        impl gantry_host::FromValue for $name {
            fn declared_type() -> Type {
                Type::Struct($text.into())
            }
            fn from_value(v: &Value) -> Option<Self> {
                (v.as_struct()?.name.as_ref() == $text).then_some($name)
            }
        }
    };
}

struct_param!(A, "TypeA");

struct_param!(B, "TypeB");

struct_param!(C, "TypeC");

struct_param!(D, "T4");

fn abc_args() -> (Value, Value, Value) {
    let s = |n: &str| Value::structure(gantry_host::StructValue::new(n));
    (s("TypeA"), s("TypeB"), s("TypeC"))
}

#[test]
fn compat_listener_taking_all_parameters_is_compatible() {
    let hub = abc_hub();
    let hits = Rc::new(RefCell::new(0));
    let h = hits.clone();
    let _l = hub
        .listen("ABC", Source::Global, move |_: A, _: B, _: C| {
            *h.borrow_mut() += 1
        })
        .unwrap();
    hub.send_str("ABC", Source::Global, abc_args()).unwrap();
    assert_eq!(*hits.borrow(), 1);
}

#[test]
fn compat_listener_may_drop_trailing_parameters() {
    let hub = abc_hub();
    let hits = Rc::new(RefCell::new(0));
    let (h1, h2, h3) = (hits.clone(), hits.clone(), hits.clone());
    let _a = hub
        .listen("ABC", Source::Global, move |_: A, _: B| {
            *h1.borrow_mut() += 1
        })
        .unwrap();
    let _b = hub
        .listen("ABC", Source::Global, move |_: A| *h2.borrow_mut() += 1)
        .unwrap();
    let _c = hub
        .listen("ABC", Source::Global, move || *h3.borrow_mut() += 1)
        .unwrap();
    hub.send_str("ABC", Source::Global, abc_args()).unwrap();
    assert_eq!(*hits.borrow(), 3);
}

#[test]
fn compat_wrong_type_at_position_0_is_rejected() {
    let hub = abc_hub();
    let err = hub.listen("ABC", Source::Global, |_: B| {}).unwrap_err();
    match err {
        HubError::ListenRejected { key, mismatch } => {
            assert_eq!(key, "ABC");
            assert_eq!(mismatch.position, 0);
            assert_eq!(mismatch.expected, "TypeB");
            assert_eq!(mismatch.got, "TypeA");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn compat_gap_is_rejected_position_1_must_match() {
    let hub = abc_hub();
    let err = hub
        .listen("ABC", Source::Global, |_: A, _: C| {})
        .unwrap_err();
    assert!(matches!(err, HubError::ListenRejected { mismatch, .. } if mismatch.position == 1));
}

#[test]
fn compat_listener_longer_than_the_send_is_rejected() {
    let hub = abc_hub();
    let err = hub
        .listen("ABC", Source::Global, |_: A, _: B, _: C, _: D| {})
        .unwrap_err();
    assert!(matches!(err, HubError::ListenRejected { mismatch, .. } if mismatch.position == 3));
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::ListenRejected { .. }))
    );
}

#[test]
fn compat_int_is_accepted_for_float_and_converted() {
    let hub = Hub::new();
    hub.declare("Hurt", KeyDecl::event().param("dmg", Type::Float))
        .unwrap();
    let got = Rc::new(RefCell::new(None));
    let g = got.clone();
    let _l = hub
        .listen_message("Hurt", Source::Global, ListenOptions::new(), move |m| {
            *g.borrow_mut() = Some(m.args[0].clone())
        })
        .unwrap();
    hub.send_str("Hurt", Source::Global, (5i64,)).unwrap();
    assert_eq!(*got.borrow(), Some(Value::Float(5.0)));
}

#[test]
fn compat_mismatched_send_is_reported_and_aborted() {
    let hub = Hub::new();
    hub.declare("Hurt", KeyDecl::event().param("dmg", Type::Float))
        .unwrap();
    let hits = Rc::new(RefCell::new(0));
    let h = hits.clone();
    let _l = hub
        .listen("Hurt", Source::Global, move |_: f64| *h.borrow_mut() += 1)
        .unwrap();
    let err = hub.send_str("Hurt", Source::Global, ("lots",)).unwrap_err();
    assert!(matches!(err, HubError::Mismatch { .. }));
    assert_eq!(*hits.borrow(), 0, "no listener is called with wrong types");
    let reports = hub.take_reports();
    match &reports[..] {
        [
            Report::Mismatch {
                key,
                position,
                expected,
                got,
                site,
                ..
            },
        ] => {
            assert_eq!((key.as_str(), *position), ("Hurt", 0));
            assert_eq!((expected.as_str(), got.as_str()), ("float", "string"));
            let site = site.as_ref().expect("the Rust call site is recorded");
            assert!(site.file.ends_with("compat.rs"), "{site}");
        }
        other => panic!("unexpected reports {other:?}"),
    }
}

#[test]
fn compat_unchecked_mode_lets_the_send_through() {
    let hub = Hub::new();
    hub.declare("Hurt", KeyDecl::event().param("dmg", Type::Float))
        .unwrap();
    hub.set_checked(false);
    let hits = Rc::new(RefCell::new(0));
    let h = hits.clone();
    let _l = hub
        .listen_message("Hurt", Source::Global, ListenOptions::new(), move |_| {
            *h.borrow_mut() += 1
        })
        .unwrap();
    hub.send_str("Hurt", Source::Global, ("lots",)).unwrap();
    assert_eq!(*hits.borrow(), 1);
}

#[test]
fn compat_typed_listener_needing_more_than_sent_aborts() {
    let hub = Hub::new();
    let hits = Rc::new(RefCell::new(0));
    let h = hits.clone();
    let _l = hub
        .listen("Two", Source::Global, move |_: i64, _: i64| {
            *h.borrow_mut() += 1
        })
        .unwrap();
    assert!(hub.send_str("Two", Source::Global, (1i64,)).is_err());
    assert_eq!(*hits.borrow(), 0);
    hub.send_str("Two", Source::Global, (1i64, 2i64)).unwrap();
    assert_eq!(*hits.borrow(), 1);
}

#[test]
fn compat_child_struct_matches_parent() {
    let hub = Hub::new();
    hub.edit_table(|t| {
        t.declare_struct("Base", StructDef::default());
        t.declare_struct(
            "Child",
            StructDef {
                parent: Some("Base".into()),
                ..Default::default()
            },
        );
    });
    hub.declare(
        "E",
        KeyDecl::event().param("x", Type::Struct("Base".into())),
    )
    .unwrap();
    let child = Value::structure(gantry_host::StructValue::new("Child"));
    assert!(hub.send_str("E", Source::Global, (child,)).is_ok());
}

#[test]
fn zero_argument_send_and_listen() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen("Z", Source::Global, move || push(&l, "z"))
        .unwrap();
    hub.send_str("Z", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["z"]);
    assert!(hub.table().get("Z").unwrap().params.is_empty());
}

#[test]
fn zero_argument_listener_matches_everything_on_the_key() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen("Z", Source::Global, move || push(&l, "z"))
        .unwrap();
    hub.send_str("Z", Source::Global, (1i64, "x", 2.5f64))
        .unwrap();
    assert_eq!(taken(&log), ["z"]);
}

fn ints(log: &Log, name: &'static str) -> impl Fn(i64) + 'static {
    let log = log.clone();
    move |n: i64| log.borrow_mut().push(format!("{name} {n}"))
}

fn mismatch_position(err: &HubError) -> Option<usize> {
    match err {
        HubError::Mismatch { mismatch, .. } | HubError::ListenRejected { mismatch, .. } => {
            Some(mismatch.position)
        }
        _ => None,
    }
}

/// "Removing or reordering is always breaking. Only appending is safe."
#[test]
fn compat_reordering_the_parameters_of_a_declared_message_is_a_mismatch() {
    let hub = Hub::new();
    hub.declare(
        "ABC",
        KeyDecl::event()
            .param("a", Type::Int)
            .param("b", Type::String)
            .param("c", Type::Bool),
    )
    .unwrap();
    let log = log();
    let _h = hub
        .listen("ABC", Source::Global, pusher(&log, "zero-arg"))
        .unwrap();
    // Reordered: b, a, c.
    let err = hub
        .send_str("ABC", Source::Global, ("b", 1i64, true))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(0), "{err}");
    // Removed from the middle: a, c.
    let err = hub
        .send_str("ABC", Source::Global, (1i64, true))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(1), "{err}");
    assert!(taken(&log).is_empty(), "no listener hears a refused send");
    // Appending on a declared key is not allowed from the send side either
    // (the declaration is the whole truth), nor is a prefix: a listener
    // taking `c` would be handed nothing.
    let err = hub
        .send_str("ABC", Source::Global, (1i64, "b"))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(2), "{err}");
    hub.send_str("ABC", Source::Global, (1i64, "b", true))
        .unwrap();
    assert_eq!(taken(&log), ["zero-arg"]);
}

/// "A parameter inserted in the middle is a breaking change ... the
/// mismatch surfaces as a validation failure at runtime" — on an observed
/// (undeclared) key too: the old listener is not called with a shifted value.
#[test]
fn compat_a_parameter_inserted_in_the_middle_of_an_observed_key_breaks_the_old_listener() {
    let hub = Hub::new();
    hub.send_str("Hurt", Source::Global, (5i64, "sword"))
        .unwrap();
    let log = log();
    let l = log.clone();
    let _old = hub
        .listen("Hurt", Source::Global, move |dmg: i64, weapon: String| {
            l.borrow_mut().push(format!("{dmg} {weapon}"))
        })
        .unwrap();
    let err = hub
        .send_str("Hurt", Source::Global, (5i64, true, "sword"))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(1), "{err}");
    assert!(taken(&log).is_empty());
    // Appending is the migration path: the old listener keeps working.
    hub.send_str("Hurt", Source::Global, (6i64, "axe", true))
        .unwrap();
    assert_eq!(taken(&log), ["6 axe"]);
    assert_eq!(
        hub.table().get("Hurt").unwrap().param_types(),
        [Type::Int, Type::String, Type::Bool],
        "a compatible send updates the table"
    );
}

/// "an int is accepted for a float and converted" — inside an array
/// parameter too: a listener of `array<float>` sees floats.
#[test]
fn compat_int_elements_of_an_array_of_float_are_converted() {
    let hub = Hub::new();
    hub.declare(
        "Samples",
        KeyDecl::event().param("values", Type::Array(Box::new(Type::Float))),
    )
    .unwrap();
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen_message("Samples", Source::Global, ListenOptions::new(), move |m| {
            let items = m.args[0].as_array().unwrap();
            g.borrow_mut()
                .extend(items.iter().map(|v| format!("{v:?}")))
        })
        .unwrap();
    hub.send_str(
        "Samples",
        Source::Global,
        (Value::array(vec![Value::Int(1), Value::Float(2.5)]),),
    )
    .unwrap();
    assert_eq!(taken(&got), ["Float(1.0)", "Float(2.5)"]);
}

/// "A zero-argument listener matches everything on that tag", and
/// "no listener is called with wrong types": a typed partial listener on a
/// parent key is not run with the arguments of a child key it cannot take,
/// and that is reported naming the key.
#[test]
fn compat_typed_partial_listener_is_never_called_with_a_child_keys_wrong_types() {
    let hub = Hub::new();
    let log = log();
    let _partial = hub
        .listen_with(
            "Inv",
            Source::Global,
            ListenOptions::new().partial(),
            ints(&log, "partial"),
        )
        .unwrap();
    let _zero = hub
        .listen_with(
            "Inv",
            Source::Global,
            ListenOptions::new().partial(),
            pusher(&log, "zero-arg partial"),
        )
        .unwrap();
    let _ = hub.send_str("Inv.Items", Source::Global, ("sword",));
    let heard = taken(&log);
    assert!(
        !heard.iter().any(|h| h.starts_with("partial ")),
        "{heard:?}"
    );
    let reports = hub.take_reports();
    assert!(
        reports.iter().any(|r| r.key() == "Inv.Items"),
        "{reports:?}"
    );
}

/// "an int is accepted for a float and converted" — in a struct's
/// float field too (what a Lua table `{x = 1}` of a declared struct is).
#[test]
fn compat_int_in_a_float_field_of_a_struct_is_converted() {
    let hub = Hub::new();
    hub.edit_table(|t| {
        t.declare_struct(
            "Pos",
            gantry_host::StructDef {
                fields: vec![gantry_host::Param::new("x", Type::Float)],
                ..Default::default()
            },
        )
    });
    hub.declare(
        "Moved",
        KeyDecl::event().param("to", Type::Struct("Pos".into())),
    )
    .unwrap();
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen_message("Moved", Source::Global, ListenOptions::new(), move |m| {
            let pos = m.args[0].as_struct().unwrap();
            g.borrow_mut().push(format!("{:?}", pos.get("x").unwrap()))
        })
        .unwrap();
    hub.send_str(
        "Moved",
        Source::Global,
        (Value::structure(
            gantry_host::StructValue::new("Pos").with("x", 1i64),
        ),),
    )
    .unwrap();
    assert_eq!(taken(&got), ["Float(1.0)"]);
}

fn base_and_child(hub: &Hub) {
    hub.edit_table(|t| {
        t.declare_struct(
            "Base",
            StructDef {
                fields: vec![gantry_host::Param::new("id", Type::Int)],
                ..Default::default()
            },
        );
        t.declare_struct(
            "Child",
            StructDef {
                parent: Some("Base".into()),
                fields: vec![gantry_host::Param::new("name", Type::String)],
                ..Default::default()
            },
        );
    });
}

fn child() -> Value {
    Value::structure(StructValue::new("Child").with("id", 1i64).with("name", "c"))
}

fn base() -> Value {
    Value::structure(StructValue::new("Base").with("id", 1i64))
}

#[test]
fn compat_any_parameter_accepts_every_value() {
    let hub = Hub::new();
    hub.declare("Any.Key", KeyDecl::event().param("v", Type::Any))
        .unwrap();
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen("Any.Key", Source::Global, move |v: Value| {
            g.borrow_mut().push(v.kind_name())
        })
        .unwrap();
    hub.send_str("Any.Key", Source::Global, (1i64,)).unwrap();
    hub.send_str("Any.Key", Source::Global, ("s",)).unwrap();
    hub.send_str("Any.Key", Source::Global, (2.5f64,)).unwrap();
    hub.send_str("Any.Key", Source::Global, (base(),)).unwrap();
    hub.send_str("Any.Key", Source::Global, (Value::Nil,))
        .unwrap();
    assert_eq!(taken(&got), ["int", "string", "float", "Base", "nil"]);
    assert!(hub.take_reports().is_empty());
}

#[test]
fn compat_any_listener_accepts_every_recorded_type() {
    let hub = Hub::new();
    hub.declare(
        "Typed",
        KeyDecl::event()
            .param("n", Type::Int)
            .param("s", Type::String),
    )
    .unwrap();
    assert!(
        hub.listen("Typed", Source::Global, |_: Value, _: Value| {})
            .is_ok()
    );
}

#[test]
fn compat_nothing_but_int_for_float_converts() {
    let hub = Hub::new();
    hub.declare(
        "Strict",
        KeyDecl::event()
            .param("i", Type::Int)
            .param("b", Type::Bool)
            .param("s", Type::String)
            .param("o", Type::Object),
    )
    .unwrap();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let ok = (1i64, true, "x", obj);
    assert!(hub.send_str("Strict", Source::Global, ok).is_ok());
    let bad: [(usize, Vec<Value>); 5] = [
        (0, vec![Value::Float(1.0)]),
        (1, vec![Value::Int(1), Value::Int(1)]),
        (2, vec![Value::Int(1), Value::Bool(true), Value::Int(3)]),
        (
            3,
            vec![
                Value::Int(1),
                Value::Bool(true),
                Value::str("x"),
                Value::Int(7),
            ],
        ),
        (0, vec![Value::str("1")]),
    ];
    let key = hub.key("Strict").unwrap();
    for (position, args) in bad {
        let mut args = args;
        let err = hub
            .send_values(
                key,
                Source::Global,
                &mut args,
                gantry_host::Caller::Unrecorded,
            )
            .unwrap_err();
        match err {
            HubError::Mismatch { mismatch, .. } => assert_eq!(mismatch.position, position),
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn compat_int_for_float_is_converted_when_a_send_appends_to_an_observed_key() {
    let hub = Hub::new();
    hub.send_str("Obs", Source::Global, (2.5f64,)).unwrap();
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen_message("Obs", Source::Global, ListenOptions::new(), move |m| {
            g.borrow_mut()
                .extend(m.args.iter().map(|v| format!("{v:?}")))
        })
        .unwrap();
    hub.send_str("Obs", Source::Global, (5i64, "more")).unwrap();
    assert_eq!(taken(&got), ["Float(5.0)", "Str(\"more\")"]);
    let types = hub.table().get("Obs").unwrap().param_types();
    assert_eq!(types, [Type::Float, Type::String]);
}

#[test]
fn compat_int_for_float_is_converted_in_what_is_stored_and_replayed() {
    let hub = Hub::new();
    hub.declare(
        "Speed",
        KeyDecl::event()
            .kind(gantry_host::Kind::Store)
            .param("v", Type::Float),
    )
    .unwrap();
    let key = hub.key("Speed").unwrap();
    hub.store(key, Source::Global, (3i64,)).unwrap();
    assert_eq!(
        hub.stored(key, Source::Global).unwrap().to_vec(),
        [Value::Float(3.0)]
    );
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen_message("Speed", Source::Global, ListenOptions::new(), move |m| {
            g.borrow_mut().push(format!("{:?}", m.args[0]))
        })
        .unwrap();
    assert_eq!(taken(&got), ["Float(3.0)"]);
}

#[test]
fn compat_child_struct_matches_parent_but_parent_not_child() {
    let hub = Hub::new();
    base_and_child(&hub);
    hub.declare(
        "ToBase",
        KeyDecl::event().param("b", Type::Struct("Base".into())),
    )
    .unwrap();
    hub.declare(
        "ToChild",
        KeyDecl::event().param("c", Type::Struct("Child".into())),
    )
    .unwrap();
    assert!(hub.send_str("ToBase", Source::Global, (child(),)).is_ok());
    assert!(hub.send_str("ToBase", Source::Global, (base(),)).is_ok());
    let err = hub
        .send_str("ToChild", Source::Global, (base(),))
        .unwrap_err();
    assert!(
        matches!(&err, HubError::Mismatch { mismatch, .. } if mismatch.expected == "Child" && mismatch.got == "Base"),
        "{err}"
    );
}

#[test]
fn compat_listener_taking_the_parent_of_the_message_struct_is_compatible() {
    let hub = Hub::new();
    base_and_child(&hub);
    hub.declare(
        "ToChild",
        KeyDecl::event().param("c", Type::Struct("Child".into())),
    )
    .unwrap();
    struct BaseParam;
    impl gantry_host::FromValue for BaseParam {
        fn declared_type() -> Type {
            Type::Struct("Base".into())
        }
        fn from_value(v: &Value) -> Option<Self> {
            v.as_struct().map(|_| BaseParam)
        }
    }
    struct ChildParam;
    impl gantry_host::FromValue for ChildParam {
        fn declared_type() -> Type {
            Type::Struct("Child".into())
        }
        fn from_value(v: &Value) -> Option<Self> {
            v.as_struct().map(|_| ChildParam)
        }
    }
    assert!(
        hub.listen("ToChild", Source::Global, |_: BaseParam| {})
            .is_ok()
    );
    hub.declare(
        "ToBase",
        KeyDecl::event().param("b", Type::Struct("Base".into())),
    )
    .unwrap();
    assert!(
        hub.listen("ToBase", Source::Global, |_: ChildParam| {})
            .is_err(),
        "a listener wanting the child cannot take every base"
    );
}

#[test]
fn compat_checked_mismatch_reports_key_position_expected_got_and_the_call_site() {
    let hub = Hub::new();
    hub.declare(
        "Player.Hurt",
        KeyDecl::event()
            .param("dmg", Type::Float)
            .param("causer", Type::Object),
    )
    .unwrap();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let _handles = [
        hub.listen("Player.Hurt", Source::Global, pusher(&log, "global"))
            .unwrap(),
        hub.listen("Player.Hurt", obj, pusher(&log, "object"))
            .unwrap(),
        hub.listen_with(
            "Player",
            Source::Global,
            ListenOptions::new().partial(),
            pusher(&log, "partial"),
        )
        .unwrap(),
    ];
    let line = line!() + 1;
    let err = hub.send_str("Player.Hurt", obj, (1.5f64, "not an object"));
    assert!(matches!(err, Err(HubError::Mismatch { .. })));
    assert!(taken(&log).is_empty(), "the dispatch was aborted");
    let reports = hub.take_reports();
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
        panic!("unexpected reports {reports:?}");
    };
    assert_eq!(key, "Player.Hurt");
    assert_eq!(*position, 1);
    assert_eq!((expected.as_str(), got.as_str()), ("object", "string"));
    assert!(site.file.ends_with("compat.rs"), "{site}");
    assert_eq!(site.line, line);
    assert_eq!(site.language, Language::Rust);
    // The text names all of it too.
    let text = reports[0].to_string();
    assert!(
        text.contains("Player.Hurt") && text.contains("object") && text.contains("compat.rs"),
        "{text}"
    );
}

#[test]
fn compat_observed_signature_mismatch_is_aborted_like_a_declared_one() {
    let hub = Hub::new();
    hub.send_str("Seen", Source::Global, (1i64, "a")).unwrap();
    let log = log();
    let _h = hub
        .listen_message("Seen", Source::Global, ListenOptions::new(), {
            let log = log.clone();
            move |_| log.borrow_mut().push("called".into())
        })
        .unwrap();
    let err = hub
        .send_str("Seen", Source::Global, (1i64, 2i64))
        .unwrap_err();
    assert!(
        matches!(&err, HubError::Mismatch { mismatch, .. } if mismatch.position == 1),
        "{err}"
    );
    assert!(taken(&log).is_empty());
    // A prefix of the observed parameters is refused as well: the missing
    // one would reach listeners as nothing.
    let err = hub.send_str("Seen", Source::Global, (1i64,)).unwrap_err();
    assert!(
        matches!(&err, HubError::Mismatch { mismatch, .. } if mismatch.position == 1),
        "{err}"
    );
    assert!(taken(&log).is_empty());
    hub.send_str("Seen", Source::Global, (1i64, "b")).unwrap();
    assert_eq!(taken(&log), ["called"]);
}

#[test]
fn compat_refused_store_keeps_what_was_stored_and_calls_nobody() {
    let hub = Hub::new();
    hub.declare(
        "Hp",
        KeyDecl::event()
            .kind(gantry_host::Kind::Store)
            .param("hp", Type::Int),
    )
    .unwrap();
    let key = hub.key("Hp").unwrap();
    hub.store(key, Source::Global, (10i64,)).unwrap();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen("Hp", Source::Global, move |n: i64| {
            l.borrow_mut().push(n.to_string())
        })
        .unwrap();
    assert_eq!(taken(&log), ["10"]);
    assert!(hub.store(key, Source::Global, ("ten",)).is_err());
    assert!(hub.once(key, Source::Global, (true,)).is_err());
    assert!(taken(&log).is_empty());
    assert_eq!(
        hub.stored(key, Source::Global).unwrap().to_vec(),
        [Value::Int(10)]
    );
}

#[test]
fn compat_refused_request_calls_no_listener() {
    let hub = Hub::new();
    hub.declare("Ask", KeyDecl::event().param("n", Type::Int))
        .unwrap();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen_message("Ask", Source::Global, ListenOptions::new(), move |m| {
            l.borrow_mut().push("called".into());
            m.responder.unwrap().respond((1i64,));
        })
        .unwrap();
    let key = hub.key("Ask").unwrap();
    let replies = log.clone();
    let result = hub.request(key, Source::Global, ("no",), move |reply| {
        if let Reply::Answer(_) = reply {
            replies.borrow_mut().push("answered".into());
        }
    });
    assert!(matches!(result, Err(HubError::Mismatch { .. })));
    assert!(taken(&log).is_empty());
}

#[test]
fn compat_checked_mode_switches_off_and_back_on() {
    let hub = Hub::new();
    assert!(hub.is_checked(), "checked is the default");
    hub.declare("C", KeyDecl::event().param("n", Type::Int))
        .unwrap();
    hub.set_checked(false);
    assert!(hub.send_str("C", Source::Global, ("x",)).is_ok());
    hub.set_checked(true);
    assert!(hub.send_str("C", Source::Global, ("x",)).is_err());
}

#[test]
fn compat_unchecked_typed_listener_never_rewrites_the_signature() {
    let hub = Hub::new();
    hub.declare(
        "Decl",
        KeyDecl::event()
            .param("n", Type::Int)
            .param("s", Type::String),
    )
    .unwrap();
    hub.send_str("Obs", Source::Global, (1i64, 2.5f64)).unwrap();
    hub.set_checked(false);
    let _a = hub.listen("Decl", Source::Global, |_: String| {}).unwrap();
    let _b = hub.listen("Obs", Source::Global, |_: i64| {}).unwrap();
    let table = hub.table();
    assert_eq!(
        table.get("Decl").unwrap().param_types(),
        [Type::Int, Type::String]
    );
    assert_eq!(
        table.get("Obs").unwrap().param_types(),
        [Type::Int, Type::Float]
    );
}

#[test]
fn compat_listen_rejected_report_names_the_listeners_call_site() {
    let hub = Hub::new();
    hub.declare("R", KeyDecl::event().param("n", Type::Int))
        .unwrap();
    let line = line!() + 1;
    let err = hub.listen("R", Source::Global, |_: String| {}).unwrap_err();
    assert!(matches!(err, HubError::ListenRejected { .. }));
    let reports = hub.take_reports();
    let [
        Report::ListenRejected {
            key,
            position,
            expected,
            got,
            site: Some(site),
        },
    ] = reports.as_slice()
    else {
        panic!("unexpected reports {reports:?}");
    };
    assert_eq!((key.as_str(), *position), ("R", 0));
    assert_eq!((expected.as_str(), got.as_str()), ("string", "int"));
    assert!(
        site.file.ends_with("compat.rs") && site.line == line,
        "{site}"
    );
    assert_eq!(site.role, Role::Listen);
    // Nothing was registered.
    assert_eq!(hub.listener_count(), 0);
}
