//! A once message for the cluster is consumed by exactly one node.

use std::time::Duration;

use gantry_host::Value;

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
