//! What a re-store tells: only the runs of rows that differ (a resize widens
//! them to the tail), an identical store publishes nothing; spans merge into
//! ascending disjoint runs, and past eight of them it is a full reload.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{Spans, Update};
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Hub, Key, ListenOptions, Range, Serde, Source, Value,
    to_value, with_removal,
};
use gantry_test_support::log::{log, taken};

use crate::support::collections::{
    Item, KEY, Updates, hub, item, items, store, watch_rows, watch_slot, watch_updates,
};

#[test]
fn identical_store_publishes_nothing() {
    let (hub, key) = hub();
    let (seen, _h) = watch_updates(&hub);
    let plain = Rc::new(RefCell::new(0));
    let p = plain.clone();
    let _o = hub
        .listen(KEY, Source::Global, move |_: Serde<Vec<Item>>| {
            *p.borrow_mut() += 1
        })
        .unwrap();
    store(&hub, key, &items(10));
    store(&hub, key, &items(10));
    assert_eq!(seen.borrow().len(), 1, "only the first store changed rows");
    assert_eq!(seen.borrow()[0].ranges(), [Range::new(0, 10)]);
    // The ordinary whole-table listener keeps working unchanged.
    assert_eq!(*plain.borrow(), 2);
}

#[test]
fn restore_run_of_differing_rows_is_one_range() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let (seen, _h) = watch_updates(&hub);
    seen.borrow_mut().clear();
    let mut rows = items(10);
    for r in [2, 3, 4, 7] {
        rows[r].count += 1;
    }
    store(&hub, key, &rows);
    let u = seen.borrow()[0].clone();
    assert_eq!((u.total, u.prev_total), (10, 10));
    assert_eq!(u.ranges(), [Range::new(2, 3), Range::new(7, 1)]);
}

#[test]
fn restore_resize_widens_to_the_tail() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let (seen, _h) = watch_updates(&hub);
    seen.borrow_mut().clear();
    let mut rows = items(11);
    rows[2].count += 1;
    store(&hub, key, &rows);
    let u = seen.borrow()[0].clone();
    assert_eq!((u.total, u.prev_total), (11, 10));
    assert_eq!(u.ranges(), [Range::new(2, 9)]);
}

#[test]
fn span_merge_adjacent_then_bridging_add_leaves_no_overlap() {
    let mut spans = Spans::new();
    spans.add(0, 5);
    spans.add(5, 1);
    spans.add(5, 1);
    assert_eq!(spans.ranges(), [Range::new(0, 6)]);
    // Through the writer: a row listener sees each row once.
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let log = log();
    let _l = watch_rows(&hub, ALL_ROWS, &log);
    taken(&log);
    {
        let mut arr = hub.stored_array(key, Source::Global);
        for r in 0..5 {
            arr.get_mut(r);
        }
        arr.get_mut(5);
        arr.get_mut(5);
        assert_eq!(arr.spans().ranges(), [Range::new(0, 6)]);
    }
    let rows: Vec<String> = (0..6).map(|r| format!("{r}:{r}")).collect();
    assert_eq!(taken(&log), rows);
}

#[test]
fn span_merge_backward_sweep_counter_example_converges() {
    let mut spans = Spans::new();
    for (i, n) in [(0, 6), (6, 1), (20, 1), (7, 13)] {
        spans.add(i, n);
    }
    assert_eq!(spans.ranges(), [Range::new(0, 21)]);
    let (hub, key) = hub();
    store(&hub, key, &items(30));
    let log = log();
    let _l = watch_rows(&hub, ALL_ROWS, &log);
    taken(&log);
    {
        let mut arr = hub.stored_array(key, Source::Global);
        for r in (0..6).chain([6, 20]).chain(7..20) {
            arr.get_mut(r);
        }
    }
    let visited = taken(&log);
    let rows: Vec<String> = (0..21).map(|r| format!("{r}:{r}")).collect();
    assert_eq!(visited, rows, "no row visited twice, ascending");
}

#[test]
fn span_merge_more_than_eight_spans_is_a_full_reload() {
    let mut spans = Spans::new();
    for i in 0..9 {
        spans.add(i * 2, 1);
    }
    assert!(spans.is_full());
    assert!(spans.ranges().is_empty());
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

/// past eight spans the writer publishes a full reload; a full reload
/// that also shrinks still tells each removal listener once per removed
/// position ("told exactly once"), wakes every live slot (IsFullReload),
/// and a plain slot past the new end stays quiet.
#[test]
fn full_reload_past_eight_spans_with_a_shrink_tells_removals_once_and_wakes_every_live_slot() {
    let (hub, key) = hub();
    store(&hub, key, &items(20));
    let all = log();
    let gone_slot = log();
    let plain_slot = log();
    let untouched = log();
    let _a = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &all);
    let _g = watch_slot(&hub, with_removal(17), &gone_slot);
    let _p = watch_slot(&hub, 17, &plain_slot);
    let _u = watch_slot(&hub, 4, &untouched);
    let (seen, _h) = watch_updates(&hub);
    for l in [&all, &gone_slot, &plain_slot, &untouched] {
        taken(l);
    }
    seen.borrow_mut().clear();
    {
        let mut arr = hub.stored_array(key, Source::Global);
        for row in [1, 3, 5, 7, 9, 11, 13, 15, 19] {
            arr.set(row, to_value(&item(1000 + row as i64)).unwrap());
        }
        assert!(arr.spans().is_full(), "nine disjoint spans: a full reload");
        assert!(arr.set_len(15));
    }
    let u = seen.borrow_mut().remove(0);
    assert!(u.is_full_reload());
    assert_eq!((u.total, u.prev_total), (15, 20));
    let all = taken(&all);
    assert_eq!(all.len(), 20, "15 live rows and 5 removed: {all:?}");
    for removed in 15..20 {
        assert!(all.contains(&format!("{}:0", !removed)), "{all:?}");
    }
    assert_eq!(taken(&gone_slot), ["gone 17 id=0"]);
    assert!(taken(&plain_slot).is_empty());
    assert_eq!(
        taken(&untouched),
        ["4 id=4"],
        "a full reload wakes every live slot"
    );
}
