//! Collection messages: a spec audit against references `001_…` (long
//! form) and `004_…` (reference form) and issue 4, for the rules that
//! `collection.rs` does not already pin down. One test per rule, named
//! after it.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{MAX_ROWS, RowPath, Selector, Spans, Update};
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Hub, Key, ListenOptions, Owner, Range, Report, Serde, Source,
    Value, with_removal,
};

mod support;

use support::collections::{
    Item, KEY, Updates, hub, item, items, store, watch_rows, watch_slot, watch_updates,
};
use support::log::{log, taken};

fn only(updates: &Updates) -> Update {
    let seen = std::mem::take(&mut *updates.borrow_mut());
    assert_eq!(seen.len(), 1, "one publish expected, got {seen:?}");
    seen[0].clone()
}

/// A hub holding `n` stored rows and an update listener that has already
/// seen their replay.
fn stored_rows(n: i64) -> (Hub, Key, Updates, gantry_host::ListenerHandle) {
    let (hub, key) = hub();
    store(&hub, key, &items(n));
    let (seen, h) = watch_updates(&hub);
    seen.borrow_mut().clear();
    (hub, key, seen, h)
}

fn listener_failures(hub: &Hub) -> Vec<String> {
    hub.take_reports()
        .into_iter()
        .filter_map(|r| match r {
            Report::ListenerFailed { message, .. } => Some(message),
            _ => None,
        })
        .collect()
}

// ----- the index encoding and the update ---------------------------------------

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

// ----- recognition: from the value stored, every other shape unchanged -----------

#[test]
fn other_shapes_do_not_reach_collection_listeners_and_ordinary_listeners_are_unchanged() {
    let hub = Hub::new();
    let collection = log();
    let ordinary = log();
    for key in ["Shape.Int", "Shape.Two", "Shape.Ints", "Shape.One"] {
        let l = collection.clone();
        hub.listen_update(key, Source::Global, ListenOptions::default(), move |_| {
            l.borrow_mut().push(format!("update {key}"))
        })
        .unwrap()
        .detach();
        let l = collection.clone();
        hub.listen_rows_raw(
            key,
            Source::Global,
            ALL_ROWS,
            ListenOptions::default(),
            None,
            Rc::new(move |row, _, _| {
                l.borrow_mut().push(format!("row {row} {key}"));
                Ok(())
            }),
        )
        .unwrap();
        let l = ordinary.clone();
        hub.listen_with(
            key,
            Source::Global,
            ListenOptions::default(),
            move |_: Value| l.borrow_mut().push(key.to_owned()),
        )
        .unwrap()
        .detach();
    }
    let int = hub.key("Shape.Int").unwrap();
    let two = hub.key("Shape.Two").unwrap();
    let ints = hub.key("Shape.Ints").unwrap();
    let one = hub.key("Shape.One").unwrap();
    for round in 0..2 {
        hub.store(int, Source::Global, (7i64 + round,)).unwrap();
        hub.store(two, Source::Global, (Serde(items(2 + round)), round))
            .unwrap();
        hub.store(ints, Source::Global, (Serde(vec![1i64, 2, round]),))
            .unwrap();
        hub.store(one, Source::Global, (Serde(item(round)),))
            .unwrap();
        hub.send(two, Source::Global, (Serde(items(2)), round))
            .unwrap();
        hub.send(ints, Source::Global, (Serde(vec![round]),))
            .unwrap();
    }
    assert!(
        taken(&collection).is_empty(),
        "not a table: no row dispatch"
    );
    assert_eq!(
        taken(&ordinary),
        [
            "Shape.Int",
            "Shape.Two",
            "Shape.Ints",
            "Shape.One",
            "Shape.Two",
            "Shape.Ints"
        ]
        .repeat(2)
    );
}

#[test]
fn first_store_of_an_empty_table_reaches_table_listeners_as_a_late_listener_would_see_it() {
    let (hub, key) = hub();
    let (live, _a) = watch_updates(&hub);
    let rows = log();
    let _r = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &rows);
    store(&hub, key, &[]);
    let u = only(&live);
    assert_eq!((u.total, u.prev_total), (0, 0));
    // As if it had been there all along: the same as a late listener's replay.
    let (late, _b) = watch_updates(&hub);
    assert_eq!(only(&late), u);
    assert!(taken(&rows).is_empty(), "no rows, no row calls");
    // Storing the empty table again is an identical store: nothing.
    store(&hub, key, &[]);
    assert!(live.borrow().is_empty() && late.borrow().is_empty());
}

#[test]
fn storing_an_empty_table_over_rows_is_a_shrink_to_nothing() {
    let (hub, key, seen, _h) = stored_rows(3);
    let told = log();
    let quiet = log();
    let _a = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &told);
    let _b = watch_rows(&hub, ALL_ROWS, &quiet);
    taken(&told);
    taken(&quiet);
    store(&hub, key, &[]);
    let u = only(&seen);
    assert_eq!((u.total, u.prev_total), (0, 3));
    assert_eq!(u.ranges(), [Range::new(0, 3)]);
    assert_eq!(taken(&told), ["-1:0", "-2:0", "-3:0"]);
    assert!(taken(&quiet).is_empty());
}

// ----- a resize widens the ranges to the tail ------------------------------------

#[test]
fn a_resize_widens_the_ranges_to_the_tail() {
    // Re-store, shrinking, with a change before the cut.
    let (hub, key, seen, _h) = stored_rows(10);
    let mut rows = items(3);
    rows[1].count += 1;
    store(&hub, key, &rows);
    let u = only(&seen);
    assert_eq!((u.total, u.prev_total), (3, 10));
    assert_eq!(u.ranges(), [Range::new(1, 9)]);

    // The writer: a row edit, then a row added.
    let (hub, key, seen, _h) = stored_rows(10);
    {
        let mut arr = hub.stored_array(key, Source::Global);
        arr.get_mut(2);
        arr.add(gantry_host::to_value(&item(10)).unwrap());
    }
    let u = only(&seen);
    assert_eq!((u.total, u.prev_total), (11, 10));
    assert_eq!(u.ranges(), [Range::new(2, 9)]);

    // The writer: a removal near the end.
    let (hub, key, seen, _h) = stored_rows(10);
    hub.stored_array(key, Source::Global).remove_at(7);
    let u = only(&seen);
    assert_eq!((u.total, u.prev_total), (9, 10));
    assert_eq!(u.ranges(), [Range::new(7, 3)]);
}

#[test]
fn a_removal_in_the_middle_of_a_table_stored_whole_is_one_wide_span() {
    let (hub, key, seen, _h) = stored_rows(10);
    let mut rows = items(10);
    rows.remove(3);
    store(&hub, key, &rows);
    let u = only(&seen);
    assert_eq!((u.total, u.prev_total), (9, 10));
    assert_eq!(u.ranges(), [Range::new(3, 7)]);
}

// ----- §6: the slot table, on the store (diff) path -------------------------------

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

// ----- removal notices --------------------------------------------------------------

#[test]
fn removal_listener_is_called_7_times_when_a_stored_table_shrinks_from_10_to_3() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let told = log();
    let quiet = log();
    let _a = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &told);
    let _b = watch_rows(&hub, ALL_ROWS, &quiet);
    taken(&told);
    taken(&quiet);
    store(&hub, key, &items(3));
    let expected: Vec<String> = (3..10).map(|r| format!("{}:0", !r)).collect();
    assert_eq!(taken(&told), expected);
    assert!(taken(&quiet).is_empty());
    // And the writer's `empty`: every row gone.
    hub.stored_array(key, Source::Global).empty();
    let expected: Vec<String> = (0..3).map(|r| format!("{}:0", !r)).collect();
    assert_eq!(taken(&told), expected);
    assert!(taken(&quiet).is_empty());
}

#[test]
fn removed_row_is_a_default_valued_stand_in_for_every_row_form() {
    let (hub, key) = hub();
    store(&hub, key, &items(5));
    let log = log();
    let l = log.clone();
    let _typed = hub
        .listen_rows(
            KEY,
            Source::Global,
            ALL_ROWS_WITH_REMOVAL,
            ListenOptions::default(),
            move |row: i32, id: i64, name: String, count: i64, u: &Update| {
                l.borrow_mut().push(format!(
                    "typed {row} {} {} {id} {name:?} {count} of {} was {}",
                    u.get_row(),
                    u.is_row_removed(),
                    u.total,
                    u.prev_total
                ))
            },
        )
        .unwrap();
    let l = log.clone();
    hub.listen_rows_raw(
        KEY,
        Source::Global,
        with_removal(4),
        ListenOptions::default(),
        None,
        Rc::new(move |row, item, u| {
            let s = item.as_struct().expect("a struct stand-in");
            l.borrow_mut().push(format!(
                "raw {row} {} {} {} {} {}",
                s.name,
                s.get("id").unwrap(),
                s.get("name").unwrap(),
                s.get("count").unwrap(),
                u.is_row_removed()
            ));
            Ok(())
        }),
    )
    .unwrap();
    taken(&log);
    hub.stored_array(key, Source::Global).set_len(3);
    assert_eq!(
        taken(&log),
        [
            "typed -4 3 true 0 \"\" 0 of 3 was 5",
            "typed -5 4 true 0 \"\" 0 of 3 was 5",
            "raw -5 Item 0 \"\" 0 true",
        ]
    );
    assert!(listener_failures(&hub).is_empty());
}

#[test]
fn removed_row_stand_in_of_an_observed_struct_reads_as_defaults() {
    // Nothing declared: the table learns the key and the struct from the
    // first store.
    let hub = Hub::new();
    let key = hub.key("Loot.Rows").unwrap();
    hub.store(key, Source::Global, (Serde(items(4)),)).unwrap();
    let log = log();
    let l = log.clone();
    let _r = hub
        .listen_rows(
            "Loot.Rows",
            Source::Global,
            ALL_ROWS_WITH_REMOVAL,
            ListenOptions::default(),
            move |row: i32, id: i64, name: String| {
                l.borrow_mut().push(format!("{row} {id} {name:?}"))
            },
        )
        .unwrap();
    taken(&log);
    hub.store(key, Source::Global, (Serde(items(2)),)).unwrap();
    assert_eq!(taken(&log), ["-3 0 \"\"", "-4 0 \"\""]);
    assert!(listener_failures(&hub).is_empty());
}

// ----- an identical store publishes nothing, to any form ------------------------------

#[test]
fn identical_store_wakes_no_collection_listener_of_any_form() {
    let (hub, key) = hub();
    store(&hub, key, &items(5));
    let log = log();
    let (seen, _u) = watch_updates(&hub);
    let l = log.clone();
    let _t = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |v, _| l.borrow_mut().push(format!("table {}", v.len())),
        )
        .unwrap();
    let _s = watch_slot(&hub, 2, &log);
    let _w = watch_slot(&hub, with_removal(2), &log);
    let _a = watch_rows(&hub, ALL_ROWS, &log);
    let _b = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &log);
    taken(&log);
    seen.borrow_mut().clear();
    store(&hub, key, &items(5));
    {
        // A writer that only reads publishes nothing either.
        let mut arr = hub.stored_array(key, Source::Global);
        assert!(arr.get(1).is_some());
        assert_eq!(arr.rows().len(), 5);
        assert!(arr.get_mut(5).is_none(), "no row 5: nothing marked");
        assert!(!arr.set(9, Value::Nil));
        assert!(!arr.insert(6, Value::Nil));
        assert!(arr.remove_at(5).is_none());
        assert!(arr.spans().is_empty());
    }
    assert!(taken(&log).is_empty());
    assert!(seen.borrow().is_empty());
}

// ----- the writer's operations and their spans ----------------------------------------

#[test]
fn writer_operations_note_the_rows_they_move() {
    type Op = fn(&mut gantry_host::StoredArray<'_>);
    /// What the op is, the op, (total, prev_total) and the ranges after it.
    type Case<'a> = (&'a str, Op, (i32, i32), &'a [Range]);
    let cases: [Case<'_>; 7] = [
        (
            "insert at 3",
            |a| assert!(a.insert(3, gantry_host::to_value(&item(100)).unwrap())),
            (11, 10),
            &[Range::new(3, 8)],
        ),
        (
            "insert at the end",
            |a| assert!(a.insert(10, gantry_host::to_value(&item(100)).unwrap())),
            (11, 10),
            &[Range::new(10, 1)],
        ),
        (
            "remove at 3",
            |a| drop(a.remove_at(3).unwrap()),
            (9, 10),
            &[Range::new(3, 7)],
        ),
        (
            "set length 12",
            |a| assert!(a.set_len(12)),
            (12, 10),
            &[Range::new(10, 2)],
        ),
        (
            "set length 4",
            |a| assert!(a.set_len(4)),
            (4, 10),
            &[Range::new(4, 6)],
        ),
        ("empty", |a| a.empty(), (0, 10), &[Range::new(0, 10)]),
        (
            "set row 6 then mutable get of row 2",
            |a| {
                assert!(a.set(6, gantry_host::to_value(&item(100)).unwrap()));
                a.get_mut(2).unwrap();
            },
            (10, 10),
            &[Range::new(2, 1), Range::new(6, 1)],
        ),
    ];
    for (what, op, (total, prev_total), ranges) in cases {
        let (hub, key, seen, _h) = stored_rows(10);
        {
            let mut arr = hub.stored_array(key, Source::Global);
            op(&mut arr);
            assert!(seen.borrow().is_empty(), "{what}: nothing before the end");
        }
        let u = only(&seen);
        assert_eq!((u.total, u.prev_total), (total, prev_total), "{what}");
        assert_eq!(u.ranges(), ranges, "{what}");
    }
}

#[test]
fn writer_grows_with_default_valued_rows() {
    let (hub, key, _seen, _h) = stored_rows(2);
    hub.stored_array(key, Source::Global).set_len(4);
    let stored = hub.stored(key, Source::Global).unwrap();
    let rows: Vec<Item> = gantry_host::from_value(&stored[0]).unwrap();
    assert_eq!(rows, [item(0), item(1), Item::default(), Item::default()]);
}

#[test]
fn writer_refuses_a_length_no_table_can_hold_without_panicking() {
    let (hub, key, seen, _h) = stored_rows(3);
    {
        let mut arr = hub.stored_array(key, Source::Global);
        assert!(!arr.set_len(usize::MAX));
        assert!(!arr.set_len(MAX_ROWS + 1));
        assert_eq!(arr.len(), 3);
        assert!(arr.spans().is_empty());
    }
    assert!(
        seen.borrow().is_empty(),
        "nothing changed, nothing published"
    );
    assert_eq!(MAX_ROWS, i32::MAX as usize);
}

#[test]
fn writer_on_an_absent_store_creates_the_table_and_a_late_listener_is_replayed_it() {
    let (hub, key) = hub();
    let (seen, _u) = watch_updates(&hub);
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        assert!(arr.is_empty());
        arr.add(&item(1)).unwrap();
        arr.add(&item(2)).unwrap();
    }
    let u = only(&seen);
    assert_eq!((u.total, u.prev_total), (2, 0));
    assert_eq!(u.ranges(), [Range::new(0, 2)]);
    let log = log();
    let _r = watch_rows(&hub, ALL_ROWS, &log);
    assert_eq!(taken(&log), ["0:1", "1:2"]);
}

// ----- §11: at most eight spans, then a full reload --------------------------------------

#[test]
fn spans_merge_in_any_order_into_ascending_disjoint_runs() {
    let mut spans = Spans::new();
    for (index, count) in [(10, 2), (0, 3), (3, 2), (11, 5), (20, 0), (-1, 3), (30, -2)] {
        spans.add(index, count);
    }
    assert_eq!(spans.ranges(), [Range::new(0, 5), Range::new(10, 6)]);
    assert!(!spans.is_full());
    let mut eight = Spans::new();
    for i in 0..8 {
        eight.add(i * 3, 1);
    }
    assert_eq!(eight.ranges().len(), 8);
    assert!(!eight.is_full(), "eight disjoint spans are kept");
    eight.add(30, 1);
    assert!(eight.is_full());
    assert!(eight.ranges().is_empty());
    eight.add(0, 1);
    assert!(eight.is_full(), "a full reload stays one");
}

#[test]
fn writer_past_eight_disjoint_spans_publishes_a_full_reload_that_wakes_every_row() {
    let (hub, key, seen, _h) = stored_rows(30);
    let rows = log();
    let slot = log();
    let _r = watch_rows(&hub, ALL_ROWS, &rows);
    let _s = watch_slot(&hub, 29, &slot);
    taken(&rows);
    taken(&slot);
    // Eight disjoint rows: eight ranges, slot 29 not among them.
    {
        let mut arr = hub.stored_array(key, Source::Global);
        for r in (0..16).step_by(2) {
            arr.get_mut(r);
        }
    }
    let u = only(&seen);
    assert_eq!(u.ranges().len(), 8);
    assert_eq!(taken(&rows).len(), 8);
    assert!(taken(&slot).is_empty());
    // Nine: everything is reloaded, each row once, ascending.
    {
        let mut arr = hub.stored_array(key, Source::Global);
        for r in (0..18).step_by(2) {
            arr.get_mut(r);
        }
    }
    let u = only(&seen);
    assert!(u.is_full_reload());
    assert_eq!((u.total, u.prev_total), (30, 30));
    let expected: Vec<String> = (0..30).map(|r| format!("{r}:{r}")).collect();
    assert_eq!(taken(&rows), expected);
    assert_eq!(taken(&slot), ["29 id=29"]);
}

#[test]
fn re_store_with_more_than_eight_differing_runs_is_a_full_reload() {
    let (hub, key, seen, _h) = stored_rows(30);
    let mut rows = items(30);
    for r in (0..16).step_by(2) {
        rows[r].count += 1;
    }
    store(&hub, key, &rows);
    assert_eq!(only(&seen).ranges().len(), 8);
    for r in (0..18).step_by(2) {
        rows[r].count += 1;
    }
    store(&hub, key, &rows);
    let u = only(&seen);
    assert!(u.is_full_reload());
    assert_eq!((u.total, u.prev_total), (30, 30));
}

// ----- the send (transient) path --------------------------------------------------------

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

// ----- the whole-table view ---------------------------------------------------------------

#[test]
fn whole_table_view_is_the_stored_table_not_a_copy() {
    let (hub, key) = hub();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let _t = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |v, _| s.borrow_mut().push(v.rows().as_ptr() as usize),
        )
        .unwrap();
    store(&hub, key, &items(4));
    let stored = hub.stored(key, Source::Global).unwrap();
    let [Value::Array(rows)] = &*stored else {
        panic!("expected one array, got {stored:?}");
    };
    assert_eq!(*seen.borrow(), [rows.as_ptr() as usize]);
}

#[test]
fn whole_table_view_reads_rows_positionally_without_the_element_type() {
    let (hub, key) = hub();
    let log = log();
    let l = log.clone();
    let _t = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |v, u| {
                l.borrow_mut()
                    .push(format!("len {} total {}", v.len(), u.total));
                let found = v
                    .visit_row(2, |id: i64, name: String| {
                        l.borrow_mut().push(format!("row 2: {id} {name}"))
                    })
                    .unwrap();
                assert!(found);
                let missing = v
                    .visit_row(9, |id: i64| l.borrow_mut().push(format!("row 9: {id}")))
                    .unwrap();
                assert!(!missing, "no such row: Ok(false)");
                v.for_each(|row: i32, id: i64| l.borrow_mut().push(format!("{row}={id}")))
                    .unwrap();
                let typed: Vec<Item> = v.decode().unwrap();
                l.borrow_mut().push(format!("decoded {}", typed.len()));
            },
        )
        .unwrap();
    store(&hub, key, &items(3));
    assert_eq!(
        taken(&log),
        [
            "len 3 total 3",
            "row 2: 2 n2",
            "0=0",
            "1=1",
            "2=2",
            "decoded 3"
        ]
    );
}

// ----- lifetime: like any other listener ----------------------------------------------------

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

// ----- late replay --------------------------------------------------------------------------

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

// ----- §13: the decision is made on the first fire and remembered ---------------------------

#[test]
fn row_path_is_decided_on_the_first_fire_and_remembered() {
    let (hub, key) = hub();
    let h = hub
        .listen_rows(
            KEY,
            Source::Global,
            ALL_ROWS,
            ListenOptions::default(),
            |_: i32, _: i64, _: String, _: i64| {},
        )
        .unwrap();
    assert_eq!(hub.row_path(h.id()), Some(RowPath::Undecided));
    store(&hub, key, &items(2));
    assert_eq!(hub.row_path(h.id()), Some(RowPath::Fast));
    store(&hub, key, &items(5));
    assert_eq!(hub.row_path(h.id()), Some(RowPath::Fast));
}
