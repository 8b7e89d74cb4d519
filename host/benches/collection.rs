//! Collection dispatch costs, 64 rows, with a plain
//! hub send measured in the same run for scale, and the floor under a
//! per-row visit: the rows as a contiguous `Vec` of a Rust struct.

use std::cell::Cell;
use std::hint::black_box;
use std::rc::Rc;

use criterion::{Criterion, criterion_group, criterion_main};
use gantry_host::collection::TableView;
use gantry_host::face::Faced;
use gantry_host::{
    ALL_ROWS, Hub, Key, KeyDecl, Kind, ListenOptions, Serde, Source, Type, Value, struct_def_of,
    to_value,
};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Default, Clone)]
struct Item {
    id: i64,
    name: String,
    count: i64,
}
gantry_host::table_row!(Item { id, name, count });

const ROWS: i64 = 64;

fn table() -> Vec<Item> {
    (0..ROWS)
        .map(|id| Item {
            id,
            name: format!("item{id}"),
            count: id * 3,
        })
        .collect()
}

fn hub() -> (Hub, Key) {
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
    hub.store(key, Source::Global, (Serde(table()),)).unwrap();
    (hub, key)
}

/// One row edit through the writer: get_mut, scope end, publish.
fn edit_one(hub: &Hub, key: Key, row: usize) {
    let mut arr = hub.stored_array(key, Source::Global);
    if let Some(Value::Struct(_)) = arr.get_mut(black_box(row)) {}
}

fn collection(c: &mut Criterion) {
    let mut group = c.benchmark_group("collection64");
    let sink = Rc::new(Cell::new(0i64));

    // For scale: a plain send to one typed listener.
    {
        let hub = Hub::new();
        let s = sink.clone();
        let _l = hub
            .listen("Player.Hurt", Source::Global, move |hp: i64| {
                s.set(s.get() + hp)
            })
            .unwrap();
        let key = hub.key("Player.Hurt").unwrap();
        group.bench_function("plain_send_one_listener", |b| {
            b.iter(|| {
                hub.send(black_box(key), Source::Global, (black_box(3i64),))
                    .unwrap()
            })
        });
    }

    // Whole table to one listener: the send path, which carries no diff
    // and no store write, so it is dispatch plus the signature check.
    {
        let (hub, key) = hub();
        let s = sink.clone();
        let _t = hub
            .listen_table(
                "Inv.Items",
                Source::Global,
                ListenOptions::default(),
                move |v, u| s.set(s.get() + v.len() as i64 + u.total as i64),
            )
            .unwrap();
        let rows = to_value(&table()).unwrap();
        let mut args = [rows.clone()];
        group.bench_function("whole_table_one_listener_send_unchecked", |b| {
            hub.set_checked(false);
            b.iter(|| {
                args[0] = rows.clone();
                hub.send_values(
                    key,
                    Source::Global,
                    &mut args,
                    gantry_host::Caller::Unrecorded,
                )
                .unwrap()
            })
        });
        group.bench_function("whole_table_one_listener_send_checked", |b| {
            hub.set_checked(true);
            b.iter(|| {
                args[0] = rows.clone();
                hub.send_values(
                    key,
                    Source::Global,
                    &mut args,
                    gantry_host::Caller::Unrecorded,
                )
                .unwrap()
            })
        });
        group.bench_function("whole_table_one_listener_writer_edit", |b| {
            b.iter(|| edit_one(&hub, key, 5))
        });
    }

    // The writer with no collection listener: the floor under the next one.
    {
        let (hub, key) = hub();
        group.bench_function("writer_edit_no_listener", |b| {
            b.iter(|| edit_one(&hub, key, 5))
        });
    }

    // 64 slot listeners, one wakes.
    {
        let (hub, key) = hub();
        let handles: Vec<_> = (0..ROWS as i32)
            .map(|slot| {
                let s = sink.clone();
                hub.listen_slot(
                    "Inv.Items",
                    Source::Global,
                    slot,
                    ListenOptions::default(),
                    move |id: i64| s.set(s.get() + id),
                )
                .unwrap()
            })
            .collect();
        group.bench_function("slots64_one_wakes_writer_edit", |b| {
            b.iter(|| edit_one(&hub, key, 5))
        });
        drop(handles);
    }

    // All-rows listener fed by the send path: 64 rows, one call each.
    {
        let (hub, key) = hub();
        hub.set_checked(false);
        let s = sink.clone();
        let _r = hub
            .listen_rows(
                "Inv.Items",
                Source::Global,
                ALL_ROWS,
                ListenOptions::default(),
                move |row: i32, id: i64, _name: Rc<str>, count: i64| {
                    s.set(s.get() + row as i64 + id + count)
                },
            )
            .unwrap();
        let rows = to_value(&table()).unwrap();
        let mut args = [rows.clone()];
        group.bench_function("all_rows_listener_send_64_rows", |b| {
            b.iter(|| {
                args[0] = rows.clone();
                hub.send_values(
                    key,
                    Source::Global,
                    &mut args,
                    gantry_host::Caller::Unrecorded,
                )
                .unwrap()
            })
        });
    }

    // Per-row visit, fast and reflective (divide by 64 for per row).
    {
        let (hub, _key) = hub();
        let rows = to_value(&table()).unwrap();
        let rows = rows.as_array().unwrap();
        let view = TableView::new(&hub, rows);
        let total = Cell::new(0i64);
        group.bench_function("for_each_64_rows_fast", |b| {
            b.iter(|| {
                view.for_each(|row: i32, id: i64, _name: Rc<str>, count: i64| {
                    total.set(total.get() + row as i64 + id + count)
                })
                .unwrap()
            })
        });
        group.bench_function("for_each_64_rows_reflective", |b| {
            b.iter(|| {
                view.for_each_reflective(|row: i32, id: i64, _name: Rc<str>, count: i64| {
                    total.set(total.get() + row as i64 + id + count)
                })
                .unwrap()
            })
        });
        // The same visits with the name borrowed from the row, as a C++
        // visitor's `const&` would take it: no reference count per row.
        group.bench_function("for_each_64_rows_fast_borrowed", |b| {
            b.iter(|| {
                view.for_each(|row: i32, id: i64, _name: &str, count: i64| {
                    total.set(total.get() + row as i64 + id + count)
                })
                .unwrap()
            })
        });
        group.bench_function("for_each_64_rows_reflective_borrowed", |b| {
            b.iter(|| {
                view.for_each_reflective(|row: i32, id: i64, _name: &str, count: i64| {
                    total.set(total.get() + row as i64 + id + count)
                })
                .unwrap()
            })
        });
        // The value model's own floor: the same rows read at fixed
        // positions with nothing confirmed (wrong for a row of another
        // layout; here only to show what the confirmation costs).
        let each_str = |row: i32, id: i64, _name: &str, count: i64| {
            total.set(total.get() + row as i64 + id + count)
        };
        group.bench_function("floor_value_rows_unconfirmed_borrowed", |b| {
            b.iter(|| {
                for (i, value) in black_box(rows).iter().enumerate() {
                    if let Value::Struct(item) = value
                        && let [
                            (_, Value::Int(id)),
                            (_, Value::Str(name)),
                            (_, Value::Int(count)),
                            ..,
                        ] = item.fields.as_slice()
                    {
                        each_str(i as i32, *id, name, *count)
                    }
                }
            })
        });
        black_box(total.get());
    }

    // Per-row visit at compiled offsets: the table stored from Rust rows
    // (`store_rows`), read through the hub's own view of it. Two closures:
    // the one above (it adds into a `Cell`, a chain through memory from
    // row to row) and one that only consumes its members (`black_box`), as
    // a visitor with no loop-carried work does; the typed `Vec` floors
    // below take the same two.
    {
        let (hub, key) = hub();
        hub.store_rows(key, Source::Global, table()).unwrap();
        let total = Cell::new(0i64);
        hub.read_table(key, Source::Global, |view| {
            group.bench_function("for_each_64_rows_compiled_borrowed", |b| {
                b.iter(|| {
                    view.for_each(|row: i32, id: i64, _name: &str, count: i64| {
                        total.set(total.get() + row as i64 + id + count)
                    })
                    .unwrap()
                })
            });
            group.bench_function("for_each_64_rows_compiled_borrowed_consumed", |b| {
                b.iter(|| {
                    view.for_each(|row: i32, id: i64, name: &str, count: i64| {
                        black_box((row, id, name, count));
                    })
                    .unwrap()
                })
            });
            group.bench_function("for_each_64_rows_fast_borrowed_consumed", |b| {
                let values = TableView::new(&hub, view.rows());
                b.iter(|| {
                    values
                        .for_each(|row: i32, id: i64, name: &str, count: i64| {
                            black_box((row, id, name, count));
                        })
                        .unwrap()
                })
            });
        })
        .unwrap();
        black_box(total.get());
    }

    // The floor under a per-row visit: the same rows as a contiguous
    // `Vec` of a Rust struct, visited with the same closure — members read
    // at compiled offsets, nothing to decide or confirm. With the name as
    // `Rc<str>` (the listener's declared type above: a reference count up
    // and down per row) and borrowed as `&str` (the loop alone).
    {
        struct Typed {
            id: i64,
            name: Rc<str>,
            count: i64,
        }
        let typed: Vec<Typed> = table()
            .into_iter()
            .map(|i| Typed {
                id: i.id,
                name: Rc::from(i.name),
                count: i.count,
            })
            .collect();
        let plain = table();
        let total = Cell::new(0i64);
        fn visit<T, F: Fn(i32, &T)>(rows: &[T], f: F) {
            for (i, row) in rows.iter().enumerate() {
                f(i as i32, row)
            }
        }
        let each = |row: i32, id: i64, _name: Rc<str>, count: i64| {
            total.set(total.get() + row as i64 + id + count)
        };
        group.bench_function("floor_typed_vec_64_rows_rc_str", |b| {
            b.iter(|| {
                visit(black_box(&typed), |i, r| {
                    each(i, r.id, r.name.clone(), r.count)
                })
            })
        });
        let each_str = |row: i32, id: i64, _name: &str, count: i64| {
            total.set(total.get() + row as i64 + id + count)
        };
        group.bench_function("floor_typed_vec_64_rows_borrowed_str", |b| {
            b.iter(|| {
                visit(black_box(&plain), |i, r| {
                    each_str(i, r.id, &r.name, r.count)
                })
            })
        });
        group.bench_function("floor_typed_vec_64_rows_borrowed_str_consumed", |b| {
            b.iter(|| {
                visit(black_box(&plain), |i, r| {
                    black_box((i, r.id, r.name.as_str(), r.count));
                })
            })
        });
        black_box(total.get());
    }
    black_box(sink.get());
    group.finish();
}

criterion_group!(benches, collection);
criterion_main!(benches);
