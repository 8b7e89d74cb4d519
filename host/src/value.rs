//! The one dynamic value model every language speaks.
//!
//! Lua, Rhai and Rust all put [`Value`]s on the wire. Scalars are stored inline,
//! so a send of scalar arguments fills a stack array and allocates nothing;
//! strings, structs and arrays are reference counted and cheap to clone.
//!
//! [`IntoValue`] and [`FromValue`] are the typed Rust face (in the spirit of
//! mlua's `IntoLua`/`FromLua`): a Rust listener declares its parameter types
//! through `FromValue::TYPE`, which is what the compatibility rule checks.

use std::fmt;
use std::num::NonZeroU64;
use std::rc::Rc;

use crate::types::Type;

thread_local! {
    static NAMES: std::cell::RefCell<rustc_hash::FxHashSet<Rc<str>>> = Default::default();
}

/// Past this many distinct names, [`shared_name`] stops remembering new
/// ones (names from scripts are the user's input; the table stays bounded).
const MAX_SHARED_NAMES: usize = 4096;

/// One `Rc<str>` per distinct struct or field name on this thread. Rows
/// whose names are shared strings are confirmed to have a struct's layout
/// by comparing pointers, not text (see `collection::rows`); a name that
/// is not shared is still compared by its text, so this only saves time.
pub fn shared_name(text: &str) -> Rc<str> {
    NAMES
        .try_with(|names| {
            let mut names = names.borrow_mut();
            if let Some(name) = names.get(text) {
                return name.clone();
            }
            let name: Rc<str> = Rc::from(text);
            if names.len() < MAX_SHARED_NAMES {
                names.insert(name.clone());
            }
            name
        })
        .unwrap_or_else(|_| Rc::from(text))
}

/// A host object: something a script can be attached to, send from and own
/// listeners. Ids are never reused within one hub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub(crate) NonZeroU64);

impl ObjectId {
    /// The raw id, for display and for embedding layers that need a number.
    pub fn get(self) -> u64 {
        self.0.get()
    }
    /// Rebuilds an id from [`ObjectId::get`]; `None` for 0.
    pub fn from_raw(raw: u64) -> Option<Self> {
        NonZeroU64::new(raw).map(ObjectId)
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "object#{}", self.0)
    }
}

/// A named, ordered record. Field order is declaration order; collection row
/// listeners expand fields positionally in that order.
///
/// A record with an empty name is *plain*: a script's table (map) with
/// named fields and no `__struct`, whose struct the hub names when it
/// admits it (see [`crate::types::plain`]): a runtime only converts, and
/// one rule names tables for every language.
#[derive(Debug, Clone, PartialEq)]
pub struct StructValue {
    pub name: Rc<str>,
    pub fields: Vec<(Rc<str>, Value)>,
}

impl StructValue {
    pub fn new(name: impl Into<Rc<str>>) -> Self {
        Self {
            name: name.into(),
            fields: Vec::new(),
        }
    }

    /// A plain record: named fields, no struct name yet.
    pub fn plain() -> Self {
        Self::new(Rc::<str>::from(""))
    }

    /// Is this a plain record, waiting for the hub to name its struct?
    #[inline]
    pub fn is_plain(&self) -> bool {
        self.name.is_empty()
    }

    /// Builder-style field append.
    pub fn with(mut self, field: impl Into<Rc<str>>, value: impl IntoValue) -> Self {
        self.fields.push((field.into(), value.into_value()));
        self
    }

    pub fn get(&self, field: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find(|(name, _)| &**name == field)
            .map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, field: &str) -> Option<&mut Value> {
        self.fields
            .iter_mut()
            .find(|(name, _)| &**name == field)
            .map(|(_, v)| v)
    }

    /// Sets a field, appending it when absent.
    pub fn set(&mut self, field: &str, value: Value) {
        match self.get_mut(field) {
            Some(slot) => *slot = value,
            None => self.fields.push((Rc::from(field), value)),
        }
    }
}

/// A dynamic value.
#[derive(Debug, Clone, Default)]
pub enum Value {
    #[default]
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    Object(ObjectId),
    Struct(Rc<StructValue>),
    Array(Rc<Vec<Value>>),
}

impl PartialEq for Value {
    /// Structural equality; floats compare by bits so that a stored table with
    /// a NaN in it does not report that row as changed on every re-store.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Object(a), Value::Object(b)) => a == b,
            (Value::Struct(a), Value::Struct(b)) => Rc::ptr_eq(a, b) || a == b,
            (Value::Array(a), Value::Array(b)) => Rc::ptr_eq(a, b) || a == b,
            _ => false,
        }
    }
}

impl Value {
    pub fn str(text: &str) -> Value {
        Value::Str(Rc::from(text))
    }

    pub fn array(items: Vec<Value>) -> Value {
        Value::Array(Rc::new(items))
    }

    pub fn structure(value: StructValue) -> Value {
        Value::Struct(Rc::new(value))
    }

    /// The type this value has on its own, as recorded on first use. An
    /// array takes the one type its elements share (ints beside floats are
    /// floats; `array<any>` when empty); an array of mixed elements takes
    /// its first element's type, which it then fails to match, as every
    /// send of it does (see [`Value::element_type`]).
    pub fn type_of(&self) -> Type {
        self.inferred().unwrap_or_else(|_| self.first_type())
    }

    /// [`Value::type_of`], or the two element types an array (at any
    /// depth) mixes.
    pub fn element_type(&self) -> Result<Type, Mixed> {
        self.inferred()
    }

    fn inferred(&self) -> Result<Type, Mixed> {
        Ok(match self {
            Value::Array(items) => {
                let mut common = Type::Any;
                for item in items.iter() {
                    let ty = item.inferred()?;
                    common = unify(&common, &ty).ok_or_else(|| Mixed {
                        first: common.clone(),
                        other: ty,
                    })?;
                }
                Type::Array(Box::new(common))
            }
            scalar => scalar.first_type(),
        })
    }

    /// The type by an array's first element alone.
    fn first_type(&self) -> Type {
        match self {
            Value::Nil => Type::Nil,
            Value::Bool(_) => Type::Bool,
            Value::Int(_) => Type::Int,
            Value::Float(_) => Type::Float,
            Value::Str(_) => Type::String,
            Value::Object(_) => Type::Object,
            Value::Struct(s) => Type::Struct(s.name.clone()),
            Value::Array(items) => {
                Type::Array(Box::new(items.first().map_or(Type::Any, Value::type_of)))
            }
        }
    }

    /// Whether a plain record (see [`StructValue::is_plain`]) is in this
    /// value, at any depth: a struct field, an array element.
    pub fn holds_plain(&self) -> bool {
        self.holds_plain_in(0)
    }

    fn holds_plain_in(&self, depth: usize) -> bool {
        if depth > crate::types::MAX_TYPE_DEPTH {
            return false;
        }
        match self {
            Value::Struct(s) => {
                s.is_plain() || s.fields.iter().any(|(_, v)| v.holds_plain_in(depth + 1))
            }
            Value::Array(items) => items.iter().any(|v| v.holds_plain_in(depth + 1)),
            _ => false,
        }
    }

    /// A short name of the value's kind for messages (`int`, `Item`,
    /// `array<int>`, `array mixing int and string`).
    pub fn kind_name(&self) -> String {
        match self.inferred() {
            Ok(ty) => ty.to_string(),
            Err(mixed) => mixed.to_string(),
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// Ints are accepted where floats are expected (the compatibility rule).
    pub fn as_float(&self) -> Option<f64> {
        match self {
            Value::Float(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_struct(&self) -> Option<&StructValue> {
        match self {
            Value::Struct(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<ObjectId> {
        match self {
            Value::Object(o) => Some(*o),
            _ => None,
        }
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    /// The default value of a type: what a removed collection row is delivered
    /// as, field by field.
    pub fn default_of(ty: &Type, structs: &crate::types::StructRegistry) -> Value {
        let mut building = Vec::new();
        let mut budget = MAX_DEFAULT_STRUCTS;
        default_in(ty, structs, &mut building, &mut budget)
    }

    /// A short, single-line rendering for traces and reports.
    pub fn short(&self, max: usize) -> String {
        let mut text = self.to_string();
        if text.chars().count() > max {
            text = text.chars().take(max.saturating_sub(1)).collect::<String>() + "…";
        }
        text
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => f.write_str("nil"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => {
                if x.fract() == 0.0 && x.is_finite() {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x}")
                }
            }
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Object(o) => write!(f, "{o}"),
            Value::Struct(s) => {
                let name = if s.is_plain() { "table" } else { &s.name };
                write!(f, "{name} {{")?;
                for (i, (name, v)) in s.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, " {name}: {v}")?;
                }
                f.write_str(" }")
            }
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Converts a Rust value into a [`Value`].
pub trait IntoValue {
    fn into_value(self) -> Value;
}

/// Reads a Rust value out of a [`Value`] and names the type it expects, which
/// is what a typed Rust listener declares for the compatibility check.
pub trait FromValue: Sized {
    /// The type a listener parameter of this Rust type declares.
    fn declared_type() -> Type;
    /// `None` when the value does not convert (only possible in unchecked mode
    /// or for `any`-typed senders).
    fn from_value(value: &Value) -> Option<Self>;
    /// How this type reads a Rust row field of type `field` at a compiled
    /// offset (see `collection::mirror`): only a field of its very type.
    #[doc(hidden)]
    fn compiled_field(_field: std::any::TypeId) -> Option<u8> {
        None
    }
    /// Reads a field that [`FromValue::compiled_field`] accepted.
    ///
    /// # Safety
    ///
    /// `field` points to a live field of the type `compiled_field` accepted
    /// as `way`.
    #[doc(hidden)]
    unsafe fn read_field(_field: *const u8, _way: u8) -> Self {
        unreachable!("read_field without compiled_field")
    }
}

/// [`FromValue::compiled_field`] and [`FromValue::read_field`] for a type
/// read from a field of its own type, by copy or clone.
macro_rules! compiled_as_itself {
    ($rust:ty) => {
        #[inline]
        fn compiled_field(field: std::any::TypeId) -> Option<u8> {
            (field == std::any::TypeId::of::<$rust>()).then_some(0)
        }
        #[inline(always)]
        unsafe fn read_field(field: *const u8, _way: u8) -> Self {
            // SAFETY: the caller's contract: a live field of this type.
            unsafe { (*field.cast::<$rust>()).clone() }
        }
    };
}

macro_rules! scalar {
    ($rust:ty, $ty:expr, $variant:ident, $from:expr) => {
        impl IntoValue for $rust {
            #[inline]
            fn into_value(self) -> Value {
                Value::$variant(self.into())
            }
        }
        impl FromValue for $rust {
            #[inline]
            fn declared_type() -> Type {
                $ty
            }
            #[inline]
            fn from_value(value: &Value) -> Option<Self> {
                $from(value)
            }
            compiled_as_itself!($rust);
        }
    };
}

scalar!(bool, Type::Bool, Bool, |v: &Value| match v {
    Value::Bool(b) => Some(*b),
    _ => None,
});
scalar!(i64, Type::Int, Int, Value::as_int);
scalar!(i32, Type::Int, Int, |v: &Value| v
    .as_int()
    .and_then(|i| i32::try_from(i).ok()));
scalar!(u32, Type::Int, Int, |v: &Value| v
    .as_int()
    .and_then(|i| u32::try_from(i).ok()));
scalar!(f64, Type::Float, Float, Value::as_float);
scalar!(f32, Type::Float, Float, |v: &Value| v
    .as_float()
    .map(|f| f as f32));

impl IntoValue for usize {
    fn into_value(self) -> Value {
        Value::Int(i64::try_from(self).unwrap_or(i64::MAX))
    }
}

impl IntoValue for ObjectId {
    #[inline]
    fn into_value(self) -> Value {
        Value::Object(self)
    }
}
impl FromValue for ObjectId {
    fn declared_type() -> Type {
        Type::Object
    }
    fn from_value(value: &Value) -> Option<Self> {
        value.as_object()
    }
    compiled_as_itself!(ObjectId);
}

impl IntoValue for &str {
    fn into_value(self) -> Value {
        Value::str(self)
    }
}
impl IntoValue for String {
    fn into_value(self) -> Value {
        Value::Str(Rc::from(self))
    }
}
impl IntoValue for Rc<str> {
    fn into_value(self) -> Value {
        Value::Str(self)
    }
}
impl FromValue for String {
    fn declared_type() -> Type {
        Type::String
    }
    fn from_value(value: &Value) -> Option<Self> {
        value.as_str().map(str::to_owned)
    }
    compiled_as_itself!(String);
}
impl FromValue for Rc<str> {
    fn declared_type() -> Type {
        Type::String
    }
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Str(s) => Some(s.clone()),
            _ => None,
        }
    }
    compiled_as_itself!(Rc<str>);
}

impl IntoValue for Value {
    #[inline]
    fn into_value(self) -> Value {
        self
    }
}
impl FromValue for Value {
    /// A `Value` parameter accepts anything.
    fn declared_type() -> Type {
        Type::Any
    }
    fn from_value(value: &Value) -> Option<Self> {
        Some(value.clone())
    }
}

impl IntoValue for StructValue {
    fn into_value(self) -> Value {
        Value::structure(self)
    }
}

impl<T: IntoValue> IntoValue for Vec<T> {
    fn into_value(self) -> Value {
        Value::array(self.into_iter().map(IntoValue::into_value).collect())
    }
}
impl<T: FromValue> FromValue for Vec<T> {
    fn declared_type() -> Type {
        Type::Array(Box::new(T::declared_type()))
    }
    fn from_value(value: &Value) -> Option<Self> {
        value.as_array()?.iter().map(T::from_value).collect()
    }
}

impl<T: IntoValue> IntoValue for Option<T> {
    fn into_value(self) -> Value {
        self.map_or(Value::Nil, IntoValue::into_value)
    }
}

/// The most nested structs a default value has: as deep as script values
/// may nest.
const MAX_DEFAULT_DEPTH: usize = 32;
/// The most structs one default value builds.
const MAX_DEFAULT_STRUCTS: usize = 4096;

/// [`Value::default_of`], bounded: the struct definitions come from a table
/// file (user input), which may define a struct that contains itself or
/// structs that each hold several of the next. The field that closes a loop,
/// and any struct past the depth or count bound, defaults to nil, so no
/// table file makes a default infinite or exponentially large.
fn default_in(
    ty: &Type,
    structs: &crate::types::StructRegistry,
    building: &mut Vec<Rc<str>>,
    budget: &mut usize,
) -> Value {
    match ty {
        Type::Any | Type::Nil | Type::Object => Value::Nil,
        Type::Bool => Value::Bool(false),
        Type::Int => Value::Int(0),
        Type::Float => Value::Float(0.0),
        Type::String => Value::str(""),
        Type::Array(_) => Value::array(Vec::new()),
        Type::Struct(name) => {
            if *budget == 0 || building.len() >= MAX_DEFAULT_DEPTH || building.contains(name) {
                return Value::Nil;
            }
            *budget -= 1;
            building.push(name.clone());
            let fields = structs
                .all_fields(name)
                .into_iter()
                .map(|f| {
                    let value = default_in(&f.ty, structs, building, budget);
                    (Rc::from(f.name.as_str()), value)
                })
                .collect();
            building.pop();
            Value::structure(StructValue {
                name: name.clone(),
                fields,
            })
        }
    }
}

/// Two element types one array holds: it has no one type to record, and
/// matches none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("array mixing {first} and {other}")]
pub struct Mixed {
    pub first: Type,
    pub other: Type,
}

/// The one type values of `a` and of `b` both match, if any: equal types;
/// an int where floats are (the one conversion); an empty array's `any`
/// element beside anything.
fn unify(a: &Type, b: &Type) -> Option<Type> {
    match (a, b) {
        _ if a == b => Some(a.clone()),
        (Type::Any, other) | (other, Type::Any) => Some(other.clone()),
        (Type::Int, Type::Float) | (Type::Float, Type::Int) => Some(Type::Float),
        (Type::Array(x), Type::Array(y)) => unify(x, y).map(|t| Type::Array(Box::new(t))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_converts_to_float_but_not_back() {
        assert_eq!(f64::from_value(&Value::Int(3)), Some(3.0));
        assert_eq!(i64::from_value(&Value::Float(3.0)), None);
    }

    #[test]
    fn value_types_are_inferred_from_values() {
        assert_eq!(Value::Int(1).type_of(), Type::Int);
        assert_eq!(Value::Float(1.0).type_of(), Type::Float);
        let item = StructValue::new("Item").with("id", 1i64);
        assert_eq!(
            Value::structure(item.clone()).type_of(),
            Type::Struct("Item".into())
        );
        assert_eq!(
            Value::array(vec![Value::structure(item)])
                .type_of()
                .to_string(),
            "array<Item>"
        );
    }

    #[test]
    fn an_array_has_the_type_its_elements_share_or_says_what_it_mixes() {
        let array = |items: Vec<Value>| Value::array(items);
        let ints_and_floats = array(vec![Value::Int(1), Value::Float(2.5)]);
        assert_eq!(ints_and_floats.kind_name(), "array<float>");
        let nested = array(vec![array(vec![]), array(vec![Value::Int(1)])]);
        assert_eq!(nested.kind_name(), "array<array<int>>");
        let mixed = array(vec![Value::Int(1), Value::str("a")]);
        assert_eq!(mixed.kind_name(), "array mixing int and string");
        assert_eq!(mixed.type_of().to_string(), "array<int>", "by its first");
        let with_nil = array(vec![Value::Int(1), Value::Nil]);
        assert_eq!(with_nil.kind_name(), "array mixing int and nil");
        let deep = array(vec![array(vec![Value::Bool(true), Value::Int(1)])]);
        assert_eq!(deep.kind_name(), "array mixing bool and int");
    }
}
