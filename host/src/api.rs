//! The vocabulary of the generic script API, shared by every language.
//!
//! Lua and Rhai expose the same generic functions (`NotifyObjectMessage`,
//! `ListenMessage`, ...). Each language has one call-site scanner that finds
//! calls of them; the loader's rewriter and the language server both consume
//! its output, a list of [`ScannedCall`]s. This module is that output's type
//! and the table of where each function keeps its key, its source, its
//! listener and its message arguments — data only, no parser.

use std::fmt;

use crate::signature::{Kind, Role};
use crate::types::Type;

/// A generic script API function that takes a message key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiFunction {
    /// `NotifyMessage(key, ...)`
    NotifyMessage,
    /// `NotifyWorldMessage(world, key, ...)`
    NotifyWorldMessage,
    /// `NotifyObjectMessage(obj, key, ...)`
    NotifyObjectMessage,
    /// `SendObjectMessage(obj, key, ..., reply_fn)`: a trailing function makes it a request.
    SendObjectMessage,
    /// `GMP.Request(obj, key, ...)`: a request that yields until the reply (Lua coroutines).
    Request,
    /// `StoreObjectMessage(obj, key, ...)`
    StoreObjectMessage,
    /// `OnceObjectMessage(obj, key, ...)`
    OnceObjectMessage,
    /// `RemoveStoredObjectMessage(obj, key)`
    RemoveStoredObjectMessage,
    /// `ListenMessage(key, owner, fn [, opts])`
    ListenMessage,
    /// `ListenWorldMessage(world, key, owner, fn [, opts])`
    ListenWorldMessage,
    /// `ListenObjectMessage(obj, key, owner, fn [, opts])`
    ListenObjectMessage,
    /// `ListenRowMessage(obj, key, owner, index, fn)`
    ListenRowMessage,
    /// `UnbindMessage(key, id_or_owner)`
    UnbindMessage,
    /// `ListenHook(key, owner, fn [, opts])`
    ListenHook,
    /// `RunHook(key, payload)`
    RunHook,
    /// `GMP.StoredArray(obj, key)`: the in-place collection writer.
    StoredArray,
}

impl ApiFunction {
    /// Every function, in a stable order.
    pub const ALL: [ApiFunction; 16] = [
        ApiFunction::NotifyMessage,
        ApiFunction::NotifyWorldMessage,
        ApiFunction::NotifyObjectMessage,
        ApiFunction::SendObjectMessage,
        ApiFunction::Request,
        ApiFunction::StoreObjectMessage,
        ApiFunction::OnceObjectMessage,
        ApiFunction::RemoveStoredObjectMessage,
        ApiFunction::ListenMessage,
        ApiFunction::ListenWorldMessage,
        ApiFunction::ListenObjectMessage,
        ApiFunction::ListenRowMessage,
        ApiFunction::UnbindMessage,
        ApiFunction::ListenHook,
        ApiFunction::RunHook,
        ApiFunction::StoredArray,
    ];

    /// The name scripts call it by (as a global or a field of `GMP`).
    pub fn name(self) -> &'static str {
        match self {
            ApiFunction::NotifyMessage => "NotifyMessage",
            ApiFunction::NotifyWorldMessage => "NotifyWorldMessage",
            ApiFunction::NotifyObjectMessage => "NotifyObjectMessage",
            ApiFunction::SendObjectMessage => "SendObjectMessage",
            ApiFunction::Request => "Request",
            ApiFunction::StoreObjectMessage => "StoreObjectMessage",
            ApiFunction::OnceObjectMessage => "OnceObjectMessage",
            ApiFunction::RemoveStoredObjectMessage => "RemoveStoredObjectMessage",
            ApiFunction::ListenMessage => "ListenMessage",
            ApiFunction::ListenWorldMessage => "ListenWorldMessage",
            ApiFunction::ListenObjectMessage => "ListenObjectMessage",
            ApiFunction::ListenRowMessage => "ListenRowMessage",
            ApiFunction::UnbindMessage => "UnbindMessage",
            ApiFunction::ListenHook => "ListenHook",
            ApiFunction::RunHook => "RunHook",
            ApiFunction::StoredArray => "StoredArray",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Is this function only reachable as a field of the `GMP` table (not as
    /// a global)? `GMP.Request` and `GMP.StoredArray` are.
    pub fn gmp_only(self) -> bool {
        matches!(self, ApiFunction::Request | ApiFunction::StoredArray)
    }

    /// Position of the key argument (0-based).
    pub fn key_index(self) -> usize {
        match self {
            ApiFunction::NotifyMessage
            | ApiFunction::ListenMessage
            | ApiFunction::UnbindMessage
            | ApiFunction::ListenHook
            | ApiFunction::RunHook => 0,
            _ => 1,
        }
    }

    /// Position of the source argument (world or object), if it takes one.
    pub fn source_index(self) -> Option<usize> {
        (self.key_index() == 1).then_some(0)
    }

    /// Position of the first message argument, for functions that carry a
    /// message (sends, stores, hook runs).
    pub fn message_args_start(self) -> Option<usize> {
        match self {
            ApiFunction::NotifyMessage | ApiFunction::RunHook => Some(1),
            ApiFunction::NotifyWorldMessage
            | ApiFunction::NotifyObjectMessage
            | ApiFunction::SendObjectMessage
            | ApiFunction::Request
            | ApiFunction::StoreObjectMessage
            | ApiFunction::OnceObjectMessage => Some(2),
            _ => None,
        }
    }

    /// Position of the listener function argument, for listens.
    pub fn listener_index(self) -> Option<usize> {
        match self {
            ApiFunction::ListenMessage | ApiFunction::ListenHook => Some(2),
            ApiFunction::ListenWorldMessage | ApiFunction::ListenObjectMessage => Some(3),
            ApiFunction::ListenRowMessage => Some(4),
            _ => None,
        }
    }

    /// Position of the owner argument, for listens.
    pub fn owner_index(self) -> Option<usize> {
        self.listener_index().map(|i| {
            if self == ApiFunction::ListenRowMessage {
                2
            } else {
                i - 1
            }
        })
    }

    /// Position of the row index argument of `ListenRowMessage`.
    pub fn row_index_index(self) -> Option<usize> {
        (self == ApiFunction::ListenRowMessage).then_some(3)
    }

    /// Does a call of this function send, or listen? `UnbindMessage` does
    /// neither: its call sites are not recorded, and "who sends" never
    /// names it.
    pub fn role(self) -> Option<Role> {
        match self {
            ApiFunction::ListenMessage
            | ApiFunction::ListenWorldMessage
            | ApiFunction::ListenObjectMessage
            | ApiFunction::ListenRowMessage
            | ApiFunction::ListenHook => Some(Role::Listen),
            ApiFunction::UnbindMessage => None,
            _ => Some(Role::Send),
        }
    }

    /// Does this function register a message listener (whose function may
    /// take the message's parameters, a responder, or a table's update)?
    /// Hooks and row listeners take other arguments.
    pub fn is_message_listen(self) -> bool {
        matches!(
            self,
            ApiFunction::ListenMessage
                | ApiFunction::ListenWorldMessage
                | ApiFunction::ListenObjectMessage
        )
    }

    /// Is this a request that may end with a reply function?
    pub fn is_request(self) -> bool {
        matches!(self, ApiFunction::SendObjectMessage | ApiFunction::Request)
    }

    /// The kinds of key this function is used with: a hook's pair for
    /// hooks; the store family, the row listener and the writer for
    /// stores (a table is a store too, and the writer edits any stored
    /// array); every other message function for any key that is not a
    /// hook. `UnbindMessage` fits all.
    pub fn kinds(self) -> &'static [Kind] {
        use ApiFunction::*;
        const MESSAGE: &[Kind] = &[Kind::Event, Kind::Store, Kind::Collection];
        match self {
            NotifyMessage | NotifyWorldMessage | NotifyObjectMessage | SendObjectMessage
            | Request | ListenMessage | ListenWorldMessage | ListenObjectMessage => MESSAGE,
            StoreObjectMessage
            | OnceObjectMessage
            | RemoveStoredObjectMessage
            | ListenRowMessage
            | StoredArray => &[Kind::Store, Kind::Collection],
            ListenHook | RunHook => &[Kind::Hook],
            UnbindMessage => &[Kind::Event, Kind::Store, Kind::Collection, Kind::Hook],
        }
    }

    /// Whether calling this function on a key the table holds as `kind`
    /// breaks the key's contract at run time. `declared`: the host or the
    /// manifest declared the kind, which is then the whole truth.
    /// `carries`: the key's parameters are known (a send recorded them).
    ///
    /// An observed kind is what the key's first uses made it, and grows as
    /// the table does: an event nobody sent anything with yet (only
    /// listened to) may still become a store, a table or a hook; a key
    /// sent as an event may still be stored (a stored key is a message
    /// key too). Past that, a hook is only a hook, a message key never a
    /// hook, and an event that carries values has no rows to edit or
    /// listen to.
    pub fn contradicts(self, kind: Kind, declared: bool, carries: bool) -> bool {
        if self.kinds().contains(&kind) {
            return false;
        }
        if declared {
            return true;
        }
        match kind {
            Kind::Event => {
                carries
                    && !matches!(
                        self,
                        ApiFunction::StoreObjectMessage
                            | ApiFunction::OnceObjectMessage
                            | ApiFunction::RemoveStoredObjectMessage
                    )
            }
            Kind::Store | Kind::Collection | Kind::Hook => true,
        }
    }

    /// Which of a listener literal's parameter names (`function(id,
    /// reward)`) name the key's parameters, in order: all of a message
    /// listener's, a hook listener's payload (not its context), none of a
    /// row listener's (a row number and a struct) or of any other call.
    pub fn names_params(self, names: &[String]) -> &[String] {
        match self {
            _ if self.is_message_listen() => names,
            ApiFunction::ListenHook => &names[..names.len().min(1)],
            _ => &[],
        }
    }
}

impl fmt::Display for ApiFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a key of `kind` is called in a message: `a hook`, `an event`.
pub fn kind_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Event => "an event",
        Kind::Store => "a store",
        Kind::Collection => "a table (a store of struct rows)",
        Kind::Hook => "a hook",
    }
}

/// The keys `function` is used with, as a message says it.
pub fn kinds_text(function: ApiFunction) -> &'static str {
    match function.kinds() {
        [Kind::Hook] => "hook keys",
        [Kind::Store, Kind::Collection] => "store and table keys",
        [_, _, _] => "event, store and table keys, not hooks",
        _ => "any key",
    }
}

/// The name of the function baked for (`function`, `key`), shared by every
/// language and by the stub generator: `NotifyObjectMessage__Player__Hurt`.
///
/// The encoding is injective, so distinct keys never share a baked function:
/// a `.` becomes `__` and a `_` becomes `_0` (so `A.B` is `A__B` and `A_B` is
/// `A_0B`). Function names contain no `_`, so the first `__` ends the name.
pub fn baked_name(function: ApiFunction, key: &str) -> String {
    let mut name = String::with_capacity(function.name().len() + 2 + key.len() * 2);
    name.push_str(function.name());
    name.push_str("__");
    for ch in key.chars() {
        match ch {
            '.' => name.push_str("__"),
            '_' => name.push_str("_0"),
            other => name.push(other),
        }
    }
    name
}

/// Reverses [`baked_name`].
pub fn parse_baked_name(name: &str) -> Option<(ApiFunction, String)> {
    let (function, encoded) = name.split_once("__")?;
    let function = ApiFunction::from_name(function)?;
    let mut key = String::with_capacity(encoded.len());
    let mut chars = encoded.chars();
    while let Some(ch) = chars.next() {
        if ch == '_' {
            match chars.next()? {
                '_' => key.push('.'),
                '0' => key.push('_'),
                _ => return None,
            }
        } else {
            key.push(ch);
        }
    }
    crate::key::validate_key(&key).ok()?;
    Some((function, key))
}

/// A position in a source file: 0-based line, 0-based column in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

/// A source range: byte offsets (end exclusive) and the matching positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub start_pos: Pos,
    pub end_pos: Pos,
}

impl Span {
    pub fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }
}

/// The literal an argument is written as, when it is one.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A string literal, unescaped.
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Nil,
    /// A table constructor (Lua) or object map literal (Rhai).
    Table,
    /// An array literal (Rhai `[...]`).
    Array,
}

impl Literal {
    /// The type the literal would be recorded as; `None` for tables/maps,
    /// which are structs or arrays depending on the signature.
    pub fn ty(&self) -> Option<Type> {
        Some(match self {
            Literal::Str(_) => Type::String,
            Literal::Int(_) => Type::Int,
            Literal::Float(_) => Type::Float,
            Literal::Bool(_) => Type::Bool,
            Literal::Nil => Type::Nil,
            Literal::Table | Literal::Array => return None,
        })
    }
}

/// One argument of a scanned call.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedArg {
    pub span: Span,
    pub literal: Option<Literal>,
    /// When the argument is a function literal (`function(a, b) end`,
    /// `|a, b| {}`): its parameter names; a vararg is `"..."`.
    pub function_params: Option<Vec<String>>,
}

/// One call of a generic API function, as a scanner found it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedCall {
    pub function: ApiFunction,
    /// Called as `GMP.Name(...)` rather than the global `Name(...)`.
    pub via_gmp: bool,
    /// The whole call expression.
    pub call: Span,
    /// The callee expression (`NotifyMessage` or `GMP.NotifyMessage`): what a
    /// rewriter replaces.
    pub callee: Span,
    /// The argument list including its parentheses.
    pub arg_list: Span,
    /// Every argument, in order.
    pub args: Vec<ScannedArg>,
}

impl ScannedCall {
    /// The key argument, if the call has one written.
    pub fn key_arg(&self) -> Option<&ScannedArg> {
        self.args.get(self.function.key_index())
    }

    /// The key, when it is a string literal (a call that can be baked).
    pub fn literal_key(&self) -> Option<&str> {
        match self.key_arg()?.literal.as_ref()? {
            Literal::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The message arguments (after source and key), for sends. For a
    /// request whose last argument is a function literal, that reply function
    /// is not a message argument.
    pub fn message_args(&self) -> &[ScannedArg] {
        let Some(start) = self.function.message_args_start() else {
            return &[];
        };
        let mut args = self.args.get(start..).unwrap_or(&[]);
        if self.function == ApiFunction::SendObjectMessage
            && args.last().is_some_and(|a| a.function_params.is_some())
        {
            args = &args[..args.len() - 1];
        }
        args
    }

    /// The listener function argument, for listens.
    pub fn listener_arg(&self) -> Option<&ScannedArg> {
        self.args.get(self.function.listener_index()?)
    }

    /// The literal key of a listen and the names its function literal
    /// gives the key's parameters ([`ApiFunction::names_params`]): what a
    /// loader that does not bake hands the table.
    pub fn named_params(&self) -> Option<(&str, &[String])> {
        let key = self.literal_key()?;
        let names = self.listener_arg()?.function_params.as_deref()?;
        let names = self.function.names_params(names);
        (!names.is_empty()).then_some((key, names))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in ApiFunction::ALL {
            assert_eq!(ApiFunction::from_name(f.name()), Some(f));
        }
        assert_eq!(ApiFunction::from_name("Nope"), None);
    }

    #[test]
    fn baked_names_never_collide() {
        let a = baked_name(ApiFunction::NotifyMessage, "A.B");
        let b = baked_name(ApiFunction::NotifyMessage, "A_B");
        assert_ne!(a, b);
        assert_eq!(a, "NotifyMessage__A__B");
        for key in ["A.B", "A_B", "A__B", "A._B", "A_.B", "x_0.y", "Player.Hurt"] {
            let name = baked_name(ApiFunction::ListenHook, key);
            assert_eq!(
                parse_baked_name(&name),
                Some((ApiFunction::ListenHook, key.to_owned()))
            );
        }
    }

    #[test]
    fn argument_layout_matches_the_script_api() {
        assert_eq!(ApiFunction::NotifyObjectMessage.key_index(), 1);
        assert_eq!(ApiFunction::NotifyMessage.message_args_start(), Some(1));
        assert_eq!(ApiFunction::ListenObjectMessage.listener_index(), Some(3));
        assert_eq!(ApiFunction::ListenObjectMessage.owner_index(), Some(2));
        assert_eq!(ApiFunction::ListenRowMessage.owner_index(), Some(2));
        assert_eq!(ApiFunction::ListenRowMessage.listener_index(), Some(4));
        assert_eq!(ApiFunction::ListenMessage.owner_index(), Some(1));
    }
}
