//! The collection listener forms: prefix members, whole rows, the whole-table
//! view (the stored table, not a copy) and the script faces' dynamic rows;
//! each reads its rows and reports a bad row by its number.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::Faced;
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Caller, Hub, HubError, ListenOptions, Report, Serde, Source,
    StructValue, Value, struct_def_of, to_value,
};
use gantry_test_support::log::{Log, log, taken};
use serde::{Deserialize, Serialize};

use crate::support::collections::{Item, KEY, hub, item, items, store};

/// The messages of the listener failures the hub reports from now on.
fn failures_of(hub: &Hub) -> Rc<RefCell<Vec<String>>> {
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

/// Each changed range is read on its own, rows numbered as in the table;
/// a row that cannot be read is reported under its own number and the
/// rows after it still arrive.
#[test]
fn row_listener_reads_each_changed_range_and_reports_a_bad_row_by_its_number() {
    let (hub, key) = hub();
    store(&hub, key, &items(10));
    hub.set_checked(false);
    let failures = failures_of(&hub);
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
    let failures = failures_of(&hub);
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
