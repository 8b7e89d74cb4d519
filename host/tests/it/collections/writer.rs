//! The writer: edits are unseen until its scope ends (or an explicit
//! commit), then published once with the rows they moved; it never changes
//! a table someone holds, and a refused publish keeps the previous table.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{MAX_ROWS, Spans, Update};
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Hub, HubError, Key, Range, Source, Value, to_value,
};
use gantry_test_support::log::{log, taken};

use crate::support::collections::{
    Item, Updates, hub, item, items, store, watch_rows, watch_slot, watch_updates,
};

/// Rows past both the old and the new size are no change anybody can
/// read: clipped, and a writer whose every change is to such rows (a row
/// added and removed again) publishes nothing.
#[test]
fn writer_ranges_are_clipped_to_the_longer_table() {
    let mut spans = Spans::new();
    spans.add(2, 3);
    spans.add(8, 5);
    spans.add(20, 1);
    spans.clip(10);
    assert_eq!(spans.ranges(), [Range::new(2, 3), Range::new(8, 2)]);
    spans.clip(2);
    assert!(spans.is_empty());

    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let (seen, _h) = watch_updates(&hub);
    seen.borrow_mut().clear();
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.add(&item(10)).unwrap();
        assert_eq!(arr.remove_at(10).unwrap().unwrap(), item(10));
    }
    assert!(seen.borrow().is_empty(), "{:?}", seen.borrow());
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(3).unwrap().unwrap().id = 33;
        arr.add(&item(10)).unwrap();
        arr.remove_at(10);
    }
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].ranges(), [Range::new(3, 1)]);
}

#[test]
fn writer_publishes_once_at_scope_end_and_reads_never_mark() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let (seen, _h) = watch_updates(&hub);
    seen.borrow_mut().clear();
    {
        let arr = hub.stored_array_of::<Item>(key, Source::Global);
        assert_eq!(arr.get(4).unwrap().unwrap(), item(4));
        assert_eq!(arr.len(), 10);
    }
    assert!(seen.borrow().is_empty(), "a read publishes nothing");
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(5).unwrap().unwrap().count -= 1;
        arr.add(&item(1002)).unwrap();
        arr.remove_at(7).unwrap().unwrap();
        assert!(seen.borrow().is_empty(), "nothing before the scope ends");
    }
    let u = seen.borrow()[0].clone();
    assert_eq!(seen.borrow().len(), 1);
    assert_eq!((u.total, u.prev_total), (10, 10));
    // Same count (one added, one removed): no widening, the two spans stay,
    // the second ending at the last row (row 10 existed only in between).
    assert_eq!(u.ranges(), [Range::new(5, 1), Range::new(7, 3)]);
    let stored = hub.stored(key, Source::Global).unwrap();
    let rows: Vec<Item> = gantry_host::from_value(&stored[0]).unwrap();
    assert_eq!(rows[5].count, 49);
    assert_eq!(rows[7], item(8));
    assert_eq!(rows[9], item(1002));
}

fn stored_items(hub: &Hub, key: Key) -> Vec<Item> {
    let stored = hub.stored(key, Source::Global).unwrap();
    gantry_host::from_value(&stored[0]).unwrap()
}

#[test]
fn writer_row_edits_are_unseen_until_the_scope_ends_then_stored() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let (seen, _h) = watch_updates(&hub);
    seen.borrow_mut().clear();
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(5).unwrap().unwrap().count = 1;
        arr.get_mut(2).unwrap().unwrap().count = 2;
        // Writing the same row twice edits the one row.
        arr.get_mut(5).unwrap().unwrap().name = "five".into();
        // The writer reads its own edits; a reader of the store does not.
        assert_eq!(arr.get(5).unwrap().unwrap().count, 1);
        assert_eq!(arr.get(5).unwrap().unwrap().name, "five");
        assert_eq!(stored_items(&hub, key)[5], item(5));
    }
    let rows = stored_items(&hub, key);
    assert_eq!((rows[5].count, rows[5].name.as_str()), (1, "five"));
    assert_eq!(rows[2].count, 2);
    assert_eq!(rows[3], item(3));
    assert_eq!(seen.borrow().len(), 1);
    assert_eq!(
        seen.borrow()[0].ranges(),
        [Range::new(2, 1), Range::new(5, 1)]
    );
}

#[test]
fn writer_leaves_a_table_someone_holds_as_it_was() {
    let (hub, key) = hub();
    store(&hub, key, &items(4));
    // A caller keeps the stored arguments: they must not change under it.
    let held = hub.stored(key, Source::Global).unwrap();
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(1).unwrap().unwrap().count = 7;
    }
    let before: Vec<Item> = gantry_host::from_value(&held[0]).unwrap();
    assert_eq!(before, items(4));
    assert_eq!(stored_items(&hub, key)[1].count, 7);
}

#[test]
fn writer_row_edit_then_structural_edit_keeps_both() {
    let (hub, key) = hub();
    store(&hub, key, &items(5));
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(3).unwrap().unwrap().count = 33;
        arr.insert(0, &item(100)).unwrap();
        arr.get_mut(1).unwrap().unwrap().count = 11;
        assert_eq!(arr.len(), 6);
    }
    let rows = stored_items(&hub, key);
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[0], item(100));
    assert_eq!(rows[1].count, 11);
    assert_eq!(rows[4].count, 33);
}

#[test]
fn refused_writer_publish_keeps_the_previous_table() {
    let (hub, key) = hub();
    store(&hub, key, &items(3));
    // Whoever hears the refusal already sees the table as it was.
    let reports = Rc::new(RefCell::new(0));
    let (r, h) = (reports.clone(), hub.clone());
    hub.on_report(move |_| {
        assert_eq!(stored_items(&h, key), items(3));
        *r.borrow_mut() += 1
    });
    let result = {
        let mut arr = hub.stored_array(key, Source::Global);
        arr.get_mut(0).unwrap().clone_from(&Value::Int(5));
        arr.publish()
    };
    assert!(
        matches!(result, Err(HubError::Mismatch { .. })),
        "{result:?}"
    );
    assert_eq!(stored_items(&hub, key), items(3));
    assert!(*reports.borrow() > 0);
    // A later edit starts from the kept table.
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(2).unwrap().unwrap().count = 9;
    }
    let rows = stored_items(&hub, key);
    assert_eq!((rows[0].clone(), rows[2].count), (item(0), 9));
}

#[test]
fn writer_commit_publishes_now_and_the_scope_end_publishes_later_writes() {
    let (hub, key) = hub();
    store(&hub, key, &items(3));
    let log = log();
    let _l = watch_rows(&hub, ALL_ROWS, &log);
    taken(&log);
    let mut arr = hub.stored_array_owned(key, Source::Global);
    arr.get_mut(1);
    arr.commit().unwrap();
    assert_eq!(taken(&log), ["1:1"], "commit publishes the marked row");
    arr.commit().unwrap();
    assert!(
        taken(&log).is_empty(),
        "nothing new written: nothing published"
    );
    arr.get_mut(2);
    drop(arr);
    assert_eq!(
        taken(&log),
        ["2:2"],
        "the end of scope publishes what followed"
    );
}

#[test]
fn owned_writer_outlives_the_borrow_it_was_opened_from() {
    let (hub, key) = hub();
    let arr = {
        let scoped = hub.clone();
        scoped.stored_array_owned(key, Source::Global)
    };
    let mut arr = arr;
    arr.add(gantry_host::to_value(&item(7)).unwrap());
    drop(arr);
    let stored = hub.stored(key, Source::Global).expect("published on drop");
    match &*stored {
        [gantry_host::Value::Array(rows)] => assert_eq!(rows.len(), 1),
        other => panic!("expected one array, got {other:?}"),
    }
}

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

/// "Ranges: which rows now read differently". A writer that appends a
/// row and then removes row 0 ends where it began in size (10 → 11 → 10):
/// row 10 exists neither before nor after, so no range may name it — a
/// whole-table listener walking the ranges would index past the table.
#[test]
fn writer_ranges_never_name_a_row_past_both_the_old_and_the_new_size() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let (seen, _u) = watch_updates(&hub);
    let rows = log();
    let _r = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &rows);
    seen.borrow_mut().clear();
    taken(&rows);
    {
        let mut arr = hub.stored_array(key, Source::Global);
        arr.add(to_value(&item(100)).unwrap());
        assert!(arr.remove_at(0).is_some());
    }
    let updates = std::mem::take(&mut *seen.borrow_mut());
    assert_eq!(updates.len(), 1, "{updates:?}");
    let u = &updates[0];
    assert_eq!((u.total, u.prev_total), (10, 10));
    let bound = u.total.max(u.prev_total);
    for r in u.ranges() {
        assert!(
            r.end() <= bound,
            "range {r:?} names a row past both sizes ({bound}): {:?}",
            u.ranges()
        );
    }
    // Every row moved up by one: each is told once, live; nothing removed.
    let expected: Vec<String> = (0..10)
        .map(|r| format!("{r}:{}", r + 1))
        .collect::<Vec<_>>();
    let mut expected = expected;
    expected[9] = "9:100".into();
    assert_eq!(taken(&rows), expected);
}
