//! Rhai syntax without a runtime: the call-site scanner and the key-baking
//! rewriter.
//!
//! This module runs no script and needs no hub, so the language server uses
//! it with the crate's default features off; the loader bakes with the same
//! scanner, so what the editor flags is exactly what the loader bakes.
//!
//! - [`scan`]: every call of a generic API function, with spans, literal
//!   arguments and closure parameters (robust to broken code).
//! - [`rewrite`]: literal-key calls turned into calls of per-key baked
//!   functions, lines and columns kept.
//!
//! Both are built on rhai's own tokenizer (`lexer`), so strings, comments and
//! numbers are read exactly as the engine reads them.

mod lexer;
mod lines;
mod rewrite;
mod scanner;

pub use rewrite::{Bake, Rewrite, rewrite};
pub use scanner::{scan, scan_with_text};

#[cfg(test)]
mod tests;
