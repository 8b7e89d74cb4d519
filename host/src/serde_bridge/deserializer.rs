//! The deserializer: any `Deserialize` type read out of a [`Value`].

use std::rc::Rc;

use serde::Deserializer;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Visitor};

use crate::value::{StructValue, Value};

use super::*;

pub(super) struct ValueDeserializer<'de>(pub(super) &'de Value);

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
pub(super) struct Items<I> {
    items: I,
    next: usize,
}

pub(super) fn items(values: &[Value]) -> Items<std::slice::Iter<'_, Value>> {
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
pub(super) struct Fields<'de> {
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
pub(super) struct Variant<'de> {
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
