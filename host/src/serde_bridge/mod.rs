//! Rust structs cross over through serde.
//!
//! [`to_value`] is a real `serde::Serializer` producing a [`Value`];
//! [`from_value`] is a real `serde::Deserializer` reading one. The mapping:
//!
//! | Rust (serde data model)            | `Value`                                   |
//! |------------------------------------|-------------------------------------------|
//! | bool / integers / floats           | `Bool` / `Int` (i64) / `Float`            |
//! | `u64` above `i64::MAX`             | an error naming the value and field       |
//! | `str`, `String`, `char`            | `Str`                                     |
//! | `()`, unit struct, `None`          | `Nil`                                     |
//! | `Some(x)`, newtype struct          | `x` itself                                |
//! | `Vec`, slices, tuples, tuple struct| `Array`                                   |
//! | struct `Hurt { .. }`               | `Struct` named `Hurt`, fields in order    |
//! | unit variant `Kind::Fire`          | `Str("Fire")`                             |
//! | variant with data `Shape::Circle`  | `Struct` named `Circle` (tuple and newtype|
//! |                                    | variants name their fields `0`, `1`, ...) |
//! | map with string keys               | `Struct` named `""` (an anonymous record) |
//! | [`ObjectId`]                       | `Object`                                  |
//!
//! Fields serde skips (`#[serde(skip)]`, a true `skip_serializing_if`) take
//! no position: collection row listeners expand fields positionally, so a
//! skipped field must not leave a hole. Reading back, fields match by name and
//! the struct name is not checked, so a child struct (or a script table with
//! any name) fills a parent's Rust type; unknown fields are ignored, missing
//! `Option` fields are `None`, and an int is accepted for a float (the
//! compatibility rule) — nothing else converts.

mod deserializer;
mod probe;
mod serializer;

use deserializer::ValueDeserializer;
use probe::{Probed, TypeProbe};
use serializer::ValueSerializer;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::de::{self, DeserializeOwned, Visitor};
use serde::ser::{self, Serialize};
use serde::{Deserialize, Deserializer, Serializer};
use thiserror::Error;

use crate::types::{Param, StructDef, Type};
use crate::value::{FromValue, IntoValue, ObjectId, Value};

/// The newtype-struct name under which [`ObjectId`] travels through serde.
/// The `$` keeps it clear of every Rust type name, so the bridge can recognise
/// it and produce a real `Value::Object` instead of a number.
pub const OBJECT_ID_SERDE_NAME: &str = "$gantry::ObjectId";

/// One step of the path to the field a conversion failed at.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Field(String),
    Index(usize),
}

/// Why a conversion between a Rust type and a [`Value`] failed, naming the
/// field path (`items[2].count`) so the user can find the offending value.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}{message}", prefix(.path))]
pub struct ValueSerdeError {
    /// Outermost segment first.
    path: Vec<Segment>,
    message: String,
}

/// Renders a path as `items[2].count`.
struct Path<'a>(&'a [Segment]);

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Field(name) if i == 0 => f.write_str(name)?,
                Segment::Field(name) => write!(f, ".{name}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// The ``field `path`: `` prefix of a message; nothing at the top level.
fn prefix(path: &[Segment]) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("field `{}`: ", Path(path))
    }
}

impl ValueSerdeError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            path: Vec::new(),
            message: message.into(),
        }
    }

    fn mismatch(expected: &str, got: &Value) -> Self {
        Self::new(format!("expected {expected}, got {}", kind(got)))
    }

    fn at(mut self, segment: Segment) -> Self {
        self.path.insert(0, segment);
        self
    }

    /// The field path, e.g. `items[2].count`; empty at the top level.
    pub fn path(&self) -> String {
        Path(&self.path).to_string()
    }

    /// The message without the path.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl ser::Error for ValueSerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }
}

impl de::Error for ValueSerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }
}

/// A value's kind for messages: `struct Item` rather than a bare `Item`, so
/// "expected int, got struct Item" reads as a kind.
fn kind(value: &Value) -> String {
    match value {
        Value::Struct(s) if s.name.is_empty() => "struct".to_owned(),
        Value::Struct(s) => format!("struct {}", s.name),
        Value::Array(_) => "array".to_owned(),
        other => other.kind_name(),
    }
}

impl Serialize for ObjectId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(OBJECT_ID_SERDE_NAME, &self.get())
    }
}

impl<'de> Deserialize<'de> for ObjectId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl<'de> Visitor<'de> for IdVisitor {
            type Value = ObjectId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object id")
            }
            fn visit_u64<E: de::Error>(self, raw: u64) -> Result<ObjectId, E> {
                ObjectId::from_raw(raw).ok_or_else(|| E::custom("object id 0 is not an object"))
            }
            fn visit_i64<E: de::Error>(self, raw: i64) -> Result<ObjectId, E> {
                let raw = u64::try_from(raw)
                    .map_err(|_| E::custom(format!("object id {raw} is negative")))?;
                self.visit_u64(raw)
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<ObjectId, D::Error> {
                self.visit_u64(u64::deserialize(d)?)
            }
        }
        deserializer.deserialize_newtype_struct(OBJECT_ID_SERDE_NAME, IdVisitor)
    }
}

/// Converts any `Serialize` value into a [`Value`].
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, ValueSerdeError> {
    value.serialize(ValueSerializer)
}

/// Reads any owned `Deserialize` type out of a [`Value`].
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, ValueSerdeError> {
    T::deserialize(ValueDeserializer(value))
}

/// Carries a serde type where [`IntoValue`]/[`FromValue`] are expected, e.g.
/// as a typed Rust listener parameter `Serde<Hurt>`. (A blanket impl for all
/// `Serialize` types would conflict with the scalar impls.)
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Serde<T>(pub T);

impl<T: Serialize> IntoValue for Serde<T> {
    /// `IntoValue` cannot fail, so an unrepresentable value (a `u64` above
    /// `i64::MAX`, a map with non-string keys) is sent as nil and logged.
    fn into_value(self) -> Value {
        to_value(&self.0).unwrap_or_else(|error| {
            tracing::warn!(%error, rust_type = std::any::type_name::<T>(), "sent as nil");
            Value::Nil
        })
    }
}

impl<T: DeserializeOwned> FromValue for Serde<T> {
    /// Found by asking `T`'s `Deserialize` what it would read first: a struct
    /// declares its name, `Vec<Hurt>` declares `array<Hurt>`, so the
    /// compatibility check sees real types. Shapes with no table type (maps,
    /// enums, tuples) declare `any`.
    fn declared_type() -> Type {
        match T::deserialize(TypeProbe) {
            Err(Probed::Found(ty)) => ty,
            _ => Type::Any,
        }
    }

    fn from_value(value: &Value) -> Option<Self> {
        match from_value(value) {
            Ok(inner) => Some(Serde(inner)),
            Err(error) => {
                tracing::warn!(%error, rust_type = std::any::type_name::<T>(), "value does not convert");
                None
            }
        }
    }
}

/// The struct definition of `T`, derived from `T::default()`, for declaring
/// `T` in the signature table. Field types come from the default values; a
/// `None` field declares `any`, an empty `Vec` declares `array<any>`. `None`
/// when `T` is not a named struct or does not serialize.
///
/// A type that derives [`Struct`](derive@crate::Struct) declares itself
/// from its field types instead ([`Hub::declare_struct`](crate::Hub::declare_struct)),
/// with no `Default` and an `Option` field's inner structs included.
pub fn struct_def_of<T: Serialize + Default>() -> Option<(String, StructDef)> {
    let Ok(Value::Struct(value)) = to_value(&T::default()) else {
        return None;
    };
    if value.name.is_empty() {
        return None;
    }
    let fields = value
        .fields
        .iter()
        .map(|(name, v)| Param::new(&**name, if v.is_nil() { Type::Any } else { v.type_of() }))
        .collect();
    let def = StructDef {
        fields,
        ..StructDef::default()
    };
    Some((value.name.to_string(), def))
}
