//! Rows at compiled offsets: a Rust table kept beside its values.
//!
//! A table stored from Rust as a `Vec` of a [`Row`] type
//! ([`Hub::store_rows`](crate::Hub::store_rows)) keeps that `Vec` as its
//! *mirror*, next to the values the script faces, the diff and the replay
//! read. A visitor whose declared members line up with the element's
//! memory layout — at each position the field's very type (`&str` borrows a
//! `String` or `Rc<str>` field) — reads the mirror at the fields' offsets:
//! no tag, no name, no conversion per member.
//!
//! Correctness never depends on it. The values are built from the mirror's
//! own fields ([`Row::to_row_value`]), so both say the same; the mirror is
//! used only when its field names match the element's declared layout
//! position by position, when the declared member types line up with the
//! table's declared field types and with the fields' Rust types, and when
//! it has as many rows as the table; any write to the stored table (the
//! writer, a store of values) drops it. Otherwise the visitor takes the
//! value path (fast or reflective) as before.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::rc::Rc;

use crate::hub::Hub;
use crate::types::Type;
use crate::value::Value;

use super::rows::{Layout, RowArgs};

/// One field of a [`Row`]: its name (as the element struct declares it),
/// where it lies in the row and its Rust type.
#[derive(Debug, Clone, Copy)]
pub struct RowField {
    pub name: &'static str,
    pub offset: usize,
    pub type_id: TypeId,
}

impl RowField {
    /// A field described by an accessor, so that its type is the field's
    /// own (what [`table_row!`](crate::table_row) uses).
    pub fn of<R, F: 'static>(name: &'static str, offset: usize, _field: fn(&R) -> &F) -> Self {
        Self {
            name,
            offset,
            type_id: TypeId::of::<F>(),
        }
    }
}

/// A Rust struct whose `Vec` can be a table's mirror: its fields in the
/// element's declaration order, and its value as a row.
///
/// # Safety
///
/// Each [`RowField`] must name a field of `Self` at that offset whose type
/// has that `TypeId`, and [`Row::to_row_value`] must give a struct named
/// [`Row::NAME`] holding those fields' values under those names, in that
/// order. [`table_row!`](crate::table_row)
/// derives all of it from the struct, which is the way to implement it.
pub unsafe trait Row: 'static + Sized {
    /// The element struct's name in the signature table.
    const NAME: &'static str;
    /// The fields, in declaration order.
    fn fields() -> &'static [RowField];
    /// The row as the value the script faces read.
    fn to_row_value(&self) -> Value;
}

/// Implements [`Row`] for a struct from its name and its fields in
/// declaration order; the field types come from the struct itself and
/// must convert into values ([`IntoValue`](crate::IntoValue)) and have a
/// table type ([`FieldType`](crate::FieldType)).
///
/// It also implements [`StructType`](crate::StructType), so the struct
/// declares itself with the types of the fields named
/// ([`Hub::declare_struct`]). A struct that derives
/// [`Struct`](derive@crate::Struct) has that already: it says
/// `#[gantry(row)]` to be a row too, instead of `table_row!` (the two
/// would implement the same traits twice).
///
/// ```
/// use gantry_host::{Hub, Type};
///
/// #[derive(Clone)]
/// struct Item { id: i64, name: String, count: i64 }
/// gantry_host::table_row!(Item { id, name, count });
///
/// let hub = Hub::new();
/// hub.declare_struct::<Item>();
/// let table = hub.table();
/// let item = table.structs.get("Item").unwrap();
/// assert_eq!(item.fields[1].name, "name");
/// assert_eq!(item.fields[1].ty, Type::String);
/// ```
#[macro_export]
macro_rules! table_row {
    ($ty:ident { $($field:ident),+ $(,)? }) => {
        // SAFETY: the offsets and types come from the struct's own fields
        // (`offset_of!` and an accessor), and the value is built from the
        // same fields, under the same names, in the same order.
        unsafe impl $crate::collection::Row for $ty {
            const NAME: &'static str = stringify!($ty);
            fn fields() -> &'static [$crate::collection::RowField] {
                static FIELDS: ::std::sync::OnceLock<::std::vec::Vec<$crate::collection::RowField>> =
                    ::std::sync::OnceLock::new();
                FIELDS.get_or_init(|| ::std::vec![$(
                    $crate::collection::RowField::of(
                        stringify!($field),
                        ::std::mem::offset_of!($ty, $field),
                        |row: &$ty| &row.$field,
                    )
                ),+])
            }
            fn to_row_value(&self) -> $crate::Value {
                $crate::Value::structure(
                    $crate::StructValue::new($crate::value::shared_name(stringify!($ty)))
                    $(.with(
                        $crate::value::shared_name(stringify!($field)),
                        ::std::clone::Clone::clone(&self.$field),
                    ))+
                )
            }
        }

        impl $crate::typed::StructType for $ty {
            const NAME: &'static str = stringify!($ty);
            fn struct_def() -> $crate::StructDef {
                $crate::typed::struct_def("", ::std::vec![$(
                    $crate::Param::new(
                        stringify!($field),
                        $crate::typed::type_of_field(|row: &$ty| &row.$field),
                    )
                ),+])
            }
            fn declare_field_structs(table: &mut $crate::SignatureTable) {
                $($crate::typed::declare_field(|row: &$ty| &row.$field, table);)+
            }
        }

        impl $crate::typed::FieldType for $ty {
            fn ty() -> $crate::Type {
                $crate::typed::struct_type::<Self>()
            }
            fn declare_structs(table: &mut $crate::SignatureTable) {
                $crate::typed::declare_struct::<Self>(table)
            }
        }
    };
}

/// A table's rows as the Rust `Vec` they were stored from, type-erased.
pub struct Mirror {
    /// The `Rc<Vec<T>>`: keeps the rows where `base` points.
    rows: Rc<dyn Any>,
    base: *const u8,
    stride: usize,
    len: usize,
    element: Rc<str>,
    fields: &'static [RowField],
    /// The element's declared layout and how many leading fields it names
    /// as the Rust rows do, as of a hub epoch: a visit decides its plan
    /// without looking the element up each time.
    agreed: RefCell<Option<Agreed>>,
}

struct Agreed {
    epoch: u64,
    /// How many leading Rust fields are declared at the same position
    /// with their own type (all of them when the element is not declared:
    /// the values' order, the Rust rows' own, is the only order there is).
    fields: usize,
}

/// The type a Rust field of type `field` carries as a value, for the
/// types a member can read at a compiled offset (`FromValue::read_field`).
fn declared_by(field: TypeId) -> Option<Type> {
    let is = |t: TypeId| field == t;
    Some(
        if is(TypeId::of::<i64>()) || is(TypeId::of::<i32>()) || is(TypeId::of::<u32>()) {
            Type::Int
        } else if is(TypeId::of::<f64>()) || is(TypeId::of::<f32>()) {
            Type::Float
        } else if is(TypeId::of::<String>()) || is(TypeId::of::<Rc<str>>()) {
            Type::String
        } else if is(TypeId::of::<bool>()) {
            Type::Bool
        } else if is(TypeId::of::<crate::value::ObjectId>()) {
            Type::Object
        } else {
            return None;
        },
    )
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("element", &self.element)
            .field("len", &self.len)
            .finish()
    }
}

impl Mirror {
    /// The mirror of `rows`, and the values built from them.
    pub(crate) fn of<T: Row>(rows: Vec<T>) -> (Mirror, Vec<Value>) {
        let values = rows.iter().map(Row::to_row_value).collect();
        let rows = Rc::new(rows);
        let mirror = Mirror {
            base: rows.as_ptr().cast::<u8>(),
            stride: std::mem::size_of::<T>(),
            len: rows.len(),
            element: crate::value::shared_name(T::NAME),
            fields: T::fields(),
            rows,
            agreed: RefCell::new(None),
        };
        (mirror, values)
    }

    /// The rows, when they are `T`s.
    pub fn rows<T: Row>(&self) -> Option<&[T]> {
        self.rows.downcast_ref::<Vec<T>>().map(Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How members `A` are read at compiled offsets, if they line up with
    /// this element (see the module doc); `None` sends the visitor down
    /// the value path.
    pub(crate) fn plan<'a, A: RowArgs<'a>>(&self, hub: &Hub) -> Option<Plan> {
        let fields = self.fields.get(..A::LEN)?;
        let epoch = hub.inner.state.borrow().epoch;
        let mut agreed = self.agreed.borrow_mut();
        let agreed = match &mut *agreed {
            Some(agreed) if agreed.epoch == epoch => agreed,
            slot => slot.insert(self.agree(hub, epoch)),
        };
        if agreed.fields < A::LEN {
            return None;
        }
        // A member reads a field only as the field's own Rust type (or a
        // `&str` over a string), whose declared type the agreement
        // confirmed: the members line up with the declared types too.
        A::compiled_plan(fields)
    }

    /// Compares the Rust fields with the element's declared layout: the
    /// leading fields declared at the same position, under the same name,
    /// with the type their Rust type declares.
    #[cold]
    fn agree(&self, hub: &Hub, epoch: u64) -> Agreed {
        let layout = Layout::resolve(hub, &self.element);
        let fields = match &layout.names {
            Some(names) => names
                .iter()
                .zip(layout.types.iter())
                .zip(self.fields)
                .take_while(|((name, ty), field)| {
                    ***name == *field.name && declared_by(field.type_id).as_ref() == Some(*ty)
                })
                .count(),
            None => self.fields.len(),
        };
        Agreed { epoch, fields }
    }

    /// Calls `each(row, members)` for the rows of `rows` (cut to the
    /// table), read at `plan`'s offsets, until it returns `false`.
    #[inline]
    pub(crate) fn for_rows<'a, A: RowArgs<'a>>(
        &'a self,
        plan: &Plan,
        rows: std::ops::Range<usize>,
        mut each: impl FnMut(usize, A) -> bool,
    ) {
        // In locals, so that a visitor that writes memory does not make
        // the loop read them again.
        let (base, stride, plan) = (self.base, self.stride, *plan);
        for index in rows.start..rows.end.min(self.len) {
            // SAFETY: `index < len`, so the row lies inside the `Vec` that
            // `rows` keeps alive and never mutates; `plan` was made by
            // `Mirror::plan` from this element's fields, so each member is
            // read at its field's offset as the field's own type (see
            // `FromMember::read_compiled`), borrowed for `'a` at most.
            let args = unsafe { A::read_compiled(base.add(index * stride), &plan) };
            if !each(index, args) {
                break;
            }
        }
    }
}

/// Rows `rows` of `mirror` handed to `call` at compiled offsets, when the
/// members `A` line up with them (`None`, having called nothing, when they
/// do not); `call` says whether it took the row and whether to go on.
/// Returns whether any row was taken. What the kept row and slot listeners
/// use, decided per dispatch (the agreement is remembered per epoch).
#[inline]
pub(crate) fn compiled_rows<'a, A: RowArgs<'a>>(
    hub: &Hub,
    mirror: &'a Mirror,
    rows: std::ops::Range<usize>,
    mut call: impl FnMut(usize, A) -> bool,
) -> Option<bool> {
    let plan = mirror.plan::<A>(hub)?;
    let mut took = false;
    mirror.for_rows(&plan, rows, |index, args| {
        let went_on = call(index, args);
        took |= went_on;
        went_on
    });
    Some(took)
}

/// How a visitor's members are read from a mirror row: each member's field
/// offset and the way it reads that field (see `FromMember::compiled`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Plan {
    pub(crate) offsets: [usize; 8],
    pub(crate) ways: [u8; 8],
}
