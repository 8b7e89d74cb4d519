//! Rust structs cross over through serde (DESIGN.md, "Values").
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

use std::fmt;
use std::rc::Rc;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};
use serde::ser::{self, Serialize};
use serde::{Deserialize, Deserializer, Serializer};
use thiserror::Error;

use crate::types::{Param, StructDef, Type};
use crate::value::{FromValue, IntoValue, ObjectId, StructValue, Value};

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

// ---------------------------------------------------------------- serializer

struct ValueSerializer;

fn int_from<T: TryInto<i64> + fmt::Display + Copy>(v: T) -> Result<Value, ValueSerdeError> {
    v.try_into()
        .map(Value::Int)
        .map_err(|_| ValueSerdeError::new(format!("integer {v} does not fit in an int (i64)")))
}

/// One `serialize_*` method per scalar, each a conversion function.
macro_rules! ser_scalars {
    ($($method:ident($ty:ty) => $convert:expr;)*) => {$(
        fn $method(self, v: $ty) -> Result<Value, ValueSerdeError> {
            ($convert)(v)
        }
    )*};
}

impl Serializer for ValueSerializer {
    type Ok = Value;
    type Error = ValueSerdeError;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = StructBuilder;
    type SerializeMap = StructBuilder;
    type SerializeStruct = StructBuilder;
    type SerializeStructVariant = StructBuilder;

    ser_scalars! {
        serialize_bool(bool) => |v| Ok(Value::Bool(v));
        serialize_i8(i8) => int_from;
        serialize_i16(i16) => int_from;
        serialize_i32(i32) => int_from;
        serialize_i64(i64) => int_from;
        serialize_i128(i128) => int_from;
        serialize_u8(u8) => int_from;
        serialize_u16(u16) => int_from;
        serialize_u32(u32) => int_from;
        serialize_u64(u64) => int_from;
        serialize_u128(u128) => int_from;
        serialize_f32(f32) => |v: f32| Ok(Value::Float(v.into()));
        serialize_f64(f64) => |v| Ok(Value::Float(v));
        serialize_char(char) => |v: char| Ok(Value::str(v.encode_utf8(&mut [0; 4])));
        serialize_str(&str) => |v| Ok(Value::str(v));
        serialize_bytes(&[u8]) => |v: &[u8]| Ok(Value::array(v.iter().map(|b| Value::Int((*b).into())).collect()));
    }
    fn serialize_none(self) -> Result<Value, Self::Error> {
        Ok(Value::Nil)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, Self::Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Self::Error> {
        Ok(Value::Nil)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, Self::Error> {
        Ok(Value::Nil)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, Self::Error> {
        Ok(Value::str(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Value, Self::Error> {
        let inner = value.serialize(self)?;
        if name != OBJECT_ID_SERDE_NAME {
            return Ok(inner);
        }
        inner
            .as_int()
            .and_then(|raw| ObjectId::from_raw(u64::try_from(raw).ok()?))
            .map(Value::Object)
            .ok_or_else(|| ValueSerdeError::new(format!("{inner} is not an object id")))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, Self::Error> {
        let inner = value
            .serialize(self)
            .map_err(|e| e.at(Segment::Field("0".into())))?;
        Ok(Value::structure(StructValue::new(variant).with("0", inner)))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, Self::Error> {
        Ok(SeqBuilder(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, Self::Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, Self::Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<StructBuilder, Self::Error> {
        Ok(StructBuilder::new(variant, len))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<StructBuilder, Self::Error> {
        Ok(StructBuilder::new("", len.unwrap_or(0)))
    }
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<StructBuilder, Self::Error> {
        Ok(StructBuilder::new(name, len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<StructBuilder, Self::Error> {
        Ok(StructBuilder::new(variant, len))
    }
}

struct SeqBuilder(Vec<Value>);

impl SeqBuilder {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ValueSerdeError> {
        let index = self.0.len();
        self.0
            .push(to_value(value).map_err(|e| e.at(Segment::Index(index)))?);
        Ok(())
    }
}

macro_rules! seq_impl {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for SeqBuilder {
            type Ok = Value;
            type Error = ValueSerdeError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Self::Error> {
                self.push(value)
            }
            fn end(self) -> Result<Value, Self::Error> {
                Ok(Value::array(self.0))
            }
        }
    };
}
seq_impl!(SerializeSeq, serialize_element);
seq_impl!(SerializeTuple, serialize_element);
seq_impl!(SerializeTupleStruct, serialize_field);

/// Builds structs, struct and tuple variants, and maps (which need the
/// pending key between `serialize_key` and `serialize_value`).
struct StructBuilder {
    value: StructValue,
    pending_key: Option<Rc<str>>,
}

thread_local! {
    /// One `Rc<str>` per `&'static str` a `Serialize` impl names (struct
    /// and field names: a finite set, fixed by the program).
    static STATIC_NAMES: std::cell::RefCell<rustc_hash::FxHashMap<(usize, usize), Rc<str>>> =
        Default::default();
}

/// The shared string for a name serde hands out as `&'static str`. Every
/// row of a table then carries the same name strings, which is what lets a
/// row reader confirm a row's layout by pointer instead of by text (and
/// saves an allocation per field).
fn static_name(text: &'static str) -> Rc<str> {
    STATIC_NAMES
        .try_with(|names| {
            names
                .borrow_mut()
                .entry((text.as_ptr() as usize, text.len()))
                .or_insert_with(|| crate::value::shared_name(text))
                .clone()
        })
        .unwrap_or_else(|_| Rc::from(text))
}

impl StructBuilder {
    fn new(name: &'static str, len: usize) -> Self {
        let mut value = StructValue::new(static_name(name));
        value.fields.reserve(len);
        Self {
            value,
            pending_key: None,
        }
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: Rc<str>, v: &T) -> Result<(), ValueSerdeError> {
        let v = to_value(v).map_err(|e| e.at(Segment::Field(key.to_string())))?;
        self.value.fields.push((key, v));
        Ok(())
    }

    fn finish(self) -> Result<Value, ValueSerdeError> {
        Ok(Value::structure(self.value))
    }
}

macro_rules! struct_impl {
    ($($trait:ident)*) => {$(
        impl ser::$trait for StructBuilder {
            type Ok = Value;
            type Error = ValueSerdeError;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Self::Error> {
                self.field(static_name(key), value)
            }
            fn end(self) -> Result<Value, Self::Error> {
                self.finish()
            }
        }
    )*};
}
struct_impl!(SerializeStruct SerializeStructVariant);

impl ser::SerializeTupleVariant for StructBuilder {
    type Ok = Value;
    type Error = ValueSerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Self::Error> {
        let key = Rc::from(self.value.fields.len().to_string());
        self.field(key, value)
    }
    fn end(self) -> Result<Value, Self::Error> {
        self.finish()
    }
}

impl ser::SerializeMap for StructBuilder {
    type Ok = Value;
    type Error = ValueSerdeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Self::Error> {
        match key.serialize(ValueSerializer)? {
            Value::Str(text) => {
                self.pending_key = Some(text);
                Ok(())
            }
            other => Err(ValueSerdeError::new(format!(
                "map keys must be strings, got {}",
                kind(&other)
            ))),
        }
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Self::Error> {
        let key = self
            .pending_key
            .take()
            .ok_or_else(|| ValueSerdeError::new("map value without a key"))?;
        self.field(key, value)
    }
    fn end(self) -> Result<Value, Self::Error> {
        self.finish()
    }
}

// -------------------------------------------------------------- deserializer

struct ValueDeserializer<'de>(&'de Value);

impl<'de> ValueDeserializer<'de> {
    fn int<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueSerdeError> {
        match self.0 {
            Value::Int(i) => visitor.visit_i64(*i),
            other => Err(ValueSerdeError::mismatch("int", other)),
        }
    }
}

macro_rules! int_methods {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.int(visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for ValueDeserializer<'de> {
    type Error = ValueSerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Nil => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(i) => visitor.visit_i64(*i),
            Value::Float(f) => visitor.visit_f64(*f),
            Value::Str(s) => visitor.visit_borrowed_str(s),
            Value::Object(id) => visitor.visit_u64(id.get()),
            Value::Struct(s) => visitor.visit_map(Fields {
                fields: &s.fields,
                next: 0,
            }),
            Value::Array(values) => visitor.visit_seq(items(values)),
        }
    }

    int_methods!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128);

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(*b),
            other => Err(ValueSerdeError::mismatch("bool", other)),
        }
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_f64(visitor)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0.as_float() {
            Some(f) => visitor.visit_f64(f),
            None => Err(ValueSerdeError::mismatch("float", self.0)),
        }
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Str(s) => visitor.visit_borrowed_str(s),
            other => Err(ValueSerdeError::mismatch("string", other)),
        }
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_any(visitor)
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_any(visitor)
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Nil => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Nil => visitor.visit_unit(),
            other => Err(ValueSerdeError::mismatch("nil", other)),
        }
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_unit(visitor)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match (name, self.0) {
            (OBJECT_ID_SERDE_NAME, Value::Object(id)) => visitor.visit_u64(id.get()),
            (OBJECT_ID_SERDE_NAME, other) => Err(ValueSerdeError::mismatch("object", other)),
            _ => visitor.visit_newtype_struct(self),
        }
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(values) => visitor.visit_seq(items(values)),
            other => Err(ValueSerdeError::mismatch("array", other)),
        }
    }
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Struct(s) => visitor.visit_map(Fields {
                fields: &s.fields,
                next: 0,
            }),
            other => Err(ValueSerdeError::mismatch("struct", other)),
        }
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Struct(s) => visitor.visit_map(Fields {
                fields: &s.fields,
                next: 0,
            }),
            other => Err(ValueSerdeError::mismatch(&format!("struct {name}"), other)),
        }
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Str(variant) => visitor.visit_enum(Variant {
                name: variant,
                data: None,
            }),
            Value::Struct(s) => visitor.visit_enum(Variant {
                name: &s.name,
                data: Some(s),
            }),
            other => Err(ValueSerdeError::mismatch(
                &format!("a variant of {name}"),
                other,
            )),
        }
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }
}

/// Array elements (or a tuple variant's fields); an element's error gains
/// its index.
struct Items<I> {
    items: I,
    next: usize,
}

fn items(values: &[Value]) -> Items<std::slice::Iter<'_, Value>> {
    Items {
        items: values.iter(),
        next: 0,
    }
}

impl<'de, I: ExactSizeIterator<Item = &'de Value>> de::SeqAccess<'de> for Items<I> {
    type Error = ValueSerdeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let index = self.next;
        self.next += 1;
        seed.deserialize(ValueDeserializer(item))
            .map(Some)
            .map_err(|e| e.at(Segment::Index(index)))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// Struct fields as a map; a value's error gains its field name.
struct Fields<'de> {
    fields: &'de [(Rc<str>, Value)],
    next: usize,
}

impl<'de> de::MapAccess<'de> for Fields<'de> {
    type Error = ValueSerdeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((name, _)) = self.fields.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(BorrowedStrDeserializer::new(name))
            .map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let (name, value) = self
            .fields
            .get(self.next)
            .ok_or_else(|| ValueSerdeError::new("struct value without a field"))?;
        self.next += 1;
        seed.deserialize(ValueDeserializer(value))
            .map_err(|e| e.at(Segment::Field(name.to_string())))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len() - self.next)
    }
}

/// An enum variant: a string (unit variant) or a struct named after the
/// variant carrying its data.
struct Variant<'de> {
    name: &'de str,
    data: Option<&'de StructValue>,
}

impl<'de> Variant<'de> {
    fn data_or_error(&self) -> Result<&'de StructValue, ValueSerdeError> {
        self.data.ok_or_else(|| {
            ValueSerdeError::new(format!(
                "variant {} needs its data, got a string",
                self.name
            ))
        })
    }
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = ValueSerdeError;
    type Variant = Self;
    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self), Self::Error> {
        let name = BorrowedStrDeserializer::<'de, ValueSerdeError>::new(self.name);
        Ok((seed.deserialize(name)?, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'de> {
    type Error = ValueSerdeError;
    fn unit_variant(self) -> Result<(), Self::Error> {
        match self.data {
            Some(s) if !s.fields.is_empty() => Err(ValueSerdeError::new(format!(
                "variant {} carries no data, got struct {}",
                self.name, s.name
            ))),
            _ => Ok(()),
        }
    }
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        let inner = self.data.and_then(|s| s.get("0")).ok_or_else(|| {
            ValueSerdeError::new(format!(
                "variant {} needs a struct with field `0`",
                self.name
            ))
        })?;
        seed.deserialize(ValueDeserializer(inner))
            .map_err(|e| e.at(Segment::Field("0".into())))
    }
    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let data = self.data_or_error()?;
        visitor.visit_seq(Items {
            items: data.fields.iter().map(|(_, v)| v),
            next: 0,
        })
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let data = self.data_or_error()?;
        visitor.visit_map(Fields {
            fields: &data.fields,
            next: 0,
        })
    }
}

// ---------------------------------------------------------------- type probe

/// Ends a [`TypeProbe`] run: `Found` carries the type the `Deserialize` impl
/// asked for first, which is all the probe wants to know.
#[derive(Debug, Error)]
enum Probed {
    #[error("probed type {0}")]
    Found(Type),
    #[error("{0}")]
    Other(String),
}

impl de::Error for Probed {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Probed::Other(msg.to_string())
    }
}

/// A deserializer that never produces data: it reports the first shape a
/// `Deserialize` impl requests (serde's derives ask for `struct Hurt` by name)
/// as a table [`Type`], without needing a value or `Default`.
struct TypeProbe;

fn found<T>(ty: Type) -> Result<T, Probed> {
    Err(Probed::Found(ty))
}

macro_rules! probe_as {
    ($ty:expr => $($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Probed> {
            found($ty)
        }
    )*};
}

impl<'de> Deserializer<'de> for TypeProbe {
    type Error = Probed;

    probe_as!(Type::Any => deserialize_any deserialize_bytes deserialize_byte_buf
        deserialize_map deserialize_ignored_any);
    probe_as!(Type::Bool => deserialize_bool);
    probe_as!(Type::Int => deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128);
    probe_as!(Type::Float => deserialize_f32 deserialize_f64);
    probe_as!(Type::String => deserialize_char deserialize_str deserialize_string
        deserialize_identifier);
    probe_as!(Type::Nil => deserialize_unit);

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Probed> {
        visitor.visit_some(self)
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Probed> {
        found(Type::Nil)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Probed> {
        if name == OBJECT_ID_SERDE_NAME {
            return found(Type::Object);
        }
        visitor.visit_newtype_struct(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Probed> {
        visitor.visit_seq(ProbeElements)
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Probed> {
        found(Type::Any)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Probed> {
        found(Type::Any)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probed> {
        found(Type::Struct(Rc::from(name)))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probed> {
        found(Type::Any)
    }
}

/// The elements of a probed sequence: the first one's type makes `array<T>`.
struct ProbeElements;

impl<'de> de::SeqAccess<'de> for ProbeElements {
    type Error = Probed;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Probed> {
        match seed.deserialize(TypeProbe) {
            Err(Probed::Found(inner)) => found(Type::Array(Box::new(inner))),
            Err(other) => Err(other),
            Ok(_) => found(Type::Array(Box::new(Type::Any))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

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
}
