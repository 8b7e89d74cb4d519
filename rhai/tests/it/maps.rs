//! The Rhai face's rule for object maps: a map with `__struct` is the
//! struct it names; a map without one is the struct the key's signature
//! declares at its place — an argument, an array element (arrays of arrays
//! too) or a struct field, whose type comes from the struct's definition —
//! when its fields fit (one left out is an error naming the key, the
//! position and the line), and a struct named after the key where nothing
//! is declared. The
//! rule holds for store, notify and send, baked (literal key) or generic.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    KeyDecl, Kind, ListenOptions, Param, Report, Source, StructDef, StructValue, Type, Value,
};

use crate::support::Fixture;

fn array(of: Type) -> Type {
    Type::Array(Box::new(of))
}

fn named(name: &str) -> Type {
    Type::Struct(name.into())
}

fn define(f: &Fixture, name: &str, parent: Option<&str>, fields: Vec<Param>) {
    f.hub.edit_table(|t| {
        t.declare_struct(
            name,
            StructDef {
                parent: parent.map(Into::into),
                doc: String::new(),
                fields,
            },
        )
    });
}

/// `Item { id: int, name: string, count: int }`, `Inner { x: int }` and
/// `Outer { inner: Inner, list: [Inner], grid: [[Inner]], tag: string }`.
fn fixture() -> Fixture {
    let f = Fixture::new();
    define(
        &f,
        "Item",
        None,
        vec![
            Param::new("id", Type::Int),
            Param::new("name", Type::String),
            Param::new("count", Type::Int),
        ],
    );
    define(&f, "Inner", None, vec![Param::new("x", Type::Int)]);
    define(
        &f,
        "Outer",
        None,
        vec![
            Param::new("inner", named("Inner")),
            Param::new("list", array(named("Inner"))),
            Param::new("grid", array(array(named("Inner")))),
            Param::new("tag", Type::String),
        ],
    );
    f
}

/// Every message heard on `key` (globally), as its arguments.
fn hear(f: &Fixture, key: &str) -> (gantry_host::ListenerHandle, Rc<RefCell<Vec<Vec<Value>>>>) {
    let got = Rc::new(RefCell::new(Vec::new()));
    let sink = got.clone();
    let handle = f
        .hub
        .listen_message(key, Source::Global, ListenOptions::new(), move |m| {
            sink.borrow_mut().push(m.args.to_vec())
        })
        .unwrap();
    (handle, got)
}

fn item(id: i64, name: &str, count: i64) -> Value {
    Value::structure(
        StructValue::new("Item")
            .with("id", id)
            .with("name", name)
            .with("count", count),
    )
}

fn inner(x: i64) -> Value {
    Value::structure(StructValue::new("Inner").with("x", x))
}

#[test]
fn a_map_in_an_array_is_the_declared_element_struct_stored_notified_and_sent() {
    let f = fixture();
    let key = f
        .hub
        .declare(
            "Inv.Items",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", array(named("Item"))),
        )
        .unwrap();
    let (_l, got) = hear(&f, "Inv.Items");
    let (_, obj) = f.load(
        "inv.rhai",
        r#"
        let key = "Inv.Items";
        StoreObjectMessage(SELF, "Inv.Items", [#{ id: 1, name: "a", count: 2 }, #{ name: "b", id: 2, count: 0 }]);
        NotifyObjectMessage(SELF, "Inv.Items", [#{ id: 3, name: "c", count: 1 }]);
        SendObjectMessage(SELF, "Inv.Items", [#{ id: 4, name: "d", count: 5 }]);
        SendObjectMessage(SELF, key, [#{ id: 5, name: "e", count: 6 }]);
        NotifyObjectMessage(SELF, key, [#{ __struct: "Item", id: 6 }, #{ id: 7, name: "", count: 0 }]);
        "#,
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
    let stored = f.hub.stored(key, Source::Object(obj)).expect("stored");
    assert_eq!(
        *stored,
        [Value::array(vec![item(1, "a", 2), item(2, "b", 0)])],
        "a map is the declared struct, in its field order"
    );
    assert_eq!(
        *got.borrow(),
        [
            vec![Value::array(vec![item(1, "a", 2), item(2, "b", 0)])],
            vec![Value::array(vec![item(3, "c", 1)])],
            vec![Value::array(vec![item(4, "d", 5)])],
            vec![Value::array(vec![item(5, "e", 6)])],
            vec![Value::array(vec![item(6, "", 0), item(7, "", 0)])],
        ]
    );
}

#[test]
fn a_map_in_a_struct_field_is_the_fields_declared_struct() {
    let f = fixture();
    f.hub
        .declare(
            "Ui.Layout",
            KeyDecl::event().param("layout", named("Outer")),
        )
        .unwrap();
    let (_l, got) = hear(&f, "Ui.Layout");
    f.load(
        "ui.rhai",
        r#"
        // Nothing named: the argument by the key, its fields by `Outer`.
        SendObjectMessage(SELF, "Ui.Layout", #{ inner: #{ x: 1 }, list: [#{ x: 2 }, #{ x: 3 }], grid: [[#{ x: 4 }], []], tag: "t" });
        // The outer map named: its fields still by `Outer`'s definition.
        NotifyObjectMessage(SELF, "Ui.Layout", #{ __struct: "Outer", inner: #{ x: 5 } });
        "#,
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
    let outer = |inner_: Value, list: Vec<Value>, grid: Vec<Value>, tag: &str| {
        Value::structure(
            StructValue::new("Outer")
                .with("inner", inner_)
                .with("list", Value::array(list))
                .with("grid", Value::array(grid))
                .with("tag", tag),
        )
    };
    assert_eq!(
        *got.borrow(),
        [
            vec![outer(
                inner(1),
                vec![inner(2), inner(3)],
                vec![Value::array(vec![inner(4)]), Value::array(vec![])],
                "t"
            )],
            vec![outer(inner(5), vec![], vec![], "")],
        ]
    );
}

#[test]
fn a_map_in_an_array_of_arrays_is_the_declared_struct() {
    let f = fixture();
    f.hub
        .declare(
            "Map.Grid",
            KeyDecl::event()
                .kind(gantry_host::Kind::Store)
                .param("cells", array(array(named("Inner")))),
        )
        .unwrap();
    let (_l, got) = hear(&f, "Map.Grid");
    f.load(
        "grid.rhai",
        r#"
        NotifyObjectMessage(SELF, "Map.Grid", [[#{ x: 1 }, #{ x: 2 }], [], [#{ x: 3 }]]);
        StoreObjectMessage(SELF, "Map.Grid", [[#{ x: 4 }]]);
        "#,
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
    assert_eq!(
        *got.borrow(),
        [
            vec![Value::array(vec![
                Value::array(vec![inner(1), inner(2)]),
                Value::array(vec![]),
                Value::array(vec![inner(3)]),
            ])],
            vec![Value::array(vec![Value::array(vec![inner(4)])])],
        ]
    );
}

#[test]
fn a_map_in_an_array_is_the_struct_the_keys_first_use_recorded() {
    let f = fixture();
    let (_l, got) = hear(&f, "Loot.Drop");
    f.load(
        "loot.rhai",
        r#"
        NotifyObjectMessage(SELF, "Loot.Drop", [#{ __struct: "Item", id: 1 }]);
        NotifyObjectMessage(SELF, "Loot.Drop", [#{ id: 2, count: 3, name: "" }]);
        "#,
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
    assert_eq!(got.borrow()[1], [Value::array(vec![item(2, "", 3)])]);
}

#[test]
fn a_struct_name_in_the_map_wins_over_the_declared_type_and_is_checked() {
    let f = fixture();
    define(
        &f,
        "Gem",
        Some("Item"),
        vec![Param::new("shine", Type::Int)],
    );
    f.hub
        .declare(
            "Inv.Items",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", array(named("Item"))),
        )
        .unwrap();
    let (_l, got) = hear(&f, "Inv.Items");
    // A child struct matches its parent: it arrives as the child.
    f.load(
        "gem.rhai",
        r#"NotifyObjectMessage(SELF, "Inv.Items", [#{ __struct: "Gem", id: 1, shine: 9 }, #{ id: 2, name: "", count: 0 }]);"#,
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
    {
        let got = got.borrow();
        let rows = got[0][0].as_array().unwrap();
        assert_eq!(rows[0].as_struct().unwrap().name.as_ref(), "Gem");
        assert_eq!(
            rows[0].as_struct().unwrap().get("shine"),
            Some(&Value::Int(9))
        );
        assert_eq!(rows[1], item(2, "", 0));
    }
    // An unrelated struct is not converted to the declared one: the hub
    // refuses it, naming the key.
    f.hub.take_reports();
    let outcome = f.rt.load_script(
        "inner.rhai",
        r#"NotifyObjectMessage(SELF, "Inv.Items", [#{ __struct: "Inner", x: 1 }]);"#,
        f.spawn(),
    );
    let reports = f.hub.take_reports();
    let refused = outcome
        .as_ref()
        .err()
        .is_some_and(|e| e.to_string().contains("Inv.Items"))
        || reports
            .iter()
            .any(|r| matches!(r, Report::Mismatch { key, .. } if key == "Inv.Items"));
    assert!(refused, "{:?} {reports:?}", outcome.map(|_| ()));
    assert_eq!(got.borrow().len(), 1, "no listener is called with an Inner");
}

#[test]
fn a_map_where_no_struct_fits_is_an_error_naming_key_position_and_line() {
    let f = fixture();
    f.hub
        .declare(
            "Score.List",
            KeyDecl::event().param("scores", array(Type::Int)),
        )
        .unwrap();
    f.hub
        .declare(
            "Ui.Layout",
            KeyDecl::event().param("layout", named("Outer")),
        )
        .unwrap();

    let err = f.load_err(
        "a.rhai",
        "\n\nNotifyObjectMessage(SELF, \"Score.List\", [1, #{ x: 1 }]);",
    );
    for part in [
        "a.rhai:3:",
        "Score.List",
        "argument 1",
        "2nd element is table",
        "expected array<int>",
    ] {
        assert!(err.contains(part), "`{part}` missing from: {err}");
    }

    // Where nothing is known, a map is a struct named after the key.
    f.load(
        "b.rhai",
        r#"let k = "Nobody.Knows"; NotifyObjectMessage(SELF, k, [[#{ x: 1 }]]);"#,
    );
    assert_eq!(
        f.hub.table().get("Nobody.Knows").unwrap().params[0]
            .ty
            .to_string(),
        "array<array<NobodyKnows>>"
    );

    // A map leaving out a field of the declared struct names the field.
    let err = f.load_err(
        "c.rhai",
        r#"NotifyObjectMessage(SELF, "Ui.Layout", #{ extra: #{ x: 1 } });"#,
    );
    for part in ["c.rhai:1:", "Ui.Layout", "argument 1", "without `inner`"] {
        assert!(err.contains(part), "`{part}` missing from: {err}");
    }

    // Deep in a declared struct, the field that differs is named.
    let err = f.load_err(
        "d.rhai",
        r#"NotifyObjectMessage(SELF, "Ui.Layout", #{ inner: #{ x: 1 }, list: [], grid: [[#{ x: #{ y: 1 } }]], tag: "" });"#,
    );
    for part in ["d.rhai:1:", "Ui.Layout", "field `grid`"] {
        assert!(err.contains(part), "`{part}` missing from: {err}");
    }
}

#[test]
fn arguments_without_maps_convert_as_before_with_or_without_a_signature() {
    let f = fixture();
    f.hub
        .declare(
            "Mix.Args",
            KeyDecl::event()
                .param("n", Type::Int)
                .param("list", array(array(Type::Float))),
        )
        .unwrap();
    let (_l, got) = hear(&f, "Mix.Args");
    let (_l2, other) = hear(&f, "Mix.Unknown");
    f.load(
        "mix.rhai",
        r#"
        NotifyObjectMessage(SELF, "Mix.Args", 1, [[1.5], []]);
        NotifyObjectMessage(SELF, "Mix.Unknown", "s", [[1], [2, 3]], ());
        "#,
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
    assert_eq!(
        got.borrow()[0],
        [
            Value::Int(1),
            Value::array(vec![
                Value::array(vec![Value::Float(1.5)]),
                Value::array(vec![])
            ])
        ]
    );
    assert_eq!(
        other.borrow()[0],
        [
            Value::Str("s".into()),
            Value::array(vec![
                Value::array(vec![Value::Int(1)]),
                Value::array(vec![Value::Int(2), Value::Int(3)])
            ]),
            Value::Nil
        ]
    );
}

#[test]
fn the_writer_and_row_listeners_see_nested_maps_by_the_declared_table() {
    let f = fixture();
    f.hub
        .declare(
            "Ui.Rows",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("rows", array(named("Outer"))),
        )
        .unwrap();
    f.load(
        "rows.rhai",
        r#"
        ListenRowMessage(SELF, "Ui.Rows", (), GMP::ALL_ROWS, |row, o| {
            print(`${row} ${o.__struct} ${o.inner.__struct}:${o.inner.x} ${o.list.len()} ${o.grid[0][0].__struct}:${o.grid[0][0].x}`);
        });
        StoreObjectMessage(SELF, "Ui.Rows", [#{ inner: #{ x: 1 }, list: [#{ x: 2 }], grid: [[#{ x: 3 }]], tag: "" }]);
        let rows = GMP::StoredArray(SELF, "Ui.Rows");
        rows.Add(#{ inner: #{ x: 4 }, list: [], grid: [[#{ x: 5 }]], tag: "" });
        rows.commit();
        "#,
    );
    assert!(f.errors().is_empty(), "{:?}", f.errors());
    assert_eq!(
        f.printed(),
        ["0 Outer Inner:1 1 Inner:3", "1 Outer Inner:4 0 Inner:5"]
    );
}
