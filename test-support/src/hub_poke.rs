//! Sends, stores and hook runs of assorted values on a few keys, from every
//! kind of source: what the script faces' robustness tests do after a
//! hostile script loaded, to show the hub stays usable. It needs only the
//! hub, so both script faces' tests share it.

use gantry_host::face::Faced;
use gantry_host::{Caller, Hub, ObjectId, Source, StructValue, Value, WorldId};

/// Sends and stores each of a few argument lists (scalars, none, a table of
/// `Item` rows whole and partial, nil/NaN/an object) on each of `keys`,
/// from the global source, `object` and `world` in turn, then runs each as
/// a hook. Outcomes are ignored and reports drained: only a panic fails.
pub fn poke(hub: &Hub, world: WorldId, object: ObjectId, keys: &[&str]) {
    let row = |id: Option<i64>| {
        let row = StructValue::new("Item");
        let row = match id {
            Some(id) => row.with("id", Value::Int(id)),
            None => row,
        };
        Value::structure(
            row.with("name", Value::str("r"))
                .with("count", Value::Int(2)),
        )
    };
    let args = [
        vec![Value::Int(1), Value::Float(2.5)],
        vec![Value::str("x")],
        vec![],
        vec![Value::array(vec![row(Some(1))])],
        vec![Value::array(vec![row(None)])],
        vec![Value::Nil, Value::Float(f64::NAN), Value::Object(object)],
    ];
    for text in keys {
        let key = hub.key(text).unwrap();
        for (i, a) in args.iter().enumerate() {
            let source = match i % 3 {
                0 => Source::Global,
                1 => Source::Object(object),
                _ => Source::World(world),
            };
            let mut sent = a.clone();
            let _ = hub.send_values(key, source, &mut sent, Caller::Unrecorded);
            let _ = hub.store_values(key, source, a.clone(), false, Caller::Unrecorded);
        }
        let mut payload = Value::Nil;
        let _ = hub.run_hook(text, &mut payload);
    }
    let _ = hub.take_reports();
}
