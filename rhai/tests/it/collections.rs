//! Collections from Rhai (rows 0-based): row listeners, whole-table
//! listeners with their update, slots and removal with default-valued
//! stand-ins, the stored-array writer (its spans, the eight-span limit, a
//! length no table can hold, reads that do not mark), the send path, late
//! replay to every listener form, and the synchronous `GMP::Request`; a row
//! listen needs a key that carries a table (refused naming the key and
//! line on one known to carry something else, kept on one not known yet).

use std::rc::Rc;

use gantry_host::collection::Update;
use gantry_host::face::Faced;
use gantry_host::face::ScriptRuntime;
use gantry_host::{
    ALL_ROWS, Caller, Key, KeyDecl, Kind, ListenOptions, ObjectId, Param, Source, StructDef, Type,
    Value,
};
use gantry_rhai::runtime::{RhaiOptions, ScriptId};
use rhai::Dynamic;

use crate::support::{Fixture, item, rust_store};

const KEY: &str = crate::support::INVENTORY;

fn fixture() -> (Fixture, Key) {
    crate::support::inventory(RhaiOptions::default())
}

/// The script functions the tests edit through: each opens a writer in its
/// own scope, so each call publishes once when it returns.
const EDITS: &str = r#"
fn bump(i) { let items = GMP::StoredArray(This(), "Inv.Items"); items[i].count += 1; }
fn shrink(n) { let items = GMP::StoredArray(This(), "Inv.Items"); items.SetNum(n); }
fn insert(i, id) {
    let items = GMP::StoredArray(This(), "Inv.Items");
    items.Insert(i, #{ id: id, name: `n${id}`, count: 0 });
}
"#;

fn load_with_edits(f: &Fixture, body: &str) -> (ScriptId, ObjectId) {
    f.load("inv.rhai", &format!("{EDITS}\n{body}"))
}

fn call(f: &Fixture, id: ScriptId, name: &str, args: &[i64]) {
    let args = args.iter().map(|&a| Dynamic::from_int(a)).collect();
    let _ =
        f.rt.call(id, name, args)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[test]
fn slot_fires_when_its_row_is_edited_and_not_when_another_is() {
    let (f, key) = fixture();
    let (id, obj) = load_with_edits(
        &f,
        r#"ListenRowMessage(SELF, "Inv.Items", (), 5, |row, item| print(`slot ${row} id=${item.id} count=${item.count}`));"#,
    );
    rust_store(&f, key, obj, 10);
    assert_eq!(f.printed(), vec!["slot 5 id=5 count=50"]);
    call(&f, id, "bump", &[3]);
    assert!(f.printed().is_empty(), "row 3 is not slot 5");
    call(&f, id, "bump", &[5]);
    assert_eq!(f.printed(), vec!["slot 5 id=5 count=51"]);
    call(&f, id, "insert", &[3, 99]);
    assert_eq!(
        f.printed(),
        vec!["slot 5 id=4 count=40"],
        "an insert before the slot moves the old row 4 into it"
    );
    call(&f, id, "insert", &[8, 98]);
    assert!(f.printed().is_empty(), "an insert after the slot");
    assert!(f.errors().is_empty());
}

#[test]
fn all_rows_gets_each_changed_row_0_based() {
    let (f, key) = fixture();
    let (id, obj) = f.load(
        "inv.rhai",
        r#"
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`${row}:${item.id}`));
        fn edit() {
            let items = GMP::StoredArray(This(), "Inv.Items");
            items[2].count = 7;
            items.Set(7, #{ id: 70, name: "seventy", count: 1 });
        }
        "#,
    );
    rust_store(&f, key, obj, 10);
    assert_eq!(f.printed().len(), 10, "the first store is every row");
    let _ = f.rt.call(id, "edit", vec![]).unwrap();
    assert_eq!(f.printed(), vec!["2:2", "7:70"]);
}

#[test]
fn removal_with_with_removal_gives_a_negative_row_and_a_default_item() {
    let (f, key) = fixture();
    let (id, obj) = load_with_edits(
        &f,
        r#"
        ListenRowMessage(SELF, "Inv.Items", (), 5, |row, item| print(`plain ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), GMP::WithRemoval(5), |row, item| {
            if row < 0 { print(`gone ${-row - 1} id=${item.id} name="${item.name}"`); }
            else { print(`slot ${row}`); }
        });
        let removed = 0;
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS_WITH_REMOVAL, |row, item| {
            if row < 0 { print(`all gone ${-row - 1}`); }
        });
        "#,
    );
    rust_store(&f, key, obj, 10);
    f.printed();
    call(&f, id, "shrink", &[3]);
    let printed = f.printed();
    assert!(
        printed.contains(&r#"gone 5 id=0 name="""#.to_owned()),
        "{printed:?}"
    );
    assert!(
        !printed.iter().any(|l| l.starts_with("plain")),
        "{printed:?}"
    );
    let gone: Vec<&String> = printed
        .iter()
        .filter(|l| l.starts_with("all gone"))
        .collect();
    assert_eq!(gone.len(), 7, "rows 3..10 are gone: {printed:?}");
    assert_eq!(gone[0], "all gone 3");
}

#[test]
fn with_removal_and_all_rows_constants_match_the_host() {
    let (f, _) = fixture();
    let (id, _) = f.load(
        "c.rhai",
        "let all = GMP::ALL_ROWS; let allr = GMP::ALL_ROWS_WITH_REMOVAL; let w5 = GMP::WithRemoval(5); let same = GMP::AllRows == all;",
    );
    let int = |name: &str| f.rt.global(id, name).unwrap().as_int().unwrap();
    assert_eq!(int("all"), i64::from(i32::MAX));
    assert_eq!(int("allr"), i64::from(!i32::MAX));
    assert_eq!(int("w5"), -6);
    assert!(f.rt.global(id, "same").unwrap().as_bool().unwrap());
}

#[test]
fn a_row_listener_with_a_third_parameter_gets_the_update_map() {
    let (f, key) = fixture();
    let (id, obj) = load_with_edits(
        &f,
        r#"
        fn on_row(row, item, u) {
            print(`${row} total=${u.total} prev=${u.prev_total} ranges=${u.ranges.len()} first=${u.ranges[0].index}+${u.ranges[0].count}`);
        }
        ListenRowMessage(SELF, "Inv.Items", (), 4, Fn("on_row"));
        "#,
    );
    rust_store(&f, key, obj, 3);
    call(&f, id, "insert", &[3, 50]);
    call(&f, id, "insert", &[4, 60]);
    // Inserting at 3 of 3 rows: one range 3+1, size 3 -> 4; slot 4 not yet.
    // Inserting at 4: the slot now exists.
    assert_eq!(f.printed(), vec!["4 total=5 prev=4 ranges=1 first=4+1"]);
}

#[test]
fn writer_publishes_once_when_its_scope_ends() {
    let (f, key) = fixture();
    let obj = f.spawn();
    rust_store(&f, key, obj, 4);
    let printed = f.printed.clone();
    let _h = f
        .hub
        .listen_update(KEY, obj, ListenOptions::default(), move |u: &Update| {
            printed.borrow_mut().push(format!(
                "update total={} prev={} ranges={:?}",
                u.total,
                u.prev_total,
                u.ranges()
                    .iter()
                    .map(|r| (r.index, r.count))
                    .collect::<Vec<_>>()
            ))
        })
        .unwrap();
    f.printed();
    f.rt.load_script(
        "w.rhai",
        r#"
        {
            let items = GMP::StoredArray(SELF, "Inv.Items");
            let copy = items;             // clones share one writer
            let row = items.GetMutable(0);
            row.count = 9;
            copy.Add(#{ id: 4, name: "four", count: 40 });
            print(`${items.Num()} rows, row 0 reads ${items.Get(0).count}`);
            print("scope ends");
        }
        print("after");
        "#,
        obj,
    )
    .unwrap();
    assert_eq!(
        f.printed(),
        vec![
            "5 rows, row 0 reads 9",
            "scope ends",
            // One publish; a resize widens the ranges to the tail.
            "update total=5 prev=4 ranges=[(0, 5)]",
            "after",
        ]
    );
    let stored = f.hub.stored(key, Source::Object(obj)).unwrap();
    let rows = stored[0].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(
        rows[0].as_struct().unwrap().get("count"),
        Some(&Value::Int(9))
    );
}

#[test]
fn writer_commit_publishes_now_and_stays_open() {
    let (f, key) = fixture();
    let obj = f.spawn();
    rust_store(&f, key, obj, 2);
    let printed = f.printed.clone();
    let _h = f
        .hub
        .listen_update(KEY, obj, ListenOptions::default(), move |u: &Update| {
            printed
                .borrow_mut()
                .push(format!("update {}->{}", u.prev_total, u.total))
        })
        .unwrap();
    f.printed();
    f.rt.load_script(
        "w.rhai",
        r#"
        {
            let items = GMP::StoredArray(SELF, "Inv.Items");
            items.Add(#{ id: 2, name: "n2", count: 0 });
            print(`commit called ${items.commit()}`);
            print(`empty commit called ${items.Commit()}`);
            items.RemoveAt(0);
            print("scope ends");
        }
        "#,
        obj,
    )
    .unwrap();
    assert_eq!(
        f.printed(),
        vec![
            "update 2->3",
            "commit called 1",
            "empty commit called 0",
            "scope ends",
            "update 3->2",
        ]
    );
}

#[test]
fn a_listener_reentering_a_committing_writer_gets_a_clear_error() {
    let (f, key) = fixture();
    let obj = f.spawn();
    // Empty, so registering the listeners replays no rows to them.
    rust_store(&f, key, obj, 0);
    f.rt.load_script(
        "r.rhai",
        r#"
        fn grow(items, row, item) { items.Add(#{ id: 100, name: "", count: 0 }); }
        let items = GMP::StoredArray(SELF, "Inv.Items");
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, Fn("grow").curry(items));
        // A closure capturing the writer shares the variable: Rhai's own
        // lock refuses the nested use.
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| items.Add(#{ id: 101, name: "", count: 0 }));
        items.Add(#{ id: 1, name: "", count: 0 });
        items.commit();
        print(`${items.Num()} rows after the commit`);
        "#,
        obj,
    )
    .unwrap();
    assert_eq!(f.printed(), vec!["1 rows after the commit"]);
    let failures = f.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(
        failures[0].contains("r.rhai")
            && failures[0].contains("`Inv.Items`")
            && failures[0].contains("the writer is publishing"),
        "{failures:?}"
    );
    assert!(failures[1].contains("r.rhai:7"), "{failures:?}");
}

#[test]
fn a_failed_publish_at_scope_end_is_the_scripts_error_not_a_panic() {
    let (f, key) = fixture();
    let obj = f.spawn();
    rust_store(&f, key, obj, 1);
    f.rt.load_script(
        "bad.rhai",
        // A row is checked as it is added; a field set through a row
        // handle is checked when the table is published.
        "{\n  let items = GMP::StoredArray(SELF, \"Inv.Items\");\n  let row = items.GetMutable(0); row.count = 2.5;\n}\n",
        obj,
    )
    .unwrap();
    let errors: Vec<String> = f.rt.take_errors().iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("bad.rhai:2:") && errors[0].contains("not published"),
        "{errors:?}"
    );
    let stored = f.hub.stored(key, Source::Object(obj)).unwrap();
    assert_eq!(stored[0].as_array().unwrap().len(), 1, "the store is kept");
}

#[test]
fn writer_errors_name_the_key_and_row() {
    let (f, key) = fixture();
    let obj = f.spawn();
    rust_store(&f, key, obj, 2);
    let err =
        f.rt.load_script(
            "e.rhai",
            "let items = GMP::StoredArray(SELF, \"Inv.Items\");\nitems.Get(2);\n",
            obj,
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("e.rhai:2") && err.contains("`Inv.Items`") && err.contains("no row 2"),
        "{err}"
    );
    let err = f
        .rt
        .load_script(
            "e.rhai",
            "let items = GMP::StoredArray(SELF, \"Inv.Items\");\nlet row = items.GetMutable(0);\nrow.nope = 1;\n",
            obj,
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("no field `nope`"), "{err}");
}

#[test]
fn a_rust_row_listener_hears_a_rhai_writer() {
    let (f, key) = fixture();
    let obj = f.spawn();
    rust_store(&f, key, obj, 3);
    let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
    let s = seen.clone();
    let _h = f
        .hub
        .listen_rows(
            KEY,
            obj,
            ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, id: i64, name: String| {
                s.borrow_mut().push(format!("{row}:{id}:{name}"))
            },
        )
        .unwrap();
    seen.borrow_mut().clear();
    f.rt.load_script(
        "w.rhai",
        r#"
        let items = GMP::StoredArray(SELF, "Inv.Items");
        let row = items.GetMutable(1);
        row.name = "renamed";
        items.Add(#{ id: 3, name: "three", count: 0 });
        items.commit();
        "#,
        obj,
    )
    .unwrap();
    // The table grew, so the ranges widen to the tail from row 1.
    assert_eq!(*seen.borrow(), vec!["1:1:renamed", "2:2:n2", "3:3:three"]);
}

#[test]
fn a_rhai_row_listener_hears_a_rust_store_of_an_array_of_structs() {
    let (f, key) = fixture();
    let (_, obj) = f.load(
        "l.rhai",
        r#"ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`${row} ${item.name} ${item.__struct}`));"#,
    );
    rust_store(&f, key, obj, 2);
    assert_eq!(f.printed(), vec!["0 n0 Item", "1 n1 Item"]);
    // A re-store is diffed: only the changed row.
    let rows = vec![item(0), item(5)];
    f.hub
        .store_values(
            key,
            Source::Object(obj),
            vec![Value::array(rows)],
            false,
            Caller::Unrecorded,
        )
        .unwrap();
    assert_eq!(f.printed(), vec!["1 n5 Item"]);
}

#[test]
fn a_whole_table_listener_gets_the_update_map_as_its_extra_parameter() {
    let (f, key) = fixture();
    let (_, obj) = f.load(
        "t.rhai",
        r#"
        ListenObjectMessage(SELF, "Inv.Items", (), |items, u| {
            print(`table ${items.len()} rows, total=${u.total} prev=${u.prev_total} reload=${u.full_reload} ranges=${u.ranges}`);
        });
        ListenObjectMessage(SELF, "Inv.Items", (), |items| print(`plain ${items.len()}`));
        "#,
    );
    rust_store(&f, key, obj, 2);
    f.rt.load_script(
        "w.rhai",
        "let items = GMP::StoredArray(SELF, \"Inv.Items\"); items[1].count = 0; items.commit();",
        obj,
    )
    .unwrap();
    assert_eq!(
        f.printed(),
        // Equal orders: registration order, the table listener first.
        vec![
            "table 2 rows, total=2 prev=0 reload=false ranges=[#{\"count\": 2, \"index\": 0}]",
            "plain 2",
            "table 2 rows, total=2 prev=2 reload=false ranges=[#{\"count\": 1, \"index\": 1}]",
            "plain 2",
        ]
    );
}

#[test]
fn a_table_first_stored_from_rhai_takes_row_and_table_listeners() {
    // No declaration: the first store records `Inv.Bag` as an array of
    // `Item` structs, so the later listens recognise the table.
    let f = Fixture::new();
    f.load(
        "bag.rhai",
        r#"
        StoreObjectMessage(SELF, "Inv.Bag", [#{ __struct: "Item", id: 1 }, #{ __struct: "Item", id: 2 }]);
        ListenObjectMessage(SELF, "Inv.Bag", (), |items, u| print(`table ${items.len()} total=${u.total}`));
        ListenRowMessage(SELF, "Inv.Bag", (), GMP::ALL_ROWS, |row, item| print(`row ${row} id=${item.id}`));
        {
            let bag = GMP::StoredArray(SELF, "Inv.Bag");
            bag[1].id = 20;
        }
        "#,
    );
    assert_eq!(
        f.printed(),
        vec![
            "table 2 total=2",
            "row 0 id=1",
            "row 1 id=2",
            "table 2 total=2",
            "row 1 id=20",
        ]
    );
}

#[test]
fn request_returns_the_reply_of_a_responder_answering_during_the_send() {
    let f = Fixture::new();
    let (id, _) = f.load(
        "q.rhai",
        r#"
        ListenObjectMessage(SELF, "Q.Double", (), |x, rsp| rsp.Response(x * 2));
        ListenObjectMessage(SELF, "Q.Pair", (), |x, rsp| rsp.Response(x, `n${x}`));
        let one = GMP::Request(SELF, "Q.Double", 21);
        let k = "Q.Pair";
        let two = GMP::Request(SELF, k, 3);
        "#,
    );
    assert_eq!(f.rt.global(id, "one").unwrap().as_int().unwrap(), 42);
    let two = f.rt.global(id, "two").unwrap().into_array().unwrap();
    assert_eq!(two[0].as_int().unwrap(), 3);
    assert_eq!(two[1].clone().into_string().unwrap(), "n3");
}

#[test]
fn request_is_an_error_naming_the_key_when_nobody_answers_during_the_send() {
    let f = Fixture::new();
    let err = f.load_err("q.rhai", "\nGMP::Request(SELF, \"Q.Nobody\", 1);\n");
    assert!(
        err.starts_with("q.rhai:2")
            && err.contains("`Q.Nobody`")
            && err.contains("nobody answered"),
        "{err}"
    );
    // A responder kept to answer later cannot resume a Rhai call.
    let err = f.load_err(
        "d.rhai",
        r#"
        let kept = [];
        ListenObjectMessage(SELF, "Q.Later", (), |rsp| kept.push(rsp));
        GMP::Request(SELF, "Q.Later");
        "#,
    );
    assert!(
        err.contains("`Q.Later`") && err.contains("not answered during the send"),
        "{err}"
    );
}

#[test]
fn send_object_message_with_a_reply_closure_is_a_request() {
    let f = Fixture::new();
    f.load(
        "s.rhai",
        r#"
        ListenObjectMessage(SELF, "Q.Add", (), |a, b, rsp| rsp.Response(a + b));
        SendObjectMessage(SELF, "Q.Add", 2, 3, |sum| print(`sum ${sum}`));
        let k = "Q.Add";
        SendObjectMessage(SELF, k, 4, 5, |sum| print(`sum ${sum}`));
        "#,
    );
    assert_eq!(f.printed(), vec!["sum 5", "sum 9"]);
}

#[test]
fn a_row_listener_dies_with_its_owner_and_unbinds_by_id() {
    let (f, key) = fixture();
    let (id, obj) = load_with_edits(
        &f,
        r#"
        let owner = GMP::Spawn();
        ListenRowMessage(SELF, "Inv.Items", owner, GMP::ALL_ROWS, |row, item| print(`owned ${row}`));
        let lid = ListenRowMessage(SELF, "Inv.Items", (), 0, |row, item| print(`mine ${row}`), #{ times: 5 }).Id();
        fn drop_owner(o) { GMP::Destroy(o); }
        "#,
    );
    rust_store(&f, key, obj, 1);
    // The stored table is replayed to each as it registers.
    assert_eq!(f.printed(), vec!["owned 0", "mine 0"]);
    let owner = f.rt.global(id, "owner").unwrap();
    let _ = f.rt.call(id, "drop_owner", vec![owner]).unwrap();
    call(&f, id, "bump", &[0]);
    assert_eq!(f.printed(), vec!["mine 0"]);
    let lid = f.rt.global(id, "lid").unwrap().as_int().unwrap();
    f.rt.load_script(
        "u.rhai",
        &format!("UnbindMessage(\"Inv.Items\", {lid});"),
        f.spawn(),
    )
    .unwrap();
    call(&f, id, "bump", &[0]);
    assert!(f.printed().is_empty());
}

#[test]
fn baked_row_listen_writer_and_request_are_described_with_their_parameters() {
    let (f, _) = fixture();
    f.load(
        "d.rhai",
        r#"
        ListenRowMessage(SELF, "Inv.Items", (), 0, |row, item| {});
        let items = GMP::StoredArray(SELF, "Inv.Items");
        items.commit();
        ListenObjectMessage(SELF, "Q.D", (), |x, rsp| rsp.Response(x));
        GMP::Request(SELF, "Q.D", 1);
        "#,
    );
    let defs = f.rt.definitions();
    for expected in [
        "fn ListenRowMessage__Inv__Items(source: ?, owner: ?, index: int, listener: Fn) -> ?;",
        "fn ListenRowMessage__Inv__Items(source: ?, owner: ?, index: int, listener: Fn, options: map)",
        "fn StoredArray__Inv__Items(source: ?) -> ?;",
        // `Q.D` had no recorded parameters when the script was baked.
        "fn Request__Q__D(source: ?, arg0: ?) -> ?;",
    ] {
        assert!(defs.contains(expected), "{expected} missing in:\n{defs}");
    }
}

fn inventory_fixture() -> (Fixture, Key) {
    crate::support::inventory(RhaiOptions::default())
}

fn fixture_with(options: RhaiOptions) -> (Fixture, Key) {
    crate::support::inventory(options)
}

#[test]
fn transient_send_reaches_all_rows_listeners_only_as_a_full_reload_and_keeps_nothing() {
    let (f, key) = inventory_fixture();
    let (_, obj) = f.load(
        "radar.rhai",
        r#"
        fn on_all(row, item, u) {
            print(`all ${row}:${item.id} of ${u.total} reload=${u.full_reload}`);
        }
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, Fn("on_all"));
        ListenRowMessage(SELF, "Inv.Items", (), 1, |row, item| print(`slot ${row}`));
        ListenRowMessage(SELF, "Inv.Items", (), GMP::WithRemoval(0), |row, item| print(`slot~ ${row}`));
        NotifyObjectMessage(SELF, "Inv.Items", [
            #{ __struct: "Item", id: 7, name: "a", count: 1 },
            #{ __struct: "Item", id: 8, name: "b", count: 2 },
        ]);
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`late ${row}`));
        "#,
    );
    assert_eq!(
        f.printed(),
        ["all 0:7 of 2 reload=true", "all 1:8 of 2 reload=true"],
        "slot listeners never fire on a send, and a late listener gets nothing"
    );
    assert!(f.hub.stored(key, Source::Object(obj)).is_none());
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

const GROW: &str = r#"
StoreObjectMessage(SELF, "Inv.Items", [#{ __struct: "Item", id: 1, name: "a", count: 1 }]);
fn grow(n) { let items = GMP::StoredArray(This(), "Inv.Items"); items.SetNum(n); }
fn count() { let items = GMP::StoredArray(This(), "Inv.Items"); items.Num() }
"#;

#[test]
fn set_num_past_what_a_table_can_hold_is_an_error_not_a_crash() {
    let (f, _key) = fixture_with(RhaiOptions {
        max_array_size: 0,
        ..RhaiOptions::default()
    });
    let (id, _obj) = f.load("inv.rhai", GROW);
    for n in [1_i64 << 40, 1 << 62, i64::MAX] {
        let err =
            f.rt.call(id, "grow", vec![rhai::Dynamic::from_int(n)])
                .expect_err("refused");
        assert!(err.to_string().contains("no table can hold"), "{err}");
        assert!(err.to_string().contains("Inv.Items"), "{err}");
    }
    let count = f.rt.call(id, "count", vec![]).unwrap();
    assert_eq!(count.as_int().unwrap(), 1);
}

#[test]
fn set_num_past_the_scripts_max_array_size_is_an_error_naming_the_key() {
    let (f, _key) = fixture_with(RhaiOptions {
        max_array_size: 1_000,
        ..RhaiOptions::default()
    });
    let (id, _obj) = f.load("inv.rhai", GROW);
    for n in [1_001_i64, 1 << 40] {
        let err =
            f.rt.call(id, "grow", vec![rhai::Dynamic::from_int(n)])
                .expect_err("refused");
        assert!(err.to_string().contains("max_array_size"), "{err}");
        assert!(err.to_string().contains("Inv.Items"), "{err}");
    }
    assert_eq!(f.rt.call(id, "count", vec![]).unwrap().as_int().unwrap(), 1);
    let grown = f.rt.call(id, "grow", vec![rhai::Dynamic::from_int(1_000)]);
    assert!(grown.is_ok(), "{grown:?}");
    assert_eq!(
        f.rt.call(id, "count", vec![]).unwrap().as_int().unwrap(),
        1_000
    );
}

fn fixture_of_items() -> (Fixture, Key) {
    crate::support::inventory(RhaiOptions::default())
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

fn call_with(f: &Fixture, id: ScriptId, name: &str, args: Vec<Dynamic>) {
    if let Err(e) = f.rt.call(id, name, args) {
        panic!("{name}: {e}");
    }
}

fn rows(list: impl IntoIterator<Item = i64>) -> Dynamic {
    Dynamic::from_array(list.into_iter().map(Dynamic::from_int).collect())
}

/// `GMP::AllRowsWithRemoval (= ~MAX_int32)`, `GMP::WithRemoval(5)
/// (= ~5)`: one `~` rule, under both spellings.
#[test]
fn with_removal_of_all_rows_is_all_rows_with_removal_in_rhai() {
    let (f, _) = fixture_of_items();
    f.load(
        "c.rhai",
        r#"
        print(`${GMP::WithRemoval(GMP::ALL_ROWS) == GMP::ALL_ROWS_WITH_REMOVAL} ${GMP::WithRemoval(GMP::AllRows) == GMP::AllRowsWithRemoval}`);
        print(`${GMP::ALL_ROWS} ${GMP::ALL_ROWS_WITH_REMOVAL} ${GMP::WithRemoval(0)}`);
        "#,
    );
    assert_eq!(f.printed(), ["true true", "2147483647 -2147483648 -1"]);
}

/// "a removed row arrives with a negative row and a default-constructed
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

/// Both span-merge counter-examples, through a Rhai writer: `[{0,6},{6,1},
/// {20,1},{7,13}]` is one span 0+21, and `[{0,5},{5,1}]` plus another
/// `(5,1)` is one span — each row visited once, ascending.
#[test]
fn span_merge_counter_examples_visit_each_row_once_in_rhai() {
    let (f, key) = fixture_of_items();
    let (id, obj) = f.load(
        "inv.rhai",
        &format!(
            r#"{MARK}
            ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`${{row}}`));
            ListenObjectMessage(SELF, "Inv.Items", (), |items, u| print(`update ${{u.total}}/${{u.prev_total}} ${{ranges(u)}}`));
            fn bridge() {{
                let items = GMP::StoredArray(This(), "Inv.Items");
                for r in 0..5 {{ items[r].count = 0; }}
                items.Add(#{{ id: 99, name: "", count: 0 }});
                items[5].count = 1;
            }}
            "#
        ),
    );
    rust_store(&f, key, obj, 25);
    f.printed();
    call_with(
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
    call_with(&f, id, "bridge", vec![]);
    let mut expected: Vec<String> = (0..6).map(|r| r.to_string()).collect();
    expected.push("update 6/5 [\"0+6\"] full=false".into());
    assert_eq!(f.printed(), expected);
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

/// at most eight spans, then a full reload. Eight disjoint
/// spans are eight ranges and leave an untouched slot alone; nine are a
/// full reload that wakes every live slot and every row.
#[test]
fn nine_disjoint_spans_are_a_full_reload_that_wakes_an_untouched_slot_in_rhai() {
    let (f, key) = fixture_of_items();
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
    call_with(&f, id, "mark", vec![rows((1..=8).map(|k| 2 * k - 1))]);
    assert_eq!(f.printed(), ["update 8 full=false"]);
    call_with(&f, id, "mark", vec![rows((1..=9).map(|k| 2 * k - 1))]);
    assert_eq!(f.printed(), ["slot 0", "update 0 full=true"]);
}

/// a stored table is replayed to each late listener as a full reload
/// from nothing — a slot gets its row, a slot past the end (with or
/// without removal) nothing, an all-rows-with-removal listener the live
/// rows only, and a whole-table listener the table with `prev_total` 0.
#[test]
fn late_replay_reaches_every_listener_form_as_a_full_reload_from_nothing_in_rhai() {
    let (f, key) = fixture_of_items();
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

/// "A lambda may also declare only the first few [parameters]": a
/// Rhai row listener that takes only the row (closure or named function)
/// is called once per row.
#[test]
fn row_listener_taking_only_the_row_is_called_per_row_in_rhai() {
    let (f, key) = fixture_of_items();
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

/// "operator[] is const-only ... a mere read would trigger a full UI
/// refresh": reading through the writer's indexer, `Get`, `Num` and a row
/// handle's field marks nothing, so the scope publishes nothing.
#[test]
fn reads_through_the_writer_mark_nothing_and_publish_nothing_in_rhai() {
    let (f, key) = fixture_of_items();
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
    call_with(&f, id, "read", vec![]);
    assert_eq!(f.printed(), ["read 10 2 3 0 3"]);
}

/// storing the whole table again is diffed; an unchanged table
/// publishes nothing — from Rhai maps (fields in any order) to every
/// collection listener form.
#[test]
fn identical_store_from_rhai_publishes_nothing_to_any_collection_listener() {
    let (f, _) = fixture_of_items();
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
    call_with(&f, id, "put", vec![]);
    assert_eq!(f.printed().len(), 7, "the first store is heard");
    call_with(&f, id, "put", vec![]);
    assert!(f.printed().is_empty());
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

/// "A lambda ending in const FGMPStoreUpdate& opts into the collection";
/// "a collection is recognised from the stored parameter, not from a new
/// entry point". A Rhai whole-table listener `|items, update|` registered
/// before the hub knows the key carries a table still gets the table and
/// its update — not a failed call_with.
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

/// "arguments are checked and converted by the recorded signature";
/// the Rhai face's own rule: "when the signature expects a struct at that
/// position, the map is that struct". A table key declared as an array of
/// `Item` takes an array of plain maps (no `__struct`), as the Lua face
/// takes an array of plain tables — stored, sent, and heard by row
/// listeners.
#[test]
fn maps_without_a_struct_name_in_an_array_convert_by_the_declared_table_in_rhai() {
    let (f, key) = fixture_of_items();
    let (_, obj) = f.load(
        "inv.rhai",
        r#"
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`${row} ${item.__struct} ${item.name}`));
        StoreObjectMessage(SELF, "Inv.Items", [#{ id: 1, name: "a", count: 2 }, #{ id: 2, name: "b", count: 0 }]);
        NotifyObjectMessage(SELF, "Inv.Items", [#{ id: 3, name: "c", count: 1 }]);
        "#,
    );
    assert_eq!(f.printed(), ["0 Item a", "1 Item b", "0 Item c"]);
    let stored = f.hub.stored(key, Source::Object(obj)).expect("stored");
    let rows = stored[0].as_array().unwrap();
    assert_eq!(rows[1].as_struct().unwrap().name.as_ref(), "Item");
    // A map leaving out a field of the declared struct is refused.
    let refused = f.rt.load_script(
        "partial.rhai",
        r#"StoreObjectMessage(SELF, "Inv.Items", [#{ id: 4, name: "d" }]);"#,
        obj,
    );
    let Err(err) = refused else {
        panic!("a row without `count` is refused")
    };
    let err = err.to_string();
    assert!(err.contains("without `count`"), "{err}");
}

/// checked mode with "The element must be a USTRUCT": a row
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

#[test]
fn a_row_listen_on_a_key_declared_with_one_int_is_refused_naming_key_and_line() {
    let f = Fixture::new();
    f.hub
        .declare("Player.HP", KeyDecl::event().param("hp", Type::Int))
        .unwrap();
    let err = f.load_err(
        "hp.rhai",
        "\nListenRowMessage(SELF, \"Player.HP\", (), GMP::ALL_ROWS, |row, item| print(\"never\"));",
    );
    assert!(
        err.contains("hp.rhai:2:") && err.contains("Player.HP"),
        "{err}"
    );
    // A declared event has no rows: the kind refuses the call.
    assert!(
        err.contains("ListenRowMessage on `Player.HP`: the key is an event (declared)"),
        "{err}"
    );
    assert_eq!(f.hub.listener_count(), 0);
}

#[test]
fn a_row_listen_on_a_key_not_known_yet_is_kept_and_hears_the_table_stored_later() {
    let f = Fixture::new();
    f.load(
        "late.rhai",
        r#"
        ListenRowMessage(SELF, "Radar.Blips", (), GMP::ALL_ROWS, |row, blip| print(`${row} ${blip.x}`));
        StoreObjectMessage(SELF, "Radar.Blips", [#{ __struct: "Blip", x: 1 }, #{ __struct: "Blip", x: 2 }]);
        "#,
    );
    assert_eq!(f.printed(), ["0 1", "1 2"]);
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

#[test]
fn an_empty_table_stored_reaches_whole_table_listeners_including_the_initial_one_in_rhai() {
    let (f, _) = fixture();
    f.load(
        "inv.rhai",
        r#"
        ListenObjectMessage(SELF, "Inv.Items", (), |items, u| print(`early ${items.len()} ${u.total} ${u.prev_total}`));
        StoreObjectMessage(SELF, "Inv.Items", []);
        ListenObjectMessage(SELF, "Inv.Items", (), |items, u| print(`late ${items.len()} ${u.total}`));
        "#,
    );
    assert_eq!(f.printed(), ["early 0 0 0", "late 0 0"]);
    assert!(
        f.errors().is_empty() && f.failures().is_empty(),
        "{:?} {:?}",
        f.errors(),
        f.failures()
    );
}

/// A modder who declares nothing and stores an empty list first: a
/// whole-table listener registered after it still hears the table and its
/// update, the empty one replayed and every later one.
#[test]
fn a_whole_table_listener_after_an_empty_first_store_of_an_undeclared_key_hears_tables_in_rhai() {
    let f = Fixture::new();
    f.load(
        "radar.rhai",
        r#"
        StoreObjectMessage(SELF, "Radar.Blips", []);
        ListenObjectMessage(SELF, "Radar.Blips", (), |items, u| print(`${items.len()} ${u.total}`));
        StoreObjectMessage(SELF, "Radar.Blips", [#{ __struct: "Blip", x: 1 }]);
        "#,
    );
    assert_eq!(f.printed(), ["0 0", "1 1"]);
    assert!(
        f.errors().is_empty() && f.failures().is_empty(),
        "{:?} {:?}",
        f.errors(),
        f.failures()
    );
}
