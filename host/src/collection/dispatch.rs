//! Collection dispatch: the store path, the send (transient) path and the
//! replay to late listeners, all through one visitor.
//!
//! Collection listeners are ordinary hub entries (so owners, handles, `times`,
//! `order`, tiers and object destruction apply to them unchanged) whose
//! callback is a [`CollectionListen`]; the message deliverer skips them and
//! this module calls them, each in its place among the ordinary listeners
//! of the same dispatch (a [`Publish`] is the deliverer's
//! [`Interleaved`]): `order` holds across every listener of a dispatch.

use std::cell::OnceCell;
use std::rc::Rc;

use smallvec::SmallVec;

use crate::hub::seam::{Alone, Deliver, Interleaved, Place};
use crate::hub::{Gathered, Hub, Reached};
use crate::key::Key;
use crate::listener::{Entry, ListenerError};
use crate::report::Report;
use crate::types::Type;
use crate::value::{StructValue, Value};

use super::diff::diff_rows;
use super::listen::{CollectionListen, Form, RowSink, TypedCompiledFn};
use super::mirror::Mirror;
use super::rows::{KeptRows, RowReader};
use super::spans::Spans;
use super::tables::CollectionEntry;
use super::update::{ALL_ROWS, Selector, Update, should_wake};
use super::view::TableView;

/// The table a single-parameter message carries, when it is an array of
/// structs (recognised from the value, not from an entry point). The first
/// row decides: checking every row would cost a whole-table dispatch a
/// third of its time, and a later row that is not a struct (possible only
/// in unchecked mode: checked mode refuses it at the signature) reaches a
/// row listener as a failure naming that row. An empty array counts: it is
/// the table shrunk to nothing.
pub(crate) fn table_of(args: &[Value]) -> Option<&Rc<Vec<Value>>> {
    match args {
        [Value::Array(rows)] if rows.first().is_none_or(|r| matches!(r, Value::Struct(_))) => {
            Some(rows)
        }
        _ => None,
    }
}

fn has_collection_listeners(lists: &Gathered) -> bool {
    lists
        .iter()
        .any(|(list, _)| !list.extras.collections.is_empty())
}

/// A store: diff against the previous table; the changed rows published
/// in their places among the store's message listeners, as `deliver`
/// delivers them (with nobody beside them when nothing is published).
pub(crate) fn on_store<'a, D: Deliver>(
    hub: &'a Hub,
    key: Key,
    prev: Option<&Rc<[Value]>>,
    args: &'a [Value],
    mirror: Option<&'a Mirror>,
    lists: &'a Gathered,
    deliver: D,
) -> D::Out {
    if !has_collection_listeners(lists) {
        return deliver.deliver(&mut Alone);
    }
    let Some(rows) = table_of(args) else {
        return deliver.deliver(&mut Alone);
    };
    let empty: &[Value] = &[];
    let (prev_rows, had_table): (&[Value], bool) = match prev.map(|a| &**a) {
        Some([Value::Array(old)]) => (old, true),
        _ => (empty, false),
    };
    let spans = diff_rows(prev_rows, rows);
    // An unchanged table publishes nothing. A first table is published even
    // when it is empty: a listener that was there all along hears what a
    // late one is replayed (a table of no rows).
    if spans.is_empty() && had_table {
        return deliver.deliver(&mut Alone);
    }
    let update = Update::new(rows.len() as i32, prev_rows.len() as i32, spans.ranges());
    let element = element_of(rows).or_else(|| element_of(prev_rows));
    let rows = Rows {
        values: rows,
        mirror,
    };
    let mut publish = Visitor::new(
        hub,
        key,
        rows,
        element,
        update,
        Targets::Lists(lists),
        false,
    );
    deliver.deliver(&mut publish)
}

/// A writer scope: its recorded spans (no diff) published in their places
/// among the publish's message listeners, as `deliver` delivers them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn on_write<'a, D: Deliver>(
    hub: &'a Hub,
    key: Key,
    rows: &'a Rc<Vec<Value>>,
    prev_total: usize,
    element: Option<Rc<str>>,
    spans: &Spans,
    lists: &'a Gathered,
    deliver: D,
) -> D::Out {
    if spans.is_empty() || !has_collection_listeners(lists) {
        return deliver.deliver(&mut Alone);
    }
    let update = Update::new(rows.len() as i32, prev_total as i32, spans.ranges());
    let mut publish = Visitor::new(
        hub,
        key,
        rows.into(),
        element,
        update,
        Targets::Lists(lists),
        false,
    );
    deliver.deliver(&mut publish)
}

/// Whether a send of `args` may carry a table (one array): the seam's
/// one check on every send.
#[inline(always)]
pub(crate) fn may_be_table(args: &[Value]) -> bool {
    matches!(args, [Value::Array(_)])
}

/// A send (the seam's `beside_send`) that [`may_be_table`], with no
/// request: the table goes to the collection listeners it reached, in
/// their places among its message listeners, as `deliver` delivers them.
#[inline]
pub(crate) fn beside_send<'a, D: Deliver>(
    hub: &'a Hub,
    key: Key,
    args: &'a [Value],
    reached: Reached<'a>,
    deliver: D,
) -> D::Out {
    match reached {
        Reached::Lane(lane) if lane.extras.tables.is_empty() => deliver.deliver(&mut Alone),
        Reached::Lane(lane) => on_send_table(
            hub,
            key,
            args,
            Targets::Ordered(&lane.extras.tables),
            deliver,
        ),
        Reached::Lists(lists) => on_send(hub, key, args, lists, deliver),
    }
}

/// A plain send: the argument itself is the table for the duration of the
/// call. All-rows (and whole-table) listeners get a full reload; slot
/// listeners stay quiet; the store and its row count are not touched.
#[inline]
pub(crate) fn on_send<'a, D: Deliver>(
    hub: &'a Hub,
    key: Key,
    args: &'a [Value],
    lists: &'a Gathered,
    deliver: D,
) -> D::Out {
    if !may_be_table(args) || !has_collection_listeners(lists) {
        return deliver.deliver(&mut Alone);
    }
    on_send_table(hub, key, args, Targets::Lists(lists), deliver)
}

/// A table sent to collection listeners: made here, in this frame, and
/// handed to `deliver` by reference (a publish is a couple of hundred
/// bytes: returned by value it was copied twice per send). Inlined into
/// the send's table branch, so the delivery it is handed is never built
/// in memory either.
#[inline]
fn on_send_table<'a, D: Deliver>(
    hub: &'a Hub,
    key: Key,
    args: &'a [Value],
    targets: Targets<'a>,
    deliver: D,
) -> D::Out {
    let Some(rows) = table_of(args) else {
        return deliver.deliver(&mut Alone);
    };
    let n = rows.len() as i32;
    let update = Update::new(n, n, &[]);
    // No row is gone (the count stands), so no stand-in is ever built: no
    // element name to hold.
    let mut publish = Visitor::new(hub, key, rows.into(), None, update, targets, true);
    deliver.deliver(&mut publish)
}

/// After a listener registered (the seam's `after_listen`): a collection
/// listener is replayed the stored tables it would have heard.
pub(crate) fn after_listen(hub: &Hub, entry: &Rc<Entry>) {
    if let Some(listen) = entry.feature::<CollectionListen>() {
        replay(hub, entry, listen);
    }
}

/// A stored table, replayed to a collection listener that just arrived: a
/// full reload from nothing, as if it had been there all along. A once
/// table nobody heard yet goes out as it would have live (a send's rows:
/// all-rows and whole-table listeners only) and is used up by the first
/// listener it reaches.
fn replay(hub: &Hub, entry: &Rc<Entry>, listen: &CollectionListen) {
    type Pending = (Key, Rc<[Value]>, bool, Option<Rc<Mirror>>);
    let pending: Vec<Pending> = {
        let state = hub.inner.state.borrow();
        state
            .stores
            .reaching(&state.keys, entry)
            .into_iter()
            .map(|(key, stored)| {
                let mirror = stored.mirror.clone();
                (key, stored.args.clone(), stored.once, mirror)
            })
            .collect()
    };
    for (key, args, once, mirror) in pending {
        let Some(rows) = table_of(&args) else {
            continue;
        };
        let depth = {
            let state = hub.inner.state.borrow();
            state.keys.info(key).depth - state.keys.info(entry.key).depth
        };
        let tracing = hub.is_observed();
        if tracing {
            hub.trace_dispatch(key, entry.scope, &args, crate::trace::Delivery::Replay);
        }
        let n = rows.len() as i32;
        let update = Update::new(n, if once { n } else { 0 }, &[]);
        let rows = Rows {
            values: rows,
            mirror: mirror.as_deref(),
        };
        let element = element_of(rows.values);
        let mut visitor =
            Visitor::new(hub, key, rows, element, update, Targets::Ordered(&[]), once);
        if visitor.wakes(listen.selector) {
            visitor.visit(entry, listen, depth);
        }
        if tracing {
            hub.trace_end(key, visitor.called);
        }
        if once && visitor.called > 0 {
            hub.with_state(|s| s.stores.remove(&(key, entry.scope)));
        }
    }
}

fn element_of(rows: &[Value]) -> Option<Rc<str>> {
    rows.first()
        .and_then(Value::as_struct)
        .map(|s| s.name.clone())
}

/// Who a publish may reach: gathered lists, or a lane's ordered entries.
#[derive(Clone, Copy)]
enum Targets<'a> {
    Lists(&'a Gathered),
    Ordered(&'a [(CollectionEntry, u32)]),
}

/// A dispatch's table: its values and, when it was stored from Rust rows
/// and not written since, those rows.
#[derive(Clone, Copy)]
struct Rows<'a> {
    values: &'a Rc<Vec<Value>>,
    mirror: Option<&'a Mirror>,
}

impl<'a> From<&'a Rc<Vec<Value>>> for Rows<'a> {
    fn from(values: &'a Rc<Vec<Value>>) -> Self {
        Rows {
            values,
            mirror: None,
        }
    }
}

/// One publish of a table: the visitor with the collection listeners it
/// may reach in delivery order, called in their places among the
/// dispatch's message listeners (the deliverer drives it through
/// [`Interleaved`]). One struct, made where it is used: a visitor moved
/// into a wrapper was a 176-byte copy per publish.
pub(crate) type Publish<'a> = Visitor<'a>;

/// The collection listeners a publish may reach, in delivery order, and
/// how far the publish has called them. Small and with no room of its
/// own: a publish is made and handed on by value on every table send.
enum Ordered<'a> {
    /// A lane's, already merged; the next to call at `.1`.
    Lane(&'a [(CollectionEntry, u32)], usize),
    /// Gathered lists' (each in channel order, which is delivery order
    /// within it), merged as they are called: the next to call of each
    /// list at its cursor, the first of those in delivery order next. One
    /// list is read straight through: most slot listeners are turned away
    /// by `wakes` without a copy of the list.
    Lists(&'a [GatheredList], SmallVec<[u32; 4]>),
}

/// A gathered channel snapshot with its depth (one of `hub::Gathered`).
type GatheredList = (Rc<crate::channel::List<crate::hub::seam::Features>>, u32);

impl<'a> Ordered<'a> {
    fn of(targets: Targets<'a>) -> Self {
        match targets {
            Targets::Ordered(ordered) => Ordered::Lane(ordered, 0),
            Targets::Lists(lists) => Ordered::Lists(lists, smallvec::smallvec![0; lists.len()]),
        }
    }

    /// The next listener in delivery order, with its depth and (for
    /// lists) the list it is in; not taken yet.
    #[inline]
    fn peek(&self) -> Option<(&'a CollectionEntry, u32, usize)> {
        match self {
            Ordered::Lane(ordered, at) => ordered.get(*at).map(|(c, depth)| (c, *depth, 0)),
            Ordered::Lists(lists, cursors) => {
                let mut next: Option<(&'a CollectionEntry, u32, usize)> = None;
                for (i, ((list, depth), at)) in lists.iter().zip(cursors).enumerate() {
                    if let Some(c) = list.extras.collections.get(*at as usize)
                        && next.is_none_or(|(n, n_depth, _)| c.place(*depth) < n.place(n_depth))
                    {
                        next = Some((c, *depth, i));
                    }
                }
                next
            }
        }
    }

    /// Takes the listener [`Ordered::peek`] gave, from list `list`.
    #[inline]
    fn take(&mut self, list: usize) {
        match self {
            Ordered::Lane(_, at) => *at += 1,
            Ordered::Lists(_, cursors) => cursors[list] += 1,
        }
    }
}

impl Visitor<'_> {
    /// Calls the listeners from the next one on while `ahead` says they
    /// come first.
    #[inline]
    fn call_while(&mut self, ahead: impl Fn(&CollectionEntry, u32) -> bool) {
        while let Some((c, depth, list)) = self.ordered.peek() {
            if !ahead(c, depth) {
                return;
            }
            self.ordered.take(list);
            if self.wakes(c.selector) {
                self.visit(&c.entry, &c.listen, depth);
            }
        }
    }
}

impl Interleaved for Publish<'_> {
    #[inline]
    fn before(&mut self, place: Place) {
        self.call_while(|c, depth| c.place(depth) < place);
    }

    /// The listeners left, straight through when they are one lane's or
    /// one list's (no message listener beside them, the common case, has
    /// placed none yet).
    fn rest(&mut self) -> usize {
        let Visitor { ordered, .. } = self;
        match ordered {
            Ordered::Lane(ordered, at) => {
                let (ordered, from) = (*ordered, *at);
                *at = ordered.len();
                for (c, depth) in &ordered[from..] {
                    if self.wakes(c.selector) {
                        self.visit(&c.entry, &c.listen, *depth);
                    }
                }
            }
            Ordered::Lists(lists, cursors) if lists.len() == 1 => {
                let (list, depth) = &lists[0];
                let collections = &list.extras.collections;
                let from = cursors[0] as usize;
                cursors[0] = collections.len() as u32;
                for c in &collections[from..] {
                    if self.wakes(c.selector) {
                        self.visit(&c.entry, &c.listen, *depth);
                    }
                }
            }
            Ordered::Lists(..) => self.call_while(|_, _| true),
        }
        self.called
    }
}

/// One dispatch's state: the table, the update, the lazily built stand-in.
pub(crate) struct Visitor<'a> {
    hub: &'a Hub,
    key: Key,
    rows: &'a Rc<Vec<Value>>,
    mirror: Option<&'a Mirror>,
    element: Option<Rc<str>>,
    update: Update,
    transient: bool,
    /// Every row a slot listener can wake for lies in `woken.0 .. woken.1`
    /// (the changed ranges' hull): most slots are turned away by two
    /// compares.
    woken: (i32, i32),
    stand_in: OnceCell<Value>,
    called: usize,
    /// The collection listeners a publish may reach (none for a replay,
    /// which visits its one listener itself).
    ordered: Ordered<'a>,
}

impl<'a> Visitor<'a> {
    #[inline(always)]
    fn new(
        hub: &'a Hub,
        key: Key,
        rows: Rows<'a>,
        element: Option<Rc<str>>,
        update: Update,
        targets: Targets<'a>,
        transient: bool,
    ) -> Self {
        let woken = match update.ranges() {
            [] => (0, i32::MAX),
            [first, .., last] => (first.index, last.end()),
            [only] => (only.index, only.end()),
        };
        Self {
            hub,
            key,
            rows: rows.values,
            // Used only while it has as many rows as the values.
            mirror: rows.mirror.filter(|m| m.len() == rows.values.len()),
            element,
            update,
            transient,
            woken,
            stand_in: OnceCell::new(),
            called: 0,
            ordered: Ordered::of(targets),
        }
    }

    /// Whether a listener with this selector wakes for this dispatch, read
    /// from the list alone (no pointer followed).
    #[inline]
    fn wakes(&self, selector: Selector) -> bool {
        match selector.slot {
            // The send path has no change set: a slot listener would wake
            // on every send, which is the opposite of what it is for.
            Some(_) if self.transient => false,
            Some(slot) if slot < self.woken.0 || slot >= self.woken.1 => false,
            Some(slot) => should_wake(slot, selector.removal, &self.update),
            None => true,
        }
    }

    /// Calls a listener that [`Visitor::wakes`], if it may be called now.
    #[inline]
    fn visit(&mut self, entry: &Rc<Entry>, listen: &CollectionListen, depth: u32) {
        if depth > 0 && !entry.partial {
            return;
        }
        if !entry.callable() {
            if entry.alive.get() {
                self.hub
                    .drop_listener(entry.id, crate::trace::DropReason::OwnerGone);
            }
            return;
        }
        let started = self.hub.is_tracing().then(std::time::Instant::now);
        if self.call(entry, listen) {
            if let Some(started) = started {
                // One line per listener and dispatch, however many rows.
                self.hub.trace_called(self.key, entry, started.elapsed());
            }
            self.called += 1;
            if entry.take_use() {
                self.hub
                    .drop_listener(entry.id, crate::trace::DropReason::TimesUsedUp);
            }
        }
    }

    /// Calls one collection listener; returns whether it was called at all.
    fn call(&mut self, entry: &Rc<Entry>, listen: &CollectionListen) -> bool {
        match &listen.form {
            Form::Table(f) | Form::Either { table: f, .. } => {
                self.update.row = ALL_ROWS;
                let view = TableView::with_mirror(self.hub, self.rows, self.mirror);
                let result = f(&view, &self.update);
                self.fail(entry, result);
                true
            }
            Form::Row(sink) => match listen.selector.slot {
                Some(slot) => {
                    self.call_row(entry, sink, slot);
                    true
                }
                None => self.each_row(entry, sink, listen.selector.removal),
            },
        }
    }

    fn each_row(&mut self, entry: &Rc<Entry>, sink: &RowSink, removal: bool) -> bool {
        let total = self.update.total;
        let upper = if removal {
            total.max(self.update.prev_total)
        } else {
            total
        };
        let full = [super::update::Range {
            index: 0,
            count: upper,
        }];
        let ranges: SmallVec<[_; 8]> = if self.update.is_full_reload() {
            full.into_iter().collect()
        } else {
            self.update.ranges().iter().copied().collect()
        };
        let mut called = false;
        for range in ranges {
            let end = range.end().min(upper);
            let mut row = range.index;
            // The live rows at once, where the listener reads them so: from
            // the table's Rust rows when its members line up with them,
            // else from the values.
            if let RowSink::Typed {
                reader,
                range: Some(live),
                compiled,
                ..
            } = sink
                && row < total
            {
                let live_end = end.min(total);
                let rows = row as usize..live_end as usize;
                called |= match self.by_offset(entry, reader, compiled, rows.clone()) {
                    Some(took) => took,
                    None => self.kept(entry, |hub, values, update, kept| {
                        live(reader, hub, &values[rows.clone()], rows.start, update, kept)
                    }),
                };
                row = live_end;
            }
            for row in row..end {
                if !entry.callable() {
                    return called;
                }
                self.call_row(entry, sink, row);
                called = true;
            }
        }
        called
    }

    /// Calls a row sink for `row` (a live row, or a removed one with a
    /// default-valued stand-in and `!row`).
    fn call_row(&mut self, entry: &Rc<Entry>, sink: &RowSink, row: i32) {
        let live = row < self.update.total;
        self.update.row = if live { row } else { !row };
        // A live row from the table's Rust rows when the members line up
        // with them.
        if live
            && let RowSink::Typed {
                reader, compiled, ..
            } = sink
        {
            let row = row as usize;
            if self
                .by_offset(entry, reader, compiled, row..row + 1)
                .is_some()
            {
                return;
            }
        } else if let RowSink::Typed { reader, .. } = sink {
            // A removed row's stand-in is read from the values.
            reader.note_compiled(false);
        }
        let item: &Value = if live {
            &self.rows[row as usize]
        } else {
            self.stand_in()
        };
        let result = match sink {
            RowSink::Dynamic(f) => f(self.update.row, item, &self.update),
            RowSink::Typed { reader, call, .. } => match item {
                Value::Struct(item) => {
                    call(reader, self.hub, item, &self.update).map_err(|e| e.at_row(row as usize))
                }
                other => Err(super::rows::not_a_struct(row as usize, other)),
            },
        };
        self.fail(entry, result);
    }

    /// Runs `f` with what a kept listener's rows are read with: the hub,
    /// the table's values, the update, and the listener's [`KeptRows`]
    /// (its failures reported under this dispatch's key).
    fn kept<R>(
        &mut self,
        entry: &Rc<Entry>,
        f: impl FnOnce(&Hub, &[Value], &mut Update, &mut KeptRows<'_>) -> R,
    ) -> R {
        let (hub, key) = (self.hub, self.key);
        let mut fail = |e| report_failure(hub, key, entry, e);
        let mut kept = KeptRows {
            entry,
            fail: &mut fail,
        };
        f(hub, self.rows, &mut self.update, &mut kept)
    }

    /// A kept listener's `rows` from the table's Rust rows at compiled
    /// offsets, when it has them, the listener may read so (not reflective
    /// only) and its members line up with them; `None` sends it to the
    /// values. The reader remembers which, for [`Hub::row_path`].
    fn by_offset(
        &mut self,
        entry: &Rc<Entry>,
        reader: &RowReader,
        compiled: &TypedCompiledFn,
        rows: std::ops::Range<usize>,
    ) -> Option<bool> {
        let took = match self.mirror {
            Some(mirror) if !reader.reflective_only() => self
                .kept(entry, |hub, _, update, kept| {
                    compiled(hub, mirror, rows, update, kept)
                }),
            _ => None,
        };
        reader.note_compiled(took.is_some());
        took
    }

    /// The default-valued element a removed row is delivered as: built once
    /// per dispatch, from the struct registry.
    fn stand_in(&self) -> &Value {
        self.stand_in.get_or_init(|| {
            let state = self.hub.inner.state.borrow();
            let element = self.element.clone().or_else(|| {
                let name = state.keys.name(self.key);
                state
                    .table
                    .get(name)
                    .and_then(|e| e.params.first())
                    .and_then(|p| p.ty.struct_array_element().map(Rc::from))
            });
            match element {
                Some(name) => Value::default_of(&Type::Struct(name), &state.table.structs),
                None => Value::structure(StructValue::new("")),
            }
        })
    }

    /// Reports a failed call (called per row: the check is inlined, the
    /// report is not).
    #[inline]
    fn fail(&self, entry: &Entry, result: Result<(), ListenerError>) {
        if let Err(e) = result {
            self.report_failure(entry, e);
        }
    }

    fn report_failure(&self, entry: &Entry, e: ListenerError) {
        report_failure(self.hub, self.key, entry, e)
    }
}

/// A listener's failed call, reported under the key it was called for.
#[cold]
#[inline(never)]
fn report_failure(hub: &Hub, key: Key, entry: &Entry, e: ListenerError) {
    hub.report(Report::ListenerFailed {
        key: hub.key_name(key).to_string(),
        message: e.message,
        site: entry.site.clone(),
    });
}
