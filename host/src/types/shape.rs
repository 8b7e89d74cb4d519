//! The row shape: the last struct row the signature check verified, so
//! that rows of the same shape are checked by position.

use std::rc::Rc;

use smallvec::SmallVec;

use crate::value::Value;

use super::{StructRegistry, Type};

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
    pub(super) element: Option<Rc<str>>,
    pub(super) name: Option<Rc<str>>,
    pub(super) fields: SmallVec<[ShapeField; 8]>,
}

/// One field of a [`RowShape`]: its name string, the value kinds its
/// declared type takes outright (a bit per [`Value`] variant: a field's
/// check is one mask test) and the type, for the values that need more
/// than their kind (a nested struct, an array).
#[derive(Debug)]
pub(super) struct ShapeField {
    pub(super) name: Rc<str>,
    pub(super) accepts: u16,
    pub(super) ty: Type,
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
pub(super) fn accepted_kinds(ty: &Type) -> u16 {
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
    pub(super) fn check(
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
