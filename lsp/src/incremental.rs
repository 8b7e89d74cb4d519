//! A Lua document's calls kept current across edits without a walk of the
//! whole script.
//!
//! A call belongs to exactly one top-level statement of the chunk, and what
//! the scanner reports inside a statement depends only on that statement's
//! subtree, its text and the chunk-level locals declared above it. So after
//! edits, only the top-level statements the edits touched (in the tree the
//! calls came from, or in the current tree, or where tree-sitter said a
//! reparse changed the structure) are rescanned; every other call keeps its
//! data with its spans shifted past the edits. When a rescanned statement declares —
//! or declared — a chunk-level local of an API name, `GMP` or `_ENV`, the
//! scope of every later statement may have changed and the whole document
//! is rescanned instead.
//!
//! Each edit costs a shift of the calls after it (a few microseconds for
//! thousands of calls); the rescan that follows a pause costs the touched
//! statements' walk, not the document's.

use std::ops::Range;

use gantry_host::{Pos, ScannedCall, Span};
use gantry_lua::syntax::{ChunkLocals, Tree, pos_of, scan_statements, top_level_statements};
use tree_sitter::{InputEdit, Node, Point};

/// The calls of a Lua document, as of the last scan, with what an
/// incremental rescan needs.
#[derive(Debug, Default)]
pub struct LuaCalls {
    /// Every call, in source order; spans shifted through every edit since
    /// the last scan (calls inside `dirty` are stale until the rescan).
    calls: Vec<ScannedCall>,
    /// The top-level statements that declare chunk-level locals of tracked
    /// names, shifted like the calls.
    declarations: Vec<(Range<usize>, ChunkLocals)>,
    /// The tree the calls were scanned from, edited through every edit
    /// since: its top-level statements, in current byte offsets, are where
    /// the kept calls live. `None` until the first scan, and after a
    /// full-text replacement (the next rescan is whole).
    base: Option<Tree>,
    /// The bytes (current offsets) every edit since the last scan wrote.
    dirty: Option<Range<usize>>,
}

/// How the last [`LuaCalls::rescan`] went, for tests and tracing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rescan {
    /// Nothing changed since the last scan.
    Current,
    /// Only the top-level statements in this byte range were rescanned.
    Partial(Range<usize>),
    /// The whole document was rescanned.
    Whole,
}

impl LuaCalls {
    pub fn calls(&self) -> &[ScannedCall] {
        &self.calls
    }

    /// The chunk-level local declarations of the last scan (statement
    /// ranges shifted through the edits since), when every edit since lies
    /// within `region`: those outside it are current. `None` when the
    /// calls were never scanned from a tree or edits reach outside.
    pub fn declarations_within(
        &self,
        region: &Range<usize>,
    ) -> Option<&[(Range<usize>, ChunkLocals)]> {
        self.base.as_ref()?;
        match &self.dirty {
            Some(dirty) if dirty.start < region.start || dirty.end > region.end => None,
            _ => Some(&self.declarations),
        }
    }

    /// Whether edits happened since the last scan.
    pub fn is_stale(&self) -> bool {
        self.dirty.is_some() || self.base.is_none()
    }

    /// Follows an edit already applied to the text (and the current tree):
    /// shifts the kept calls and declarations, and widens the dirty bytes.
    pub fn edit(&mut self, edit: &InputEdit) {
        if let Some(base) = &mut self.base {
            base.edit(edit);
        }
        // Calls are in source order. One that starts before the edit and
        // reaches into it lies in a statement the edit touched: it is
        // replaced by the rescan, so its stale end does not matter.
        let first = self
            .calls
            .partition_point(|c| c.call.start < edit.start_byte);
        for call in &mut self.calls[first..] {
            shift_call(call, edit);
        }
        for (range, _) in &mut self.declarations {
            *range = shift_range(range, edit);
        }
        follow_edit(&mut self.dirty, edit);
    }

    /// Marks bytes (current offsets) whose syntax a reparse changed: a
    /// statement whose meaning an edit elsewhere changed (code that an
    /// opened comment or long string now swallows) is rescanned too.
    /// Tree-sitter can only tell this between a tree and the tree parsed
    /// from it, so each reparse reports it, not the rescan (the tree the
    /// calls came from is several reparses old by then).
    pub fn changed(&mut self, ranges: impl Iterator<Item = Range<usize>>) {
        for range in ranges {
            self.widen_dirty(range);
        }
    }

    fn widen_dirty(&mut self, range: Range<usize>) {
        self.dirty = Some(match &self.dirty {
            Some(dirty) => union(dirty, &range),
            None => range,
        });
    }

    /// Forgets what the calls were scanned from: the next rescan is whole
    /// (after a full-text replacement).
    pub fn reset(&mut self) {
        self.base = None;
    }

    /// Brings the calls up to date with `tree` (the current parse of
    /// `source`), rescanning only the statements the edits touched when
    /// that is safe.
    pub fn rescan(&mut self, tree: &Tree, source: &str) -> Rescan {
        let rescan = match (self.base.take(), self.dirty.clone()) {
            (None, _) => None,
            (Some(base), None) => {
                self.base = Some(base);
                return Rescan::Current;
            }
            (Some(base), Some(dirty)) => self.rescan_region(&base, tree, source, dirty),
        };
        let rescan = match rescan {
            Some(region) => Rescan::Partial(region),
            None => {
                let scan = scan_statements(tree, source, 0..source.len(), ChunkLocals::NONE);
                self.calls = scan.calls;
                self.declarations = scan.declarations;
                Rescan::Whole
            }
        };
        self.base = Some(tree.clone());
        self.dirty = None;
        rescan
    }

    /// Rescans the statements around `dirty` in place; `None` when the
    /// whole document must be rescanned instead (nothing changed then).
    fn rescan_region(
        &mut self,
        base: &Tree,
        tree: &Tree,
        source: &str,
        dirty: Range<usize>,
    ) -> Option<Range<usize>> {
        let mut region = dirty;
        // Whole statements of both trees: every kept call lies in a base
        // statement entirely outside the region, every rescanned one in a
        // current statement entirely inside it.
        loop {
            let grown = statements_over(tree.root_node(), &region);
            let grown = statements_over(base.root_node(), &grown);
            if grown == region {
                break;
            }
            region = grown;
        }
        if self
            .declarations
            .iter()
            .any(|(range, _)| overlaps(range, &region))
        {
            return None;
        }
        let above = self
            .declarations
            .iter()
            .filter(|(range, _)| range.end < region.start)
            .fold(ChunkLocals::NONE, |acc, (_, names)| acc.union(*names));
        let scan = scan_statements(tree, source, region.clone(), above);
        if !scan.declarations.is_empty() {
            return None;
        }
        let first = self.calls.partition_point(|c| c.call.start < region.start);
        let last = self.calls.partition_point(|c| c.call.start <= region.end);
        self.calls.splice(first..last, scan.calls);
        Some(region)
    }
}

/// `region` grown to the whole top-level statements (children of `root`)
/// that overlap it, ends inclusive.
fn statements_over(root: Node<'_>, region: &Range<usize>) -> Range<usize> {
    top_level_statements(root, region.clone())
        .fold(region.clone(), |out, node| union(&out, &node.byte_range()))
}

/// Keeps `written` (the bytes edits wrote, current offsets) current
/// through one more edit: shifted past it, and widened to what it wrote.
pub(crate) fn follow_edit(written: &mut Option<Range<usize>>, edit: &InputEdit) {
    let new = edit.start_byte..edit.new_end_byte;
    *written = Some(match written {
        Some(before) => union(&shift_range(before, edit), &new),
        None => new,
    });
}

fn union(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    a.start.min(b.start)..a.end.max(b.end)
}

/// Ends inclusive: a statement that ends where the region starts is touched.
fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// Where a byte offset of the text before `edit` is after it: unmoved
/// before the edit, shifted after it, and the edit's end inside it (such
/// offsets are dirty).
fn shift_offset(offset: usize, edit: &InputEdit) -> usize {
    if offset >= edit.old_end_byte {
        offset - edit.old_end_byte + edit.new_end_byte
    } else if offset <= edit.start_byte {
        offset
    } else {
        edit.new_end_byte
    }
}

fn shift_range(range: &Range<usize>, edit: &InputEdit) -> Range<usize> {
    shift_offset(range.start, edit)..shift_offset(range.end, edit)
}

fn point_of(pos: Pos) -> Point {
    Point::new(pos.line as usize, pos.column as usize)
}

/// A byte offset and its position, moved like [`shift_offset`]: after the
/// edit, a position on the edit's last line moves its column with it.
fn shift_point(offset: usize, pos: Pos, edit: &InputEdit) -> (usize, Pos) {
    if offset >= edit.old_end_byte {
        let old_end = edit.old_end_position;
        let new_end = edit.new_end_position;
        let point = point_of(pos);
        let moved = if point.row == old_end.row {
            Point::new(
                new_end.row,
                new_end.column + point.column.saturating_sub(old_end.column),
            )
        } else {
            Point::new(
                (point.row + new_end.row).saturating_sub(old_end.row),
                point.column,
            )
        };
        (shift_offset(offset, edit), pos_of(moved))
    } else if offset <= edit.start_byte {
        (offset, pos)
    } else {
        (edit.new_end_byte, pos_of(edit.new_end_position))
    }
}

fn shift_span(span: &mut Span, edit: &InputEdit) {
    (span.start, span.start_pos) = shift_point(span.start, span.start_pos, edit);
    (span.end, span.end_pos) = shift_point(span.end, span.end_pos, edit);
}

fn shift_call(call: &mut ScannedCall, edit: &InputEdit) {
    shift_span(&mut call.call, edit);
    shift_span(&mut call.callee, edit);
    shift_span(&mut call.arg_list, edit);
    for arg in &mut call.args {
        shift_span(&mut arg.span, edit);
    }
}

#[cfg(test)]
mod tests {
    use gantry_host::{Language, ScannedCall};
    use proptest::prelude::*;

    use super::Rescan;
    use crate::syntax::Parsed;
    use crate::text::{LineIndex, apply_change, floor_char_boundary};

    /// A Lua document driven like the server drives one.
    struct Doc {
        text: String,
        lines: LineIndex,
        parsed: Parsed,
    }

    impl Doc {
        fn open(text: &str) -> Doc {
            Doc {
                text: text.to_owned(),
                lines: LineIndex::new(text),
                parsed: Parsed::new(Language::Lua, text),
            }
        }

        /// Replaces bytes `start..end` (clamped to char boundaries) by `new`.
        fn edit(&mut self, start: usize, end: usize, new: &str) {
            let start = floor_char_boundary(&self.text, start);
            let end = floor_char_boundary(&self.text, end).max(start);
            let range = self.lines.range(&self.text, start..end);
            let old = self.lines.clone();
            let edit = apply_change(&mut self.text, &mut self.lines, Some(range), new)
                .expect("a ranged change");
            self.parsed.edit(edit, &old, &self.lines);
            self.parsed.reparse(&self.text);
        }

        fn replace(&mut self, old: &str, new: &str) {
            let start = self.text.find(old).expect("the text to replace");
            self.edit(start, start + old.len(), new);
        }

        fn rescan(&mut self) -> Rescan {
            self.parsed.rescan(&self.text)
        }

        /// What a whole scan of the current tree reports.
        fn whole(&self) -> Vec<ScannedCall> {
            gantry_lua::syntax::scan_tree(self.parsed.tree().expect("a tree"), &self.text)
        }

        fn keys(&self) -> Vec<&str> {
            self.parsed
                .calls()
                .iter()
                .filter_map(|c| c.literal_key())
                .collect()
        }
    }

    const SCRIPT: &str = r#"NotifyMessage("A.One", 1)
local function f(x)
    NotifyObjectMessage(self, "B.Two", x)
end
ListenMessage("C.Three", self, function(a) NotifyMessage("C.Four", a) end)
GMP.RunHook("D.Five")
"#;

    #[test]
    fn an_edit_inside_one_statement_rescans_only_that_statement() {
        let mut doc = Doc::open(SCRIPT);
        doc.replace("B.Two", "B.Twice");
        let statement =
            doc.text.find("local function").unwrap()..doc.text.find("\nListen").unwrap();
        assert_eq!(doc.rescan(), Rescan::Partial(statement));
        assert_eq!(doc.parsed.calls(), doc.whole());
        assert_eq!(
            doc.keys(),
            ["A.One", "B.Twice", "C.Three", "C.Four", "D.Five"]
        );
        assert_eq!(doc.rescan(), Rescan::Current);
    }

    #[test]
    fn calls_after_an_edit_keep_their_data_with_shifted_spans_and_positions() {
        let mut doc = Doc::open(SCRIPT);
        // A new line and columns on the edited line: every later call moves.
        doc.replace("\"A.One\", 1", "\"A.One\",\n  1");
        doc.replace("(\"D.Five\")", "(\"D.Five\") -- moved");
        doc.rescan();
        assert_eq!(doc.parsed.calls(), doc.whole());
        let last = doc.parsed.calls().last().unwrap();
        assert_eq!(last.call.start_pos.line, 6);
        assert_eq!(
            &doc.text[last.call.start..last.call.end],
            "GMP.RunHook(\"D.Five\")"
        );
    }

    #[test]
    fn declaring_a_chunk_local_of_an_api_name_rescans_the_whole_document() {
        let mut doc = Doc::open(SCRIPT);
        doc.replace(
            "local function f(x)",
            "local NotifyMessage = print\nlocal function f(x)",
        );
        assert_eq!(doc.rescan(), Rescan::Whole);
        // The global calls below the local are no longer API calls.
        assert_eq!(doc.keys(), ["A.One", "B.Two", "C.Three", "D.Five"]);
        assert_eq!(doc.parsed.calls(), doc.whole());
        // Removing it again brings them back, also by a whole rescan.
        doc.replace("local NotifyMessage = print\n", "");
        assert_eq!(doc.rescan(), Rescan::Whole);
        assert_eq!(
            doc.keys(),
            ["A.One", "B.Two", "C.Three", "C.Four", "D.Five"]
        );
    }

    #[test]
    fn a_chunk_local_above_an_edit_still_shadows_the_rescanned_statement() {
        let mut doc = Doc::open(&format!("local RunHook = print\n{SCRIPT}"));
        doc.replace("GMP.RunHook(\"D.Five\")", "RunHook(\"D.Five\")");
        assert!(matches!(doc.rescan(), Rescan::Partial(_)));
        assert_eq!(doc.keys(), ["A.One", "B.Two", "C.Three", "C.Four"]);
        assert_eq!(doc.parsed.calls(), doc.whole());
    }

    #[test]
    fn opening_a_block_comment_rescans_every_statement_it_swallows() {
        let mut doc = Doc::open(&format!("{SCRIPT}-- ]]\n"));
        // One keystroke turns a line comment into a long one up to `]]`.
        doc.replace("-- ]]", "--[[ ]]");
        doc.replace("local function", "--[[ local function");
        doc.rescan();
        assert_eq!(doc.keys(), ["A.One"]);
        assert_eq!(doc.parsed.calls(), doc.whole());
        doc.replace("--[[ local", "local");
        doc.rescan();
        assert_eq!(
            doc.keys(),
            ["A.One", "B.Two", "C.Three", "C.Four", "D.Five"]
        );
        assert_eq!(doc.parsed.calls(), doc.whole());
    }

    #[test]
    fn several_edits_between_rescans_are_rescanned_together() {
        let mut doc = Doc::open(SCRIPT);
        doc.replace("A.One", "A.Uno");
        doc.replace("D.Five", "D.Cinq");
        doc.replace("C.Four", "C.Quatre");
        doc.rescan();
        assert_eq!(
            doc.keys(),
            ["A.Uno", "B.Two", "C.Three", "C.Quatre", "D.Cinq"]
        );
        assert_eq!(doc.parsed.calls(), doc.whole());
    }

    const PIECES: &[&str] = &[
        "NotifyMessage(\"A.B\", 1)",
        "GMP.NotifyObjectMessage(self, \"C.D\", x)",
        "ListenMessage(\"E.F\", self, function(a, b) ",
        "local NotifyMessage = print\n",
        "local GMP = {}\n",
        "local function RunHook() end\n",
        "local _ENV = {}\n",
        "local x = ",
        "function f() ",
        "do ",
        "end",
        "end)",
        "--[[",
        "]]",
        "--",
        "\"",
        "'",
        "(",
        ")",
        ",",
        "\n",
        " ",
        "é",
        "🎮",
    ];

    fn edit() -> impl Strategy<Value = (usize, usize, String, bool)> {
        (
            0usize..400,
            0usize..12,
            prop::collection::vec(prop::sample::select(PIECES), 0..3).prop_map(|p| p.concat()),
            any::<bool>(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn incremental_calls_equal_a_whole_scan_after_random_edits(
            edits in prop::collection::vec(edit(), 1..30),
        ) {
            let mut doc = Doc::open(&format!("{SCRIPT}local NotifyWorldMessage = 1\n{SCRIPT}"));
            for (start, len, text, rescan) in edits {
                let start = start.min(doc.text.len());
                doc.edit(start, start + len, &text);
                if rescan {
                    doc.rescan();
                    prop_assert_eq!(doc.parsed.calls(), doc.whole(), "after editing to {:?}", doc.text);
                }
            }
            doc.rescan();
            prop_assert_eq!(doc.parsed.calls(), doc.whole(), "after editing to {:?}", doc.text);
            // A fresh parse agrees too whenever the text parses cleanly.
            if !doc.parsed.tree().unwrap().root_node().has_error() {
                prop_assert_eq!(doc.parsed.calls(), gantry_lua::syntax::scan(&doc.text));
            }
        }
    }
}
