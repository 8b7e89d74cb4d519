//! Values across the boundary, by the hub's value model.
//!
//! Rhai → hub: `()` → nil, `INT` → int, `FLOAT` → float, bool, string (and
//! char), object handle, array → array, and object maps:
//! - a map with a `__struct: "Name"` field is a struct of that name (the
//!   convention of the Lua runtime's tables), its fields following the
//!   struct's definition when the table knows it (missing fields take
//!   their type's default);
//! - any other map is a plain record (its fields sorted by name): the hub
//!   names its struct when it admits it, by one rule for both languages
//!   (`gantry_host::types::plain`), at any depth. Where a caller passes the
//!   type expected here, a map that fits it is named now.
//!
//! A send converts without the signature (`to_value` with no expected
//! type): the hub names plain records when it checks the send.
//!
//! Hub → Rhai: structs become maps carrying `__struct` (a plain record:
//! without it), arrays arrays, objects [`ObjectHandle`]s; a struct
//! round-trips unchanged.

use std::rc::Rc;

use gantry_host::face::structs::{FieldError, plain_from_fields, struct_from_fields};
use gantry_host::face::{MAX_DEPTH, STRUCT_FIELD};
use gantry_host::{StructRegistry, StructValue, Type, Value};
use rhai::{Array, Dynamic, Map};

use super::handles::{NamedHandle, ObjectHandle, WorldHandle};

/// Why a conversion failed: its message.
struct Fail(String);

impl Fail {
    /// Prefixes the message with where it happened (`element 3`,
    /// `` field `x` ``).
    fn at(self, place: impl FnOnce() -> String) -> Self {
        Fail(format!("{}: {}", place(), self.0))
    }
}

/// Converts one Rhai value; `expected` is the type known here (a writer's
/// row, a hook's payload): a map without `__struct` that fits it, at any
/// depth, is named as that struct now.
pub fn to_value(
    value: &Dynamic,
    expected: Option<&Type>,
    structs: &StructRegistry,
) -> Result<Value, String> {
    to_value_at(value, expected, structs, 0).map_err(|f| f.0)
}

fn to_value_at(
    value: &Dynamic,
    expected: Option<&Type>,
    structs: &StructRegistry,
    depth: usize,
) -> Result<Value, Fail> {
    if depth >= MAX_DEPTH {
        return Err(Fail(format!("values nested deeper than {MAX_DEPTH}")));
    }
    // Integers first and by their type test: the common argument of a
    // send, and a failed `as_bool` names the value's type on every call.
    if value.is_int()
        && let Ok(i) = value.as_int()
    {
        return Ok(Value::Int(i));
    }
    if value.is_unit() {
        return Ok(Value::Nil);
    }
    if let Ok(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Ok(i) = value.as_int() {
        return Ok(Value::Int(i));
    }
    if let Ok(f) = value.as_float() {
        return Ok(Value::Float(f));
    }
    if value.is_string() {
        let text = value.clone().into_immutable_string().unwrap_or_default();
        return Ok(Value::Str(Rc::from(text.as_str())));
    }
    if let Ok(c) = value.as_char() {
        return Ok(Value::Str(Rc::from(c.to_string())));
    }
    if let Some(o) = value.clone().try_cast::<ObjectHandle>() {
        return Ok(Value::Object(o.0));
    }
    if value.is_array() {
        let element = match expected {
            Some(Type::Array(inner)) => Some(&**inner),
            _ => None,
        };
        let Some(items) = value.read_lock::<Array>() else {
            return Ok(Value::array(Vec::new()));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(
                to_value_at(item, element, structs, depth + 1)
                    .map_err(|e| e.at(|| format!("element {i}")))?,
            );
        }
        return Ok(Value::array(out));
    }
    if value.is_map() {
        let Some(map) = value.read_lock::<Map>() else {
            return Err(Fail("an object map could not be read".to_owned()));
        };
        let named = match map.get(STRUCT_FIELD) {
            None => None,
            Some(name) if name.is_string() => Some(name.to_string()),
            Some(other) => {
                return Err(Fail(format!(
                    "`{STRUCT_FIELD}` must be a string, got a {}",
                    other.type_name()
                )));
            }
        };
        return match named {
            Some(name) => map_to_struct(&map, &name, structs, depth).map(Value::structure),
            // A Rhai map is ordered by field name, so its fields come sorted.
            None => plain_from_fields(
                expected,
                structs,
                map.iter().map(|(field, value)| (field.as_str(), value)),
                |value, expected| to_value_at(value, expected, structs, depth + 1),
            ),
        };
    }
    if value.is::<WorldHandle>() || value.is::<NamedHandle>() {
        return Err(Fail(
            "only object handles can be sent (not worlds or named sources)".to_owned(),
        ));
    }
    Err(Fail(format!("a {} cannot be sent", value.type_name())))
}

impl FieldError for Fail {
    fn in_field(self, name: &str) -> Self {
        self.at(|| format!("field `{name}`"))
    }
}

fn map_to_struct(
    map: &Map,
    name: &str,
    structs: &StructRegistry,
    depth: usize,
) -> Result<StructValue, Fail> {
    struct_from_fields(
        name,
        structs,
        |field| Ok(map.get(field).filter(|v| !v.is_unit())),
        // A Rhai map is ordered by field name, so its fields come sorted.
        map.iter().map(|(field, value)| (field.as_str(), value)),
        |value, expected| to_value_at(value, expected, structs, depth + 1),
    )
}

/// Converts a hub value for Rhai.
pub fn from_value(value: &Value) -> Dynamic {
    match value {
        Value::Nil => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from_bool(*b),
        Value::Int(i) => Dynamic::from_int(*i),
        Value::Float(f) => Dynamic::from_float(*f),
        Value::Str(s) => Dynamic::from(rhai::ImmutableString::from(&**s)),
        Value::Object(o) => Dynamic::from(ObjectHandle(*o)),
        Value::Struct(s) => {
            let mut map = Map::new();
            for (field, v) in &s.fields {
                map.insert((&**field).into(), from_value(v));
            }
            if !s.is_plain() {
                map.insert(
                    STRUCT_FIELD.into(),
                    Dynamic::from(rhai::ImmutableString::from(&*s.name)),
                );
            }
            Dynamic::from_map(map)
        }
        Value::Array(items) => Dynamic::from_array(items.iter().map(from_value).collect()),
    }
}
