//! Text positions: byte offsets (what the scanners report) against LSP
//! positions (line and UTF-16 column, what editors send).
//!
//! Every conversion clamps instead of panicking: an editor may send a
//! position past the end of a line or of the file, and a document may hold
//! any bytes a client chose to send.

use lsp_types::{Position, Range};

/// A line longer than this many bytes keeps a count of its multi-byte
/// characters' bytes at every multiple of it ([`Blocks`]).
const BLOCK: usize = 1024;

/// Where each line starts, so that a position converts in time bounded by
/// `BLOCK` (1,024 bytes), whatever the line's length: one long line holding thousands
/// of calls (a minified or generated script) would otherwise cost its
/// length per call converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    len: usize,
    /// The lines longer than [`BLOCK`] bytes, by line number (sorted).
    long_lines: Vec<(usize, Blocks)>,
}

/// For each multiple `k` of [`BLOCK`] bytes from a long line's start
/// (`k ≥ 1`), the [`Weight`] of the line's bytes before it.
type Blocks = Box<[Weight]>;

/// What a run of UTF-8 bytes holds beyond one unit per byte: its
/// continuation bytes (a character is its bytes less those) and the lead
/// bytes of its 4-byte characters (UTF-16 takes two units for those). Any
/// byte run may be counted: the difference at character boundaries is exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Weight {
    continuations: usize,
    four_byte_leads: usize,
}

impl Weight {
    fn of(bytes: &[u8]) -> Self {
        let mut weight = Weight::default();
        for &b in bytes {
            weight.continuations += usize::from(b & 0xC0 == 0x80);
            weight.four_byte_leads += usize::from(b & 0xF8 == 0xF0);
        }
        weight
    }

    fn plus(self, other: Weight) -> Self {
        Weight {
            continuations: self.continuations + other.continuations,
            four_byte_leads: self.four_byte_leads + other.four_byte_leads,
        }
    }

    /// UTF-16 units in `bytes` bytes of this weight.
    fn utf16_units(self, bytes: usize) -> usize {
        (bytes + self.four_byte_leads).saturating_sub(self.continuations)
    }

    /// Characters in `bytes` bytes of this weight.
    fn chars(self, bytes: usize) -> usize {
        bytes.saturating_sub(self.continuations)
    }
}

/// The [`Blocks`] of a line (its bytes), when it is longer than [`BLOCK`].
fn blocks(line: &[u8]) -> Option<Blocks> {
    if line.len() <= BLOCK {
        return None;
    }
    let mut total = Weight::default();
    let blocks = line
        .chunks(BLOCK)
        .take((line.len() - 1) / BLOCK)
        .map(|chunk| {
            total = total.plus(Weight::of(chunk));
            total
        })
        .collect();
    Some(blocks)
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
        let mut index = Self {
            line_starts,
            len: text.len(),
            long_lines: Vec::new(),
        };
        index.long_lines = (0..index.line_starts.len())
            .filter_map(|line| Some((line, blocks(index.line_bytes(text, line))?)))
            .collect();
        index
    }

    /// The bytes of line `line` with its line break.
    fn line_bytes<'t>(&self, text: &'t str, line: usize) -> &'t [u8] {
        let start = self.line_starts[line];
        let end = self.line_starts.get(line + 1).copied().unwrap_or(self.len);
        text.as_bytes().get(start..end).unwrap_or_default()
    }

    /// The [`Weight`] of the bytes from the start of line `line` to
    /// `offset` (on that line): from the nearest block of a long line, so
    /// at most [`BLOCK`] bytes are read.
    fn weight_before(&self, text: &str, line: usize, offset: usize) -> Weight {
        let start = self.line_starts[line];
        let mut from = start;
        let mut weight = Weight::default();
        if let Ok(i) = self.long_lines.binary_search_by_key(&line, |(l, _)| *l) {
            let blocks = &self.long_lines[i].1;
            let k = ((offset - start) / BLOCK).min(blocks.len());
            if k > 0 {
                weight = blocks[k - 1];
                from = start + k * BLOCK;
            }
        }
        let rest = text.as_bytes().get(from..offset).unwrap_or_default();
        weight.plus(Weight::of(rest))
    }

    /// Follows an edit of the text it describes: bytes `edit.start ..
    /// edit.old_end` were replaced by `text[edit.start..edit.new_end]`
    /// (`text` is the text after the edit). Costs the inserted text, the
    /// edited lines when they are long, and a shift of the later line
    /// starts, not a pass over the whole text on every keystroke.
    pub fn apply(&mut self, text: &str, edit: Edit) {
        let inserted = text.get(edit.start..edit.new_end).unwrap_or_default();
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
        // The line holding the edit's start, and the lines it inserted,
        // have new text; the lines after them moved by `moved` numbers.
        let edited = first_removed.saturating_sub(1);
        let added_lines = shifted - first_removed;
        let moved = added_lines as isize - (first_kept - first_removed) as isize;
        let mut long_lines = Vec::with_capacity(self.long_lines.len() + 1);
        let mut kept = std::mem::take(&mut self.long_lines).into_iter().peekable();
        while let Some((line, blocks)) = kept.next_if(|(line, _)| *line < edited) {
            long_lines.push((line, blocks));
        }
        for line in edited..=edited + added_lines {
            if line < self.line_starts.len()
                && let Some(blocks) = blocks(self.line_bytes(text, line))
            {
                long_lines.push((line, blocks));
            }
        }
        long_lines.extend(
            kept.filter(|(line, _)| *line >= first_kept)
                .map(|(line, blocks)| (line.saturating_add_signed(moved), blocks)),
        );
        self.long_lines = long_lines;
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
        let bytes = offset - self.line_starts[line];
        let column = self.weight_before(text, line, offset).utf16_units(bytes);
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
        let line = self.line_of(offset);
        let bytes = offset - self.line_starts[line];
        self.weight_before(text, line, offset).chars(bytes) + 1
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
        Some(edit) => index.apply(text, edit),
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

    /// A text of long lines mixing 1-, 2-, 3- and 4-byte characters, so
    /// blocks start inside characters.
    fn long_mixed_text(seed: u64, lines: usize) -> String {
        let mut state = seed;
        let mut text = String::new();
        for _ in 0..lines {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (state >> 33) as usize % (3 * BLOCK);
            for i in 0..len {
                text.push(
                    ["x", "é", "€", "🎮", "ab"][(i * 7 + (state as usize >> 40)) % 5]
                        .chars()
                        .next()
                        .unwrap(),
                );
            }
            text.push_str(if state & 1 == 0 { "\n" } else { "\r\n" });
        }
        text
    }

    #[test]
    fn positions_on_long_lines_are_utf16_columns_at_every_offset() {
        let text = long_mixed_text(7, 6);
        let index = LineIndex::new(&text);
        assert!(!index.long_lines.is_empty());
        for offset in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
            let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let line = text[..offset].matches('\n').count() as u32;
            let units: usize = text[start..offset].chars().map(char::len_utf16).sum();
            assert_eq!(
                index.position(&text, offset),
                Position::new(line, units as u32)
            );
            assert_eq!(
                index.char_column(&text, offset),
                text[start..offset].chars().count() + 1
            );
            // (A position on a line's `\r` is clamped to the line's end.)
            if text.as_bytes().get(offset) != Some(&b'\n') {
                assert_eq!(
                    index.offset(&text, Position::new(line, units as u32)),
                    offset
                );
            }
        }
    }

    #[test]
    fn long_lines_follow_edits_that_join_split_and_lengthen_them() {
        let mut text = long_mixed_text(11, 5);
        let mut index = LineIndex::new(&text);
        let long = "é".repeat(BLOCK) + "🎮";
        type Change = ((u32, u32), (u32, u32), String);
        let edits: Vec<Change> = vec![
            ((0, 5), (0, 6), "y".to_owned()),
            ((0, 3), (2, 4), String::new()),
            ((1, 0), (1, 0), format!("{long}\n{long}")),
            ((0, 1), (0, 1), "\n".to_owned()),
            ((3, 2), (99, 0), long.clone()),
            ((0, 0), (0, 0), long.clone() + "\r\n"),
        ];
        for ((l1, c1), (l2, c2), new) in edits {
            let range = Range::new(Position::new(l1, c1), Position::new(l2, c2));
            apply_change(&mut text, &mut index, Some(range), &new);
            assert_eq!(
                index,
                LineIndex::new(&text),
                "after inserting {} bytes",
                new.len()
            );
        }
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
