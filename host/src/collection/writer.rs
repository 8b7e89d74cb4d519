//! The in-place writer (the reference's `TGMPStoredArray`): edit the stored
//! table, publish once when the scope ends.
//!
//! Every write notes a span; the spans are merged (sort + interval merge, at
//! most eight, then a full reload) and published once, on drop or on
//! [`StoredArray::publish`]. Reads never mark a row: writing goes through
//! `get_mut`, because a mutable index cannot tell whether anything was
//! written and would have to mark the row anyway. The writer borrows the hub,
//! so it cannot outlive the scope it was opened in, and it is neither `Clone`
//! nor `Send`.
//!
//! A reader during the scope sees the table as it was, and the new one is
//! stored and published in one step. Row writes (`get_mut`, `set`) go to a
//! small overlay beside the shared stored rows; on publish they are
//! swapped into the stored row list in place when nothing else holds it,
//! so an edit of one row costs that row, not a copy of the table's row
//! list (64 rows: most of a one-row edit's time, when it copied). A
//! structural edit (add, insert, remove, resize) copies the row list once
//! and the writer works on its own copy from then on.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::rc::Rc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::hub::{Caller, Delivered, Hub, HubError};
use crate::key::Key;
use crate::quota::{Holding, Quota, STORED_BYTES, values_bytes};
use crate::serde_bridge::{ValueSerdeError, from_value, to_value};
use crate::signature::Site;
use crate::source::Source;
use crate::store::Stored;
use crate::types::Type;
use crate::value::{StructValue, Value};

use super::dispatch::on_write;
use super::spans::Spans;

/// The most rows a table can hold: rows are numbered by `i32`, and
/// `i32::MAX` is [`ALL_ROWS`](super::ALL_ROWS), "every row".
pub const MAX_ROWS: usize = i32::MAX as usize;

thread_local! {
    /// What a writer holds for the moment it gives its handle up.
    static EMPTY_ROWS: Rc<Vec<Value>> = Rc::new(Vec::new());
}

/// How a writer holds the hub: borrowed for a Rust scope, or as a handle of
/// its own for a script's writer object (`StoredArray<'static>`), whose scope
/// is the script's (`<close>` in Lua, a block in Rhai).
enum HubRef<'h> {
    Borrowed(&'h Hub),
    Owned(Hub),
}

impl Deref for HubRef<'_> {
    type Target = Hub;
    fn deref(&self) -> &Hub {
        match self {
            HubRef::Borrowed(hub) => hub,
            HubRef::Owned(hub) => hub,
        }
    }
}

/// A dynamic writer over [`Value`] rows (the script faces' writer; the typed
/// one is [`StoredArrayOf`]).
///
/// It borrows the hub, so it cannot outlive the scope it was opened in:
///
/// ```compile_fail
/// use gantry_host::{Hub, Source};
/// let writer = {
///     let hub = Hub::new();
///     let key = hub.key("Inv.Items").unwrap();
///     hub.stored_array(key, Source::Global)
/// };
/// drop(writer);
/// ```
pub struct StoredArray<'h> {
    hub: HubRef<'h>,
    key: Key,
    source: Source,
    location: &'static Location<'static>,
    /// The script line that opened the writer: the store's caller when set.
    site: Option<Site>,
    /// The stored rows (shared) or, after a structural edit, the writer's
    /// own copy with every edit applied.
    rows: Rc<Vec<Value>>,
    /// Rows written while `rows` is still the stored table, by index: the
    /// new value of each. Empty once `rows` is the writer's own.
    edits: Vec<(usize, Value)>,
    prev_total: usize,
    spans: Spans,
    element: Option<Rc<str>>,
    /// What each row must carry: the element type of the key's table, as
    /// the signature table has it when the first row is checked (`None`:
    /// the key carries no table yet; its first publish records one). Looked
    /// up then, not at open: a Rust writer that only edits in place never
    /// pays for it.
    row_type: std::cell::OnceCell<Option<Type>>,
    /// The store the writer opened (its serial), while no other store
    /// replaced it: what its charge is charged for (see `table_bytes`).
    opened: Option<u64>,
    /// Bytes the writer's rows grew by (an estimate, for a charged handle's
    /// quota while writing; the publish counts exactly).
    grown: isize,
    published: bool,
}

impl<'h> StoredArray<'h> {
    /// Opens the table stored for (key, source); an absent (or non-table)
    /// store starts empty and is created on publish.
    #[track_caller]
    pub fn open(hub: &'h Hub, key: Key, source: impl Into<Source>) -> Self {
        Self::open_ref(HubRef::Borrowed(hub), key, source.into())
    }

    #[track_caller]
    fn open_ref(hub: HubRef<'h>, key: Key, source: Source) -> Self {
        let (rows, element, opened) = {
            let state = hub.inner.state.borrow();
            let stored = state.stores.get(&(key, source));
            let rows = match stored.map(|s| &*s.args) {
                Some([Value::Array(rows)]) => rows.clone(),
                _ => Rc::new(Vec::new()),
            };
            let opened = stored.map(|s| s.serial);
            let element = rows
                .first()
                .and_then(Value::as_struct)
                .map(|s| s.name.clone())
                .or_else(|| {
                    let name = state.keys.name(key);
                    state
                        .table
                        .get(name)
                        .and_then(|e| e.params.first())
                        .and_then(|p| p.ty.struct_array_element().map(Rc::from))
                });
            (rows, element, opened)
        };
        Self {
            hub,
            key,
            source,
            location: Location::caller(),
            site: None,
            prev_total: rows.len(),
            rows,
            edits: Vec::new(),
            spans: Spans::new(),
            element,
            row_type: std::cell::OnceCell::new(),
            opened,
            grown: 0,
            published: false,
        }
    }

    /// Records the script line that opened the writer: the store is that
    /// line's (for the table's sites and for mismatch reports).
    pub fn at_site(mut self, site: Site) -> Self {
        self.site = Some(site);
        self
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Reads a row (as written so far). Never marks it.
    pub fn get(&self, index: usize) -> Option<&Value> {
        match self.edits.iter().find(|(at, _)| *at == index) {
            Some((_, row)) => Some(row),
            None => self.rows.get(index),
        }
    }

    /// All rows as written so far, read only.
    pub fn rows(&mut self) -> &[Value] {
        self.own_rows();
        &self.rows
    }

    /// The writer's own row list, every edit applied: copied from the
    /// stored one if it is still shared.
    fn own_rows(&mut self) -> &mut Vec<Value> {
        let rows = Rc::make_mut(&mut self.rows);
        for (at, row) in self.edits.drain(..) {
            rows[at] = row;
        }
        rows
    }

    /// The rows noted so far (merged).
    pub fn spans(&self) -> &Spans {
        &self.spans
    }

    /// The only way to write a row: marks it.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut Value> {
        if index >= self.rows.len() {
            return None;
        }
        self.spans.add(index as i32, 1);
        if Rc::strong_count(&self.rows) == 1 {
            // The writer's own list (or a table no one else holds now).
            return self.own_rows().get_mut(index);
        }
        let at = match self.edits.iter().position(|(at, _)| *at == index) {
            Some(at) => at,
            None => {
                self.edits.push((index, self.rows[index].clone()));
                self.edits.len() - 1
            }
        };
        Some(&mut self.edits[at].1)
    }

    /// [`StoredArray::get_mut`] for a struct row, copying only that row.
    pub fn get_mut_struct(&mut self, index: usize) -> Option<&mut StructValue> {
        match self.get_mut(index)? {
            Value::Struct(row) => Some(Rc::make_mut(row)),
            _ => None,
        }
    }

    /// Replaces a row. Returns false when there is no such row.
    pub fn set(&mut self, index: usize, row: Value) -> bool {
        match self.get_mut(index) {
            Some(slot) => {
                *slot = row;
                true
            }
            None => false,
        }
    }

    /// Checks `row`, to be row `index`, against the key's element type (in
    /// checked mode): a script's row is refused at the call that wrote it,
    /// naming the key and the row, not at the publish.
    fn check_row(&self, index: usize, row: &Value) -> Result<(), HubError> {
        if !self.hub.is_checked() {
            return Ok(());
        }
        let state = self.hub.inner.state.borrow();
        let row_type = self.row_type.get_or_init(|| {
            state
                .table
                .get(state.keys.name(self.key))
                .and_then(|e| match e.params.as_slice() {
                    [param] => match &param.ty {
                        Type::Array(element) => Some((**element).clone()),
                        _ => None,
                    },
                    _ => None,
                })
        });
        let Some(ty) = row_type else {
            return Ok(());
        };
        if state.table.structs.value_matches(row, ty) {
            return Ok(());
        }
        Err(HubError::RowMismatch {
            key: state.keys.name(self.key).to_string(),
            row: index,
            expected: ty.to_string(),
            got: state.table.structs.describe(row, ty),
        })
    }

    /// Whether the rows may grow by `bytes` more under a charged handle's
    /// quota (an estimate: the rows are counted exactly at the publish),
    /// so that a script adding rows in a loop is stopped at the row that
    /// goes over, not after the hub ran out of memory.
    fn room_to_grow(&self, bytes: isize) -> Result<(), HubError> {
        let Some(quota) = self.hub.quota() else {
            return Ok(());
        };
        let growth = self.grown.saturating_add(bytes);
        if growth <= 0 {
            return Ok(());
        }
        let state = self.hub.inner.state.borrow();
        quota.room(
            state.keys.name(self.key),
            Holding::TableRows,
            growth as usize,
            0,
        )?;
        Ok(())
    }

    /// [`StoredArray::add`], refusing a row that contradicts the key's
    /// element type ([`HubError::RowMismatch`]) or would take a charged
    /// handle over its quota ([`HubError::OverQuota`]).
    pub fn try_add(&mut self, row: Value) -> Result<(), HubError> {
        self.check_row(self.rows.len(), &row)?;
        let bytes = row_bytes(&row);
        self.room_to_grow(bytes)?;
        self.grown += bytes;
        self.add(row);
        Ok(())
    }

    /// [`StoredArray::insert`], refusing a row as [`StoredArray::try_add`]
    /// does.
    pub fn try_insert(&mut self, index: usize, row: Value) -> Result<bool, HubError> {
        if index > self.rows.len() {
            return Ok(false);
        }
        self.check_row(index, &row)?;
        let bytes = row_bytes(&row);
        self.room_to_grow(bytes)?;
        self.grown += bytes;
        Ok(self.insert(index, row))
    }

    /// [`StoredArray::set`], refusing a row as [`StoredArray::try_add`]
    /// does.
    pub fn try_set(&mut self, index: usize, row: Value) -> Result<bool, HubError> {
        let Some(old) = self.get(index) else {
            return Ok(false);
        };
        self.check_row(index, &row)?;
        let bytes = row_bytes(&row) - row_bytes(old);
        self.room_to_grow(bytes)?;
        self.grown += bytes;
        Ok(self.set(index, row))
    }

    /// [`StoredArray::set_len`], refusing a growth that would take a
    /// charged handle over its quota ([`HubError::OverQuota`]); `Ok(false)`
    /// when no table can hold `len` rows.
    pub fn try_set_len(&mut self, len: usize) -> Result<bool, HubError> {
        let old = self.rows.len();
        if len > MAX_ROWS {
            return Ok(false);
        }
        let bytes = if self.hub.quota().is_none() {
            0
        } else if len > old {
            let added = (len - old) as isize;
            added.saturating_mul(row_bytes(&self.default_row()))
        } else {
            -(old - len..old)
                .filter_map(|at| self.get(at))
                .map(row_bytes)
                .sum::<isize>()
        };
        self.room_to_grow(bytes)?;
        if !self.set_len(len) {
            return Ok(false);
        }
        self.grown += bytes;
        Ok(true)
    }

    /// Appends a row.
    pub fn add(&mut self, row: Value) {
        self.note_element(&row);
        let at = self.rows.len();
        self.own_rows().push(row);
        self.spans.add(at as i32, 1);
    }

    /// Inserts a row at `index` (`<= len`): every row from there on moved.
    /// Returns false when `index` is past the end.
    pub fn insert(&mut self, index: usize, row: Value) -> bool {
        if index > self.rows.len() {
            return false;
        }
        self.note_element(&row);
        self.own_rows().insert(index, row);
        self.spans
            .add(index as i32, (self.rows.len() - index) as i32);
        true
    }

    /// Removes the row at `index`: every row from there to the old end moved.
    pub fn remove_at(&mut self, index: usize) -> Option<Value> {
        if index >= self.rows.len() {
            return None;
        }
        let old = self.rows.len();
        let removed = self.own_rows().remove(index);
        self.spans.add(index as i32, (old - index) as i32);
        Some(removed)
    }

    /// Grows (with default-valued rows of the element struct) or shrinks the
    /// table to `len` rows. Returns false, changing nothing, when no table
    /// can hold `len` rows (more than [`MAX_ROWS`], or more than memory
    /// allows): a length from a script is refused, not a crash.
    pub fn set_len(&mut self, len: usize) -> bool {
        let old = self.rows.len();
        if len == old {
            return true;
        }
        if len > MAX_ROWS {
            return false;
        }
        if len > old {
            let fill = self.default_row();
            let rows = self.own_rows();
            if rows.try_reserve_exact(len - old).is_err() {
                return false;
            }
            rows.resize(len, fill);
        } else {
            self.own_rows().truncate(len);
        }
        self.spans
            .add(old.min(len) as i32, old.abs_diff(len) as i32);
        true
    }

    /// Removes every row.
    pub fn empty(&mut self) {
        self.set_len(0);
    }

    /// Stores and publishes now (what drop does), returning what the store
    /// delivered. Nothing written: nothing published.
    pub fn publish(mut self) -> Result<Delivered, HubError> {
        self.publish_inner()
    }

    /// Closes the writer without publishing (a script's writer that was
    /// never closed: its edits are dropped, and the script is told).
    pub fn discard(mut self) {
        self.published = true;
    }

    /// Publishes now without consuming the writer (a script's explicit
    /// `Commit()`). The writer stays open on the table it just stored:
    /// later writes are published by the next commit or the end of scope.
    pub fn commit(&mut self) -> Result<Delivered, HubError> {
        let delivered = self.publish_inner();
        self.published = false;
        self.prev_total = self.rows.len();
        self.spans = Spans::new();
        self.grown = 0;
        delivered
    }

    fn publish_inner(&mut self) -> Result<Delivered, HubError> {
        if self.published || self.spans.is_empty() {
            self.published = true;
            return Ok(Delivered::default());
        }
        self.published = true;
        // A table kept for an object destroyed while the writer was open
        // could never be removed: refused, as a store is.
        self.hub.check_alive(self.source, None)?;
        let total = self.rows.len();
        let bound = total.max(self.prev_total) as i32;
        if total != self.prev_total {
            self.spans.widen_to_tail(bound);
        }
        self.spans.clip(bound);
        if self.spans.is_empty() {
            // Every change was to rows that are gone again: the table
            // reads as it did.
            return Ok(Delivered::default());
        }
        // A charged handle counts the published table before anything is
        // swapped, checked or stored: past the quota, nothing changes.
        let charge = match self.hub.quota().cloned() {
            Some(quota) => Some((self.table_bytes(&quota)?, quota)),
            None => None,
        };
        // The edits go into the stored list in place when it is the
        // store's alone; else the writer publishes a list of its own.
        let in_place = !self.edits.is_empty()
            && swap_edits_into_store(
                &self.hub,
                (self.key, self.source),
                &mut self.rows,
                &mut self.edits,
            );
        if !in_place {
            self.own_rows();
        }
        let caller = match &self.site {
            Some(site) => Caller::Script(site),
            None => Caller::Rust(self.location),
        };
        let mut args = [Value::Array(self.rows.clone())];
        let mut lists = crate::hub::Gathered::new();
        let admitted = self.hub.gather_edited(
            self.key,
            self.source,
            &mut args,
            caller,
            &self.spans,
            &mut lists,
        );
        if let Err(refused) = admitted {
            if in_place {
                // The store keeps its previous table: swap the old rows
                // back before the refusal is reported.
                args[0] = Value::Nil;
                swap_edits_into_store(
                    &self.hub,
                    (self.key, self.source),
                    &mut self.rows,
                    &mut self.edits,
                );
            }
            return Err(self.hub.refuse(refused, caller));
        }
        // After an in-place publish the overlay holds the old rows.
        self.edits.clear();
        let tracing = self.hub.is_tracing();
        if tracing {
            self.hub
                .trace_dispatch(self.key, self.source, &args, crate::trace::Delivery::Store);
        }
        // What the store held before is dropped after the borrow (Rust
        // rows may run code of their own when dropped).
        let _replaced = self.hub.with_state(|s| {
            if in_place {
                let kept = s.stores.get_mut(&(self.key, self.source))?;
                kept.once = false;
                self.opened = Some(kept.serial);
                // What the table holds now is the publisher's (an
                // uncharged writer over an uncharged table touches nothing).
                match (&mut kept.charge, charge) {
                    (None, None) => {}
                    (Some(held), Some((bytes, quota))) if held.is_of(&quota) => {
                        held.set_bytes(bytes);
                    }
                    (held, charge) => *held = charge.map(|(bytes, quota)| quota.charge(bytes)),
                }
                // The rows now differ from the Rust ones they were stored
                // from.
                kept.mirror.take().map(|mirror| (None, Some(mirror)))
            } else {
                let serial = s.stores.serial();
                self.opened = Some(serial);
                let mut old = s.stores.insert(
                    (self.key, self.source),
                    Stored {
                        args: Rc::from(args.clone()),
                        once: false,
                        mirror: None,
                        charge: charge.map(|(bytes, quota)| quota.charge(bytes)),
                        serial,
                    },
                );
                // Kept until the delivery is done; what it held is given
                // back now.
                if let Some(old) = &mut old {
                    old.charge = None;
                }
                Some((old, None))
            }
        });
        let delivered = self
            .hub
            .deliver(self.key, self.source, &args, caller, None, &lists, None)
            .inspect_err(|_| {
                if tracing {
                    self.hub.trace_end(self.key, 0);
                }
            })?;
        let called = on_write(
            &self.hub,
            self.key,
            &self.rows,
            self.prev_total,
            self.element.clone(),
            &self.spans,
            &lists,
        );
        if tracing {
            self.hub.trace_end(self.key, delivered.listeners + called);
        }
        Ok(Delivered {
            listeners: delivered.listeners + called,
        })
    }

    /// The bytes the table holds once published, refused past `quota`
    /// (what the store held, `quota`'s, is given back by the publish).
    /// Counted from the charge of the table the writer opened plus the
    /// difference of the rows it changed (the overlay, or the spans), so
    /// that an edit of one row of a large table costs that row; counted
    /// whole when another store replaced it since, or it was not charged
    /// to `quota`.
    fn table_bytes(&self, quota: &Quota) -> Result<usize, HubError> {
        let state = self.hub.inner.state.borrow();
        let stored = state.stores.get(&(self.key, self.source));
        let freed = stored
            .and_then(|s| s.charge.as_ref())
            .map_or(0, |c| c.frees_for(quota));
        let opened = stored.filter(|s| self.opened == Some(s.serial));
        let base = opened.and_then(|s| match (&*s.args, &s.charge) {
            ([Value::Array(old)], Some(held)) if held.is_of(quota) => Some((old, held.bytes())),
            _ => None,
        });
        let bytes = match base {
            // Rows written over the stored list, which the writer holds.
            Some((_, held)) if !self.edits.is_empty() => held as isize + self.edits_growth(),
            Some((old, held)) if !self.spans.is_full() => {
                let mut bytes = held as isize;
                for range in self.spans.ranges() {
                    let span = |rows: &[Value]| {
                        let end = (range.end().max(0) as usize).min(rows.len());
                        let start = (range.index.max(0) as usize).min(end);
                        rows[start..end].iter().map(row_bytes).sum::<isize>()
                    };
                    bytes += span(&self.rows) - span(old);
                }
                bytes
            }
            _ => {
                let whole = STORED_BYTES + values_bytes(&[Value::Array(self.rows.clone())]);
                whole as isize + self.edits_growth()
            }
        };
        let bytes = bytes.max(0) as usize;
        quota.room(state.keys.name(self.key), Holding::TableRows, bytes, freed)?;
        Ok(bytes)
    }

    /// How much the overlay's rows differ in size from those they replace.
    fn edits_growth(&self) -> isize {
        self.edits
            .iter()
            .map(|(at, row)| row_bytes(row) - self.rows.get(*at).map_or(0, row_bytes))
            .sum()
    }

    fn note_element(&mut self, row: &Value) {
        if self.element.is_none() {
            self.element = row.as_struct().map(|s| s.name.clone());
        }
    }

    fn default_row(&self) -> Value {
        let state = self.hub.inner.state.borrow();
        match &self.element {
            Some(name) => Value::default_of(&Type::Struct(name.clone()), &state.table.structs),
            None => Value::structure(StructValue::new("")),
        }
    }
}

/// The bytes one row holds (see [`crate::quota`]).
fn row_bytes(row: &Value) -> isize {
    values_bytes(std::slice::from_ref(row)) as isize
}

/// Swaps each overlay row with its row in the stored list of `at`, in
/// place, when the store holds the list the writer has (`rows`) and no one
/// else holds it or its argument list. Returns false, changing nothing,
/// otherwise. Called twice, it swaps back.
fn swap_edits_into_store(
    hub: &Hub,
    at: (Key, Source),
    rows: &mut Rc<Vec<Value>>,
    edits: &mut [(usize, Value)],
) -> bool {
    // Declared before the borrow, so dropped after it: Rust rows may run
    // code of their own when dropped.
    let _dropped;
    let mut state = hub.inner.state.borrow_mut();
    let Some(stored) = state.stores.get_mut(&at) else {
        return false;
    };
    // The stored values are about to differ from the Rust rows they may
    // have been stored from, before the edit is checked (a refused edit
    // costs the table only its compiled path).
    _dropped = stored.mirror.take();
    let Some([Value::Array(list)]) = Rc::get_mut(&mut stored.args) else {
        return false;
    };
    if !Rc::ptr_eq(list, rows) || Rc::strong_count(list) != 2 {
        return false;
    }
    // The writer's handle is the only other one: give it up, change the
    // list through the store's, and take a handle again.
    *rows = EMPTY_ROWS.with(Rc::clone);
    let Some(stored_rows) = Rc::get_mut(list) else {
        *rows = list.clone();
        return false;
    };
    for (index, row) in edits.iter_mut() {
        if let Some(slot) = stored_rows.get_mut(*index) {
            std::mem::swap(slot, row);
        }
    }
    *rows = list.clone();
    true
}

impl Drop for StoredArray<'_> {
    /// One fire when the scope ends. A failed publish (a row that contradicts
    /// the key's signature) has already been reported by the hub; the store
    /// keeps its previous table.
    fn drop(&mut self) {
        if let Err(error) = self.publish_inner() {
            tracing::warn!(%error, "stored array not published");
        }
    }
}

/// The typed writer: rows are `T` on the Rust side and values in the store
/// (through serde, so skipped fields take no position).
pub struct StoredArrayOf<'h, T> {
    inner: StoredArray<'h>,
    _rows: PhantomData<fn() -> T>,
}

impl<'h, T: Serialize + DeserializeOwned> StoredArrayOf<'h, T> {
    #[track_caller]
    pub fn open(hub: &'h Hub, key: Key, source: impl Into<Source>) -> Self {
        Self {
            inner: StoredArray::open(hub, key, source),
            _rows: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Reads (decodes) a row. Never marks it.
    pub fn get(&self, index: usize) -> Option<Result<T, ValueSerdeError>> {
        self.inner.get(index).map(from_value)
    }

    /// A guard that derefs to the decoded row and writes it back when
    /// dropped; the only way to write a row.
    pub fn get_mut(&mut self, index: usize) -> Option<Result<RowMut<'_, 'h, T>, ValueSerdeError>> {
        let row = match from_value::<T>(self.inner.get(index)?) {
            Ok(row) => row,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(RowMut {
            array: &mut self.inner,
            index,
            row: Some(row),
        }))
    }

    pub fn add(&mut self, row: &T) -> Result<(), ValueSerdeError> {
        self.inner.add(to_value(row)?);
        Ok(())
    }

    /// Inserts at `index` (`<= len`); `Ok(false)` when past the end.
    pub fn insert(&mut self, index: usize, row: &T) -> Result<bool, ValueSerdeError> {
        Ok(self.inner.insert(index, to_value(row)?))
    }

    pub fn remove_at(&mut self, index: usize) -> Option<Result<T, ValueSerdeError>> {
        self.inner.remove_at(index).map(|v| from_value(&v))
    }

    /// See [`StoredArray::set_len`]: false when no table can hold `len` rows.
    pub fn set_len(&mut self, len: usize) -> bool {
        self.inner.set_len(len)
    }

    /// See [`StoredArray::try_set_len`].
    pub fn try_set_len(&mut self, len: usize) -> Result<bool, HubError> {
        self.inner.try_set_len(len)
    }

    pub fn empty(&mut self) {
        self.inner.empty();
    }

    /// The dynamic writer underneath.
    pub fn values(&mut self) -> &mut StoredArray<'h> {
        &mut self.inner
    }

    pub fn publish(self) -> Result<Delivered, HubError> {
        self.inner.publish()
    }
}

/// A decoded row being written; encoded back into the table on drop.
pub struct RowMut<'a, 'h, T: Serialize> {
    array: &'a mut StoredArray<'h>,
    index: usize,
    row: Option<T>,
}

impl<T: Serialize> Deref for RowMut<'_, '_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.row.as_ref().expect("present until drop")
    }
}

impl<T: Serialize> DerefMut for RowMut<'_, '_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.row.as_mut().expect("present until drop")
    }
}

impl<T: Serialize> Drop for RowMut<'_, '_, T> {
    fn drop(&mut self) {
        let Some(row) = self.row.take() else { return };
        match to_value(&row) {
            Ok(value) => {
                self.array.set(self.index, value);
            }
            Err(error) => tracing::warn!(%error, row = self.index, "row not written back"),
        }
    }
}

impl Hub {
    /// Opens the in-place writer on the table stored for (key, source).
    #[track_caller]
    pub fn stored_array(&self, key: Key, source: impl Into<Source>) -> StoredArray<'_> {
        StoredArray::open(self, key, source)
    }

    /// A writer that holds its own hub handle, for script faces whose
    /// writer is a value of the script (it keeps the hub alive while open).
    #[track_caller]
    pub fn stored_array_owned(&self, key: Key, source: impl Into<Source>) -> StoredArray<'static> {
        StoredArray::open_ref(HubRef::Owned(self.clone()), key, source.into())
    }

    /// The typed writer.
    #[track_caller]
    pub fn stored_array_of<T: Serialize + DeserializeOwned>(
        &self,
        key: Key,
        source: impl Into<Source>,
    ) -> StoredArrayOf<'_, T> {
        StoredArrayOf::open(self, key, source)
    }
}
