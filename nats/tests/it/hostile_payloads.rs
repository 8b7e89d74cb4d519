//! What a peer sends is checked like any send, and bounded: a mismatch,
//! a malformed or a huge payload is dropped and reported, never a panic.

use std::time::Duration;

use gantry_host::Source;
use gantry_nats::BridgeEvent;

use crate::cluster::{
    Node, pump_for, pump_until, raw_publish, ready, server_or_skip, sharing, strings,
};

#[test]
fn a_payload_contradicting_the_receivers_table_is_refused_and_reported() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat"]));
    let b = Node::start(sharing(&server, &["Chat"]));
    // b's table knows Chat.Say carries a string; a's knows nothing yet.
    b.hub
        .declare(
            "Chat.Say",
            gantry_host::KeyDecl::event().param("text", gantry_host::Type::String),
        )
        .unwrap();
    let heard_by_b = b.record("Chat");
    ready(&[&a, &b]);

    a.hub.send_str("Chat.Say", Source::Global, (42,)).unwrap();
    assert!(pump_until(&[&a, &b], || b.bridge.stats().refused == 1));

    let events = b.bridge.take_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, BridgeEvent::Refused { key, .. } if key == "Chat.Say")),
        "{events:?}"
    );
    assert!(heard_by_b.borrow().is_empty());
    // The hub filed its own report of the mismatch, naming the key.
    assert!(b.hub.take_reports().iter().any(|r| r.key() == "Chat.Say"));
    // And the next good message, from another node, still comes through.
    let c = Node::start(sharing(&server, &["Chat"]));
    ready(&[&c]);
    c.hub
        .send_str("Chat.Say", Source::Global, ("fine",))
        .unwrap();
    assert!(pump_until(&[&b, &c], || heard_by_b.borrow().len() == 1));
    assert_eq!(strings(&heard_by_b), ["fine"]);
}

#[test]
fn a_malformed_or_huge_payload_from_a_raw_publish_is_dropped_and_reported() {
    let server = server_or_skip!();
    let b = Node::start(sharing(&server, &["Chat"]).max_payload(1024));
    let heard_by_b = b.record("Chat");
    ready(&[&b]);

    // Garbage, a nesting bomb, a wrong version, and 4 KiB over a 1 KiB bound.
    raw_publish(&server, "test.Chat.Say", b"\x01garbage!".to_vec());
    let mut bomb = vec![1u8];
    bomb.extend_from_slice(&7u64.to_le_bytes());
    bomb.push(1);
    bomb.extend(std::iter::repeat_n([7u8, 1], 500).flatten());
    raw_publish(&server, "test.Chat.Say", bomb);
    raw_publish(&server, "test.Chat.Say", vec![9; 20]);
    raw_publish(&server, "test.Chat.Say", vec![1; 4096]);
    assert!(pump_until(&[&b], || b.bridge.stats().refused == 4));
    pump_for(&[&b], Duration::from_millis(200));

    let events = b.bridge.take_events();
    let malformed = events
        .iter()
        .filter(|e| matches!(e, BridgeEvent::Malformed { subject, .. } if subject == "Chat.Say"))
        .count();
    assert_eq!(malformed, 3, "{events:?}");
    assert!(
        events.iter().any(|e| matches!(
            e,
            BridgeEvent::Oversized {
                bytes: 4096,
                limit: 1024,
                ..
            }
        )),
        "{events:?}"
    );
    assert!(heard_by_b.borrow().is_empty());
    assert_eq!(b.bridge.stats().refused, 4);
}
