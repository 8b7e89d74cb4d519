//! Stored messages go into the cluster's KV bucket: a node that starts
//! later replays the latest value, as a late listener does locally.

use gantry_host::Source;

use crate::cluster::{Node, pump_until, ready, server_or_skip, sharing, strings};

#[test]
fn a_late_node_replays_the_clusters_latest_stored_value() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["World"]));
    let b = Node::start(sharing(&server, &["World"]));
    let heard_by_b = b.record("World");
    ready(&[&a, &b]);

    let key = a.hub.key("World.Event").unwrap();
    a.hub.store(key, Source::Global, ("dawn",)).unwrap();
    a.hub.store(key, Source::Global, ("dusk",)).unwrap();
    // b, live, hears the stores as they land.
    assert!(
        pump_until(&[&a, &b], || strings(&heard_by_b)
            .last()
            .map(String::as_str)
            == Some("dusk")),
        "a: {:?}, b: {:?}",
        a.bridge.take_events(),
        b.bridge.take_events()
    );

    // c starts after both: it gets the latest, once, and keeps it for
    // its own late listeners.
    let c = Node::start(sharing(&server, &["World"]));
    ready(&[&c]);
    let c_key = c.hub.key("World.Event").unwrap();
    assert!(pump_until(&[&c], || c
        .hub
        .stored(c_key, Source::Global)
        .is_some()));
    let late = c.record("World");
    assert_eq!(strings(&late), ["dusk"]);
}

#[test]
fn a_world_event_stored_on_a_named_world_reaches_a_late_node_on_its_world() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["World"]));
    let world_a = a.hub.create_world();
    a.bridge.name_world(world_a, "realm").unwrap();
    ready(&[&a]);
    let key = a.hub.key("World.Event").unwrap();
    a.hub.store(key, world_a, ("the dragon wakes",)).unwrap();
    // A global store of the same key is another value.
    a.hub.store(key, Source::Global, ("elsewhere",)).unwrap();
    assert!(pump_until(&[&a], || a.bridge.waiting() == 0));

    let b = Node::start(sharing(&server, &["World"]));
    let world_b = b.hub.create_world();
    b.bridge.name_world(world_b, "realm").unwrap();
    ready(&[&b]);
    let b_key = b.hub.key("World.Event").unwrap();
    assert!(
        pump_until(&[&b], || b.hub.stored(b_key, world_b).is_some()
            && b.hub.stored(b_key, Source::Global).is_some()),
        "a: {:?}, b: {:?} world {:?} global {:?} stats {:?}",
        a.bridge.take_events(),
        b.bridge.take_events(),
        b.hub.stored(b_key, world_b),
        b.hub.stored(b_key, Source::Global),
        (b.bridge.stats(), a.bridge.stats()),
    );
    let text = |source: Source| -> String {
        let stored = b.hub.stored(b_key, source).unwrap();
        stored[0].as_str().unwrap().to_owned()
    };
    assert_eq!(text(Source::World(world_b)), "the dragon wakes");
    assert_eq!(text(Source::Global), "elsewhere");
}

#[test]
fn a_message_stored_on_a_named_object_reaches_a_late_node_on_its_object() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["World"]));
    let gate_a = a.hub.spawn(a.hub.create_world()).unwrap();
    a.bridge.name_object(gate_a, "gate").unwrap();
    ready(&[&a]);
    let key = a.hub.key("World.Event").unwrap();
    a.hub.store(key, gate_a, ("the gate opens",)).unwrap();
    assert!(pump_until(&[&a], || a.bridge.waiting() == 0));

    let b = Node::start(sharing(&server, &["World"]));
    let world_b = b.hub.create_world();
    let _other = b.hub.spawn(world_b).unwrap();
    let gate_b = b.hub.spawn(world_b).unwrap();
    b.bridge.name_object(gate_b, "gate").unwrap();
    ready(&[&b]);
    let b_key = b.hub.key("World.Event").unwrap();
    assert!(
        pump_until(&[&b], || b.hub.stored(b_key, gate_b).is_some()),
        "b: {:?}",
        b.bridge.take_events()
    );
    let stored = b.hub.stored(b_key, gate_b).unwrap();
    assert_eq!(stored[0].as_str(), Some("the gate opens"));
    assert!(b.hub.stored(b_key, Source::Global).is_none());
}
