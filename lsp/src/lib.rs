//! # gantry-lsp — the Gantry language server
//!
//! Completion, signature help, diagnostics, hover and navigation for the
//! message keys of Lua and Rhai scripts, read from the signature table. The
//! server parses with the languages' own scanners; it never runs a script.
//!
//! A map of the crate:
//! - [`server`]: the protocol — [`run_stdio`] / [`run`], one main loop over
//!   an event enum, typed request dispatch, state snapshots.
//! - [`analysis`]: pure functions from a script, the table and the
//!   workspace index to answers (completion, diagnostics, ...).
//! - [`check`]: `gantry check DIR`, the diagnostics in batch.
//! - [`syntax`]: the bridge to `gantry_lua::syntax` and `gantry_rhai::syntax`;
//!   [`incremental`]: a Lua document's calls kept current across edits.
//! - [`table`]: finding `.gantry/signatures.json` and `mod.toml`, merging
//!   them over the host's keys, and reloading them on change.
//! - [`index`] / [`workspace`]: the calls of every script in the workspace.
//! - [`text`] / [`uri`]: byte offsets against UTF-16 positions; file URIs.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod check;
pub mod incremental;
pub mod index;
pub mod lexical;
pub mod server;
pub mod syntax;
pub mod table;
pub mod text;
pub mod uri;
pub mod workspace;

pub use analysis::diagnostics::{Code, Severity};
pub use check::{
    CheckDiagnostic, CheckError, CheckOptions, FileDiagnostics, check_dir, check_dir_with,
    format_json, format_text, has_errors, has_warnings,
};
pub use server::{Ending, ServerError, run, run_stdio, run_stdio_with, serve, serve_with};
pub use table::HostKey;
