//! # gantry-lua — Lua 5.4 scripts on the Gantry hub
//!
//! A map of the crate:
//! - [`syntax`]: runtime-free. The one Lua call-site scanner (used by the
//!   loader's rewriter and by the language server, so what the editor flags is
//!   exactly what the loader bakes) and the load-time source rewriter.
//!   Depends on tree-sitter only; available with `default-features = false`.
//! - [`runtime`]: the mlua script runtime (default `runtime` feature): one
//!   Lua state hosting many isolated, sandboxed scripts on a [`gantry_host::Hub`].
//! - [`script_api`]: what a script can call, what a `nil` owner means, and
//!   how a host hands a script an object it did not spawn.

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod syntax;

/// The script API, as a script sees it (documentation only).
#[doc = include_str!("script_api.md")]
pub mod script_api {}

#[cfg(feature = "runtime")]
pub mod runtime;
