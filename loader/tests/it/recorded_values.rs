//! A recording writes each value as its JSON, the same bytes whether the
//! recorder writes it straight to the file or it is built as JSON first,
//! so a replay reads back what was sent.

use gantry_host::value::StructValue;
use gantry_host::{ObjectId, Value};
use gantry_loader::record::{json_to_value, value_to_json, write_value};

fn every_kind() -> Vec<Value> {
    let mut reward = StructValue::new("Reward");
    reward.set("gold", Value::Int(50));
    reward.set("item", Value::str("sword \"of\" old\n\u{1F5E1}"));
    reward.set("weight", Value::Float(2.5));
    vec![
        Value::Nil,
        Value::Bool(true),
        Value::Bool(false),
        Value::Int(-42),
        Value::Int(i64::MAX),
        Value::Float(1.0),
        Value::Float(1.0 / 60.0),
        Value::Float(-0.0),
        Value::Float(1e300),
        Value::Float(f64::NAN),
        Value::Float(f64::INFINITY),
        Value::Float(f64::NEG_INFINITY),
        Value::str(""),
        Value::str("tab\there \\ \u{0001} é"),
        Value::Object(ObjectId::from_raw(7).unwrap()),
        Value::structure(reward),
        Value::array(vec![Value::Int(1), Value::array(vec![]), Value::Nil]),
    ]
}

#[test]
fn every_value_is_written_as_the_json_it_reads_back_from() {
    for value in every_kind() {
        let mut written = Vec::new();
        write_value(&mut written, &value);
        let written = String::from_utf8(written).unwrap();
        assert_eq!(written, value_to_json(&value).to_string(), "{value:?}");
        let read: serde_json::Value = serde_json::from_str(&written).unwrap();
        let back = json_to_value(&read).expect("a value");
        match (&value, &back) {
            (Value::Float(a), Value::Float(b)) if a.is_nan() => assert!(b.is_nan()),
            _ => assert_eq!(back, value, "{written}"),
        }
    }
}
