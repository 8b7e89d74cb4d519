//! A once message for the cluster is consumed by exactly one node.

use std::time::Duration;

use gantry_host::{Source, Value};

use crate::cluster::{Node, pump_for, pump_until, ready, server_or_skip, sharing};

#[test]
fn a_once_is_consumed_exactly_once_across_three_nodes() {
    let server = server_or_skip!();
    let nodes: Vec<Node> = (0..3)
        .map(|_| Node::start(sharing(&server, &["Loot"])))
        .collect();
    let heard: Vec<_> = nodes.iter().map(|n| n.record("Loot")).collect();
    let all: Vec<&Node> = nodes.iter().collect();
    ready(&all);

    for i in 0..10 {
        nodes[0].bridge.once("Loot.Drop", &[Value::Int(i)]).unwrap();
    }
    let total = || heard.iter().map(|h| h.borrow().len()).sum::<usize>();
    assert!(pump_until(&all, || total() == 10));
    pump_for(&all, Duration::from_millis(300));
    assert_eq!(
        total(),
        10,
        "each of the 10 drops consumed by one node only"
    );
    let mut got: Vec<i64> = heard
        .iter()
        .flat_map(|h| {
            h.borrow()
                .iter()
                .map(|(_, v)| v[0].as_int().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort();
    assert_eq!(got, (0..10).collect::<Vec<_>>());
}

/// The values of every recording, sorted.
fn ints(heard: &[crate::cluster::Heard]) -> Vec<i64> {
    let mut got: Vec<i64> = heard
        .iter()
        .flat_map(|h| {
            h.borrow()
                .iter()
                .map(|(_, v)| v[0].as_int().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort();
    got
}

#[test]
fn a_stored_once_put_before_any_listener_is_taken_by_one_node_and_never_again() {
    let mut server = server_or_skip!();
    // The maker exports Loot and imports nothing: it takes none itself.
    let maker = Node::start(
        gantry_nats::BridgeConfig::new(server.url())
            .cluster("test")
            .export("Loot"),
    );
    ready(&[&maker]);
    for i in 0..5 {
        maker
            .bridge
            .store_once("Loot.Drop", &[Value::Int(i)])
            .unwrap();
    }
    // Closing waits until the server said it keeps every one.
    assert!(maker.bridge.close(crate::cluster::PATIENCE));

    // Three nodes come later, each with a listener.
    let nodes: Vec<Node> = (0..3)
        .map(|_| Node::start(sharing(&server, &["Loot"])))
        .collect();
    let heard: Vec<_> = nodes.iter().map(|n| n.record("Loot")).collect();
    let all: Vec<&Node> = nodes.iter().collect();
    ready(&all);
    assert!(
        pump_until(&all, || ints(&heard).len() == 5),
        "heard {:?}",
        ints(&heard)
    );
    pump_for(&all, Duration::from_millis(500));
    assert_eq!(ints(&heard), [0, 1, 2, 3, 4], "each taken by one node only");
    drop(all);
    drop(nodes);

    // The server and the nodes restart: what was taken is gone; one put
    // since is the only one heard.
    server.kill();
    server.restart();
    let maker = Node::start(
        gantry_nats::BridgeConfig::new(server.url())
            .cluster("test")
            .export("Loot"),
    );
    ready(&[&maker]);
    maker
        .bridge
        .store_once("Loot.Drop", &[Value::Int(99)])
        .unwrap();
    assert!(maker.bridge.close(crate::cluster::PATIENCE));
    let nodes: Vec<Node> = (0..3)
        .map(|_| Node::start(sharing(&server, &["Loot"])))
        .collect();
    let heard: Vec<_> = nodes.iter().map(|n| n.record("Loot")).collect();
    let all: Vec<&Node> = nodes.iter().collect();
    ready(&all);
    assert!(pump_until(&all, || !ints(&heard).is_empty()));
    pump_for(&all, Duration::from_millis(1500));
    assert_eq!(ints(&heard), [99]);
}

#[test]
fn a_stored_once_on_a_key_a_node_does_not_import_is_left_for_one_that_does() {
    let server = server_or_skip!();
    let maker = Node::start(
        gantry_nats::BridgeConfig::new(server.url())
            .cluster("test")
            .export("Loot"),
    );
    // Takes from the stream (it imports Chat) but not Loot.
    let other = Node::start(sharing(&server, &["Chat"]));
    let unheard = other.record("Loot");
    ready(&[&maker, &other]);
    maker
        .bridge
        .store_once("Loot.Drop", &[Value::Int(7)])
        .unwrap();
    pump_for(&[&maker, &other], Duration::from_millis(300));
    assert!(unheard.borrow().is_empty());

    let taker = Node::start(sharing(&server, &["Loot"]));
    let heard = taker.record("Loot");
    ready(&[&taker]);
    assert!(pump_until(&[&maker, &other, &taker], || heard
        .borrow()
        .len()
        == 1));
    assert_eq!(ints(&[heard]), [7]);
    assert!(unheard.borrow().is_empty());
}

#[test]
fn a_hub_once_no_listener_here_takes_is_taken_by_exactly_one_node_of_the_cluster() {
    let server = server_or_skip!();
    let nodes: Vec<Node> = (0..3)
        .map(|_| Node::start(sharing(&server, &["Loot"])))
        .collect();
    // Node 0 makes the onces with no listener of its own.
    let mut heard: Vec<_> = nodes[1..].iter().map(|n| n.record("Loot")).collect();
    let all: Vec<&Node> = nodes.iter().collect();
    ready(&all);
    let key = nodes[0].hub.key("Loot.Drop").unwrap();
    for i in 0..6 {
        nodes[0].hub.once(key, Source::Global, (i as i64,)).unwrap();
    }
    // Gone to the cluster, not kept here: the stream hands each to one
    // importing node (this one too, which then keeps it for a listener).
    assert!(nodes[0].hub.stored(key, Source::Global).is_none());
    heard.push(nodes[0].record("Loot"));
    assert!(
        pump_until(&all, || ints(&heard).len() == 6),
        "heard {:?}",
        ints(&heard)
    );
    pump_for(&all, Duration::from_millis(500));
    assert_eq!(ints(&heard), [0, 1, 2, 3, 4, 5], "each taken by one node");
}

#[test]
fn a_hub_once_a_listener_here_takes_never_reaches_another_node() {
    let server = server_or_skip!();
    let maker = Node::start(sharing(&server, &["Loot"]));
    let other = Node::start(sharing(&server, &["Loot"]));
    let here = maker.record("Loot");
    let there = other.record("Loot");
    ready(&[&maker, &other]);
    let key = maker.hub.key("Loot.Drop").unwrap();
    maker.hub.once(key, Source::Global, (7i64,)).unwrap();
    pump_for(&[&maker, &other], Duration::from_millis(800));
    assert_eq!(ints(&[here]), [7]);
    assert!(
        there.borrow().is_empty(),
        "the other node heard {:?}",
        there.borrow()
    );
    // A plain send on the same key still crosses: the rule is the once's.
    maker.hub.send(key, Source::Global, (8i64,)).unwrap();
    assert!(pump_until(&[&maker, &other], || there.borrow().len() == 1));
    assert_eq!(ints(&[there]), [8]);
}

/// How many messages the cluster's stored once stream was given, and how
/// many it keeps now.
fn onces_given_and_kept(server: &crate::cluster::Server) -> (u64, u64) {
    crate::cluster::with_plain_client(server, async |client| {
        let js = async_nats::jetstream::new(client);
        let mut stream = js.get_stream("gantry_test_once").await.unwrap();
        let state = stream.info().await.unwrap().state;
        (state.last_sequence, state.messages)
    })
}

#[test]
fn a_stored_once_is_taken_from_the_cluster_before_the_taking_game_pumps() {
    let server = server_or_skip!();
    let maker = Node::start(
        gantry_nats::BridgeConfig::new(server.url())
            .cluster("test")
            .export("Loot"),
    );
    let slow = Node::start(sharing(&server, &["Loot"]));
    let heard = slow.record("Loot");
    ready(&[&maker, &slow]);
    maker
        .bridge
        .store_once("Loot.Drop", &[Value::Int(3)])
        .unwrap();
    // The slow game does not pump: its bridge took the message all the
    // same, so the stream holds it for no other node meanwhile.
    let deadline = std::time::Instant::now() + crate::cluster::PATIENCE;
    let mut taken = false;
    while std::time::Instant::now() < deadline {
        maker.pump();
        // Given and gone: taken (not just still on its way there).
        if onces_given_and_kept(&server) == (1, 0) {
            taken = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(taken, "the stream still keeps it");
    assert!(heard.borrow().is_empty());
    let other = Node::start(sharing(&server, &["Loot"]));
    let unheard = other.record("Loot");
    ready(&[&other]);
    pump_for(&[&other], Duration::from_millis(500));
    assert!(unheard.borrow().is_empty());
    // At its next pump the slow game delivers it.
    slow.pump();
    assert_eq!(ints(&[heard]), [3]);
}

#[test]
fn a_hub_once_that_cannot_go_to_the_cluster_is_kept_for_a_listener_here() {
    // No server, a buffer of one: the first once waits in the buffer for
    // the cluster; the second finds it full and stays on this hub.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let config = gantry_nats::BridgeConfig::new(format!("nats://127.0.0.1:{port}"))
        .cluster("test")
        .share("Loot")
        .buffer(1);
    let node = Node::start(config);
    let (first, second) = (
        node.hub.key("Loot.First").unwrap(),
        node.hub.key("Loot.Second").unwrap(),
    );
    node.hub.once(first, Source::Global, (1i64,)).unwrap();
    node.hub.once(second, Source::Global, (2i64,)).unwrap();
    assert!(node.hub.stored(first, Source::Global).is_none());
    let late = node.record("Loot");
    assert_eq!(ints(&[late]), [2]);
    assert_eq!(node.bridge.stats().dropped_sends, 1);
}
