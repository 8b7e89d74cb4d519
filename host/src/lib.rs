//! # gantry-host — the hub
//!
//! Sender and listener share a string key, never a type. This crate is the
//! part every language shares; it knows no script engine and no parser.
//!
//! A map of the crate:
//! - [`api`]: the generic script API vocabulary and the scanners' output type.
//! - [`key`]: key validation and interning (a baked [`Key`] never rehashes).
//! - [`value`]: the dynamic [`Value`] model and the typed Rust face.
//! - [`serde_bridge`]: Rust types to and from [`Value`] through serde.
//! - [`types`]: parameter [`Type`]s, structs and the compatibility rule.
//! - [`signature`]: the [`SignatureTable`] — what each key carries and where it is used.
//! - [`persist`]: the table as a stable, atomically written JSON file.

pub mod api;
pub mod key;
pub mod persist;
pub mod serde_bridge;
pub mod signature;
pub mod types;
pub mod value;

pub use api::{
    ApiFunction, Literal, Pos, ScannedArg, ScannedCall, Span, baked_name, parse_baked_name,
};
pub use key::{Key, KeyError};
pub use persist::{DEFAULT_TABLE_PATH, TableError};
pub use serde_bridge::{Serde, ValueSerdeError, from_value, struct_def_of, to_value};
pub use signature::{KeyDecl, KeyEntry, Kind, Language, Origin, Role, SignatureTable, Site};
pub use types::{Mismatch, Param, StructDef, StructRegistry, Type};
pub use value::{FromValue, IntoValue, ObjectId, StructValue, Value};
