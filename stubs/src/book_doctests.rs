//! The book's Rust examples, compiled and run as this crate's doctests
//! (`cargo test -p gantry-stubs --doc`): each page below is a doc comment,
//! so rustdoc runs every ```rust block of it, hidden `# ` lines included.
//! The book's runner (`tests/it/book.rs`) fails when a page with Rust
//! examples is missing here. This crate holds them because it generates
//! the book's reference, and its dev-dependencies have both runtimes.

#[doc = include_str!("../../book/src/host/embedding.md")]
pub struct Embedding;

#[doc = include_str!("../../book/src/host/rows.md")]
pub struct Rows;

#[doc = include_str!("../../book/src/host/scripts.md")]
pub struct Scripts;

#[doc = include_str!("../../book/src/host/reports.md")]
pub struct Reports;
