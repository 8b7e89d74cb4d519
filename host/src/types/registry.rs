//! The struct registry: a table's structs by name, inheritance, and the
//! compatibility rule applied to values and types.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::value::Value;

use super::shape::{ShapeField, accepted_kinds};
use super::{MAX_TYPE_DEPTH, Mismatch, Param, RowShape, StructDef, Type};

/// The structs of a table, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StructRegistry {
    #[serde(deserialize_with = "crate::persist::unique_names")]
    pub defs: BTreeMap<String, StructDef>,
    /// The structs declared (`mod.toml`, [`crate::SignatureTable::declare_struct`]):
    /// their fields are the whole truth, so a plain table with a field they
    /// do not name is refused, where an observed struct takes the field on.
    /// Declarations are made again by each run, so this is not saved.
    #[serde(skip)]
    pub(crate) declared: Declared,
}

/// The names of declared structs. Not part of what the table says (a table
/// read back from its file equals the one saved): equal whatever it holds.
#[derive(Debug, Clone, Default)]
pub(crate) struct Declared(pub(crate) std::collections::BTreeSet<String>);

impl PartialEq for Declared {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Declared {}

impl StructRegistry {
    pub fn get(&self, name: &str) -> Option<&StructDef> {
        self.defs.get(name)
    }

    /// Was struct `name` declared (its fields the whole truth), not only
    /// observed?
    pub fn is_declared(&self, name: &str) -> bool {
        self.declared.0.contains(name)
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
    pub(super) fn chain_fields(&self, name: &str) -> SmallVec<[&Param; 8]> {
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
    pub(super) fn field_matches(&self, field: Option<&Value>, ty: &Type, depth: usize) -> bool {
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

    /// The compatibility rule (see the module doc): `listener` must be a
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
