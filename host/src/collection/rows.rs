//! Reading a row as positional members: the fast path and the reflective one.
//!
//! A row listener declares the first few members of the element struct, in
//! declaration order (reference `001_…` §2). Declaration order is the
//! struct's definition in the signature table (fields serde skips take no
//! position there). Two ways to read them:
//!
//! - *reflective*: each declared member is looked up in the row by its
//!   declared name and converted by the compatibility rule (an int is
//!   accepted for a float). Always right, whatever order the row's fields
//!   happen to be in.
//! - *fast*: the members are read at compiled positions of the row's field
//!   list with an exact variant read. Allowed only when the listener's
//!   declared types equal the element's field types position by position and
//!   the row's layout is the declared one.
//!
//! The choice is made on the first row read and remembered (per element
//! struct), as §13 asks: a layout mismatch (a row whose fields are in another
//! order, a member declared as float over an int field) only sends the
//! reader back to the reflective path. Each fast read still confirms the
//! row's layout, so correctness never depends on the shortcut.

use std::any::TypeId;
use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::hub::Hub;
use crate::listener::ListenerError;
use crate::types::Type;
use crate::value::{FromValue, StructValue, Value, shared_name};

use super::mirror::{Mirror, Plan, RowField, compiled_rows};
use super::update::Update;

/// Which path a reader took for the rows it has read so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowPath {
    /// No row read yet.
    Undecided,
    /// Compiled offsets of the table's Rust rows (its mirror, see
    /// [`super::mirror`]).
    Compiled,
    /// Compiled positions of the rows' values.
    Fast,
    /// By declared name, with conversion.
    Reflective,
}

/// The declared member sequence of one element struct.
#[derive(Debug)]
pub(crate) struct Layout {
    pub element: Rc<str>,
    /// `None` when the struct is not in the registry: the row's own field
    /// order is then the only order there is.
    pub names: Option<Box<[Rc<str>]>>,
    pub types: Box<[Type]>,
}

/// Resolved layouts by element struct, each with the hub epoch it was
/// resolved in: a reader made per call (a view's `for_each`) decides
/// without rebuilding the member list from the registry each time.
pub(crate) type LayoutCache = RefCell<FxHashMap<Rc<str>, (u64, Rc<Layout>)>>;

impl Layout {
    /// The element's layout as the table declares it now.
    pub(crate) fn resolve(hub: &Hub, element: &Rc<str>) -> Rc<Layout> {
        let state = hub.inner.state.borrow();
        let epoch = state.epoch;
        if let Ok(cache) = hub.inner.collections.layouts.try_borrow()
            && let Some((at, layout)) = cache.get(element)
            && *at == epoch
        {
            return layout.clone();
        }
        let structs = &state.table.structs;
        let layout = Rc::new(if structs.get(element).is_none() {
            Layout {
                element: element.clone(),
                names: None,
                types: Box::default(),
            }
        } else {
            let fields = structs.all_fields(element);
            Layout {
                element: element.clone(),
                names: Some(fields.iter().map(|f| shared_name(&f.name)).collect()),
                types: fields.into_iter().map(|f| f.ty).collect(),
            }
        });
        if let Ok(mut cache) = hub.inner.collections.layouts.try_borrow_mut() {
            // Bounded by the structs the table knows.
            if cache.len() > state.table.structs.defs.len() + 16 {
                cache.clear();
            }
            cache.insert(element.clone(), (epoch, layout.clone()));
        }
        layout
    }
    /// Whether a row's leading `fields` carry the declared member names,
    /// in declaration order (by address where they are shared, else by
    /// text).
    fn declares(&self, fields: &[(Rc<str>, Value)]) -> bool {
        self.names.as_deref().is_some_and(|declared| {
            declared.len() >= fields.len()
                && fields
                    .iter()
                    .zip(declared)
                    .all(|((got, _), want)| same_name(got, want))
        })
    }
}

#[inline]
fn same_name(a: &Rc<str>, b: &Rc<str>) -> bool {
    Rc::ptr_eq(a, b) || **a == **b
}

/// One member a row visitor declares: any [`FromValue`] type (a copy of
/// the member), or a borrow of the row's own value — `&str`, `&Value` —
/// where the rows outlive the call (a [`TableView`](super::TableView)'s
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
    /// offset (a table's mirror, see [`super::mirror`]), if it can: the
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

/// The member names of the last row the fast path confirmed.
type Confirmed = SmallVec<[Rc<str>; 7]>;

/// What a reader decided, for which element struct.
enum Decision {
    Undecided,
    Fast {
        layout: Rc<Layout>,
        /// The member names of the last row confirmed to have the declared
        /// layout. Rows built by one serializer share their name strings,
        /// so the next row is confirmed by comparing pointers instead of
        /// text; holding the names keeps their addresses from being reused
        /// by other strings.
        confirmed: Confirmed,
    },
    Reflective(Rc<Layout>),
}

/// Reads rows for one listener (or one `for_each`), remembering its
/// fast-or-reflective decision per element struct.
pub struct RowReader {
    decision: RefCell<Decision>,
    force_reflective: bool,
    /// The last rows were read from the table's Rust rows at compiled
    /// offsets (a kept listener's dispatch), not through the decision.
    compiled: std::cell::Cell<bool>,
}

impl RowReader {
    pub(crate) fn new(force_reflective: bool) -> Self {
        Self {
            decision: RefCell::new(Decision::Undecided),
            force_reflective,
            compiled: std::cell::Cell::new(false),
        }
    }

    /// Whether this reader keeps to the reflective path (a listener's
    /// `reflective_only` option): it never takes the compiled one either.
    pub(crate) fn reflective_only(&self) -> bool {
        self.force_reflective
    }

    /// Notes whether the last rows were read at compiled offsets.
    pub(crate) fn note_compiled(&self, compiled: bool) {
        self.compiled.set(compiled);
    }

    /// The path the last rows were read on.
    pub fn path(&self) -> RowPath {
        if self.compiled.get() {
            return RowPath::Compiled;
        }
        match &*self.decision.borrow() {
            Decision::Undecided => RowPath::Undecided,
            Decision::Fast { .. } => RowPath::Fast,
            Decision::Reflective(_) => RowPath::Reflective,
        }
    }

    /// Reads the declared members of `item`.
    #[inline]
    pub(crate) fn read<'a, A: RowArgs<'a>>(
        &self,
        hub: &Hub,
        item: &'a StructValue,
    ) -> Result<A, ListenerError> {
        {
            // Nothing below calls out of the reader, so the borrow cannot
            // meet a nested read.
            let mut decision = self.decision.borrow_mut();
            match &mut *decision {
                Decision::Fast { layout, confirmed } if same_name(&layout.element, &item.name) => {
                    return match fast_read::<A>(layout, confirmed, item) {
                        Some(args) => Ok(args),
                        None => reflective_read::<A>(layout, item),
                    };
                }
                Decision::Reflective(layout) if same_name(&layout.element, &item.name) => {
                    return reflective_read::<A>(layout, item);
                }
                _ => {}
            }
        }
        self.decide::<A>(hub, item);
        self.read::<A>(hub, item)
    }

    /// Reads every row of a table in turn, handing each to `each` with its
    /// index. For a reader made for this one call (a view's `for_each`),
    /// so the decision lives in locals: per element struct, whether the
    /// fast path applies (the declared types line up); per row, a row whose
    /// element and member names are the last confirmed row's, by address,
    /// costs its loads, compares and reads. Any other row is confirmed by
    /// text against the declared layout (and its addresses kept for the
    /// next rows) or read reflectively. The path reported afterwards is the
    /// last row's.
    #[inline]
    pub(crate) fn read_rows<'a, A: RowArgs<'a>>(
        &self,
        hub: &Hub,
        rows: &'a [Value],
        mut each: impl FnMut(usize, A) -> Result<(), ListenerError>,
    ) -> Result<(), ListenerError> {
        let mut layout: Option<Rc<Layout>> = None;
        let mut fast = false;
        // The element and member names of the last row confirmed, by address.
        let mut element = std::ptr::null::<u8>();
        let mut names = [std::ptr::null::<u8>(); 8];
        for (index, value) in rows.iter().enumerate() {
            let Value::Struct(item) = value else {
                return Err(not_a_struct(index, value));
            };
            if fast
                && item.name.as_ptr() == element
                && let Some(fields) = item.fields.get(..A::LEN)
                && fields
                    .iter()
                    .zip(&names)
                    .all(|((name, _), &seen)| name.as_ptr() == seen)
                && let Some(args) = A::read_at(fields)
            {
                each(index, args)?;
                continue;
            }
            let current = match &layout {
                Some(current) if same_name(&current.element, &item.name) => current,
                _ => {
                    let resolved = Layout::resolve(hub, &item.name);
                    fast = !self.force_reflective
                        && resolved
                            .names
                            .as_ref()
                            .is_some_and(|names| A::LEN <= names.len())
                        && A::lines_up(&resolved.types);
                    element = std::ptr::null();
                    tracing::trace!(element = %item.name, fast, "row reader decided");
                    layout.insert(resolved)
                }
            };
            let confirmed = fast
                .then(|| item.fields.get(..A::LEN))
                .flatten()
                .filter(|fields| current.declares(fields))
                .and_then(|fields| Some((fields, A::read_at(fields)?)));
            let args = match confirmed {
                Some((fields, args)) => {
                    element = item.name.as_ptr();
                    for (slot, (name, _)) in names.iter_mut().zip(fields) {
                        *slot = name.as_ptr();
                    }
                    args
                }
                None => reflective_read::<A>(current, item).map_err(|e| e.at_row(index))?,
            };
            each(index, args)?;
        }
        if let Some(layout) = layout {
            // The path reported is the last row's, asked again here rather
            // than tracked through the loop.
            let last_fast = fast && reads_fast::<A>(&layout, rows.last());
            *self.decision.borrow_mut() = if last_fast {
                Decision::Fast {
                    layout,
                    confirmed: SmallVec::new(),
                }
            } else {
                Decision::Reflective(layout)
            };
        }
        Ok(())
    }

    /// First fire for this element struct: do the listener's declared types
    /// line up with the element, and does the row have the declared layout?
    #[cold]
    fn decide<'a, A: RowArgs<'a>>(&self, hub: &Hub, item: &StructValue) {
        let layout = Layout::resolve(hub, &item.name);
        let fast = !self.force_reflective
            && A::lines_up(&layout.types)
            && item
                .fields
                .get(..A::LEN)
                .is_some_and(|fields| layout.declares(fields));
        tracing::trace!(element = %item.name, fast, "row reader decided");
        *self.decision.borrow_mut() = if fast {
            Decision::Fast {
                layout,
                confirmed: SmallVec::new(),
            }
        } else {
            Decision::Reflective(layout)
        };
    }
}

/// Whether `row` reads on the fast path under `layout` (its declared
/// members' names and kinds): asked once per view, after its rows.
#[cold]
#[inline(never)]
fn reads_fast<'a, A: RowArgs<'a>>(layout: &Layout, row: Option<&'a Value>) -> bool {
    let Some(fields) = row
        .and_then(Value::as_struct)
        .and_then(|item| item.fields.get(..A::LEN))
    else {
        return false;
    };
    layout.declares(fields) && A::read_at(fields).is_some()
}

/// Compiled positions, after confirming the row's names at those positions
/// (by pointer against the last confirmed row, else by text against the
/// declared layout).
#[inline]
fn fast_read<'a, A: RowArgs<'a>>(
    layout: &Layout,
    confirmed: &mut Confirmed,
    item: &'a StructValue,
) -> Option<A> {
    let fields = item.fields.get(..A::LEN)?;
    let known = confirmed.len() == A::LEN
        && fields
            .iter()
            .zip(confirmed.iter())
            .all(|((got, _), seen)| Rc::ptr_eq(got, seen));
    if !known {
        confirm(layout, confirmed, fields)?;
    }
    A::read_at(fields)
}

/// A row whose names are not the last confirmed ones: compare the text.
#[cold]
fn confirm(layout: &Layout, confirmed: &mut Confirmed, fields: &[(Rc<str>, Value)]) -> Option<()> {
    if !layout.declares(fields) {
        return None;
    }
    confirmed.clear();
    confirmed.extend(fields.iter().map(|(name, _)| name.clone()));
    Some(())
}

/// By declared name (or, for an unknown struct, the row's own order).
#[inline]
fn reflective_read<'a, A: RowArgs<'a>>(
    layout: &Layout,
    item: &'a StructValue,
) -> Result<A, ListenerError> {
    match &layout.names {
        Some(names) => A::read_by(|i| {
            let name = names.get(i)?;
            // Where the declaration puts it first (rows usually follow the
            // declaration), then anywhere.
            match item.fields.get(i) {
                Some((n, v)) if same_name(n, name) => Some(v),
                _ => item
                    .fields
                    .iter()
                    .find(|(n, _)| same_name(n, name))
                    .map(|(_, v)| v),
            }
        }),
        None => A::read_by(|i| item.fields.get(i).map(|(_, v)| v)),
    }
}

/// The failure a row that is not a struct is reported as.
#[cold]
pub(crate) fn not_a_struct(row: usize, value: &Value) -> ListenerError {
    ListenerError::new(format!("row {row} is {}, not a struct", value.kind_name()))
}

/// Marks a typed row closure whose last parameter is `&Update`.
pub struct WithUpdate;

/// A closure usable as a slot listener: the first few members of the row,
/// optionally followed by `&Update`. `Args` is inferred from the closure;
/// `'a` is how long the rows it reads live (members may borrow for that
/// long, see [`FromMember`]).
pub trait SlotHandler<'a, Args> {
    /// The declared member types.
    fn member_types() -> Vec<Type>;
    #[doc(hidden)]
    fn call_row(
        &self,
        reader: &RowReader,
        hub: &Hub,
        item: &'a StructValue,
        update: &Update,
    ) -> Result<(), ListenerError>;
    /// Row `row` of a table's Rust rows at compiled offsets, when the
    /// members line up with them; `false`, having called nothing, when
    /// they do not.
    #[doc(hidden)]
    fn call_compiled_row(&self, hub: &Hub, mirror: &'a Mirror, row: usize, update: &Update)
    -> bool;
}

/// A closure usable as an every-row listener or with
/// [`TableView::for_each`](super::TableView::for_each): `row: i32`, then
/// the first few members, optionally followed by `&Update`. `'a` as for
/// [`SlotHandler`].
pub trait EachRowHandler<'a, Args> {
    fn member_types() -> Vec<Type>;
    #[doc(hidden)]
    fn call_row(
        &self,
        reader: &RowReader,
        hub: &Hub,
        item: &'a StructValue,
        update: &Update,
    ) -> Result<(), ListenerError>;
    /// Every row of `rows` in turn (a view's `for_each`, with a reader of
    /// its own); a closure that takes the update sees `update.row` set to
    /// each row.
    #[doc(hidden)]
    fn call_rows(
        &self,
        reader: &RowReader,
        hub: &Hub,
        rows: &'a [Value],
        update: &mut Update,
    ) -> Result<(), ListenerError>;
    /// Every row of a table's Rust mirror at compiled offsets, when the
    /// members line up with it (see [`Mirror::plan`]); `false`, having
    /// called nothing, when they do not. A closure that takes the update
    /// sees a full reload of the mirror's rows.
    #[doc(hidden)]
    fn call_compiled(&self, hub: &Hub, mirror: &'a Mirror) -> bool;
    /// [`EachRowHandler::call_kept_rows`] over a table's Rust rows at
    /// compiled offsets, when the members line up with them (`None`,
    /// having called nothing, when they do not).
    #[doc(hidden)]
    fn call_kept_compiled(
        &self,
        hub: &Hub,
        mirror: &'a Mirror,
        rows: std::ops::Range<usize>,
        update: &mut Update,
        kept: &mut KeptRows<'_>,
    ) -> Option<bool>;
    /// The live rows of one changed range, for a listener the hub keeps
    /// (see [`kept_rows`]). Returns whether a row was handed over at all.
    #[doc(hidden)]
    fn call_kept_rows(
        &self,
        reader: &RowReader,
        hub: &Hub,
        rows: &'a [Value],
        first: usize,
        update: &mut Update,
        kept: &mut KeptRows<'_>,
    ) -> bool;
}

/// What a kept row listener is checked against between two rows and where
/// its failures go (see [`EachRowHandler::call_kept_rows`]).
#[doc(hidden)]
pub struct KeptRows<'e> {
    pub(crate) entry: &'e crate::listener::Entry,
    pub(crate) fail: &'e mut dyn FnMut(ListenerError),
}

/// Hands the live rows of one range (`rows`, beginning at row `first`) to
/// a kept listener's `call`, one loop per range instead of one dynamic
/// call per row. Each row is read by the listener's own reader, with its
/// remembered decision; a row that cannot be read goes to `kept.fail` (a
/// row that is no struct named by its number) and the next one is read;
/// the rows stop as soon as the listener may no longer be called
/// (unlistened, used up or its owner gone during the last row).
#[inline]
pub(crate) fn kept_rows<'a, A: RowArgs<'a>>(
    reader: &RowReader,
    hub: &Hub,
    rows: &'a [Value],
    first: usize,
    update: &mut Update,
    kept: &mut KeptRows<'_>,
    mut call: impl FnMut(A, &Update),
) -> bool {
    let mut called = false;
    for (index, value) in rows.iter().enumerate() {
        if !kept.entry.callable() {
            break;
        }
        let row = first + index;
        update.row = row as i32;
        let read = match value {
            Value::Struct(item) => reader.read::<A>(hub, item),
            other => Err(not_a_struct(row, other)),
        };
        match read {
            Ok(args) => call(args, update),
            Err(e) => (kept.fail)(e.at_row(row)),
        }
        called = true;
    }
    called
}

macro_rules! handlers {
    ($($name:ident $idx:tt),*) => {
        impl<'a, Func, $($name: FromMember<'a>),*> SlotHandler<'a, ($($name,)*)> for Func
        where
            Func: Fn($($name),*),
        {
            fn member_types() -> Vec<Type> {
                <($($name,)*) as RowArgs<'a>>::types()
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_row(&self, reader: &RowReader, hub: &Hub, item: &'a StructValue, update: &Update)
                -> Result<(), ListenerError>
            {
                let ($($name,)*) = reader.read::<($($name,)*)>(hub, item)?;
                (self)($($name),*);
                Ok(())
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_compiled_row(&self, hub: &Hub, mirror: &'a Mirror, row: usize, update: &Update)
                -> bool
            {
                compiled_rows::<($($name,)*)>(hub, mirror, row..row + 1, |_, ($($name,)*)| {
                    (self)($($name),*);
                    true
                })
                .is_some()
            }
        }

        impl<'a, Func, $($name: FromMember<'a>),*> SlotHandler<'a, ($($name,)* WithUpdate,)> for Func
        where
            Func: Fn($($name,)* &Update),
        {
            fn member_types() -> Vec<Type> {
                <($($name,)*) as RowArgs<'a>>::types()
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_row(&self, reader: &RowReader, hub: &Hub, item: &'a StructValue, update: &Update)
                -> Result<(), ListenerError>
            {
                let ($($name,)*) = reader.read::<($($name,)*)>(hub, item)?;
                (self)($($name,)* update);
                Ok(())
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_compiled_row(&self, hub: &Hub, mirror: &'a Mirror, row: usize, update: &Update)
                -> bool
            {
                compiled_rows::<($($name,)*)>(hub, mirror, row..row + 1, |_, ($($name,)*)| {
                    (self)($($name,)* update);
                    true
                })
                .is_some()
            }
        }

        impl<'a, Func, $($name: FromMember<'a>),*> EachRowHandler<'a, ($($name,)*)> for Func
        where
            Func: Fn(i32, $($name),*),
        {
            fn member_types() -> Vec<Type> {
                <($($name,)*) as RowArgs<'a>>::types()
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_row(&self, reader: &RowReader, hub: &Hub, item: &'a StructValue, update: &Update)
                -> Result<(), ListenerError>
            {
                let ($($name,)*) = reader.read::<($($name,)*)>(hub, item)?;
                (self)(update.row, $($name),*);
                Ok(())
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_rows(&self, reader: &RowReader, hub: &Hub, rows: &'a [Value], update: &mut Update)
                -> Result<(), ListenerError>
            {
                reader.read_rows::<($($name,)*)>(hub, rows, |index, ($($name,)*)| {
                    (self)(index as i32, $($name),*);
                    Ok(())
                })
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_kept_rows(&self, reader: &RowReader, hub: &Hub, rows: &'a [Value], first: usize,
                update: &mut Update, kept: &mut KeptRows<'_>) -> bool
            {
                kept_rows::<($($name,)*)>(reader, hub, rows, first, update, kept,
                    |($($name,)*), update| (self)(update.row, $($name),*))
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_compiled(&self, hub: &Hub, mirror: &'a Mirror) -> bool {
                compiled_rows::<($($name,)*)>(hub, mirror, 0..mirror.len(), |index, ($($name,)*)| {
                    (self)(index as i32, $($name),*);
                    true
                })
                .is_some()
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_kept_compiled(&self, hub: &Hub, mirror: &'a Mirror, rows: std::ops::Range<usize>,
                update: &mut Update, kept: &mut KeptRows<'_>) -> Option<bool>
            {
                compiled_rows::<($($name,)*)>(hub, mirror, rows, |index, ($($name,)*)| {
                    // As `kept_rows`: not past a listener that went.
                    if !kept.entry.callable() {
                        return false;
                    }
                    update.row = index as i32;
                    (self)(update.row, $($name),*);
                    true
                })
            }
        }

        impl<'a, Func, $($name: FromMember<'a>),*> EachRowHandler<'a, ($($name,)* WithUpdate,)> for Func
        where
            Func: Fn(i32, $($name,)* &Update),
        {
            fn member_types() -> Vec<Type> {
                <($($name,)*) as RowArgs<'a>>::types()
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_row(&self, reader: &RowReader, hub: &Hub, item: &'a StructValue, update: &Update)
                -> Result<(), ListenerError>
            {
                let ($($name,)*) = reader.read::<($($name,)*)>(hub, item)?;
                (self)(update.row, $($name,)* update);
                Ok(())
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_rows(&self, reader: &RowReader, hub: &Hub, rows: &'a [Value], update: &mut Update)
                -> Result<(), ListenerError>
            {
                reader.read_rows::<($($name,)*)>(hub, rows, |index, ($($name,)*)| {
                    update.row = index as i32;
                    (self)(index as i32, $($name,)* &*update);
                    Ok(())
                })
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_kept_rows(&self, reader: &RowReader, hub: &Hub, rows: &'a [Value], first: usize,
                update: &mut Update, kept: &mut KeptRows<'_>) -> bool
            {
                kept_rows::<($($name,)*)>(reader, hub, rows, first, update, kept,
                    |($($name,)*), update| (self)(update.row, $($name,)* update))
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_compiled(&self, hub: &Hub, mirror: &'a Mirror) -> bool {
                let n = mirror.len() as i32;
                let mut update = Update::new(n, n, &[]);
                compiled_rows::<($($name,)*)>(hub, mirror, 0..mirror.len(), |index, ($($name,)*)| {
                    update.row = index as i32;
                    (self)(index as i32, $($name,)* &update);
                    true
                })
                .is_some()
            }
            #[inline]
            #[allow(unused_variables, non_snake_case)]
            fn call_kept_compiled(&self, hub: &Hub, mirror: &'a Mirror, rows: std::ops::Range<usize>,
                update: &mut Update, kept: &mut KeptRows<'_>) -> Option<bool>
            {
                compiled_rows::<($($name,)*)>(hub, mirror, rows, |index, ($($name,)*)| {
                    if !kept.entry.callable() {
                        return false;
                    }
                    update.row = index as i32;
                    (self)(update.row, $($name,)* &*update);
                    true
                })
            }
        }
    };
}

handlers!();
handlers!(A 0);
handlers!(A 0, B 1);
handlers!(A 0, B 1, C 2);
handlers!(A 0, B 1, C 2, D 3);
handlers!(A 0, B 1, C 2, D 3, E 4);
handlers!(A 0, B 1, C 2, D 3, E 4, F 5);
handlers!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
