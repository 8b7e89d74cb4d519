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
#[cfg(test)]
mod tests;

/// Makes a struct a key of the hub: its text, kind, parameters and docs
/// written once, on the struct.
///
/// - `#[message(key = "Player.Hurt")]`: the key (checked at compile time).
/// - `kind = "event"` (the default), `"store"`, `"hook"` or `"request"`.
///   A hook's payload is the struct itself (it also gets what
///   `#[derive(Struct)]` gives); a request's answer is
///   `response(price = f64, known = bool)`.
/// - The fields are the parameters, in order (at most 8): their names
///   (or `#[gantry(name = "..")]`; a tuple field is `argN` unless named),
///   their Rust types (each a `FieldType`: scalars, strings, `ObjectId`,
///   `Value`, `Vec`, `Option`, a `#[derive(Struct)]` type, whose struct
///   the key's declaration declares too).
/// - The struct's doc comment (first paragraph) is the key's doc; each
///   field's is in `MessageType::PARAM_DOCS`.
///
/// `hub.declare_message::<M>()` declares it and returns the typed key;
/// its sends take an `M`, its listeners get one:
///
/// ```
/// use std::cell::RefCell;
/// use std::rc::Rc;
/// use gantry_host::{Hub, Source};
///
/// /// Someone said something.
/// #[derive(gantry_host::Message)]
/// #[message(key = "Chat.Said", kind = "event")]
/// struct Said {
///     /// Who said it.
///     who: String,
///     /// What they said.
///     text: String,
/// }
///
/// let hub = Hub::new();
/// let said = hub.declare_message::<Said>()?;
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let into = log.clone();
/// let _listening = said.listen(&hub, Source::Global, move |s: Said| {
///     into.borrow_mut().push(format!("{}: {}", s.who, s.text));
/// })?;
/// said.send(&hub, Source::Global, Said { who: "ana".into(), text: "hi".into() })?;
/// assert_eq!(*log.borrow(), ["ana: hi"]);
/// assert_eq!(hub.table().keys["Chat.Said"].doc, "Someone said something.");
/// # Ok::<(), gantry_host::HubError>(())
/// ```
#[proc_macro_derive(Message, attributes(message, gantry))]
pub fn derive_message(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    message::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Makes a struct with named fields a struct of the signature table: it
/// declares itself (name, doc, fields with their types, and the structs
/// those hold) and converts to and from a value, so it can be a message
/// parameter, a field of another struct, or an element of an array.
/// `#[gantry(name = "..")]` renames the struct or a field in the table;
/// `#[gantry(row)]` on the struct also makes it a `Row`, whose `Vec`
/// `Hub::store_rows` stores as a table read at compiled offsets (what
/// `table_row!` does for a struct that does not derive).
///
/// ```
/// use gantry_host::{FromValue, Hub, IntoValue, Type};
///
/// /// An item in an inventory.
/// #[derive(gantry_host::Struct, Debug, PartialEq)]
/// struct Item {
///     id: i64,
///     #[gantry(name = "label")]
///     name: String,
/// }
///
/// let hub = Hub::new();
/// hub.declare_struct::<Item>();
/// let fields = hub.table().structs.get("Item").unwrap().fields.clone();
/// assert_eq!((fields[1].name.as_str(), &fields[1].ty), ("label", &Type::String));
///
/// let value = Item { id: 1, name: "rope".into() }.into_value();
/// assert_eq!(Item::from_value(&value), Some(Item { id: 1, name: "rope".into() }));
/// ```
#[proc_macro_derive(Struct, attributes(gantry))]
pub fn derive_struct(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    structure::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
