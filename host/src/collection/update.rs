//! What a collection listener is told, and which rows an update wakes.
//!
//! There is no add/change/remove enum: the count says
//! whether the table resized, the ranges say where. A resize is published
//! with its ranges widened to the tail, because every row after the first
//! touched one now reads differently.

use smallvec::SmallVec;

use super::spans::MAX_SPANS;

/// Slot index meaning "every changed row, not told about removals".
pub const ALL_ROWS: i32 = i32::MAX;
/// Slot index meaning "every changed row, told about removals" (`!ALL_ROWS`).
pub const ALL_ROWS_WITH_REMOVAL: i32 = !i32::MAX;

/// Slot `n`, told when the position disappears: `!n`, the same `~` rule the
/// callback side reads (`row < 0` means `!row` is gone).
#[inline]
pub const fn with_removal(n: i32) -> i32 {
    !n
}

/// A run of rows that now read differently: `index .. index + count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Range {
    pub index: i32,
    pub count: i32,
}

impl Range {
    pub const fn new(index: i32, count: i32) -> Self {
        Self { index, count }
    }

    /// One past the last row.
    #[inline]
    pub const fn end(&self) -> i32 {
        self.index.saturating_add(self.count)
    }

    #[inline]
    pub const fn contains(&self, row: i32) -> bool {
        row >= self.index && row < self.end()
    }
}

/// What one collection dispatch tells its listeners. It owns its (at most
/// eight) ranges inline, so it has no lifetime and a typed closure can take
/// a plain `&Update`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// The table size after the change.
    pub total: i32,
    /// The size before it, to tell "gone" from "never existed".
    pub prev_total: i32,
    /// Which rows now read differently, ascending and disjoint. Empty means
    /// a full reload (the send path, a late replay, more than eight spans).
    ranges: SmallVec<[Range; MAX_SPANS]>,
    /// Row callbacks only: `>= 0` this row, `< 0` means `!row` is gone and
    /// the item is a default-valued stand-in. Whole-table and update-only
    /// callbacks see [`ALL_ROWS`].
    pub row: i32,
}

impl Update {
    /// An update of a table that went from `prev_total` to `total` rows;
    /// `ranges` empty means a full reload.
    #[inline]
    pub fn new(total: i32, prev_total: i32, ranges: &[Range]) -> Self {
        Self {
            total,
            prev_total,
            ranges: if ranges.is_empty() {
                SmallVec::new()
            } else {
                ranges.iter().copied().collect()
            },
            row: ALL_ROWS,
        }
    }

    /// Which rows now read differently (empty: a full reload).
    #[inline]
    pub fn ranges(&self) -> &[Range] {
        &self.ranges
    }

    /// Every row is to be considered changed.
    #[inline]
    pub fn is_full_reload(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The row this call is about no longer exists.
    #[inline]
    pub fn is_row_removed(&self) -> bool {
        self.row < 0
    }

    /// The row number either way (`!row` when removed).
    #[inline]
    pub fn get_row(&self) -> i32 {
        if self.row < 0 { !self.row } else { self.row }
    }
}

/// A listen-site index decoded from the `~` encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selector {
    /// `None` for every changed row, `Some(n)` for slot `n`.
    pub slot: Option<i32>,
    /// Told when the position disappears.
    pub removal: bool,
}

impl Selector {
    /// Decodes `n`, `!n`, [`ALL_ROWS`] and [`ALL_ROWS_WITH_REMOVAL`].
    pub const fn decode(index: i32) -> Self {
        let (raw, removal) = if index < 0 {
            (!index, true)
        } else {
            (index, false)
        };
        Self {
            slot: if raw == ALL_ROWS { None } else { Some(raw) },
            removal,
        }
    }

    /// The inverse of [`Selector::decode`].
    pub const fn encode(self) -> i32 {
        let raw = match self.slot {
            Some(n) => n,
            None => ALL_ROWS,
        };
        if self.removal { !raw } else { raw }
    }
}

/// Does `update` wake the listener watching position `row`? Reference
/// `001_…` §10 `ShouldWakeRow`, with the §9 rule folded into the ranges
/// (a resize is already widened to the tail, so "row in a range" covers
/// "everything at or after the first touched row").
#[inline]
pub fn should_wake(row: i32, removal: bool, update: &Update) -> bool {
    if row >= update.total {
        return removal
            && row < update.prev_total
            && (update.is_full_reload() || update.ranges().iter().any(|r| r.contains(row)));
    }
    update.is_full_reload() || update.ranges().iter().any(|r| r.contains(row))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_encoding_round_trips() {
        assert_eq!(with_removal(5), !5);
        assert_eq!(ALL_ROWS_WITH_REMOVAL, with_removal(ALL_ROWS));
        for index in [
            0,
            5,
            with_removal(0),
            with_removal(5),
            ALL_ROWS,
            ALL_ROWS_WITH_REMOVAL,
        ] {
            assert_eq!(Selector::decode(index).encode(), index);
        }
        assert_eq!(
            Selector::decode(with_removal(5)),
            Selector {
                slot: Some(5),
                removal: true
            }
        );
        assert_eq!(Selector::decode(ALL_ROWS).slot, None);
    }
}
