//! The bridge to the languages' own scanners — the same ones the loaders
//! use, so what the editor flags is exactly what the loader bakes.
//!
//! Lua documents keep their tree-sitter tree and reparse incrementally on
//! every change; their calls are brought up to date when the editor pauses
//! (or a request needs them all) by rescanning only the top-level
//! statements the edits touched ([`crate::incremental`]), and a completion
//! in between scans just the statement at the cursor. Rhai scripts are small and are rescanned whole.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use gantry_host::{Language, ScannedCall};
use gantry_lua::syntax::{Around, ChunkLocals};
use tree_sitter::{InputEdit, Point};

use crate::incremental::{LuaCalls, Rescan, follow_edit};
use crate::text::{Edit, LineIndex};

/// The script language of a path, by extension.
pub fn language_of(path: &Path) -> Option<Language> {
    match path.extension()?.to_str()? {
        "lua" => Some(Language::Lua),
        "rhai" => Some(Language::Rhai),
        _ => None,
    }
}

/// The language of an LSP `languageId`, falling back to the path.
pub fn language_of_id(id: &str, path: &Path) -> Option<Language> {
    match id {
        "lua" => Some(Language::Lua),
        "rhai" => Some(Language::Rhai),
        _ => language_of(path),
    }
}

/// Scans a whole script once (batch checks and workspace indexing).
pub fn scan(language: Language, text: &str) -> Vec<ScannedCall> {
    match language {
        Language::Lua => gantry_lua::syntax::scan(text),
        Language::Rhai => gantry_rhai::syntax::scan(text),
        Language::Rust | Language::Manifest => Vec::new(),
    }
}

/// Why a script's language would refuse to load it, at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub at: usize,
    pub message: String,
}

/// Scans a whole script once and says whether its language would load it
/// (`gantry check`): Lua 5.4's verdict from the scanner's own walk (the
/// tree-sitter grammar is wider than Lua's), Rhai's parser's (which runs
/// nothing).
pub fn scan_checked(language: Language, text: &str) -> (Vec<ScannedCall>, Option<SyntaxError>) {
    match language {
        Language::Lua => {
            let (calls, refusal) = gantry_lua::syntax::scan_checked(text);
            let error = refusal.map(|r| SyntaxError {
                at: r.at.min(text.len()),
                message: format!("Lua would not load this script: {}", r.why),
            });
            (calls, error)
        }
        Language::Rhai => (gantry_rhai::syntax::scan(text), rhai_syntax_error(text)),
        Language::Rust | Language::Manifest => (Vec::new(), None),
    }
}

/// Rhai's parse error of `text`, if any, from an engine set up as the
/// runtime's is for parsing (`eval` refused, no optimization: nothing is
/// called, nothing runs).
fn rhai_syntax_error(text: &str) -> Option<SyntaxError> {
    let mut engine = rhai::Engine::new_raw();
    engine.disable_symbol("eval");
    engine.set_optimization_level(rhai::OptimizationLevel::None);
    let error = engine.compile(text).err()?;
    let position = error.position();
    let at = match (position.line(), position.position()) {
        (Some(line), column) => {
            let lines = LineIndex::new(text);
            let range = lines.line_range(text, line.saturating_sub(1));
            let column = column.unwrap_or(1).saturating_sub(1);
            let line_text = text.get(range.clone()).unwrap_or("");
            range.start
                + line_text
                    .char_indices()
                    .nth(column)
                    .map_or(line_text.len(), |(i, _)| i)
        }
        (None, _) => text.len(),
    };
    Some(SyntaxError {
        at: at.min(text.len()),
        message: format!("Rhai would not compile this script: {}", error.err_type()),
    })
}

/// The largest run of statements [`Parsed::closed_edits`] parses on its
/// own; past it the whole document's incremental reparse is the cheaper way.
const CLOSED_REGION_MAX: usize = 64 * 1024;

/// A document's parse state and calls between edits.
pub struct Parsed {
    language: Language,
    /// A Lua document's last parse, with every edit since applied to it
    /// (`Tree::edit`): it matches the text when `unparsed` is `None`.
    tree: Option<gantry_lua::syntax::Tree>,
    /// The bytes (current offsets) the edits since the last parse wrote:
    /// typing does not reparse at once (see [`Parsed::edit`]).
    unparsed: Option<Range<usize>>,
    /// A Lua document's calls, kept current incrementally.
    lua: LuaCalls,
    /// A Rhai document's calls, rescanned whole on every change.
    rhai: Vec<ScannedCall>,
    /// A Rhai document's comments and strings, from the same tokenizer
    /// pass as its calls.
    rhai_spans: Vec<Range<usize>>,
    /// [`Parsed::closed_edits`] of the current edits, once asked: a
    /// completion asks for the statement's calls and where code begins on
    /// the line. Cleared by every edit and parse.
    closed: OnceLock<Option<ClosedEdits>>,
}

/// The region of closed edits and its own parse ([`Parsed::closed_edits`]).
type ClosedEdits = (Range<usize>, gantry_lua::syntax::Tree);

/// Whether the last parse is still exact about the top-level statement at
/// byte `offset`, edits since starting at byte `edits`: the statement and
/// the one after it end before the edits, and the parse found no error in
/// either. The text before the edits is what that parse read, and the
/// statement after holds the tokens that ended the one at `offset` — so a
/// line typed at the end of a 10,000-line script does not reparse it for a
/// completion at its top.
fn ahead_of_edits(tree: &gantry_lua::syntax::Tree, offset: usize, edits: usize) -> bool {
    let root = tree.root_node();
    let Some(statement) = root.first_child_for_byte(offset.saturating_sub(1)) else {
        return false;
    };
    let Some(next) = statement.next_sibling() else {
        return false;
    };
    next.end_byte() < edits && !statement.has_error() && !next.has_error()
}

/// Whether every long bracket that `[`, `=` × n, `[` may open in `bytes`
/// is closed in them. The region parsed on its own cannot tell: an
/// unclosed `--[[` reads there as a line comment, while in the document it
/// may run to a `]]` far below. Conservative: an opener inside a string or
/// comment counts too (the region is then reparsed with the document).
fn long_brackets_close(bytes: &[u8]) -> bool {
    use gantry_lua::syntax::long_bracket_level;
    // The start of the last closing bracket of each level seen.
    let mut last_close: Vec<(usize, Option<usize>)> = Vec::new();
    let mut at = 0;
    while let Some(found) = bytes[at..].iter().position(|&b| b == b'[') {
        let open = at + found;
        at = open + 1;
        let Some(level) = long_bracket_level(bytes, open) else {
            continue;
        };
        let close = match last_close.iter().find(|(l, _)| *l == level) {
            Some((_, close)) => *close,
            None => {
                let mut closer = vec![b'='; level + 2];
                closer[0] = b']';
                closer[level + 1] = b']';
                let close = bytes
                    .windows(closer.len())
                    .rposition(|w| w == closer.as_slice());
                last_close.push((level, close));
                close
            }
        };
        if close.is_none_or(|close| close < open + level + 2) {
            return false;
        }
    }
    true
}

/// How many regions [`Parsed::closed_edits`] parses, each a statement
/// wider on both sides, before it gives up.
const CLOSED_TRIES: usize = 3;

/// The region from `before` (or the document's start) to `after`, parsed on
/// its own, when it shows the edits closed off (see
/// [`Parsed::closed_edits`]).
fn closed_region(
    text: &str,
    edits: &Range<usize>,
    before: Option<tree_sitter::Node<'_>>,
    after: tree_sitter::Node<'_>,
) -> Option<ClosedEdits> {
    let region = before.map_or(0, |n| n.start_byte())..after.end_byte();
    if region.start > edits.start
        || after.start_byte() <= edits.end
        || region.end > text.len()
        || region.len() > CLOSED_REGION_MAX
        || after.has_error()
        || before.is_some_and(|n| n.has_error())
    {
        return None;
    }
    if !long_brackets_close(&text.as_bytes()[region.clone()]) {
        return None;
    }
    let start = before.map_or(Point::new(0, 0), |n| n.start_position());
    let own = gantry_lua::syntax::parse_range(text, region.clone(), start, after.end_position())?;
    let own_root = own.root_node();
    let same = |mine: Option<tree_sitter::Node<'_>>, theirs: tree_sitter::Node<'_>| {
        mine.is_some_and(|n| {
            n.byte_range() == theirs.byte_range()
                && n.kind_id() == theirs.kind_id()
                && !n.has_error()
        })
    };
    let own_first = own_root.child(0);
    let own_last = own_root.child(own_root.child_count().checked_sub(1)?);
    if !same(own_last, after) || before.is_some_and(|b| !same(own_first, b)) {
        return None;
    }
    Some((region, own))
}

impl std::fmt::Debug for Parsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parsed")
            .field("language", &self.language)
            .field("has_tree", &self.tree.is_some())
            .field("unparsed", &self.unparsed)
            .field("stale", &self.is_stale())
            .finish()
    }
}

impl Parsed {
    /// Parses and scans a freshly opened document.
    pub fn new(language: Language, text: &str) -> Self {
        let mut parsed = Self {
            language,
            tree: None,
            unparsed: None,
            lua: LuaCalls::default(),
            rhai: Vec::new(),
            rhai_spans: Vec::new(),
            closed: OnceLock::new(),
        };
        parsed.reparse(text);
        parsed.rescan(text);
        parsed
    }

    /// Follows an edit already applied to the text: the old tree learns
    /// it (so the next parse reuses what the edit did not touch) and the
    /// kept calls shift past it. `old`/`new` describe the text before and
    /// after.
    ///
    /// A Lua document is not reparsed here: even incrementally, tree-sitter
    /// rebuilds the chunk's list of top-level statements, 3.5 ms per
    /// keystroke on a 10,000-line script. The reparse waits for a request
    /// that needs the whole tree or for a pause ([`Parsed::rescan`]); a
    /// completion in between parses just the statements being edited
    /// ([`Parsed::scan_around`]).
    pub fn edit(&mut self, edit: Edit, old: &LineIndex, new: &LineIndex) {
        let point = |index: &LineIndex, offset: usize| {
            let (line, column) = index.line_column(offset);
            Point::new(line, column)
        };
        let edit = InputEdit {
            start_byte: edit.start,
            old_end_byte: edit.old_end,
            new_end_byte: edit.new_end,
            start_position: point(old, edit.start),
            old_end_position: point(old, edit.old_end),
            new_end_position: point(new, edit.new_end),
        };
        if let Some(tree) = &mut self.tree {
            tree.edit(&edit);
        }
        self.closed = OnceLock::new();
        self.lua.edit(&edit);
        if self.language == Language::Lua {
            follow_edit(&mut self.unparsed, &edit);
        }
    }

    /// Forgets the tree and what the calls were scanned from (after a
    /// full-text replacement): the next parse and rescan are whole.
    pub fn reset(&mut self) {
        self.tree = None;
        self.unparsed = None;
        self.closed = OnceLock::new();
        self.lua.reset();
    }

    /// After the edits of a change: a Rhai script is small and is
    /// rescanned whole at once; a Lua document waits (see [`Parsed::edit`]).
    pub fn changed(&mut self, text: &str) {
        match self.language {
            Language::Lua => {
                if self.tree.is_none() {
                    self.reparse(text);
                }
            }
            _ => self.reparse(text),
        }
    }

    /// Whether a Lua document's tree is behind its text.
    pub fn is_unparsed(&self) -> bool {
        self.unparsed.is_some()
    }

    /// Parses a Lua document (incrementally after [`Parsed::edit`]) so the
    /// tree matches the text; rescans a Rhai script.
    pub fn reparse(&mut self, text: &str) {
        self.unparsed = None;
        self.closed = OnceLock::new();
        match self.language {
            Language::Lua => {
                let tree = gantry_lua::syntax::parse(text, self.tree.as_ref());
                // Only a tree parsed from the edited old one can say where
                // the structure changed: ask each reparse, not the rescan
                // (whose tree is several reparses old by then).
                if let (Some(old), Some(new)) = (&self.tree, &tree) {
                    self.lua.changed(
                        old.changed_ranges(new)
                            .map(|range| range.start_byte..range.end_byte),
                    );
                }
                self.tree = tree;
            }
            Language::Rhai => {
                (self.rhai, self.rhai_spans) = gantry_rhai::syntax::scan_with_text(text);
            }
            other => self.rhai = scan(other, text),
        }
    }

    /// Whether the calls are behind the text.
    pub fn is_stale(&self) -> bool {
        self.language == Language::Lua && self.lua.is_stale()
    }

    /// Brings a Lua document's calls up to date, rescanning only the
    /// top-level statements the edits since the last scan touched when
    /// that is safe. Returns what it did.
    pub fn rescan(&mut self, text: &str) -> Rescan {
        if self.language != Language::Lua {
            return Rescan::Current;
        }
        if self.tree.is_none() || self.is_unparsed() {
            self.reparse(text);
        }
        match &self.tree {
            Some(tree) => self.lua.rescan(tree, text),
            None => {
                self.lua = LuaCalls::default();
                Rescan::Whole
            }
        }
    }

    /// Every call, as of the last scan (current unless [`Parsed::is_stale`]).
    pub fn calls(&self) -> &[ScannedCall] {
        match self.language {
            Language::Lua => self.lua.calls(),
            _ => &self.rhai,
        }
    }

    /// The calls of the top-level statement around byte `offset`, and
    /// whether `offset` is in a comment: what a completion right after an
    /// edit needs, without rescanning the whole document. Before the
    /// document is reparsed, the statements being edited are parsed on
    /// their own when that is sound, else the document is reparsed for this
    /// answer (and again when it is rescanned: a request reads a snapshot).
    /// `None` when the language keeps no tree (the caller scans whole).
    pub fn scan_around(&self, text: &str, offset: usize) -> Option<Around> {
        let tree = self.tree.as_ref()?;
        let Some(unparsed) = &self.unparsed else {
            return Some(gantry_lua::syntax::around(tree, text, offset));
        };
        if ahead_of_edits(tree, offset, unparsed.start) {
            return Some(gantry_lua::syntax::around(tree, text, offset));
        }
        if let Some(around) = self.below_closed_edits(text, offset) {
            return Some(around);
        }
        if let Some(edited) = gantry_lua::syntax::scan_edited(tree, text, unparsed.clone(), offset)
        {
            return Some(edited);
        }
        let fresh = gantry_lua::syntax::parse(text, Some(tree))?;
        Some(gantry_lua::syntax::around(&fresh, text, offset))
    }

    /// When the edits since the last parse are closed off from the rest of
    /// the document: the bytes of the top-level statements they touched,
    /// widened by one untouched statement on each side, with those bytes
    /// parsed on their own. The last parse (with the edits applied through
    /// `Tree::edit`) is then exact about every byte after the region.
    ///
    /// Closed means: the text before the region and after it is what the
    /// last parse read; the statements on either side are clean in the last
    /// parse and come out of the region's own parse with the same bytes and
    /// kind, clean — so the edits neither joined them to another statement
    /// nor left a comment, string or block open past the region (any of
    /// those would make the region's parse end in an error or move its last
    /// statement). Errors between the two are allowed: typing usually is
    /// one until the word is done. `None` when that cannot be shown, or the
    /// region is too large to be worth parsing on its own.
    fn closed_edits(&self, text: &str) -> Option<&ClosedEdits> {
        self.closed
            .get_or_init(|| self.find_closed_edits(text))
            .as_ref()
    }

    fn find_closed_edits(&self, text: &str) -> Option<ClosedEdits> {
        let tree = self.tree.as_ref()?;
        let edits = self.unparsed.as_ref()?;
        let root = tree.root_node();
        let mut touched = gantry_lua::syntax::top_level_statements(root, edits.clone());
        let first = touched.next()?;
        let last = touched.last().unwrap_or(first);
        // Statements the last parse found in error (typing usually is) are
        // taken into the region too: their boundaries are the parser's
        // guesses, which the edits may change.
        let mut before = first.prev_sibling();
        while let Some(node) = before.filter(|n| n.has_error()) {
            before = node.prev_sibling();
        }
        let mut after = last.next_sibling()?;
        while after.has_error() && after.end_byte() - first.start_byte() <= CLOSED_REGION_MAX {
            after = after.next_sibling()?;
        }
        // An edit may also join a statement beside it to the edited one
        // (deleting the `x` of `xlocal function f()` makes the function
        // local again): a few more statements on each side are tried.
        for _ in 0..CLOSED_TRIES {
            match closed_region(text, edits, before, after) {
                Some(closed) => return Some(closed),
                None => {
                    before = before.and_then(|n| n.prev_sibling());
                    after = after.next_sibling()?;
                }
            }
        }
        None
    }

    /// [`Parsed::scan_around`] for an offset below edits closed off above
    /// it ([`Parsed::closed_edits`]): the statement at `offset` is read from
    /// the last parse, with the chunk-level locals of the statements above
    /// it — those the edited region declares now, from its own parse, and
    /// those the last scan found elsewhere. So one letter typed at the top
    /// of a 10,000-line script costs a completion at its bottom the parse
    /// of the letter's statement, not of the script.
    fn below_closed_edits(&self, text: &str, offset: usize) -> Option<Around> {
        let tree = self.tree.as_ref()?;
        let edits = self.unparsed.as_ref()?;
        if offset <= edits.end {
            return None;
        }
        let (region, own) = self.closed_edits(text)?;
        let region = region.clone();
        if offset <= region.end {
            return None;
        }
        let kept = self.lua.declarations_within(&region)?;
        let locals = |range: &dyn Fn(&Range<usize>) -> bool| {
            kept.iter()
                .filter(|(r, _)| range(r))
                .fold(ChunkLocals::NONE, |acc, (_, names)| acc.union(*names))
        };
        let mut above = locals(&|r| r.end <= region.start);
        let edited = gantry_lua::syntax::scan_statements(own, text, region.clone(), above);
        above = edited
            .declarations
            .iter()
            .fold(above, |acc, (_, names)| acc.union(*names));
        // The statement at `offset` as the whole walk picks it: the first
        // ending at or after it, if it starts at or before it.
        let root = tree.root_node();
        let statement = gantry_lua::syntax::top_level_statements(root, offset..offset)
            .find(|n| n.end_byte() >= offset)
            .filter(|n| n.start_byte() <= offset);
        let calls = match statement {
            Some(statement) => {
                let start = statement.start_byte();
                above = above.union(locals(&|r| r.start >= region.end && r.end <= start));
                let probe = (start + 1).min(statement.end_byte());
                let scan = gantry_lua::syntax::scan_statements(tree, text, probe..probe, above);
                scan.calls
                    .into_iter()
                    .filter(|c| statement.byte_range().contains(&c.call.start))
                    .collect()
            }
            None => Vec::new(),
        };
        Some(Around {
            calls,
            in_comment: gantry_lua::syntax::comment_at(tree, text, offset),
        })
    }

    /// Whether byte `offset` of a parsed Lua document is in a comment
    /// (`false` for Rhai, whose line lexer sees its comments).
    pub fn comment_at(&self, text: &str, offset: usize) -> bool {
        match (&self.tree, &self.unparsed) {
            (Some(tree), None) => gantry_lua::syntax::comment_at(tree, text, offset),
            _ => self
                .scan_around(text, offset)
                .is_some_and(|around| around.in_comment),
        }
    }

    /// Where code begins on the line `line` (bytes, without its break): the
    /// line start, or — when the line begins inside a comment or string
    /// opened on an earlier line — just after that comment or string (past
    /// the line's end when it does not close on the line).
    ///
    /// A Lua document asks its tree: the last parse, with the edits since
    /// applied to it, is exact about the text before the line when every
    /// edit since lies at or after the line start (typing on the line);
    /// after an edit above it, the document is parsed again for this answer.
    pub fn code_start(&self, text: &str, line: Range<usize>) -> usize {
        let line_start = line.start;
        let open_at = |tree: &gantry_lua::syntax::Tree| {
            crate::lexical::lua_open_at(tree, text, line_start, line.end)
        };
        let open = match self.language {
            Language::Lua => match (&self.tree, &self.unparsed) {
                (Some(tree), None) => open_at(tree),
                (Some(tree), Some(edits)) if edits.start >= line_start => open_at(tree),
                (Some(tree), Some(_))
                    if self
                        .closed_edits(text)
                        .is_some_and(|(region, _)| region.end < line_start) =>
                {
                    open_at(tree)
                }
                (Some(tree), Some(_)) => {
                    gantry_lua::syntax::parse(text, Some(tree)).and_then(|fresh| open_at(&fresh))
                }
                (None, _) => None,
            },
            Language::Rhai => crate::lexical::open_span_at(&self.rhai_spans, line_start),
            Language::Rust | Language::Manifest => None,
        };
        let start = open.unwrap_or(line_start).max(line_start);
        if start > text.len() {
            start
        } else {
            crate::text::floor_char_boundary(text, start).max(line_start)
        }
    }

    /// The tree (Lua), once the document is parsed: for tests comparing
    /// against a whole scan.
    pub fn tree(&self) -> Option<&gantry_lua::syntax::Tree> {
        self.tree.as_ref().filter(|_| !self.is_unparsed())
    }
}

#[cfg(test)]
mod tests {
    use gantry_host::Language;
    use proptest::prelude::*;

    use super::Parsed;
    use crate::text::{LineIndex, apply_change, floor_char_boundary};

    const SCRIPT: &str = r#"NotifyMessage("A.One", 1)
local function f(x)
    NotifyObjectMessage(self, "B.Two", x)
    if x then GMP.RunHook("B.Three", x) end
end
ListenMessage("C.Four", self, function(a) NotifyMessage("C.Five", a) end)
GMP.NotifyWorldMessage(self, "D.Six", { 1, 2 })
"#;

    /// Edits a document as the server does on a change: no reparse.
    fn edit(
        text: &mut String,
        lines: &mut LineIndex,
        parsed: &mut Parsed,
        at: usize,
        len: usize,
        new: &str,
    ) {
        let start = floor_char_boundary(text, at.min(text.len()));
        let end = floor_char_boundary(text, (start + len).min(text.len())).max(start);
        let range = lines.range(text, start..end);
        let old = lines.clone();
        let edit = apply_change(text, lines, Some(range), new).expect("a ranged change");
        parsed.edit(edit, &old, lines);
        parsed.changed(text);
    }

    /// What a completion at `offset` sees after a full reparse.
    fn reparsed_around(text: &str, offset: usize) -> (Vec<gantry_host::ScannedCall>, bool) {
        let tree = gantry_lua::syntax::parse(text, None).expect("parses");
        let clean = !tree.root_node().has_error();
        (gantry_lua::syntax::scan_around(&tree, text, offset), clean)
    }

    #[test]
    fn a_statement_begun_below_leaves_the_calls_above_as_a_reparse_finds_them() {
        // Typed at the end, then a line that joins the statement before
        // it (`(` continues a call in Lua): the calls above read the same
        // as after a full reparse either way.
        for typed in ["x", "(1)", "--[[", "NotifyMessage(\"Z."] {
            let mut text = SCRIPT.to_owned();
            let mut lines = LineIndex::new(&text);
            let mut parsed = Parsed::new(Language::Lua, &text);
            let end = text.len();
            edit(&mut text, &mut lines, &mut parsed, end, 0, typed);
            assert!(parsed.is_unparsed(), "{typed}");
            for key in ["A.One", "B.Two", "C.Four", "D.Six"] {
                let at = text.find(key).unwrap() + 2;
                let around = parsed.scan_around(&text, at).expect("a Lua document");
                assert_eq!(around.calls, reparsed_around(&text, at).0, "{typed} {key}");
            }
        }
    }

    #[test]
    fn typing_does_not_reparse_and_a_completion_reads_the_edited_statement() {
        let mut text = SCRIPT.to_owned();
        let mut lines = LineIndex::new(&text);
        let mut parsed = Parsed::new(Language::Lua, &text);
        let at = text.find("B.Two").unwrap() + 2;
        edit(&mut text, &mut lines, &mut parsed, at, 0, "Tw");
        assert!(parsed.is_unparsed(), "typing leaves the reparse for later");
        assert!(
            parsed.tree().is_none(),
            "no tree is handed out behind the text"
        );
        let calls = parsed
            .scan_around(&text, at + 2)
            .expect("a Lua document")
            .calls;
        assert_eq!(calls, reparsed_around(&text, at + 2).0);
        assert_eq!(calls[0].literal_key(), Some("B.TwTwo"));
        // Answered from the edited statement, not by a reparse.
        let stale = parsed.tree.as_ref().expect("the last parse");
        let unparsed = parsed.unparsed.clone().expect("the typed bytes");
        assert_eq!(unparsed, at..at + 2);
        assert!(gantry_lua::syntax::scan_edited(stale, &text, unparsed, at + 2).is_some());
        // The pause's rescan reparses, and the calls match a whole scan.
        parsed.rescan(&text);
        assert!(!parsed.is_unparsed());
        assert_eq!(parsed.calls(), gantry_lua::syntax::scan(&text));
    }

    /// The script with its statements repeated so edits at its top are far
    /// from a completion at its bottom.
    fn long_script() -> String {
        format!("local NotifyWorldMessage = 1\n{}", SCRIPT.repeat(6))
    }

    /// `Parsed::scan_around` and `Parsed::code_start` at `offset`, beside
    /// what a full reparse gives.
    fn assert_answers_like_a_reparse(
        text: &str,
        lines: &LineIndex,
        parsed: &Parsed,
        offset: usize,
    ) {
        let around = parsed.scan_around(text, offset).expect("a Lua document");
        assert_eq!(
            around.calls,
            reparsed_around(text, offset).0,
            "at {offset} in {text:?}"
        );
        let tree = gantry_lua::syntax::parse(text, None).expect("parses");
        assert_eq!(
            around.in_comment,
            gantry_lua::syntax::comment_at(&tree, text, offset)
        );
        let line = lines.line_range(text, lines.line_of(offset));
        let fresh = Parsed::new(Language::Lua, text);
        assert_eq!(
            parsed.code_start(text, line.clone()),
            fresh.code_start(text, line)
        );
    }

    #[test]
    fn a_letter_typed_at_the_top_leaves_a_completion_at_the_bottom_unparsed() {
        for typed in [
            "x",
            "l",
            "local RunHook = 1\n",
            "é",
            "\n",
            "--[[ ]]",
            "NotifyMessage(\"Q.\", 1) ",
        ] {
            let mut text = long_script();
            let mut lines = LineIndex::new(&text);
            let mut parsed = Parsed::new(Language::Lua, &text);
            let line_start = text.find("local function").unwrap();
            edit(&mut text, &mut lines, &mut parsed, line_start, 0, typed);
            for key in ["D.Six", "C.Five", "B.Three"] {
                let at = text.rfind(key).unwrap() + 2;
                assert!(
                    parsed.below_closed_edits(&text, at).is_some(),
                    "{typed:?}: answered without a reparse"
                );
                assert_answers_like_a_reparse(&text, &lines, &parsed, at);
            }
        }
    }

    #[test]
    fn deleting_what_made_a_statement_an_error_is_answered_without_a_reparse() {
        let mut text = long_script();
        let mut lines = LineIndex::new(&text);
        let mut parsed = Parsed::new(Language::Lua, &text);
        let line_start = text.find("local function").unwrap();
        edit(&mut text, &mut lines, &mut parsed, line_start, 0, "x");
        // The pause: the document is reparsed with `xlocal` in error.
        parsed.rescan(&text);
        edit(&mut text, &mut lines, &mut parsed, line_start, 1, "");
        let at = text.rfind("D.Six").unwrap() + 2;
        assert!(parsed.below_closed_edits(&text, at).is_some());
        assert_answers_like_a_reparse(&text, &lines, &parsed, at);
    }

    #[test]
    fn a_block_or_comment_left_open_above_is_not_read_past() {
        for typed in ["--[[", "function g() ", "[[", "do ", "NotifyMessage(\"Q."] {
            // A closing bracket far below, which an opener above reaches.
            let mut text = format!("{}-- ]]\n", long_script());
            let mut lines = LineIndex::new(&text);
            let mut parsed = Parsed::new(Language::Lua, &text);
            let line_start = text.find("local function").unwrap();
            edit(&mut text, &mut lines, &mut parsed, line_start, 0, typed);
            let at = text.rfind("D.Six").unwrap() + 2;
            if typed != "NotifyMessage(\"Q." {
                assert!(parsed.below_closed_edits(&text, at).is_none(), "{typed:?}");
            }
            assert_answers_like_a_reparse(&text, &lines, &parsed, at);
        }
    }

    #[test]
    fn a_chunk_local_typed_above_shadows_the_api_below() {
        let mut text = long_script();
        let mut lines = LineIndex::new(&text);
        let mut parsed = Parsed::new(Language::Lua, &text);
        let line_start = text.find("local function").unwrap();
        edit(
            &mut text,
            &mut lines,
            &mut parsed,
            line_start,
            0,
            "local NotifyMessage = print\n",
        );
        let at = text.rfind("C.Five").unwrap() + 2;
        let around = parsed.below_closed_edits(&text, at).expect("closed edits");
        assert!(
            around
                .calls
                .iter()
                .all(|c| c.literal_key() != Some("C.Five"))
        );
        assert_answers_like_a_reparse(&text, &lines, &parsed, at);
        // And deleting it again brings the call back.
        let local = text.find("local NotifyMessage = print\n").unwrap();
        edit(
            &mut text,
            &mut lines,
            &mut parsed,
            local,
            "local NotifyMessage = print\n".len(),
            "",
        );
        let at = text.rfind("C.Five").unwrap() + 2;
        let around = parsed.scan_around(&text, at).expect("a Lua document");
        assert!(
            around
                .calls
                .iter()
                .any(|c| c.literal_key() == Some("C.Five"))
        );
        assert_answers_like_a_reparse(&text, &lines, &parsed, at);
    }

    const PIECES: &[&str] = &[
        "x",
        "\"",
        "'",
        "(",
        ")",
        ",",
        ".",
        " ",
        "\n",
        "--",
        "--[[",
        "]]",
        "end",
        "do ",
        "NotifyMessage(\"Q.R\", 1)",
        "local NotifyMessage = 1\n",
        "function() ",
        "é",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Whatever edits came since the last parse, a completion's calls
        /// are those a full reparse gives wherever the reparsed text has no
        /// syntax error (with one, the two may recover differently; the
        /// completion falls back to the line then).
        #[test]
        fn unparsed_edits_answer_like_a_reparse(
            edits in prop::collection::vec(
                (0usize..300, 0usize..4, prop::collection::vec(prop::sample::select(PIECES), 0..2)),
                1..4,
            ),
            cursor in 0usize..8,
        ) {
            let mut text = SCRIPT.to_owned();
            let mut lines = LineIndex::new(&text);
            let mut parsed = Parsed::new(Language::Lua, &text);
            let mut last = 0;
            for (at, len, pieces) in edits {
                let new = pieces.concat();
                edit(&mut text, &mut lines, &mut parsed, at, len, &new);
                last = floor_char_boundary(&text, (at + new.len()).min(text.len()));
            }
            let offset = floor_char_boundary(&text, (last + cursor).min(text.len()));
            let calls = parsed.scan_around(&text, offset).expect("a Lua document").calls;
            let (expected, clean) = reparsed_around(&text, offset);
            if clean {
                prop_assert_eq!(calls, expected, "in {:?} at {}", text, offset);
            }
        }

        /// The same, with the edits anywhere in a longer script and the
        /// completion anywhere too: above, inside or far below them.
        #[test]
        fn unparsed_edits_anywhere_answer_like_a_reparse_anywhere(
            edits in prop::collection::vec(
                (0usize..1200, 0usize..4, prop::collection::vec(prop::sample::select(PIECES), 0..2)),
                1..4,
            ),
            cursors in prop::collection::vec(0usize..1500, 4),
        ) {
            let mut text = long_script();
            let mut lines = LineIndex::new(&text);
            let mut parsed = Parsed::new(Language::Lua, &text);
            for (at, len, pieces) in edits {
                edit(&mut text, &mut lines, &mut parsed, at, len, &pieces.concat());
            }
            let tree = gantry_lua::syntax::parse(&text, None).expect("parses");
            if tree.root_node().has_error() {
                return Ok(());
            }
            for cursor in cursors {
                let offset = floor_char_boundary(&text, cursor.min(text.len()));
                let around = parsed.scan_around(&text, offset).expect("a Lua document");
                prop_assert_eq!(around.calls, reparsed_around(&text, offset).0, "in {:?} at {}", text, offset);
                prop_assert_eq!(around.in_comment, gantry_lua::syntax::comment_at(&tree, &text, offset));
                let line = lines.line_range(&text, lines.line_of(offset));
                let fresh = Parsed::new(Language::Lua, &text);
                prop_assert_eq!(parsed.code_start(&text, line.clone()), fresh.code_start(&text, line));
            }
        }
    }
}
