//! Text positions: byte offsets (what the scanners report) against LSP
//! positions (line and UTF-16 column, what editors send).
//!
//! Every conversion clamps instead of panicking: an editor may send a
//! position past the end of a line or of the file, and a document may hold
//! any bytes a client chose to send.

use lsp_types::{Position, Range};

/// Where each line starts, so that a position converts in `O(line length)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = Vec::with_capacity(text.len() / 32 + 1);
        line_starts.push(0);
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self {
            line_starts,
            len: text.len(),
        }
    }

    /// Follows an edit of the text it describes: bytes `edit.start ..
    /// edit.old_end` were replaced by `inserted`. Costs the inserted text
    /// and a shift of the later line starts, not a pass over the whole text
    /// on every keystroke.
    pub fn apply(&mut self, edit: Edit, inserted: &str) {
        // Line starts after a removed line break go; later ones shift.
        let first_removed = self.line_starts.partition_point(|&s| s <= edit.start);
        let first_kept = self.line_starts.partition_point(|&s| s <= edit.old_end);
        let added = inserted
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| edit.start + i + 1);
        self.line_starts.splice(first_removed..first_kept, added);
        let shifted = first_removed + inserted.bytes().filter(|&b| b == b'\n').count();
        for start in &mut self.line_starts[shifted..] {
            *start = *start - edit.old_end + edit.new_end;
        }
        self.len = self.len - (edit.old_end - edit.start) + inserted.len();
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The byte range of line `line` without its line break; empty past the end.
    pub fn line_range(&self, text: &str, line: usize) -> std::ops::Range<usize> {
        let Some(&start) = self.line_starts.get(line) else {
            return self.len..self.len;
        };
        let mut end = self
            .line_starts
            .get(line + 1)
            .map_or(self.len, |next| next - 1);
        if end > start && text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        start..end
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// The 0-based line and byte column of a byte offset.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.len);
        let line = self.line_of(offset);
        (line, offset - self.line_starts[line])
    }

    /// The LSP position (UTF-16 column) of a byte offset.
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let start = self.line_starts[line];
        let column: usize = text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, column as u32)
    }

    pub fn range(&self, text: &str, span: std::ops::Range<usize>) -> Range {
        Range::new(
            self.position(text, span.start),
            self.position(text, span.end),
        )
    }

    /// The byte offset of an LSP position, clamped to the line's end and the
    /// file's end.
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let line = position.line as usize;
        if line >= self.line_starts.len() {
            return text.len();
        }
        let range = self.line_range(text, line);
        let mut units = 0usize;
        for (i, ch) in text[range.clone()].char_indices() {
            if units >= position.character as usize {
                return range.start + i;
            }
            units += ch.len_utf16();
        }
        range.end
    }

    /// The 1-based character column of a byte offset, for `gantry check`.
    pub fn char_column(&self, text: &str, offset: usize) -> usize {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let start = self.line_starts[self.line_of(offset)];
        text[start..offset].chars().count() + 1
    }
}

/// The largest char boundary at or below `offset`.
pub fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// One applied edit, in bytes: what a tree-sitter tree needs to be edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub old_end: usize,
    pub new_end: usize,
}

/// Applies an LSP content change to `text`, returning the byte edit (or
/// `None` for a full replacement). `index` must describe `text` and is
/// updated (rebuilt only for a full replacement).
pub fn apply_change(
    text: &mut String,
    index: &mut LineIndex,
    range: Option<Range>,
    new_text: &str,
) -> Option<Edit> {
    let edit = range.map(|range| {
        let start = index.offset(text, range.start);
        let end = index.offset(text, range.end).max(start);
        text.replace_range(start..end, new_text);
        Edit {
            start,
            old_end: end,
            new_end: start + new_text.len(),
        }
    });
    match edit {
        Some(edit) => index.apply(edit, new_text),
        None => {
            text.clear();
            text.push_str(new_text);
            *index = LineIndex::new(text);
        }
    }
    edit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_utf16_and_offsets_are_bytes() {
        let text = "a\n🎮é = \"x\"\n";
        let index = LineIndex::new(text);
        let quote = text.find('"').unwrap();
        assert_eq!(index.position(text, quote), Position::new(1, 6));
        assert_eq!(index.offset(text, Position::new(1, 6)), quote);
        // Inside the surrogate pair: clamps to a boundary, never panics.
        let _ = index.offset(text, Position::new(1, 1));
        assert_eq!(index.offset(text, Position::new(1, 999)), text.len() - 1);
        assert_eq!(index.offset(text, Position::new(99, 0)), text.len());
        assert_eq!(index.char_column(text, quote), 6);
    }

    #[test]
    fn incremental_changes_edit_in_place() {
        let mut text = String::from("hello\nworld\n");
        let mut index = LineIndex::new(&text);
        let edit = apply_change(
            &mut text,
            &mut index,
            Some(Range::new(Position::new(1, 0), Position::new(1, 5))),
            "there",
        );
        assert_eq!(text, "hello\nthere\n");
        assert_eq!(
            edit,
            Some(Edit {
                start: 6,
                old_end: 11,
                new_end: 11
            })
        );
        // A reversed range is treated as empty, not a panic.
        apply_change(
            &mut text,
            &mut index,
            Some(Range::new(Position::new(1, 3), Position::new(0, 1))),
            "!",
        );
        assert_eq!(text, "hello\nthe!re\n");
    }

    #[test]
    fn the_line_index_follows_edits_without_a_pass_over_the_whole_text() {
        let mut text = String::from("one\ntwo\r\nthree\n\nfour");
        let mut index = LineIndex::new(&text);
        type Change = ((u32, u32), (u32, u32), &'static str);
        let edits: &[Change] = &[
            ((0, 1), (0, 2), "X"),
            ((1, 0), (2, 2), "a\nb\nc"),
            ((0, 3), (1, 0), ""),
            ((4, 0), (4, 0), "\n\n"),
            ((0, 0), (99, 0), "all\n🎮\n"),
            ((1, 2), (1, 2), "é\r\n"),
        ];
        for &((l1, c1), (l2, c2), new) in edits {
            let range = Range::new(Position::new(l1, c1), Position::new(l2, c2));
            apply_change(&mut text, &mut index, Some(range), new);
            assert_eq!(index, LineIndex::new(&text), "after {new:?} in {text:?}");
        }
    }
}
