//! The type probe: a struct's field types, read from its default value.

use std::fmt;
use std::rc::Rc;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, Visitor};
use thiserror::Error;

use crate::types::Type;

use super::*;

/// Ends a [`TypeProbe`] run: `Found` carries the type the `Deserialize` impl
/// asked for first, which is all the probe wants to know.
#[derive(Debug, Error)]
pub(super) enum Probed {
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
pub(super) struct TypeProbe;

pub(super) fn found<T>(ty: Type) -> Result<T, Probed> {
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
pub(super) struct ProbeElements;

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
