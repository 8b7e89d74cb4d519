use super::*;
use crate::value::StructValue;
use serde::Serialize;
use std::rc::Rc;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
struct Item {
    id: i64,
    name: String,
    count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
struct Inventory {
    owner: Option<String>,
    items: Vec<Item>,
    best: Item,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Hurt {
    causer: ObjectId,
    dmg: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Shape {
    Empty,
    Circle(f64),
    Pair(i64, i64),
    Rect { w: f64, h: f64 },
}

fn sword() -> Item {
    Item {
        id: 7,
        name: "sword".into(),
        count: 2,
    }
}

fn round_trip<T: Serialize + DeserializeOwned>(value: &T) -> T {
    from_value(&to_value(value).unwrap()).unwrap()
}

#[test]
fn structs_become_named_structs_with_fields_in_declaration_order() {
    let value = to_value(&sword()).unwrap();
    let s = value.as_struct().unwrap();
    assert_eq!(&*s.name, "Item");
    let names: Vec<&str> = s.fields.iter().map(|(n, _)| &**n).collect();
    assert_eq!(names, ["id", "name", "count"]);
    assert_eq!(s.get("count"), Some(&Value::Int(2)));
    assert_eq!(s.get("name"), Some(&Value::str("sword")));
}

#[test]
fn nested_structs_vec_of_structs_and_options_round_trip() {
    let inv = Inventory {
        owner: Some("ann".into()),
        items: vec![sword(), Item::default()],
        best: sword(),
    };
    assert_eq!(round_trip(&inv), inv);
    let none = Inventory::default();
    let value = to_value(&none).unwrap();
    assert_eq!(value.as_struct().unwrap().get("owner"), Some(&Value::Nil));
    assert_eq!(round_trip(&none), none);
    assert_eq!(
        to_value(&inv)
            .unwrap()
            .as_struct()
            .unwrap()
            .get("items")
            .unwrap()
            .type_of(),
        Type::Array(Box::new(Type::Struct("Item".into())))
    );
}

#[test]
fn enums_unit_variants_are_strings_data_variants_are_structs() {
    assert_eq!(to_value(&Shape::Empty).unwrap(), Value::str("Empty"));
    let rect = to_value(&Shape::Rect { w: 1.0, h: 2.5 }).unwrap();
    assert_eq!(&*rect.as_struct().unwrap().name, "Rect");
    let circle = to_value(&Shape::Circle(3.0)).unwrap();
    assert_eq!(
        circle,
        Value::structure(StructValue::new("Circle").with("0", 3.0))
    );
    for shape in [
        Shape::Empty,
        Shape::Circle(3.0),
        Shape::Pair(1, 2),
        Shape::Rect { w: 1.0, h: 2.5 },
    ] {
        assert_eq!(round_trip(&shape), shape);
    }
}

#[test]
fn object_ids_round_trip_as_objects() {
    let id = ObjectId::from_raw(42).unwrap();
    let hurt = Hurt {
        causer: id,
        dmg: 3.5,
    };
    let value = to_value(&hurt).unwrap();
    assert_eq!(
        value.as_struct().unwrap().get("causer"),
        Some(&Value::Object(id))
    );
    assert_eq!(round_trip(&hurt), hurt);
    // An int is not an object: nothing else converts.
    let forged = Value::structure(
        StructValue::new("Hurt")
            .with("causer", 42i64)
            .with("dmg", 1.0),
    );
    let err = from_value::<Hurt>(&forged).unwrap_err();
    assert_eq!(err.to_string(), "field `causer`: expected object, got int");
    // Other formats still see a plain number.
    assert_eq!(serde_json::to_string(&id).unwrap(), "42");
    assert_eq!(serde_json::from_str::<ObjectId>("42").unwrap(), id);
}

#[test]
fn skipped_fields_take_no_position() {
    #[derive(Serialize, Deserialize, Default, Debug, PartialEq)]
    struct Row {
        a: i64,
        #[serde(skip)]
        cache: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        b: i64,
    }
    let row = Row {
        a: 1,
        cache: 9,
        note: None,
        b: 2,
    };
    let value = to_value(&row).unwrap();
    let fields = &value.as_struct().unwrap().fields;
    assert_eq!(fields.len(), 2);
    assert_eq!((&*fields[1].0, &fields[1].1), ("b", &Value::Int(2)));
    assert_eq!(from_value::<Row>(&value).unwrap(), Row { cache: 0, ..row });
}

#[test]
fn int_is_accepted_where_a_float_is_expected() {
    let value = Value::structure(
        StructValue::new("Hurt")
            .with("causer", ObjectId::from_raw(1).unwrap())
            .with("dmg", 5i64),
    );
    assert_eq!(from_value::<Hurt>(&value).unwrap().dmg, 5.0);
    // ... but never the other way round.
    let err = from_value::<i64>(&Value::Float(5.0)).unwrap_err();
    assert_eq!(err.to_string(), "expected int, got float");
}

#[test]
fn missing_options_defaults_and_unknown_fields() {
    #[derive(Deserialize, Debug, PartialEq)]
    struct Settings {
        volume: f64,
        label: Option<String>,
        #[serde(default)]
        retries: u32,
    }
    let value = Value::structure(
        StructValue::new("Whatever")
            .with("volume", 0.5)
            .with("unknown", "ignored"),
    );
    let settings: Settings = from_value(&value).unwrap();
    assert_eq!(
        settings,
        Settings {
            volume: 0.5,
            label: None,
            retries: 0
        }
    );
    let missing = Value::structure(StructValue::new("Settings"));
    assert_eq!(
        from_value::<Settings>(&missing).unwrap_err().to_string(),
        "missing field `volume`"
    );
}

#[test]
fn errors_name_the_field_path() {
    let mut inv = to_value(&Inventory {
        owner: None,
        items: vec![sword(), sword(), sword()],
        best: sword(),
    })
    .unwrap();
    let Value::Struct(s) = &mut inv else {
        unreachable!()
    };
    let s = Rc::make_mut(s);
    let mut items = s.get("items").unwrap().as_array().unwrap().to_vec();
    let Value::Struct(third) = &mut items[2] else {
        unreachable!()
    };
    Rc::make_mut(third).set("count", Value::str("many"));
    s.set("items", Value::array(items));
    let err = from_value::<Inventory>(&inv).unwrap_err();
    assert_eq!(
        err.to_string(),
        "field `items[2].count`: expected int, got string"
    );
    assert_eq!(err.path(), "items[2].count");
    assert_eq!(err.message(), "expected int, got string");
    let err = from_value::<Item>(&Value::Int(1)).unwrap_err();
    assert_eq!(err.to_string(), "expected struct Item, got int");
}

#[test]
fn u64_above_i64_max_is_an_error_naming_the_value() {
    #[derive(Serialize)]
    struct Big {
        stats: Vec<u64>,
    }
    let err = to_value(&Big {
        stats: vec![1, u64::MAX],
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "field `stats[1]`: integer 18446744073709551615 does not fit in an int (i64)"
    );
    assert_eq!(to_value(&(i64::MAX as u64)).unwrap(), Value::Int(i64::MAX));
    assert!(from_value::<u8>(&Value::Int(300)).is_err());
}

#[test]
fn string_keyed_maps_are_anonymous_structs() {
    let mut map = std::collections::BTreeMap::new();
    map.insert("hp".to_owned(), 10i64);
    map.insert("mp".to_owned(), 3i64);
    let value = to_value(&map).unwrap();
    let s = value.as_struct().unwrap();
    assert_eq!((&*s.name, s.fields.len()), ("", 2));
    assert_eq!(round_trip(&map), map);
    let mut by_int = std::collections::BTreeMap::new();
    by_int.insert(1i64, 1i64);
    assert_eq!(
        to_value(&by_int).unwrap_err().to_string(),
        "map keys must be strings, got int"
    );
}

#[test]
fn serde_wrapper_declares_the_struct_type_and_converts() {
    assert_eq!(Serde::<Hurt>::declared_type(), Type::Struct("Hurt".into()));
    assert_eq!(
        Serde::<Vec<Item>>::declared_type(),
        Type::Array(Box::new(Type::Struct("Item".into())))
    );
    assert_eq!(Serde::<Option<f64>>::declared_type(), Type::Float);
    assert_eq!(Serde::<ObjectId>::declared_type(), Type::Object);
    assert_eq!(Serde::<Shape>::declared_type(), Type::Any);
    let value = Serde(sword()).into_value();
    assert_eq!(Serde::<Item>::from_value(&value), Some(Serde(sword())));
    assert_eq!(Serde::<Item>::from_value(&Value::Int(1)), None);
    assert_eq!(Serde(u64::MAX).into_value(), Value::Nil);
}

#[test]
fn struct_def_of_derives_fields_from_default() {
    let (name, def) = struct_def_of::<Inventory>().unwrap();
    assert_eq!(name, "Inventory");
    let fields: Vec<String> = def
        .fields
        .iter()
        .map(|p| format!("{}:{}", p.name, p.ty))
        .collect();
    assert_eq!(fields, ["owner:any", "items:array<any>", "best:Item"]);
    assert_eq!(struct_def_of::<Vec<Item>>(), None);
}
