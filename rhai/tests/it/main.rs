//! The Rhai runtime's integration tests, one binary, one module per
//! behaviour. `support` holds the runtime fixture every module uses.
//!
//! Proptest keeps the seeds of past failures in `tests/proptest-regressions/`
//! (`<module>.txt`), where it looks for a module of a `main.rs` tree.

mod api;
mod baking;
mod call_budget;
mod collections;
mod compat;
mod delivery;
mod grants;
mod maps;
mod repeated_sends;
mod requests;
mod robustness;
mod router;
mod sandbox;
mod signature;
mod sources;
mod store;
mod support;
mod unload;
