//! The server killed and restarted mid-run: the game keeps running, the
//! bridge reconnects, and what it could not keep is counted and reported.

use std::time::{Duration, Instant};

use gantry_host::Source;
use gantry_nats::{Bridge, BridgeEvent};

use crate::cluster::{Node, PATIENCE, pump_until, ready, server_or_skip, sharing, strings};

#[test]
fn sends_while_the_server_is_down_are_buffered_to_the_bound_then_counted_dropped() {
    let mut server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat"]).buffer(8));
    let b = Node::start(sharing(&server, &["Chat"]));
    let heard_by_b = b.record("Chat");
    ready(&[&a, &b]);
    a.hub
        .send_str("Chat.Say", Source::Global, ("before",))
        .unwrap();
    assert!(pump_until(&[&a, &b], || heard_by_b.borrow().len() == 1));

    server.kill();
    assert!(pump_until(&[&a, &b], || !a.bridge.is_connected()));
    // The game thread never waits: 13 sends while down take no time.
    let start = Instant::now();
    for i in 0..13 {
        a.hub
            .send_str("Chat.Say", Source::Global, (format!("down {i}"),))
            .unwrap();
    }
    assert!(start.elapsed() < Duration::from_millis(100));
    assert_eq!(a.bridge.waiting(), 8);
    assert_eq!(a.bridge.stats().dropped_sends, 5);

    server.restart();
    assert!(pump_until(&[&a, &b], || a.bridge.is_ready()
        && b.bridge.is_ready()
        && a.bridge.waiting() == 0));
    // The buffered sends left; one sent now arrives.
    a.hub
        .send_str("Chat.Say", Source::Global, ("after",))
        .unwrap();
    assert!(pump_until(&[&a, &b], || strings(&heard_by_b)
        .last()
        .map(String::as_str)
        == Some("after")));

    let events = a.bridge.take_events();
    let at = |wanted: &BridgeEvent| events.iter().position(|e| e == wanted);
    let down = at(&BridgeEvent::Disconnected).expect("the loss was reported");
    let full = at(&BridgeEvent::SendsDropped {
        count: 1,
        ended: false,
    })
    .expect("first drop");
    let total = at(&BridgeEvent::SendsDropped {
        count: 5,
        ended: true,
    })
    .expect("the total");
    assert!(down < full && full < total, "{events:?}");
    assert!(
        events[down..].contains(&BridgeEvent::Connected),
        "{events:?}"
    );
}

#[test]
fn a_bridge_started_before_its_server_connects_when_it_comes_up() {
    let mut server = server_or_skip!();
    server.kill();
    let a = Node::start(sharing(&server, &["Chat"]));
    let heard_by_a = a.record("Chat");
    // No server: the game runs on its local hub.
    a.hub
        .send_str("Chat.Say", Source::Global, ("local",))
        .unwrap();
    a.pump();
    assert_eq!(strings(&heard_by_a), ["local"]);
    assert!(!a.bridge.is_connected());

    server.restart();
    let b = Node::start(sharing(&server, &["Chat"]));
    let deadline = Instant::now() + PATIENCE;
    ready(&[&a, &b]);
    assert!(Instant::now() < deadline);
    b.hub
        .send_str("Chat.Say", Source::Global, ("remote",))
        .unwrap();
    assert!(pump_until(&[&a, &b], || heard_by_a.borrow().len() == 2));
    assert_eq!(strings(&heard_by_a), ["local", "remote"]);
}

#[test]
fn a_configuration_error_is_named_before_anything_starts() {
    let hub = gantry_host::Hub::new();
    let bad = gantry_nats::BridgeConfig::new("nats://127.0.0.1:1").cluster("my.game");
    let err = Bridge::start(&hub, bad).err().expect("refused");
    assert!(err.to_string().contains("`my.game`"), "{err}");
}

#[test]
fn a_closing_node_delivers_its_last_sends_before_it_goes() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Chat"]));
    let b = Node::start(sharing(&server, &["Chat"]));
    let heard_by_b = b.record("Chat");
    ready(&[&a, &b]);
    for i in 0..50 {
        a.hub
            .send_str("Chat.Say", Source::Global, (format!("last {i}"),))
            .unwrap();
    }
    assert!(a.bridge.close(PATIENCE));
    assert!(pump_until(&[&b], || heard_by_b.borrow().len() == 50));
}
