//! Spec audit: rules of DESIGN.md and references 000, 002 and 003 that the
//! other test files leave untested, one test per rule, named after it.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    HookOptions, Hub, HubError, KeyDecl, Kind, Language, ListenOptions, Match, Owner, Reply,
    Report, Role, Router, SignatureTable, Source, StructDef, StructValue, TableError, Type, Value,
};

mod support;

use support::log::{log, pusher, taken};

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

// ----- keys --------------------------------------------------------------------

#[test]
fn keys_bad_key_is_an_error_at_every_entry_point_never_a_panic() {
    let hub = Hub::new();
    for bad in ["", ".", "A..B", ".A", "A.", "A B", "A-B", "Ä", "A.B\n"] {
        assert!(hub.key(bad).is_err(), "{bad:?}");
        assert!(
            matches!(hub.declare(bad, KeyDecl::event()), Err(HubError::Key(_))),
            "{bad:?}"
        );
        assert!(
            matches!(
                hub.listen_message(bad, Source::Global, ListenOptions::new(), |_| {}),
                Err(HubError::Key(_))
            ),
            "{bad:?}"
        );
        assert!(
            matches!(
                hub.listen_hook(bad, HookOptions::new(), |_| {}),
                Err(HubError::Key(_))
            ),
            "{bad:?}"
        );
        assert!(
            matches!(
                hub.send_str(bad, Source::Global, (1i64,)),
                Err(HubError::Key(_))
            ),
            "{bad:?}"
        );
        // Recording a site under a bad key is ignored, not stored.
        hub.record_site(
            bad,
            gantry_host::Site::new("x.lua", 1, Language::Lua, Role::Send),
        );
        assert!(hub.table().get(bad).is_none());
    }
    // A hook heard (partially, from above) on a bad key below it is an error too.
    let _h = hub
        .listen_hook("Combat", HookOptions::new().partial(), |_| {})
        .unwrap();
    let mut payload = Value::Int(1);
    assert!(matches!(
        hub.run_hook("Combat.Bad Key", &mut payload),
        Err(HubError::Key(_))
    ));
    let router = Router::new();
    assert!(
        router
            .register("A..B", None, Match::Exact, None, |_, _| {})
            .is_err()
    );
    assert!(router.broadcast("no good", Value::Nil).is_err());
}

// ----- sources and tiers -----------------------------------------------------------

#[test]
fn sources_world_send_never_reaches_object_or_named_listeners() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let named = hub.named(obj, "hand");
    let log = log();
    let _handles = [
        hub.listen("P", Source::Global, pusher(&log, "global"))
            .unwrap(),
        hub.listen("P", world, pusher(&log, "world")).unwrap(),
        hub.listen("P", obj, pusher(&log, "object")).unwrap(),
        hub.listen("P", named, pusher(&log, "named")).unwrap(),
    ];
    hub.send_str("P", world, ()).unwrap();
    assert_eq!(taken(&log), ["global", "world"]);
    hub.send_str("P", obj, ()).unwrap();
    assert_eq!(taken(&log), ["global", "world", "object"]);
    hub.send_str("P", named, ()).unwrap();
    assert_eq!(taken(&log), ["global", "world", "named"]);
}

#[test]
fn sources_destroying_an_object_drops_its_named_sources_listeners_and_stores() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let named = hub.named(obj, "slot");
    let log = log();
    hub.listen("N", named, pusher(&log, "named"))
        .unwrap()
        .detach();
    let key = hub.key("N").unwrap();
    hub.store(key, named, ()).unwrap();
    assert_eq!(taken(&log), ["named"]);
    hub.destroy(obj).unwrap();
    assert_eq!(hub.listener_count(), 0);
    assert!(hub.stored(key, named).is_none());
}

#[test]
fn sources_destroying_a_world_drops_its_listeners_stores_and_objects() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    hub.listen("W", world, pusher(&log, "world"))
        .unwrap()
        .detach();
    let key = hub.key("W").unwrap();
    hub.store(key, world, ()).unwrap();
    taken(&log);
    hub.destroy_world(world).unwrap();
    assert!(!hub.is_alive(obj));
    assert_eq!(hub.listener_count(), 0);
    assert!(hub.stored(key, world).is_none());
    assert!(matches!(
        hub.destroy_world(world),
        Err(HubError::NoSuchWorld(_))
    ));
}

// ----- listen options -------------------------------------------------------------

#[test]
fn listen_options_default_is_forever_order_zero_exact() {
    let options = ListenOptions::default();
    assert_eq!(options.times, -1);
    assert_eq!(options.order, 0);
    assert_eq!(options.matching, Match::Exact);
    let hub = Hub::new();
    let log = log();
    let _h = hub.listen("F", Source::Global, pusher(&log, "x")).unwrap();
    for _ in 0..50 {
        hub.send_str("F", Source::Global, ()).unwrap();
    }
    assert_eq!(taken(&log).len(), 50);
    assert_eq!(hub.listener_count(), 1);
}

#[test]
fn listen_options_order_is_respected_across_partial_ancestors_and_tiers() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let _handles = [
        hub.listen_with(
            "Inv.Items",
            obj,
            ListenOptions::new().order(3),
            pusher(&log, "object exact 3"),
        )
        .unwrap(),
        hub.listen_with(
            "Inv",
            Source::Global,
            ListenOptions::new().partial().order(-5),
            pusher(&log, "global partial -5"),
        )
        .unwrap(),
        hub.listen_with(
            "Inv",
            world,
            ListenOptions::new().partial(),
            pusher(&log, "world partial 0"),
        )
        .unwrap(),
        hub.listen_with(
            "Inv.Items",
            Source::Global,
            ListenOptions::new(),
            pusher(&log, "global exact 0"),
        )
        .unwrap(),
        // An exact listener on the ancestor never hears the child key.
        hub.listen_with(
            "Inv",
            Source::Global,
            ListenOptions::new().order(-100),
            pusher(&log, "ancestor exact"),
        )
        .unwrap(),
    ];
    hub.send_str("Inv.Items", obj, ()).unwrap();
    assert_eq!(
        taken(&log),
        [
            "global partial -5",
            "global exact 0",
            "world partial 0",
            "object exact 3"
        ]
    );
}

#[test]
fn listen_options_times_counts_calls_across_tiers_and_partial_matches() {
    let hub = Hub::new();
    let log = log();
    let _h = hub
        .listen_with(
            "T",
            Source::Global,
            ListenOptions::new().times(3).partial(),
            pusher(&log, "x"),
        )
        .unwrap();
    hub.send_str("T.A", Source::Global, ()).unwrap();
    hub.send_str("T", Source::Global, ()).unwrap();
    hub.send_str("T.B.C", Source::Global, ()).unwrap();
    hub.send_str("T", Source::Global, ()).unwrap();
    assert_eq!(taken(&log).len(), 3);
    assert_eq!(hub.listener_count(), 0);
}

// ----- owners and lifetime ------------------------------------------------------

#[test]
fn owner_gone_is_dropped_before_the_next_delivery_of_any_key_it_listens_to() {
    let hub = Hub::new();
    let owner = Rc::new(());
    let log = log();
    for key in ["A", "B"] {
        hub.listen_with(
            key,
            Source::Global,
            ListenOptions::new().owner(Owner::of(&owner)),
            pusher(&log, "owned"),
        )
        .unwrap()
        .detach();
    }
    let hook_log = log.clone();
    hub.listen_hook(
        "H",
        HookOptions::new().owner(Owner::of(&owner)),
        move |_| hook_log.borrow_mut().push("hook".into()),
    )
    .unwrap()
    .detach();
    drop(owner);
    hub.send_str("A", Source::Global, ()).unwrap();
    let mut payload = Value::Nil;
    let result = hub.run_hook("H", &mut payload).unwrap();
    assert_eq!(result.ran, 0);
    assert!(taken(&log).is_empty());
    assert_eq!(hub.listener_count(), 1, "B is dropped at its next delivery");
    hub.send_str("B", Source::Global, ()).unwrap();
    assert!(taken(&log).is_empty());
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn owner_object_destroyed_drops_its_hook_listeners_at_once() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    hub.listen_hook("H", HookOptions::new().owner(Owner::Object(obj)), |_| {})
        .unwrap()
        .detach();
    assert!(hub.has_hook_listeners("H"));
    hub.destroy(obj).unwrap();
    assert!(!hub.has_hook_listeners("H"));
}

#[test]
fn owner_or_scope_already_destroyed_is_refused_not_kept_forever() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let named = hub.named(obj, "n");
    hub.destroy(obj).unwrap();
    let owned = hub.listen_with(
        "K",
        Source::Global,
        ListenOptions::new().owner(Owner::Object(obj)),
        || {},
    );
    assert!(matches!(owned, Err(HubError::NoSuchObject(o)) if o == obj));
    assert!(matches!(
        hub.listen("K", obj, || {}),
        Err(HubError::NoSuchObject(_))
    ));
    assert!(matches!(
        hub.listen("K", named, || {}),
        Err(HubError::NoSuchObject(_))
    ));
    assert!(matches!(
        hub.listen_hook("H", HookOptions::new().owner(Owner::Object(obj)), |_| {}),
        Err(HubError::NoSuchObject(_))
    ));
    let key = hub.key("K").unwrap();
    assert!(matches!(
        hub.store(key, obj, (1i64,)),
        Err(HubError::NoSuchObject(_))
    ));
    assert!(hub.stored(key, obj).is_none());
    let gone = hub.create_world();
    hub.destroy_world(gone).unwrap();
    assert!(matches!(
        hub.listen("K", gone, || {}),
        Err(HubError::NoSuchWorld(_))
    ));
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn owner_unlisten_owner_on_one_key_leaves_its_other_keys() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    for (key, name) in [("A", "a"), ("B", "b")] {
        hub.listen_with(
            key,
            Source::Global,
            ListenOptions::new().owner(Owner::Object(obj)),
            pusher(&log, name),
        )
        .unwrap()
        .detach();
    }
    assert_eq!(hub.unlisten_owner_on("A", &Owner::Object(obj)), 1);
    hub.send_str("A", Source::Global, ()).unwrap();
    hub.send_str("B", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["b"]);
    assert_eq!(hub.unlisten_owner_on("Never.Seen", &Owner::Object(obj)), 0);
}

// ----- re-entrancy ---------------------------------------------------------------

#[test]
fn reentrancy_listener_listening_during_dispatch_gets_a_stored_replay_at_once() {
    let hub = Hub::new();
    let key = hub.key("Stored").unwrap();
    hub.store(key, Source::Global, (9i64,)).unwrap();
    let log = log();
    let (hub2, l) = (hub.clone(), log.clone());
    let _outer = hub
        .listen_with(
            "Go",
            Source::Global,
            ListenOptions::new().times(1),
            move || {
                let l2 = l.clone();
                hub2.listen("Stored", Source::Global, move |n: i64| {
                    l2.borrow_mut().push(format!("replayed {n}"))
                })
                .unwrap()
                .detach();
                l.borrow_mut().push("outer done".into());
            },
        )
        .unwrap();
    hub.send_str("Go", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["replayed 9", "outer done"]);
}

#[test]
fn reentrancy_hook_listener_may_unlisten_itself_and_run_other_hooks() {
    let hub = Hub::new();
    let log = log();
    let me: Rc<RefCell<Option<gantry_host::ListenerId>>> = Rc::default();
    let (m, hub2, l) = (me.clone(), hub.clone(), log.clone());
    *me.borrow_mut() = Some(
        hub.listen_hook("Outer", HookOptions::new(), move |call| {
            l.borrow_mut().push("outer".into());
            if let Some(id) = *m.borrow() {
                hub2.unlisten(id);
            }
            let mut inner = Value::Int(1);
            let r = hub2.run_hook("Inner", &mut inner).unwrap();
            l.borrow_mut().push(format!("inner ran {}", r.ran));
            call.handled();
        })
        .unwrap()
        .detach(),
    );
    let _inner = hub
        .listen_hook("Inner", HookOptions::new(), |_| {})
        .unwrap();
    let mut payload = Value::Nil;
    let r = hub.run_hook("Outer", &mut payload).unwrap();
    assert!(r.handled && r.ran == 1);
    let r = hub.run_hook("Outer", &mut payload).unwrap();
    assert_eq!(r.ran, 0);
    assert_eq!(taken(&log), ["outer", "inner ran 1"]);
}

// ----- the compatibility rule -------------------------------------------------------

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
    hub.declare("Speed", KeyDecl::event().param("v", Type::Float))
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
    assert!(site.file.ends_with("spec_audit.rs"), "{site}");
    assert_eq!(site.line, line);
    assert_eq!(site.language, Language::Rust);
    // The text names all of it too.
    let text = reports[0].to_string();
    assert!(
        text.contains("Player.Hurt") && text.contains("object") && text.contains("spec_audit.rs"),
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
    // A prefix of the observed parameters is a fine send.
    hub.send_str("Seen", Source::Global, (1i64,)).unwrap();
    assert_eq!(taken(&log), ["called"]);
}

#[test]
fn compat_refused_store_keeps_what_was_stored_and_calls_nobody() {
    let hub = Hub::new();
    hub.declare("Hp", KeyDecl::event().param("hp", Type::Int))
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
        site.file.ends_with("spec_audit.rs") && site.line == line,
        "{site}"
    );
    assert_eq!(site.role, Role::Listen);
    // Nothing was registered.
    assert_eq!(hub.listener_count(), 0);
}

// ----- store and once ---------------------------------------------------------------

#[test]
fn store_once_replayed_to_a_partial_listener_is_consumed() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let _a = hub
        .listen_with(
            "Boot",
            Source::Global,
            ListenOptions::new().partial(),
            pusher(&log, "first"),
        )
        .unwrap();
    let _b = hub
        .listen_with(
            "Boot",
            Source::Global,
            ListenOptions::new().partial(),
            pusher(&log, "second"),
        )
        .unwrap();
    let _c = hub
        .listen("Boot.Done", Source::Global, pusher(&log, "exact"))
        .unwrap();
    assert_eq!(taken(&log), ["first"]);
    assert!(hub.stored(key, Source::Global).is_none());
}

#[test]
fn store_once_delivered_live_to_any_tier_is_consumed() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let _g = hub
        .listen("Ready", Source::Global, pusher(&log, "global"))
        .unwrap();
    let key = hub.key("Ready").unwrap();
    hub.once(key, obj, ()).unwrap();
    let _late = hub.listen("Ready", obj, pusher(&log, "late")).unwrap();
    assert_eq!(taken(&log), ["global"]);
    assert!(hub.stored(key, obj).is_none());
}

#[test]
fn store_is_kept_per_key_and_source_and_replayed_once_to_each_late_listener() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let (a, b) = (hub.key("A").unwrap(), hub.key("B").unwrap());
    hub.store(a, obj, (1i64,)).unwrap();
    hub.store(b, obj, (2i64,)).unwrap();
    hub.store(a, Source::Global, (3i64,)).unwrap();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen("A", obj, move |n: i64| l.borrow_mut().push(n.to_string()))
        .unwrap();
    assert_eq!(taken(&log), ["1"]);
    // A later send reaches it live, the replay is not repeated.
    hub.send_str("A", obj, (4i64,)).unwrap();
    assert_eq!(taken(&log), ["4"]);
    assert_eq!(hub.stored(a, obj).unwrap().to_vec(), [Value::Int(1)]);
    assert!(hub.remove_stored(a, obj));
    let l = log.clone();
    let _late = hub
        .listen("A", obj, move |n: i64| l.borrow_mut().push(n.to_string()))
        .unwrap();
    assert!(taken(&log).is_empty(), "removed stores are not replayed");
}

// ----- requests -----------------------------------------------------------------------

#[test]
fn request_answered_later_exactly_once_and_reported_unanswered_when_dropped_only() {
    let hub = Hub::new();
    let kept: Rc<RefCell<Vec<gantry_host::Responder>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Q", Source::Global, ListenOptions::new(), move |m| {
            k.borrow_mut().push(m.responder.unwrap().clone());
        })
        .unwrap();
    let k = kept.clone();
    let _h2 = hub
        .listen_message("Q", Source::Global, ListenOptions::new(), move |m| {
            k.borrow_mut().push(m.responder.unwrap().clone());
        })
        .unwrap();
    let out = log();
    let o = out.clone();
    let key = hub.key("Q").unwrap();
    hub.request(key, Source::Global, (), move |reply| {
        o.borrow_mut().push(match reply {
            Reply::Answer(v) => format!("answer {}", v[0]),
            Reply::Unanswered => "unanswered".into(),
        })
    })
    .unwrap();
    assert!(taken(&out).is_empty());
    let responders = std::mem::take(&mut *kept.borrow_mut());
    assert!(responders[1].respond((2i64,)));
    assert!(!responders[0].respond((1i64,)));
    drop(responders);
    assert_eq!(taken(&out), ["answer 2"]);
    let reports = hub.take_reports();
    assert!(
        !reports
            .iter()
            .any(|r| matches!(r, Report::Unanswered { .. })),
        "{reports:?}"
    );
}

#[test]
fn request_unanswered_report_names_the_requesters_site() {
    let hub = Hub::new();
    let key = hub.key("Nobody.Home").unwrap();
    let line = line!() + 1;
    hub.request(key, Source::Global, (), |_| {}).unwrap();
    let reports = hub.take_reports();
    let Some(Report::Unanswered {
        key,
        site: Some(site),
        ..
    }) = reports.first()
    else {
        panic!("unexpected reports {reports:?}");
    };
    assert_eq!(key, "Nobody.Home");
    assert!(
        site.file.ends_with("spec_audit.rs") && site.line == line,
        "{site}"
    );
}

// ----- hooks ----------------------------------------------------------------------------

#[test]
fn hook_result_counts_listeners_that_ran_up_to_the_cancel() {
    let hub = Hub::new();
    let log = log();
    let mut handles = Vec::new();
    for (priority, name, cancel) in [(1, "low", false), (9, "high", false), (5, "mid", true)] {
        let l = log.clone();
        handles.push(
            hub.listen_hook("Gate", HookOptions::new().priority(priority), move |call| {
                l.borrow_mut().push(name.to_owned());
                if cancel {
                    call.cancel();
                }
            })
            .unwrap(),
        );
    }
    let mut payload = Value::Nil;
    let result = hub.run_hook("Gate", &mut payload).unwrap();
    assert_eq!(taken(&log), ["high", "mid"]);
    assert_eq!(
        result,
        gantry_host::HookResult {
            ran: 2,
            handled: false,
            cancelled: true
        }
    );
}

#[test]
fn hook_expecting_a_parent_struct_gets_a_child_payload() {
    let hub = Hub::new();
    base_and_child(&hub);
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen_hook("Hit", HookOptions::new().expects("Base"), move |call| {
            l.borrow_mut().push(call.payload.kind_name());
        })
        .unwrap();
    let mut payload = child();
    assert_eq!(hub.run_hook("Hit", &mut payload).unwrap().ran, 1);
    let mut payload = Value::Int(3);
    assert_eq!(hub.run_hook("Hit", &mut payload).unwrap().ran, 0);
    assert_eq!(taken(&log), ["Child"]);
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::HookPayloadSkipped { .. }))
    );
}

#[test]
fn hook_run_from_rust_records_its_call_site_as_a_send() {
    let hub = Hub::new();
    let _h = hub
        .listen_hook("Combat.Damage", HookOptions::new(), |_| {})
        .unwrap();
    let mut payload = Value::Int(5);
    let line = line!() + 2;
    for _ in 0..2 {
        hub.run_hook("Combat.Damage", &mut payload).unwrap();
    }
    let table = hub.table();
    let entry = table.get("Combat.Damage").unwrap();
    assert_eq!(entry.kind, Kind::Hook);
    let sends: Vec<u32> = entry
        .sites_with_role(Role::Send)
        .filter(|s| s.file.ends_with("spec_audit.rs"))
        .map(|s| s.line)
        .collect();
    assert_eq!(sends, [line], "recorded once");
    assert_eq!(entry.sites_with_role(Role::Listen).count(), 1);
}

// ----- the router (reference 003) -------------------------------------------------------

#[test]
fn router_exact_listeners_first_then_partial_above_nearest_first_and_typed_filter_warns() {
    let router = Router::new();
    router.declare_struct("Msg", StructDef::default());
    let log = log();
    let push = |name: &'static str| {
        let l = log.clone();
        move |channel: &str, _: &Value| l.borrow_mut().push(format!("{name} {channel}"))
    };
    let ids = [
        router
            .register("A", None, Match::Partial, None, push("A partial"))
            .unwrap(),
        router
            .register("A.B.C", None, Match::Exact, None, push("exact 1"))
            .unwrap(),
        router
            .register("A.B", None, Match::Partial, None, push("A.B partial"))
            .unwrap(),
        router
            .register("A.B.C", None, Match::Exact, None, push("exact 2"))
            .unwrap(),
        router
            .register("A.B.C", Some("Msg"), Match::Exact, None, push("typed"))
            .unwrap(),
        router
            .register("A.B", None, Match::Exact, None, push("never"))
            .unwrap(),
    ];
    assert!(ids.iter().all(|id| *id != 0));
    let delivered = router.broadcast("A.B.C", Value::Int(1)).unwrap();
    assert_eq!(delivered, 4);
    assert_eq!(
        taken(&log),
        [
            "exact 1 A.B.C",
            "exact 2 A.B.C",
            "A.B partial A.B.C",
            "A partial A.B.C"
        ]
    );
    assert!(
        router
            .hub()
            .take_reports()
            .iter()
            .any(|r| matches!(r, Report::HookPayloadSkipped { .. })),
        "a payload of another struct is skipped with a warning"
    );
}

#[test]
fn router_owner_gone_is_counted_until_the_next_message_drops_it() {
    let router = Router::new();
    let owner = Rc::new(());
    router
        .register("Ch", None, Match::Exact, Some(Owner::of(&owner)), |_, _| {})
        .unwrap();
    drop(owner);
    assert_eq!(router.num(), 1, "owners not yet checked");
    assert_eq!(router.broadcast("Ch", Value::Nil).unwrap(), 0);
    assert_eq!(router.num(), 0);
}

#[test]
fn router_reset_removes_hook_listeners_and_num_does_not_count_them() {
    let router = Router::new();
    router
        .register_hook("Hk", None, Match::Exact, 0, None, |_| {})
        .unwrap();
    router
        .register("Ch", None, Match::Exact, None, |_, _| {})
        .unwrap();
    assert_eq!(router.num(), 1);
    assert!(router.has_hook_listeners("Hk") && !router.has_hook_listeners("Other"));
    router.reset();
    assert!(!router.has_hook_listeners("Hk"));
    assert_eq!(router.num(), 0);
    router.unregister_hook("Hk", 12345);
}

#[test]
fn router_listener_may_register_unregister_and_broadcast_while_called() {
    let router = Rc::new(Router::new());
    let log = log();
    let (r, l) = (Rc::downgrade(&router), log.clone());
    let first = router
        .register("Ch", None, Match::Exact, None, move |_, payload| {
            l.borrow_mut().push(format!("first {payload}"));
            if let (Some(router), Value::Int(1)) = (r.upgrade(), payload) {
                let l2 = l.clone();
                router
                    .register("Ch", None, Match::Exact, None, move |_, p| {
                        l2.borrow_mut().push(format!("added {p}"))
                    })
                    .unwrap();
                router.broadcast("Ch", Value::Int(2)).unwrap();
            }
        })
        .unwrap();
    router.broadcast("Ch", Value::Int(1)).unwrap();
    // The nested broadcast already reaches the listener added before it;
    // the outer one does not (it was added during its delivery).
    assert_eq!(taken(&log), ["first 1", "first 2", "added 2"]);
    router.unregister("Ch", first);
    router.broadcast("Ch", Value::Int(3)).unwrap();
    assert_eq!(taken(&log), ["added 3"]);
}

// ----- the signature table and its file ------------------------------------------------

#[test]
fn signature_first_use_infers_object_struct_array_and_kinds() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    hub.send_str(
        "Infer.All",
        Source::Global,
        (obj, base(), Value::array(vec![Value::Int(1)]), Value::Nil),
    )
    .unwrap();
    let key = hub.key("Infer.Store").unwrap();
    hub.store(key, Source::Global, ("x",)).unwrap();
    let ask = hub.key("Infer.Ask").unwrap();
    let _answer = hub
        .listen_message("Infer.Ask", Source::Global, ListenOptions::new(), |m| {
            m.responder.unwrap().respond((1.5f64, true));
        })
        .unwrap();
    hub.request(ask, Source::Global, (), |_| {}).unwrap();
    let table = hub.table();
    let all = table.get("Infer.All").unwrap();
    assert_eq!(
        all.param_types(),
        [
            Type::Object,
            Type::Struct("Base".into()),
            Type::Array(Box::new(Type::Int)),
            Type::Nil
        ]
    );
    assert_eq!(all.kind, Kind::Event);
    assert_eq!(all.origin, gantry_host::Origin::Observed);
    assert_eq!(table.get("Infer.Store").unwrap().kind, Kind::Store);
    let response: Vec<Type> = table
        .get("Infer.Ask")
        .unwrap()
        .response
        .as_ref()
        .unwrap()
        .iter()
        .map(|p| p.ty.clone())
        .collect();
    assert_eq!(response, [Type::Float, Type::Bool]);
    drop(table);
    // A nil position is narrowed by the first real value.
    hub.send_str(
        "Infer.All",
        Source::Global,
        (obj, base(), Value::array(vec![]), "now a string"),
    )
    .unwrap();
    assert_eq!(
        hub.table().get("Infer.All").unwrap().params[3].ty,
        Type::String
    );
}

#[test]
fn an_observed_nil_parameter_accepts_any_typed_listener_until_a_real_value_narrows_it() {
    let hub = Hub::new();
    hub.send_str("Nil.First", Source::Global, (1i64, Value::Nil))
        .unwrap();
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen("Nil.First", Source::Global, move |_: i64, s: String| {
            g.borrow_mut().push(s)
        })
        .expect("an observed nil says nothing yet");
    hub.send_str("Nil.First", Source::Global, (2i64, "now a string"))
        .unwrap();
    assert_eq!(taken(&got), ["now a string"]);
    assert_eq!(
        hub.table().get("Nil.First").unwrap().params[1].ty,
        Type::String
    );
    // A declared nil is what the key carries: held to it.
    hub.declare(
        "Nil.Declared",
        KeyDecl::event()
            .param("n", Type::Int)
            .param("none", Type::Nil),
    )
    .unwrap();
    assert!(
        hub.listen("Nil.Declared", Source::Global, |_: i64, _: String| {})
            .is_err()
    );
}

#[test]
fn call_sites_of_rust_sends_listens_stores_requests_and_declarations_are_recorded() {
    let hub = Hub::new();
    let declared_at = line!() + 1;
    hub.declare("Sites.Key", KeyDecl::event().param("n", Type::Int))
        .unwrap();
    let key = hub.key("Sites.Key").unwrap();
    let listened_at = line!() + 2;
    let _h = hub
        .listen("Sites.Key", Source::Global, |_: i64| {})
        .unwrap();
    let sent_at = line!() + 1;
    hub.send(key, Source::Global, (1i64,)).unwrap();
    let stored_at = line!() + 1;
    hub.store(key, Source::Global, (2i64,)).unwrap();
    let asked_at = line!() + 1;
    hub.request(key, Source::Global, (3i64,), |_| {}).unwrap();
    let table = hub.table();
    let entry = table.get("Sites.Key").unwrap();
    let lines = |role| -> Vec<u32> {
        entry
            .sites_with_role(role)
            .filter(|s| s.file.ends_with("spec_audit.rs") && s.language == Language::Rust)
            .map(|s| s.line)
            .collect()
    };
    assert_eq!(lines(Role::Declare), [declared_at]);
    assert_eq!(lines(Role::Listen), [listened_at]);
    assert_eq!(lines(Role::Send), [sent_at, stored_at, asked_at]);
    assert_eq!(entry.declaration_site().map(|s| s.line), Some(declared_at));
}

fn populated(order: bool) -> SignatureTable {
    let hub = Hub::new();
    let sends: [(&str, Value); 3] = [
        ("Zeta.Last", Value::Int(1)),
        ("Alpha.First", Value::str("a")),
        (
            "Mid.Key",
            Value::structure(StructValue::new("Thing").with("x", 1i64)),
        ),
    ];
    let mut sends = sends.to_vec();
    if order {
        sends.reverse();
    }
    for (key, value) in sends {
        hub.send_str(key, Source::Global, (value,)).unwrap();
    }
    let mut table = hub.table_snapshot();
    // Sites of other files, recorded in either order.
    let mut sites = vec![
        gantry_host::Site::new("b.lua", 3, Language::Lua, Role::Send),
        gantry_host::Site::new("a.rhai", 9, Language::Rhai, Role::Listen),
        gantry_host::Site::new("a.lua", 1, Language::Lua, Role::Listen),
    ];
    if order {
        sites.reverse();
    }
    for site in sites {
        table.record_site("Mid.Key", site);
    }
    // Rust sites of this file differ in column only between the two
    // orders; drop them.
    for entry in table.keys.values_mut() {
        entry.sites.retain(|s| s.language != Language::Rust);
    }
    table
}

#[test]
fn persistence_text_is_sorted_and_independent_of_the_order_things_were_seen() {
    let a = populated(false).to_json();
    let b = populated(true).to_json();
    assert_eq!(a, b);
    assert!(a.ends_with('\n'));
    let at = |needle: &str| a.find(needle).unwrap_or_else(|| panic!("{needle} in {a}"));
    assert!(at("Alpha.First") < at("Mid.Key") && at("Mid.Key") < at("Zeta.Last"));
    assert!(at("a.lua") < at("a.rhai") && at("a.rhai") < at("b.lua"));
    assert!(a.contains("\"version\": 1"));
}

#[test]
fn persistence_save_is_atomic_replacing_a_readable_file_and_leaving_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/signatures.json");
    populated(false).save(&path).unwrap();
    let mut bigger = populated(false);
    bigger
        .declare("New.Key", KeyDecl::event().param("n", Type::Int), None)
        .unwrap();
    assert!(bigger.save(&path).unwrap());
    assert_eq!(SignatureTable::load(&path).unwrap(), bigger);
    let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["signatures.json"], "no temporary file is left");
}

#[test]
fn persistence_unreadable_shapes_are_corrupt_errors_naming_the_place_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    for text in [
        "",
        "{}",
        "{\"version\": \"1\", \"keys\": {}}",
        "{\"version\": 1, \"keys\": []}",
        "{\"version\": 1, \"keys\": {\"A\": {\"params\": [{\"name\": \"x\", \"type\": \"9lives\"}]}}}",
        "[1, 2]",
        "{\"version\": 1,\n \"keys\": {\n  \"A\": {\"kind\": \"sometimes\"}}}",
    ] {
        std::fs::write(&path, text).unwrap();
        let err = SignatureTable::load(&path).unwrap_err();
        assert!(matches!(err, TableError::Corrupt { .. }), "{text:?}: {err}");
        let message = err.to_string();
        assert!(
            message.contains("signatures.json") && message.contains("line"),
            "{message}"
        );
        assert!(populated(false).save(&path).is_err(), "{text:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    // The version is read before anything else: a newer file whose shape
    // this Gantry does not know is "newer", not "corrupt".
    let newer = "{\"version\": 2, \"keys\": [\"a new shape\"]}";
    std::fs::write(&path, newer).unwrap();
    assert!(matches!(
        SignatureTable::load(&path),
        Err(TableError::NewerVersion { found: 2, .. })
    ));
    assert!(populated(false).save(&path).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), newer);
}

#[test]
fn signature_receive_side_a_typed_listener_on_a_new_key_records_its_types() {
    let hub = Hub::new();
    let _h = hub
        .listen("Fresh.Typed", Source::Global, |_: i64, _: String| {})
        .unwrap();
    {
        let table = hub.table();
        let entry = table.get("Fresh.Typed").unwrap();
        assert_eq!(entry.param_types(), [Type::Int, Type::String]);
        assert_eq!(entry.origin, gantry_host::Origin::Observed);
    }
    // What it recorded is what sends are checked against from now on.
    assert!(
        hub.send_str("Fresh.Typed", Source::Global, (1i64, "x"))
            .is_ok()
    );
    assert!(
        hub.send_str("Fresh.Typed", Source::Global, ("x", 1i64))
            .is_err()
    );
}

#[test]
fn store_named_sources_of_one_object_keep_independent_stored_messages() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let (left, right) = (hub.named(obj, "left"), hub.named(obj, "right"));
    let key = hub.key("Hand.Item").unwrap();
    hub.store(key, left, ("sword",)).unwrap();
    hub.store(key, right, ("shield",)).unwrap();
    let log = log();
    let mut handles = Vec::new();
    for (name, source) in [("left", left), ("right", right), ("object", obj.into())] {
        let l = log.clone();
        handles.push(
            hub.listen("Hand.Item", source, move |item: String| {
                l.borrow_mut().push(format!("{name} {item}"))
            })
            .unwrap(),
        );
    }
    assert_eq!(taken(&log), ["left sword", "right shield"]);
}

#[test]
fn request_an_int_answered_for_a_float_response_is_converted() {
    let hub = Hub::new();
    hub.declare("Price", KeyDecl::event().response("value", Type::Float))
        .unwrap();
    let _h = hub
        .listen_message("Price", Source::Global, ListenOptions::new(), |m| {
            assert!(m.responder.unwrap().respond((5i64,)));
        })
        .unwrap();
    let got = log();
    let g = got.clone();
    let key = hub.key("Price").unwrap();
    hub.request(key, Source::Global, (), move |reply| {
        if let Reply::Answer(values) = reply {
            g.borrow_mut()
                .extend(values.iter().map(|v| format!("{v:?}")));
        }
    })
    .unwrap();
    assert_eq!(taken(&got), ["Float(5.0)"]);
}
