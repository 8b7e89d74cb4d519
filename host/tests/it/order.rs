//! Delivery order: lower `order` first across every tier, ties in
//! registration order; on one channel its own listeners by registration,
//! then partial listeners of its ancestors, nearest first.

use gantry_host::{Hub, ListenOptions, Match, Source};
use gantry_test_support::log::{Log, log, pusher, taken};

fn push(log: &Log, s: impl Into<String>) {
    log.borrow_mut().push(s.into());
}

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

/// "listeners on the exact channel first, in
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

/// "Order defaults to 0, lower runs first" — over the whole i32 range,
/// across the three tiers.
#[test]
fn listen_options_extreme_orders_sort_numerically_across_tiers() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let mut handles = Vec::new();
    for (scope, order, name) in [
        (Source::Object(obj), i32::MAX, "max"),
        (Source::Global, 0, "zero"),
        (Source::World(world), i32::MIN, "min"),
        (Source::Global, 1, "one"),
        (Source::Object(obj), -1, "minus one"),
        (Source::World(world), i32::MAX - 1, "max-1"),
    ] {
        handles.push(
            hub.listen_with(
                "Ord",
                scope,
                ListenOptions::new().order(order),
                pusher(&log, name),
            )
            .unwrap(),
        );
    }
    hub.send_str("Ord", obj, ()).unwrap();
    assert_eq!(
        taken(&log),
        ["min", "minus one", "zero", "one", "max-1", "max"]
    );
}

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
