use super::*;
use crate::value::Value;

fn registry() -> StructRegistry {
    let mut r = StructRegistry::default();
    r.defs.insert(
        "Base".into(),
        StructDef {
            fields: vec![Param::new("id", Type::Int)],
            ..Default::default()
        },
    );
    r.defs.insert(
        "Child".into(),
        StructDef {
            parent: Some("Base".into()),
            fields: vec![Param::new("name", Type::String)],
            ..Default::default()
        },
    );
    r
}

/// "an int is accepted for a float and converted", at any depth: array
/// elements, struct fields (inherited ones too), arrays of structs; a
/// shared value is copied only when something in it converts.
#[test]
fn compat_int_for_float_is_converted_all_the_way_down() {
    use crate::value::StructValue;
    let mut r = registry();
    r.defs.insert(
        "Pos".into(),
        StructDef {
            parent: Some("Base".into()),
            fields: vec![Param::new("x", Type::Float)],
            ..Default::default()
        },
    );
    let pos = |x: Value| Value::structure(StructValue::new("Pos").with("id", 1i64).with("x", x));
    let floats = Type::Array(Box::new(Type::Float));
    let positions = Type::Array(Box::new(Type::Struct("Base".into())));
    assert!(r.holds_nested_float(&floats));
    assert!(r.holds_nested_float(&positions), "through a child struct");
    assert!(!r.holds_nested_float(&Type::Array(Box::new(Type::Int))));
    assert!(
        !r.holds_nested_float(&Type::Float),
        "the top level is not nested"
    );

    let mut v = Value::array(vec![Value::Int(1), Value::Float(2.5)]);
    r.widen_ints(&mut v, &floats);
    assert_eq!(v, Value::array(vec![Value::Float(1.0), Value::Float(2.5)]));

    let mut v = Value::array(vec![pos(Value::Int(3)), pos(Value::Float(4.5))]);
    r.widen_ints(&mut v, &positions);
    assert_eq!(
        v,
        Value::array(vec![pos(Value::Float(3.0)), pos(Value::Float(4.5))])
    );
    let Value::Struct(first) = &v.as_array().unwrap()[0] else {
        panic!("a struct")
    };
    assert_eq!(
        first.get("id"),
        Some(&Value::Int(1)),
        "an int field stays an int"
    );

    let shared = Value::array(vec![pos(Value::Float(1.0))]);
    let mut v = shared.clone();
    r.widen_ints(&mut v, &positions);
    let (Value::Array(a), Value::Array(b)) = (&v, &shared) else {
        panic!("arrays")
    };
    assert!(Rc::ptr_eq(a, b), "nothing to convert: not copied");
}

/// "no listener is called with wrong types": a struct matches when each
/// field it carries has its declared type (inherited and nested ones
/// too); a field left out or nil, one the definition does not name or
/// names as an observed nil, and a struct nobody defined are not held
/// against it.
#[test]
fn compat_struct_fields_must_carry_their_declared_types() {
    use crate::value::StructValue;
    let mut r = registry();
    r.defs.insert(
        "Holder".into(),
        StructDef {
            fields: vec![
                Param::new("inner", Type::Struct("Base".into())),
                Param::new("later", Type::Nil),
            ],
            ..Default::default()
        },
    );
    let base = Type::Struct("Base".into());
    let child = |id: Value, name: Value| {
        Value::structure(StructValue::new("Child").with("id", id).with("name", name))
    };
    assert!(r.value_matches(&child(Value::Int(1), Value::str("a")), &base));
    assert!(
        !r.value_matches(&child(Value::str("1"), Value::str("a")), &base),
        "inherited"
    );
    assert!(
        !r.value_matches(&child(Value::Int(1), Value::Int(2)), &base),
        "own"
    );
    assert!(
        r.value_matches(&child(Value::Nil, Value::str("a")), &base),
        "nil"
    );
    let partial = Value::structure(
        StructValue::new("Child")
            .with("name", "a")
            .with("extra", 3i64),
    );
    assert!(r.value_matches(&partial, &base), "left out, and not named");
    let holder = |inner: Value| {
        Value::structure(
            StructValue::new("Holder")
                .with("inner", inner)
                .with("later", 9i64),
        )
    };
    assert!(r.value_matches(
        &holder(child(Value::Int(1), Value::str("a"))),
        &Type::Struct("Holder".into())
    ));
    assert!(
        !r.value_matches(
            &holder(child(Value::Int(1), Value::Float(2.0))),
            &Type::Struct("Holder".into())
        ),
        "nested"
    );
    let unknown = Value::structure(StructValue::new("Stranger").with("id", "x"));
    assert!(r.value_matches(&unknown, &Type::Struct("Stranger".into())));
    assert!(!r.value_matches(
        &Value::array(vec![child(Value::Int(1), Value::Int(2))]),
        &Type::Array(Box::new(base))
    ));
}

/// Rows sharing their field-name strings are checked by position after
/// the first; the answer is the same as row by row, including a later
/// row with the same names and a wrong type, a row with another field
/// order, and a row of another struct.
#[test]
fn values_match_by_shared_names_agrees_with_row_by_row() {
    use crate::value::StructValue;
    let r = registry();
    let (child, id, name): (Rc<str>, Rc<str>, Rc<str>) =
        ("Child".into(), "id".into(), "name".into());
    let row = |a: Value, b: Value, flip: bool| {
        let mut s = StructValue::new(child.clone());
        let mut fields = vec![(id.clone(), a), (name.clone(), b)];
        if flip {
            fields.reverse();
        }
        s.fields = fields;
        Value::structure(s)
    };
    let good = || row(Value::Int(1), Value::str("a"), false);
    let base = Type::Struct("Base".into());
    let cases: Vec<(Vec<Value>, bool)> = vec![
        (vec![good(), good(), good()], true),
        (
            vec![good(), good(), row(Value::Int(1), Value::Int(2), false)],
            false,
        ),
        (
            vec![good(), row(Value::str("x"), Value::str("a"), false)],
            false,
        ),
        (
            vec![good(), row(Value::Int(3), Value::str("b"), true), good()],
            true,
        ),
        (vec![good(), row(Value::Int(3), Value::Int(4), true)], false),
        (
            vec![good(), Value::structure(StructValue::new("Stranger"))],
            false,
        ),
        (vec![good(), row(Value::Nil, Value::str("a"), false)], true),
    ];
    for (rows, expected) in cases {
        let one_by_one = rows.iter().all(|v| r.value_matches(v, &base));
        assert_eq!(one_by_one, expected, "{rows:?}");
        assert_eq!(r.values_match(&rows, &base), expected, "{rows:?}");
    }
}

#[test]
fn types_round_trip_through_text() {
    for text in [
        "any",
        "int",
        "float",
        "array<Item>",
        "array<array<int>>",
        "Item",
    ] {
        assert_eq!(text.parse::<Type>().unwrap().to_string(), text);
    }
    assert!("array<".parse::<Type>().is_err());
    assert!("9lives".parse::<Type>().is_err());
}

#[test]
fn child_struct_matches_parent_and_inherits_fields() {
    let r = registry();
    assert!(r.accepts(&Type::Struct("Base".into()), &Type::Struct("Child".into())));
    assert!(!r.accepts(&Type::Struct("Child".into()), &Type::Struct("Base".into())));
    let names: Vec<_> = r.all_fields("Child").into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["id", "name"]);
}

#[test]
fn int_accepted_for_float_nothing_else_converts() {
    let r = registry();
    assert!(r.accepts(&Type::Float, &Type::Int));
    assert!(!r.accepts(&Type::Int, &Type::Float));
    assert!(!r.accepts(&Type::String, &Type::Int));
    assert!(r.accepts(&Type::Any, &Type::String));
    assert!(r.value_matches(&Value::Int(1), &Type::Float));
    assert!(!r.value_matches(&Value::Float(1.0), &Type::Int));
}

#[test]
fn cyclic_parents_do_not_hang() {
    let mut r = StructRegistry::default();
    r.defs.insert(
        "A".into(),
        StructDef {
            parent: Some("B".into()),
            ..Default::default()
        },
    );
    r.defs.insert(
        "B".into(),
        StructDef {
            parent: Some("A".into()),
            ..Default::default()
        },
    );
    assert!(!r.is_a("A", "C"));
    let _ = r.all_fields("A");
}
