//! Parsing Lua with tree-sitter.

use std::cell::RefCell;

use tree_sitter::{Language, Parser, Tree};

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
        let tree = parser.parse(source, old);
        if tree.is_none() {
            // A failed parse can leave the parser mid-way; start clean next time.
            parser.reset();
        }
        tree
    })
}
