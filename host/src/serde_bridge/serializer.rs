//! The serializer: any `Serialize` value into a [`Value`].

use std::fmt;
use std::rc::Rc;

use serde::Serializer;
use serde::ser::{self, Serialize};

use crate::value::{ObjectId, StructValue, Value};

use super::*;

pub(super) struct ValueSerializer;

pub(super) fn int_from<T: TryInto<i64> + fmt::Display + Copy>(
    v: T,
) -> Result<Value, ValueSerdeError> {
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

pub(super) struct SeqBuilder(Vec<Value>);

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
pub(super) struct StructBuilder {
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
pub(super) fn static_name(text: &'static str) -> Rc<str> {
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
