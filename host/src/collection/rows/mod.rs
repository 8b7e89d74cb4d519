//! Reading a row as positional members: the fast path and the reflective one.
//!
//! A row listener declares the first few members of the element struct, in
//! declaration order. Declaration order is the
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

use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::hub::Hub;
use crate::listener::ListenerError;
use crate::types::Type;
use crate::value::{StructValue, Value, shared_name};

mod handlers;
mod members;

pub use handlers::{EachRowHandler, KeptRows, SlotHandler, WithUpdate};
pub use members::{FromMember, RowArgs};

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
