//! Removal notices: a shrink from 10 rows to 3 calls a removal listener 7
//! times, each told once, with a default-valued stand-in row.

use std::rc::Rc;

use gantry_host::collection::Update;
use gantry_host::face::Faced;
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Hub, ListenOptions, Report, Serde, Source, to_value,
    with_removal,
};
use gantry_test_support::log::{log, taken};

use crate::support::collections::{KEY, hub, item, items, store, watch_rows, watch_slot};

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

fn listener_failures(hub: &Hub) -> Vec<String> {
    hub.take_reports()
        .into_iter()
        .filter_map(|r| match r {
            Report::ListenerFailed { message, .. } => Some(message),
            _ => None,
        })
        .collect()
}

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

/// "A row widget is not called once its position is past the end ...
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
