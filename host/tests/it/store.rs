//! Stored messages and `once`: a store is delivered live and replayed once
//! to each late listener, per key and source; a newer one replaces it; a
//! `once` message is consumed by the first listener it reaches (live or
//! replayed), never by one that refuses it or whose owner is gone. A
//! once relay (a bridge) is told of each once after its live delivery and
//! says whether it went elsewhere or stays here.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::store::{OnceFate, OnceRelayFn};
use gantry_host::{Hub, ListenOptions, Owner, Source, Value};
use gantry_test_support::log::{Log, log, pusher, taken};

fn ints(log: &Log, name: &'static str) -> impl Fn(i64) + 'static {
    let log = log.clone();
    move |n: i64| log.borrow_mut().push(format!("{name} {n}"))
}

/// Once + Times: a once message replayed to a `times = 2` listener uses
/// one of its calls and is consumed; one more live call and it is gone.
#[test]
fn store_once_replay_uses_one_of_a_listeners_times() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let _h = hub
        .listen_with(
            "Boot.Done",
            Source::Global,
            ListenOptions::new().times(2),
            ints(&log, "got"),
        )
        .unwrap();
    assert_eq!(taken(&log), ["got 1"]);
    assert!(hub.stored(key, Source::Global).is_none(), "consumed");
    hub.send_str("Boot.Done", Source::Global, (2i64,)).unwrap();
    hub.send_str("Boot.Done", Source::Global, (3i64,)).unwrap();
    assert_eq!(taken(&log), ["got 2"]);
    assert_eq!(hub.listener_count(), 0);
}

/// Store + partial matching + times: a partial `times = 1` listener that
/// arrives after two stores under its key hears exactly one replay.
#[test]
fn store_partial_late_listener_with_times_one_hears_one_replay_only() {
    let hub = Hub::new();
    let (a, b) = (hub.key("Game.A").unwrap(), hub.key("Game.B").unwrap());
    hub.store(a, Source::Global, (1i64,)).unwrap();
    hub.store(b, Source::Global, (2i64,)).unwrap();
    let log = log();
    let _once = hub
        .listen_with(
            "Game",
            Source::Global,
            ListenOptions::new().partial().times(1),
            ints(&log, "times1"),
        )
        .unwrap();
    assert_eq!(taken(&log).len(), 1);
    assert_eq!(hub.listener_count(), 0);
    let _all = hub
        .listen_with(
            "Game",
            Source::Global,
            ListenOptions::new().partial(),
            ints(&log, "all"),
        )
        .unwrap();
    let mut all = taken(&log);
    all.sort();
    assert_eq!(all, ["all 1", "all 2"], "each stored key is replayed once");
    // Stores stay for the next late listener (they are not once).
    assert!(hub.stored(a, Source::Global).is_some() && hub.stored(b, Source::Global).is_some());
}

/// "Once is consumed by the first listener": a listener that cannot
/// take the once message (it wants more than was stored) does not consume
/// it; the next listener that can, does.
#[test]
fn store_once_is_not_consumed_by_a_late_listener_that_refuses_it() {
    let hub = Hub::new();
    let key = hub.key("Ready").unwrap();
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let l = log.clone();
    let _greedy = hub.listen("Ready", Source::Global, move |n: i64, s: String| {
        l.borrow_mut().push(format!("greedy {n} {s}"))
    });
    assert!(taken(&log).is_empty());
    assert!(hub.stored(key, Source::Global).is_some(), "still waiting");
    let _fit = hub
        .listen("Ready", Source::Global, ints(&log, "fit"))
        .unwrap();
    assert_eq!(taken(&log), ["fit 1"]);
    assert!(hub.stored(key, Source::Global).is_none());
}

/// "once the owner is gone it is dropped before the next delivery"
/// and "Once is consumed by its first delivery": a once message whose only
/// live listener's owner is gone was delivered to nobody, so it is kept for
/// the next listener.
#[test]
fn store_once_sent_to_a_listener_whose_owner_is_gone_is_kept() {
    let hub = Hub::new();
    let owner = Rc::new(());
    let log = log();
    hub.listen_with(
        "Ready",
        Source::Global,
        ListenOptions::new().owner(Owner::of(&owner)),
        ints(&log, "dead"),
    )
    .unwrap()
    .detach();
    drop(owner);
    let key = hub.key("Ready").unwrap();
    let delivered = hub.once(key, Source::Global, (4i64,)).unwrap();
    assert_eq!(delivered.listeners, 0);
    let _late = hub
        .listen("Ready", Source::Global, ints(&log, "late"))
        .unwrap();
    assert_eq!(taken(&log), ["late 4"]);
}

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

fn listen_ints(
    hub: &Hub,
    key: &str,
    scope: impl Into<Source>,
    log: &Log,
    name: &'static str,
) -> gantry_host::ListenerHandle {
    let l = log.clone();
    hub.listen(key, scope, move |n: i64| {
        l.borrow_mut().push(format!("{name} {n}"))
    })
    .unwrap()
}

#[test]
fn store_late_replay_delivers_exactly_once() {
    let hub = Hub::new();
    let key = hub.key("Game.Ready").unwrap();
    hub.store(key, Source::Global, (7i64,)).unwrap();
    let log = log();
    let _h = listen_ints(&hub, "Game.Ready", Source::Global, &log, "late");
    assert_eq!(taken(&log), ["late 7"]);
    let _h2 = listen_ints(&hub, "Game.Ready", Source::Global, &log, "later");
    assert_eq!(
        taken(&log),
        ["later 7"],
        "each late listener gets its own single replay"
    );
}

#[test]
fn store_is_delivered_live_and_newer_store_overwrites() {
    let hub = Hub::new();
    let key = hub.key("Score").unwrap();
    let log = log();
    let _live = listen_ints(&hub, "Score", Source::Global, &log, "live");
    hub.store(key, Source::Global, (1i64,)).unwrap();
    hub.store(key, Source::Global, (2i64,)).unwrap();
    assert_eq!(taken(&log), ["live 1", "live 2"]);
    let _late = listen_ints(&hub, "Score", Source::Global, &log, "late");
    assert_eq!(taken(&log), ["late 2"]);
}

#[test]
fn once_consumed_live() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    let log = log();
    let _live = listen_ints(&hub, "Boot.Done", Source::Global, &log, "live");
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let _late = listen_ints(&hub, "Boot.Done", Source::Global, &log, "late");
    assert_eq!(taken(&log), ["live 1"]);
}

#[test]
fn once_consumed_by_replay_and_second_late_listener_gets_nothing() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let _a = listen_ints(&hub, "Boot.Done", Source::Global, &log, "first");
    let _b = listen_ints(&hub, "Boot.Done", Source::Global, &log, "second");
    assert_eq!(taken(&log), ["first 1"]);
    assert!(hub.stored(key, Source::Global).is_none());
}

#[test]
fn store_dies_with_source_and_can_be_removed() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let key = hub.key("Hp").unwrap();
    hub.store(key, obj, (10i64,)).unwrap();
    hub.store(key, Source::Global, (5i64,)).unwrap();
    assert!(hub.remove_stored(key, Source::Global));
    assert!(!hub.remove_stored(key, Source::Global));
    hub.destroy(obj).unwrap();
    assert!(hub.stored(key, obj).is_none());
}

#[test]
fn store_per_source_isolation() {
    let hub = Hub::new();
    let world = hub.create_world();
    let a = hub.spawn(world).unwrap();
    let b = hub.spawn(world).unwrap();
    let key = hub.key("Hp").unwrap();
    hub.store(key, a, (10i64,)).unwrap();
    hub.store(key, b, (20i64,)).unwrap();
    let log = log();
    let _a = listen_ints(&hub, "Hp", a, &log, "a");
    let _b = listen_ints(&hub, "Hp", b, &log, "b");
    assert_eq!(taken(&log), ["a 10", "b 20"]);
}

#[test]
fn store_scope_of_replay_follows_the_listener() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let key = hub.key("Weather").unwrap();
    hub.store(key, obj, (1i64,)).unwrap();
    hub.store(key, world, (2i64,)).unwrap();
    hub.store(key, Source::Global, (3i64,)).unwrap();
    let log = log();
    let _g = listen_ints(&hub, "Weather", Source::Global, &log, "global");
    let _w = listen_ints(&hub, "Weather", world, &log, "world");
    let _o = listen_ints(&hub, "Weather", obj, &log, "object");
    assert_eq!(taken(&log), ["global 3", "world 2", "object 1"]);
}

#[test]
fn store_replay_uses_up_times_one() {
    let hub = Hub::new();
    let key = hub.key("S").unwrap();
    hub.store(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen_with(
            "S",
            Source::Global,
            ListenOptions::new().times(1),
            move |n: i64| l.borrow_mut().push(n.to_string()),
        )
        .unwrap();
    hub.store(key, Source::Global, (2i64,)).unwrap();
    assert_eq!(taken(&log), ["1"]);
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn store_replay_goes_through_the_compatibility_check() {
    let hub = Hub::new();
    let key = hub.key("S").unwrap();
    hub.store(key, Source::Global, (1i64,)).unwrap();
    // A listener wanting a string at position 0 is rejected outright.
    assert!(hub.listen("S", Source::Global, |_: String| {}).is_err());
    // One wanting more than was stored is not called and the mismatch is reported.
    hub.take_reports();
    let _h = hub.listen("S", Source::Global, |_: i64| {}).unwrap();
    assert!(hub.take_reports().is_empty());
}

/// A once relay that says `fate` and notes how many listeners took each
/// once it was told of.
fn relay(hub: &Hub, fate: OnceFate) -> Rc<RefCell<Vec<usize>>> {
    let told = Rc::new(RefCell::new(Vec::new()));
    let noted = told.clone();
    let relay: Rc<OnceRelayFn> = Rc::new(move |_key, _source, _args, listeners| {
        noted.borrow_mut().push(listeners);
        fate
    });
    hub.set_once_relay(Some(relay));
    told
}

#[test]
fn a_once_relay_that_says_as_usual_changes_nothing() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    let told = relay(&hub, OnceFate::AsUsual);
    hub.once(key, Source::Global, (1i64,)).unwrap();
    assert_eq!(*told.borrow(), [0], "told, with no listener to take it");
    let log = log();
    let _late = listen_ints(&hub, "Boot.Done", Source::Global, &log, "late");
    assert_eq!(taken(&log), ["late 1"], "kept for the first to come");
}

#[test]
fn a_once_gone_elsewhere_is_kept_for_no_later_listener() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    let told = relay(&hub, OnceFate::Elsewhere);
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let _late = listen_ints(&hub, "Boot.Done", Source::Global, &log, "late");
    assert_eq!(*told.borrow(), [0]);
    assert!(taken(&log).is_empty());
    assert!(hub.stored(key, Source::Global).is_none());
}

#[test]
fn a_once_the_relay_keeps_here_waits_though_a_listener_heard_it() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    let log = log();
    let _live = listen_ints(&hub, "Boot.Done", Source::Global, &log, "live");
    let told = relay(&hub, OnceFate::KeepHere);
    hub.once(key, Source::Global, (1i64,)).unwrap();
    assert_eq!(*told.borrow(), [1], "told that one listener heard it");
    let _late = listen_ints(&hub, "Boot.Done", Source::Global, &log, "late");
    assert_eq!(taken(&log), ["live 1", "late 1"]);
}

#[test]
fn a_listener_can_tell_a_once_from_a_send_and_a_store() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    let kinds = Rc::new(RefCell::new(Vec::new()));
    let noted = kinds.clone();
    let _l = hub
        .listen_message(
            "Boot.Done",
            Source::Global,
            ListenOptions::new(),
            move |m| noted.borrow_mut().push(m.is_once()),
        )
        .unwrap();
    hub.send(key, Source::Global, (1i64,)).unwrap();
    hub.store(key, Source::Global, (2i64,)).unwrap();
    hub.once(key, Source::Global, (3i64,)).unwrap();
    assert_eq!(*kinds.borrow(), [false, false, true]);
}
