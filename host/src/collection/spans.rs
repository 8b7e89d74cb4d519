//! Span coalescing: the standard interval merge.
//!
//! Two cheaper-looking schemes leave overlaps behind ("merge with the first
//! intersecting span and return", "sweep backwards after merging"), and an
//! overlap makes a row listener fire twice for one row. Sorting and then
//! merging adjacent or overlapping neighbours converges by construction and
//! hands rows out in ascending order.

use smallvec::SmallVec;

use super::update::Range;

/// At most this many disjoint spans are kept; past it, a full reload.
pub const MAX_SPANS: usize = 8;

/// The rows a writer (or a diff) touched, merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spans {
    spans: SmallVec<[Range; MAX_SPANS]>,
    full: bool,
}

impl Spans {
    pub fn new() -> Self {
        Self::default()
    }

    /// Notes rows `index .. index + count`; empty or negative spans are
    /// ignored.
    pub fn add(&mut self, index: i32, count: i32) {
        if count <= 0 || index < 0 || self.full {
            return;
        }
        self.spans.push(Range::new(index, count));
        self.normalize();
    }

    /// Everything changed: a full reload.
    pub fn mark_full(&mut self) {
        self.full = true;
        self.spans.clear();
    }

    /// Did anything get noted?
    pub fn is_empty(&self) -> bool {
        !self.full && self.spans.is_empty()
    }

    /// More than [`MAX_SPANS`] disjoint spans were noted (or
    /// [`Spans::mark_full`] was called): publish as a full reload.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// The merged spans, ascending and disjoint (empty when full).
    pub fn ranges(&self) -> &[Range] {
        &self.spans
    }

    /// Widens to the tail for a resize: one span from the first touched row
    /// to the end of the longer table. A no-op when nothing was noted.
    pub fn widen_to_tail(&mut self, tail: i32) {
        if self.full {
            return;
        }
        if let Some(first) = self.spans.first().map(|r| r.index) {
            self.spans.clear();
            if tail > first {
                self.spans.push(Range::new(first, tail - first));
            }
        }
    }

    /// Forgets rows at `bound` and past it: rows that exist in neither the
    /// old table nor the new one (a row added, then a row removed, by one
    /// writer) are not a change anybody can read.
    pub fn clip(&mut self, bound: i32) {
        self.spans.retain(|r| r.index < bound);
        if let Some(last) = self.spans.last_mut() {
            last.count = last.count.min(bound - last.index);
        }
    }

    /// Sort by start, then fold each span into its predecessor when they
    /// touch or overlap.
    fn normalize(&mut self) {
        self.spans.sort_unstable_by_key(|r| r.index);
        let mut merged: SmallVec<[Range; MAX_SPANS]> = SmallVec::new();
        for span in self.spans.drain(..) {
            match merged.last_mut() {
                Some(last) if span.index <= last.end() => {
                    let end = last.end().max(span.end());
                    last.count = end - last.index;
                }
                _ => merged.push(span),
            }
        }
        if merged.len() > MAX_SPANS {
            self.mark_full();
        } else {
            self.spans = merged;
        }
    }
}
