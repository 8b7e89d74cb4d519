//! The bridge to the languages' own scanners — the same ones the loaders
//! use, so what the editor flags is exactly what the loader bakes.
//!
//! Lua documents keep their tree-sitter tree and reparse incrementally on
//! every change; their calls are rescanned whole only when the editor pauses
//! (or a request needs them all), and a completion in between scans just the
//! statement at the cursor. Rhai scripts are small and are rescanned whole.

use std::path::Path;

use gantry_host::{Language, ScannedCall};
use tree_sitter::{InputEdit, Point};

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
        Language::Rust => Vec::new(),
    }
}

/// A document's parse state between edits.
pub struct Parsed {
    language: Language,
    tree: Option<gantry_lua::syntax::Tree>,
}

impl std::fmt::Debug for Parsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parsed")
            .field("language", &self.language)
            .field("has_tree", &self.tree.is_some())
            .finish()
    }
}

impl Parsed {
    pub fn new(language: Language) -> Self {
        Self {
            language,
            tree: None,
        }
    }

    /// Tells the old tree about an edit, so the next parse reuses what the
    /// edit did not touch. `old`/`new` describe the text before and after.
    pub fn edit(&mut self, edit: Edit, old: &LineIndex, new: &LineIndex) {
        let Some(tree) = &mut self.tree else { return };
        let point = |index: &LineIndex, offset: usize| {
            let (line, column) = index.line_column(offset);
            Point::new(line, column)
        };
        tree.edit(&InputEdit {
            start_byte: edit.start,
            old_end_byte: edit.old_end,
            new_end_byte: edit.new_end,
            start_position: point(old, edit.start),
            old_end_position: point(old, edit.old_end),
            new_end_position: point(new, edit.new_end),
        });
    }

    /// Forgets the tree (after a full-text replacement).
    pub fn reset(&mut self) {
        self.tree = None;
    }

    /// Reparses a Lua document (incrementally after [`Parsed::edit`]); the
    /// cheap half of a change, done at once so the tree always matches the
    /// text. Rhai keeps no tree.
    pub fn reparse(&mut self, text: &str) {
        if self.language == Language::Lua {
            self.tree = gantry_lua::syntax::parse(text, self.tree.as_ref());
        }
    }

    /// Scans every call of the document, reparsing first if no tree is kept.
    pub fn scan(&mut self, text: &str) -> Vec<ScannedCall> {
        match self.language {
            Language::Lua => {
                if self.tree.is_none() {
                    self.reparse(text);
                }
                match &self.tree {
                    Some(tree) => gantry_lua::syntax::scan_tree(tree, text),
                    None => Vec::new(),
                }
            }
            other => scan(other, text),
        }
    }

    /// The calls of the top-level statement around byte `offset`, from the
    /// current tree: what a completion right after an edit needs, without
    /// rescanning the whole document. `None` when the language keeps no
    /// tree (the caller scans whole).
    pub fn scan_around(&self, text: &str, offset: usize) -> Option<Vec<ScannedCall>> {
        let tree = self.tree.as_ref()?;
        Some(gantry_lua::syntax::scan_around(tree, text, offset))
    }
}
