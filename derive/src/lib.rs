//! Derives for the Gantry hub, re-exported by `gantry_host` (use them as
//! `gantry_host::Message` and `gantry_host::Struct`; the documentation with
//! examples is there).
//!
//! - `#[derive(Message)]` makes a struct a key: its text and kind from
//!   `#[message(key = "..", kind = "..")]`, its parameters from the
//!   fields (names, types, doc comments), its doc from the struct's doc
//!   comment. The hub declares it (`Hub::declare_message`) and hands back
//!   a typed key whose sends and listeners take the struct, so a
//!   mismatch is a compile error.
//! - `#[derive(Struct)]` makes a struct a struct of the signature table:
//!   it declares itself (fields with their types), and converts to and
//!   from a value.
//!
//! The generated code names `::gantry_host`, the one dependency a game has.

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

mod attrs;
mod message;
mod structure;

/// A key declared by a struct: see `gantry_host::Message`.
#[proc_macro_derive(Message, attributes(message, gantry))]
pub fn derive_message(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    message::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A struct of the signature table: see `gantry_host::Struct`.
#[proc_macro_derive(Struct, attributes(gantry))]
pub fn derive_struct(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    structure::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
