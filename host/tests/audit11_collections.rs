//! Audit 11: collection rules of references `001_…`/`004_…` that the
//! earlier host audits (`collection.rs`, `collection_spec.rs`) leave open —
//! ranges of a writer that grew and shrank back, a once message carrying a
//! table, a full reload that also shrinks, the send path next to a removal
//! listener. One test per rule, named after it.

use gantry_host::{ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Serde, Source, to_value, with_removal};

mod support;

use support::collections::{hub, item, items, store, watch_rows, watch_slot, watch_updates};
use support::log::{log, taken};

/// 004 "Ranges: which rows now read differently". A writer that appends a
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

/// 001 §2/§3: "Row dispatch needs no storage" — any dispatch of an array of
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

/// 004: past eight spans the writer publishes a full reload; a full reload
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

/// 001 §10: the send path is always a full reload with no change set and
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

/// 004 "A row widget is not called once its position is past the end ...
/// unless it asked for removals, in which case it is told exactly once":
/// once told, further shrinks, edits and sends leave it alone until the
/// position exists again.
#[test]
fn removal_slot_is_told_once_and_not_again_by_later_shrinks_edits_or_sends() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let told = log();
    let _g = watch_slot(&hub, with_removal(6), &told);
    taken(&told);
    store(&hub, key, &items(4));
    assert_eq!(taken(&told), ["gone 6 id=0"]);
    store(&hub, key, &items(2));
    {
        let mut arr = hub.stored_array(key, Source::Global);
        arr.set(0, to_value(&item(50)).unwrap());
    }
    hub.send(key, Source::Global, (Serde(items(9)),)).unwrap();
    assert!(taken(&told).is_empty(), "told exactly once");
    store(&hub, key, &items(7));
    assert_eq!(taken(&told), ["6 id=6"], "the position exists again");
}
