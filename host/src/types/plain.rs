//! Plain tables: a script's table (Lua) or object map (Rhai) with named
//! fields and no `__struct` reaches the hub as a plain record
//! ([`StructValue::plain`]); its struct is named here, by one rule for
//! every language. A runtime only converts.
//!
//! The rule, where a plain record stands (a parameter, an array's rows, a
//! struct's field):
//! - **A struct is known there** (declared or observed): the record is that
//!   struct when its fields fit. Every field of the struct must be there
//!   (one typed `any`, or observed as `nil` and so unknown yet, may be left
//!   out); a field the struct lacks is refused by a declared struct and
//!   taken on by an observed one, as an observed key takes an appended
//!   parameter. A field of another type is refused by the signature check
//!   that follows (it names the field).
//! - **Nothing is known there yet**: the hub infers a struct from the
//!   record's fields and types and records it (observed), named by
//!   [`param_struct_name`]: the key's segments in PascalCase
//!   (`Quest.Reward` → `QuestReward`), `Arg2`, `Arg3`... after them for the
//!   second parameter on, `Reply` for a request's reply; a record inside a
//!   field adds the field's name (`QuestRewardItem`); an array's rows take
//!   the array's name. A name already taken (by another struct, or by the
//!   stubs' own `Gantry…`/`GMP` classes) gets `_2`, `_3`... The name is
//!   an identifier in Lua and in Rhai.
//!
//! A named record keeps the struct's field order (an inferred struct's is
//! its fields sorted by name, as the runtimes hand them over), so that row
//! listeners get fields by position as for any struct.
//!
//! Naming is off every hot path: a send whose values fit the key's
//! parameters never gets here; only a value the check refused is looked at
//! for plain records.

use std::rc::Rc;

use smallvec::SmallVec;

use crate::signature::{Origin, Recorded, SignatureTable};
use crate::value::{StructValue, Value, shared_name};

use super::{MAX_TYPE_DEPTH, Mismatch, Param, StructDef, StructRegistry, Type};

/// The longest name inferred before a collision suffix: names come from
/// keys and field names, which scripts choose.
const MAX_NAME_BYTES: usize = 96;

/// How many times one value may make the table grow while it is named (a
/// field each time at least): past it, what is left stays plain and the
/// check refuses it.
const MAX_GROWTH: usize = 256;

/// The struct name inferred for a plain table sent as parameter `position`
/// (0-based) of `key`: `QuestReward` for `Quest.Reward`'s first,
/// `QuestStartArg2` for `Quest.Start`'s second.
pub fn param_struct_name(key: &str, position: usize) -> String {
    let mut name = pascal(key);
    if position > 0 {
        name.push_str(&format!("Arg{}", position + 1));
    }
    identifier(name)
}

/// The struct name inferred for a plain table in a request's reply, value
/// `position` (0-based): `ShopPriceReply`, `ShopPriceReply2`.
pub fn reply_struct_name(key: &str, position: usize) -> String {
    let mut name = pascal(key);
    name.push_str("Reply");
    if position > 0 {
        name.push_str(&(position + 1).to_string());
    }
    identifier(name)
}

/// The struct name inferred for a plain table in field `field` of struct
/// `parent`: `QuestRewardItem`.
pub fn field_struct_name(parent: &str, field: &str) -> String {
    let mut name = parent.to_owned();
    name.push_str(&pascal(field));
    identifier(name)
}

/// `quest.reward_item` → `QuestRewardItem`: ASCII letters and digits kept,
/// each run of them starting upper case, anything else a word break.
fn pascal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word_start = true;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(if word_start {
                c.to_ascii_uppercase()
            } else {
                c
            });
            word_start = false;
        } else {
            word_start = true;
        }
    }
    out
}

/// A valid struct name from `name`: bounded, never empty, never starting
/// with a digit.
fn identifier(mut name: String) -> String {
    name.truncate(MAX_NAME_BYTES);
    if name.is_empty() {
        name.push_str("Table");
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// Names the stubs use (or may use) for their own classes: `GMP` and
/// `Gantry…` without an underscore (so `GantryObject_2` is free).
fn reserved(name: &str) -> bool {
    name == "GMP" || name.starts_with("Gantry") && !name.contains('_')
}

/// Why a plain table is not the struct expected of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainMismatch {
    /// Where in the value, outside in (`` `items` row 2 ``); empty at the
    /// value itself.
    pub at: Vec<String>,
    /// The struct expected.
    pub struct_name: String,
    pub problem: Problem,
}

/// What a plain table lacks or has too many of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A field of the struct is not in the table (or is nil).
    Missing { field: String, ty: Type },
    /// The table has a field the declared struct does not.
    Extra { field: String },
}

impl PlainMismatch {
    fn inside(mut self, place: String) -> Self {
        self.at.insert(0, place);
        self
    }

    /// What was expected, for a message.
    pub fn expected(&self) -> String {
        match &self.problem {
            Problem::Missing { field, ty } => {
                format!("{} with field `{field}: {ty}`", self.struct_name)
            }
            Problem::Extra { .. } => format!("{} (declared)", self.struct_name),
        }
    }

    /// What came instead, for a message.
    pub fn got(&self) -> String {
        let at = if self.at.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.at.join(" "))
        };
        match &self.problem {
            Problem::Missing { field, .. } => format!("a table without `{field}`{at}"),
            Problem::Extra { field } => format!(
                "a table{at} with field `{field}`, which {} does not declare",
                self.struct_name
            ),
        }
    }

    /// The mismatch of parameter `position` (named `param`).
    pub fn at_param(self, position: usize, param: Option<&str>) -> Mismatch {
        let mut expected = self.expected();
        if let Some(param) = param.filter(|p| !p.is_empty() && *p != format!("arg{}", position + 1))
        {
            expected.push_str(&format!(" (parameter `{param}`)"));
        }
        Mismatch {
            position,
            expected,
            got: self.got(),
        }
    }
}

/// Why [`StructRegistry::name_plain`] left a plain record unnamed.
#[derive(Debug)]
pub enum Unsettled {
    /// The record contradicts the struct expected of it.
    Refused(PlainMismatch),
    /// The table must learn first: an observed struct takes new fields on
    /// (or is narrowed from `nil`), or the struct expected is not defined.
    Grows(Growth),
}

/// Fields a struct takes on: added, or narrowed where observed as `nil`.
#[derive(Debug)]
pub struct Growth {
    name: Rc<str>,
    fields: Vec<(Rc<str>, Value)>,
}

impl StructRegistry {
    /// Names the plain records in `value`, expected as `ty`, by the structs
    /// known now (the table does not change): each becomes its struct, its
    /// fields in the struct's order. A record the rule refuses, or one that
    /// would make the table grow, is left plain and said why; records named
    /// before it stay named.
    pub fn name_plain(&self, value: &mut Value, ty: &Type) -> Result<(), Unsettled> {
        self.settle_in(value, ty, 0)
    }

    fn settle_in(&self, value: &mut Value, ty: &Type, depth: usize) -> Result<(), Unsettled> {
        if depth > MAX_TYPE_DEPTH {
            return Ok(());
        }
        match (ty, value) {
            (Type::Struct(name), Value::Struct(record)) if record.is_plain() => {
                self.name_record(record, name, depth)
            }
            (Type::Struct(_), Value::Struct(record)) => {
                if !record.fields.iter().any(|(_, v)| v.holds_plain()) {
                    return Ok(());
                }
                // A named struct holding plain records in its fields.
                let record = Rc::make_mut(record);
                let name = record.name.clone();
                for (field, v) in record.fields.iter_mut() {
                    if !v.holds_plain() {
                        continue;
                    }
                    match self.field_type(&name, field) {
                        Some(Type::Nil) => {
                            return Err(Unsettled::Grows(Growth {
                                name: name.clone(),
                                fields: vec![(field.clone(), v.clone())],
                            }));
                        }
                        Some(fty) => self
                            .settle_in(v, fty, depth + 1)
                            .map_err(|e| in_place(e, || format!("field `{field}`")))?,
                        None => {}
                    }
                }
                Ok(())
            }
            (Type::Array(inner), Value::Array(items)) => {
                if !items.iter().any(Value::holds_plain) {
                    return Ok(());
                }
                for (i, item) in Rc::make_mut(items).iter_mut().enumerate() {
                    if item.holds_plain() {
                        self.settle_in(item, inner, depth + 1)
                            .map_err(|e| in_place(e, || format!("row {}", i + 1)))?;
                    }
                }
                Ok(())
            }
            // `any` takes the table as it is; a type a table is not is the
            // check's to refuse.
            _ => Ok(()),
        }
    }

    /// Names one plain record as struct `name`.
    fn name_record(
        &self,
        record: &mut Rc<StructValue>,
        name: &Rc<str>,
        depth: usize,
    ) -> Result<(), Unsettled> {
        if !self.defs.contains_key(&**name) {
            return Err(Unsettled::Grows(Growth {
                name: name.clone(),
                fields: record.fields.clone(),
            }));
        }
        let chain = self.chain_fields(name);
        // Where each of the struct's fields is in the record (nil is absent).
        let mut at: SmallVec<[Option<usize>; 16]> = SmallVec::with_capacity(chain.len());
        let mut used: SmallVec<[bool; 16]> = SmallVec::from_elem(false, record.fields.len());
        for param in &chain {
            let found = record
                .fields
                .iter()
                .position(|(field, v)| **field == *param.name && !v.is_nil());
            match found {
                Some(i) => used[i] = true,
                None if matches!(param.ty, Type::Any | Type::Nil) => {}
                None => {
                    return Err(Unsettled::Refused(PlainMismatch {
                        at: Vec::new(),
                        struct_name: name.to_string(),
                        problem: Problem::Missing {
                            field: param.name.clone(),
                            ty: param.ty.clone(),
                        },
                    }));
                }
            }
            at.push(found);
        }
        let extra: Vec<(Rc<str>, Value)> = record
            .fields
            .iter()
            .zip(&used)
            .filter(|((_, v), used)| !**used && !v.is_nil())
            .map(|(field, _)| field.clone())
            .collect();
        if let Some((field, _)) = extra.first() {
            if self.is_declared(name) {
                return Err(Unsettled::Refused(PlainMismatch {
                    at: Vec::new(),
                    struct_name: name.to_string(),
                    problem: Problem::Extra {
                        field: field.to_string(),
                    },
                }));
            }
            return Err(Unsettled::Grows(Growth {
                name: name.clone(),
                fields: extra,
            }));
        }
        // A field observed as `nil` so far that the record holds a value
        // for is narrowed by the table first.
        let narrowed: Vec<(Rc<str>, Value)> = chain
            .iter()
            .zip(&at)
            .filter_map(|(param, at)| match (param.ty == Type::Nil, at) {
                (true, Some(i)) => Some(record.fields[*i].clone()),
                _ => None,
            })
            .collect();
        if !narrowed.is_empty() {
            return Err(Unsettled::Grows(Growth {
                name: name.clone(),
                fields: narrowed,
            }));
        }
        let record = Rc::make_mut(record);
        for (param, at) in chain.iter().zip(&at) {
            if let Some(i) = at
                && record.fields[*i].1.holds_plain()
            {
                self.settle_in(&mut record.fields[*i].1, &param.ty, depth + 1)
                    .map_err(|e| in_place(e, || format!("field `{}`", param.name)))?;
            }
        }
        let in_order = record.fields.len() == chain.len()
            && at.iter().enumerate().all(|(i, at)| *at == Some(i));
        if !in_order {
            let mut taken = std::mem::take(&mut record.fields);
            record.fields = at
                .iter()
                .flatten()
                .map(|&i| {
                    let (field, value) = &mut taken[i];
                    (field.clone(), std::mem::take(value))
                })
                .collect();
        }
        record.name = name.clone();
        Ok(())
    }

    /// [`StructRegistry::name_plain`], growing the table as the rule says:
    /// observed structs take new fields on, structs expected but not
    /// defined are defined from the record. Whether the table changed.
    pub(crate) fn settle(&mut self, value: &mut Value, ty: &Type) -> Result<bool, PlainMismatch> {
        let mut changed = false;
        for _ in 0..MAX_GROWTH {
            match self.name_plain(value, ty) {
                Ok(()) => return Ok(changed),
                Err(Unsettled::Refused(m)) => return Err(m),
                Err(Unsettled::Grows(growth)) => {
                    self.grow(growth);
                    changed = true;
                }
            }
        }
        Ok(changed)
    }

    fn grow(&mut self, growth: Growth) {
        for (field, value) in growth.fields {
            let ty = self.infer_type(&value, &field_struct_name(&growth.name, &field));
            let def = self.defs.entry(growth.name.to_string()).or_default();
            match def.fields.iter_mut().find(|p| *p.name == *field) {
                Some(param) if param.ty == Type::Nil => param.ty = ty,
                Some(_) => {}
                None if value.is_nil() => {}
                None => def.fields.push(Param::new(&*field, ty)),
            }
        }
    }

    /// The type `value` records, as [`Value::type_of`], except that each
    /// plain record in it defines a struct (observed), named from `hint`:
    /// the value's own when it is a record, its rows' when it is an array.
    pub(crate) fn infer_type(&mut self, value: &Value, hint: &str) -> Type {
        self.infer_in(value, hint, 0)
    }

    fn infer_in(&mut self, value: &Value, hint: &str, depth: usize) -> Type {
        if depth > MAX_TYPE_DEPTH || !value.holds_plain() {
            return value.type_of();
        }
        match value {
            Value::Struct(record) if record.is_plain() => {
                let name = self.free_name(hint);
                // Taken before the fields are, so a nested record does not
                // take the same name.
                self.defs.insert(name.clone(), StructDef::default());
                let mut fields = Vec::with_capacity(record.fields.len());
                for (field, v) in &record.fields {
                    if v.is_nil() {
                        continue;
                    }
                    let ty = self.infer_in(v, &field_struct_name(&name, field), depth + 1);
                    fields.push(Param::new(&**field, ty));
                }
                if let Some(def) = self.defs.get_mut(&name) {
                    def.fields = fields;
                }
                Type::Struct(shared_name(&name))
            }
            Value::Array(items) => {
                // Rows take the first plain row's struct; the others are
                // named against it (and extend it) when the value is settled.
                match items.iter().find(|v| v.holds_plain()) {
                    Some(row) => Type::Array(Box::new(self.infer_in(row, hint, depth + 1))),
                    None => value.type_of(),
                }
            }
            other => other.type_of(),
        }
    }

    /// `base`, or `base_2`, `base_3`... the first no struct (and no stub
    /// class) has.
    fn free_name(&self, base: &str) -> String {
        let taken = |name: &str| self.defs.contains_key(name) || reserved(name);
        if !taken(base) {
            return base.to_owned();
        }
        (2..)
            .map(|n| format!("{base}_{n}"))
            .find(|name| !taken(name))
            .unwrap_or_else(|| base.to_owned())
    }
}

fn in_place(e: Unsettled, place: impl FnOnce() -> String) -> Unsettled {
    match e {
        Unsettled::Refused(m) => Unsettled::Refused(m.inside(place())),
        grows => grows,
    }
}

impl SignatureTable {
    /// Names the plain records among a dispatch's arguments (see the
    /// module doc): by each parameter's struct where the key has one,
    /// growing observed structs; where the key has no type for the
    /// parameter yet, a struct is inferred from the record and recorded.
    /// `Changed` when the table learned a struct or a field. A plain
    /// record the rule refuses is the key's mismatch at its parameter.
    pub fn settle_args(&mut self, key: &str, args: &mut [Value]) -> Result<Recorded, Mismatch> {
        let mut changed = false;
        for (position, arg) in args.iter_mut().enumerate() {
            if !arg.holds_plain() {
                continue;
            }
            let entry = self.keys.get(key);
            let declared = entry.is_some_and(|e| e.origin == Origin::Declared);
            let param = entry.and_then(|e| e.params.get(position));
            let param_name = param.map(|p| p.name.clone());
            let ty = match param {
                Some(p) if declared || p.ty != Type::Nil => p.ty.clone(),
                // A declared key refuses an argument it does not declare.
                None if declared => continue,
                _ => {
                    changed = true;
                    self.structs
                        .infer_type(arg, &param_struct_name(key, position))
                }
            };
            changed |= self
                .structs
                .settle(arg, &ty)
                .map_err(|m| m.at_param(position, param_name.as_deref()))?;
        }
        Ok(if changed {
            Recorded::Changed
        } else {
            Recorded::Unchanged
        })
    }
}
