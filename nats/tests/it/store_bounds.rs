//! The cluster's store is bounded: a node puts at most `max_stored_keys`
//! distinct keys there, and the bucket itself refuses puts past its bytes,
//! whoever makes them.

use std::time::Duration;

use gantry_host::Source;
use gantry_nats::BridgeEvent;

use crate::cluster::{
    Node, PATIENCE, Server, pump_for, pump_until, ready, server_or_skip, sharing, with_plain_client,
};

#[test]
fn a_node_puts_no_more_distinct_keys_in_the_cluster_store_than_its_bound_and_says_so() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Loot"]).max_stored_keys(3));
    ready(&[&a]);
    for name in ["A", "B", "C", "D", "E"] {
        let key = a.hub.key(&format!("Loot.{name}")).unwrap();
        a.hub.store(key, Source::Global, (name,)).unwrap();
    }
    // A key put before is still updated past the bound.
    let first = a.hub.key("Loot.A").unwrap();
    a.hub.store(first, Source::Global, ("A2",)).unwrap();
    // Every store is kept here all the same.
    let d = a.hub.key("Loot.D").unwrap();
    assert!(a.hub.stored(d, Source::Global).is_some());
    assert_eq!(a.bridge.stats().stores_refused, 2);
    let refusals: Vec<_> = a
        .bridge
        .take_events()
        .into_iter()
        .filter(|e| matches!(e, BridgeEvent::NotSent { .. }))
        .collect();
    assert_eq!(refusals.len(), 1, "reported once: {refusals:?}");
    assert!(
        refusals[0].to_string().contains("`Loot.D`")
            && refusals[0].to_string().contains("max_stored_keys"),
        "{}",
        refusals[0]
    );
    assert!(pump_until(&[&a], || a.bridge.waiting() == 0));

    // A later node replays exactly the three keys that were put.
    let b = Node::start(sharing(&server, &["Loot"]));
    ready(&[&b]);
    pump_for(&[&a, &b], Duration::from_millis(500));
    let heard = b.record("Loot");
    let mut keys: Vec<String> = heard.borrow().iter().map(|(k, _)| k.clone()).collect();
    keys.sort();
    assert_eq!(keys, ["Loot.A", "Loot.B", "Loot.C"]);
    let a_value = heard
        .borrow()
        .iter()
        .find(|(k, _)| k == "Loot.A")
        .map(|(_, v)| format!("{:?}", v[0]));
    assert!(a_value.is_some_and(|v| v.contains("A2")));
}

/// Puts `count` 1 KiB values on distinct keys with a plain client, as a
/// hostile peer would; returns how many the server took.
fn flood(server: &Server, count: usize) -> usize {
    with_plain_client(server, async |client| {
        let js = async_nats::jetstream::new(client);
        let store = js.get_key_value("gantry_test").await.unwrap();
        let mut taken = 0;
        for i in 0..count {
            let put = store.put(format!("Loot.Flood{i}"), vec![0u8; 1024].into());
            if let Ok(Ok(_)) = tokio::time::timeout(PATIENCE, put).await {
                taken += 1;
            }
        }
        taken
    })
}

#[test]
fn a_hostile_peer_cannot_grow_the_cluster_store_past_its_bytes() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Loot"]).store_max_bytes(16 * 1024));
    ready(&[&a]);
    // The bucket is made (by this node) before anyone floods it.
    let key = a.hub.key("Loot.Kept").unwrap();
    a.hub.store(key, Source::Global, ("kept",)).unwrap();
    assert!(pump_until(&[&a], || a.bridge.waiting() == 0));
    pump_for(&[&a], Duration::from_millis(200));
    let taken = flood(&server, 64);
    assert!(
        (1..16).contains(&taken),
        "the server took {taken} of 64 1 KiB values into a 16 KiB store"
    );
}
