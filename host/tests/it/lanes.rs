//! Delivery lanes and typed keys: a key sent again and again keeps its
//! merged delivery list (and its lane tables), and a `TypedKey` hands its
//! tuple straight to typed closures. Every rule of the ordinary dispatch
//! holds on the second, third... send exactly as on the first.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gantry_host::{
    Hub, HubError, KeyDecl, ListenOptions, ListenerHandle, ObjectId, Owner, Serde, Source,
    TraceEvent, Type, TypedKey,
};
use gantry_test_support::log::{Log, log, taken};

use crate::support::collections::{KEY, hub, items};

fn logger(log: &Log, name: &'static str) -> impl Fn(i64, f64) + 'static {
    let log = log.clone();
    move |hp, dmg| log.borrow_mut().push(format!("{name} {hp} {dmg}"))
}

/// A global listener on `Player.Hurt` with `options`, logging as `name`.
fn hurt_listener(
    hub: &Hub,
    log: &Log,
    name: &'static str,
    options: ListenOptions,
) -> ListenerHandle {
    hub.listen_with("Player.Hurt", Source::Global, options, logger(log, name))
        .unwrap()
}

/// A global message listener on `Player.Hurt`, logging the values it gets.
fn message_listener(hub: &Hub, log: &Log) -> ListenerHandle {
    let log = log.clone();
    hub.listen_message(
        "Player.Hurt",
        Source::Global,
        ListenOptions::new(),
        move |m| log.borrow_mut().push(format!("message {:?}", m.args)),
    )
    .unwrap()
}

fn hurt(hub: &Hub) -> TypedKey<(i64, f64)> {
    hub.typed_key::<(i64, f64)>("Player.Hurt").unwrap()
}

#[test]
fn lane_listener_added_between_sends_is_heard() {
    let hub = Hub::new();
    let log = log();
    let _a = hub
        .listen("Player.Hurt", Source::Global, logger(&log, "a"))
        .unwrap();
    let key = hurt(&hub);
    hub.send(key, Source::Global, (1, 0.5)).unwrap();
    hub.send(key, Source::Global, (2, 0.5)).unwrap();
    let _b = hub
        .listen("Player.Hurt", Source::Global, logger(&log, "b"))
        .unwrap();
    hub.send(key, Source::Global, (3, 0.5)).unwrap();
    hub.send(key.key(), Source::Global, (4, 0.5)).unwrap();
    assert_eq!(
        taken(&log),
        [
            "a 1 0.5", "a 2 0.5", "a 3 0.5", "b 3 0.5", "a 4 0.5", "b 4 0.5"
        ]
    );
}

#[test]
fn lane_partial_listener_added_on_an_ancestor_is_heard() {
    let hub = Hub::new();
    let log = log();
    let _a = hub
        .listen("Player.Hurt", Source::Global, logger(&log, "a"))
        .unwrap();
    let key = hurt(&hub);
    hub.send(key, Source::Global, (1, 0.5)).unwrap();
    hub.send(key, Source::Global, (1, 0.5)).unwrap();
    taken(&log);
    let l = log.clone();
    let _p = hub
        .listen_with(
            "Player",
            Source::Global,
            ListenOptions::new().partial().order(-1),
            move |hp: i64| l.borrow_mut().push(format!("player {hp}")),
        )
        .unwrap();
    hub.send(key, Source::Global, (2, 0.5)).unwrap();
    assert_eq!(taken(&log), ["player 2", "a 2 0.5"]);
}

#[test]
fn lane_order_times_and_unlisten_hold_on_repeated_typed_sends() {
    let hub = Hub::new();
    let log = log();
    let _late = hurt_listener(&hub, &log, "late", ListenOptions::new().order(5));
    let _twice = hurt_listener(&hub, &log, "twice", ListenOptions::new().times(2));
    let early = hurt_listener(&hub, &log, "early", ListenOptions::new().order(-5));
    let key = hurt(&hub);
    for hp in 1..=3 {
        let delivered = hub.send(key, Source::Global, (hp, 0.0)).unwrap();
        assert_eq!(delivered.listeners, if hp <= 2 { 3 } else { 2 });
    }
    hub.unlisten(early.id());
    hub.send(key, Source::Global, (4, 0.0)).unwrap();
    assert_eq!(
        taken(&log),
        [
            "early 1 0",
            "twice 1 0",
            "late 1 0",
            "early 2 0",
            "twice 2 0",
            "late 2 0",
            "early 3 0",
            "late 3 0",
            "late 4 0"
        ]
    );
}

#[test]
fn lane_listener_removed_during_dispatch_is_not_called_and_one_added_waits() {
    let hub = Hub::new();
    let log = log();
    let key = hurt(&hub);
    let victim: Rc<Cell<Option<gantry_host::ListenerId>>> = Rc::new(Cell::new(None));
    let (h, l, v) = (hub.clone(), log.clone(), victim.clone());
    let added = Rc::new(RefCell::new(Vec::new()));
    let added2 = added.clone();
    let _first = hub
        .listen("Player.Hurt", Source::Global, move |hp: i64, _d: f64| {
            l.borrow_mut().push(format!("first {hp}"));
            if let Some(id) = v.take() {
                h.unlisten(id);
            }
            let l2 = l.clone();
            added2.borrow_mut().push(
                h.listen("Player.Hurt", Source::Global, move |hp: i64, _d: f64| {
                    l2.borrow_mut().push(format!("added {hp}"))
                })
                .unwrap(),
            );
        })
        .unwrap();
    let second = hub
        .listen("Player.Hurt", Source::Global, logger(&log, "second"))
        .unwrap();
    hub.send(key, Source::Global, (1, 0.0)).unwrap();
    hub.send(key, Source::Global, (2, 0.0)).unwrap();
    victim.set(Some(second.detach()));
    hub.send(key, Source::Global, (3, 0.0)).unwrap();
    assert_eq!(
        taken(&log),
        [
            "first 1",
            "second 1 0",
            "first 2",
            "second 2 0",
            "added 2",
            "first 3",
            "added 3",
            "added 3"
        ]
    );
    assert_eq!(added.borrow().len(), 3);
}

#[test]
fn lane_owner_gone_drops_the_listener_before_the_next_typed_send() {
    let hub = Hub::new();
    let log = log();
    let owner = Rc::new(());
    let _a = hurt_listener(
        &hub,
        &log,
        "owned",
        ListenOptions::new().owner(Owner::of(&owner)),
    );
    let key = hurt(&hub);
    hub.send(key, Source::Global, (1, 0.0)).unwrap();
    hub.send(key, Source::Global, (2, 0.0)).unwrap();
    drop(owner);
    assert_eq!(
        hub.send(key, Source::Global, (3, 0.0)).unwrap().listeners,
        0
    );
    assert_eq!(hub.listener_count(), 0);
    assert_eq!(taken(&log), ["owned 1 0", "owned 2 0"]);
}

#[test]
fn lane_unlistened_closure_is_dropped_at_once() {
    let hub = Hub::new();
    let key = hurt(&hub);
    let held = Rc::new(());
    let (h1, h2) = (held.clone(), held.clone());
    let exact = hub
        .listen("Player.Hurt", Source::Global, move |_: i64, _: f64| {
            let _ = &h1;
        })
        .unwrap();
    let partial = hub
        .listen_with(
            "Player",
            Source::Global,
            ListenOptions::new().partial(),
            move |_: i64| {
                let _ = &h2;
            },
        )
        .unwrap();
    for _ in 0..3 {
        hub.send(key, Source::Global, (1, 0.0)).unwrap();
        hub.send(key.key(), Source::Global, (1, 0.0)).unwrap();
    }
    assert_eq!(Rc::strong_count(&held), 3);
    drop(exact);
    assert_eq!(Rc::strong_count(&held), 2, "the key's lane let go of it");
    drop(partial);
    assert_eq!(
        Rc::strong_count(&held),
        1,
        "lanes under `Player` let go of it"
    );
}

#[test]
fn lane_destroyed_object_listeners_are_not_called() {
    let hub = Hub::new();
    let log = log();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let _w = hub
        .listen("Player.Hurt", world, logger(&log, "world"))
        .unwrap();
    let _o = hub
        .listen("Player.Hurt", obj, logger(&log, "object"))
        .unwrap();
    let key = hurt(&hub);
    hub.send(key, obj, (1, 0.0)).unwrap();
    hub.send(key, world, (2, 0.0)).unwrap();
    hub.destroy(obj).unwrap();
    hub.send(key, world, (3, 0.0)).unwrap();
    // Equal order across tiers: registration order (the world's came first).
    assert_eq!(
        taken(&log),
        ["world 1 0", "object 1 0", "world 2 0", "world 3 0"]
    );
}

#[test]
fn lane_many_sources_of_one_key_each_reach_their_tiers() {
    let hub = Hub::new();
    let world = hub.create_world();
    let objects: Vec<_> = (0..10).map(|_| hub.spawn(world).unwrap()).collect();
    let heard = Rc::new(RefCell::new(Vec::new()));
    let _handles: Vec<_> = objects
        .iter()
        .map(|&obj| {
            let heard = heard.clone();
            hub.listen("Tick", obj, move |n: i64| heard.borrow_mut().push((obj, n)))
                .unwrap()
        })
        .collect();
    let key = hub.typed_key::<(i64,)>("Tick").unwrap();
    for round in 0..3 {
        for &obj in &objects {
            hub.send(key, obj, (round,)).unwrap();
        }
    }
    let expected: Vec<_> = (0..3)
        .flat_map(|round| objects.iter().map(move |&obj| (obj, round)))
        .collect();
    assert_eq!(*heard.borrow(), expected);
}

#[test]
fn typed_key_reaches_prefix_and_message_listeners_through_the_ordinary_path() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _prefix = hub
        .listen("Player.Hurt", Source::Global, move |hp: i64| {
            l.borrow_mut().push(format!("prefix {hp}"))
        })
        .unwrap();
    let _message = message_listener(&hub, &log);
    let key = hurt(&hub);
    for hp in 1..=2 {
        assert_eq!(
            hub.send(key, Source::Global, (hp, 0.5)).unwrap().listeners,
            2
        );
    }
    assert_eq!(
        taken(&log),
        [
            "prefix 1",
            "message [Int(1), Float(0.5)]",
            "prefix 2",
            "message [Int(2), Float(0.5)]"
        ]
    );
}

#[test]
fn typed_key_send_against_a_declared_signature_it_contradicts_is_aborted() {
    let hub = Hub::new();
    let log = log();
    let _a = hub
        .listen("Player.Hurt", Source::Global, logger(&log, "a"))
        .unwrap();
    let key = hurt(&hub);
    hub.send(key, Source::Global, (1, 0.5)).unwrap();
    hub.send(key, Source::Global, (2, 0.5)).unwrap();
    // The key is declared anew while the lane is warm: the typed path must
    // check again, and refuse.
    hub.edit_table(|t| {
        t.declare(
            "Player.Hurt",
            KeyDecl::event()
                .param("who", Type::String)
                .param("dmg", Type::Float),
            None,
        )
        .unwrap()
    });
    let err = hub.send(key, Source::Global, (3, 0.5)).unwrap_err();
    match err {
        HubError::Mismatch { key, mismatch } => {
            assert_eq!(key, "Player.Hurt");
            assert_eq!(mismatch.position, 0);
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
    assert_eq!(taken(&log), ["a 1 0.5", "a 2 0.5"]);
}

#[test]
fn typed_key_records_each_call_site_once() {
    let hub = Hub::new();
    let _a = hub
        .listen("Player.Hurt", Source::Global, |_: i64, _: f64| {})
        .unwrap();
    let key = hurt(&hub);
    for _ in 0..3 {
        hub.send(key, Source::Global, (1, 0.5)).unwrap();
        hub.send(key, Source::Global, (2, 0.5)).unwrap();
    }
    let table = hub.table_snapshot();
    let sends = table.keys["Player.Hurt"]
        .sites
        .iter()
        .filter(|s| s.role == gantry_host::Role::Send)
        .count();
    assert_eq!(sends, 2, "two send sites in this test, each recorded once");
}

#[test]
fn typed_key_sends_are_traced_when_tracing_is_on() {
    let hub = Hub::new();
    let _a = hub
        .listen("Player.Hurt", Source::Global, |_: i64, _: f64| {})
        .unwrap();
    let key = hurt(&hub);
    hub.send(key, Source::Global, (1, 0.5)).unwrap();
    hub.send(key, Source::Global, (1, 0.5)).unwrap();
    let events = Rc::new(Cell::new(0));
    let e = events.clone();
    hub.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
        if matches!(event, TraceEvent::Called { .. }) {
            e.set(e.get() + 1);
        }
    })));
    hub.send(key, Source::Global, (1, 0.5)).unwrap();
    assert_eq!(events.get(), 1);
}

#[test]
fn lane_requests_hand_each_listener_its_responder_every_time() {
    let hub = Hub::new();
    let _doubler = hub
        .listen_message("Math.Double", Source::Global, ListenOptions::new(), |m| {
            let n = m.args[0].as_int().unwrap();
            if let Some(responder) = m.responder {
                responder.respond((n * 2,));
            }
        })
        .unwrap();
    let key = hub.key("Math.Double").unwrap();
    let replies = Rc::new(RefCell::new(Vec::new()));
    for n in 1..=3 {
        let r = replies.clone();
        hub.request(key, Source::Global, (n,), move |reply| {
            if let gantry_host::Reply::Answer(values) = reply {
                r.borrow_mut().push(values[0].as_int().unwrap());
            }
        })
        .unwrap();
        // A send between requests shares the lane and gets no responder.
        assert_eq!(hub.send(key, Source::Global, (n,)).unwrap().listeners, 1);
    }
    assert_eq!(*replies.borrow(), [2, 4, 6]);
}

#[test]
fn send_by_text_of_fixed_kinds_behaves_as_a_typed_key() {
    let hub = Hub::new();
    let log = log();
    let _a = hurt_listener(&hub, &log, "a", ListenOptions::new().order(1));
    let _once = hurt_listener(&hub, &log, "once", ListenOptions::new().times(1));
    for hp in 1..=3 {
        hub.send("Player.Hurt", Source::Global, (hp, 0.5)).unwrap();
    }
    assert_eq!(taken(&log), ["once 1 0.5", "a 1 0.5", "a 2 0.5", "a 3 0.5"]);
    // The first send recorded the signature; a contradicting one is refused.
    let err = hub
        .send("Player.Hurt", Source::Global, ("nine".to_string(), 0.5))
        .unwrap_err();
    assert!(matches!(err, HubError::Mismatch { .. }), "{err:?}");
    assert!(taken(&log).is_empty());
}

#[test]
fn send_by_text_of_fixed_kinds_names_a_bad_key() {
    let hub = Hub::new();
    let err = hub
        .send("Player..Hurt", Source::Global, (1i64,))
        .unwrap_err()
        .to_string();
    assert!(err.contains("Player..Hurt"), "{err}");
}

#[test]
fn send_by_text_of_fixed_kinds_reaches_message_listeners() {
    let hub = Hub::new();
    let log = log();
    let _message = message_listener(&hub, &log);
    for hp in 1..=2 {
        hub.send("Player.Hurt", Source::Global, (hp, 0.5)).unwrap();
    }
    assert_eq!(
        taken(&log),
        [
            "message [Int(1), Float(0.5)]",
            "message [Int(2), Float(0.5)]"
        ]
    );
}

// Lane tables

/// The collection listeners of a table send, down a lane and through
/// gathered lists (a key sent from more sources than it keeps lanes for),
/// in one delivery order: `order`, then the key's own listeners (any
/// tier) by registration, then partial ones above; an exact listener of
/// the parent never.
#[test]
fn lane_tables_and_gathered_lists_deliver_in_the_same_order() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let objects: Vec<ObjectId> = (0..5).map(|_| hub.spawn(world).unwrap()).collect();
    let log = log();
    let mut handles = Vec::new();
    let mut listen = |on: &str, scope: Source, options: ListenOptions, name: &'static str| {
        let l = log.clone();
        handles.push(
            hub.listen_table(on, scope, options, move |_, _| {
                l.borrow_mut().push(name.to_owned())
            })
            .unwrap(),
        );
    };
    listen(KEY, Source::Global, ListenOptions::default(), "global-a");
    listen(
        KEY,
        Source::World(world),
        ListenOptions::default().order(-1),
        "world",
    );
    listen(
        "Inv",
        Source::Global,
        ListenOptions::default().partial(),
        "parent-partial",
    );
    listen(
        "Inv",
        Source::Global,
        ListenOptions::default(),
        "parent-exact",
    );
    listen(
        KEY,
        Source::Global,
        ListenOptions::default().order(1),
        "global-b",
    );
    listen(
        KEY,
        Source::World(world),
        ListenOptions::default(),
        "world-c",
    );
    let expected = ["world", "global-a", "world-c", "parent-partial", "global-b"];
    // Records the key's types.
    hub.send(key, Source::Object(objects[0]), (Serde(items(2)),))
        .unwrap();
    assert_eq!(taken(&log), expected);
    for (round, object) in objects.iter().enumerate() {
        hub.send(key, Source::Object(*object), (Serde(items(2)),))
            .unwrap();
        assert_eq!(taken(&log), expected, "from object {round}");
    }
    hub.send(key, Source::Object(objects[0]), (Serde(items(2)),))
        .unwrap();
    assert_eq!(taken(&log), expected, "down the lane again");
}

/// A lane is a snapshot: a table listener added by a message listener
/// during a send is heard from the next send on; one unlistened during it
/// is not called; `times` counts sends; an owner destroyed by an earlier
/// listener takes its listener out before it is called.
#[test]
fn lane_tables_follow_listeners_coming_and_going_during_sends() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let owner = hub.spawn(world).unwrap();
    let log = log();
    let added: Rc<RefCell<Vec<ListenerHandle>>> = Rc::default();
    let doomed: Rc<RefCell<Option<ListenerHandle>>> = Rc::default();

    let (h, l, a) = (hub.clone(), log.clone(), added.clone());
    let _first = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default().order(-2),
            move |_, _| {
                l.borrow_mut().push("first".into());
                if a.borrow().is_empty() {
                    let l = l.clone();
                    let handle = h
                        .listen_table(
                            KEY,
                            Source::Global,
                            ListenOptions::default(),
                            move |_, _| l.borrow_mut().push("added".into()),
                        )
                        .unwrap();
                    a.borrow_mut().push(handle);
                }
            },
        )
        .unwrap();
    let (h, l, d) = (hub.clone(), log.clone(), doomed.clone());
    let _killer = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default().order(-1),
            move |_, _| {
                l.borrow_mut().push("killer".into());
                d.borrow_mut().take();
                if h.is_alive(owner) {
                    h.destroy(owner).unwrap();
                }
            },
        )
        .unwrap();
    let l = log.clone();
    *doomed.borrow_mut() = Some(
        hub.listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |_, _| l.borrow_mut().push("doomed".into()),
        )
        .unwrap(),
    );
    let l = log.clone();
    let _owned = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default().owner(Owner::Object(owner)),
            move |_, _| l.borrow_mut().push("owned".into()),
        )
        .unwrap();
    let l = log.clone();
    let _twice = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default().times(2).order(5),
            move |_, _| l.borrow_mut().push("twice".into()),
        )
        .unwrap();
    let before = hub.listener_count();
    hub.send(key, Source::Global, (Serde(items(1)),)).unwrap();
    assert_eq!(taken(&log), ["first", "killer", "twice"]);
    // The added listener in, the doomed and owned ones out.
    assert_eq!(hub.listener_count(), before + 1 - 2);
    hub.send(key, Source::Global, (Serde(items(1)),)).unwrap();
    assert_eq!(taken(&log), ["first", "killer", "added", "twice"]);
    hub.send(key, Source::Global, (Serde(items(1)),)).unwrap();
    assert_eq!(taken(&log), ["first", "killer", "added"]);
}
