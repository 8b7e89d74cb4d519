//! The language server's integration tests, one binary, one module per
//! behaviour. The server runs in-process (`support`).
//!
//! Proptest keeps the seeds of past failures in `tests/proptest-regressions/`
//! (`<module>.txt`), where it looks for a module of a `main.rs` tree.

mod annotations;
mod api_functions;
mod check;
mod completion;
mod diagnostics;
mod documents;
mod edits_match_a_fresh_open;
mod grants;
mod listen_options;
mod manifest;
mod navigation;
mod outline;
mod protocol;
mod pulled_diagnostics;
mod rename;
mod robustness;
mod signature_help;
mod support;
mod table;
mod typing;
