//! A fixed row is a position, not an element: a slot listener fires when
//! its row changes (an edit, an insert or removal before it moving another
//! row in), not for other rows, and when shrunk past only if it asked for
//! removal. Indices follow the tilde rule (`~n` from the end).

use gantry_host::collection::{Selector, Update};
use gantry_host::{ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Hub, Key, Range, Source, with_removal};
use gantry_test_support::log::{Log, log, taken};

use crate::support::collections::{Item, hub, item, items, store, watch_rows, watch_slot};

/// Ten stored rows and a slot-5 listener that already saw the replay.
fn ten_rows_and_slot(index: i32) -> (Hub, Key, Log, gantry_host::ListenerHandle) {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let log = log();
    let handle = watch_slot(&hub, index, &log);
    assert_eq!(taken(&log), ["5 id=5"], "late replay of the slot");
    (hub, key, log, handle)
}

#[test]
fn slot_fires_when_its_row_is_edited() {
    let (hub, key, log, _h) = ten_rows_and_slot(5);
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(5).unwrap().unwrap().id = 55;
    }
    assert_eq!(taken(&log), ["5 id=55"]);
}

#[test]
fn slot_does_not_fire_when_another_row_is_edited() {
    let (hub, key, log, _h) = ten_rows_and_slot(5);
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(3).unwrap().unwrap().count -= 1;
    }
    assert!(taken(&log).is_empty());
}

#[test]
fn slot_fires_on_insert_before_it_with_the_row_moved_in() {
    let (hub, key, log, _h) = ten_rows_and_slot(5);
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.insert(3, &item(100)).unwrap();
    }
    // The old row 4 moved into position 5.
    assert_eq!(taken(&log), ["5 id=4"]);
}

#[test]
fn slot_fires_on_remove_before_it_with_the_row_moved_in() {
    let (hub, key, log, _h) = ten_rows_and_slot(5);
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.remove_at(3).unwrap().unwrap();
    }
    // The old row 6 moved into position 5.
    assert_eq!(taken(&log), ["5 id=6"]);
}

#[test]
fn slot_does_not_fire_on_insert_or_remove_after_it() {
    let (hub, key, log, _h) = ten_rows_and_slot(5);
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.insert(8, &item(100)).unwrap();
    }
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.remove_at(8).unwrap().unwrap();
    }
    assert!(taken(&log).is_empty());
}

#[test]
fn slot_shrunk_past_fires_only_when_removal_was_asked() {
    let (hub, key, plain, _a) = ten_rows_and_slot(5);
    let told = log();
    let _b = watch_slot(&hub, with_removal(5), &told);
    assert_eq!(taken(&told), ["5 id=5"]);
    hub.stored_array(key, Source::Global).set_len(3);
    assert!(taken(&plain).is_empty());
    // Told once, with a default-valued stand-in.
    assert_eq!(taken(&told), ["gone 5 id=0"]);
}

#[test]
fn slot_fires_again_when_the_table_grows_back() {
    let (hub, key, log, _h) = ten_rows_and_slot(5);
    store(&hub, key, &items(3));
    assert!(taken(&log).is_empty());
    store(&hub, key, &items(8));
    assert_eq!(taken(&log), ["5 id=5"]);
}

#[test]
fn slot_rules_hold_for_a_re_store_too() {
    let (hub, key, log, _h) = ten_rows_and_slot(5);
    let mut rows = items(10);
    rows.insert(3, item(100));
    store(&hub, key, &rows);
    assert_eq!(taken(&log), ["5 id=4"]);
    rows[9].count += 1; // row 9: after the slot
    store(&hub, key, &rows);
    assert!(taken(&log).is_empty());
}

#[test]
fn index_encoding_is_the_tilde_rule_with_i32_max_for_every_row() {
    assert_eq!(ALL_ROWS, i32::MAX);
    assert_eq!(ALL_ROWS_WITH_REMOVAL, !i32::MAX);
    assert_eq!(with_removal(5), !5);
    assert_eq!(with_removal(5), -6);
    assert_eq!(with_removal(0), -1);
    assert_eq!(with_removal(ALL_ROWS), ALL_ROWS_WITH_REMOVAL);
    let decoded = |index| {
        let s = Selector::decode(index);
        (s.slot, s.removal)
    };
    assert_eq!(decoded(5), (Some(5), false));
    assert_eq!(decoded(with_removal(5)), (Some(5), true));
    assert_eq!(decoded(0), (Some(0), false));
    assert_eq!(decoded(with_removal(0)), (Some(0), true));
    assert_eq!(decoded(ALL_ROWS), (None, false));
    assert_eq!(decoded(ALL_ROWS_WITH_REMOVAL), (None, true));
}

#[test]
fn update_row_reads_the_same_tilde_rule_as_the_listen_site() {
    let mut u = Update::new(3, 10, &[Range::new(3, 7)]);
    assert_eq!((u.total, u.prev_total), (3, 10));
    assert_eq!(u.ranges(), [Range::new(3, 7)]);
    assert!(!u.is_full_reload());
    u.row = 2;
    assert!(!u.is_row_removed());
    assert_eq!(u.get_row(), 2);
    u.row = !5;
    assert!(u.is_row_removed());
    assert_eq!(u.get_row(), 5);
    assert!(Update::new(4, 4, &[]).is_full_reload());
}

#[test]
fn slot_table_holds_line_by_line_for_a_whole_table_re_store() {
    type Edit = fn(&mut Vec<Item>);
    let cases: [(&str, Edit, &[&str]); 6] = [
        ("row 5 edited", |r| r[5].count += 1, &["5 id=5"]),
        ("row 3 edited", |r| r[3].count += 1, &[]),
        ("insert at 3", |r| r.insert(3, item(100)), &["5 id=4"]),
        ("remove at 3", |r| drop(r.remove(3)), &["5 id=6"]),
        ("insert at 8", |r| r.insert(8, item(100)), &[]),
        ("remove at 8", |r| drop(r.remove(8)), &[]),
    ];
    for (what, edit, expected) in cases {
        for index in [5, with_removal(5)] {
            let (hub, key) = hub();
            store(&hub, key, &items(10));
            let log = log();
            let _s = watch_slot(&hub, index, &log);
            assert_eq!(taken(&log), ["5 id=5"], "{what}: the replay");
            let mut rows = items(10);
            edit(&mut rows);
            store(&hub, key, &rows);
            assert_eq!(taken(&log), expected, "{what} (index {index})");
        }
    }
}

#[test]
fn slot_asking_for_removal_is_told_exactly_once_then_again_live_when_grown_back() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let told = log();
    let plain = log();
    let _a = watch_slot(&hub, with_removal(5), &told);
    let _b = watch_slot(&hub, 5, &plain);
    taken(&told);
    taken(&plain);
    store(&hub, key, &items(3));
    assert_eq!(taken(&told), ["gone 5 id=0"]);
    assert!(taken(&plain).is_empty());
    // Still gone: not told again, however the table changes meanwhile.
    store(&hub, key, &items(2));
    let mut rows = items(2);
    rows[0].count += 1;
    store(&hub, key, &rows);
    hub.stored_array(key, Source::Global).set_len(1);
    assert!(taken(&told).is_empty(), "told exactly once");
    assert!(taken(&plain).is_empty());
    // The subscription was never invalidated: growing back calls both.
    store(&hub, key, &items(8));
    assert_eq!(taken(&told), ["5 id=5"]);
    assert_eq!(taken(&plain), ["5 id=5"]);
}

#[test]
fn slot_asking_for_removal_is_not_told_for_a_position_that_never_existed() {
    let (hub, key) = hub();
    store(&hub, key, &items(3));
    let told = log();
    let all = log();
    let _a = watch_slot(&hub, with_removal(5), &told);
    let _b = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &all);
    assert!(taken(&told).is_empty(), "no row 5 to replay");
    assert_eq!(taken(&all), ["0:0", "1:1", "2:2"]);
    store(&hub, key, &items(4));
    assert!(taken(&told).is_empty(), "row 5 never existed: not gone");
    assert_eq!(taken(&all), ["3:3"], "a growth has no removals");
    store(&hub, key, &items(6));
    assert_eq!(taken(&told), ["5 id=5"]);
}
