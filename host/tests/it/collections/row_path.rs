//! The fast row path and the reflective one give identical results; the
//! fast one falls back on a layout mismatch or a member needing conversion,
//! and the choice is made on the first fire and remembered.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{RowPath, TableView};
use gantry_host::face::Faced;
use gantry_host::{
    ALL_ROWS, Caller, Hub, ListenOptions, RowOptions, Source, StructValue, Value, to_value,
};
use gantry_test_support::log::{log, taken};

use crate::support::collections::{KEY, hub, item, items, store};

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
