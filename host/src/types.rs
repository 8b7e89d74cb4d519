//! Parameter types, struct definitions and the compatibility rule.
//!
//! The rule (reference `000_…`, extended by DESIGN.md): a listener may drop
//! trailing parameters; the prefix it keeps must match position by position.
//! `any` matches anything, an int is accepted where a float is expected (and
//! converted), a child struct is accepted where its parent is expected, and
//! nothing else converts.

use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

use crate::value::Value;

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

/// The structs of a table, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StructRegistry {
    pub defs: BTreeMap<String, StructDef>,
}

impl StructRegistry {
    pub fn get(&self, name: &str) -> Option<&StructDef> {
        self.defs.get(name)
    }

    /// Is `child` the struct `parent` or derived from it? Bounded by the number
    /// of structs so that a cyclic table file cannot loop forever.
    pub fn is_a(&self, child: &str, parent: &str) -> bool {
        let mut current = child;
        for _ in 0..=self.defs.len() {
            if current == parent {
                return true;
            }
            match self.defs.get(current).and_then(|d| d.parent.as_deref()) {
                Some(next) => current = next,
                None => return false,
            }
        }
        false
    }

    /// Every field of `name`, inherited ones first.
    pub fn all_fields(&self, name: &str) -> Vec<Param> {
        let mut chain = Vec::new();
        let mut current = Some(name);
        while let Some(n) = current {
            if chain.len() > self.defs.len() || chain.contains(&n) {
                break;
            }
            chain.push(n);
            current = self.defs.get(n).and_then(|d| d.parent.as_deref());
        }
        chain
            .iter()
            .rev()
            .filter_map(|n| self.defs.get(*n))
            .flat_map(|d| d.fields.iter().cloned())
            .collect()
    }

    /// Does a value carry `expected`? Checks arrays element by element and
    /// never allocates.
    pub fn value_matches(&self, value: &Value, expected: &Type) -> bool {
        match (expected, value) {
            (Type::Any, _) => true,
            (Type::Nil, Value::Nil) => true,
            (Type::Bool, Value::Bool(_)) => true,
            (Type::Int, Value::Int(_)) => true,
            (Type::Float, Value::Float(_) | Value::Int(_)) => true,
            (Type::String, Value::Str(_)) => true,
            (Type::Object, Value::Object(_)) => true,
            (Type::Struct(name), Value::Struct(s)) => self.is_a(&s.name, name),
            (Type::Array(inner), Value::Array(items)) => {
                items.iter().all(|item| self.value_matches(item, inner))
            }
            _ => false,
        }
    }

    /// Does a parameter declared as `expected` accept what the message records
    /// as `got`?
    pub fn accepts(&self, expected: &Type, got: &Type) -> bool {
        match (expected, got) {
            (Type::Any, _) | (_, Type::Any) => true,
            (Type::Float, Type::Int) => true,
            (Type::Struct(parent), Type::Struct(child)) => self.is_a(child, parent),
            (Type::Array(e), Type::Array(g)) => self.accepts(e, g),
            _ => expected == got,
        }
    }

    /// The compatibility rule of reference `000_…`: `listener` must be a
    /// prefix of `message`, position by position.
    pub fn check_prefix(&self, listener: &[Type], message: &[Type]) -> Result<(), Mismatch> {
        for (position, expected) in listener.iter().enumerate() {
            match message.get(position) {
                None => {
                    return Err(Mismatch {
                        position,
                        expected: expected.to_string(),
                        got: "nothing (the message has fewer parameters)".to_owned(),
                    });
                }
                Some(got) if !self.accepts(expected, got) => {
                    return Err(Mismatch {
                        position,
                        expected: expected.to_string(),
                        got: got.to_string(),
                    });
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// One position where two signatures disagree. Positions are 0-based.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("parameter {position}: expected {expected}, got {got}")]
pub struct Mismatch {
    pub position: usize,
    pub expected: String,
    pub got: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> StructRegistry {
        let mut r = StructRegistry::default();
        r.defs.insert(
            "Base".into(),
            StructDef {
                fields: vec![Param::new("id", Type::Int)],
                ..Default::default()
            },
        );
        r.defs.insert(
            "Child".into(),
            StructDef {
                parent: Some("Base".into()),
                fields: vec![Param::new("name", Type::String)],
                ..Default::default()
            },
        );
        r
    }

    #[test]
    fn types_round_trip_through_text() {
        for text in [
            "any",
            "int",
            "float",
            "array<Item>",
            "array<array<int>>",
            "Item",
        ] {
            assert_eq!(text.parse::<Type>().unwrap().to_string(), text);
        }
        assert!("array<".parse::<Type>().is_err());
        assert!("9lives".parse::<Type>().is_err());
    }

    #[test]
    fn child_struct_matches_parent_and_inherits_fields() {
        let r = registry();
        assert!(r.accepts(&Type::Struct("Base".into()), &Type::Struct("Child".into())));
        assert!(!r.accepts(&Type::Struct("Child".into()), &Type::Struct("Base".into())));
        let names: Vec<_> = r.all_fields("Child").into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["id", "name"]);
    }

    #[test]
    fn int_accepted_for_float_nothing_else_converts() {
        let r = registry();
        assert!(r.accepts(&Type::Float, &Type::Int));
        assert!(!r.accepts(&Type::Int, &Type::Float));
        assert!(!r.accepts(&Type::String, &Type::Int));
        assert!(r.accepts(&Type::Any, &Type::String));
        assert!(r.value_matches(&Value::Int(1), &Type::Float));
        assert!(!r.value_matches(&Value::Float(1.0), &Type::Int));
    }

    #[test]
    fn cyclic_parents_do_not_hang() {
        let mut r = StructRegistry::default();
        r.defs.insert(
            "A".into(),
            StructDef {
                parent: Some("B".into()),
                ..Default::default()
            },
        );
        r.defs.insert(
            "B".into(),
            StructDef {
                parent: Some("A".into()),
                ..Default::default()
            },
        );
        assert!(!r.is_a("A", "C"));
        let _ = r.all_fields("A");
    }
}
