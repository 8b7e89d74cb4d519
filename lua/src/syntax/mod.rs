//! Lua source analysis without a Lua runtime.
//!
//! The language server depends on this module with the crate's `runtime`
//! feature off, so nothing here may touch mlua. A map of the module:
//! - [`parse()`]: tree-sitter parsing, incremental when given the old tree.
//! - [`scan()`] / [`scan_tree()`] / [`scan_around()`]: the call-site scanner — every call of a
//!   generic API function, with spans, literal arguments and listener
//!   parameters, honouring lexical shadowing.
//! - [`scan_statements()`]: the same scanner over the top-level statements
//!   around a byte range, for the language server's incremental rescans.
//! - [`rewrite()`]: the load-time rewriter that turns literal-key calls into
//!   calls of key-baked functions, preserving lines (and columns after the key).
//! - `literal`: decoding of Lua string and number literals.
//! - `lexer` / `refusal`: whether Lua 5.4 would refuse a chunk that
//!   tree-sitter parsed (its grammar is wider), so the rewriter leaves it
//!   for Lua to report.
//! - `registers`: a bound on the main chunk's temporaries, so the
//!   rewriter's prologue locals never take registers a statement needs.
//! - `split`: a large chunk parsed as two halves on two threads, for the
//!   rewriter.
//! - [`long_bracket_level()`] / [`long_bracket_close()`]: Lua's long
//!   brackets read from bytes, for the cut finder and the language server's
//!   line lexer.
//! - [`innermost_enclosing()`]: the innermost node of a kind around a
//!   byte range, in time linear in the depth (no `parent()` climb).
//!
//! `tree_sitter` is re-exported so a user (the language server) edits and
//! reparses trees with the exact version the scanner was built against.

mod brackets;
mod enclosing;
mod kinds;
mod lexer;
mod literal;
mod parse;
mod refusal;
mod registers;
mod rewrite;
mod scan;
mod split;

pub use brackets::{long_bracket_close, long_bracket_level};
pub use enclosing::innermost_enclosing;
pub use parse::{parse, parse_range};
pub use refusal::Refusal;
pub use rewrite::{BAKES_PROLOGUE_MAX_LOCALS, Bake, Rewrite, rewrite};
pub use scan::{
    Around, ChunkLocals, StatementsScan, around, comment_at, pos_of, scan, scan_around,
    scan_checked, scan_edited, scan_statements, scan_tree, top_level_statements,
};
pub use tree_sitter::{self, Tree};
