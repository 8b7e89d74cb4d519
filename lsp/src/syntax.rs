//! The bridge to the languages' own scanners — the same ones the loaders
//! use, so what the editor flags is exactly what the loader bakes.
//!
//! Lua documents keep their tree-sitter tree and reparse incrementally on
//! every change; their calls are brought up to date when the editor pauses
//! (or a request needs them all) by rescanning only the top-level
//! statements the edits touched ([`crate::incremental`]), and a completion
//! in between scans just the statement at the cursor. Rhai scripts are small and are rescanned whole.

use std::path::Path;

use gantry_host::{Language, ScannedCall};
use tree_sitter::{InputEdit, Point};

use crate::incremental::{LuaCalls, Rescan};
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

/// A document's parse state and calls between edits.
pub struct Parsed {
    language: Language,
    tree: Option<gantry_lua::syntax::Tree>,
    /// A Lua document's calls, kept current incrementally.
    lua: LuaCalls,
    /// A Rhai document's calls, rescanned whole on every change.
    rhai: Vec<ScannedCall>,
}

impl std::fmt::Debug for Parsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parsed")
            .field("language", &self.language)
            .field("has_tree", &self.tree.is_some())
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
            lua: LuaCalls::default(),
            rhai: Vec::new(),
        };
        parsed.reparse(text);
        parsed.rescan(text);
        parsed
    }

    /// Follows an edit already applied to the text: the old tree learns
    /// it (so the next parse reuses what the edit did not touch) and the
    /// kept calls shift past it. `old`/`new` describe the text before and
    /// after.
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
    }

    /// Forgets the tree and what the calls were scanned from (after a
    /// full-text replacement): the next parse and rescan are whole.
    pub fn reset(&mut self) {
        self.tree = None;
        self.lua.reset();
    }

    /// The cheap half of a change, done at once: a Lua document reparses
    /// (incrementally after [`Parsed::edit`]) so the tree always matches
    /// the text, and its calls wait for [`Parsed::rescan`]; a Rhai script
    /// is small and is rescanned whole.
    pub fn reparse(&mut self, text: &str) {
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
        if self.tree.is_none() {
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

    /// The calls of the top-level statement around byte `offset`, from the
    /// current tree: what a completion right after an edit needs, without
    /// rescanning the whole document. `None` when the language keeps no
    /// tree (the caller scans whole).
    pub fn scan_around(&self, text: &str, offset: usize) -> Option<Vec<ScannedCall>> {
        let tree = self.tree.as_ref()?;
        Some(gantry_lua::syntax::scan_around(tree, text, offset))
    }

    /// The current tree (Lua), for tests comparing against a whole scan.
    pub fn tree(&self) -> Option<&gantry_lua::syntax::Tree> {
        self.tree.as_ref()
    }
}
