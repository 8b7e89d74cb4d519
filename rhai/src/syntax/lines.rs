//! Byte offset → (line, byte column), for the spans the scanner reports.

use gantry_host::{Pos, Span};

/// The start offset of every line of a source (lines end at `\n`).
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(src: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            src.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    pub(crate) fn pos(&self, offset: usize) -> Pos {
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0);
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(offset.saturating_sub(start)).unwrap_or(u32::MAX),
        }
    }

    pub(crate) fn span(&self, start: usize, end: usize) -> Span {
        Span {
            start,
            end,
            start_pos: self.pos(start),
            end_pos: self.pos(end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_zero_based_lines_and_byte_columns() {
        let index = LineIndex::new("ab\nçd\n");
        assert_eq!(index.pos(0), Pos { line: 0, column: 0 });
        assert_eq!(index.pos(2), Pos { line: 0, column: 2 });
        assert_eq!(index.pos(3), Pos { line: 1, column: 0 });
        assert_eq!(index.pos(5), Pos { line: 1, column: 2 });
        assert_eq!(index.pos(7), Pos { line: 2, column: 0 });
    }
}
