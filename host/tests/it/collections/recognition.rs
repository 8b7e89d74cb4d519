//! Recognising a table: a collection listener is decided by what is sent or
//! stored (an array of structs, by its first row); other shapes reach
//! ordinary listeners unchanged.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{TableView, Update};
use gantry_host::face::Faced;
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Caller, Hub, HubError, Kind, ListenOptions, Report, Serde,
    Source, StructValue, Value, struct_def_of, to_value,
};
use gantry_test_support::log::{Log, log, taken};

use crate::support::collections::{
    Item, KEY, Updates, hub, item, items, store, watch_rows, watch_updates,
};

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

#[test]
fn table_recognised_by_its_first_row_reports_a_later_row_that_is_not_a_struct() {
    let (hub, key) = hub();
    let log = log();
    hub.set_checked(false);
    let failures = failures_of(&hub);
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

fn only(updates: &Updates) -> Update {
    let seen = std::mem::take(&mut *updates.borrow_mut());
    assert_eq!(seen.len(), 1, "one publish expected, got {seen:?}");
    seen[0].clone()
}

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
