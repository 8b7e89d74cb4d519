//! Lua, Rhai and Rust on the same keys, in one hub, without the binary.

mod collections;
mod messages;
mod rust_rows;
