//! Audit 11: collections from Rhai against references `001_…`/`004_…`, for
//! what `collections.rs` and `collection_spec.rs` leave open — the `~`
//! constants composed, default-valued stand-ins field by field, the §11
//! counter-examples and the eight-span limit through a script's writer,
//! late replay to every listener form, a listener taking only the row,
//! reads that must not mark, an identical re-store, and a whole-table
//! listener registered before the key is known. Rows are 0-based in Rhai.

mod common;

use common::{Fixture, rust_store};
use gantry_host::{Key, KeyDecl, Kind, Param, Source, StructDef, Type, Value};
use gantry_rhai::runtime::{RhaiOptions, ScriptId};
use rhai::Dynamic;

fn fixture() -> (Fixture, Key) {
    common::inventory(RhaiOptions::default())
}

/// `mark(rows)`: one writer scope that bumps each listed row's count.
const MARK: &str = r#"
fn mark(rows) {
    let items = GMP::StoredArray(This(), "Inv.Items");
    for r in rows { items[r].count += 1; }
}
fn ranges(u) {
    let parts = [];
    for r in u.ranges { parts.push(`${r.index}+${r.count}`); }
    `${parts} full=${u.full_reload}`
}
"#;

fn call(f: &Fixture, id: ScriptId, name: &str, args: Vec<Dynamic>) {
    if let Err(e) = f.rt.call(id, name, args) {
        panic!("{name}: {e}");
    }
}

fn rows(list: impl IntoIterator<Item = i64>) -> Dynamic {
    Dynamic::from_array(list.into_iter().map(Dynamic::from_int).collect())
}

/// 004: `GMP::AllRowsWithRemoval (= ~MAX_int32)`, `GMP::WithRemoval(5)
/// (= ~5)`: one `~` rule, under both spellings.
#[test]
fn with_removal_of_all_rows_is_all_rows_with_removal_in_rhai() {
    let (f, _) = fixture();
    f.load(
        "c.rhai",
        r#"
        print(`${GMP::WithRemoval(GMP::ALL_ROWS) == GMP::ALL_ROWS_WITH_REMOVAL} ${GMP::WithRemoval(GMP::AllRows) == GMP::AllRowsWithRemoval}`);
        print(`${GMP::ALL_ROWS} ${GMP::ALL_ROWS_WITH_REMOVAL} ${GMP::WithRemoval(0)}`);
        "#,
    );
    assert_eq!(f.printed(), ["true true", "2147483647 -2147483648 -1"]);
}

/// 004 "a removed row arrives with a negative row and a default-constructed
/// item": every declared member at its type's default — int 0, float 0.0,
/// false, "", an empty array, a nested struct of defaults, `()` for an
/// object — and the item still names its struct.
#[test]
fn removed_row_stand_in_has_every_declared_field_at_its_default_in_rhai() {
    let f = Fixture::new();
    f.hub.edit_table(|t| {
        t.declare_struct(
            "Inner",
            StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![Param::new("x", Type::Int)],
            },
        );
        t.declare_struct(
            "Rich",
            StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![
                    Param::new("i", Type::Int),
                    Param::new("f", Type::Float),
                    Param::new("b", Type::Bool),
                    Param::new("s", Type::String),
                    Param::new("list", Type::Array(Box::new(Type::Int))),
                    Param::new("inner", Type::Struct("Inner".into())),
                    Param::new("o", Type::Object),
                ],
            },
        );
    });
    f.hub
        .declare(
            "Rich.Rows",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("rows", Type::Array(Box::new(Type::Struct("Rich".into())))),
        )
        .unwrap();
    f.load(
        "rich.rhai",
        r#"
        fn row(n) { #{ __struct: "Rich", i: n, f: n + 0.5, b: true, s: `s${n}`, list: [n, n], inner: #{ x: n }, o: This() } }
        StoreObjectMessage(SELF, "Rich.Rows", [row(1), row(2)]);
        ListenRowMessage(SELF, "Rich.Rows", (), GMP::WithRemoval(1), |r, item| {
            print(`${r}|${item.__struct}|${type_of(item.i)}:${item.i}|${type_of(item.f)}:${item.f}|${item.b}|[${item.s}]|${item.list.len()}|${item.inner.__struct}:${item.inner.x}|${type_of(item.o)}`);
        });
        print("--");
        let rows = GMP::StoredArray(SELF, "Rich.Rows");
        rows.RemoveAt(1);
        rows.commit();
        "#,
    );
    let printed = f.printed();
    let at = printed.iter().position(|l| l == "--").unwrap();
    assert_eq!(
        printed[at + 1..],
        ["-2|Rich|i64:0|f64:0.0|false|[]|0|Inner:0|()"]
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

/// 001 §11, both counter-examples, through a Rhai writer: `[{0,6},{6,1},
/// {20,1},{7,13}]` is one span 0+21, and `[{0,5},{5,1}]` plus another
/// `(5,1)` is one span — each row visited once, ascending.
#[test]
fn span_merge_counter_examples_visit_each_row_once_in_rhai() {
    let (f, key) = fixture();
    let (id, obj) = f.load(
        "inv.rhai",
        &format!(
            r#"{MARK}
            ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`${{row}}`));
            ListenObjectMessage(SELF, "Inv.Items", (), |items, u| print(`update ${{u.total}}/${{u.prev_total}} ${{ranges(u)}}`));
            fn bridge() {{
                let items = GMP::StoredArray(This(), "Inv.Items");
                for r in 0..5 {{ items[r].count = 0; }}
                items.Add(#{{ id: 99 }});
                items[5].count = 1;
            }}
            "#
        ),
    );
    rust_store(&f, key, obj, 25);
    f.printed();
    call(
        &f,
        id,
        "mark",
        vec![rows((0..6).chain([6, 20]).chain(7..20))],
    );
    let mut expected: Vec<String> = (0..21).map(|r| r.to_string()).collect();
    expected.push("update 25/25 [\"0+21\"] full=false".into());
    assert_eq!(f.printed(), expected);

    rust_store(&f, key, obj, 5);
    f.printed();
    call(&f, id, "bridge", vec![]);
    let mut expected: Vec<String> = (0..6).map(|r| r.to_string()).collect();
    expected.push("update 6/5 [\"0+6\"] full=false".into());
    assert_eq!(f.printed(), expected);
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

/// 004 limits: at most eight spans, then a full reload. Eight disjoint
/// spans are eight ranges and leave an untouched slot alone; nine are a
/// full reload that wakes every live slot and every row.
#[test]
fn nine_disjoint_spans_are_a_full_reload_that_wakes_an_untouched_slot_in_rhai() {
    let (f, key) = fixture();
    let (id, obj) = f.load(
        "inv.rhai",
        &format!(
            r#"{MARK}
            let heard = 0;
            ListenRowMessage(SELF, "Inv.Items", (), 0, |row, item| print(`slot ${{row}}`));
            ListenObjectMessage(SELF, "Inv.Items", (), |items, u| print(`update ${{u.ranges.len()}} full=${{u.full_reload}}`));
            "#
        ),
    );
    rust_store(&f, key, obj, 20);
    f.printed();
    call(&f, id, "mark", vec![rows((1..=8).map(|k| 2 * k - 1))]);
    assert_eq!(f.printed(), ["update 8 full=false"]);
    call(&f, id, "mark", vec![rows((1..=9).map(|k| 2 * k - 1))]);
    assert_eq!(f.printed(), ["slot 0", "update 0 full=true"]);
}

/// 004: a stored table is replayed to each late listener as a full reload
/// from nothing — a slot gets its row, a slot past the end (with or
/// without removal) nothing, an all-rows-with-removal listener the live
/// rows only, and a whole-table listener the table with `prev_total` 0.
#[test]
fn late_replay_reaches_every_listener_form_as_a_full_reload_from_nothing_in_rhai() {
    let (f, key) = fixture();
    let obj = f.spawn();
    rust_store(&f, key, obj, 3);
    f.rt.load_script(
        "late.rhai",
        r#"
        ListenRowMessage(SELF, "Inv.Items", (), 1, |row, item| print(`slot ${row} id=${item.id}`));
        ListenRowMessage(SELF, "Inv.Items", (), 5, |row, item| print(`slot5 ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), GMP::WithRemoval(5), |row, item| print(`slot5~ ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS_WITH_REMOVAL, |row, item, u| {
            print(`all~ ${row} id=${item.id} ${u.total}/${u.prev_total} full=${u.full_reload}`);
        });
        ListenObjectMessage(SELF, "Inv.Items", (), |items, u| {
            print(`table ${items.len()} ${u.total}/${u.prev_total} full=${u.full_reload} ranges=${u.ranges.len()}`);
        });
        "#,
        obj,
    )
    .unwrap();
    assert_eq!(
        f.printed(),
        [
            "slot 1 id=1",
            "all~ 0 id=0 3/0 full=true",
            "all~ 1 id=1 3/0 full=true",
            "all~ 2 id=2 3/0 full=true",
            "table 3 3/0 full=true ranges=0",
        ]
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

/// 001 §2 "A lambda may also declare only the first few [parameters]": a
/// Rhai row listener that takes only the row (closure or named function)
/// is called once per row.
#[test]
fn row_listener_taking_only_the_row_is_called_per_row_in_rhai() {
    let (f, key) = fixture();
    let (_, obj) = f.load(
        "inv.rhai",
        r#"
        fn just_row(row) { print(`named ${row}`); }
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row| print(`closure ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, Fn("just_row"));
        "#,
    );
    rust_store(&f, key, obj, 2);
    assert_eq!(
        f.printed(),
        ["closure 0", "closure 1", "named 0", "named 1"]
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

/// 001 §5 "operator[] is const-only ... a mere read would trigger a full UI
/// refresh": reading through the writer's indexer, `Get`, `Num` and a row
/// handle's field marks nothing, so the scope publishes nothing.
#[test]
fn reads_through_the_writer_mark_nothing_and_publish_nothing_in_rhai() {
    let (f, key) = fixture();
    let (id, obj) = f.load(
        "inv.rhai",
        r#"
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`row ${row}`));
        ListenObjectMessage(SELF, "Inv.Items", (), |items, u| print(`table ${items.len()}`));
        fn read() {
            let items = GMP::StoredArray(This(), "Inv.Items");
            let a = items[1].count;
            let b = items.Get(2);
            let r = items[0];
            print(`read ${a} ${b.id} ${items.Num()} ${r.id} ${items.len()}`);
        }
        "#,
    );
    rust_store(&f, key, obj, 3);
    f.printed();
    call(&f, id, "read", vec![]);
    assert_eq!(f.printed(), ["read 10 2 3 0 3"]);
}

/// 004: storing the whole table again is diffed; an unchanged table
/// publishes nothing — from Rhai maps (fields in any order) to every
/// collection listener form.
#[test]
fn identical_store_from_rhai_publishes_nothing_to_any_collection_listener() {
    let (f, _) = fixture();
    let (id, _) = f.load(
        "inv.rhai",
        r#"
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`all ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS_WITH_REMOVAL, |row, item| print(`all~ ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), 0, |row, item| print(`slot ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), GMP::WithRemoval(1), |row, item| print(`slot~ ${row}`));
        ListenObjectMessage(SELF, "Inv.Items", (), |items, u| print(`table ${items.len()}`));
        fn put() {
            StoreObjectMessage(This(), "Inv.Items", [
                #{ __struct: "Item", id: 1, name: "a", count: 2 },
                #{ count: 3, name: "b", id: 2, __struct: "Item" },
            ]);
        }
        "#,
    );
    call(&f, id, "put", vec![]);
    assert_eq!(f.printed().len(), 7, "the first store is heard");
    call(&f, id, "put", vec![]);
    assert!(f.printed().is_empty());
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

/// 004 "A lambda ending in const FGMPStoreUpdate& opts into the collection";
/// "a collection is recognised from the stored parameter, not from a new
/// entry point". A Rhai whole-table listener `|items, update|` registered
/// before the hub knows the key carries a table still gets the table and
/// its update — not a failed call.
#[test]
fn whole_table_listener_registered_before_the_key_is_known_gets_the_update_in_rhai() {
    let f = Fixture::new();
    f.load(
        "radar.rhai",
        r#"
        ListenObjectMessage(SELF, "Radar.Blips", (), |items, u| print(`${items.len()} ${type_of(u)} ${u.total}`));
        StoreObjectMessage(SELF, "Radar.Blips", [#{ __struct: "Blip", x: 1 }, #{ __struct: "Blip", x: 2 }]);
        "#,
    );
    let (printed, errors, failures) = (f.printed(), f.errors(), f.failures());
    assert_eq!(
        printed,
        ["2 map 2"],
        "errors {errors:?}, failures {failures:?}"
    );
    assert!(
        errors.is_empty() && failures.is_empty(),
        "{errors:?} {failures:?}"
    );
}

/// DESIGN "arguments are checked and converted by the recorded signature";
/// the Rhai face's own rule: "when the signature expects a struct at that
/// position, the map is that struct". A table key declared as an array of
/// `Item` takes an array of plain maps (no `__struct`), as the Lua face
/// takes an array of plain tables — stored, sent, and heard by row
/// listeners.
#[test]
fn maps_without_a_struct_name_in_an_array_convert_by_the_declared_table_in_rhai() {
    let (f, key) = fixture();
    let (_, obj) = f.load(
        "inv.rhai",
        r#"
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`${row} ${item.__struct} ${item.name}`));
        StoreObjectMessage(SELF, "Inv.Items", [#{ id: 1, name: "a", count: 2 }, #{ id: 2, name: "b" }]);
        NotifyObjectMessage(SELF, "Inv.Items", [#{ id: 3, name: "c", count: 1 }]);
        "#,
    );
    assert_eq!(f.printed(), ["0 Item a", "1 Item b", "0 Item c"]);
    let stored = f.hub.stored(key, Source::Object(obj)).expect("stored");
    let rows = stored[0].as_array().unwrap();
    assert_eq!(
        rows[1].as_struct().unwrap().get("count"),
        Some(&Value::Int(0)),
        "a missing field takes its type's default"
    );
}

/// DESIGN checked mode with 004 "The element must be a USTRUCT": a row
/// listen on a key declared to carry one int is refused (an error or a
/// rejected-listen report naming the key), as the Rust row listen is.
#[test]
fn row_listen_on_a_key_declared_without_a_table_is_refused_in_rhai() {
    let f = Fixture::new();
    f.hub
        .declare("Player.HP", KeyDecl::event().param("hp", Type::Int))
        .unwrap();
    let outcome = f.rt.load_script(
        "hp.rhai",
        r#"ListenRowMessage(SELF, "Player.HP", (), GMP::ALL_ROWS, |row, item| print("never"));"#,
        f.spawn(),
    );
    let reports = f.hub.take_reports();
    let errored = outcome
        .as_ref()
        .err()
        .is_some_and(|e| e.to_string().contains("Player.HP"));
    let reported = reports.iter().any(
        |r| matches!(r, gantry_host::Report::ListenRejected { key, .. } if key == "Player.HP"),
    );
    assert!(
        errored || reported,
        "load {:?}, reports {reports:?}",
        outcome.map(|_| ())
    );
}
