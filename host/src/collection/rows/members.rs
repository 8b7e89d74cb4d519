//! The members a row listener declares: one [`FromMember`] each, read
//! by name or at compiled offsets, as a tuple ([`RowArgs`]).

use std::any::TypeId;
use std::rc::Rc;

use crate::listener::ListenerError;
use crate::types::Type;
use crate::value::{FromValue, Value};

use crate::collection::mirror::{Plan, RowField};

/// One member a row visitor declares: any [`FromValue`] type (a copy of
/// the member), or a borrow of the row's own value — `&str`, `&Value` —
/// where the rows outlive the call (a [`TableView`](crate::collection::TableView)'s
/// `for_each` and `visit_row`). A borrow costs no copy and no reference
/// count per row, as a C++ visitor's `const&` parameters do; a listener the
/// hub keeps (`listen_rows`, `listen_slot`) must take owned members.
///
/// ```
/// # use gantry_host::{Hub, Value, StructValue, collection::TableView};
/// let hub = Hub::new();
/// let rows = vec![Value::structure(StructValue::new("Item").with("id", 1i64).with("name", "axe"))];
/// let longest = std::cell::Cell::new(0);
/// TableView::new(&hub, &rows)
///     .for_each(|_row: i32, _id: i64, name: &str| longest.set(longest.get().max(name.len())))
///     .unwrap();
/// # assert_eq!(longest.get(), 3);
/// ```
///
/// A kept listener outlives the rows it is called with, so it cannot
/// borrow from them:
///
/// ```compile_fail
/// # use gantry_host::{Hub, Source, ALL_ROWS, ListenOptions};
/// let hub = Hub::new();
/// hub.listen_rows("Inv.Items", Source::Global, ALL_ROWS, ListenOptions::default(),
///     |_row: i32, _id: i64, _name: &str| {});
/// ```
pub trait FromMember<'a>: Sized {
    /// The type this member declares, for the compatibility check.
    fn declared_type() -> Type;
    /// `None` when the value is not of the declared type.
    fn from_member(value: &'a Value) -> Option<Self>;
    /// How this member reads a Rust row field of type `field` at a compiled
    /// offset (a table's mirror, see [`mirror`](crate::collection::mirror)), if it can: the
    /// field's very type, or for `&str` a `String` or `Rc<str>` field.
    #[doc(hidden)]
    fn compiled(_field: TypeId) -> Option<u8> {
        None
    }
    /// Reads a field [`FromMember::compiled`] accepted as `way`.
    ///
    /// # Safety
    ///
    /// `field` points to a live field of the type accepted as `way`, which
    /// lives (unmoved and unchanged) for `'a`.
    #[doc(hidden)]
    unsafe fn read_compiled(_field: *const u8, _way: u8) -> Self {
        unreachable!("read_compiled without compiled")
    }
}

impl<T: FromValue> FromMember<'_> for T {
    #[inline(always)]
    fn declared_type() -> Type {
        <T as FromValue>::declared_type()
    }
    #[inline(always)]
    fn from_member(value: &Value) -> Option<Self> {
        T::from_value(value)
    }
    #[inline]
    fn compiled(field: TypeId) -> Option<u8> {
        T::compiled_field(field)
    }
    #[inline(always)]
    unsafe fn read_compiled(field: *const u8, way: u8) -> Self {
        // SAFETY: passed on from the caller.
        unsafe { T::read_field(field, way) }
    }
}

impl<'a> FromMember<'a> for &'a str {
    #[inline(always)]
    fn declared_type() -> Type {
        Type::String
    }
    #[inline(always)]
    fn from_member(value: &'a Value) -> Option<Self> {
        match value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    #[inline]
    fn compiled(field: TypeId) -> Option<u8> {
        if field == TypeId::of::<String>() {
            Some(0)
        } else if field == TypeId::of::<Rc<str>>() {
            Some(1)
        } else {
            None
        }
    }
    #[inline(always)]
    unsafe fn read_compiled(field: *const u8, way: u8) -> Self {
        // SAFETY: the caller's contract: a live field of the type `way`
        // names, living for 'a.
        unsafe {
            if way == 0 {
                (*field.cast::<String>()).as_str()
            } else {
                &*field.cast::<Rc<str>>()
            }
        }
    }
}

/// Any member, as it is in the row.
impl<'a> FromMember<'a> for &'a Value {
    #[inline(always)]
    fn declared_type() -> Type {
        Type::Any
    }
    #[inline(always)]
    fn from_member(value: &'a Value) -> Option<Self> {
        Some(value)
    }
}

/// The members a row listener declares: a tuple of [`FromMember`] types,
/// borrowing from rows that live for `'a`.
pub trait RowArgs<'a>: Sized {
    /// How many members are declared.
    const LEN: usize;
    /// The declared member types, for the compatibility check.
    fn types() -> Vec<Type>;
    /// Whether the declared types line up with the element's first `LEN`
    /// member types (equal, or declared as any).
    fn lines_up(types: &[Type]) -> bool;
    /// Fast path: members at positions `0..LEN` of the row's fields.
    fn read_at(fields: &'a [(Rc<str>, Value)]) -> Option<Self>;
    /// Reflective path: member `i` fetched by `get(i)`. Errors name the
    /// position and what was found.
    fn read_by(get: impl Fn(usize) -> Option<&'a Value>) -> Result<Self, ListenerError>;
    /// How these members read a mirror row's first `LEN` fields at their
    /// offsets, if every one can (see [`FromMember::compiled`]).
    #[doc(hidden)]
    fn compiled_plan(fields: &[RowField]) -> Option<Plan>;
    /// Reads the members of the mirror row at `row` by `plan`.
    ///
    /// # Safety
    ///
    /// `plan` was made by [`RowArgs::compiled_plan`] from the fields of the
    /// row type `row` points to, and that row lives unchanged for `'a`.
    #[doc(hidden)]
    unsafe fn read_compiled(row: *const u8, plan: &Plan) -> Self;
}

#[inline(always)]
fn member<'v, T: FromMember<'v>>(
    get: &impl Fn(usize) -> Option<&'v Value>,
    position: usize,
) -> Result<T, ListenerError> {
    match get(position) {
        Some(value) => match T::from_member(value) {
            Some(member) => Ok(member),
            None => Err(member_mismatch(position, T::declared_type(), Some(value))),
        },
        None => Err(member_mismatch(position, T::declared_type(), None)),
    }
}

/// Why member `position` could not be read as `declared` (kept out of the
/// row loop).
#[cold]
#[inline(never)]
fn member_mismatch(position: usize, declared: Type, found: Option<&Value>) -> ListenerError {
    ListenerError::new(match found {
        Some(value) => format!(
            "member {}: expected {declared}, got {}",
            position + 1,
            value.kind_name()
        ),
        None => format!(
            "member {}: expected {declared}, the row has no such member",
            position + 1
        ),
    })
}

macro_rules! row_args {
    ($n:literal; $($name:ident $idx:tt),*) => {
        impl<'a, $($name: FromMember<'a>),*> RowArgs<'a> for ($($name,)*) {
            const LEN: usize = $n;
            fn types() -> Vec<Type> {
                vec![$($name::declared_type()),*]
            }
            #[allow(unused_variables)]
            fn lines_up(types: &[Type]) -> bool {
                let Some(types) = types.get(..$n) else {
                    return false;
                };
                true $(&& {
                    let declared = $name::declared_type();
                    declared == types[$idx] || declared == Type::Any
                })*
            }
            #[inline]
            #[allow(unused_variables)]
            fn read_at(fields: &'a [(Rc<str>, Value)]) -> Option<Self> {
                let fields = fields.get(..$n)?;
                Some(($($name::from_member(&fields[$idx].1)?,)*))
            }
            #[inline(always)]
            #[allow(unused_variables)]
            fn read_by(get: impl Fn(usize) -> Option<&'a Value>) -> Result<Self, ListenerError> {
                Ok(($(member::<$name>(&get, $idx)?,)*))
            }
            #[allow(unused_variables, unused_mut)]
            fn compiled_plan(fields: &[RowField]) -> Option<Plan> {
                let fields = fields.get(..$n)?;
                let mut plan = Plan::default();
                $(
                    plan.offsets[$idx] = fields[$idx].offset;
                    plan.ways[$idx] = $name::compiled(fields[$idx].type_id)?;
                )*
                Some(plan)
            }
            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit)]
            unsafe fn read_compiled(row: *const u8, plan: &Plan) -> Self {
                // SAFETY: the caller's contract; each member is read at its
                // own field's offset in the way the plan chose for it.
                unsafe { ($($name::read_compiled(row.add(plan.offsets[$idx]), plan.ways[$idx]),)*) }
            }
        }
    };
}

row_args!(0;);
row_args!(1; A 0);
row_args!(2; A 0, B 1);
row_args!(3; A 0, B 1, C 2);
row_args!(4; A 0, B 1, C 2, D 3);
row_args!(5; A 0, B 1, C 2, D 3, E 4);
row_args!(6; A 0, B 1, C 2, D 3, E 4, F 5);
row_args!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
