//! Sources and tiers: a send from an object reaches the object's, its
//! world's and the global listeners; a world send its world and the global
//! ones; other worlds and objects hear nothing. A named source (object +
//! name) is its own source: its listeners, stores and partial matches are
//! its own, and it goes with its object or world.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{Hub, HubError, ListenOptions, Owner, Reply, Source, Value};
use gantry_test_support::log::{Log, log, pusher, taken};

fn push(log: &Log, s: impl Into<String>) {
    log.borrow_mut().push(s.into());
}

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

/// a composite source's records go with its object or
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

fn ints(log: &Log, name: &'static str) -> impl Fn(i64) + 'static {
    let log = log.clone();
    move |n: i64| log.borrow_mut().push(format!("{name} {n}"))
}

/// One name on one object is one source; the same name on another object,
/// or another name on the same object, is a different one.
#[test]
fn named_source_identity_is_object_and_name() {
    let hub = Hub::new();
    let world = hub.create_world();
    let (a, b) = (hub.spawn(world).unwrap(), hub.spawn(world).unwrap());
    assert_eq!(hub.named(a, "hand"), hub.named(a, "hand"));
    assert_ne!(hub.named(a, "hand"), hub.named(b, "hand"));
    assert_ne!(hub.named(a, "hand"), hub.named(a, "foot"));
    assert_ne!(hub.named(a, "hand"), Source::Object(a));
    let log = log();
    let _h = [
        hub.listen("P", hub.named(a, "hand"), pusher(&log, "a/hand"))
            .unwrap(),
        hub.listen("P", hub.named(b, "hand"), pusher(&log, "b/hand"))
            .unwrap(),
        hub.listen("P", hub.named(a, "foot"), pusher(&log, "a/foot"))
            .unwrap(),
    ];
    let delivered = hub.send_str("P", hub.named(a, "hand"), ()).unwrap();
    assert_eq!(taken(&log), ["a/hand"]);
    assert_eq!(delivered.listeners, 1);
    assert_eq!(hub.source_name(hub.named(a, "hand")), format!("{a}/hand"));
}

/// "A send on an object reaches that object's listeners, ... never the other
/// way round": an object send does not reach its named sources' listeners.
#[test]
fn object_send_does_not_reach_named_listeners_of_that_object() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let _h = hub
        .listen("P", hub.named(obj, "n"), pusher(&log, "named"))
        .unwrap();
    hub.send_str("P", obj, ()).unwrap();
    hub.send_str("P", world, ()).unwrap();
    hub.send_str("P", Source::Global, ()).unwrap();
    assert!(taken(&log).is_empty());
}

/// Partial match and `order` work on a named source and across its tiers
/// ("respected across the three tiers"; "a partial listener on `Inv` hears
/// `Inv.Items`").
#[test]
fn named_partial_listeners_and_order_across_tiers() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let named = hub.named(obj, "bag");
    let log = log();
    let _h = [
        hub.listen_with(
            "Inv",
            named,
            ListenOptions::new().partial().order(5),
            pusher(&log, "named partial Inv o5"),
        )
        .unwrap(),
        hub.listen_with(
            "Inv.Items",
            named,
            ListenOptions::new().order(0),
            pusher(&log, "named exact o0"),
        )
        .unwrap(),
        hub.listen_with(
            "Inv.Items",
            Source::Global,
            ListenOptions::new().order(-3),
            pusher(&log, "global o-3"),
        )
        .unwrap(),
        hub.listen_with(
            "Inv.Items",
            world,
            ListenOptions::new().order(2),
            pusher(&log, "world o2"),
        )
        .unwrap(),
        // Exact on the parent: never hears the child.
        hub.listen("Inv", named, pusher(&log, "named exact Inv"))
            .unwrap(),
        // Partial on another name of the same object: not this source.
        hub.listen_with(
            "Inv",
            hub.named(obj, "other"),
            ListenOptions::new().partial(),
            pusher(&log, "other partial"),
        )
        .unwrap(),
    ];
    hub.send_str("Inv.Items", named, ()).unwrap();
    assert_eq!(
        taken(&log),
        [
            "global o-3",
            "named exact o0",
            "world o2",
            "named partial Inv o5"
        ]
    );
}

/// Store / Once on a named source: kept per (key, source), replayed to a
/// late listener on that source only; Once consumed by its first delivery.
#[test]
fn named_store_replays_to_late_listener_and_once_is_consumed() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let (left, right) = (hub.named(obj, "left"), hub.named(obj, "right"));
    let stat = hub.key("Hand.Stat").unwrap();
    let pulse = hub.key("Hand.Pulse").unwrap();
    assert_eq!(hub.store(stat, left, (7i64,)).unwrap().listeners, 0);
    assert_eq!(hub.once(pulse, left, (1i64,)).unwrap().listeners, 0);
    let log = log();
    let mut handles = Vec::new();
    for (tag, source) in [
        ("obj", Source::Object(obj)),
        ("right", right),
        ("world", world.into()),
    ] {
        let _ = tag;
        handles.push(
            hub.listen("Hand.Stat", source, ints(&log, "wrong"))
                .unwrap(),
        );
        handles.push(
            hub.listen("Hand.Pulse", source, ints(&log, "wrong"))
                .unwrap(),
        );
    }
    assert!(taken(&log).is_empty(), "replayed to a different source");
    handles.push(hub.listen("Hand.Stat", left, ints(&log, "stat1")).unwrap());
    handles.push(hub.listen("Hand.Stat", left, ints(&log, "stat2")).unwrap());
    handles.push(
        hub.listen("Hand.Pulse", left, ints(&log, "pulse1"))
            .unwrap(),
    );
    handles.push(
        hub.listen("Hand.Pulse", left, ints(&log, "pulse2"))
            .unwrap(),
    );
    assert_eq!(taken(&log), ["stat1 7", "stat2 7", "pulse1 1"]);
    assert_eq!(
        hub.stored(stat, left).as_deref(),
        Some(&[Value::Int(7)][..])
    );
    assert!(hub.stored(pulse, left).is_none());
    assert!(hub.stored(stat, right).is_none());
}

/// Explicit removal of what a named source stores removes that (key, name)
/// only.
#[test]
fn named_remove_stored_is_per_key_and_name() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let (left, right) = (hub.named(obj, "left"), hub.named(obj, "right"));
    let key = hub.key("Hand.Item").unwrap();
    let other = hub.key("Hand.Other").unwrap();
    hub.store(key, left, ("sword",)).unwrap();
    hub.store(key, right, ("shield",)).unwrap();
    hub.store(other, left, ("ring",)).unwrap();
    hub.store(key, obj, ("body",)).unwrap();
    assert!(hub.remove_stored(key, left));
    assert!(!hub.remove_stored(key, left));
    assert!(hub.stored(key, left).is_none());
    assert!(hub.stored(key, right).is_some());
    assert!(hub.stored(other, left).is_some());
    assert!(hub.stored(key, obj).is_some());
    let got = Rc::new(RefCell::new(Vec::<String>::new()));
    let g = got.clone();
    let _h = hub
        .listen("Hand.Item", left, move |s: String| g.borrow_mut().push(s))
        .unwrap();
    assert!(got.borrow().is_empty());
}

/// "Destroying an object drops everything it owns and everything sourced
/// from it (listeners, stored messages, named sources)": every name, every
/// key, partial listeners included; another object's same names survive and
/// still work afterwards.
#[test]
fn destroy_wipes_every_named_source_of_the_object_only() {
    let hub = Hub::new();
    let world = hub.create_world();
    let (a, b) = (hub.spawn(world).unwrap(), hub.spawn(world).unwrap());
    let log = log();
    for (obj, tag) in [(a, "a"), (b, "b")] {
        for name in ["one", "two", "three"] {
            let src = hub.named(obj, name);
            hub.listen("K.X", src, pusher(&log, if tag == "a" { "a" } else { "b" }))
                .unwrap()
                .detach();
            hub.listen_with(
                "K",
                src,
                ListenOptions::new().partial(),
                pusher(&log, if tag == "a" { "a-partial" } else { "b-partial" }),
            )
            .unwrap()
            .detach();
            hub.store(hub.key("K.S").unwrap(), src, (1i64,)).unwrap();
            hub.store(hub.key("K.X").unwrap(), src, ()).unwrap();
        }
    }
    taken(&log);
    assert_eq!(hub.listener_count(), 12);
    // Warm the send path on a's names so any cached route exists.
    hub.send_str("K.X", hub.named(a, "one"), ()).unwrap();
    taken(&log);
    hub.destroy(a).unwrap();
    assert_eq!(hub.listener_count(), 6);
    for name in ["one", "two", "three"] {
        assert!(
            hub.stored(hub.key("K.S").unwrap(), hub.named(a, name))
                .is_none()
        );
        assert!(
            hub.stored(hub.key("K.X").unwrap(), hub.named(a, name))
                .is_none()
        );
        assert!(
            hub.stored(hub.key("K.S").unwrap(), hub.named(b, name))
                .is_some()
        );
    }
    hub.send_str("K.X", hub.named(b, "two"), ()).unwrap();
    assert_eq!(taken(&log), ["b", "b-partial"]);
    // A sends from a dead object's name calls none of its (dropped) listeners.
    let _ = hub.send_str("K.X", hub.named(a, "one"), ());
    assert!(!taken(&log).iter().any(|l| l.starts_with("a")));
}

/// Destroying a world destroys its objects, so their named sources'
/// listeners and stores go too; another world's stay.
#[test]
fn destroy_world_wipes_named_sources_of_its_objects() {
    let hub = Hub::new();
    let (w1, w2) = (hub.create_world(), hub.create_world());
    let (a, b) = (hub.spawn(w1).unwrap(), hub.spawn(w2).unwrap());
    let key = hub.key("Slot.State").unwrap();
    let log = log();
    for (obj, tag) in [(a, "a"), (b, "b")] {
        let src = hub.named(obj, "slot");
        hub.listen("Slot.State", src, ints(&log, tag))
            .unwrap()
            .detach();
        hub.store(key, src, (3i64,)).unwrap();
    }
    assert_eq!(taken(&log), ["a 3", "b 3"]);
    hub.destroy_world(w1).unwrap();
    assert!(!hub.is_alive(a));
    assert_eq!(hub.listener_count(), 1);
    assert!(hub.stored(key, hub.named(a, "slot")).is_none());
    assert!(hub.stored(key, hub.named(b, "slot")).is_some());
    hub.send_str("Slot.State", hub.named(b, "slot"), (4i64,))
        .unwrap();
    assert_eq!(taken(&log), ["b 4"]);
}

/// A stored message or a listener for a named source of a destroyed object
/// would never be wiped (the wipe has happened): refused, with an error that
/// names the object, and nothing is kept.
#[test]
fn named_source_of_destroyed_object_is_refused_with_an_error_naming_it() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let named = hub.named(obj, "slot");
    hub.destroy(obj).unwrap();
    let key = hub.key("Slot.State").unwrap();
    let stored = hub.store(key, named, (1i64,));
    assert!(
        matches!(stored, Err(HubError::NoSuchObject(o)) if o == obj),
        "{stored:?}"
    );
    let text = stored.unwrap_err().to_string();
    assert!(text.contains(&obj.to_string()), "{text}");
    assert!(matches!(
        hub.once(key, named, (1i64,)),
        Err(HubError::NoSuchObject(_))
    ));
    assert!(hub.stored(key, named).is_none());
    // A name first used after the object is gone is refused the same way.
    let late = hub.named(obj, "never_used_before");
    assert!(matches!(
        hub.listen("Slot.State", late, || {}),
        Err(HubError::NoSuchObject(_))
    ));
    assert!(matches!(
        hub.store(key, late, (1i64,)),
        Err(HubError::NoSuchObject(_))
    ));
    assert_eq!(hub.listener_count(), 0);
}

/// A send or a request from a named source (or the object) after the object
/// is gone: never a panic, and no dropped listener runs.
#[test]
fn send_and_request_from_destroyed_object_or_its_name_never_panic() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let named = hub.named(obj, "n");
    let log = log();
    hub.listen("P", named, pusher(&log, "named"))
        .unwrap()
        .detach();
    hub.listen("P", obj, pusher(&log, "object"))
        .unwrap()
        .detach();
    hub.destroy(obj).unwrap();
    let _ = hub.send_str("P", named, ());
    let _ = hub.send_str("P", obj, ());
    let key = hub.key("P").unwrap();
    let _ = hub.request(key, named, (), |_r: Reply<'_>| {});
    let got = taken(&log);
    assert!(
        !got.iter().any(|l| l == "named" || l == "object"),
        "{got:?}"
    );
    assert!(!hub.remove_stored(key, named));
}

/// Owner = the object: a global listener owned by the object goes with the
/// object, like the named source's own listeners.
#[test]
fn listener_owned_by_object_of_a_named_source_goes_with_it() {
    let hub = Hub::new();
    let world = hub.create_world();
    let (obj, keeper) = (hub.spawn(world).unwrap(), hub.spawn(world).unwrap());
    let named = hub.named(obj, "n");
    let log = log();
    // Watching another object's name, owned by obj.
    hub.listen_with(
        "P",
        hub.named(keeper, "n"),
        ListenOptions::new().owner(Owner::Object(obj)),
        pusher(&log, "owned"),
    )
    .unwrap()
    .detach();
    // Watching obj's name, owned by keeper: still goes with the source.
    hub.listen_with(
        "P",
        named,
        ListenOptions::new().owner(Owner::Object(keeper)),
        pusher(&log, "sourced"),
    )
    .unwrap()
    .detach();
    hub.destroy(obj).unwrap();
    assert_eq!(hub.listener_count(), 0);
    hub.send_str("P", hub.named(keeper, "n"), ()).unwrap();
    assert!(taken(&log).is_empty());
}

/// A named listener that destroys its own object while being called: the
/// hub stays consistent and the named source is wiped afterwards.
#[test]
fn named_listener_destroying_its_object_mid_dispatch_stays_consistent() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let named = hub.named(obj, "n");
    let log = log();
    let h2 = hub.clone();
    let l = log.clone();
    hub.listen("P", named, move || {
        l.borrow_mut().push("first".into());
        h2.destroy(obj).unwrap();
    })
    .unwrap()
    .detach();
    hub.listen("P", world, pusher(&log, "world"))
        .unwrap()
        .detach();
    hub.send_str("P", named, ()).unwrap();
    let got = taken(&log);
    assert_eq!(got.first().map(String::as_str), Some("first"), "{got:?}");
    assert_eq!(hub.listener_count(), 1);
    assert!(matches!(hub.destroy(obj), Err(HubError::NoSuchObject(_))));
}

/// Requests on a named source: a named listener answers; a plain object
/// listener does not hear it.
#[test]
fn request_on_named_source_is_answered_by_its_listener() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let named = hub.named(obj, "shop");
    let _a = hub
        .listen_message("Shop.Price", named, ListenOptions::new(), |m| {
            if let Some(r) = m.responder {
                r.respond((42i64,));
            }
        })
        .unwrap();
    let _b = hub
        .listen_message("Shop.Price", obj, ListenOptions::new(), |m| {
            if let Some(r) = m.responder {
                r.respond((0i64,));
            }
        })
        .unwrap();
    let answer = Rc::new(RefCell::new(None));
    let a = answer.clone();
    let key = hub.key("Shop.Price").unwrap();
    hub.request(key, named, (), move |r| {
        if let Reply::Answer(v) = r {
            *a.borrow_mut() = Some(v.to_vec());
        }
    })
    .unwrap();
    assert_eq!(*answer.borrow(), Some(vec![Value::Int(42)]));
}

/// A typed (baked) send on a named source goes to the named listener and
/// only there, also after the lane was built and the listener set changed.
#[test]
fn typed_send_on_named_source_follows_listener_changes() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let (left, right) = (hub.named(obj, "left"), hub.named(obj, "right"));
    let key = hub.typed_key::<(i64,)>("Hp").unwrap();
    let log = log();
    let l = hub.listen("Hp", left, ints(&log, "left")).unwrap();
    let _r = hub.listen("Hp", right, ints(&log, "right")).unwrap();
    for n in 0..3 {
        hub.send(key, left, (n,)).unwrap();
    }
    assert_eq!(taken(&log), ["left 0", "left 1", "left 2"]);
    let _w = hub.listen("Hp", world, ints(&log, "world")).unwrap();
    hub.send(key, left, (9,)).unwrap();
    assert_eq!(taken(&log), ["left 9", "world 9"]);
    drop(l);
    hub.send(key, left, (10,)).unwrap();
    hub.send(key, right, (11,)).unwrap();
    assert_eq!(taken(&log), ["world 10", "right 11", "world 11"]);
}

/// Bad input never panics: empty, huge, NUL, non-ASCII, dotted and
/// key-like names are just names, each its own source, and shown back.
#[test]
fn odd_names_never_panic_and_stay_distinct() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let huge = "x".repeat(1 << 20);
    let names: Vec<String> = vec![
        String::new(),
        " ".into(),
        "\0".into(),
        "a.b".into(),
        "A..B".into(),
        "äöü/名前\n".into(),
        "%s%d{}".into(),
        huge.clone(),
    ];
    let key = hub.key("Odd").unwrap();
    let log = log();
    let mut handles = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let src = hub.named(obj, name);
        assert!(hub.source_name(src).ends_with(name.as_str()));
        hub.store(key, src, (i as i64,)).unwrap();
        let l = log.clone();
        let tag = i;
        handles.push(
            hub.listen("Odd", src, move |n: i64| {
                l.borrow_mut().push(format!("{tag}:{n}"))
            })
            .unwrap(),
        );
    }
    let expect: Vec<String> = (0..names.len()).map(|i| format!("{i}:{i}")).collect();
    assert_eq!(taken(&log), expect);
    hub.send_str("Odd", hub.named(obj, ""), (100i64,)).unwrap();
    assert_eq!(taken(&log), ["0:100"]);
    drop(handles);
    hub.destroy(obj).unwrap();
    for name in &names {
        assert!(hub.stored(key, hub.named(obj, name)).is_none());
    }
}
