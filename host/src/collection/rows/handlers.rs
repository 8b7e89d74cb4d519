//! The closures a row listener is: [`SlotHandler`] and [`EachRowHandler`]
//! for every tuple of members, with or without the [`Update`].

use crate::hub::Hub;
use crate::listener::ListenerError;
use crate::types::Type;
use crate::value::{StructValue, Value};

use super::{FromMember, RowArgs, RowReader, not_a_struct};
use crate::collection::mirror::{Mirror, compiled_rows};
use crate::collection::update::Update;

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
/// [`TableView::for_each`](crate::collection::TableView::for_each): `row: i32`, then
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
