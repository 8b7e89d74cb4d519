//! Collections from Rhai (issue 7, references 001 and 004): row listeners,
//! whole-table listeners, the stored-array writer, and the synchronous
//! `GMP::Request`, with Rust on the other end where it matters.

mod common;

use std::rc::Rc;

use common::{Fixture, item, rust_store};
use gantry_host::face::Faced;
use gantry_host::collection::Update;
use gantry_host::{ALL_ROWS, Caller, Key, ListenOptions, ObjectId, Source, Value};
use gantry_rhai::runtime::{RhaiOptions, ScriptId};
use rhai::Dynamic;

const KEY: &str = common::INVENTORY;

fn fixture() -> (Fixture, Key) {
    common::inventory(RhaiOptions::default())
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
            items.Add(#{ id: 2 });
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
        fn grow(items, row, item) { items.Add(#{ id: 100 }); }
        let items = GMP::StoredArray(SELF, "Inv.Items");
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, Fn("grow").curry(items));
        // A closure capturing the writer shares the variable: Rhai's own
        // lock refuses the nested use.
        ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| items.Add(#{ id: 101 }));
        items.Add(#{ id: 1 });
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
        items.Add(#{ id: 3, name: "three" });
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
        vec![
            "plain 2",
            "table 2 rows, total=2 prev=0 reload=false ranges=[#{\"count\": 2, \"index\": 0}]",
            "plain 2",
            "table 2 rows, total=2 prev=2 reload=false ranges=[#{\"count\": 1, \"index\": 1}]",
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
        let lid = ListenRowMessage(SELF, "Inv.Items", (), 0, |row, item| print(`mine ${row}`), #{ times: 5 });
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
