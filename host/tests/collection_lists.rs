//! Collection listeners beside ordinary ones, across listener lists, and
//! how a table is recognised (issue 4; references 001 and 004).

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    ALL_ROWS, Caller, Hub, Key, KeyDecl, Kind, ListenOptions, Report, Serde, Source, StructValue,
    Type, Value, struct_def_of, to_value,
};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
struct Item {
    id: i64,
    name: String,
}

fn items(n: i64) -> Vec<Item> {
    (0..n)
        .map(|id| Item {
            id,
            name: format!("n{id}"),
        })
        .collect()
}

type Log = Rc<RefCell<Vec<String>>>;

fn hub() -> (Hub, Key, Log) {
    let hub = Hub::new();
    let (name, def) = struct_def_of::<Item>().unwrap();
    hub.edit_table(|t| t.declare_struct(&name, def));
    let key = hub
        .declare(
            "Inv.Items",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
        )
        .unwrap();
    (hub, key, Rc::new(RefCell::new(Vec::new())))
}

fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.borrow_mut())
}

#[test]
fn ordinary_and_collection_listeners_of_one_key_both_hear_a_store() {
    let (hub, key, log) = hub();
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let _plain = hub
        .listen(
            "Inv.Items",
            Source::Global,
            move |rows: Serde<Vec<Item>>| a.borrow_mut().push(format!("plain {}", rows.0.len())),
        )
        .unwrap();
    let _table = hub
        .listen_table(
            "Inv.Items",
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
            "Inv.Items",
            Source::Global,
            1,
            ListenOptions::default(),
            move |id: i64| c.borrow_mut().push(format!("slot {id}")),
        )
        .unwrap();
    hub.store(key, Source::Global, (Serde(items(3)),)).unwrap();
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
    let (hub, key, log) = hub();
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
            "Inv.Items",
            Source::Global,
            ALL_ROWS,
            ListenOptions::default().order(5),
            move |row: i32, id: i64| c.borrow_mut().push(format!("row {row}={id}")),
        )
        .unwrap();
    let _exact = hub
        .listen_table(
            "Inv.Items",
            Source::Global,
            ListenOptions::default(),
            move |view, _| b.borrow_mut().push(format!("Inv.Items {}", view.len())),
        )
        .unwrap();
    hub.store(key, Source::Global, (Serde(items(2)),)).unwrap();
    // Lower order first; at equal order the exact listener before the
    // ancestor's partial one.
    assert_eq!(taken(&log), ["Inv.Items 2", "Inv 2", "row 0=0", "row 1=1"]);
}

#[test]
fn table_recognised_by_its_first_row_reports_a_later_row_that_is_not_a_struct() {
    let (hub, key, log) = hub();
    hub.set_checked(false);
    let failures = Rc::new(RefCell::new(Vec::new()));
    let f = failures.clone();
    hub.on_report(move |report| {
        if let Report::ListenerFailed { message, .. } = report {
            f.borrow_mut().push(message.clone());
        }
    });
    let l = log.clone();
    let _rows = hub
        .listen_rows(
            "Inv.Items",
            Source::Global,
            ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, id: i64| l.borrow_mut().push(format!("{row}={id}")),
        )
        .unwrap();
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
