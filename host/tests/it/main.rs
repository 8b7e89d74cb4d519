//! The hub's integration tests, one binary, one module per behaviour.
//!
//! The counting-allocator test (`tests/no_alloc.rs`) is a binary of its own:
//! it installs a global allocator, which would count every other test too.
//!
//! Proptest keeps the seeds of past failures in `tests/proptest-regressions/`
//! (`<module>.txt`), where it looks for a module of a `main.rs` tree.

mod call_sites;
mod collections;
mod compat;
mod compile_errors;
mod declared_messages;
mod dispatch_log;
mod grants;
mod handoff;
mod hooks;
mod keys;
mod lanes;
mod lifetime;
mod manifest;
mod manifest_budget;
mod order;
mod plain_structs;
mod reentrancy;
mod requests;
mod robustness;
mod router;
mod rust_listeners;
mod signature;
mod sources;
mod store;
mod support;
mod table_file;
mod trace;
mod typed_hooks;
