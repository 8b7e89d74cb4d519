//! Parameter types, struct definitions and the compatibility rule.
//!
//! The rule: a listener may drop trailing parameters; the prefix it keeps
//! must match position by position.
//! `any` matches anything, an int is accepted where a float is expected (and
//! converted), a child struct is accepted where its parent is expected, and
//! nothing else converts.

use std::fmt;
use std::rc::Rc;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

/// The type of one parameter, as the signature table records it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    Any,
    Nil,
    Bool,
    Int,
    Float,
    String,
    Object,
    /// A named struct (see [`StructRegistry`]).
    Struct(Rc<str>),
    Array(Box<Type>),
}

impl Type {
    /// Is this an array of structs? A stored message whose one parameter has
    /// this type is a collection.
    pub fn struct_array_element(&self) -> Option<&str> {
        match self {
            Type::Array(inner) => match &**inner {
                Type::Struct(name) => Some(name),
                _ => None,
            },
            _ => None,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Any => f.write_str("any"),
            Type::Nil => f.write_str("nil"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Float => f.write_str("float"),
            Type::String => f.write_str("string"),
            Type::Object => f.write_str("object"),
            // A plain record's type, in a message only: no struct yet.
            Type::Struct(name) if name.is_empty() => f.write_str("table"),
            Type::Struct(name) => f.write_str(name),
            Type::Array(inner) => write!(f, "array<{inner}>"),
        }
    }
}

/// Why a type name in a table file or a declaration did not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid type `{text}`: {reason}")]
pub struct TypeParseError {
    pub text: String,
    pub reason: &'static str,
}

/// How deeply `array<…>` may nest in type text (a table file is user
/// input): serde_json's own nesting limit for the file around it, far
/// deeper than any value a script can send, and shallow enough that the
/// recursive walks over a type (display, checks, drop) cannot exhaust the
/// stack.
pub const MAX_TYPE_DEPTH: usize = 128;

impl FromStr for Type {
    type Err = TypeParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        // `array<` prefixes are peeled in a loop, not by recursion, so that
        // hostile nesting is an error and not a stack overflow.
        let original = text;
        let mut text = text;
        let mut depth = 0;
        while let Some(inner) = text
            .trim()
            .strip_prefix("array<")
            .and_then(|t| t.strip_suffix('>'))
        {
            if depth == MAX_TYPE_DEPTH {
                return Err(TypeParseError {
                    text: original.to_owned(),
                    reason: "arrays nested too deeply (at most 128 levels)",
                });
            }
            depth += 1;
            text = inner;
        }
        let trimmed = text.trim();
        let mut ty = match trimmed {
            "any" => Type::Any,
            "nil" => Type::Nil,
            "bool" => Type::Bool,
            "int" => Type::Int,
            "float" => Type::Float,
            "string" => Type::String,
            "object" => Type::Object,
            _ if is_struct_name(trimmed) => Type::Struct(Rc::from(trimmed)),
            _ => {
                return Err(TypeParseError {
                    text: text.to_owned(),
                    reason: "expected any, nil, bool, int, float, string, object, array<T> or a struct name",
                });
            }
        };
        for _ in 0..depth {
            ty = Type::Array(Box::new(ty));
        }
        Ok(ty)
    }
}

/// A struct name is an identifier that does not start with a digit.
pub fn is_struct_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Serialize for Type {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Type {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One named, typed position: a message parameter or a struct field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Type,
}

impl Param {
    pub fn new(name: impl Into<String>, ty: Type) -> Self {
        Self {
            name: name.into(),
            ty,
        }
    }
}

/// A struct known to the table: its own fields (in declaration order) and an
/// optional parent whose fields come first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StructDef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub doc: String,
    #[serde(default)]
    pub fields: Vec<Param>,
}

pub mod plain;
mod registry;
mod shape;

pub use registry::StructRegistry;
pub use shape::RowShape;

/// One position where two signatures disagree. `position` is 0-based;
/// messages count from 1, as the editor's diagnostics and the trace do.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("argument {}: expected {expected}, got {got}", .position + 1)]
pub struct Mismatch {
    pub position: usize,
    pub expected: String,
    pub got: String,
}

#[cfg(test)]
mod tests;
