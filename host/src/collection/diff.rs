//! Re-store diffing: the previous table is what makes "which rows changed"
//! answerable.

use crate::value::Value;

use super::spans::Spans;

/// Compares a newly stored table with the previous one row by row. A run of
/// differing rows is one span; a resize adds the grown or shrunk tail and
/// widens everything from the first touched row to the end. Identical
/// tables give no spans: nothing is published.
pub fn diff_rows(prev: &[Value], next: &[Value]) -> Spans {
    let mut spans = Spans::new();
    let common = prev.len().min(next.len());
    let mut i = 0;
    while i < common {
        if prev[i] == next[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < common && prev[i] != next[i] {
            i += 1;
        }
        spans.add(start as i32, (i - start) as i32);
    }
    if prev.len() != next.len() {
        let tail = prev.len().max(next.len());
        spans.add(common as i32, (tail - common) as i32);
        spans.widen_to_tail(tail as i32);
    }
    spans
}
