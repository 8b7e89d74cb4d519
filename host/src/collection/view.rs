//! The whole-table view: borrowed, never a copy of the table.

use std::rc::Rc;

use serde::de::DeserializeOwned;

use crate::hub::Hub;
use crate::listener::ListenerError;
use crate::serde_bridge::{ValueSerdeError, from_value};
use crate::value::{StructValue, Value};

use super::mirror::{Mirror, Row};
use super::rows::{EachRowHandler, RowPath, RowReader, SlotHandler};
use super::update::Update;

/// A borrowed view of a collection table, valid for the callback only (the
/// lifetime says so). Rows are [`Value::Struct`]s; members expand in the
/// element's declaration order.
#[derive(Clone, Copy)]
pub struct TableView<'a> {
    hub: &'a Hub,
    rows: &'a [Value],
    /// The Rust rows the values were built from, when the table was
    /// stored from Rust and not written since (see [`super::mirror`]).
    mirror: Option<&'a Mirror>,
}

impl<'a> TableView<'a> {
    /// A view of any rows (the hub resolves the element's declared layout).
    pub fn new(hub: &'a Hub, rows: &'a [Value]) -> Self {
        Self {
            hub,
            rows,
            mirror: None,
        }
    }

    /// A view of rows with their Rust mirror, which is used only while it
    /// has as many rows.
    pub(crate) fn with_mirror(hub: &'a Hub, rows: &'a [Value], mirror: Option<&'a Mirror>) -> Self {
        Self {
            hub,
            rows,
            mirror: mirror.filter(|m| m.len() == rows.len()),
        }
    }

    /// The Rust rows the table was stored from, when they are `T`s and
    /// the table has not been written since ([`Hub::store_rows`]).
    pub fn typed_rows<T: Row>(&self) -> Option<&'a [T]> {
        self.mirror.and_then(Mirror::rows)
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows as values (the script faces' way in).
    pub fn rows(&self) -> &'a [Value] {
        self.rows
    }

    /// One row as a value.
    pub fn get(&self, row: usize) -> Option<&'a Value> {
        self.rows.get(row)
    }

    /// One row as a struct.
    pub fn row(&self, row: usize) -> Option<&'a StructValue> {
        self.rows.get(row).and_then(Value::as_struct)
    }

    /// The element struct's name, from the first row.
    pub fn element(&self) -> Option<&'a Rc<str>> {
        self.rows
            .first()
            .and_then(Value::as_struct)
            .map(|s| &s.name)
    }

    /// Calls `f` with the first few members of `row`, without knowing the
    /// element type. `Ok(false)` when there is no such row.
    pub fn visit_row<Args, H: SlotHandler<'a, Args>>(
        &self,
        row: usize,
        f: H,
    ) -> Result<bool, ListenerError> {
        let Some(item) = self.row(row) else {
            return Ok(false);
        };
        let update = self.full_update(row);
        f.call_row(&RowReader::new(false), self.hub, item, &update)
            .map_err(|e| e.at_row(row))?;
        Ok(true)
    }

    /// Calls `f(row, members...)` for every row: at compiled offsets when
    /// the table was stored from Rust rows whose fields the closure's
    /// declared types line up with ([`RowPath::Compiled`]), else on the
    /// values' fast path when the declared types line up with the element
    /// (decided on the first row), else on the reflective path. Returns
    /// the path taken.
    pub fn for_each<Args, H: EachRowHandler<'a, Args>>(
        &self,
        f: H,
    ) -> Result<RowPath, ListenerError> {
        if let Some(mirror) = self.mirror
            && f.call_compiled(self.hub, mirror)
        {
            return Ok(RowPath::Compiled);
        }
        self.for_each_on(&RowReader::new(false), &f)
    }

    /// [`TableView::for_each`] on the reflective path only: for comparing
    /// the two paths and measuring the shortcut.
    pub fn for_each_reflective<Args, H: EachRowHandler<'a, Args>>(
        &self,
        f: H,
    ) -> Result<RowPath, ListenerError> {
        self.for_each_on(&RowReader::new(true), &f)
    }

    fn for_each_on<Args, H: EachRowHandler<'a, Args>>(
        &self,
        reader: &RowReader,
        f: &H,
    ) -> Result<RowPath, ListenerError> {
        let mut update = self.full_update(0);
        f.call_rows(reader, self.hub, self.rows, &mut update)?;
        Ok(reader.path())
    }

    /// Decodes the whole table into Rust values (a copy; for when you do
    /// have the element type).
    pub fn decode<T: DeserializeOwned>(&self) -> Result<Vec<T>, ValueSerdeError> {
        self.rows.iter().map(from_value).collect()
    }

    fn full_update(&self, row: usize) -> Update {
        let n = self.rows.len() as i32;
        let mut update = Update::new(n, n, &[]);
        update.row = row as i32;
        update
    }
}

impl std::fmt::Debug for TableView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableView")
            .field("rows", &self.rows)
            .finish()
    }
}
