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

use gantry_host::{Language, ScannedCall};
use gantry_lua::syntax::Around;
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
}

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
        if let Some(edited) = gantry_lua::syntax::scan_edited(tree, text, unparsed.clone(), offset)
        {
            return Some(edited);
        }
        let fresh = gantry_lua::syntax::parse(text, Some(tree))?;
        Some(gantry_lua::syntax::around(&fresh, text, offset))
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
    }
}
