//! Late replay of a stored table: only to the arriving listener, on its own
//! source, after the ordinary store replay, with no removal and no slot past
//! the end.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, ListenOptions, Serde, Source, Value, with_removal,
};
use gantry_test_support::log::{log, taken};

use crate::support::collections::{KEY, hub, items, store, watch_rows, watch_slot, watch_updates};

#[test]
fn late_replay_of_a_stored_table() {
    let (hub, key) = hub();
    store(&hub, key, &items(4));
    let (seen, _u) = watch_updates(&hub);
    let u = seen.borrow()[0].clone();
    assert_eq!((u.total, u.prev_total), (4, 0));
    assert!(u.is_full_reload());
    let rows = log();
    let _r = watch_rows(&hub, ALL_ROWS, &rows);
    assert_eq!(taken(&rows), ["0:0", "1:1", "2:2", "3:3"]);
    let slot = log();
    let _s = watch_slot(&hub, 9, &slot);
    assert!(taken(&slot).is_empty(), "a slot past the end is not called");
}

#[test]
fn late_replay_reaches_only_the_arriving_listener_on_its_own_source() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let a = hub.spawn(world).unwrap();
    let b = hub.spawn(world).unwrap();
    hub.store(key, Source::Object(a), (Serde(items(2)),))
        .unwrap();
    let first = log();
    let l = first.clone();
    hub.listen_rows(
        KEY,
        Source::Object(a),
        ALL_ROWS,
        ListenOptions::default(),
        move |row: i32, id: i64| l.borrow_mut().push(format!("{row}:{id}")),
    )
    .unwrap()
    .detach();
    assert_eq!(taken(&first), ["0:0", "1:1"]);
    let second = log();
    let l = second.clone();
    hub.listen_rows(
        KEY,
        Source::Object(a),
        ALL_ROWS,
        ListenOptions::default(),
        move |row: i32, id: i64| l.borrow_mut().push(format!("{row}:{id}")),
    )
    .unwrap()
    .detach();
    assert_eq!(taken(&second), ["0:0", "1:1"]);
    assert!(taken(&first).is_empty(), "only the arriving listener");
    let other = log();
    let l = other.clone();
    hub.listen_rows(
        KEY,
        Source::Object(b),
        ALL_ROWS,
        ListenOptions::default(),
        move |row: i32, _: i64| l.borrow_mut().push(format!("{row}")),
    )
    .unwrap()
    .detach();
    assert!(taken(&other).is_empty(), "another source stores nothing");
}

#[test]
fn late_replay_of_a_table_follows_the_ordinary_store_replay_on_every_tier() {
    // Whatever an ordinary listener arriving late is replayed, a collection
    // listener arriving at the same place is replayed too.
    let (hub, key) = hub();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    hub.store(key, Source::Object(object), (Serde(items(2)),))
        .unwrap();
    for (name, scope, partial) in [
        ("object", Source::Object(object), false),
        ("world", Source::World(world), false),
        ("global", Source::Global, false),
        ("ancestor", Source::Object(object), true),
    ] {
        let listen_key = if partial { "Inv" } else { KEY };
        let mut options = ListenOptions::default();
        if partial {
            options = options.partial();
        }
        let plain = Rc::new(RefCell::new(0));
        let p = plain.clone();
        hub.listen_with(listen_key, scope, options.clone(), move |_: Value| {
            *p.borrow_mut() += 1
        })
        .unwrap()
        .detach();
        let table = Rc::new(RefCell::new(0));
        let t = table.clone();
        hub.listen_table(listen_key, scope, options, move |v, u| {
            assert_eq!((v.len(), u.total, u.prev_total), (2, 2, 0));
            assert!(u.is_full_reload());
            *t.borrow_mut() += 1
        })
        .unwrap()
        .detach();
        assert_eq!(*plain.borrow(), *table.borrow(), "{name}");
    }
}

#[test]
fn late_replay_calls_no_removal_and_no_slot_past_the_end() {
    let (hub, key) = hub();
    store(&hub, key, &items(3));
    let log = log();
    let _a = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &log);
    assert_eq!(taken(&log), ["0:0", "1:1", "2:2"]);
    let _b = watch_slot(&hub, with_removal(7), &log);
    let _c = watch_slot(&hub, 3, &log);
    assert!(taken(&log).is_empty());
    let _d = watch_slot(&hub, with_removal(2), &log);
    assert_eq!(taken(&log), ["2 id=2"]);
}

#[test]
fn an_empty_table_stored_first_reaches_a_whole_table_listener_there_all_along_and_a_late_one() {
    let (hub, key) = hub();
    let early = log();
    let l = early.clone();
    let _early = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, u| {
                l.borrow_mut().push(format!(
                    "{} rows of {} (was {})",
                    view.len(),
                    u.total,
                    u.prev_total
                ))
            },
        )
        .unwrap();
    store(&hub, key, &[]);
    assert_eq!(taken(&early), ["0 rows of 0 (was 0)"]);
    let late = log();
    let l = late.clone();
    let _late = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, u| {
                l.borrow_mut()
                    .push(format!("{} rows of {}", view.len(), u.total))
            },
        )
        .unwrap();
    assert_eq!(
        taken(&late),
        ["0 rows of 0"],
        "the initial empty list is replayed"
    );
    store(&hub, key, &[]);
    assert!(
        taken(&early).is_empty(),
        "an unchanged empty table publishes nothing"
    );
}
