//! Reference `001_…` §13: rows read at compiled offsets when the visitor's
//! declared members line up with the element's memory layout — a table
//! stored from Rust rows ([`Hub::store_rows`]) — with the value paths as
//! the fallback. Correctness never depends on it: every test compares the
//! compiled path with the reflective one, and the mismatches fall back.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    Hub, ListenOptions, RowPath, Serde, Source, StructValue, Type, Value, struct_def_of, table_row,
};
use serde::{Deserialize, Serialize};

mod support;

use support::collections::{Item, hub, item, items};

table_row!(Item { id, name, count });

/// What a visitor of `(row, id, name, count)` saw, and the path it took.
fn visit(view: &gantry_host::TableView<'_>, reflective: bool) -> (Vec<String>, RowPath) {
    let seen = RefCell::new(Vec::new());
    let each = |row: i32, id: i64, name: &str, count: i64| {
        seen.borrow_mut().push(format!("{row}:{id}:{name}:{count}"))
    };
    let path = if reflective {
        view.for_each_reflective(each)
    } else {
        view.for_each(each)
    }
    .unwrap();
    (seen.into_inner(), path)
}

/// Declares struct `name` as `{ id: int, name: string, count: <count> }`.
fn declare_item_shape(hub: &Hub, name: &str, count: Type) {
    hub.edit_table(|t| {
        t.declare_struct(
            name,
            gantry_host::StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![
                    gantry_host::Param::new("id", Type::Int),
                    gantry_host::Param::new("name", Type::String),
                    gantry_host::Param::new("count", count),
                ],
            },
        )
    });
}

fn expected(n: i64) -> Vec<String> {
    (0..n).map(|i| format!("{i}:{i}:n{i}:{}", i * 10)).collect()
}

#[test]
fn tuple_fast_path_reads_rust_rows_at_compiled_offsets_with_the_reflective_result() {
    let (hub, key) = hub();
    hub.store_rows(key, Source::Global, items(6)).unwrap();
    let (compiled, path) = hub
        .read_table(key, Source::Global, |view| visit(view, false))
        .unwrap();
    assert_eq!(path, RowPath::Compiled);
    assert_eq!(compiled, expected(6));
    let (reflective, path) = hub
        .read_table(key, Source::Global, |view| visit(view, true))
        .unwrap();
    assert_eq!(path, RowPath::Reflective);
    assert_eq!(reflective, compiled);
    // The values the script faces read are the rows' own.
    let stored = hub.stored(key, Source::Global).unwrap();
    let rows: Vec<Item> = gantry_host::from_value(&stored[0]).unwrap();
    assert_eq!(rows, items(6));
}

#[test]
fn tuple_fast_path_takes_a_prefix_of_the_members_and_lends_the_rust_rows() {
    let (hub, key) = hub();
    hub.store_rows(key, Source::Global, items(3)).unwrap();
    hub.read_table(key, Source::Global, |view| {
        let ids = RefCell::new(Vec::new());
        let path = view
            .for_each(|_row: i32, id: i64| ids.borrow_mut().push(id))
            .unwrap();
        assert_eq!(path, RowPath::Compiled);
        assert_eq!(*ids.borrow(), [0, 1, 2]);
        // A name borrowed from the Rust row is the row's own string.
        let rows = view.typed_rows::<Item>().unwrap();
        let first = RefCell::new(std::ptr::null::<u8>());
        view.for_each(|row: i32, _id: i64, name: &str| {
            if row == 0 {
                *first.borrow_mut() = name.as_ptr();
            }
        })
        .unwrap();
        assert_eq!(*first.borrow(), rows[0].name.as_ptr());
    })
    .unwrap();
}

/// A member of another width, a member that is no field's type, a value
/// member: each reads the values instead, with the same result.
#[test]
fn tuple_fast_path_falls_back_on_a_layout_mismatch_with_identical_results() {
    let (hub, key) = hub();
    hub.store_rows(key, Source::Global, items(4)).unwrap();
    hub.read_table(key, Source::Global, |view| {
        let narrow = RefCell::new(Vec::new());
        let path = view
            .for_each(|row: i32, id: i32| narrow.borrow_mut().push((row, id)))
            .unwrap();
        assert_eq!(path, RowPath::Fast, "an i32 member over an i64 field");
        assert_eq!(*narrow.borrow(), [(0, 0), (1, 1), (2, 2), (3, 3)]);

        let shared = RefCell::new(Vec::new());
        let path = view
            .for_each(|_row: i32, _id: i64, name: Rc<str>| shared.borrow_mut().push(name))
            .unwrap();
        assert_eq!(path, RowPath::Fast, "an Rc<str> member over a String field");
        assert_eq!(shared.borrow().len(), 4);
        assert_eq!(&*shared.borrow()[3], "n3");

        let values = RefCell::new(Vec::new());
        let path = view
            .for_each(|_row: i32, id: &Value| values.borrow_mut().push(id.clone()))
            .unwrap();
        assert_eq!(path, RowPath::Fast, "a value member has no field to read");
        assert_eq!(values.borrow()[2], Value::Int(2));
    })
    .unwrap();
}

/// Rust rows whose fields are listed in another order than the element
/// declares them: positions disagree, so the rows are read by name.
#[test]
fn tuple_fast_path_falls_back_when_the_rust_order_is_not_the_declared_one() {
    #[derive(Clone)]
    struct Swapped {
        name: String,
        id: i64,
        count: i64,
    }
    table_row!(Swapped { name, id, count });
    let hub = Hub::new();
    declare_item_shape(&hub, "Swapped", Type::Int);
    let key = hub.key("Swapped.Rows").unwrap();
    let rows = (0..3)
        .map(|i| Swapped {
            name: format!("n{i}"),
            id: i,
            count: i * 10,
        })
        .collect();
    hub.store_rows(key, Source::Global, rows).unwrap();
    let (seen, path) = hub
        .read_table(key, Source::Global, |view| visit(view, false))
        .unwrap();
    assert_eq!(path, RowPath::Reflective);
    assert_eq!(seen, expected(3));
}

/// A field serde skips (editor-only) is no member: Rust rows listing only
/// the members still read them at their own offsets, past the skipped one.
#[test]
fn skipped_fields_take_no_position_on_the_tuple_fast_path() {
    #[derive(Serialize, Deserialize, Default, Clone)]
    #[allow(dead_code)]
    struct Tagged {
        a: i64,
        #[serde(skip)]
        editor_only: i64,
        b: i64,
    }
    table_row!(Tagged { a, b });
    let hub = Hub::new();
    let (name, def) = struct_def_of::<Tagged>().unwrap();
    hub.edit_table(|t| t.declare_struct(&name, def));
    let key = hub.key("Tagged.Rows").unwrap();
    let rows = vec![
        Tagged {
            a: 1,
            editor_only: 99,
            b: 2,
        },
        Tagged {
            a: 3,
            editor_only: 98,
            b: 4,
        },
    ];
    hub.store_rows(key, Source::Global, rows).unwrap();
    hub.read_table(key, Source::Global, |view| {
        for reflective in [false, true] {
            let seen = RefCell::new(Vec::new());
            let each = |_row: i32, a: i64, b: i64| seen.borrow_mut().push((a, b));
            let path = if reflective {
                view.for_each_reflective(each)
            } else {
                view.for_each(each)
            }
            .unwrap();
            assert_eq!(path == RowPath::Compiled, !reflective);
            assert_eq!(*seen.borrow(), [(1, 2), (3, 4)]);
        }
    })
    .unwrap();
}

/// An edit through the writer makes the values differ from the Rust rows:
/// the rows are dropped and the visitor reads the edited values.
#[test]
fn tuple_fast_path_never_reads_rows_a_writer_changed() {
    let (hub, key) = hub();
    hub.store_rows(key, Source::Global, items(4)).unwrap();
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(2).unwrap().unwrap().id = 222;
    }
    let (seen, path) = hub
        .read_table(key, Source::Global, |view| {
            assert!(view.typed_rows::<Item>().is_none());
            visit(view, false)
        })
        .unwrap();
    assert_eq!(path, RowPath::Fast);
    assert_eq!(seen[2], "2:222:n2:20");
    // A store of values (not rows) leaves no Rust rows either.
    hub.store(key, Source::Global, (Serde(items(2)),)).unwrap();
    let path = hub
        .read_table(key, Source::Global, |view| visit(view, false).1)
        .unwrap();
    assert_eq!(path, RowPath::Fast);
}

/// The rows reach a whole-table listener's view, live and replayed, and
/// the diff still publishes only what changed.
#[test]
fn whole_table_listener_reads_stored_rust_rows_live_and_replayed() {
    let (hub, key) = hub();
    let log = Rc::new(RefCell::new(Vec::new()));
    let listen = |log: &Rc<RefCell<Vec<String>>>| {
        let l = log.clone();
        hub.listen_table(
            "Inv.Items",
            Source::Global,
            ListenOptions::default(),
            move |view, update| {
                let (seen, path) = visit(view, false);
                l.borrow_mut()
                    .push(format!("{path:?} {} {:?}", seen.len(), update.ranges()));
            },
        )
        .unwrap()
    };
    let _live = listen(&log);
    hub.store_rows(key, Source::Global, items(3)).unwrap();
    let mut changed = items(3);
    changed[1] = item(11);
    hub.store_rows(key, Source::Global, changed.clone())
        .unwrap();
    hub.store_rows(key, Source::Global, changed).unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "Compiled 3 [Range { index: 0, count: 3 }]",
            "Compiled 3 [Range { index: 1, count: 1 }]",
        ]
    );
    log.borrow_mut().clear();
    let _late = listen(&log);
    assert_eq!(*log.borrow(), ["Compiled 3 []"]);
}

/// In checked mode an int field the table declares as a float is widened
/// in the values; the Rust field is still an int, so a float member reads
/// the values.
#[test]
fn tuple_fast_path_reads_widened_values_not_the_int_field() {
    let hub = Hub::new();
    declare_item_shape(&hub, "Item", Type::Float);
    let key = hub
        .declare(
            "Inv.Items",
            gantry_host::KeyDecl::event()
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
        )
        .unwrap();
    hub.store_rows(key, Source::Global, items(2)).unwrap();
    hub.read_table(key, Source::Global, |view| {
        let counts = RefCell::new(Vec::new());
        let path = view
            .for_each(|_row: i32, _id: i64, _name: &str, count: f64| {
                counts.borrow_mut().push(count)
            })
            .unwrap();
        assert_ne!(path, RowPath::Compiled);
        assert_eq!(*counts.borrow(), [0.0, 10.0]);
        assert_eq!(
            view.row(1)
                .and_then(|r: &StructValue| r.get("count").cloned()),
            Some(Value::Float(10.0))
        );
    })
    .unwrap();
}

/// A visitor that takes the update last sees, on the compiled path too,
/// a full reload with its own row number in it.
#[test]
fn tuple_fast_path_hands_an_update_taking_visitor_its_row() {
    let (hub, key) = hub();
    hub.store_rows(key, Source::Global, items(3)).unwrap();
    hub.read_table(key, Source::Global, |view| {
        for reflective in [false, true] {
            let seen = RefCell::new(Vec::new());
            let each = |row: i32, id: i64, update: &gantry_host::Update| {
                seen.borrow_mut()
                    .push((row, id, update.row, update.total, update.is_full_reload()))
            };
            let path = if reflective {
                view.for_each_reflective(each)
            } else {
                view.for_each(each)
            }
            .unwrap();
            assert_eq!(path == RowPath::Compiled, !reflective);
            assert_eq!(
                *seen.borrow(),
                [(0, 0, 0, 3, true), (1, 1, 1, 3, true), (2, 2, 2, 3, true)]
            );
        }
    })
    .unwrap();
}

/// Kept listeners read a table's Rust rows too, decided per dispatch: an
/// every-row listener and a slot listener whose members line up hear the
/// same rows as ones that do not (an `i32` over the `i64` field), live and
/// replayed, and only the changed rows of a re-store.
#[test]
fn kept_row_and_slot_listeners_read_rust_rows_with_the_values_result() {
    let (hub, key) = hub();
    let log = Rc::new(RefCell::new(Vec::<String>::new()));
    let (l1, l2, l3, l4) = (log.clone(), log.clone(), log.clone(), log.clone());
    let rows = hub
        .listen_rows(
            "Inv.Items",
            Source::Global,
            gantry_host::ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, id: i64, name: String, u: &gantry_host::Update| {
                l1.borrow_mut()
                    .push(format!("rows {row} {id} {name} {}", u.row))
            },
        )
        .unwrap();
    let narrow = hub
        .listen_rows(
            "Inv.Items",
            Source::Global,
            gantry_host::ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, id: i32| l2.borrow_mut().push(format!("narrow {row} {id}")),
        )
        .unwrap();
    let slot = hub
        .listen_slot(
            "Inv.Items",
            Source::Global,
            1,
            ListenOptions::default(),
            move |id: i64, name: String| l3.borrow_mut().push(format!("slot {id} {name}")),
        )
        .unwrap();
    hub.store_rows(key, Source::Global, items(2)).unwrap();
    assert_eq!(
        std::mem::take(&mut *log.borrow_mut()),
        [
            "rows 0 0 n0 0",
            "rows 1 1 n1 1",
            "narrow 0 0",
            "narrow 1 1",
            "slot 1 n1"
        ]
    );
    assert_eq!(hub.row_path(rows.id()), Some(RowPath::Compiled));
    assert_eq!(hub.row_path(slot.id()), Some(RowPath::Compiled));
    assert_ne!(hub.row_path(narrow.id()), Some(RowPath::Compiled));

    let mut changed = items(3);
    changed[1] = item(11);
    hub.store_rows(key, Source::Global, changed).unwrap();
    assert_eq!(
        std::mem::take(&mut *log.borrow_mut()),
        [
            "rows 1 11 n11 1",
            "rows 2 2 n2 2",
            "narrow 1 11",
            "narrow 2 2",
            "slot 11 n11"
        ]
    );
    // A late listener is replayed the Rust rows.
    let _late = hub
        .listen_rows(
            "Inv.Items",
            Source::Global,
            gantry_host::ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, _id: i64, name: String| {
                l4.borrow_mut().push(format!("late {row} {name}"))
            },
        )
        .unwrap();
    assert_eq!(
        std::mem::take(&mut *log.borrow_mut()),
        ["late 0 n0", "late 1 n11", "late 2 n2"]
    );
    // A store of values leaves no Rust rows: the value path again.
    hub.store(key, Source::Global, (Serde(items(3)),)).unwrap();
    assert_eq!(hub.row_path(rows.id()), Some(RowPath::Fast));
}

/// On the compiled path as on the others, a kept listener is asked between
/// two rows whether it may still be called: one whose owner goes during
/// row 1 hears no row 2, and one that asked for the reflective path only
/// never reads at offsets.
#[test]
fn kept_listener_on_rust_rows_stops_when_its_owner_goes_and_honours_reflective_only() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let owner = hub.spawn(world).unwrap();
    let log = Rc::new(RefCell::new(Vec::<String>::new()));
    let (l1, l2) = (log.clone(), log.clone());
    let h = hub.clone();
    hub.listen_rows(
        "Inv.Items",
        Source::Global,
        gantry_host::ALL_ROWS,
        ListenOptions::default().owner(gantry_host::Owner::Object(owner)),
        move |row: i32, id: i64| {
            l1.borrow_mut().push(format!("owned {row} {id}"));
            if row == 1 {
                h.destroy(owner).unwrap();
            }
        },
    )
    .unwrap()
    .detach();
    let reflective = hub
        .listen_rows(
            "Inv.Items",
            Source::Global,
            gantry_host::ALL_ROWS,
            gantry_host::RowOptions::from(ListenOptions::default()).reflective_only(),
            move |row: i32, id: i64| l2.borrow_mut().push(format!("refl {row} {id}")),
        )
        .unwrap();
    hub.store_rows(key, Source::Global, items(4)).unwrap();
    assert_eq!(
        std::mem::take(&mut *log.borrow_mut()),
        [
            "owned 0 0",
            "owned 1 1",
            "refl 0 0",
            "refl 1 1",
            "refl 2 2",
            "refl 3 3"
        ]
    );
    assert_eq!(hub.row_path(reflective.id()), Some(RowPath::Reflective));
}
