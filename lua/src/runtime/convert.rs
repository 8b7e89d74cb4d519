//! Values across the boundary, by the hub's value model.
//!
//! Lua → hub: integer → `int`, float → `float` (the Lua subtype decides, so a
//! key's first use records `int` or `float` faithfully), boolean, string,
//! object handle, and tables:
//! - a table with a `__struct = "Name"` field is a struct of that name, its
//!   fields following the struct's definition when the table knows it
//!   (missing fields take their type's default);
//! - a sequence (`{1, 2, 3}`, or `{}`) is an array, unless a struct is
//!   expected there;
//! - any other table is a plain record (named fields, sorted by name): the
//!   hub names its struct when it admits it, by one rule for both languages
//!   (`gantry_host::types::plain`). Where the signature expects a struct
//!   here, a table that fits it is named now.
//!
//! Hub → Lua: structs become tables carrying `__struct` (a plain record:
//! without it), arrays sequences (1-based), objects [`ObjectHandle`]s; a
//! struct round-trips unchanged.

use std::rc::Rc;

use gantry_host::face::structs::{plain_from_fields, struct_from_fields};
use gantry_host::face::{MAX_DEPTH, STRUCT_FIELD};
use gantry_host::{StructRegistry, StructValue, Type, Value};
use mlua::{Lua, Table, Value as LuaValue};

use super::handles::{NamedHandle, ObjectHandle, WorldHandle};

/// Does converting these values need the signature (is any a table)?
pub fn any_table(args: &[LuaValue]) -> bool {
    args.iter().any(|a| matches!(a, LuaValue::Table(_)))
}

/// Converts one Lua value. `expected` is the signature's type at this
/// position, if known; `structs` the table's struct definitions.
pub fn to_value(
    value: &LuaValue,
    expected: Option<&Type>,
    structs: &StructRegistry,
) -> Result<Value, String> {
    to_value_at(value, expected, structs, 0)
}

/// Converts a scalar without needing the signature; `None` for tables.
#[inline]
pub fn scalar_to_value(value: &LuaValue) -> Option<Result<Value, String>> {
    Some(Ok(match value {
        LuaValue::Nil => Value::Nil,
        LuaValue::Boolean(b) => Value::Bool(*b),
        LuaValue::Integer(i) => Value::Int(*i),
        LuaValue::Number(n) => Value::Float(*n),
        LuaValue::String(s) => match s.to_str() {
            Ok(text) => Value::Str(Rc::from(&*text)),
            Err(_) => return Some(Err("strings must be UTF-8".to_owned())),
        },
        LuaValue::UserData(ud) => {
            if let Ok(o) = ud.borrow::<ObjectHandle>() {
                Value::Object(o.0)
            } else {
                return Some(Err(
                    "only object handles can be sent (not worlds, named sources or other userdata)"
                        .to_owned(),
                ));
            }
        }
        LuaValue::Table(_) => return None,
        other => return Some(Err(format!("a {} cannot be sent", other.type_name()))),
    }))
}

fn to_value_at(
    value: &LuaValue,
    expected: Option<&Type>,
    structs: &StructRegistry,
    depth: usize,
) -> Result<Value, String> {
    if let Some(scalar) = scalar_to_value(value) {
        return scalar;
    }
    let LuaValue::Table(table) = value else {
        unreachable!("scalar_to_value handles every non-table value")
    };
    if depth >= MAX_DEPTH {
        return Err(format!("tables nested deeper than {MAX_DEPTH} (a cycle?)"));
    }
    let named: Option<String> = match table.raw_get::<LuaValue>(STRUCT_FIELD) {
        Ok(LuaValue::String(s)) => Some(s.to_str().map_err(|e| e.to_string())?.to_string()),
        Ok(LuaValue::Nil) => None,
        Ok(other) => {
            return Err(format!(
                "`{STRUCT_FIELD}` must be a string, got a {}",
                other.type_name()
            ));
        }
        Err(e) => return Err(e.to_string()),
    };
    if let Some(name) = named {
        return table_to_struct(table, &name, structs, depth).map(Value::structure);
    }
    let wants_struct = matches!(expected, Some(Type::Struct(_)));
    if !wants_struct && is_sequence(table) {
        let element = match expected {
            Some(Type::Array(inner)) => Some(&**inner),
            _ => None,
        };
        let mut items = Vec::with_capacity(table.raw_len());
        for i in 1..=table.raw_len() {
            let item: LuaValue = table.raw_get(i).map_err(|e| e.to_string())?;
            items.push(
                to_value_at(&item, element, structs, depth + 1)
                    .map_err(|e| format!("element {i}: {e}"))?,
            );
        }
        return Ok(Value::array(items));
    }
    table_to_plain(table, expected, structs, depth)
}

/// A table with named fields and no `__struct`: a plain record.
fn table_to_plain(
    table: &Table,
    expected: Option<&Type>,
    structs: &StructRegistry,
    depth: usize,
) -> Result<Value, String> {
    let mut fields: Vec<(String, LuaValue)> = Vec::new();
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let (key, value) = pair.map_err(|e| e.to_string())?;
        let LuaValue::String(key) = key else {
            return Err(format!(
                "a table with named fields must name every field with a string, got a {} key \
                 (a list and named fields cannot mix)",
                key.type_name()
            ));
        };
        fields.push((key.to_str().map_err(|e| e.to_string())?.to_string(), value));
    }
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    plain_from_fields(expected, structs, fields, |value, expected| {
        to_value_at(value, expected, structs, depth + 1)
    })
}

/// A table whose keys are exactly 1..n (an empty table counts).
fn is_sequence(table: &Table) -> bool {
    let n = table.raw_len();
    let mut count = 0usize;
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let Ok((key, _)) = pair else { return false };
        match key {
            LuaValue::Integer(i) if i >= 1 && (i as usize) <= n => count += 1,
            _ => return false,
        }
    }
    count == n
}

fn table_to_struct(
    table: &Table,
    name: &str,
    structs: &StructRegistry,
    depth: usize,
) -> Result<StructValue, String> {
    let mut fields: Vec<(String, LuaValue)> = Vec::new();
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let (key, value) = pair.map_err(|e| e.to_string())?;
        let LuaValue::String(key) = key else {
            return Err(format!(
                "struct `{name}` fields must have string names, got a {} key",
                key.type_name()
            ));
        };
        fields.push((key.to_str().map_err(|e| e.to_string())?.to_string(), value));
    }
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    struct_from_fields(
        name,
        structs,
        |field| match table.raw_get::<LuaValue>(field) {
            Ok(LuaValue::Nil) => Ok(None),
            Ok(value) => Ok(Some(value)),
            Err(e) => Err(e.to_string()),
        },
        fields,
        |value, expected| to_value_at(value, expected, structs, depth + 1),
    )
}

/// Converts a hub value for Lua.
pub fn from_value(lua: &Lua, value: &Value) -> mlua::Result<LuaValue> {
    Ok(match value {
        Value::Nil => LuaValue::Nil,
        Value::Bool(b) => LuaValue::Boolean(*b),
        Value::Int(i) => LuaValue::Integer(*i),
        Value::Float(f) => LuaValue::Number(*f),
        Value::Str(s) => LuaValue::String(lua.create_string(&**s)?),
        Value::Object(o) => LuaValue::UserData(lua.create_userdata(ObjectHandle(*o))?),
        Value::Struct(s) => {
            let table = lua.create_table_with_capacity(0, s.fields.len() + 1)?;
            for (field, v) in &s.fields {
                table.raw_set(&**field, from_value(lua, v)?)?;
            }
            if !s.is_plain() {
                table.raw_set(STRUCT_FIELD, &*s.name)?;
            }
            LuaValue::Table(table)
        }
        Value::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, v) in items.iter().enumerate() {
                table.raw_set(i + 1, from_value(lua, v)?)?;
            }
            LuaValue::Table(table)
        }
    })
}

/// A world handle's id, or the world of an object handle.
pub fn world_of_arg(value: &LuaValue, hub: &gantry_host::Hub) -> Option<gantry_host::WorldId> {
    let LuaValue::UserData(ud) = value else {
        return None;
    };
    if let Ok(w) = ud.borrow::<WorldHandle>() {
        return Some(w.0);
    }
    ud.borrow::<ObjectHandle>()
        .ok()
        .and_then(|o| hub.world_of(o.0))
}

/// An object's or named source's [`gantry_host::Source`].
pub fn object_source_of_arg(value: &LuaValue) -> Option<gantry_host::Source> {
    let LuaValue::UserData(ud) = value else {
        return None;
    };
    if let Ok(o) = ud.borrow::<ObjectHandle>() {
        return Some(gantry_host::Source::Object(o.0));
    }
    // A world is an object too (as in the reference, where UWorld is a
    // UObject): `StoreObjectMessage(self:World(), ...)` stores on the world.
    if let Ok(w) = ud.borrow::<WorldHandle>() {
        return Some(gantry_host::Source::World(w.0));
    }
    ud.borrow::<NamedHandle>().ok().map(|n| n.0)
}
