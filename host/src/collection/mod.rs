//! Collection messages: a stored message whose single parameter is an
//! array of structs is a table (references `001_…` and `004_…`).
//!
//! Recognised from the value stored, not from an entry point; every other
//! listener shape keeps working unchanged. A map of the module:
//! - [`update`]: the [`Update`] a listener is told, the `~` index encoding
//!   ([`ALL_ROWS`], [`with_removal`], ...) and the slot wake-up rule.
//! - [`spans`]: the sorted interval merge of the writer's (and the diff's)
//!   spans, at most eight, then a full reload.
//! - [`diff`]: re-store diffing, row by row.
//! - [`view`]: the borrowed whole-table [`TableView`].
//! - [`rows`]: positional members — the fast path and the reflective one.
//! - [`mirror`]: a table stored from Rust rows, read at compiled offsets.
//! - [`listen`]: the listener forms (typed for Rust, raw for scripts).
//! - `dispatch`: the store path, the send (transient) path, late replay.
//! - `tables`: what the dispatch keeps beside a channel's snapshot and a
//!   lane (built through the hub's seam).
//! - [`writer`]: the in-place writer [`StoredArray`] / [`StoredArrayOf`].

pub mod diff;
pub(crate) mod dispatch;
pub mod listen;
pub mod mirror;
pub mod rows;
pub mod spans;
pub(crate) mod tables;
pub mod update;
pub mod view;
pub mod writer;

pub use diff::diff_rows;
pub use listen::{RowFn, RowOptions, TableFn};
pub use mirror::{Mirror, Plan, Row, RowField};
pub use rows::{EachRowHandler, FromMember, RowArgs, RowPath, SlotHandler, WithUpdate};
pub use spans::{MAX_SPANS, Spans};
pub use update::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Range, Selector, Update, should_wake, with_removal,
};
pub use view::TableView;
pub use writer::{MAX_ROWS, RowMut, StoredArray, StoredArrayOf};

/// What the hub keeps for collections beside its state, in one field
/// ([`HubInner::collections`](crate::hub::HubInner)).
#[derive(Default)]
pub(crate) struct Collections {
    /// Element layouts by struct name, with the epoch they were resolved
    /// in (a table edit moves the epoch). Its own cell: a reader resolves
    /// a layout while the state is borrowed to read.
    pub(crate) layouts: rows::LayoutCache,
}
