//! Byte offsets of the manifest's text as the line and column a user
//! reads: 1-based, columns counted in characters (an editor's cursor).

use std::ops::Range;

/// Where each line of one text starts, to turn a byte offset into a line
/// and column without rescanning the text for each finding.
pub(super) struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        Self { text, starts }
    }

    /// The 1-based line and column of byte `offset` (clamped to the text,
    /// and back to the start of the character it falls in).
    pub(super) fn at(&self, offset: usize) -> (u32, u32) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let column = self.text[self.starts[line]..offset].chars().count() + 1;
        (to_u32(line + 1), to_u32(column))
    }

    /// The line of byte `offset`.
    pub(super) fn line(&self, offset: usize) -> u32 {
        self.at(offset).0
    }

    /// The text of `span`, if it is one.
    pub(super) fn text(&self, span: Range<usize>) -> Option<&'t str> {
        self.text.get(span)
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn offsets_become_lines_and_character_columns() {
        let lines = Lines::new("ab\nçd\n\nx");
        assert_eq!(lines.at(0), (1, 1));
        assert_eq!(lines.at(1), (1, 2));
        assert_eq!(lines.at(3), (2, 1));
        assert_eq!(lines.at(5), (2, 2), "ç is one column");
        assert_eq!(lines.at(4), (2, 1), "inside ç: its start");
        assert_eq!(lines.at(7), (3, 1));
        assert_eq!(lines.at(8), (4, 1));
        assert_eq!(lines.at(100), (4, 2), "past the end: the end");
    }
}
