//! Collection messages, rule by rule (issue 4; references 001 and 004).

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{RowPath, Spans, TableView, Update};
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Caller, Hub, HubError, Key, Kind, ListenOptions, Owner, Range,
    Report, RowOptions, Serde, Source, StructValue, Value, struct_def_of, to_value, with_removal,
};
use serde::{Deserialize, Serialize};

mod support;

use support::collections::{
    Item, KEY, hub, item, items, store, watch_rows, watch_slot, watch_updates,
};
use support::log::{Log, log, taken};

/// The messages of the listener failures the hub reports from now on.
fn listener_failures(hub: &Hub) -> Rc<RefCell<Vec<String>>> {
    let failures = Rc::new(RefCell::new(Vec::new()));
    let f = failures.clone();
    hub.on_report(move |report| {
        if let Report::ListenerFailed { message, .. } = report {
            f.borrow_mut().push(message.clone());
        }
    });
    failures
}

/// An every-row listener logging `"<row>=<id>"`.
fn row_ids(hub: &Hub, log: &Log) -> gantry_host::ListenerHandle {
    let l = log.clone();
    hub.listen_rows(
        KEY,
        Source::Global,
        ALL_ROWS,
        ListenOptions::default(),
        move |row: i32, id: i64| l.borrow_mut().push(format!("{row}={id}")),
    )
    .unwrap()
}

/// Ten stored rows and a slot-5 listener that already saw the replay.
fn ten_rows_and_slot(index: i32) -> (Hub, Key, Log, gantry_host::ListenerHandle) {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let log = log();
    let handle = watch_slot(&hub, index, &log);
    assert_eq!(taken(&log), ["5 id=5"], "late replay of the slot");
    (hub, key, log, handle)
}

// ----- §6: a fixed row is a position, not an element ------------------------

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

// ----- removal reporting -----------------------------------------------------

#[test]
fn removal_set_num_3_on_10_rows_calls_a_removal_listener_7_times() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    let told = log();
    let quiet = log();
    let _a = watch_rows(&hub, ALL_ROWS_WITH_REMOVAL, &told);
    let _b = watch_rows(&hub, ALL_ROWS, &quiet);
    taken(&told);
    taken(&quiet);
    hub.stored_array(key, Source::Global).set_len(3);
    let expected: Vec<String> = (3..10).map(|r| format!("{}:0", !r)).collect();
    assert_eq!(taken(&told), expected);
    assert!(taken(&quiet).is_empty());
}

// ----- re-store diffing ------------------------------------------------------

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

// ----- §11: span coalescing has to sort ---------------------------------------

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

// ----- the send (transient) path ----------------------------------------------

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

/// A row listen needs a key that carries a table; a key seen only with a
/// nil so far carries nothing known yet and is not refused, a key declared
/// with an int is.
#[test]
fn row_listen_on_a_key_observed_only_as_nil_is_kept() {
    let (hub, _key) = hub();
    hub.send_str("Inv.Later", Source::Global, (Value::Nil,))
        .unwrap();
    let kept = hub.listen_rows(
        "Inv.Later",
        Source::Global,
        ALL_ROWS,
        ListenOptions::default(),
        |_row: i32, _id: i64| {},
    );
    assert!(kept.is_ok(), "{:?}", kept.err());
    hub.declare(
        "Inv.Count",
        gantry_host::KeyDecl::event().param("n", gantry_host::Type::Int),
    )
    .unwrap();
    let refused = hub.listen_rows(
        "Inv.Count",
        Source::Global,
        ALL_ROWS,
        ListenOptions::default(),
        |_row: i32, _id: i64| {},
    );
    assert!(matches!(refused, Err(HubError::ListenRejected { .. })));
}

/// A script listener registered before its key was known to carry a
/// table (a function that may be `f(items, update)` or a two-argument
/// listener): each dispatch of a table reaches it as a whole-table
/// listener (diffs, and nothing for an identical re-store), any other
/// dispatch as an ordinary message, stored ones replayed either way.
#[test]
fn table_or_message_listener_is_decided_by_what_is_sent() {
    let hub = Hub::new();
    let (name, def) = struct_def_of::<Item>().unwrap();
    hub.edit_table(|t| t.declare_struct(&name, def));
    let seen = log();
    let listen = |key: &str| {
        let (t, m) = (seen.clone(), seen.clone());
        hub.listen_table_or_message_raw(
            key,
            Source::Global,
            ListenOptions::default(),
            None,
            Rc::new(move |view: &TableView<'_>, u: &Update| {
                t.borrow_mut()
                    .push(format!("table {} {:?}", view.len(), u.ranges()));
                Ok(())
            }),
            Rc::new(move |msg: &gantry_host::Message<'_>| {
                m.borrow_mut().push(format!("message {:?}", msg.args));
                Ok(())
            }),
        )
        .unwrap()
    };
    let id = listen(KEY);
    let key = hub.key(KEY).unwrap();
    store(&hub, key, &items(3));
    store(&hub, key, &items(3));
    let mut edited = items(3);
    edited[1].count = 7;
    store(&hub, key, &edited);
    assert_eq!(
        taken(&seen),
        [
            "table 3 [Range { index: 0, count: 3 }]",
            "table 3 [Range { index: 1, count: 1 }]"
        ]
    );
    hub.send_str("Radar.Ping", Source::Global, (1i64, 2i64))
        .unwrap();
    let _ping = listen("Radar.Ping");
    hub.send_str("Radar.Ping", Source::Global, (1i64, 2i64))
        .unwrap();
    assert_eq!(taken(&seen), ["message [Int(1), Int(2)]"]);
    hub.store_values(
        hub.key("Radar.Last").unwrap(),
        Source::Global,
        vec![Value::Int(5)],
        false,
        Caller::Unrecorded,
    )
    .unwrap();
    let _late_message = listen("Radar.Last");
    let _late_table = listen(KEY);
    assert_eq!(taken(&seen), ["message [Int(5)]", "table 3 []"]);
    assert!(hub.unlisten(id));
}

/// Checked mode holds every field of a published row to its declared type,
/// remembering a checked row's shape between publishes — and forgetting it
/// when the struct is declared again: a row that was right under the old
/// definition is refused under the new one.
#[test]
fn checked_rows_follow_a_struct_declared_again() {
    let (hub, key) = hub();
    store(&hub, key, &items(3));
    let edit = |hub: &Hub| {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(1).unwrap().unwrap().count += 1;
    };
    edit(&hub);
    edit(&hub);
    assert!(hub.take_reports().is_empty());
    hub.edit_table(|t| {
        t.declare_struct(
            "Item",
            gantry_host::StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![
                    gantry_host::Param::new("id", gantry_host::Type::Int),
                    gantry_host::Param::new("name", gantry_host::Type::Int),
                    gantry_host::Param::new("count", gantry_host::Type::Int),
                ],
            },
        )
    });
    edit(&hub);
    let reports = hub.take_reports();
    assert!(
        reports
            .iter()
            .any(|r| matches!(r, Report::Mismatch { key, .. } if key == KEY)),
        "{reports:?}"
    );
}

// ----- listener forms ---------------------------------------------------------

#[test]
fn prefix_member_listeners_take_the_first_few_members() {
    let (hub, key) = hub();
    let log = log();
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let _one = hub
        .listen_slot(
            KEY,
            Source::Global,
            2,
            ListenOptions::default(),
            move |id: i64| a.borrow_mut().push(format!("id={id}")),
        )
        .unwrap();
    let _all = hub
        .listen_slot(
            KEY,
            Source::Global,
            2,
            ListenOptions::default(),
            move |id: i64, name: String, count: i64| {
                b.borrow_mut().push(format!("{id} {name} {count}"))
            },
        )
        .unwrap();
    let _none = hub
        .listen_slot(
            KEY,
            Source::Global,
            2,
            ListenOptions::default(),
            move || c.borrow_mut().push("ping".into()),
        )
        .unwrap();
    store(&hub, key, &items(3));
    assert_eq!(taken(&log), ["id=2", "2 n2 20", "ping"]);
}

#[test]
fn member_listener_with_wrong_type_is_rejected() {
    let (hub, _key) = hub();
    let err = hub
        .listen_slot(
            KEY,
            Source::Global,
            2,
            ListenOptions::default(),
            |_name: String| {},
        )
        .unwrap_err();
    match err {
        HubError::ListenRejected { key, mismatch } => {
            assert_eq!(key, KEY);
            assert_eq!(mismatch.position, 0);
        }
        other => panic!("unexpected {other:?}"),
    }
    // A member listener longer than the element is rejected too.
    assert!(
        hub.listen_slot(
            KEY,
            Source::Global,
            2,
            ListenOptions::default(),
            |_: i64, _: String, _: i64, _: i64| {}
        )
        .is_err()
    );
}

#[test]
fn whole_table_listener_gets_a_borrowed_view_and_the_update() {
    let (hub, key) = hub();
    let seen = log();
    let s = seen.clone();
    let _t = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, u| {
                let first: Vec<Item> = view.decode().unwrap();
                s.borrow_mut().push(format!(
                    "{} rows, total {} prev {}, first {}",
                    view.len(),
                    u.total,
                    u.prev_total,
                    first[0].name
                ));
            },
        )
        .unwrap();
    store(&hub, key, &items(4));
    assert_eq!(taken(&seen), ["4 rows, total 4 prev 0, first n0"]);
}

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

#[test]
fn skipped_fields_take_no_position() {
    #[derive(Serialize, Deserialize, Default, Clone)]
    #[allow(dead_code)]
    struct Row {
        a: i64,
        #[serde(skip)]
        editor_only: i64,
        b: i64,
    }
    let hub = Hub::new();
    let (name, def) = struct_def_of::<Row>().unwrap();
    hub.edit_table(|t| t.declare_struct(&name, def));
    let key = hub.key("Rows").unwrap();
    let log = log();
    let l = log.clone();
    let _s = hub
        .listen_slot(
            "Rows",
            Source::Global,
            0,
            ListenOptions::default(),
            move |a: i64, b: i64| l.borrow_mut().push(format!("{a} {b}")),
        )
        .unwrap();
    let row = Row {
        a: 1,
        editor_only: 99,
        b: 2,
    };
    hub.store(key, Source::Global, (Serde(vec![row]),)).unwrap();
    assert_eq!(taken(&log), ["1 2"]);
}

// ----- the dynamic faces (scripts) ---------------------------------------------

#[test]
fn dynamic_row_listener_and_writer_need_no_rust_element_type() {
    let (hub, key) = hub();
    store(&hub, key, &items(3));
    let log = log();
    let l = log.clone();
    hub.listen_rows_raw(
        KEY,
        Source::Global,
        ALL_ROWS_WITH_REMOVAL,
        ListenOptions::default(),
        None,
        Rc::new(move |row, item, u| {
            let name = item.as_struct().unwrap().get("name").unwrap().clone();
            l.borrow_mut().push(format!("{row} {name} of {}", u.total));
            Ok(())
        }),
    )
    .unwrap();
    assert_eq!(
        taken(&log),
        ["0 \"n0\" of 3", "1 \"n1\" of 3", "2 \"n2\" of 3"]
    );
    {
        let mut arr = hub.stored_array(key, Source::Global);
        arr.get_mut_struct(1)
            .unwrap()
            .set("name", Value::str("renamed"));
        arr.remove_at(2);
    }
    assert_eq!(taken(&log), ["1 \"renamed\" of 2", "-3 \"\" of 2"]);
}

// ----- §13: the fast path and the reflective one ------------------------------

type Seen = Rc<RefCell<Vec<(i32, i64, String, f64)>>>;

fn row_listener(hub: &Hub, seen: &Seen, reflective: bool) -> gantry_host::ListenerHandle {
    let s = seen.clone();
    let mut options = RowOptions::default();
    if reflective {
        options = options.reflective_only();
    }
    hub.listen_rows(
        KEY,
        Source::Global,
        ALL_ROWS,
        options,
        move |row: i32, id: i64, name: String, count: i64| {
            s.borrow_mut().push((row, id, name, count as f64))
        },
    )
    .unwrap()
}

#[test]
fn fast_path_and_reflective_path_give_identical_results() {
    let (hub, key) = hub();
    let (fast, slow): (Seen, Seen) = Default::default();
    let f = row_listener(&hub, &fast, false);
    let s = row_listener(&hub, &slow, true);
    store(&hub, key, &items(5));
    let mut rows = items(5);
    rows[3].name = "changed".into();
    store(&hub, key, &rows);
    assert_eq!(*fast.borrow(), *slow.borrow());
    assert_eq!(fast.borrow().len(), 6);
    assert_eq!(hub.row_path(f.id()), Some(RowPath::Fast));
    assert_eq!(hub.row_path(s.id()), Some(RowPath::Reflective));
}

/// `n` rows of `Item` whose fields are not in declaration order
/// (position 0 is `name`): a deliberate layout mismatch.
fn shuffled_rows(n: i64) -> Vec<Value> {
    (0..n)
        .map(|i| {
            Value::structure(
                StructValue::new("Item")
                    .with("name", format!("n{i}"))
                    .with("id", i)
                    .with("count", i * 10),
            )
        })
        .collect()
}

#[test]
fn fast_path_falls_back_on_a_deliberate_layout_mismatch() {
    let (hub, key) = hub();
    let (fast, slow): (Seen, Seen) = Default::default();
    let f = row_listener(&hub, &fast, false);
    let _s = row_listener(&hub, &slow, true);
    let shuffled = shuffled_rows(3);
    hub.store_values(
        key,
        Source::Global,
        vec![Value::array(shuffled)],
        false,
        Caller::Unrecorded,
    )
    .unwrap();
    assert_eq!(*fast.borrow(), *slow.borrow());
    assert_eq!(fast.borrow()[2], (2, 2, "n2".to_owned(), 20.0));
    assert_eq!(hub.row_path(f.id()), Some(RowPath::Reflective));
}

#[test]
fn fast_path_refused_when_a_member_type_needs_conversion() {
    let (hub, key) = hub();
    let (exact, converted): (Seen, Seen) = Default::default();
    let _e = row_listener(&hub, &exact, false);
    let c = converted.clone();
    let h = hub
        .listen_rows(
            KEY,
            Source::Global,
            ALL_ROWS,
            ListenOptions::default(),
            // `count` is an int; declared as a float it converts.
            move |row: i32, id: i64, name: String, count: f64| {
                c.borrow_mut().push((row, id, name, count))
            },
        )
        .unwrap();
    store(&hub, key, &items(4));
    assert_eq!(*exact.borrow(), *converted.borrow());
    assert_eq!(hub.row_path(h.id()), Some(RowPath::Reflective));
}

#[test]
fn view_for_each_fast_and_reflective_agree() {
    let (hub, key) = hub();
    let seen = log();
    let s = seen.clone();
    let _t = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, _| {
                let fast = RefCell::new(Vec::new());
                let path = view
                    .for_each(|row: i32, id: i64, name: Rc<str>| {
                        fast.borrow_mut().push((row, id, name))
                    })
                    .unwrap();
                let slow = RefCell::new(Vec::new());
                view.for_each_reflective(|row: i32, id: i64, name: Rc<str>| {
                    slow.borrow_mut().push((row, id, name))
                })
                .unwrap();
                let (fast, slow) = (fast.into_inner(), slow.into_inner());
                assert_eq!(fast, slow);
                s.borrow_mut().push(format!("{path:?} {}", fast.len()));
            },
        )
        .unwrap();
    store(&hub, key, &items(6));
    assert_eq!(taken(&seen), ["Fast 6"]);
    let _ = to_value(&item(1)).unwrap();
}

/// The fast path reads a run of rows confirmed by address and hands any
/// other row (fields in another order, names that are equal text but
/// other strings, another struct, not a struct) to the per-row decision;
/// every row is read once, in order, as the reflective path reads it.
#[test]
fn view_for_each_fast_and_reflective_agree_on_mixed_rows() {
    let (hub, _key) = hub();
    let serde_row = |i: i64| to_value(&item(i)).unwrap();
    let own_names = |i: i64, first: &str| {
        let fields = [
            ("id", Value::Int(i)),
            ("name", Value::str(&format!("n{i}"))),
            ("count", Value::Int(i * 10)),
        ];
        let mut row = StructValue::new(String::from("Item"));
        let (lead, rest): (Vec<_>, Vec<_>) = fields.into_iter().partition(|(n, _)| *n == first);
        for (name, value) in lead.into_iter().chain(rest) {
            row.fields.push((Rc::from(String::from(name)), value));
        }
        Value::structure(row)
    };
    let rows = vec![
        serde_row(0),
        serde_row(1),
        own_names(2, "name"), // another field order: reflective for this row
        serde_row(3),
        own_names(4, "id"), // declaration order, names not shared
        own_names(5, "id"),
        serde_row(6),
        Value::structure(
            StructValue::new("Other")
                .with("id", 7i64)
                .with("name", "o")
                .with("count", 70i64),
        ),
        serde_row(8),
    ];
    let view = TableView::new(&hub, &rows);
    let read = |fast: bool| {
        let seen = RefCell::new(Vec::new());
        let each =
            |row: i32, id: i64, name: Rc<str>| seen.borrow_mut().push((row, id, name.to_string()));
        let path = if fast {
            view.for_each(each)
        } else {
            view.for_each_reflective(each)
        };
        (path.unwrap(), seen.into_inner())
    };
    let (fast_path, fast) = read(true);
    let (_, slow) = read(false);
    assert_eq!(fast, slow);
    let rows_seen: Vec<i32> = fast.iter().map(|(row, ..)| *row).collect();
    assert_eq!(rows_seen, (0..9).collect::<Vec<_>>());
    assert_eq!(fast[2], (2, 2, "n2".to_owned()));
    assert_eq!(fast[7], (7, 7, "o".to_owned()));
    assert_eq!(fast_path, RowPath::Fast);

    let mut with_a_number = rows.clone();
    with_a_number.insert(3, Value::Int(3));
    let view = TableView::new(&hub, &with_a_number);
    let seen = RefCell::new(Vec::new());
    let err = view
        .for_each(|row: i32, id: i64| seen.borrow_mut().push((row, id)))
        .unwrap_err();
    assert!(err.to_string().contains("row 3"), "{err}");
    assert_eq!(*seen.borrow(), [(0, 0), (1, 1), (2, 2)]);
}

/// A view whose rows all break the declared layout (members in another
/// order) is read reflectively, gives the declared members all the same,
/// and says so; a closure whose declared types do not line up with the
/// element (a float over an int member) is read reflectively too.
#[test]
fn view_for_each_reports_the_reflective_path_on_a_deliberate_layout_mismatch() {
    let (hub, _key) = hub();
    let shuffled = shuffled_rows(4);
    let view = TableView::new(&hub, &shuffled);
    let seen = RefCell::new(Vec::new());
    let path = view
        .for_each(|row: i32, id: i64, name: Rc<str>| {
            seen.borrow_mut().push((row, id, name.to_string()))
        })
        .unwrap();
    assert_eq!(path, RowPath::Reflective);
    assert_eq!(seen.borrow()[3], (3, 3, "n3".to_owned()));

    let rows: Vec<Value> = items(3).iter().map(|i| to_value(i).unwrap()).collect();
    let view = TableView::new(&hub, &rows);
    let ids = RefCell::new(Vec::new());
    let path = view
        .for_each(|_row: i32, id: f64| ids.borrow_mut().push(id))
        .unwrap();
    assert_eq!(
        path,
        RowPath::Reflective,
        "float declared over an int member"
    );
    assert_eq!(*ids.borrow(), [0.0, 1.0, 2.0]);
    let path = view.for_each(|_row: i32, _id: i64| {}).unwrap();
    assert_eq!(path, RowPath::Fast);
}

/// A view's visitor may borrow members from the rows (`&str`, `&Value`)
/// instead of copying them: both paths lend the same members, pointing
/// into the rows themselves, and a borrow of the wrong kind is the same
/// member error as an owned one.
#[test]
fn view_for_each_lends_borrowed_members_on_both_paths() {
    let (hub, _key) = hub();
    let rows: Vec<Value> = items(4).iter().map(|i| to_value(i).unwrap()).collect();
    let view = TableView::new(&hub, &rows);
    let read = |fast: bool| {
        let seen = RefCell::new(Vec::new());
        let each = |row: i32, _id: i64, name: &str, count: &Value| {
            seen.borrow_mut()
                .push((row, name.to_owned(), name.as_ptr(), count.clone()))
        };
        let path = if fast {
            view.for_each(each)
        } else {
            view.for_each_reflective(each)
        };
        (path.unwrap(), seen.into_inner())
    };
    let (fast_path, fast) = read(true);
    let (slow_path, slow) = read(false);
    assert_eq!((fast_path, slow_path), (RowPath::Fast, RowPath::Reflective));
    assert_eq!(fast, slow);
    assert_eq!((fast[2].0, fast[2].1.as_str()), (2, "n2"));
    assert_eq!(fast[2].3, Value::Int(20));
    let Value::Str(stored) = &rows[3].as_struct().unwrap().fields[1].1 else {
        panic!("name is a string")
    };
    assert_eq!(fast[3].2, stored.as_ptr(), "a borrow, not a copy");

    let shuffled = shuffled_rows(3);
    let names = RefCell::new(Vec::new());
    let path = TableView::new(&hub, &shuffled)
        .for_each(|_row: i32, _id: i64, name: &str| names.borrow_mut().push(name.to_owned()))
        .unwrap();
    assert_eq!(path, RowPath::Reflective);
    assert_eq!(*names.borrow(), ["n0", "n1", "n2"]);

    let err = view.for_each(|_row: i32, _id: &str| {}).unwrap_err();
    assert_eq!(err.to_string(), "row 0: member 1: expected string, got int");
    let slot = RefCell::new(None);
    assert!(
        view.visit_row(1, |_id: i64, name: &str| *slot.borrow_mut() =
            Some(name.to_owned()))
            .unwrap()
    );
    assert_eq!(slot.into_inner().as_deref(), Some("n1"));
}

// ----- the script faces' writer: owned hub handle, explicit commit ----------

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

/// A table observed once is not re-recorded by every later store or writer
/// publish (that walked every row each time); a changed shape still is.
#[test]
fn stores_of_a_known_collection_record_nothing_new() {
    let hub = Hub::new();
    let key = hub.key("Loot.Rows").unwrap();
    for round in 0..3 {
        hub.store(key, Source::Global, (Serde(items(4 + round)),))
            .unwrap();
        {
            let mut rows = hub.stored_array(key, Source::Global);
            rows.get_mut(1);
        }
        assert_eq!(hub.table().get("Loot.Rows").unwrap().kind, Kind::Collection);
        // The first round records the key and these two call sites.
        assert_eq!(hub.take_table_dirty(), round == 0, "round {round}");
    }
    // A plain event key that is later stored becomes a store.
    let tick = hub.key("Loot.Count").unwrap();
    hub.send(tick, Source::Global, (1i64,)).unwrap();
    assert_eq!(hub.table().get("Loot.Count").unwrap().kind, Kind::Event);
    hub.store(tick, Source::Global, (2i64,)).unwrap();
    assert_eq!(hub.table().get("Loot.Count").unwrap().kind, Kind::Store);
}

// ----- collection listeners beside ordinary ones; recognising a table ------

#[test]
fn ordinary_and_collection_listeners_of_one_key_both_hear_a_store() {
    let (hub, key) = hub();
    let log = log();
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let _plain = hub
        .listen(KEY, Source::Global, move |rows: Serde<Vec<Item>>| {
            a.borrow_mut().push(format!("plain {}", rows.0.len()))
        })
        .unwrap();
    let _table = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, update| {
                b.borrow_mut()
                    .push(format!("table {} of {}", view.len(), update.total))
            },
        )
        .unwrap();
    let _slot = hub
        .listen_slot(
            KEY,
            Source::Global,
            1,
            ListenOptions::default(),
            move |id: i64| c.borrow_mut().push(format!("slot {id}")),
        )
        .unwrap();
    store(&hub, key, &items(3));
    assert_eq!(taken(&log), ["plain 3", "table 3 of 3", "slot 1"]);
    // A writer's edit elsewhere: the ordinary listener hears the store,
    // the slot listener does not wake.
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(2).unwrap().unwrap().name = "two".into();
    }
    assert_eq!(taken(&log), ["plain 3", "table 3 of 3"]);
}

#[test]
fn collection_listeners_of_a_key_and_its_ancestor_run_in_delivery_order() {
    let (hub, key) = hub();
    let log = log();
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let _ancestor = hub
        .listen_table(
            "Inv",
            Source::Global,
            ListenOptions::default().partial(),
            move |view, _| a.borrow_mut().push(format!("Inv {}", view.len())),
        )
        .unwrap();
    let _late = hub
        .listen_rows(
            KEY,
            Source::Global,
            ALL_ROWS,
            ListenOptions::default().order(5),
            move |row: i32, id: i64| c.borrow_mut().push(format!("row {row}={id}")),
        )
        .unwrap();
    let _exact = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, _| b.borrow_mut().push(format!("Inv.Items {}", view.len())),
        )
        .unwrap();
    store(&hub, key, &items(2));
    // Lower order first; at equal order the exact listener before the
    // ancestor's partial one.
    assert_eq!(taken(&log), ["Inv.Items 2", "Inv 2", "row 0=0", "row 1=1"]);
}

#[test]
fn table_recognised_by_its_first_row_reports_a_later_row_that_is_not_a_struct() {
    let (hub, key) = hub();
    let log = log();
    hub.set_checked(false);
    let failures = listener_failures(&hub);
    let _rows = row_ids(&hub, &log);
    let first = to_value(&items(1)[0]).unwrap();
    let mut args = [Value::array(vec![first, Value::Int(7)])];
    hub.send_values(key, Source::Global, &mut args, Caller::Unrecorded)
        .unwrap();
    assert_eq!(taken(&log), ["0=0"]);
    assert_eq!(*failures.borrow(), ["row 1 is int, not a struct"]);
    // An array whose first row is not a struct is not a table.
    let mut args = [Value::array(vec![
        Value::Int(7),
        Value::structure(StructValue::new("Item").with("id", 1i64)),
    ])];
    hub.send_values(key, Source::Global, &mut args, Caller::Unrecorded)
        .unwrap();
    assert!(taken(&log).is_empty());
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

/// Each changed range is read on its own, rows numbered as in the table;
/// a row that cannot be read is reported under its own number and the
/// rows after it still arrive.
#[test]
fn row_listener_reads_each_changed_range_and_reports_a_bad_row_by_its_number() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    hub.set_checked(false);
    let failures = listener_failures(&hub);
    let log = log();
    let _rows = row_ids(&hub, &log);
    assert_eq!(taken(&log).len(), 10, "late replay");
    let mut rows: Vec<Value> = items(10).iter().map(|i| to_value(i).unwrap()).collect();
    rows[2] = to_value(&item(20)).unwrap();
    rows[6] = Value::Int(7);
    rows[7] = to_value(&item(70)).unwrap();
    hub.store_values(
        key,
        Source::Global,
        vec![Value::array(rows)],
        false,
        Caller::Unrecorded,
    )
    .unwrap();
    assert_eq!(taken(&log), ["2=20", "7=70"]);
    assert_eq!(*failures.borrow(), ["row 6 is int, not a struct"]);
}

/// A row a kept listener cannot read (a member of another type, possible
/// in unchecked mode) is reported under its row number, and the rows after
/// it still arrive.
#[test]
fn row_listener_names_the_row_whose_member_it_could_not_read() {
    let (hub, key) = hub();
    hub.set_checked(false);
    let failures = listener_failures(&hub);
    let log = log();
    let _rows = row_ids(&hub, &log);
    let mut rows: Vec<Value> = items(4).iter().map(|i| to_value(i).unwrap()).collect();
    rows[2] = Value::structure(
        StructValue::new("Item")
            .with("id", "two")
            .with("name", "n2")
            .with("count", 20i64),
    );
    hub.store_values(
        key,
        Source::Global,
        vec![Value::array(rows)],
        false,
        Caller::Unrecorded,
    )
    .unwrap();
    assert_eq!(taken(&log), ["0=0", "1=1", "3=3"]);
    assert_eq!(
        *failures.borrow(),
        ["row 2: member 1: expected int, got string"]
    );
}
