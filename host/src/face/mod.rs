//! The script face: what every script runtime does the same way, written
//! once. The hub knows no engine, and neither does this module: a runtime
//! plugs its language in through [`Face`] (its values, its functions, where
//! a call stands) and gets the rest from here.
//!
//! A map of the module:
//! - [`call`]: the [`Face`] seam and [`call_api`], the one body of every
//!   keyed API function (`NotifyObjectMessage`, `ListenMessage`, ...).
//! - [`options`]: a listen's and a hook's options table, one rule and one
//!   message text for every language.
//! - [`sites`]: how a call names its key ([`KeyRef`]) and records the line
//!   it stands on once ([`Sites`], [`SiteBook`]).
//! - [`reply`]: replies to a request, delivered during the send or later.
//! - [`structs`]: a struct built from named fields (the `__struct` rule).
//! - [`grants`]: [`ModGrants`], a mod's grants checked on every call.
//! - [`error`]: [`ScriptError`] (a script's fault at its place) and
//!   [`ApiError`] (an API call's bad argument, naming the function and key).
//! - [`runtime`]: [`ScriptRuntime`], what a host asks of any runtime.
//! - [`scripts`]: loaded scripts by [`ScriptId`] and what each registered,
//!   for unloading and reloading one in place.
//! - [`output`]: [`ScriptOutput`], what scripts print and the errors kept.
//! - [`hub`]: [`Faced`], the hub's entries for dynamic values and script
//!   callbacks, out of the typed API a game programmer uses.
//!
//! Each runtime keeps only what is its language's: converting its values
//! to and from [`crate::Value`] and calling its functions.

pub mod call;
pub mod error;
pub mod grants;
pub mod hub;
pub mod options;
pub mod output;
pub mod reply;
pub mod runtime;
pub mod scripts;
pub mod sites;
pub mod structs;

pub use call::{Declares, Face, Unbind, call_api};
pub use error::{ApiError, Call, ErrorLog, ErrorSink, ScriptError, takes_too_many};
pub use grants::{GrantError, ModGrants};
pub use hub::Faced;
pub use output::{PrintSink, ScriptOutput};
pub use runtime::{LanguageRuntime, ScriptRuntime};
pub use scripts::{Loaded, NotLoaded, Registrations, ScriptId, Scripts};
pub use sites::{KeyRef, SiteBook, Sites};
pub use structs::{MAX_DEPTH, STRUCT_FIELD};

use crate::{Hub, Type};

/// The recorded parameter types of `key` (none when it is not known yet).
pub fn param_types(hub: &Hub, key: &str) -> Vec<Type> {
    hub.table()
        .get(key)
        .map(|e| e.param_types())
        .unwrap_or_default()
}

/// The recorded response types of `key` (none when it is not known yet).
pub fn response_types(hub: &Hub, key: &str) -> Vec<Type> {
    hub.table()
        .get(key)
        .and_then(|e| e.response.as_ref())
        .map(|r| r.iter().map(|p| p.ty.clone()).collect())
        .unwrap_or_default()
}

/// The struct type of a collection key's rows: a key whose one parameter
/// is an array of structs carries a table.
pub fn row_type(params: &[Type]) -> Option<Type> {
    match params {
        [param] => param
            .struct_array_element()
            .map(|name| Type::Struct(name.into())),
        _ => None,
    }
}
