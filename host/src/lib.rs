//! # gantry-host — the hub
//!
//! Sender and listener share a string key, never a type. This crate is the
//! part every language shares; it knows no script engine and no parser.
//!
//! A map of the crate:
//! - [`api`]: the generic script API vocabulary and the scanners' output type.
//! - [`face`]: the script face every runtime shares (the API call, options,
//!   sites, errors); a runtime adds only its language.
//! - [`key`]: key validation and interning (a baked [`Key`] never rehashes).
//! - [`value`]: the dynamic [`Value`] model and the typed Rust face.
//! - [`serde_bridge`]: Rust types to and from [`Value`] through serde.
//! - [`types`]: parameter [`Type`]s, structs and the compatibility rule.
//! - [`signature`]: the [`SignatureTable`] — what each key carries and where it is used.
//! - [`files`]: a mod's files read and written without trusting them.
//! - [`manifest`]: `mod.toml`, a mod's declared keys and structs, checked.
//! - [`persist`]: the table as a stable, atomically written JSON file.
//! - [`source`]: global, world, object and (object, name) sources and their tiers.
//! - [`listener`]: listen options, owners, ids and RAII handles.
//! - [`handoff`]: a key's delivery handed to a script runtime that calls
//!   its own listeners itself, valid while the hub's epoch stands.
//! - [`hub`]: the [`Hub`] and its one dispatch core (gather, then call).
//! - `channel`: the listeners of one (key, scope) channel, in and out in
//!   O(log n), and the snapshot dispatches read.
//! - `lane`: a key's merged delivery list, kept between sends, and its
//!   typed view for [`TypedKey`] sends.
//! - [`typed`]: tuples in, typed closures out — the Rust face.
//! - [`store`]: stored and once messages, replayed to late listeners.
//! - [`collection`]: stored tables — whole-table, slot and row listeners,
//!   re-store diffing, the in-place writer, the send (transient) path.
//! - [`request`]: requests, responders and the unanswered notice.
//! - [`hook`]: hooks — payload in place, priority order, handled and cancel.
//! - [`router`]: the tag-channel router as a private bus on its own hub.
//! - [`quota`]: hub memory held for a runtime's scripts, against its limit.
//! - [`report`]: structured [`Report`]s a host can read.
//! - [`trace`]: per-dispatch trace events (`gantry run --trace`); free when off.
//! - [`dispatch_log`]: one call per dispatch for a recording, apart from
//!   the tracer, that script runtimes delivering their own sends keep.
//!
//! The hub is single-threaded by design (`!Send`, `!Sync`; no lock on the
//! hot path).

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod api;
mod channel;
pub mod collection;
pub mod dispatch_log;
pub mod face;
pub mod files;
pub mod handoff;
pub mod hook;
pub mod hub;
pub mod key;
mod lane;
pub mod listener;
pub mod manifest;
pub mod persist;
pub mod quota;
pub mod report;
pub mod reports;
pub mod request;
pub mod router;
pub mod serde_bridge;
pub mod signature;
pub mod source;
pub mod store;
pub mod trace;
pub mod typed;
pub mod types;
pub mod value;

pub use api::{
    ApiFunction, Literal, Pos, ScannedArg, ScannedCall, Span, baked_name, parse_baked_name,
};
pub use collection::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, Range, RowOptions, RowPath, StoredArray, StoredArrayOf,
    TableView, Update, with_removal,
};
pub use collection::{Row, RowField};
pub use dispatch_log::{
    DispatchLog, LaneRecord, LaneSink, LogHandle, Logged, LoggedArgs, PlainArg, SendSink,
};
/// Derives: a key declared by its Rust struct, and a struct of the table
/// (see [`typed`]).
pub use gantry_derive::{Message, Struct};
pub use handoff::{LaneSnapshot, NoHandoff, SnapshotListener};
pub use hook::{HookCall, HookOptions, HookResult};
pub use hub::{Caller, Delivered, Hub, HubError, ListenSpec, Message};
pub use key::{Key, KeyError};
pub use listener::{
    ListenOptions, ListenerError, ListenerHandle, ListenerId, ListenerParams, Match, Owner,
};
pub use persist::{Conflict, DEFAULT_TABLE_PATH, Saved, TableError, TableFile};
pub use quota::{Holding, OverQuota, Quota};
pub use report::Report;
pub use reports::{ItemKind, ReportItem, ReportStream};
pub use request::{Reply, Responder};
pub use router::Router;
pub use serde_bridge::{Serde, ValueSerdeError, from_value, struct_def_of, to_value};
pub use signature::{KeyDecl, KeyEntry, Kind, Language, Origin, Role, SignatureTable, Site};
pub use source::{NameId, Source, WorldId};
pub use trace::{Delivery, DropReason, ListenerKind, TraceEvent, TraceFn};
pub use typed::{
    Arg, FieldType, FixedKind, Handler, HookPayload, IntoArgs, ListenerReturn, MessageKey,
    MessageType, SendKey, StructType, TypedArgs, TypedHookCall, TypedKey,
};
pub use types::{Mismatch, Param, StructDef, StructRegistry, Type};
pub use value::{FromValue, IntoValue, ObjectId, StructValue, Value};
