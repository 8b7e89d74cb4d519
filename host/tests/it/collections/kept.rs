//! Kept listeners (every-row and slot listeners read one range at a time)
//! hear the same calls whether the rows are Rust rows read at compiled
//! offsets, the same rows read reflectively, or values.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gantry_host::collection::Update;
use gantry_host::face::Faced;
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Hub, Key, ListenOptions, ListenerError, ListenerHandle,
    ListenerId, RowOptions, RowPath, Serde, Source, StoredArray, StructValue, Value, table_row,
    with_removal,
};
use gantry_test_support::log::{Log, log, taken};

use crate::support::collections::{Item, KEY, hub, item, items};

// kept_rows

/// What a kept every-row listener should hear for `update`: each range's
/// rows up to the larger count when it wants removals, live rows as
/// themselves, gone ones as `!row`.
fn expected_rows(update: &Update, removal: bool) -> Vec<i32> {
    let upper = if removal {
        update.total.max(update.prev_total)
    } else {
        update.total
    };
    let ranges: Vec<(i32, i32)> = if update.ranges().is_empty() {
        vec![(0, upper)]
    } else {
        update.ranges().iter().map(|r| (r.index, r.end())).collect()
    };
    let mut rows = Vec::new();
    for (start, end) in ranges {
        for row in start..end.min(upper) {
            rows.push(if row < update.total { row } else { !row });
        }
    }
    rows
}

/// The rows a typed kept listener (one call per range), a script-style
/// dynamic one (one call per row) and the update say, over growth,
/// shrinking with an edit inside, a full reload and an empty table: the
/// same rows, and `update.row` as the row argument (`!row` when gone).
#[test]
fn kept_rows_match_the_update_and_the_dynamic_listener() {
    let (hub, key) = hub();
    for removal in [false, true] {
        hub.remove_stored(key, Source::Global);
        let index = if removal {
            ALL_ROWS_WITH_REMOVAL
        } else {
            ALL_ROWS
        };
        let typed: Rc<RefCell<Vec<i32>>> = Rc::default();
        let dynamic: Rc<RefCell<Vec<i32>>> = Rc::default();
        let updates: Rc<RefCell<Vec<Update>>> = Rc::default();
        let t = typed.clone();
        let _typed = hub
            .listen_rows(
                KEY,
                Source::Global,
                index,
                ListenOptions::default(),
                move |row: i32, id: i64, u: &Update| {
                    assert_eq!(u.row, row, "update.row is the row argument");
                    if row >= 0 {
                        assert_eq!(id % 100, i64::from(row) % 100, "row {row} id {id}");
                    } else {
                        assert_eq!(id, 0, "a stand-in");
                    }
                    t.borrow_mut().push(row);
                },
            )
            .unwrap();
        let d = dynamic.clone();
        let f: Rc<gantry_host::collection::listen::RowFn> = Rc::new(
            move |row: i32, _item: &Value, u: &Update| -> Result<(), ListenerError> {
                assert_eq!(u.row, row);
                d.borrow_mut().push(row);
                Ok(())
            },
        );
        let _dynamic = hub
            .listen_rows_raw(
                KEY,
                Source::Global,
                index,
                ListenOptions::default(),
                None,
                f,
            )
            .unwrap();
        let u = updates.clone();
        let _updates = hub
            .listen_update(
                KEY,
                Source::Global,
                ListenOptions::default(),
                move |update| u.borrow_mut().push(update.clone()),
            )
            .unwrap();
        let tables: Vec<Vec<Item>> = vec![
            items(4),
            items(10),
            {
                let mut t = items(6);
                t[2] = item(102);
                t
            },
            {
                let mut t = items(6);
                t[1] = item(101);
                t[4] = item(104);
                t
            },
            Vec::new(),
            items(3),
        ];
        for table in tables {
            typed.borrow_mut().clear();
            dynamic.borrow_mut().clear();
            updates.borrow_mut().clear();
            hub.store(key, Source::Global, (Serde(table),)).unwrap();
            let update = updates.borrow().last().cloned().unwrap();
            let want = expected_rows(&update, removal);
            assert_eq!(*typed.borrow(), want, "typed, {update:?}");
            assert_eq!(*dynamic.borrow(), want, "dynamic, {update:?}");
        }
        // A send: a full reload, never a removal.
        typed.borrow_mut().clear();
        hub.send(key, Source::Global, (Serde(items(2)),)).unwrap();
        assert_eq!(*typed.borrow(), [0, 1]);
    }
}

/// A kept listener that unlistens itself (drops its handle) during a row
/// hears no later row of the range, nor any removed row after it, nor
/// the next range.
#[test]
fn kept_rows_stop_when_the_listener_unlistens_itself_mid_range() {
    let (hub, key) = hub();
    let log = log();
    let slot: Rc<RefCell<Option<ListenerHandle>>> = Rc::default();
    let (l, s) = (log.clone(), slot.clone());
    *slot.borrow_mut() = Some(
        hub.listen_rows(
            KEY,
            Source::Global,
            ALL_ROWS_WITH_REMOVAL,
            ListenOptions::default(),
            move |row: i32, _id: i64| {
                l.borrow_mut().push(format!("{row}"));
                if row == 2 {
                    s.borrow_mut().take();
                }
            },
        )
        .unwrap(),
    );
    let count = hub.listener_count();
    // A first table of 8 rows: row 2 unlistens, rows 3.. are not heard.
    hub.store(key, Source::Global, (Serde(items(8)),)).unwrap();
    assert_eq!(taken(&log), ["0", "1", "2"]);
    assert_eq!(hub.listener_count(), count - 1);
    hub.store(key, Source::Global, (Serde(items(3)),)).unwrap();
    assert!(taken(&log).is_empty());
}

/// `times(1)`: one dispatch's rows, every one of them (the use is taken
/// per dispatch, not per row), removed rows included; then nothing.
#[test]
fn kept_rows_times_counts_dispatches_not_rows() {
    let (hub, key) = hub();
    hub.store(key, Source::Global, (Serde(items(5)),)).unwrap();
    let log: Rc<RefCell<Vec<i32>>> = Rc::default();
    let l = log.clone();
    let mut changed = items(3);
    changed[0] = item(100);
    let _h = hub
        .listen_rows(
            KEY,
            Source::Global,
            ALL_ROWS_WITH_REMOVAL,
            ListenOptions::default().times(2),
            move |row: i32, _id: i64| l.borrow_mut().push(row),
        )
        .unwrap();
    assert_eq!(*log.borrow(), [0, 1, 2, 3, 4], "the replay is one use");
    log.borrow_mut().clear();
    hub.store(key, Source::Global, (Serde(changed),)).unwrap();
    let heard = std::mem::take(&mut *log.borrow_mut());
    assert_eq!(heard.first(), Some(&0));
    assert!(
        heard.contains(&!4),
        "removed rows of the same dispatch: {heard:?}"
    );
    hub.store(key, Source::Global, (Serde(items(9)),)).unwrap();
    assert!(log.borrow().is_empty());
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// `store_rows`, listeners free to read at compiled offsets.
    Compiled,
    /// `store_rows`, listeners `reflective_only` (value path).
    Reflective,
    /// `store` of the same rows as values.
    Values,
}

const MODES: [Mode; 3] = [Mode::Compiled, Mode::Reflective, Mode::Values];

fn opts(mode: Mode, listen: ListenOptions) -> RowOptions {
    let o = RowOptions::from(listen);
    if mode == Mode::Reflective {
        o.reflective_only()
    } else {
        o
    }
}

fn put(hub: &Hub, key: Key, mode: Mode, rows: Vec<Item>) {
    match mode {
        Mode::Values => {
            hub.store(key, Source::Global, (Serde(rows),)).unwrap();
        }
        _ => {
            hub.store_rows(key, Source::Global, rows).unwrap();
        }
    }
}

fn fmt(u: &Update) -> String {
    format!(
        "[row {} total {} prev {} ranges {:?}]",
        u.row,
        u.total,
        u.prev_total,
        u.ranges()
            .iter()
            .map(|r| (r.index, r.count))
            .collect::<Vec<_>>()
    )
}

/// An every-row listener logging everything it is handed.
fn rows_listener(
    hub: &Hub,
    mode: Mode,
    tag: &'static str,
    index: i32,
    o: ListenOptions,
    l: &Log,
) -> ListenerId {
    let l = l.clone();
    hub.listen_rows(
        KEY,
        Source::Global,
        index,
        opts(mode, o),
        move |row: i32, id: i64, name: String, count: i64, u: &Update| {
            l.borrow_mut()
                .push(format!("{tag} {row} {id} {name} {count} {}", fmt(u)))
        },
    )
    .unwrap()
    .detach()
}

/// A slot listener logging everything it is handed.
fn slot_listener(hub: &Hub, mode: Mode, tag: &'static str, index: i32, l: &Log) -> ListenerId {
    let l = l.clone();
    hub.listen_slot(
        KEY,
        Source::Global,
        index,
        opts(mode, ListenOptions::default()),
        move |id: i64, name: String, u: &Update| {
            l.borrow_mut().push(format!("{tag} {id} {name} {}", fmt(u)))
        },
    )
    .unwrap()
    .detach()
}

fn changed(n: i64, at: &[usize]) -> Vec<Item> {
    let mut rows = items(n);
    for &i in at {
        rows[i] = item(100 + i as i64);
    }
    rows
}

/// The stores every test goes through: first table, several changed
/// ranges, growth, shrink, to nothing, regrowth.
fn script(hub: &Hub, key: Key, mode: Mode, l: &Log) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for rows in [
        items(6),
        changed(6, &[1, 4]),
        changed(9, &[0, 4]),
        changed(3, &[0]),
        Vec::new(),
        items(2),
    ] {
        put(hub, key, mode, rows);
        out.push(taken(l));
    }
    out
}

fn all_listeners(hub: &Hub, mode: Mode, l: &Log) -> Vec<ListenerId> {
    let d = ListenOptions::default;
    vec![
        rows_listener(hub, mode, "all", ALL_ROWS, d(), l),
        rows_listener(hub, mode, "allrm", ALL_ROWS_WITH_REMOVAL, d(), l),
        rows_listener(hub, mode, "rows-slot2", 2, d(), l),
        rows_listener(hub, mode, "rows-slot4rm", with_removal(4), d(), l),
        rows_listener(hub, mode, "times2", ALL_ROWS, d().times(2), l),
        slot_listener(hub, mode, "slot1", 1, l),
        slot_listener(hub, mode, "slot4rm", with_removal(4), l),
        slot_listener(hub, mode, "slot50", 50, l),
        slot_listener(hub, mode, "slot7rm", with_removal(7), l),
    ]
}

#[test]
fn kept_listeners_hear_the_same_calls_on_all_three_paths() {
    let runs: Vec<_> = MODES
        .iter()
        .map(|&mode| {
            let (hub, key) = hub();
            let l = log();
            let ids = all_listeners(&hub, mode, &l);
            let out = script(&hub, key, mode, &l);
            // A late listener of each kind is replayed the stored table.
            put(&hub, key, mode, changed(5, &[3]));
            let _ = taken(&l);
            rows_listener(&hub, mode, "late", ALL_ROWS, ListenOptions::default(), &l);
            rows_listener(
                &hub,
                mode,
                "laterm",
                ALL_ROWS_WITH_REMOVAL,
                ListenOptions::default(),
                &l,
            );
            slot_listener(&hub, mode, "lateslot", 3, &l);
            rows_listener(&hub, mode, "lateslot-rows", 4, ListenOptions::default(), &l);
            let late = taken(&l);
            let paths: Vec<_> = ids.iter().map(|id| hub.row_path(*id)).collect();
            (out, late, paths)
        })
        .collect();
    assert_eq!(runs[0].0, runs[1].0, "compiled vs reflective (script)");
    assert_eq!(runs[0].0, runs[2].0, "compiled vs values (script)");
    assert_eq!(runs[0].1, runs[1].1, "compiled vs reflective (late)");
    assert_eq!(runs[0].1, runs[2].1, "compiled vs values (late)");
    assert!(!runs[0].1.is_empty());
    // The compiled run did read at offsets (the every-row and slot
    // listeners), the reflective one did not.
    assert_eq!(runs[0].2[0], Some(RowPath::Compiled));
    assert_ne!(runs[1].2[0], Some(RowPath::Compiled));
    // Several ranges in one update were exercised.
    assert!(
        runs[0].0[1]
            .iter()
            .any(|s| s.contains("ranges [(1, 1), (4, 1)]")),
        "{:#?}",
        runs[0].0
    );
}

/// A writer edit drops the Rust rows: the next dispatch reads the edited
/// values, on all paths alike, and no kept listener says Compiled.
#[test]
fn writer_edit_after_rust_rows_reaches_kept_listeners_as_values() {
    let runs: Vec<_> = MODES
        .iter()
        .map(|&mode| {
            let (hub, key) = hub();
            let l = log();
            let ids = all_listeners(&hub, mode, &l);
            put(&hub, key, mode, items(6));
            let _ = taken(&l);
            {
                let mut w = StoredArray::open(&hub, key, Source::Global);
                w.set(
                    1,
                    Value::structure(
                        StructValue::new("Item")
                            .with("id", 77i64)
                            .with("name", "edited")
                            .with("count", 7i64),
                    ),
                );
                w.set_len(5);
                w.publish().unwrap();
            }
            let edit = taken(&l);
            let paths: Vec<_> = ids.iter().map(|id| hub.row_path(*id)).collect();
            (edit, paths)
        })
        .collect();
    assert_eq!(runs[0].0, runs[1].0);
    assert_eq!(runs[0].0, runs[2].0);
    assert!(runs[0].0.iter().any(|s| s.contains("edited")));
    for (i, p) in runs[0].1.iter().enumerate() {
        assert_ne!(
            *p,
            Some(RowPath::Compiled),
            "listener {i} after a writer edit"
        );
    }
}

/// A listener that unlistens itself on row 2, one whose owner is destroyed
/// on row 3, one used up by `times(1)`: the same rows on every path.
#[test]
fn kept_listeners_that_go_mid_range_stop_alike() {
    let runs: Vec<_> = MODES
        .iter()
        .map(|&mode| {
            let (hub, key) = hub();
            let l = log();
            let me: Rc<Cell<Option<ListenerId>>> = Rc::default();
            let (h, m, ll) = (hub.clone(), me.clone(), l.clone());
            let id = hub
                .listen_rows(
                    KEY,
                    Source::Global,
                    ALL_ROWS,
                    opts(mode, ListenOptions::default()),
                    move |row: i32, id: i64| {
                        ll.borrow_mut().push(format!("self {row} {id}"));
                        if row == 2 {
                            h.unlisten(m.get().unwrap());
                        }
                    },
                )
                .unwrap()
                .detach();
            me.set(Some(id));
            let world = hub.create_world();
            let owner = hub.spawn(world).unwrap();
            let (h, ll) = (hub.clone(), l.clone());
            hub.listen_rows(
                KEY,
                Source::Global,
                ALL_ROWS,
                opts(
                    mode,
                    ListenOptions::default().owner(gantry_host::Owner::Object(owner)),
                ),
                move |row: i32, id: i64| {
                    ll.borrow_mut().push(format!("owned {row} {id}"));
                    if row == 3 {
                        h.destroy(owner).unwrap();
                    }
                },
            )
            .unwrap()
            .detach();
            rows_listener(
                &hub,
                mode,
                "once",
                ALL_ROWS,
                ListenOptions::default().times(1),
                &l,
            );
            put(&hub, key, mode, items(6));
            put(&hub, key, mode, changed(6, &[0, 5]));
            taken(&l)
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
}

/// A kept listener that stores a new table (Rust rows) from inside its
/// callback on row 1: the outer dispatch goes on over the rows it began
/// with, on every path.
#[test]
fn kept_listener_restoring_the_table_mid_range_keeps_the_outer_rows() {
    let runs: Vec<_> = MODES
        .iter()
        .map(|&mode| {
            let (hub, key) = hub();
            let l = log();
            let done = Rc::new(Cell::new(false));
            let (h, ll, d) = (hub.clone(), l.clone(), done.clone());
            hub.listen_rows(
                KEY,
                Source::Global,
                ALL_ROWS,
                opts(mode, ListenOptions::default()),
                move |row: i32, id: i64, name: String, u: &Update| {
                    ll.borrow_mut()
                        .push(format!("outer {row} {id} {name} {}", fmt(u)));
                    if row == 1 && !d.replace(true) {
                        // A different, shorter table, big strings so that a
                        // freed buffer would be reused.
                        let rows: Vec<Item> = (0..2)
                            .map(|i| Item {
                                id: 1000 + i,
                                name: "x".repeat(64),
                                count: 0,
                            })
                            .collect();
                        put(&h, key, mode, rows);
                        // And once more, dropping the first new mirror.
                        put(&h, key, mode, items(1));
                    }
                },
            )
            .unwrap()
            .detach();
            slot_listener(&hub, mode, "slot3", 3, &l);
            put(&hub, key, mode, items(5));
            taken(&l)
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
    // The outer dispatch's rows 2..5 are the first table's.
    assert!(
        runs[0].iter().any(|s| s.starts_with("outer 4 4 n4")),
        "{:#?}",
        runs[0]
    );
}

/// A slot listener whose slot is removed after a compiled dispatch:
/// `Hub::row_path` says the path of the rows last read.
#[test]
fn row_path_after_a_dispatch_of_removed_rows_only_is_not_compiled() {
    let (hub, key) = hub();
    let l = log();
    let slot = slot_listener(&hub, Mode::Compiled, "slot", with_removal(3), &l);
    let rows = rows_listener(
        &hub,
        Mode::Compiled,
        "rows",
        ALL_ROWS_WITH_REMOVAL,
        ListenOptions::default(),
        &l,
    );
    hub.store_rows(key, Source::Global, items(5)).unwrap();
    assert_eq!(hub.row_path(slot), Some(RowPath::Compiled));
    assert_eq!(hub.row_path(rows), Some(RowPath::Compiled));
    let _ = taken(&l);
    // Only removed rows this time: read as stand-ins from the values.
    hub.store_rows(key, Source::Global, items(2)).unwrap();
    let heard = taken(&l);
    assert!(
        heard.iter().any(|s| s.starts_with("slot 0  [row -4")),
        "{heard:?}"
    );
    // Both were read as stand-ins from the values (reader path Fast).
    assert_eq!(
        (hub.row_path(slot), hub.row_path(rows)),
        (Some(RowPath::Fast), Some(RowPath::Fast)),
        "stand-ins were read from the values"
    );
}

/// Compiled members over a table whose element is not declared, and over
/// a declaration whose order differs from the Rust struct's.
#[test]
fn undeclared_and_reordered_elements_read_alike() {
    table_row!(Loose { b, a });
    #[derive(Clone)]
    struct Loose {
        b: String,
        a: i64,
    }
    let run = |reflective: bool, declare: bool| {
        let hub = Hub::new();
        if declare {
            hub.edit_table(|t| {
                t.declare_struct(
                    "Loose",
                    gantry_host::StructDef {
                        parent: None,
                        doc: String::new(),
                        fields: vec![
                            gantry_host::Param::new("a", gantry_host::Type::Int),
                            gantry_host::Param::new("b", gantry_host::Type::String),
                        ],
                    },
                )
            });
        }
        let key = hub.key("T.Loose").unwrap();
        let l = log();
        let ll = l.clone();
        let mut o = RowOptions::from(ListenOptions::default());
        if reflective {
            o = o.reflective_only();
        }
        let id = hub
            .listen_rows(
                "T.Loose",
                Source::Global,
                ALL_ROWS,
                o,
                move |row: i32, x: String, u: &Update| {
                    ll.borrow_mut().push(format!("{row} {x} {}", fmt(u)))
                },
            )
            .map(|h| h.detach());
        let rows = (0..3)
            .map(|i| Loose {
                b: format!("b{i}"),
                a: i,
            })
            .collect();
        hub.store_rows(key, Source::Global, rows).unwrap();
        (taken(&l), id.ok().and_then(|id| hub.row_path(id)))
    };
    for declare in [false, true] {
        let (c, cp) = run(false, declare);
        let (r, _) = run(true, declare);
        assert_eq!(c, r, "declared: {declare}");
        if !declare {
            assert_eq!(cp, Some(RowPath::Compiled));
            assert_eq!(c.len(), 3);
        } else {
            // `b` is declared second: no compiled read of member 0.
            assert_ne!(cp, Some(RowPath::Compiled));
        }
    }
}
