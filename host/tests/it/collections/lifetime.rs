//! Collection listeners live like any other listener (id, owner, times,
//! handle); destroying an object drops its stored table and the listeners
//! sourced from it, and a row listener stops between rows when its owner goes.

use std::rc::Rc;

use gantry_host::{ALL_ROWS, ListenOptions, Owner, Serde, Source};
use gantry_test_support::log::{log, taken};

use crate::support::collections::{KEY, hub, items, store, watch_rows};

#[test]
fn collection_listeners_die_with_their_handle_or_owner() {
    let (hub, key) = hub();
    let log = log();
    let handle = watch_rows(&hub, ALL_ROWS, &log);
    let world = hub.create_world();
    let owner = hub.spawn(world).unwrap();
    let l = log.clone();
    hub.listen_update(
        KEY,
        Source::Global,
        ListenOptions::default().owner(Owner::Object(owner)),
        move |_| l.borrow_mut().push("owned".into()),
    )
    .unwrap()
    .detach();
    store(&hub, key, &items(1));
    assert_eq!(taken(&log), ["0:0", "owned"]);
    drop(handle);
    hub.destroy(owner).unwrap();
    store(&hub, key, &items(2));
    assert!(taken(&log).is_empty());
    assert_eq!(hub.listener_count(), 0);
}

/// An every-row listener reads a range's rows in one pass; between two
/// rows it is still asked whether it may be called: one whose owner goes
/// during row 3 hears no row 4.
#[test]
fn row_listener_stops_between_rows_when_its_owner_goes_mid_table() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let owner = hub.spawn(world).unwrap();
    let log = log();
    let l = log.clone();
    let h = hub.clone();
    hub.listen_rows(
        KEY,
        Source::Global,
        ALL_ROWS,
        ListenOptions::default().owner(Owner::Object(owner)),
        move |row: i32, id: i64| {
            l.borrow_mut().push(format!("{row}={id}"));
            if row == 3 {
                h.destroy(owner).unwrap();
            }
        },
    )
    .unwrap()
    .detach();
    store(&hub, key, &items(8));
    assert_eq!(taken(&log), ["0=0", "1=1", "2=2", "3=3"]);
    store(&hub, key, &items(9));
    assert!(taken(&log).is_empty());
}

#[test]
fn collection_listeners_unlisten_by_id_by_owner_and_by_times() {
    let (hub, key) = hub();
    let log = log();
    let by_id = watch_rows(&hub, ALL_ROWS, &log).detach();
    let owner = Rc::new(());
    let l = log.clone();
    hub.listen_update(
        KEY,
        Source::Global,
        ListenOptions::default().owner(Owner::of(&owner)),
        move |_| l.borrow_mut().push("owned".into()),
    )
    .unwrap()
    .detach();
    let l = log.clone();
    hub.listen_table(
        KEY,
        Source::Global,
        ListenOptions::default().times(1),
        move |_, _| l.borrow_mut().push("once".into()),
    )
    .unwrap()
    .detach();
    store(&hub, key, &items(1));
    assert_eq!(taken(&log), ["0:0", "owned", "once"]);
    assert!(hub.unlisten(by_id));
    store(&hub, key, &items(2));
    assert_eq!(taken(&log), ["owned"], "the id is gone, times used up");
    assert_eq!(hub.unlisten_owner(&Owner::of(&owner)), 1);
    store(&hub, key, &items(3));
    assert!(taken(&log).is_empty());
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn destroying_an_object_drops_its_stored_table_and_the_collection_listeners_sourced_from_it() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    hub.store(key, Source::Object(object), (Serde(items(3)),))
        .unwrap();
    let log = log();
    let l = log.clone();
    hub.listen_rows(
        KEY,
        Source::Object(object),
        ALL_ROWS,
        ListenOptions::default(),
        move |row: i32, id: i64| l.borrow_mut().push(format!("{row}:{id}")),
    )
    .unwrap()
    .detach();
    assert_eq!(taken(&log).len(), 3, "the replay");
    hub.destroy(object).unwrap();
    assert!(hub.stored(key, Source::Object(object)).is_none());
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn a_writer_open_across_its_objects_destruction_publishes_nothing_and_keeps_no_table() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    hub.store(key, Source::Object(object), (Serde(items(3)),))
        .unwrap();
    let mut writer = hub.stored_array(key, Source::Object(object));
    assert!(writer.set_len(5));
    hub.destroy(object).unwrap();
    assert!(matches!(
        writer.publish(),
        Err(gantry_host::HubError::NoSuchObject(o)) if o == object
    ));
    assert!(hub.stored(key, Source::Object(object)).is_none());
}
