//! How long a listener lives: `times` calls (re-entrant ones counted), until
//! its owner is gone (dropped before the next delivery), its handle is
//! dropped, or it is unlistened by id or owner; destroying an object or
//! world takes its listeners, sources and stores with it, even mid-dispatch.

use std::rc::Rc;

use gantry_host::{HookOptions, Hub, HubError, ListenOptions, Owner, Source, Value};
use gantry_test_support::log::{Log, log, pusher, taken};

fn push(log: &Log, s: impl Into<String>) {
    log.borrow_mut().push(s.into());
}

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

/// "Set N and the listener unlistens itself after N calls" — a call
/// made re-entrantly (the listener sending its own key) counts too: a
/// `times = 1` listener is never called twice.
#[test]
fn listen_options_times_counts_reentrant_calls_of_the_same_listener() {
    let hub = Hub::new();
    let log = log();
    for times in [1, 2] {
        let (h, l) = (hub.clone(), log.clone());
        let handle = hub
            .listen_with(
                "Echo",
                Source::Global,
                ListenOptions::new().times(times),
                move |depth: i64| {
                    l.borrow_mut().push(format!("called {depth}"));
                    if depth < 5 {
                        h.send_str("Echo", Source::Global, (depth + 1,)).unwrap();
                    }
                },
            )
            .unwrap();
        hub.send_str("Echo", Source::Global, (0i64,)).unwrap();
        hub.send_str("Echo", Source::Global, (10i64,)).unwrap();
        let expected: Vec<String> = (0..times).map(|d| format!("called {d}")).collect();
        assert_eq!(taken(&log), expected, "times {times}");
        assert_eq!(hub.listener_count(), 0, "times {times}");
        drop(handle);
    }
}

/// "Destroying an object drops everything it owns and everything
/// sourced from it" — mid-dispatch: listeners of the destroyed object, and
/// listeners it owns on other tiers, are not called later in that dispatch.
#[test]
fn destroying_the_source_object_mid_dispatch_skips_its_remaining_listeners() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let (h, l) = (hub.clone(), log.clone());
    let _killer = hub
        .listen_with(
            "Boom",
            Source::Global,
            ListenOptions::new().order(-1),
            move || {
                l.borrow_mut().push("killer".into());
                h.destroy(obj).unwrap();
            },
        )
        .unwrap();
    hub.listen("Boom", obj, pusher(&log, "object tier"))
        .unwrap()
        .detach();
    hub.listen_with(
        "Boom",
        Source::Global,
        ListenOptions::new().owner(Owner::Object(obj)),
        pusher(&log, "owned by the object"),
    )
    .unwrap()
    .detach();
    let _world = hub
        .listen("Boom", world, pusher(&log, "world tier"))
        .unwrap();
    hub.send_str("Boom", obj, ()).unwrap();
    assert_eq!(taken(&log), ["killer", "world tier"]);
    assert_eq!(hub.listener_count(), 2);
}

/// The same, during a stored replay: a partial listener that destroys its
/// own source object on the first replay gets no more replays.
#[test]
fn destroying_the_source_object_during_a_replay_stops_the_remaining_replays() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    for (key, n) in [("Door.A", 1i64), ("Door.B", 2), ("Door.C", 3)] {
        let key = hub.key(key).unwrap();
        hub.store(key, obj, (n,)).unwrap();
    }
    let log = log();
    let (h, l) = (hub.clone(), log.clone());
    let _h = hub
        .listen_with(
            "Door",
            obj,
            ListenOptions::new().partial(),
            move |n: i64| {
                l.borrow_mut().push(format!("replay {n}"));
                let _ = h.destroy(obj);
            },
        )
        .unwrap();
    assert_eq!(taken(&log).len(), 1);
    assert_eq!(hub.listener_count(), 0);
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

/// A send from an object or world that is gone is an error in the words
/// listening or storing there gives — by key text, by key, typed (whose
/// lane was warm before the object went) and as a request — and reaches
/// nobody, not even a global listener.
#[test]
fn a_send_from_a_destroyed_object_or_world_is_the_error_listening_there_gives() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let _global = hub
        .listen("Ping", Source::Global, pusher(&log, "global"))
        .unwrap();
    let key = hub.key("Ping").unwrap();
    let typed = hub.typed_key::<()>("Ping").unwrap();
    for _ in 0..3 {
        hub.send(typed, obj, ()).unwrap();
    }
    assert_eq!(taken(&log), ["global"; 3], "the typed lane is warm");
    hub.destroy(obj).unwrap();
    let listen_error = hub.listen("Ping", obj, || {}).unwrap_err().to_string();
    assert_eq!(listen_error, format!("{obj} does not exist (destroyed?)"));
    let errors = [
        hub.send(typed, obj, ()).unwrap_err(),
        hub.send(key, obj, ()).unwrap_err(),
        hub.send_str("Ping", obj, ()).unwrap_err(),
        hub.send_str("Ping", hub.named(obj, "n"), ()).unwrap_err(),
        hub.request(key, obj, (), |_| {}).unwrap_err(),
    ];
    for error in errors {
        assert!(matches!(error, HubError::NoSuchObject(o) if o == obj));
        assert_eq!(error.to_string(), listen_error);
    }
    assert!(taken(&log).is_empty(), "nobody hears a send from nowhere");
    hub.destroy_world(world).unwrap();
    let error = hub.send_str("Ping", world, ()).unwrap_err();
    assert_eq!(
        error.to_string(),
        hub.listen("Ping", world, || {}).unwrap_err().to_string()
    );
    hub.send_str("Ping", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["global"], "global sends go on");
}

/// A listener that destroys its own object while a send from it is being
/// delivered lets that dispatch finish (its other listeners skipped as
/// ever), and a global send it makes afterwards still goes out; only a
/// new send from the object it destroyed is refused.
#[test]
fn a_listener_destroying_its_own_object_finishes_the_dispatch_and_may_still_send_globally() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let (h, l) = (hub.clone(), log.clone());
    hub.listen_with(
        "Game.Tick",
        Source::Global,
        ListenOptions::new().owner(Owner::Object(obj)),
        move || {
            h.destroy(obj).unwrap();
            let own = h.send_str("Mine", obj, ());
            l.borrow_mut().push(format!("own send ok: {}", own.is_ok()));
            h.send_str("Game.Over", Source::Global, ()).unwrap();
        },
    )
    .unwrap()
    .detach();
    let _over = hub
        .listen("Game.Over", Source::Global, pusher(&log, "game over heard"))
        .unwrap();
    let _after = hub
        .listen_with(
            "Game.Tick",
            Source::Global,
            ListenOptions::new().order(1),
            pusher(&log, "tick heard after"),
        )
        .unwrap();
    hub.send_str("Game.Tick", Source::Global, ()).unwrap();
    assert_eq!(
        taken(&log),
        ["own send ok: false", "game over heard", "tick heard after"]
    );
    hub.send_str("Game.Tick", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["tick heard after"]);
}
