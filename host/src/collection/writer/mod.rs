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

use std::ops::Deref;
use std::panic::Location;
use std::rc::Rc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::hub::{Delivered, Hub, HubError};
use crate::key::Key;
use crate::quota::{Holding, values_bytes};
use crate::signature::Site;
use crate::source::Source;
use crate::types::Type;
use crate::value::{StructValue, Value};

use super::spans::Spans;

mod publish;
mod typed;

pub use typed::{RowMut, StoredArrayOf};

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
        // A plain table (no `__struct`) the script's runtime could not name
        // is named at the publish, which may grow an observed struct.
        if state.table.structs.value_matches(row, ty) || row.holds_plain() {
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
