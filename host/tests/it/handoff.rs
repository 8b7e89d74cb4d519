//! Delivery handed off to an embedding (`gantry_host::handoff`): what the
//! hub answers about a key's lane, when it refuses, and that it tells of
//! every change that could make a kept answer wrong.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{Hub, ListenOptions, NoHandoff, Owner, Report, Source};

/// A hub whose key `K` carries (int, float), learned from one send.
fn hub_with_k() -> Hub {
    let hub = Hub::new();
    hub.send_str("K", Source::Global, (1i64, 0.5f64)).unwrap();
    hub
}

fn ids(hub: &Hub, key: &str) -> Vec<u64> {
    let key = hub.key(key).unwrap();
    hub.lane_snapshot(key, Source::Global)
        .unwrap()
        .listeners
        .iter()
        .map(|l| l.id.get())
        .collect()
}

#[test]
fn epoch_watchers_hear_every_change_a_kept_lane_depends_on() {
    let hub = hub_with_k();
    let heard = Rc::new(RefCell::new(Vec::new()));
    let h = heard.clone();
    hub.watch_epoch(move |epoch| h.borrow_mut().push(epoch));
    let moves = |heard: &Rc<RefCell<Vec<u64>>>| std::mem::take(&mut *heard.borrow_mut()).len();

    let before = hub.epoch();
    let listener = hub.listen("K", Source::Global, |_: i64| {}).unwrap();
    assert_eq!(*heard.borrow(), vec![hub.epoch()], "told the new epoch");
    assert_ne!(hub.epoch(), before);
    assert_eq!(moves(&heard), 1, "a listener came");
    drop(listener);
    assert_eq!(moves(&heard), 1, "a listener went");
    hub.send_str("New.Key", Source::Global, (1i64,)).unwrap();
    assert!(moves(&heard) >= 1, "a key's types were learned");
    hub.set_tracer(Some(Rc::new(|_: &gantry_host::TraceEvent<'_>| {})));
    assert_eq!(moves(&heard), 1, "tracing switched on");
    hub.set_checked(false);
    assert_eq!(moves(&heard), 1, "checked mode switched");
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    moves(&heard);
    hub.destroy(object).unwrap();
    assert_eq!(moves(&heard), 1, "an object was destroyed");
    hub.send_str("K", Source::Global, (2i64, 1.5f64)).unwrap();
    assert_eq!(moves(&heard), 0, "a plain send changes nothing");
}

#[test]
fn lane_snapshot_lists_listeners_in_delivery_order_with_partial_ones_above() {
    let hub = hub_with_k();
    let a = hub
        .listen_with(
            "K",
            Source::Global,
            ListenOptions::new().order(1),
            |_: i64| {},
        )
        .unwrap();
    let b = hub.listen("K", Source::Global, |_: i64| {}).unwrap();
    let parent_exact = hub.listen("Top", Source::Global, |_: i64| {}).unwrap();
    let parent_partial = hub
        .listen_with(
            "Top",
            Source::Global,
            ListenOptions::new().partial(),
            |_: i64| {},
        )
        .unwrap();
    hub.send_str("Top.K", Source::Global, (1i64, 0.5f64))
        .unwrap();
    assert_eq!(ids(&hub, "K"), vec![b.id().get(), a.id().get()]);
    assert_eq!(ids(&hub, "Top.K"), vec![parent_partial.id().get()]);
    let key = hub.key("K").unwrap();
    let lane = hub.lane_snapshot(key, Source::Global).unwrap();
    assert_eq!(lane.epoch, hub.epoch());
    assert_eq!(lane.params.len(), 2);
    drop(parent_exact);
}

#[test]
fn lane_snapshot_refuses_what_only_the_hub_can_deliver() {
    let hub = hub_with_k();
    let key = hub.key("K").unwrap();
    let fresh = hub.key("Not.Sent.Yet").unwrap();
    assert_eq!(
        hub.lane_snapshot(fresh, Source::Global).unwrap_err(),
        NoHandoff::Learning
    );
    let counted = hub
        .listen_with(
            "K",
            Source::Global,
            ListenOptions::new().times(2),
            |_: i64| {},
        )
        .unwrap();
    assert_eq!(
        hub.lane_snapshot(key, Source::Global).unwrap_err(),
        NoHandoff::SpecialListener
    );
    drop(counted);
    assert!(hub.lane_snapshot(key, Source::Global).is_ok());
    hub.set_tracer(Some(Rc::new(|_: &gantry_host::TraceEvent<'_>| {})));
    assert_eq!(
        hub.lane_snapshot(key, Source::Global).unwrap_err(),
        NoHandoff::Tracing
    );
    hub.set_tracer(None);
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    assert!(hub.lane_snapshot(key, Source::Object(obj)).is_ok());
    hub.destroy(obj).unwrap();
    assert_eq!(
        hub.lane_snapshot(key, Source::Object(obj)).unwrap_err(),
        NoHandoff::SourceGone,
        "a send from a destroyed object is the hub's error to report"
    );
    hub.set_checked(false);
    assert_eq!(
        hub.lane_snapshot(key, Source::Global).unwrap_err(),
        NoHandoff::Unchecked
    );
}

#[test]
fn lane_snapshot_drops_a_listener_whose_owner_is_gone_as_a_send_would() {
    let hub = hub_with_k();
    let owner = Rc::new(());
    let options = ListenOptions::new().owner(Owner::of(&owner));
    hub.listen_with("K", Source::Global, options, |_: i64| {})
        .unwrap()
        .detach();
    assert_eq!(ids(&hub, "K").len(), 1);
    drop(owner);
    assert_eq!(ids(&hub, "K"), Vec::<u64>::new());
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn is_listening_follows_removal_and_listener_failed_reports_like_the_hub() {
    let hub = hub_with_k();
    let handle = hub.listen("K", Source::Global, |_: i64| {}).unwrap();
    let id = handle.id();
    assert!(hub.is_listening(id));
    let key = hub.key("K").unwrap();
    let site = hub.lane_snapshot(key, Source::Global).unwrap().listeners[0]
        .site
        .clone();
    hub.listener_failed(key, "boom".into(), site.clone());
    assert_eq!(
        hub.take_reports(),
        vec![Report::ListenerFailed {
            key: "K".into(),
            message: "boom".into(),
            site,
        }]
    );
    drop(handle);
    assert!(!hub.is_listening(id));
}
