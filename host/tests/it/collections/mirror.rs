//! Rust rows kept as a table's mirror are read at compiled offsets when the
//! visitor's members line up with the element's layout, with the value
//! paths as the fallback; results always equal the reflective path's, and
//! the rows are dropped outside the hub's borrow.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use gantry_host::{
    Hub, KeyDecl, ListenOptions, ObjectId, Param, RowPath, Serde, Source, StructDef, StructValue,
    Type, Value, struct_def_of, table_row,
};
use gantry_test_support::log::{log, taken};
use serde::{Deserialize, Serialize};

use crate::support::collections::{Item, KEY, hub, item, items};

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
                .kind(gantry_host::Kind::Collection)
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

/// The rows a visitor saw, or its error.
type Seen = Result<Vec<String>, String>;

/// What `for_each` (compiled when it can) and `for_each_reflective` saw
/// for a `(row, id: i64)` visitor: each a list of rows or the error.
fn both_ids(view: &gantry_host::TableView<'_>) -> ((Seen, RowPath), Seen) {
    let run = |reflective: bool| {
        let seen = RefCell::new(Vec::new());
        let each = |row: i32, id: i64| seen.borrow_mut().push(format!("{row}:{id}"));
        let result = if reflective {
            view.for_each_reflective(each)
        } else {
            view.for_each(each)
        };
        match result {
            Ok(path) => (Ok(seen.into_inner()), path),
            Err(e) => (Err(e.message), RowPath::Undecided),
        }
    };
    let compiled = run(false);
    let reflective = run(true).0;
    (compiled, reflective)
}

fn declare(hub: &Hub, name: &str, parent: Option<&str>, fields: Vec<Param>) {
    hub.edit_table(|t| {
        t.declare_struct(
            name,
            StructDef {
                parent: parent.map(str::to_owned),
                doc: String::new(),
                fields,
            },
        )
    });
}

// Mirror: compiled vs reflective

/// Was a bug: the mirror is kept although the store converted the values (an
/// int field the element declared as float was widened). Once the
/// declaration says int again (a table file merged, `edit_table`), the
/// agreement passes, and the compiled path reads the Rust ints while the
/// values — which every other path reads — hold floats: `for_each` says
/// `Ok([0, 10])`, `for_each_reflective` fails on the same view.
#[test]
fn tuple_fast_path_never_reads_rust_rows_whose_values_were_widened() {
    let hub = Hub::new();
    let float_count = vec![
        Param::new("id", Type::Int),
        Param::new("name", Type::String),
        Param::new("count", Type::Float),
    ];
    declare(&hub, "Item", None, float_count);
    let key = hub
        .declare(
            KEY,
            KeyDecl::event()
                .kind(gantry_host::Kind::Collection)
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
        )
        .unwrap();
    hub.store_rows(key, Source::Global, items(2)).unwrap();
    // The table learns `count` is an int after all.
    declare(
        &hub,
        "Item",
        None,
        vec![
            Param::new("id", Type::Int),
            Param::new("name", Type::String),
            Param::new("count", Type::Int),
        ],
    );
    let (compiled, reflective) = hub
        .read_table(key, Source::Global, |view| {
            let run = |reflective: bool| {
                let seen = RefCell::new(Vec::new());
                let each =
                    |_row: i32, _id: i64, _name: &str, count: i64| seen.borrow_mut().push(count);
                let r = if reflective {
                    view.for_each_reflective(each)
                } else {
                    view.for_each(each)
                };
                r.map(|path| (path, seen.into_inner()))
                    .map_err(|e| e.message)
            };
            (run(false), run(true))
        })
        .unwrap();
    // The stored values are floats: the view's own rows say so.
    assert_eq!(
        hub.stored(key, Source::Global).unwrap()[0]
            .as_array()
            .unwrap()[1]
            .as_struct()
            .unwrap()
            .get("count"),
        Some(&Value::Float(10.0))
    );
    assert_eq!(
        compiled.as_ref().map(|(_, seen)| seen.clone()),
        reflective.as_ref().map(|(_, seen)| seen.clone()),
        "compiled path {compiled:?} vs reflective {reflective:?}"
    );
}

/// Was a bug (same cause): a child struct that re-declares an inherited field
/// with another type. Widening follows the child's own field (`float`),
/// the declared layout lists the inherited one (`int`) first, so the
/// agreement lets an `i64` member read the Rust int while the value is a
/// float: compiled `Ok`, reflective `Err`.
#[test]
fn tuple_fast_path_agrees_with_reflection_for_a_shadowed_inherited_field() {
    #[derive(Clone)]
    struct Shadow {
        count: i64,
    }
    table_row!(Shadow { count });
    let hub = Hub::new();
    declare(&hub, "Base", None, vec![Param::new("count", Type::Int)]);
    declare(
        &hub,
        "Shadow",
        Some("Base"),
        vec![Param::new("count", Type::Float)],
    );
    let key = hub
        .declare(
            "Shadow.Rows",
            KeyDecl::event()
                .kind(gantry_host::Kind::Collection)
                .param("rows", Type::Array(Box::new(Type::Struct("Shadow".into())))),
        )
        .unwrap();
    hub.store_rows(
        key,
        Source::Global,
        vec![Shadow { count: 1 }, Shadow { count: 2 }],
    )
    .unwrap();
    let ((compiled, path), reflective) = hub
        .read_table(key, Source::Global, |view| {
            let run = |reflective: bool| {
                let seen = RefCell::new(Vec::new());
                let each = |_row: i32, count: i64| seen.borrow_mut().push(count);
                let r = if reflective {
                    view.for_each_reflective(each)
                } else {
                    view.for_each(each)
                };
                match r {
                    Ok(path) => (Ok(seen.into_inner()), path),
                    Err(e) => (Err(e.message), RowPath::Undecided),
                }
            };
            (run(false), run(true).0)
        })
        .unwrap();
    assert_eq!(
        compiled, reflective,
        "compiled path ({path:?}) vs reflective"
    );
}

/// The scalar kinds a member can read at a compiled offset, over a struct
/// the registry does not declare (observed from the values) and over one
/// it declares: the compiled result is the reflective one.
#[test]
fn mirror_scalars_compiled_equal_reflective_declared_or_not() {
    #[derive(Clone)]
    struct Wide {
        small: i32,
        unsigned: u32,
        ratio: f32,
        flag: bool,
        who: ObjectId,
        tag: Rc<str>,
        big: f64,
    }
    table_row!(Wide {
        small,
        unsigned,
        ratio,
        flag,
        who,
        tag,
        big
    });
    // 0: observed from the values; 1: declared; 2: never recorded (the key
    // takes `any`), so the rows' own order is the only order.
    for mode in 0..3 {
        let declared = mode;
        let hub = Hub::new();
        let world = hub.create_world();
        let who = hub.spawn(world).unwrap();
        if mode == 2 {
            hub.declare(
                "Wide.Rows",
                KeyDecl::event()
                    .kind(gantry_host::Kind::Collection)
                    .param("rows", Type::Any),
            )
            .unwrap();
        }
        if mode == 1 {
            declare(
                &hub,
                "Wide",
                None,
                vec![
                    Param::new("small", Type::Int),
                    Param::new("unsigned", Type::Int),
                    Param::new("ratio", Type::Float),
                    Param::new("flag", Type::Bool),
                    Param::new("who", Type::Object),
                    Param::new("tag", Type::String),
                    Param::new("big", Type::Float),
                ],
            );
        }
        let key = hub.key("Wide.Rows").unwrap();
        let rows: Vec<Wide> = (0..3)
            .map(|i| Wide {
                small: -i - 1,
                unsigned: u32::MAX - i as u32,
                ratio: 0.1 + i as f32,
                flag: i % 2 == 0,
                who,
                tag: Rc::from(format!("t{i}")),
                big: f64::from(i) * 1e300,
            })
            .collect();
        hub.store_rows(key, Source::Global, rows).unwrap();
        hub.read_table(key, Source::Global, |view| {
            let run = |reflective: bool| {
                let seen = RefCell::new(Vec::new());
                let each = |row: i32,
                            small: i32,
                            unsigned: u32,
                            ratio: f32,
                            flag: bool,
                            who: ObjectId,
                            tag: &str,
                            big: f64| {
                    seen.borrow_mut().push(format!(
                        "{row} {small} {unsigned} {:08x} {flag} {who:?} {tag} {big:e}",
                        ratio.to_bits()
                    ))
                };
                let path = if reflective {
                    view.for_each_reflective(each)
                } else {
                    view.for_each(each)
                }
                .unwrap();
                (seen.into_inner(), path)
            };
            let (compiled, path) = run(false);
            let (reflective, _) = run(true);
            assert_eq!(path, RowPath::Compiled, "mode {declared}");
            assert_eq!(compiled, reflective, "mode {declared}");
        })
        .unwrap();
        assert_eq!(hub.table().structs.get("Wide").is_some(), mode != 2);
    }
}

/// An `Option` field stops the compiled prefix there (no member reads
/// it at an offset); members before it are compiled, the rest read the
/// values; the results agree either way.
#[test]
fn mirror_option_field_ends_the_compiled_prefix() {
    #[derive(Clone)]
    struct Opt {
        id: i64,
        note: Option<String>,
        after: i64,
    }
    table_row!(Opt { id, note, after });
    let hub = Hub::new();
    hub.set_checked(false);
    let key = hub.key("Opt.Rows").unwrap();
    let rows = vec![
        Opt {
            id: 1,
            note: None,
            after: 10,
        },
        Opt {
            id: 2,
            note: Some("x".into()),
            after: 20,
        },
    ];
    hub.store_rows(key, Source::Global, rows).unwrap();
    hub.read_table(key, Source::Global, |view| {
        let ((compiled, path), reflective) = both_ids(view);
        assert_eq!(path, RowPath::Compiled);
        assert_eq!(compiled, reflective);
        let seen = RefCell::new(Vec::new());
        let path = view
            .for_each(|_row: i32, id: i64, note: &Value, after: i64| {
                seen.borrow_mut().push(format!("{id} {note:?} {after}"))
            })
            .unwrap();
        assert_ne!(path, RowPath::Compiled);
        assert_eq!(seen.borrow().len(), 2);
    })
    .unwrap();
}

/// Two Rust types of one name (`Clash`) with other layouts, each the
/// mirror of its own table: each is read at its own offsets, or by name,
/// never at the other's.
#[test]
fn mirror_struct_name_clash_reads_each_type_at_its_own_offsets() {
    mod a {
        #[derive(Clone)]
        pub struct Clash {
            pub id: i64,
            pub name: String,
        }
        gantry_host::table_row!(Clash { id, name });
    }
    mod b {
        #[derive(Clone)]
        pub struct Clash {
            pub name: String,
            pub id: i64,
        }
        gantry_host::table_row!(Clash { name, id });
    }
    let hub = Hub::new();
    hub.set_checked(false);
    let ka = hub.key("Clash.A").unwrap();
    let kb = hub.key("Clash.B").unwrap();
    hub.store_rows(
        ka,
        Source::Global,
        vec![a::Clash {
            id: 7,
            name: "a".into(),
        }],
    )
    .unwrap();
    hub.store_rows(
        kb,
        Source::Global,
        vec![b::Clash {
            name: "b".into(),
            id: 8,
        }],
    )
    .unwrap();
    for key in [ka, kb] {
        hub.read_table(key, Source::Global, |view| {
            let ((compiled, _), reflective) = both_ids(view);
            assert_eq!(compiled, reflective);
            assert!(
                view.typed_rows::<a::Clash>().is_some() != view.typed_rows::<b::Clash>().is_some()
            );
        })
        .unwrap();
    }
}

/// An empty table of rows: nothing is read either way.
#[test]
fn mirror_empty_table_reads_nothing() {
    let (hub, key) = hub();
    hub.store_rows::<Item>(key, Source::Global, Vec::new())
        .unwrap();
    hub.read_table(key, Source::Global, |view| {
        let ((compiled, _), reflective) = both_ids(view);
        assert_eq!(compiled, Ok(vec![]));
        assert_eq!(reflective, Ok(vec![]));
        assert_eq!(view.typed_rows::<Item>().map(<[Item]>::len), Some(0));
    })
    .unwrap();
}

/// A `#[serde(rename)]`d field: the rows' values carry the Rust name, the
/// declaration the serde one; the compiled path is not taken.
#[test]
fn mirror_serde_renamed_field_is_not_read_at_an_offset() {
    #[derive(serde::Serialize, serde::Deserialize, Clone, Default)]
    struct Renamed {
        #[serde(rename = "ID")]
        id: i64,
    }
    table_row!(Renamed { id });
    let hub = Hub::new();
    hub.set_checked(false);
    let (name, def) = gantry_host::struct_def_of::<Renamed>().unwrap();
    hub.edit_table(|t| t.declare_struct(&name, def));
    let key = hub.key("Renamed.Rows").unwrap();
    hub.store_rows(key, Source::Global, vec![Renamed { id: 3 }])
        .unwrap();
    hub.read_table(key, Source::Global, |view| {
        let ((compiled, path), reflective) = both_ids(view);
        assert_ne!(path, RowPath::Compiled);
        assert_eq!(compiled, reflective);
    })
    .unwrap();
}

// Mirror: lifetime and re-entrancy (run under Miri for the memory side)

/// While a compiled `for_each` borrows the rows' strings, the visitor
/// replaces the stored table (rows, values, a writer), removes it and
/// stores again: the borrowed rows are the old table's, intact.
#[test]
fn mirror_view_outlives_replacement_of_its_table_mid_visit() {
    let (hub, key) = hub();
    hub.store_rows(key, Source::Global, items(4)).unwrap();
    let seen = hub
        .read_table(key, Source::Global, |view| {
            let seen = RefCell::new(Vec::new());
            let path = view
                .for_each(|row: i32, id: i64, name: &str| {
                    match row {
                        0 => {
                            // A nested visit of the same rows first.
                            let inner = hub
                                .read_table(key, Source::Global, |inner| {
                                    let names = RefCell::new(String::new());
                                    let path = inner
                                        .for_each(|_row: i32, _id: i64, name: &str| {
                                            names.borrow_mut().push_str(name)
                                        })
                                        .unwrap();
                                    (path, names.into_inner())
                                })
                                .unwrap();
                            assert_eq!(inner, (RowPath::Compiled, "n0n1n2n3".to_owned()));
                            hub.store_rows(key, Source::Global, items(1)).unwrap();
                        }
                        1 => {
                            hub.store(key, Source::Global, (Serde(items(2)),)).unwrap();
                            let mut arr = hub.stored_array(key, Source::Global);
                            arr.set_len(0);
                            arr.publish().unwrap();
                        }
                        2 => {
                            hub.remove_stored(key, Source::Global);
                        }
                        _ => {}
                    }
                    seen.borrow_mut().push(format!("{row}:{id}:{name}"));
                })
                .unwrap();
            assert_eq!(path, RowPath::Compiled);
            seen.into_inner()
        })
        .unwrap();
    assert_eq!(seen, ["0:0:n0", "1:1:n1", "2:2:n2", "3:3:n3"]);
}

/// A whole-table listener that stores a new table of rows from inside its
/// compiled visit: the visit goes on over the rows it was called with;
/// the nested store is heard after.
#[test]
fn mirror_listener_storing_during_its_visit_keeps_reading_its_own_rows() {
    let (hub, key) = hub();
    let log = log();
    let l = log.clone();
    let h = hub.clone();
    let _t = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, _| {
                let n = view.len();
                let path = view
                    .for_each(|row: i32, _id: i64, name: &str| {
                        if row == 0 && n == 3 {
                            h.store_rows(key, Source::Global, items(1)).unwrap();
                        }
                        l.borrow_mut().push(format!("{n}/{row}:{name}"));
                    })
                    .unwrap();
                l.borrow_mut().push(format!("{path:?}"));
            },
        )
        .unwrap();
    hub.store_rows(key, Source::Global, items(3)).unwrap();
    assert_eq!(
        taken(&log),
        [
            "1/0:n0", "Compiled", "3/0:n0", "3/1:n1", "3/2:n2", "Compiled"
        ]
    );
}

/// A row type whose unlisted field runs code on drop (here: asks the hub
/// how many listeners it has).
struct Guard(Hub);

impl Drop for Guard {
    fn drop(&mut self) {
        // (Not while unwinding: a second panic would abort the run.)
        if !std::thread::panicking() {
            let _ = self.0.listener_count();
        }
    }
}

struct Guarded {
    id: i64,
    #[allow(dead_code)]
    guard: Guard,
}

table_row!(Guarded { id });

fn guarded(hub: &Hub, n: i64) -> Vec<Guarded> {
    (0..n)
        .map(|id| Guarded {
            id,
            guard: Guard(hub.clone()),
        })
        .collect()
}

fn no_panic(what: &str, f: impl FnOnce()) {
    let result = catch_unwind(AssertUnwindSafe(f));
    assert!(
        result.is_ok(),
        "{what}: the Rust rows were dropped while the hub's state was borrowed"
    );
}

/// Was a bug: the mirror keeps the user's rows, whose drop may run user code;
/// a writer that replaces the stored table drops them inside
/// `with_state` (the hub keeps a graveyard for exactly this), so a row
/// whose drop touches the hub panics with a borrow error.
#[test]
fn rust_rows_are_dropped_outside_the_hub_borrow_by_a_writer() {
    let hub = Hub::new();
    let key = hub.key("Guarded.Rows").unwrap();
    hub.store_rows(key, Source::Global, guarded(&hub, 2))
        .unwrap();
    no_panic("a writer's add", || {
        let mut arr = hub.stored_array(key, Source::Global);
        arr.add(Value::structure(
            StructValue::new("Guarded").with("id", 9i64),
        ));
        arr.publish().unwrap();
    });
}

/// Was a bug (same cause): the in-place writer path drops the mirror in
/// `swap_edits_into_store`, under the state's `borrow_mut`.
#[test]
fn rust_rows_are_dropped_outside_the_hub_borrow_by_an_in_place_edit() {
    let hub = Hub::new();
    let key = hub.key("Guarded.Rows").unwrap();
    hub.store_rows(key, Source::Global, guarded(&hub, 2))
        .unwrap();
    no_panic("an in-place edit", || {
        let mut arr = hub.stored_array(key, Source::Global);
        arr.set(
            0,
            Value::structure(StructValue::new("Guarded").with("id", 5i64)),
        );
        arr.publish().unwrap();
    });
}

/// Was a bug (same cause): destroying the object a table of rows was stored
/// for drops the rows inside `with_state` (`stores.retain`).
#[test]
fn rust_rows_are_dropped_outside_the_hub_borrow_by_destroy() {
    let hub = Hub::new();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let key = hub.key("Guarded.Rows").unwrap();
    hub.store_rows(key, Source::Object(object), guarded(&hub, 2))
        .unwrap();
    no_panic("destroy", || hub.destroy(object).unwrap());
}

/// The same for a world's tables and for a reset.
#[test]
fn rust_rows_are_dropped_outside_the_hub_borrow_by_destroy_world_and_reset() {
    let hub = Hub::new();
    let world = hub.create_world();
    let key = hub.key("Guarded.Rows").unwrap();
    hub.store_rows(key, Source::World(world), guarded(&hub, 2))
        .unwrap();
    no_panic("destroy_world", || hub.destroy_world(world).unwrap());
    hub.store_rows(key, Source::Global, guarded(&hub, 2))
        .unwrap();
    no_panic("reset", || hub.reset());
    assert!(hub.stored(key, Source::Global).is_none());
}
