//! Sends on shared keys reach the other node's listeners, both ways.

use std::time::Duration;

use gantry_host::Source;

use crate::cluster::{Node, pump_for, pump_until, ready, server_or_skip, sharing, strings};

#[test]
fn two_nodes_hear_each_others_sends_on_partial_listeners() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat"]));
    let b = Node::start(sharing(&server, &["Chat"]));
    let heard_by_a = a.record("Chat");
    let heard_by_b = b.record("Chat");
    ready(&[&a, &b]);

    a.hub
        .send_str("Chat.Say", Source::Global, ("from a",))
        .unwrap();
    b.hub
        .send_str("Chat.Emote.Wave", Source::Global, ("from b",))
        .unwrap();

    assert!(pump_until(&[&a, &b], || heard_by_a.borrow().len() == 2
        && heard_by_b.borrow().len() == 2));
    let keys = |heard: &crate::cluster::Heard| -> Vec<String> {
        heard.borrow().iter().map(|(k, _)| k.clone()).collect()
    };
    assert_eq!(keys(&heard_by_a), ["Chat.Say", "Chat.Emote.Wave"]);
    assert_eq!(strings(&heard_by_b), ["from b", "from a"]);
    assert_eq!(a.bridge.stats().received, 1);
    assert_eq!(b.bridge.stats().received, 1);
}

#[test]
fn a_node_does_not_hear_its_own_sends_back() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat"]));
    let b = Node::start(sharing(&server, &["Chat"]));
    let heard_by_a = a.record("Chat");
    let heard_by_b = b.record("Chat");
    ready(&[&a, &b]);

    a.hub
        .send_str("Chat.Say", Source::Global, ("once only",))
        .unwrap();
    assert!(
        pump_until(&[&a, &b], || heard_by_b.borrow().len() == 1),
        "a: {:?} {:?}, b: {:?} {:?}",
        a.bridge.stats(),
        a.bridge.take_events(),
        b.bridge.stats(),
        b.bridge.take_events()
    );
    pump_for(&[&a, &b], Duration::from_millis(300));

    assert_eq!(strings(&heard_by_a), ["once only"]);
    assert_eq!(a.bridge.stats().received, 0);
    // Nor does the receiver send it back out: b sent nothing.
    assert_eq!(b.bridge.stats().sent, 0);
}

#[test]
fn keys_outside_the_imports_and_object_sends_stay_home() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat", "Trade"]));
    let b = Node::start(sharing(&server, &["Chat"]));
    let trade_at_b = b.record("Trade");
    let chat_at_b = b.record("Chat");
    ready(&[&a, &b]);

    let world = a.hub.create_world();
    let object = a.hub.spawn(world).unwrap();
    a.hub.send_str("Trade.Offer", Source::Global, (5,)).unwrap();
    a.hub.send_str("Chat.Say", object, ("whisper",)).unwrap();
    a.hub
        .send_str("Chat.Say", world, ("unnamed world",))
        .unwrap();
    a.hub
        .send_str("Chat.Say", Source::Global, ("aloud",))
        .unwrap();

    assert!(pump_until(&[&a, &b], || !chat_at_b.borrow().is_empty()));
    pump_for(&[&a, &b], Duration::from_millis(200));
    assert_eq!(strings(&chat_at_b), ["aloud"]);
    assert!(trade_at_b.borrow().is_empty());
}

#[test]
fn a_world_named_for_the_cluster_reaches_the_world_of_that_name() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat"]));
    let b = Node::start(sharing(&server, &["Chat"]));
    let arena_a = a.hub.create_world();
    let _other_b = b.hub.create_world();
    let arena_b = b.hub.create_world();
    a.bridge.name_world(arena_a, "arena").unwrap();
    b.bridge.name_world(arena_b, "arena").unwrap();
    let heard: crate::cluster::Heard = Default::default();
    let sink = heard.clone();
    b.hub
        .listen_message(
            "Chat",
            arena_b,
            gantry_host::ListenOptions::new().partial(),
            move |m| {
                sink.borrow_mut()
                    .push((m.key_name().to_string(), m.args.to_vec()));
            },
        )
        .unwrap()
        .detach();
    ready(&[&a, &b]);

    a.hub
        .send_str("Chat.Say", arena_a, ("in the arena",))
        .unwrap();
    assert!(pump_until(&[&a, &b], || !heard.borrow().is_empty()));
    assert_eq!(strings(&heard), ["in the arena"]);
}
