//! Review of three changes: lane tables (`Lane::tables`, `on_send_lane`),
//! kept every-row listeners read one range at a time (`kept_rows`), and
//! Rust rows kept as a table's mirror and read at compiled offsets
//! (`mirror.rs`, `Hub::store_rows`, `Hub::read_table`).
//!
//! The review found two defects, fixed since (their tests below say
//! what was wrong); the other tests hold behaviour that was right.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use gantry_host::collection::Update;
use gantry_host::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Hub, KeyDecl, ListenOptions, ListenerError, ListenerHandle,
    ObjectId, Owner, Param, RowPath, Serde, Source, StructDef, StructValue, Type, Value, table_row,
};

mod support;

use support::collections::{Item, KEY, hub, item, items};
use support::log::{log, taken};

table_row!(Item { id, name, count });

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

// ---------------------------------------------------------------------------
// Mirror: compiled vs reflective
// ---------------------------------------------------------------------------

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
            KeyDecl::event().param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
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
            KeyDecl::event().param("rows", Type::Array(Box::new(Type::Struct("Shadow".into())))),
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
            hub.declare("Wide.Rows", KeyDecl::event().param("rows", Type::Any))
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

// ---------------------------------------------------------------------------
// Mirror: lifetime and re-entrancy (run under Miri for the memory side)
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Lane tables
// ---------------------------------------------------------------------------

/// The collection listeners of a table send, down a lane and through
/// gathered lists (a key sent from more sources than it keeps lanes for),
/// in one delivery order: `order`, then the key's own listeners (any
/// tier) by registration, then partial ones above; an exact listener of
/// the parent never.
#[test]
fn lane_tables_and_gathered_lists_deliver_in_the_same_order() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let objects: Vec<ObjectId> = (0..5).map(|_| hub.spawn(world).unwrap()).collect();
    let log = log();
    let mut handles = Vec::new();
    let mut listen = |on: &str, scope: Source, options: ListenOptions, name: &'static str| {
        let l = log.clone();
        handles.push(
            hub.listen_table(on, scope, options, move |_, _| {
                l.borrow_mut().push(name.to_owned())
            })
            .unwrap(),
        );
    };
    listen(KEY, Source::Global, ListenOptions::default(), "global-a");
    listen(
        KEY,
        Source::World(world),
        ListenOptions::default().order(-1),
        "world",
    );
    listen(
        "Inv",
        Source::Global,
        ListenOptions::default().partial(),
        "parent-partial",
    );
    listen(
        "Inv",
        Source::Global,
        ListenOptions::default(),
        "parent-exact",
    );
    listen(
        KEY,
        Source::Global,
        ListenOptions::default().order(1),
        "global-b",
    );
    listen(
        KEY,
        Source::World(world),
        ListenOptions::default(),
        "world-c",
    );
    let expected = ["world", "global-a", "world-c", "parent-partial", "global-b"];
    // Records the key's types.
    hub.send(key, Source::Object(objects[0]), (Serde(items(2)),))
        .unwrap();
    assert_eq!(taken(&log), expected);
    for (round, object) in objects.iter().enumerate() {
        hub.send(key, Source::Object(*object), (Serde(items(2)),))
            .unwrap();
        assert_eq!(taken(&log), expected, "from object {round}");
    }
    hub.send(key, Source::Object(objects[0]), (Serde(items(2)),))
        .unwrap();
    assert_eq!(taken(&log), expected, "down the lane again");
}

/// A lane is a snapshot: a table listener added by a message listener
/// during a send is heard from the next send on; one unlistened during it
/// is not called; `times` counts sends; an owner destroyed by an earlier
/// listener takes its listener out before it is called.
#[test]
fn lane_tables_follow_listeners_coming_and_going_during_sends() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let owner = hub.spawn(world).unwrap();
    let log = log();
    let added: Rc<RefCell<Vec<ListenerHandle>>> = Rc::default();
    let doomed: Rc<RefCell<Option<ListenerHandle>>> = Rc::default();

    let (h, l, a) = (hub.clone(), log.clone(), added.clone());
    let _first = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default().order(-2),
            move |_, _| {
                l.borrow_mut().push("first".into());
                if a.borrow().is_empty() {
                    let l = l.clone();
                    let handle = h
                        .listen_table(
                            KEY,
                            Source::Global,
                            ListenOptions::default(),
                            move |_, _| l.borrow_mut().push("added".into()),
                        )
                        .unwrap();
                    a.borrow_mut().push(handle);
                }
            },
        )
        .unwrap();
    let (h, l, d) = (hub.clone(), log.clone(), doomed.clone());
    let _killer = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default().order(-1),
            move |_, _| {
                l.borrow_mut().push("killer".into());
                d.borrow_mut().take();
                if h.is_alive(owner) {
                    h.destroy(owner).unwrap();
                }
            },
        )
        .unwrap();
    let l = log.clone();
    *doomed.borrow_mut() = Some(
        hub.listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |_, _| l.borrow_mut().push("doomed".into()),
        )
        .unwrap(),
    );
    let l = log.clone();
    let _owned = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default().owner(Owner::Object(owner)),
            move |_, _| l.borrow_mut().push("owned".into()),
        )
        .unwrap();
    let l = log.clone();
    let _twice = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default().times(2).order(5),
            move |_, _| l.borrow_mut().push("twice".into()),
        )
        .unwrap();
    let before = hub.listener_count();
    hub.send(key, Source::Global, (Serde(items(1)),)).unwrap();
    assert_eq!(taken(&log), ["first", "killer", "twice"]);
    // The added listener in, the doomed and owned ones out.
    assert_eq!(hub.listener_count(), before + 1 - 2);
    hub.send(key, Source::Global, (Serde(items(1)),)).unwrap();
    assert_eq!(taken(&log), ["first", "killer", "added", "twice"]);
    hub.send(key, Source::Global, (Serde(items(1)),)).unwrap();
    assert_eq!(taken(&log), ["first", "killer", "added"]);
}

// ---------------------------------------------------------------------------
// kept_rows
// ---------------------------------------------------------------------------

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
