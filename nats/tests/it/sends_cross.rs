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

/// Records what `object`'s listeners on the `Chat` subtree hear.
fn record_object(node: &Node, object: gantry_host::ObjectId) -> crate::cluster::Heard {
    let heard: crate::cluster::Heard = Default::default();
    let sink = heard.clone();
    node.hub
        .listen_message(
            "Chat",
            object,
            gantry_host::ListenOptions::new().partial(),
            move |m| {
                sink.borrow_mut()
                    .push((m.key_name().to_string(), m.args.to_vec()));
            },
        )
        .unwrap()
        .detach();
    heard
}

#[test]
fn a_send_on_an_object_named_for_the_cluster_reaches_the_object_of_that_name() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat"]));
    let b = Node::start(sharing(&server, &["Chat"]));
    let (world_a, world_b) = (a.hub.create_world(), b.hub.create_world());
    let boss_a = a.hub.spawn(world_a).unwrap();
    let unnamed_a = a.hub.spawn(world_a).unwrap();
    let other_b = b.hub.spawn(world_b).unwrap();
    let boss_b = b.hub.spawn(world_b).unwrap();
    a.bridge.name_object(boss_a, "dragon").unwrap();
    b.bridge.name_object(boss_b, "dragon").unwrap();
    let heard = record_object(&b, boss_b);
    let heard_by_other = record_object(&b, other_b);
    ready(&[&a, &b]);

    a.hub
        .send_str("Chat.Say", unnamed_a, ("stays home",))
        .unwrap();
    a.hub.send_str("Chat.Say", boss_a, ("roar",)).unwrap();
    assert!(pump_until(&[&a, &b], || !heard.borrow().is_empty()));
    pump_for(&[&a, &b], Duration::from_millis(200));
    assert_eq!(strings(&heard), ["roar"]);
    assert!(heard_by_other.borrow().is_empty());

    // The name taken away, its sends stay home too.
    assert!(a.bridge.unname_object(boss_a));
    a.hub.send_str("Chat.Say", boss_a, ("hush",)).unwrap();
    pump_for(&[&a, &b], Duration::from_millis(200));
    assert_eq!(strings(&heard), ["roar"]);
}

#[test]
fn an_object_name_that_is_not_one_subject_token_is_refused() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat"]));
    let object = a.hub.spawn(a.hub.create_world()).unwrap();
    for bad in ["a.b", "*", ">", "a b", "", "dragon-1", &"x".repeat(65)] {
        let err = a.bridge.name_object(object, bad).unwrap_err();
        assert!(err.to_string().contains("object"), "{bad}: {err}");
    }
}

#[test]
fn a_peer_cannot_reach_a_named_object_outside_the_imported_subtrees() {
    let server = server_or_skip!();
    // b imports Chat only; its object listens on Admin too.
    let b = Node::start(sharing(&server, &["Chat"]));
    let boss = b.hub.spawn(b.hub.create_world()).unwrap();
    b.bridge.name_object(boss, "dragon").unwrap();
    let admin: crate::cluster::Heard = Default::default();
    let sink = admin.clone();
    b.hub
        .listen_message(
            "Admin",
            boss,
            gantry_host::ListenOptions::new().partial(),
            move |m| sink.borrow_mut().push((m.key_name().to_string(), vec![])),
        )
        .unwrap()
        .detach();
    let chat = record_object(&b, boss);
    ready(&[&b]);
    let mut payload = Vec::new();
    gantry_nats::wire::encode(1, &[gantry_host::Value::str("x")], &mut payload).unwrap();
    for subject in [
        "test-o.dragon.Admin.Kick",
        "test-o.dragon.Admin",
        "test-o.dragon.Chat-x.Say",
        "test-o.dragon.x.Chat.Say",
        "test-o.dragon",
    ] {
        crate::cluster::raw_publish(&server, subject, payload.clone());
    }
    // What is inside the imports still arrives: the check is the import
    // list, not a closed door.
    crate::cluster::raw_publish(&server, "test-o.dragon.Chat.Say", payload);
    assert!(pump_until(&[&b], || !chat.borrow().is_empty()));
    pump_for(&[&b], Duration::from_millis(200));
    assert!(admin.borrow().is_empty());
    assert_eq!(strings(&chat), ["x"]);
}
