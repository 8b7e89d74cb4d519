//! The Lua runtime's integration tests, one binary, one module per
//! behaviour. `support` holds the runtime fixture every module uses.
//!
//! Proptest keeps the seeds of past failures in `tests/proptest-regressions/`
//! (`<module>.txt`), where it looks for a module of a `main.rs` tree.

mod api;
mod collections;
mod compat;
mod delivery;
mod errors;
mod fast_lane;
mod grants;
mod plain_structs;
mod report_stream;
mod requests;
mod rewrite;
mod robustness;
mod router;
mod sandbox;
mod signature;
mod sites;
mod sources;
mod store;
mod support;
mod unload;
