//! The hub core, rule by rule (issue 2; references 000 and 002).

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    Hub, HubError, KeyDecl, Kind, ListenOptions, Owner, Report, SignatureTable, Source, StructDef,
    Type, Value,
};

mod support;

use support::log::{Log, log, taken};

fn push(log: &Log, s: impl Into<String>) {
    log.borrow_mut().push(s.into());
}

// ----- reference 000: the seven listener examples ---------------------------

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
            assert!(site.file.ends_with("hub_core.rs"), "{site}");
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

// ----- tiers and isolation (reference 002) -----------------------------------

struct Scene {
    hub: Hub,
    world: gantry_host::WorldId,
    a: gantry_host::ObjectId,
    b: gantry_host::ObjectId,
    log: Log,
    _handles: Vec<gantry_host::ListenerHandle>,
}

fn scene() -> Scene {
    let hub = Hub::new();
    let world = hub.create_world();
    let a = hub.spawn(world).unwrap();
    let b = hub.spawn(world).unwrap();
    let log = log();
    let mut handles = Vec::new();
    for (name, scope) in [
        ("global", Source::Global),
        ("world", Source::World(world)),
        ("a", Source::Object(a)),
        ("b", Source::Object(b)),
    ] {
        let l = log.clone();
        handles.push(hub.listen("Ping", scope, move || push(&l, name)).unwrap());
    }
    Scene {
        hub,
        world,
        a,
        b,
        log,
        _handles: handles,
    }
}

#[test]
fn tiers_object_send_reaches_object_world_and_global() {
    let s = scene();
    s.hub.send_str("Ping", s.a, ()).unwrap();
    assert_eq!(taken(&s.log), ["global", "world", "a"]);
}

#[test]
fn tiers_world_send_reaches_world_and_global_not_objects() {
    let s = scene();
    s.hub.send_str("Ping", s.world, ()).unwrap();
    assert_eq!(taken(&s.log), ["global", "world"]);
}

#[test]
fn tiers_global_send_reaches_global_only() {
    let s = scene();
    s.hub.send_str("Ping", Source::Global, ()).unwrap();
    assert_eq!(taken(&s.log), ["global"]);
}

#[test]
fn tiers_listener_of_a_does_not_hear_b() {
    let s = scene();
    s.hub.send_str("Ping", s.b, ()).unwrap();
    let got = taken(&s.log);
    assert!(
        got.contains(&"b".to_owned()) && !got.contains(&"a".to_owned()),
        "{got:?}"
    );
}

#[test]
fn tiers_other_world_is_isolated() {
    let s = scene();
    let other = s.hub.create_world();
    let c = s.hub.spawn(other).unwrap();
    s.hub.send_str("Ping", c, ()).unwrap();
    assert_eq!(taken(&s.log), ["global"]);
}

#[test]
fn tiers_named_source_is_its_own_source() {
    let s = scene();
    let named = s.hub.named(s.a, "left_hand");
    let l = s.log.clone();
    let _h = s
        .hub
        .listen("Ping", named, move || push(&l, "a/left_hand"))
        .unwrap();
    s.hub.send_str("Ping", named, ()).unwrap();
    assert_eq!(taken(&s.log), ["global", "world", "a/left_hand"]);
}

/// Reference 001 §14: a composite source's records go with its object or
/// by an explicit removal (`RemoveSourceKey`), nothing else. Removing one
/// name drops its listeners and stored messages; the object's other names
/// and the object itself keep theirs, and the name can be used again.
#[test]
fn named_source_removed_explicitly_drops_its_records_and_no_others() {
    let s = scene();
    let hp = s.hub.named(s.a, "HP");
    let mp = s.hub.named(s.a, "MP");
    let key = s.hub.key("Bar.Value").unwrap();
    let (l1, l2, l3) = (s.log.clone(), s.log.clone(), s.log.clone());
    s.hub
        .listen("Bar.Value", hp, move |v: i64| push(&l1, format!("hp {v}")))
        .unwrap()
        .detach();
    s.hub
        .listen("Bar.Value", mp, move |v: i64| push(&l2, format!("mp {v}")))
        .unwrap()
        .detach();
    s.hub
        .listen("Bar.Value", s.a, move |v: i64| push(&l3, format!("a {v}")))
        .unwrap()
        .detach();
    s.hub.store(key, hp, (10i64,)).unwrap();
    s.hub.store(key, mp, (20i64,)).unwrap();
    assert_eq!(taken(&s.log), ["hp 10", "mp 20"]);

    assert_eq!(
        s.hub.remove_named(s.a, "HP").unwrap(),
        2,
        "a listener and a stored message"
    );
    assert!(s.hub.stored(key, hp).is_none());
    assert!(s.hub.stored(key, mp).is_some());
    s.hub.send(key, hp, (11i64,)).unwrap();
    s.hub.send(key, mp, (21i64,)).unwrap();
    s.hub.send(key, s.a, (1i64,)).unwrap();
    assert_eq!(taken(&s.log), ["mp 21", "a 1"]);

    // The name is free again, and a name nobody used removes nothing.
    let l = s.log.clone();
    let _again = s
        .hub
        .listen("Bar.Value", hp, move |v: i64| {
            push(&l, format!("hp again {v}"))
        })
        .unwrap();
    s.hub.send(key, hp, (12i64,)).unwrap();
    assert_eq!(taken(&s.log), ["hp again 12"]);
    assert_eq!(s.hub.remove_named(s.a, "Stamina").unwrap(), 0);
    s.hub.destroy(s.b).unwrap();
    assert!(matches!(
        s.hub.remove_named(s.b, "HP"),
        Err(HubError::NoSuchObject(_))
    ));
}

// ----- order ------------------------------------------------------------------

#[test]
fn order_lower_first_across_tiers_ties_keep_registration() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let mut handles = Vec::new();
    for (name, scope, order) in [
        ("global+5", Source::Global, 5),
        ("object-10", Source::Object(obj), -10),
        ("world0", Source::World(world), 0),
        ("global0", Source::Global, 0),
        ("object0", Source::Object(obj), 0),
    ] {
        let l = log.clone();
        handles.push(
            hub.listen_with(
                "Tick",
                scope,
                ListenOptions::new().order(order),
                move || push(&l, name),
            )
            .unwrap(),
        );
    }
    hub.send_str("Tick", obj, ()).unwrap();
    assert_eq!(
        taken(&log),
        ["object-10", "world0", "global0", "object0", "global+5"]
    );
}

/// Reference `003_…`: "listeners on the exact channel first, in
/// registration order, then Partial listeners on each channel above it".
#[test]
fn order_the_channels_own_listeners_by_registration_then_partial_ancestors_nearest_first() {
    let hub = Hub::new();
    let log = log();
    let mut handles = Vec::new();
    for (name, key, partial) in [
        ("Inv partial", "Inv", true),
        ("Inv.Items partial", "Inv.Items", true),
        ("Inv.Items.Row exact", "Inv.Items.Row", false),
        ("Inv exact", "Inv", false),
    ] {
        let l = log.clone();
        let opts = if partial {
            ListenOptions::new().partial()
        } else {
            ListenOptions::new()
        };
        handles.push(
            hub.listen_with(key, Source::Global, opts, move || push(&l, name))
                .unwrap(),
        );
    }
    hub.send_str("Inv.Items.Row", Source::Global, ()).unwrap();
    assert_eq!(
        taken(&log),
        ["Inv.Items.Row exact", "Inv.Items partial", "Inv partial"]
    );
    // Both listen on `Inv` itself: registration order, partial or not.
    hub.send_str("Inv", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["Inv partial", "Inv exact"]);
}

// ----- times, owners, handles, unlisten --------------------------------------

#[test]
fn times_n_unlistens_after_n_calls() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen_with(
            "T",
            Source::Global,
            ListenOptions::new().times(2),
            move || push(&l, "x"),
        )
        .unwrap();
    for _ in 0..4 {
        hub.send_str("T", Source::Global, ()).unwrap();
    }
    assert_eq!(taken(&log).len(), 2);
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn owner_gone_drops_listener_before_next_delivery() {
    let hub = Hub::new();
    let log = log();
    let owner = Rc::new(());
    let l = log.clone();
    hub.listen_with(
        "O",
        Source::Global,
        ListenOptions::new().owner(Owner::of(&owner)),
        move || push(&l, "x"),
    )
    .unwrap()
    .detach();
    hub.send_str("O", Source::Global, ()).unwrap();
    drop(owner);
    hub.send_str("O", Source::Global, ()).unwrap();
    assert_eq!(taken(&log).len(), 1);
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn handle_dropped_unlistens_and_detach_keeps_listening() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let handle = hub
        .listen("H", Source::Global, move || push(&l, "dropped"))
        .unwrap();
    let l = log.clone();
    let id = hub
        .listen("H", Source::Global, move || push(&l, "detached"))
        .unwrap()
        .detach();
    drop(handle);
    hub.send_str("H", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["detached"]);
    assert!(hub.unlisten(id));
    assert!(!hub.unlisten(id), "unknown ids do nothing");
}

#[test]
fn unlisten_by_id_and_by_owner() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let l = log.clone();
    let a = hub
        .listen("U", Source::Global, move || push(&l, "a"))
        .unwrap()
        .detach();
    for name in ["b", "c"] {
        let l = log.clone();
        hub.listen_with(
            "U",
            Source::Global,
            ListenOptions::new().owner(Owner::Object(obj)),
            move || push(&l, name),
        )
        .unwrap()
        .detach();
    }
    hub.unlisten(a);
    hub.send_str("U", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["b", "c"]);
    assert_eq!(hub.unlisten_owner(&Owner::Object(obj)), 2);
    hub.send_str("U", Source::Global, ()).unwrap();
    assert!(taken(&log).is_empty());
}

#[test]
fn destroy_object_drops_listeners_and_sources() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let other = hub.spawn(world).unwrap();
    let log = log();
    let l = log.clone();
    // Owned by obj, listening globally.
    hub.listen_with(
        "D",
        Source::Global,
        ListenOptions::new().owner(Owner::Object(obj)),
        move || push(&l, "owned"),
    )
    .unwrap()
    .detach();
    // Owned by other, listening on obj.
    let l = log.clone();
    hub.listen_with(
        "D",
        obj,
        ListenOptions::new().owner(Owner::Object(other)),
        move || push(&l, "sourced"),
    )
    .unwrap()
    .detach();
    let key = hub.key("D").unwrap();
    hub.store(key, obj, (1i64,)).unwrap();
    taken(&log);
    hub.destroy(obj).unwrap();
    assert_eq!(hub.listener_count(), 0);
    assert!(hub.stored(key, obj).is_none());
    assert!(matches!(hub.destroy(obj), Err(HubError::NoSuchObject(_))));
}

// ----- re-entrancy --------------------------------------------------------------

#[test]
fn reentrancy_listener_added_during_dispatch_is_not_called_by_it() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let hub2 = hub.clone();
    let _h = hub
        .listen_with(
            "R",
            Source::Global,
            ListenOptions::new().times(1),
            move || {
                let l2 = l.clone();
                push(&l, "first");
                hub2.listen("R", Source::Global, move || push(&l2, "added"))
                    .unwrap()
                    .detach();
            },
        )
        .unwrap();
    hub.send_str("R", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["first"]);
    hub.send_str("R", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["added"]);
}

#[test]
fn reentrancy_listener_removed_before_its_turn_is_not_called() {
    let hub = Hub::new();
    let log = log();
    let victim = Rc::new(RefCell::new(None));
    let (l, v, hub2) = (log.clone(), victim.clone(), hub.clone());
    let _first = hub
        .listen("R", Source::Global, move || {
            push(&l, "first");
            if let Some(id) = v.borrow_mut().take() {
                hub2.unlisten(id);
            }
        })
        .unwrap();
    let l = log.clone();
    *victim.borrow_mut() = Some(
        hub.listen("R", Source::Global, move || push(&l, "second"))
            .unwrap()
            .detach(),
    );
    hub.send_str("R", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["first"]);
}

#[test]
fn reentrancy_listener_may_unlisten_itself_and_send() {
    let hub = Hub::new();
    let log = log();
    let me = Rc::new(RefCell::new(None));
    let (l, m, hub2) = (log.clone(), me.clone(), hub.clone());
    *me.borrow_mut() = Some(
        hub.listen("Outer", Source::Global, move || {
            push(&l, "outer");
            if let Some(id) = *m.borrow() {
                hub2.unlisten(id);
            }
            hub2.send_str("Inner", Source::Global, (3i64,)).unwrap();
        })
        .unwrap()
        .detach(),
    );
    let l = log.clone();
    let _inner = hub
        .listen("Inner", Source::Global, move |n: i64| {
            push(&l, format!("inner {n}"))
        })
        .unwrap();
    hub.send_str("Outer", Source::Global, ()).unwrap();
    hub.send_str("Outer", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["outer", "inner 3"]);
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

// ----- keys ----------------------------------------------------------------------

#[test]
fn bad_keys_are_errors_naming_text_and_position() {
    let hub = Hub::new();
    for bad in ["", "A..B", "Player Hurt", "x.", "Ünïcode"] {
        let err = hub.send_str(bad, Source::Global, ()).unwrap_err();
        assert!(matches!(err, HubError::Key(_)), "{bad:?}: {err}");
        assert!(hub.listen(bad, Source::Global, || {}).is_err());
    }
    let text = hub.key("Player Hurt").unwrap_err().to_string();
    assert!(
        text.contains("Player Hurt") && text.contains("byte 6"),
        "{text}"
    );
}

#[test]
fn baked_key_and_string_key_reach_the_same_listeners() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen("K", Source::Global, move |n: i64| push(&l, n.to_string()))
        .unwrap();
    let key = hub.key("K").unwrap();
    hub.send(key, Source::Global, (1i64,)).unwrap();
    hub.send_str("K", Source::Global, (2i64,)).unwrap();
    assert_eq!(taken(&log), ["1", "2"]);
}

// ----- the signature table ---------------------------------------------------

#[test]
fn first_use_records_types_and_call_site() {
    let hub = Hub::new();
    hub.send_str("Player.Hurt", Source::Global, (2.5f64, 7i64, true, "x"))
        .unwrap();
    let table = hub.table();
    let entry = table.get("Player.Hurt").unwrap();
    let types: Vec<String> = entry.params.iter().map(|p| p.ty.to_string()).collect();
    assert_eq!(types, ["float", "int", "bool", "string"]);
    assert_eq!(entry.kind, Kind::Event);
    let site = entry.sites.iter().next().unwrap();
    assert!(site.file.ends_with("hub_core.rs"));
}

#[test]
fn declared_doc_and_kind_are_kept() {
    let hub = Hub::new();
    hub.declare(
        "Boot.Done",
        KeyDecl::event()
            .kind(Kind::Store)
            .doc("The game finished booting"),
    )
    .unwrap();
    let t: SignatureTable = hub.table_snapshot();
    let e = t.get("Boot.Done").unwrap();
    assert_eq!(e.doc, "The game finished booting");
    assert_eq!(e.kind, Kind::Store);
    assert!(e.declaration_site().is_some());
}
