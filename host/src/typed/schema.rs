//! Rust types as the signature table's types: what a parameter or a
//! struct field of a Rust type declares, and structs that declare
//! themselves (`#[derive(Struct)]`, [`table_row!`](crate::table_row)).

use std::rc::Rc;

use crate::hub::Hub;
use crate::listener::ListenerError;
use crate::signature::SignatureTable;
use crate::types::{Param, StructDef, Type};
use crate::value::{FromValue, ObjectId, StructValue, Value, shared_name};

use super::arg::convert;

/// A Rust type a parameter or a struct field can have: the [`Type`] it
/// declares, and the structs that type needs in the table (a
/// `#[derive(Struct)]` type declares itself and the structs of its
/// fields; a scalar needs none).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no Gantry type",
    label = "not a parameter or field type",
    note = "a parameter or field is `i64`, `i32`, `u32`, `f64`, `f32`, `bool`, `String`, `Rc<str>`, `ObjectId`, `Value`, `Vec<T>`, `Option<T>` or a `#[derive(Struct)]` type"
)]
pub trait FieldType {
    /// The type the table records.
    fn ty() -> Type;
    /// Declares the structs this type holds (none for a scalar).
    fn declare_structs(_table: &mut SignatureTable) {}
}

macro_rules! field_types {
    ($($rust:ty => $ty:expr),* $(,)?) => {$(
        impl FieldType for $rust {
            #[inline]
            fn ty() -> Type {
                $ty
            }
        }
    )*};
}

field_types!(
    bool => Type::Bool,
    i64 => Type::Int,
    i32 => Type::Int,
    u32 => Type::Int,
    usize => Type::Int,
    f64 => Type::Float,
    f32 => Type::Float,
    String => Type::String,
    Rc<str> => Type::String,
    ObjectId => Type::Object,
    Value => Type::Any,
);

impl<T: FieldType> FieldType for Vec<T> {
    fn ty() -> Type {
        Type::Array(Box::new(T::ty()))
    }
    fn declare_structs(table: &mut SignatureTable) {
        T::declare_structs(table);
    }
}

/// An optional field may hold nil, which only `any` admits (as
/// [`struct_def_of`](crate::struct_def_of) declares a `None`).
impl<T: FieldType> FieldType for Option<T> {
    fn ty() -> Type {
        Type::Any
    }
    fn declare_structs(table: &mut SignatureTable) {
        T::declare_structs(table);
    }
}

/// An optional parameter or field: nil reads as `None`, anything else
/// as `T` would. Declares `any`, the one type that admits nil.
impl<T: FromValue> FromValue for Option<T> {
    fn declared_type() -> Type {
        Type::Any
    }
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Nil => Some(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// A Rust struct that is a struct of the signature table: its name, doc
/// and fields with their types. `#[derive(Struct)]` implements it (with
/// the value conversions); [`table_row!`](crate::table_row) does for a
/// [`Row`](crate::Row) type. Declare it with [`Hub::declare_struct`];
/// a declared message declares the structs it carries itself.
pub trait StructType: 'static {
    /// The struct's name in the table.
    const NAME: &'static str;
    /// The struct's doc comment, first paragraph.
    const DOC: &'static str = "";
    /// Each field's name and doc comment (the table keeps no field docs;
    /// tools may read them here).
    const FIELD_DOCS: &'static [(&'static str, &'static str)] = &[];
    /// The definition the table records.
    fn struct_def() -> StructDef;
    /// Declares the structs its fields hold.
    fn declare_field_structs(table: &mut SignatureTable);
}

/// Declares `T` in `table`, then the structs its fields hold. A struct
/// already declared as `T` declares it is left as is, so a struct that
/// holds itself (or one declared twice) ends the walk.
pub fn declare_struct<T: StructType>(table: &mut SignatureTable) {
    let def = T::struct_def();
    if table.structs.is_declared(T::NAME) && table.structs.get(T::NAME) == Some(&def) {
        return;
    }
    tracing::debug!(name = T::NAME, "declaring a Rust struct");
    table.declare_struct(T::NAME, def);
    T::declare_field_structs(table);
}

impl Hub {
    /// Declares the struct `T` (and the structs its fields hold) from its
    /// Rust type: `hub.declare_struct::<Item>()`.
    pub fn declare_struct<T: StructType>(&self) {
        self.edit_table(declare_struct::<T>);
    }
}

/// The type of struct `T`: `Type::Struct(NAME)`.
#[doc(hidden)]
pub fn struct_type<T: StructType>() -> Type {
    Type::Struct(shared_name(T::NAME))
}

/// A struct definition with no parent.
#[doc(hidden)]
pub fn struct_def(doc: &str, fields: Vec<Param>) -> StructDef {
    StructDef {
        parent: None,
        doc: doc.to_owned(),
        fields,
    }
}

/// A struct value from its name and fields (what a derived struct
/// converts into).
#[doc(hidden)]
pub fn struct_value(name: &'static str, fields: Vec<(&'static str, Value)>) -> Value {
    Value::structure(StructValue {
        name: shared_name(name),
        fields: fields
            .into_iter()
            .map(|(field, value)| (shared_name(field), value))
            .collect(),
    })
}

/// A struct value's fields.
#[doc(hidden)]
pub fn struct_fields(value: &Value) -> Option<&[(Rc<str>, Value)]> {
    value.as_struct().map(|s| s.fields.as_slice())
}

/// Field `name`, expected at `position` (a struct of the derived type
/// holds it there) and else looked up by name (a child struct, a
/// script's table); a missing field reads as nil.
#[doc(hidden)]
pub fn field<T: FromValue>(fields: &[(Rc<str>, Value)], position: usize, name: &str) -> Option<T> {
    let found = match fields.get(position) {
        Some((field, value)) if &**field == name => Some(value),
        _ => fields
            .iter()
            .find(|(field, _)| &**field == name)
            .map(|(_, v)| v),
    };
    T::from_value(found.unwrap_or(&Value::Nil))
}

/// Argument `position` of a message as `T` (what a derived message reads
/// its fields with).
#[doc(hidden)]
pub fn arg<T: FromValue + 'static>(args: &[Value], position: usize) -> Result<T, ListenerError> {
    convert::<T>(args, position)
}

/// The type of the field `field` reads (for [`table_row!`](crate::table_row),
/// which names fields, not their types).
#[doc(hidden)]
pub fn type_of_field<R, F: FieldType>(_field: fn(&R) -> &F) -> Type {
    F::ty()
}

/// Declares the structs of the field `field` reads (for
/// [`table_row!`](crate::table_row)).
#[doc(hidden)]
pub fn declare_field<R, F: FieldType>(_field: fn(&R) -> &F, table: &mut SignatureTable) {
    F::declare_structs(table);
}
