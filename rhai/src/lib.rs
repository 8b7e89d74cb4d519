//! # gantry-rhai — Gantry for Rhai scripts
//!
//! A map of the crate:
//! - [`syntax`]: runtime-free — the one Rhai call-site scanner ([`syntax::scan`])
//!   shared by the loader and the language server, and the source-level
//!   key-baking rewriter ([`syntax::rewrite`]). Available with
//!   `default-features = false`.
//!
//! - [`runtime`]: the engine embedding and the script API ([`RhaiRuntime`]):
//!   every family of the generic API (messages, stores, requests, hooks,
//!   row and whole-table listeners, the stored-array writer), behind the
//!   default `runtime` feature. Its module docs are the script author's
//!   reference.
//!
//! The runtime (engine embedding and the script API) lives behind the
//! default `runtime` feature, so that depending on this crate without default
//! features never pulls a hub runtime into a tool that only reads scripts.

#![forbid(unsafe_code)]

pub mod syntax;

#[cfg(feature = "runtime")]
pub mod runtime;
#[cfg(feature = "runtime")]
pub use runtime::{RhaiError, RhaiOptions, RhaiRuntime, ScriptError, ScriptId};
