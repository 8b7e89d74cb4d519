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
use smallvec::SmallVec;
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

/// The shape of the last struct row checked field by field: its struct
/// and field-name strings (held, so that their addresses stay theirs) and
/// the declared types in order. A row sharing those strings — rows built
/// by one serializer or script do — is checked by position, with no
/// definition lookup and no name compared as text. The hub keeps one
/// between dispatches, for one generation of its table ([`RowShape::at`]).
#[derive(Debug, Default)]
pub struct RowShape {
    /// The table generation (the hub's epoch) the shape was checked in.
    generation: u64,
    element: Option<Rc<str>>,
    name: Option<Rc<str>>,
    fields: SmallVec<[ShapeField; 8]>,
}

/// One field of a [`RowShape`]: its name string, the value kinds its
/// declared type takes outright (a bit per [`Value`] variant: a field's
/// check is one mask test) and the type, for the values that need more
/// than their kind (a nested struct, an array).
#[derive(Debug)]
struct ShapeField {
    name: Rc<str>,
    accepts: u16,
    ty: Type,
}

/// The bit of a value's kind in [`ShapeField::accepts`].
#[inline(always)]
fn kind_bit(value: &Value) -> u16 {
    1 << match value {
        Value::Nil => 0,
        Value::Bool(_) => 1,
        Value::Int(_) => 2,
        Value::Float(_) => 3,
        Value::Str(_) => 4,
        Value::Object(_) => 5,
        Value::Struct(_) => 6,
        Value::Array(_) => 7,
    }
}

/// The value kinds a field declared as `ty` takes whatever they hold (the
/// scalar half of `field_matches`): nil everywhere (the field takes its
/// default), an int for a float.
fn accepted_kinds(ty: &Type) -> u16 {
    let nil = 1;
    match ty {
        Type::Any | Type::Nil => u16::MAX,
        Type::Bool => nil | 1 << 1,
        Type::Int => nil | 1 << 2,
        Type::Float => nil | 1 << 2 | 1 << 3,
        Type::String => nil | 1 << 4,
        Type::Object => nil | 1 << 5,
        Type::Struct(_) | Type::Array(_) => nil,
    }
}

impl RowShape {
    /// The shape, for table generation `generation`: forgotten when it was
    /// checked in another (the struct definitions may have changed).
    pub fn at(&mut self, generation: u64) -> &mut Self {
        if self.generation != generation {
            *self = RowShape {
                generation,
                ..RowShape::default()
            };
        }
        self
    }

    /// `None` when `row`, expected as `element`, is not of this shape;
    /// else whether its fields carry their declared types.
    #[inline]
    fn check(
        &self,
        structs: &StructRegistry,
        row: &crate::value::StructValue,
        element: &Rc<str>,
    ) -> Option<bool> {
        let (Some(name), Some(checked_as)) = (&self.name, &self.element) else {
            return None;
        };
        if !(Rc::ptr_eq(name, &row.name)
            && (Rc::ptr_eq(checked_as, element) || **checked_as == **element)
            && row.fields.len() == self.fields.len())
        {
            return None;
        }
        let mut fits = true;
        for ((field, value), seen) in row.fields.iter().zip(&self.fields) {
            if !Rc::ptr_eq(field, &seen.name) {
                return None;
            }
            fits &= seen.accepts & kind_bit(value) != 0
                || structs.field_matches(Some(value), &seen.ty, 0);
        }
        Some(fits)
    }
}

/// The structs of a table, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StructRegistry {
    #[serde(deserialize_with = "crate::persist::unique_names")]
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
        self.chain_fields(name).into_iter().cloned().collect()
    }

    /// The declared type of field `field` of struct `name` (its own or an
    /// inherited one).
    pub fn field_type(&self, name: &str, field: &str) -> Option<&Type> {
        let mut current = name;
        for _ in 0..=self.defs.len() {
            let def = self.defs.get(current)?;
            if let Some(param) = def.fields.iter().find(|p| p.name == field) {
                return Some(&param.ty);
            }
            current = def.parent.as_deref()?;
        }
        None
    }

    /// Whether a value of type `ty` may hold a float below its top level
    /// (an array element, a struct field, at any depth): the values whose
    /// ints [`StructRegistry::widen_ints`] may have to convert. Asked once
    /// per signature, not per send.
    pub fn holds_nested_float(&self, ty: &Type) -> bool {
        self.nested_float_in(ty, 0)
    }

    fn nested_float_in(&self, ty: &Type, depth: usize) -> bool {
        if depth > self.defs.len() + 1 || depth > MAX_TYPE_DEPTH {
            return false;
        }
        let holds = |ty: &Type| *ty == Type::Float || self.nested_float_in(ty, depth + 1);
        match ty {
            Type::Array(inner) => holds(inner),
            Type::Struct(name) => {
                // The struct's own fields and those of every struct derived
                // from it (a child value may stand where the parent is
                // declared).
                self.defs.iter().any(|(child, def)| {
                    self.is_a(child, name) && def.fields.iter().any(|p| holds(&p.ty))
                })
            }
            _ => false,
        }
    }

    /// The compatibility rule's one conversion, all the way down: an int
    /// where a float is declared — the value itself, an array element, a
    /// struct field — becomes that float. A shared array or struct is
    /// copied only when something in it converts.
    pub fn widen_ints(&self, value: &mut Value, ty: &Type) {
        if self.needs_widening(value, ty) {
            self.widen_in(value, ty, 0);
        }
    }

    /// Whether [`StructRegistry::widen_ints`] would convert anything in
    /// `value`.
    pub fn needs_widening(&self, value: &Value, ty: &Type) -> bool {
        self.has_int_for_float(value, ty, 0)
    }

    fn has_int_for_float(&self, value: &Value, ty: &Type, depth: usize) -> bool {
        if depth > MAX_TYPE_DEPTH {
            return false;
        }
        match (ty, value) {
            (Type::Float, Value::Int(_)) => true,
            (Type::Array(inner), Value::Array(items)) => items
                .iter()
                .any(|item| self.has_int_for_float(item, inner, depth + 1)),
            (Type::Struct(_), Value::Struct(s)) => s.fields.iter().any(|(field, v)| {
                self.field_type(&s.name, field)
                    .is_some_and(|ty| self.has_int_for_float(v, ty, depth + 1))
            }),
            _ => false,
        }
    }

    /// Converts inside a value that [`StructRegistry::has_int_for_float`]
    /// said needs it, copying (if shared) only the arrays and structs on
    /// the way to an int that converts.
    fn widen_in(&self, value: &mut Value, ty: &Type, depth: usize) {
        let wants = |v: &Value, ty: &Type| self.has_int_for_float(v, ty, depth + 1);
        match (ty, value) {
            (Type::Float, value) => {
                if let Value::Int(i) = *value {
                    *value = Value::Float(i as f64);
                }
            }
            (Type::Array(inner), Value::Array(items)) => {
                for item in Rc::make_mut(items).iter_mut() {
                    if wants(item, inner) {
                        self.widen_in(item, inner, depth + 1);
                    }
                }
            }
            (Type::Struct(_), Value::Struct(s)) => {
                let s = Rc::make_mut(s);
                for (field, v) in s.fields.iter_mut() {
                    if let Some(ty) = self.field_type(&s.name, field)
                        && wants(v, ty)
                    {
                        self.widen_in(v, ty, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// Do all of `items` carry `expected`? [`StructRegistry::value_matches`]
    /// for each, but a run of structs whose field names are the same
    /// strings as a checked row's (rows built by one serializer or script
    /// share them) is checked by position against that row's declared
    /// types: no definition lookup and no name compare per row.
    pub fn values_match(&self, items: &[Value], expected: &Type) -> bool {
        self.values_match_with(items, expected, &mut RowShape::default())
    }

    /// [`StructRegistry::values_match`] with a [`RowShape`] kept by the
    /// caller between calls (the hub keeps one per table epoch): a writer
    /// publishing one edited row is checked by position from the second
    /// publish on.
    pub fn values_match_with(
        &self,
        items: &[Value],
        expected: &Type,
        shape: &mut RowShape,
    ) -> bool {
        let Type::Struct(element) = expected else {
            return items.iter().all(|item| self.value_matches(item, expected));
        };
        for item in items {
            let Value::Struct(s) = item else {
                return false;
            };
            match shape.check(self, s, element) {
                Some(true) => continue,
                Some(false) => return false,
                None => {}
            }
            if !self.is_a(&s.name, element) || !self.fields_match(s, 0) {
                return false;
            }
            self.note_shape(s, element, shape);
        }
        true
    }

    /// Remembers `row`'s shape (checked by name already) when it has
    /// exactly the declared fields in declared order.
    fn note_shape(&self, row: &crate::value::StructValue, element: &Rc<str>, shape: &mut RowShape) {
        let declared = self.chain_fields(&row.name);
        let in_order = declared.len() == row.fields.len()
            && declared
                .iter()
                .zip(&row.fields)
                .all(|(param, (field, _))| param.name == **field);
        if !in_order {
            return;
        }
        shape.element = Some(element.clone());
        shape.name = Some(row.name.clone());
        shape.fields = row
            .fields
            .iter()
            .zip(declared)
            .map(|((field, _), param)| ShapeField {
                name: field.clone(),
                accepts: accepted_kinds(&param.ty),
                ty: param.ty.clone(),
            })
            .collect();
    }

    /// The fields of struct `name`, inherited ones first (borrowed; a
    /// cyclic table's loop is followed once).
    fn chain_fields(&self, name: &str) -> SmallVec<[&Param; 8]> {
        let mut chain: SmallVec<[&StructDef; 4]> = SmallVec::new();
        let mut current = Some(name);
        while let Some(n) = current
            && let Some(def) = self.defs.get(n)
            && !chain.iter().any(|seen| std::ptr::eq(*seen, def))
        {
            chain.push(def);
            current = def.parent.as_deref();
        }
        chain.iter().rev().flat_map(|d| d.fields.iter()).collect()
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
            (Type::Struct(name), Value::Struct(s)) => {
                self.is_a(&s.name, name) && self.fields_match(s, 0)
            }
            (Type::Array(inner), Value::Array(items)) => self.values_match(items, inner),
            _ => false,
        }
    }

    /// Does a field's value carry its declared type? Left out, nil, and a
    /// type observed as nil (nothing known yet) or `any` always do.
    #[inline(always)]
    fn field_matches(&self, field: Option<&Value>, ty: &Type, depth: usize) -> bool {
        match (field, ty) {
            // The scalars, in line: a row's check is mostly these.
            (Some(Value::Int(_)), Type::Int | Type::Float)
            | (Some(Value::Float(_)), Type::Float)
            | (Some(Value::Str(_)), Type::String)
            | (Some(Value::Bool(_)), Type::Bool)
            | (Some(Value::Object(_)), Type::Object)
            | (None | Some(Value::Nil), _)
            | (_, Type::Nil | Type::Any) => true,
            (Some(Value::Struct(inner)), Type::Struct(name)) => {
                self.is_a(&inner.name, name) && self.fields_match(inner, depth + 1)
            }
            (Some(v), ty) => self.value_matches(v, ty),
        }
    }

    /// Does each field of a struct value carry its declared type (own and
    /// inherited fields, at any depth)? A field the value leaves out or
    /// sets to nil takes its default elsewhere; a field the definition does
    /// not name, or names with an observed `nil` type (nothing known yet),
    /// is not checked; a struct the table does not define has nothing to
    /// check against.
    fn fields_match(&self, value: &crate::value::StructValue, depth: usize) -> bool {
        if depth > MAX_TYPE_DEPTH {
            return true;
        }
        let mut current = value.name.as_ref();
        for _ in 0..=self.defs.len() {
            let Some(def) = self.defs.get(current) else {
                return true;
            };
            for (position, param) in def.fields.iter().enumerate() {
                // Where the definition puts it first (rows usually follow
                // it), then anywhere.
                let field = match value.fields.get(position) {
                    Some((name, v)) if **name == *param.name => Some(v),
                    _ => value.get(&param.name),
                };
                if !self.field_matches(field, &param.ty, depth) {
                    return false;
                }
            }
            match def.parent.as_deref() {
                Some(parent) => current = parent,
                None => return true,
            }
        }
        true
    }

    /// What `value` is, for a message saying it does not carry `expected`:
    /// its kind (`string`, `array mixing int and string`), and for an array
    /// or a struct whose kind reads the same as `expected`, the element or
    /// field that differs (`array<int> whose 3rd element is string`, `Item
    /// whose field `count` is string`). Counts elements from 1, as the 1st, 2nd...,
    /// whatever the script language counts from.
    pub fn describe(&self, value: &Value, expected: &Type) -> String {
        self.describe_in(value, expected, 0)
    }

    fn describe_in(&self, value: &Value, expected: &Type, depth: usize) -> String {
        let kind = value.kind_name();
        // The top level names the element of an array that fails, whatever
        // the array's kind; an element names its own parts only where its
        // kind reads as what was expected of it.
        let arrays = depth == 0 && matches!((expected, value), (Type::Array(_), Value::Array(_)));
        if depth > MAX_TYPE_DEPTH || !arrays && kind != expected.to_string() {
            return kind;
        }
        match (expected, value) {
            (Type::Array(inner), Value::Array(items)) => {
                match items
                    .iter()
                    .position(|item| !self.value_matches(item, inner))
                {
                    Some(at) => format!(
                        "{kind} whose {} element is {}",
                        ordinal(at + 1),
                        self.describe_in(&items[at], inner, depth + 1)
                    ),
                    None => kind,
                }
            }
            (Type::Struct(_), Value::Struct(row)) => {
                let wrong = row.fields.iter().find_map(|(field, v)| {
                    let ty = self.field_type(&row.name, field)?;
                    (!self.field_matches(Some(v), ty, 0)).then_some((field, v, ty))
                });
                match wrong {
                    Some((field, v, ty)) => format!(
                        "{kind} whose field `{field}` is {}",
                        self.describe_in(v, ty, depth + 1)
                    ),
                    None => kind,
                }
            }
            _ => kind,
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

/// `1st`, `2nd`, `3rd`, `4th`, ..., `11th`, ..., `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

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

    /// "an int is accepted for a float and converted", at any depth: array
    /// elements, struct fields (inherited ones too), arrays of structs; a
    /// shared value is copied only when something in it converts.
    #[test]
    fn compat_int_for_float_is_converted_all_the_way_down() {
        use crate::value::StructValue;
        let mut r = registry();
        r.defs.insert(
            "Pos".into(),
            StructDef {
                parent: Some("Base".into()),
                fields: vec![Param::new("x", Type::Float)],
                ..Default::default()
            },
        );
        let pos =
            |x: Value| Value::structure(StructValue::new("Pos").with("id", 1i64).with("x", x));
        let floats = Type::Array(Box::new(Type::Float));
        let positions = Type::Array(Box::new(Type::Struct("Base".into())));
        assert!(r.holds_nested_float(&floats));
        assert!(r.holds_nested_float(&positions), "through a child struct");
        assert!(!r.holds_nested_float(&Type::Array(Box::new(Type::Int))));
        assert!(
            !r.holds_nested_float(&Type::Float),
            "the top level is not nested"
        );

        let mut v = Value::array(vec![Value::Int(1), Value::Float(2.5)]);
        r.widen_ints(&mut v, &floats);
        assert_eq!(v, Value::array(vec![Value::Float(1.0), Value::Float(2.5)]));

        let mut v = Value::array(vec![pos(Value::Int(3)), pos(Value::Float(4.5))]);
        r.widen_ints(&mut v, &positions);
        assert_eq!(
            v,
            Value::array(vec![pos(Value::Float(3.0)), pos(Value::Float(4.5))])
        );
        let Value::Struct(first) = &v.as_array().unwrap()[0] else {
            panic!("a struct")
        };
        assert_eq!(
            first.get("id"),
            Some(&Value::Int(1)),
            "an int field stays an int"
        );

        let shared = Value::array(vec![pos(Value::Float(1.0))]);
        let mut v = shared.clone();
        r.widen_ints(&mut v, &positions);
        let (Value::Array(a), Value::Array(b)) = (&v, &shared) else {
            panic!("arrays")
        };
        assert!(Rc::ptr_eq(a, b), "nothing to convert: not copied");
    }

    /// "no listener is called with wrong types": a struct matches when each
    /// field it carries has its declared type (inherited and nested ones
    /// too); a field left out or nil, one the definition does not name or
    /// names as an observed nil, and a struct nobody defined are not held
    /// against it.
    #[test]
    fn compat_struct_fields_must_carry_their_declared_types() {
        use crate::value::StructValue;
        let mut r = registry();
        r.defs.insert(
            "Holder".into(),
            StructDef {
                fields: vec![
                    Param::new("inner", Type::Struct("Base".into())),
                    Param::new("later", Type::Nil),
                ],
                ..Default::default()
            },
        );
        let base = Type::Struct("Base".into());
        let child = |id: Value, name: Value| {
            Value::structure(StructValue::new("Child").with("id", id).with("name", name))
        };
        assert!(r.value_matches(&child(Value::Int(1), Value::str("a")), &base));
        assert!(
            !r.value_matches(&child(Value::str("1"), Value::str("a")), &base),
            "inherited"
        );
        assert!(
            !r.value_matches(&child(Value::Int(1), Value::Int(2)), &base),
            "own"
        );
        assert!(
            r.value_matches(&child(Value::Nil, Value::str("a")), &base),
            "nil"
        );
        let partial = Value::structure(
            StructValue::new("Child")
                .with("name", "a")
                .with("extra", 3i64),
        );
        assert!(r.value_matches(&partial, &base), "left out, and not named");
        let holder = |inner: Value| {
            Value::structure(
                StructValue::new("Holder")
                    .with("inner", inner)
                    .with("later", 9i64),
            )
        };
        assert!(r.value_matches(
            &holder(child(Value::Int(1), Value::str("a"))),
            &Type::Struct("Holder".into())
        ));
        assert!(
            !r.value_matches(
                &holder(child(Value::Int(1), Value::Float(2.0))),
                &Type::Struct("Holder".into())
            ),
            "nested"
        );
        let unknown = Value::structure(StructValue::new("Stranger").with("id", "x"));
        assert!(r.value_matches(&unknown, &Type::Struct("Stranger".into())));
        assert!(!r.value_matches(
            &Value::array(vec![child(Value::Int(1), Value::Int(2))]),
            &Type::Array(Box::new(base))
        ));
    }

    /// Rows sharing their field-name strings are checked by position after
    /// the first; the answer is the same as row by row, including a later
    /// row with the same names and a wrong type, a row with another field
    /// order, and a row of another struct.
    #[test]
    fn values_match_by_shared_names_agrees_with_row_by_row() {
        use crate::value::StructValue;
        let r = registry();
        let (child, id, name): (Rc<str>, Rc<str>, Rc<str>) =
            ("Child".into(), "id".into(), "name".into());
        let row = |a: Value, b: Value, flip: bool| {
            let mut s = StructValue::new(child.clone());
            let mut fields = vec![(id.clone(), a), (name.clone(), b)];
            if flip {
                fields.reverse();
            }
            s.fields = fields;
            Value::structure(s)
        };
        let good = || row(Value::Int(1), Value::str("a"), false);
        let base = Type::Struct("Base".into());
        let cases: Vec<(Vec<Value>, bool)> = vec![
            (vec![good(), good(), good()], true),
            (
                vec![good(), good(), row(Value::Int(1), Value::Int(2), false)],
                false,
            ),
            (
                vec![good(), row(Value::str("x"), Value::str("a"), false)],
                false,
            ),
            (
                vec![good(), row(Value::Int(3), Value::str("b"), true), good()],
                true,
            ),
            (vec![good(), row(Value::Int(3), Value::Int(4), true)], false),
            (
                vec![good(), Value::structure(StructValue::new("Stranger"))],
                false,
            ),
            (vec![good(), row(Value::Nil, Value::str("a"), false)], true),
        ];
        for (rows, expected) in cases {
            let one_by_one = rows.iter().all(|v| r.value_matches(v, &base));
            assert_eq!(one_by_one, expected, "{rows:?}");
            assert_eq!(r.values_match(&rows, &base), expected, "{rows:?}");
        }
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
