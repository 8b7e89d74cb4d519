//! Values across the boundary, by the hub's value model.
//!
//! Rhai → hub: `()` → nil, `INT` → int, `FLOAT` → float, bool, string (and
//! char), object handle, array → array, and object maps:
//! - a map with a `__struct: "Name"` field is a struct of that name (the
//!   convention of the Lua runtime's tables);
//! - otherwise, when the signature expects a struct at that position, the
//!   map is that struct;
//! - otherwise it is an error naming the position: a struct needs a name.
//!
//! Struct fields follow the struct's definition when the table knows it
//! (missing fields take their type's default), else the field names sorted.
//!
//! Hub → Rhai: structs become maps carrying `__struct`, arrays arrays,
//! objects [`ObjectHandle`]s; a struct round-trips unchanged.

use std::rc::Rc;

use gantry_host::{StructRegistry, StructValue, Type, Value};
use rhai::{Array, Dynamic, Map};

use super::handles::{NamedHandle, ObjectHandle, WorldHandle};

/// The field that names a map's struct.
pub const STRUCT_FIELD: &str = "__struct";

/// Deepest nesting converted.
const MAX_DEPTH: usize = 32;

/// Does converting these values need the signature (is any a map)?
pub fn any_map(args: &[Dynamic]) -> bool {
    args.iter().any(|a| a.is_map())
}

/// Converts one Rhai value; `expected` is the signature's type here.
pub fn to_value(
    value: &Dynamic,
    expected: Option<&Type>,
    structs: &StructRegistry,
) -> Result<Value, String> {
    to_value_at(value, expected, structs, 0)
}

fn to_value_at(
    value: &Dynamic,
    expected: Option<&Type>,
    structs: &StructRegistry,
    depth: usize,
) -> Result<Value, String> {
    if depth >= MAX_DEPTH {
        return Err(format!("values nested deeper than {MAX_DEPTH}"));
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
        let items = value
            .read_lock::<Array>()
            .map(|a| a.clone())
            .unwrap_or_default();
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(
                to_value_at(item, element, structs, depth + 1)
                    .map_err(|e| format!("element {i}: {e}"))?,
            );
        }
        return Ok(Value::array(out));
    }
    if value.is_map() {
        let map = value
            .read_lock::<Map>()
            .map(|m| m.clone())
            .unwrap_or_default();
        let named = match map.get(STRUCT_FIELD) {
            None => None,
            Some(name) if name.is_string() => Some(name.to_string()),
            Some(other) => {
                return Err(format!(
                    "`{STRUCT_FIELD}` must be a string, got a {}",
                    other.type_name()
                ));
            }
        };
        let name = named.or_else(|| match expected {
            Some(Type::Struct(name)) => Some(name.to_string()),
            _ => None,
        });
        let Some(name) = name else {
            return Err(format!(
                "an object map is a struct and needs a name: add `{STRUCT_FIELD}: \"Name\"` \
                 (or declare the key's parameter type)"
            ));
        };
        return map_to_struct(&map, &name, structs, depth).map(Value::structure);
    }
    if value.is::<WorldHandle>() || value.is::<NamedHandle>() {
        return Err("only object handles can be sent (not worlds or named sources)".to_owned());
    }
    Err(format!("a {} cannot be sent", value.type_name()))
}

fn map_to_struct(
    map: &Map,
    name: &str,
    structs: &StructRegistry,
    depth: usize,
) -> Result<StructValue, String> {
    let mut out = StructValue::new(gantry_host::value::shared_name(name));
    let defined = structs.get(name).is_some();
    if defined {
        for param in structs.all_fields(name) {
            let value = match map.get(param.name.as_str()) {
                None => Value::default_of(&param.ty, structs),
                Some(v) if v.is_unit() => Value::default_of(&param.ty, structs),
                Some(v) => to_value_at(v, Some(&param.ty), structs, depth + 1)
                    .map_err(|e| format!("field `{}`: {e}", param.name))?,
            };
            out.fields
                .push((gantry_host::value::shared_name(&param.name), value));
        }
    }
    // A Rhai map is ordered by field name, so extra fields come out sorted.
    for (field, value) in map {
        if field.as_str() == STRUCT_FIELD || (defined && out.get(field).is_some()) {
            continue;
        }
        let value = to_value_at(value, None, structs, depth + 1)
            .map_err(|e| format!("field `{field}`: {e}"))?;
        out.fields.push((Rc::from(field.as_str()), value));
    }
    Ok(out)
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
            map.insert(
                STRUCT_FIELD.into(),
                Dynamic::from(rhai::ImmutableString::from(&*s.name)),
            );
            Dynamic::from_map(map)
        }
        Value::Array(items) => Dynamic::from_array(items.iter().map(from_value).collect()),
    }
}
