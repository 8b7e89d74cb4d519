//! Listening to a collection: whole table, update only, one slot, every
//! changed row — typed for Rust, raw for the script faces.
//!
//! Every form registers an ordinary hub entry through `Hub::listen_raw`,
//! so lifetime (owner, handle, `times`, object destruction), order and tiers
//! work as for any listener, and a stored table is replayed on arrival.

use std::panic::Location;
use std::rc::Rc;

use crate::hub::{Hub, HubError, ListenSpec};
use crate::listener::{
    Callback, Entry, FeatureListener, ListenOptions, ListenerError, ListenerHandle, ListenerId,
    ListenerParams, MessageFn,
};
use crate::report::Report;
use crate::signature::{Role, Site};
use crate::source::Source;
use crate::trace::ListenerKind;
use crate::types::{Mismatch, Type};
use crate::value::{StructValue, Value};

use super::mirror::Mirror;
use super::rows::{EachRowHandler, KeptRows, RowPath, RowReader, SlotHandler};
use super::update::{Selector, Update};
use super::view::TableView;

/// A whole-table callback: the borrowed table and the update.
pub type TableFn = dyn Fn(&TableView<'_>, &Update) -> Result<(), ListenerError>;
/// A raw row callback for the script faces: `(row, item, update)`. `row < 0`
/// means `!row` is gone and `item` is a default-valued stand-in.
pub type RowFn = dyn Fn(i32, &Value, &Update) -> Result<(), ListenerError>;

type TypedRowFn = dyn Fn(&RowReader, &Hub, &StructValue, &Update) -> Result<(), ListenerError>;
/// The live rows of one range at once (`EachRowHandler::call_kept_rows`).
type TypedRangeFn =
    dyn Fn(&RowReader, &Hub, &[Value], usize, &mut Update, &mut KeptRows<'_>) -> bool;
/// The same rows from a table's Rust rows at compiled offsets, `None` when
/// the members do not line up with them (`call_kept_compiled`, and
/// `call_compiled_row` for a slot).
pub(crate) type TypedCompiledFn =
    dyn Fn(&Hub, &Mirror, std::ops::Range<usize>, &mut Update, &mut KeptRows<'_>) -> Option<bool>;

/// What a collection entry does when a table changes.
pub(crate) struct CollectionListen {
    pub selector: Selector,
    pub form: Form,
}

impl FeatureListener for CollectionListen {
    /// One that takes tables or messages does.
    fn takes_messages(&self) -> bool {
        matches!(self.form, Form::Either { .. })
    }

    /// A listener that takes tables or messages, for anything but a table
    /// (a table goes to the collection dispatch); `None` otherwise.
    #[inline]
    fn message_for(&self, args: &[Value]) -> Option<&Rc<MessageFn>> {
        match &self.form {
            Form::Either { message, .. } if super::dispatch::table_of(args).is_none() => {
                Some(message)
            }
            _ => None,
        }
    }

    /// A table sent on its key goes to it on the table path; anything
    /// else as a message, if it takes messages.
    fn called_by_plain_send(&self, table: bool) -> Option<bool> {
        Some(self.takes_messages() && !table)
    }

    fn listener_kind(&self, _entry: &Entry) -> ListenerKind {
        match &self.form {
            Form::Table(_) | Form::Either { .. } => ListenerKind::Table,
            Form::Row(_) => ListenerKind::Rows {
                slot: self.selector.slot,
                removal: self.selector.removal,
            },
        }
    }
}

pub(crate) enum Form {
    /// Whole table (or update only): once per dispatch.
    Table(Rc<TableFn>),
    /// A script listener registered before its key was known to carry a
    /// table, whose function takes one parameter more than a table message
    /// carries: a whole-table listener for a dispatch of a table, an
    /// ordinary listener for any other. What is sent decides, dispatch by
    /// dispatch (a table is recognised from the value, not declared).
    Either {
        table: Rc<TableFn>,
        message: Rc<MessageFn>,
    },
    /// A slot, or every changed row.
    Row(RowSink),
}

pub(crate) enum RowSink {
    Dynamic(Rc<RowFn>),
    Typed {
        reader: RowReader,
        /// One row: a slot, or a removed row's stand-in.
        call: Box<TypedRowFn>,
        /// The live rows of a range, for an every-row listener (a slot
        /// listener has none).
        range: Option<Box<TypedRangeFn>>,
        /// The live rows of a range (a slot: its row) from the table's
        /// Rust rows, when it has them.
        compiled: Box<TypedCompiledFn>,
    },
}

/// Options of a typed row listen.
#[derive(Debug, Clone, Default)]
pub struct RowOptions {
    pub listen: ListenOptions,
    /// Never take the fast path (for comparing the paths; correctness never
    /// depends on it).
    pub reflective_only: bool,
}

impl From<ListenOptions> for RowOptions {
    fn from(listen: ListenOptions) -> Self {
        Self {
            listen,
            reflective_only: false,
        }
    }
}

impl RowOptions {
    pub fn reflective_only(mut self) -> Self {
        self.reflective_only = true;
        self
    }
}

impl Hub {
    /// Listens to the whole table: a borrowed view (no copy) and the update.
    /// An identical re-store does not call it.
    #[track_caller]
    pub fn listen_table(
        &self,
        key: &str,
        scope: impl Into<Source>,
        options: ListenOptions,
        f: impl Fn(&TableView<'_>, &Update) + 'static,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let f: Rc<TableFn> = Rc::new(move |view: &TableView<'_>, update: &Update| {
            f(view, update);
            Ok(())
        });
        let id = self.listen_table_raw(key, scope.into(), options, Some(site), f)?;
        Ok(self.handle(id))
    }

    /// Listens to the update only: counts and ranges, no table.
    #[track_caller]
    pub fn listen_update(
        &self,
        key: &str,
        scope: impl Into<Source>,
        options: ListenOptions,
        f: impl Fn(&Update) + 'static,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let f: Rc<TableFn> = Rc::new(move |_: &TableView<'_>, update: &Update| {
            f(update);
            Ok(())
        });
        let id = self.listen_table_raw(key, scope.into(), options, Some(site), f)?;
        Ok(self.handle(id))
    }

    /// Listens to one slot (`n`, or [`with_removal`](super::with_removal)`(n)`)
    /// with the first few members of the row, optionally followed by
    /// `&Update`: `|id: i64, name: String|`, `|id: i64, u: &Update|`.
    /// The slot is a position, not an element: it keeps listening to
    /// whatever row stands there.
    #[track_caller]
    pub fn listen_slot<Args, H: for<'r> SlotHandler<'r, Args> + 'static>(
        &self,
        key: &str,
        scope: impl Into<Source>,
        index: i32,
        options: impl Into<RowOptions>,
        handler: H,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let options = options.into();
        let handler = Rc::new(handler);
        let one = handler.clone();
        let call: Box<TypedRowFn> =
            Box::new(move |reader, hub, item, update| one.call_row(reader, hub, item, update));
        let compiled: Box<TypedCompiledFn> = Box::new(move |hub, mirror, rows, update, _| {
            let row = rows.start;
            update.row = row as i32;
            handler
                .call_compiled_row(hub, mirror, row, update)
                .then_some(true)
        });
        self.listen_typed_rows(
            key,
            scope.into(),
            index,
            options,
            site,
            &<H as SlotHandler<'_, Args>>::member_types(),
            (call, None, compiled),
        )
    }

    /// Listens row by row: `|row: i32, id: i64, ...|`, optionally ending in
    /// `&Update`. `index` is usually [`ALL_ROWS`](super::ALL_ROWS) or
    /// [`ALL_ROWS_WITH_REMOVAL`](super::ALL_ROWS_WITH_REMOVAL); a slot index
    /// works too and passes its row.
    #[track_caller]
    pub fn listen_rows<Args, H: for<'r> EachRowHandler<'r, Args> + 'static>(
        &self,
        key: &str,
        scope: impl Into<Source>,
        index: i32,
        options: impl Into<RowOptions>,
        handler: H,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let options = options.into();
        let handler = Rc::new(handler);
        let one = handler.clone();
        let call: Box<TypedRowFn> =
            Box::new(move |reader, hub, item, update| one.call_row(reader, hub, item, update));
        let by_range = handler.clone();
        let range: Box<TypedRangeFn> = Box::new(move |reader, hub, rows, first, update, kept| {
            by_range.call_kept_rows(reader, hub, rows, first, update, kept)
        });
        let compiled: Box<TypedCompiledFn> = Box::new(move |hub, mirror, rows, update, kept| {
            handler.call_kept_compiled(hub, mirror, rows, update, kept)
        });
        self.listen_typed_rows(
            key,
            scope.into(),
            index,
            options,
            site,
            &<H as EachRowHandler<'_, Args>>::member_types(),
            (call, Some(range), compiled),
        )
    }

    /// The whole-table registration every face goes through. Returns the id;
    /// the caller decides about handles.
    /// Outside the crate, a script face reaches it through
    /// [`crate::face::Faced`].
    pub(crate) fn listen_table_raw(
        &self,
        key: &str,
        scope: Source,
        options: ListenOptions,
        site: Option<Site>,
        f: Rc<TableFn>,
    ) -> Result<ListenerId, HubError> {
        let listen = CollectionListen {
            selector: Selector::decode(super::ALL_ROWS),
            form: Form::Table(f),
        };
        self.listen_collection(key, scope, options, site, listen)
    }

    /// A script listener whose key is not known yet and whose function may
    /// be a whole-table listener (`f(items, update)`) or an ordinary one of
    /// two parameters: `table` is called for each dispatch of a table (the
    /// collection rules: diffs, full reloads, no call for an identical
    /// re-store), `message` for every other dispatch.
    /// Outside the crate, a script face reaches it through
    /// [`crate::face::Faced`].
    pub(crate) fn listen_table_or_message_raw(
        &self,
        key: &str,
        scope: Source,
        options: ListenOptions,
        site: Option<Site>,
        table: Rc<TableFn>,
        message: Rc<MessageFn>,
    ) -> Result<ListenerId, HubError> {
        let listen = CollectionListen {
            selector: Selector::decode(super::ALL_ROWS),
            form: Form::Either { table, message },
        };
        self.listen_collection(key, scope, options, site, listen)
    }

    /// The row registration for the script faces: `index` in the `~`
    /// encoding, `f(row, item, update)` with the item as a [`Value`], so no
    /// Rust element type is needed.
    /// Outside the crate, a script face reaches it through
    /// [`crate::face::Faced`].
    pub(crate) fn listen_rows_raw(
        &self,
        key: &str,
        scope: Source,
        index: i32,
        options: ListenOptions,
        site: Option<Site>,
        f: Rc<RowFn>,
    ) -> Result<ListenerId, HubError> {
        // A script's row listener declares no member types, but the key
        // must still carry a table, as for a typed one.
        self.check_members(key, &[], site.as_ref())?;
        let listen = CollectionListen {
            selector: Selector::decode(index),
            form: Form::Row(RowSink::Dynamic(f)),
        };
        self.listen_collection(key, scope, options, site, listen)
    }

    /// Which path a typed row listener reads rows on (decided on its first
    /// fire). `None` for unknown ids and other listeners.
    pub fn row_path(&self, id: ListenerId) -> Option<RowPath> {
        let state = self.inner.state.borrow();
        let entry = state.listeners.get(&id)?;
        match &entry.feature::<CollectionListen>()?.form {
            Form::Row(RowSink::Typed { reader, .. }) => Some(reader.path()),
            _ => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn listen_typed_rows(
        &self,
        key: &str,
        scope: Source,
        index: i32,
        options: RowOptions,
        site: Site,
        members: &[Type],
        (call, range, compiled): (
            Box<TypedRowFn>,
            Option<Box<TypedRangeFn>>,
            Box<TypedCompiledFn>,
        ),
    ) -> Result<ListenerHandle, HubError> {
        self.check_members(key, members, Some(&site))?;
        let listen = CollectionListen {
            selector: Selector::decode(index),
            form: Form::Row(RowSink::Typed {
                reader: RowReader::new(options.reflective_only),
                call,
                range,
                compiled,
            }),
        };
        let id = self.listen_collection(key, scope, options.listen, Some(site), listen)?;
        Ok(self.handle(id))
    }

    fn listen_collection(
        &self,
        key: &str,
        scope: Source,
        options: ListenOptions,
        site: Option<Site>,
        listen: CollectionListen,
    ) -> Result<ListenerId, HubError> {
        let mut spec = ListenSpec::message(
            scope,
            options,
            ListenerParams::Dynamic,
            Rc::new(|_: &crate::hub::Message<'_>| Ok(())),
        );
        // One that may take messages takes requests' responders too.
        spec.wants_responder = matches!(listen.form, Form::Either { .. });
        spec.callback = Callback::Feature(Rc::new(listen));
        spec.site = site;
        self.listen_raw(key, spec)
    }

    /// The compatibility rule for row members: a prefix of the element's
    /// fields, by type. Checked when the key is known to carry a table.
    fn check_members(
        &self,
        key: &str,
        members: &[Type],
        site: Option<&Site>,
    ) -> Result<(), HubError> {
        if !self.is_checked() {
            return Ok(());
        }
        let failure = {
            let state = self.inner.state.borrow();
            let Some(entry) = state.table.get(key) else {
                return Ok(());
            };
            match entry.params.as_slice() {
                [] => None,
                [param] => match param.ty.struct_array_element() {
                    Some(element) => {
                        let fields: Vec<Type> = state
                            .table
                            .structs
                            .all_fields(element)
                            .into_iter()
                            .map(|p| p.ty)
                            .collect();
                        if state.table.structs.get(element).is_none() {
                            None
                        } else {
                            state.table.structs.check_prefix(members, &fields).err()
                        }
                    }
                    None if param.ty == Type::Any => None,
                    // An observed nil says nothing yet (the first real value
                    // narrows it).
                    None if param.ty == Type::Nil
                        && entry.origin != crate::signature::Origin::Declared =>
                    {
                        None
                    }
                    None => Some(not_a_table(&param.ty.to_string())),
                },
                more => Some(not_a_table(&format!("{} parameters", more.len()))),
            }
        };
        match failure {
            None => Ok(()),
            Some(mismatch) => {
                self.report(Report::ListenRejected {
                    key: key.to_owned(),
                    position: mismatch.position,
                    expected: mismatch.expected.clone(),
                    got: mismatch.got.clone(),
                    site: site.cloned(),
                });
                Err(HubError::ListenRejected {
                    key: key.to_owned(),
                    mismatch,
                })
            }
        }
    }

    fn handle(&self, id: ListenerId) -> ListenerHandle {
        ListenerHandle {
            hub: self.downgrade(),
            id,
        }
    }
}

fn not_a_table(got: &str) -> Mismatch {
    Mismatch {
        position: 0,
        expected: "one array of structs (a collection)".to_owned(),
        got: got.to_owned(),
    }
}
