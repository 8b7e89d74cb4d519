//! The send (transient) path of a table: it reaches all-rows listeners as a
//! full reload only, wakes no slot listener, leaves the store untouched and
//! is not replayed; a `once` table is used up.

use gantry_host::collection::Update;
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, ListenOptions, Range, Serde, Source, with_removal,
};
use gantry_test_support::log::{log, taken};

use crate::support::collections::{KEY, hub, items, store, watch_rows, watch_slot, watch_updates};

#[test]
fn transient_send_reaches_all_rows_listeners_as_a_full_reload_only() {
    let (hub, key) = hub();
    let rows_log = log();
    let slot_log = log();
    let _r = watch_rows(&hub, ALL_ROWS, &rows_log);
    let _s = watch_slot(&hub, 1, &slot_log);
    let (seen, _u) = watch_updates(&hub);
    hub.send(key, Source::Global, (Serde(items(3)),)).unwrap();
    assert_eq!(taken(&rows_log), ["0:0", "1:1", "2:2"]);
    assert!(
        taken(&slot_log).is_empty(),
        "slot listeners never fire on a send"
    );
    assert!(seen.borrow()[0].is_full_reload());
    assert_eq!(seen.borrow()[0].total, 3);
}

#[test]
fn transient_send_leaves_the_store_and_its_row_count_untouched() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let before = hub.stored(key, Source::Global).unwrap();
    let (seen, _u) = watch_updates(&hub);
    seen.borrow_mut().clear();
    hub.send(key, Source::Global, (Serde(items(3)),)).unwrap();
    assert_eq!(hub.stored(key, Source::Global).unwrap(), before);
    seen.borrow_mut().clear();
    // The store still diffs against its own 10 rows, not the sent 3.
    store(&hub, key, &items(10));
    assert!(seen.borrow().is_empty());
    store(&hub, key, &items(11));
    let u = seen.borrow()[0].clone();
    assert_eq!((u.total, u.prev_total), (11, 10));
    assert_eq!(u.ranges(), [Range::new(10, 1)]);
}

#[test]
fn transient_send_is_not_replayed_to_late_listeners() {
    let (hub, key) = hub();
    hub.send(key, Source::Global, (Serde(items(3)),)).unwrap();
    let log = log();
    let _r = watch_rows(&hub, ALL_ROWS, &log);
    assert!(taken(&log).is_empty());
}

/// A once table is a send's rows kept until somebody hears them: live or
/// replayed, it reaches all-rows and whole-table listeners as a full
/// reload (slots never), is used up by the first listener it reaches, and
/// is nobody's previous table.
#[test]
fn once_table_reaches_row_listeners_as_a_send_live_or_replayed_and_is_used_up() {
    let (hub, key) = hub();
    let (rows, slot) = (log(), log());
    let _s = watch_slot(&hub, 1, &slot);
    hub.once(key, Source::Global, (Serde(items(3)),)).unwrap();
    assert!(taken(&slot).is_empty(), "a slot never hears a send's rows");
    assert!(
        hub.stored(key, Source::Global).is_some(),
        "kept: nobody heard it"
    );
    let (seen, _u) = watch_updates(&hub);
    assert!(seen.borrow()[0].is_full_reload());
    assert_eq!(
        (seen.borrow()[0].total, seen.borrow()[0].prev_total),
        (3, 3)
    );
    assert!(hub.stored(key, Source::Global).is_none(), "used up");
    let _late = watch_rows(&hub, ALL_ROWS, &rows);
    assert!(taken(&rows).is_empty());

    hub.once(key, Source::Global, (Serde(items(2)),)).unwrap();
    assert_eq!(taken(&rows), ["0:0", "1:1"], "heard live");
    assert!(hub.stored(key, Source::Global).is_none());
    // The store diffs against its own tables only.
    seen.borrow_mut().clear();
    store(&hub, key, &items(2));
    let u = seen.borrow()[0].clone();
    assert_eq!((u.total, u.prev_total), (2, 0));
}

#[test]
fn transient_send_wakes_no_slot_listener_of_any_kind() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let slots = log();
    let all = log();
    let _a = watch_slot(&hub, 1, &slots);
    let _b = watch_slot(&hub, with_removal(1), &slots);
    let _c = watch_slot(&hub, with_removal(5), &slots);
    let _d = watch_rows(&hub, 0, &slots);
    let _e = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &all);
    let (seen, _u) = watch_updates(&hub);
    taken(&slots);
    taken(&all);
    seen.borrow_mut().clear();
    // Fewer rows than stored, then the same number with every row changed.
    hub.send(key, Source::Global, (Serde(items(3)),)).unwrap();
    let mut changed = items(10);
    for row in &mut changed {
        row.count += 1;
    }
    hub.send(key, Source::Global, (Serde(changed),)).unwrap();
    assert!(
        taken(&slots).is_empty(),
        "slot listeners never fire on a send"
    );
    // All rows, live, no removal notices: there is no previous table.
    let mut expected: Vec<String> = (0..3).map(|r| format!("{r}:{r}")).collect();
    expected.extend((0..10).map(|r| format!("{r}:{r}")));
    assert_eq!(taken(&all), expected);
    let seen = std::mem::take(&mut *seen.borrow_mut());
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(Update::is_full_reload));
    assert_eq!((seen[0].total, seen[1].total), (3, 10));
}

#[test]
fn transient_send_reaches_all_rows_listeners_on_the_tiers_a_send_reaches() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let log = log();
    for (name, scope) in [
        ("object", Source::Object(object)),
        ("world", Source::World(world)),
        ("global", Source::Global),
    ] {
        let l = log.clone();
        hub.listen_rows(
            KEY,
            scope,
            ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, id: i64| l.borrow_mut().push(format!("{name} {row}:{id}")),
        )
        .unwrap()
        .detach();
    }
    hub.send(key, Source::Object(object), (Serde(items(1)),))
        .unwrap();
    let mut heard = taken(&log);
    heard.sort();
    assert_eq!(heard, ["global 0:0", "object 0:0", "world 0:0"]);
    hub.send(key, Source::World(world), (Serde(items(1)),))
        .unwrap();
    let mut heard = taken(&log);
    heard.sort();
    assert_eq!(heard, ["global 0:0", "world 0:0"]);
    hub.send(key, Source::Global, (Serde(items(1)),)).unwrap();
    assert_eq!(taken(&log), ["global 0:0"]);
}

/// "Row dispatch needs no storage" — any dispatch of an array of
/// structs reaches the all-rows listeners (as a full reload when there is
/// no previous table). `OnceObjectMessage` is a dispatch of the table (kept
/// until the first listener consumes it), so a live all-rows listener
/// hears its rows; a slot listener, with no change set, stays quiet.
#[test]
fn once_message_of_a_table_reaches_all_rows_listeners_live() {
    let (hub, key) = hub();
    let rows = log();
    let slot = log();
    let _r = watch_rows(&hub, ALL_ROWS, &rows);
    let _s = watch_slot(&hub, 1, &slot);
    hub.once(key, Source::Global, (Serde(items(3)),)).unwrap();
    assert_eq!(taken(&rows), ["0:0", "1:1", "2:2"]);
}

/// the send path is always a full reload with no change set and
/// leaves the per-source row count alone, so a removal listener is told
/// no removal by a send smaller than the stored table, and the next store
/// still diffs against the stored table (identical: nothing).
#[test]
fn send_smaller_than_the_stored_table_tells_no_removal_and_the_next_store_still_diffs() {
    let (hub, key) = hub();
    store(&hub, key, &items(5));
    let all = log();
    let _a = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &all);
    let (seen, _h) = watch_updates(&hub);
    taken(&all);
    seen.borrow_mut().clear();
    hub.send(key, Source::Global, (Serde(items(2)),)).unwrap();
    assert_eq!(taken(&all), ["0:0", "1:1"]);
    let u = seen.borrow_mut().remove(0);
    assert!(u.is_full_reload());
    assert_eq!(u.total, 2);
    store(&hub, key, &items(5));
    assert!(taken(&all).is_empty(), "identical to the stored table");
    assert!(seen.borrow().is_empty());
    store(&hub, key, &items(4));
    assert_eq!(taken(&all), [format!("{}:0", !4)]);
}
