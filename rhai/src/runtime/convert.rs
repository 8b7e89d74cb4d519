//! Values across the boundary, by the hub's value model.
//!
//! Rhai → hub: `()` → nil, `INT` → int, `FLOAT` → float, bool, string (and
//! char), object handle, array → array, and object maps:
//! - a map with a `__struct: "Name"` field is a struct of that name (the
//!   convention of the Lua runtime's tables);
//! - otherwise, when the signature expects a struct at that place, the map
//!   is that struct — at any depth: an argument, an array element (of an
//!   array of arrays too), or a struct field, whose type comes from the
//!   struct's definition in the table;
//! - otherwise it is an error naming the position: a struct needs a name.
//!
//! Only a map without `__struct` needs the signature, so a send converts
//! without it first ([`to_value_untyped`]) and looks the key up only when
//! it meets such a map: arguments without maps cost no lookup.
//!
//! Struct fields follow the struct's definition when the table knows it
//! (missing fields take their type's default), else the field names sorted.
//!
//! Hub → Rhai: structs become maps carrying `__struct`, arrays arrays,
//! objects [`ObjectHandle`]s; a struct round-trips unchanged.

use std::rc::Rc;

use gantry_host::face::structs::{FieldError, struct_from_fields};
use gantry_host::face::{MAX_DEPTH, STRUCT_FIELD};
use gantry_host::{StructRegistry, StructValue, Type, Value};
use rhai::{Array, Dynamic, Map};

use super::handles::{NamedHandle, ObjectHandle, WorldHandle};

/// Why a conversion failed.
enum Fail {
    /// A map without `__struct` where no type was asked for: converting
    /// again by the signature may name its struct.
    Unnamed,
    /// Anything else, with its message.
    Bad(String),
}

impl Fail {
    /// Prefixes the message with where it happened (`element 3`,
    /// `` field `x` ``); an [`Fail::Unnamed`] carries no message.
    fn at(self, place: impl FnOnce() -> String) -> Self {
        match self {
            Fail::Bad(e) => Fail::Bad(format!("{}: {e}", place())),
            unnamed => unnamed,
        }
    }

    fn message(self) -> String {
        match self {
            Fail::Bad(e) => e,
            Fail::Unnamed => unnamed_message(None),
        }
    }
}

/// How a map without `__struct` is handled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The signature was not consulted: such a map fails as
    /// [`Fail::Unnamed`], so the caller looks the signature up then.
    Untyped,
    /// `expected` is the signature's type: such a map is the struct it
    /// names, or an error.
    Typed,
}

/// Converts one Rhai value without the signature, for arguments whose
/// signature is looked up only if needed: `None` when some map in it (at
/// any depth) has no `__struct` and so takes its struct from the declared
/// type at its place — convert it again with [`to_value`] and that type.
/// No other value reads the signature: a named map is the struct it
/// names, and everything else converts by what it is.
pub fn to_value_untyped(
    value: &Dynamic,
    structs: &StructRegistry,
) -> Option<Result<Value, String>> {
    match to_value_at(value, None, structs, 0, Mode::Untyped) {
        Ok(v) => Some(Ok(v)),
        Err(Fail::Unnamed) => None,
        Err(Fail::Bad(e)) => Some(Err(e)),
    }
}

/// Converts one Rhai value; `expected` is the signature's type here. A map
/// without `__struct`, at any depth, is the struct the type declares at
/// its place (struct fields by the struct's definition).
pub fn to_value(
    value: &Dynamic,
    expected: Option<&Type>,
    structs: &StructRegistry,
) -> Result<Value, String> {
    to_value_at(value, expected, structs, 0, Mode::Typed).map_err(Fail::message)
}

fn unnamed_message(expected: Option<&Type>) -> String {
    match expected {
        None | Some(Type::Any) => format!(
            "an object map is a struct and needs a name: add `{STRUCT_FIELD}: \"Name\"` \
             (or declare the key's parameter type)"
        ),
        Some(ty) => {
            format!("expected {ty}, got an object map without `{STRUCT_FIELD}` (a map is a struct)")
        }
    }
}

fn to_value_at(
    value: &Dynamic,
    expected: Option<&Type>,
    structs: &StructRegistry,
    depth: usize,
    mode: Mode,
) -> Result<Value, Fail> {
    if depth >= MAX_DEPTH {
        return Err(Fail::Bad(format!("values nested deeper than {MAX_DEPTH}")));
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
                to_value_at(item, element, structs, depth + 1, mode)
                    .map_err(|e| e.at(|| format!("element {i}")))?,
            );
        }
        return Ok(Value::array(out));
    }
    if value.is_map() {
        let Some(map) = value.read_lock::<Map>() else {
            return Err(Fail::Bad("an object map could not be read".to_owned()));
        };
        let named = match map.get(STRUCT_FIELD) {
            None => None,
            Some(name) if name.is_string() => Some(name.to_string()),
            Some(other) => {
                return Err(Fail::Bad(format!(
                    "`{STRUCT_FIELD}` must be a string, got a {}",
                    other.type_name()
                )));
            }
        };
        let name = match (named, expected) {
            (Some(name), _) => name,
            (None, Some(Type::Struct(name))) => name.to_string(),
            (None, _) if mode == Mode::Untyped => return Err(Fail::Unnamed),
            (None, expected) => return Err(Fail::Bad(unnamed_message(expected))),
        };
        return map_to_struct(&map, &name, structs, depth, mode).map(Value::structure);
    }
    if value.is::<WorldHandle>() || value.is::<NamedHandle>() {
        return Err(Fail::Bad(
            "only object handles can be sent (not worlds or named sources)".to_owned(),
        ));
    }
    Err(Fail::Bad(format!("a {} cannot be sent", value.type_name())))
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
    mode: Mode,
) -> Result<StructValue, Fail> {
    struct_from_fields(
        name,
        structs,
        |field| Ok(map.get(field).filter(|v| !v.is_unit())),
        // A Rhai map is ordered by field name, so its fields come sorted.
        map.iter().map(|(field, value)| (field.as_str(), value)),
        |value, expected| to_value_at(value, expected, structs, depth + 1, mode),
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
            map.insert(
                STRUCT_FIELD.into(),
                Dynamic::from(rhai::ImmutableString::from(&*s.name)),
            );
            Dynamic::from_map(map)
        }
        Value::Array(items) => Dynamic::from_array(items.iter().map(from_value).collect()),
    }
}
