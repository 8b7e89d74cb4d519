//! Parsing Lua with tree-sitter.

use std::cell::RefCell;

use std::ops::Range;

use tree_sitter::{Language, Parser, Point, Tree};

thread_local! {
    /// A parser per thread: creating one is cheap, but the language server
    /// and the loader parse on every change/load, so keep it around.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The tree-sitter Lua language.
pub(crate) fn language() -> Language {
    tree_sitter_lua::LANGUAGE.into()
}

/// Parses `source`. Pass the previous tree (already updated with
/// `Tree::edit` for the change) to reparse incrementally, as the language
/// server does on every keystroke.
///
/// Returns `None` only if tree-sitter itself fails (it does not fail on
/// syntax errors: those become `ERROR`/`MISSING` nodes in the tree).
pub fn parse(source: &str, old: Option<&Tree>) -> Option<Tree> {
    with_parser(|parser| parser.parse(source, old))
}

/// Parses only the bytes `range` of `source` (from `start` to `end` in
/// rows and columns), as a chunk of its own; the tree's positions are the
/// document's. The language server parses the statements an edit touched
/// this way to answer a completion at once, while the whole document's
/// reparse (linear in its number of top-level statements) waits for a
/// pause in typing.
pub fn parse_range(source: &str, range: Range<usize>, start: Point, end: Point) -> Option<Tree> {
    let included = tree_sitter::Range {
        start_byte: range.start,
        end_byte: range.end,
        start_point: start,
        end_point: end,
    };
    with_parser(|parser| {
        parser.set_included_ranges(&[included]).ok()?;
        let tree = parser.parse(source, None);
        // Back to whole documents; an empty list cannot be refused.
        let _ = parser.set_included_ranges(&[]);
        tree
    })
}

/// Runs `parse` with this thread's parser, which is reset after a failed
/// parse (a failure can leave it mid-way; start clean next time).
fn with_parser(parse: impl FnOnce(&mut Parser) -> Option<Tree>) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            if let Err(err) = parser.set_language(&language()) {
                tracing::error!(%err, "tree-sitter-lua is incompatible with the tree-sitter runtime");
                return None;
            }
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        let tree = parse(parser);
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}
