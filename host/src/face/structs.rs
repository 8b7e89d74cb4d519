//! A struct built from a script's named fields, the same way in every
//! language. A table (map) naming its struct with [`STRUCT_FIELD`] is that
//! struct ([`struct_from_fields`]): the fields the struct's definition
//! knows come first, in its order (a missing one takes its type's
//! default), then any others sorted by name, so the same table always
//! gives the same value. A table without it is a plain record
//! ([`plain_from_fields`]) whose struct the hub names by one rule for
//! every language (`crate::types::plain`).

use std::rc::Rc;

use crate::value::shared_name;
use crate::{StructRegistry, StructValue, Type, Value};

/// The field that names a table's (map's) struct.
pub const STRUCT_FIELD: &str = "__struct";

/// Deepest nesting converted; deeper (or cyclic) values are an error.
pub const MAX_DEPTH: usize = 32;

/// A conversion error that can say in which field it happened.
pub trait FieldError {
    /// The error, as met in field `name`.
    fn in_field(self, name: &str) -> Self;
}

impl FieldError for String {
    fn in_field(self, name: &str) -> Self {
        format!("field `{name}`: {self}")
    }
}

/// Builds struct `name` from a script's fields.
///
/// `declared(field)` reads a field by name (`None`: absent or nil);
/// `fields` are all the fields the script gave, sorted by name;
/// `convert(value, expected)` converts one field's value.
pub fn struct_from_fields<V, K: AsRef<str>, E: FieldError>(
    name: &str,
    structs: &StructRegistry,
    mut declared: impl FnMut(&str) -> Result<Option<V>, E>,
    fields: impl IntoIterator<Item = (K, V)>,
    mut convert: impl FnMut(&V, Option<&Type>) -> Result<Value, E>,
) -> Result<StructValue, E> {
    let mut out = StructValue::new(shared_name(name));
    let defined = structs.get(name).is_some();
    if defined {
        for param in structs.all_fields(name) {
            let value = match declared(param.name.as_str())? {
                None => Value::default_of(&param.ty, structs),
                Some(v) => convert(&v, Some(&param.ty)).map_err(|e| e.in_field(&param.name))?,
            };
            out.fields.push((shared_name(&param.name), value));
        }
    }
    for (field, value) in fields {
        let field = field.as_ref();
        if field == STRUCT_FIELD || (defined && out.get(field).is_some()) {
            continue;
        }
        let value = convert(&value, None).map_err(|e| e.in_field(field))?;
        out.fields.push((Rc::from(field), value));
    }
    Ok(out)
}

/// Builds a plain record from a script's fields (a table without
/// [`STRUCT_FIELD`]), `fields` sorted by name. Where the caller knows the
/// type `expected` here (a writer's row, a hook's payload), the record is
/// named now when its fields fit that struct; otherwise it stays plain and
/// the hub names it when it admits it. `convert(value, expected)` converts
/// one field's value (its type from the expected struct, when known).
pub fn plain_from_fields<V, K: AsRef<str>, E: FieldError>(
    expected: Option<&Type>,
    structs: &StructRegistry,
    fields: impl IntoIterator<Item = (K, V)>,
    mut convert: impl FnMut(&V, Option<&Type>) -> Result<Value, E>,
) -> Result<Value, E> {
    let struct_name = match expected {
        Some(Type::Struct(name)) => Some(&**name),
        _ => None,
    };
    let mut out = StructValue::plain();
    for (field, value) in fields {
        let field = field.as_ref();
        let ty = struct_name.and_then(|name| structs.field_type(name, field));
        let value = convert(&value, ty).map_err(|e| e.in_field(field))?;
        out.fields.push((shared_name(field), value));
    }
    let mut value = Value::structure(out);
    if let Some(ty) = expected {
        // Left plain when it does not fit: the hub says why where it
        // checks the value.
        let _ = structs.name_plain(&mut value, ty);
    }
    Ok(value)
}
