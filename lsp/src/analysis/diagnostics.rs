//! Diagnostics: every scanned call checked against the signature table.
//!
//! Each finding has a stable [`Code`] (editors and `gantry check` users
//! filter on it). Severity follows one rule, the runtime's: what contradicts
//! a *declared* key (in `mod.toml`, by the host, or by hand in the table) is
//! an error (the hub refuses it at run time); what contradicts a key only
//! *observed* from traffic is a warning (the table may simply not have seen
//! enough yet).
//!
//! Keys are checked against the mod itself too, table or none ([`KeyUse`]):
//! a key listened to that nothing sends nor declares never fires — an error
//! when a known key is a few edits away (a typo), a warning otherwise; a
//! key sent that nothing listens to nor declares is a warning.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::ops::Range;
use std::path::Path;

use gantry_host::key::{parent_key, validate_key};
use gantry_host::{
    ApiFunction, KeyEntry, Language, Literal, Origin, Role, ScannedArg, ScannedCall,
    SignatureTable, Type,
};
use gantry_stubs::shape::FunctionSet;
use serde::Serialize;

use crate::index::WorkspaceIndex;

/// A stable diagnostic code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// A key listened to that nothing sends nor declares, or sent and that
    /// nothing listens to nor declares.
    UnknownKey,
    /// The key string is not a well-formed key.
    MalformedKey,
    /// More message arguments than the key carries.
    TooManyArgs,
    /// Fewer message arguments than a listener in the workspace takes.
    TooFewArgs,
    /// A literal argument whose type contradicts the table.
    ArgType,
    /// A listener function declaring more parameters than the message carries.
    ListenerParams,
    /// `ListenRowMessage` on a key that is not a collection.
    RowListenNotCollection,
    /// A function of another kind than the key's (`RunHook` on a store
    /// key, `GMP.StoredArray` on an event key).
    WrongKind,
    /// The key is not a string literal: the call cannot be baked.
    NonLiteralKey,
    /// The signature table could not be read.
    TableError,
    /// The `mod.toml` could not be used.
    ManifestError,
    /// The script does not parse: its language would refuse to load it.
    SyntaxError,
    /// A script could not be read (a FIFO or device, a link out of the mod
    /// folder, too large, not UTF-8): it was not checked.
    FileError,
    /// A call outside its mod's `[grants]`: the hub refuses it.
    NotGranted,
}

impl Code {
    pub const ALL: [Code; 14] = [
        Code::UnknownKey,
        Code::MalformedKey,
        Code::TooManyArgs,
        Code::TooFewArgs,
        Code::ArgType,
        Code::ListenerParams,
        Code::RowListenNotCollection,
        Code::WrongKind,
        Code::NonLiteralKey,
        Code::TableError,
        Code::ManifestError,
        Code::SyntaxError,
        Code::FileError,
        Code::NotGranted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::UnknownKey => "unknown-key",
            Code::MalformedKey => "malformed-key",
            Code::TooManyArgs => "too-many-args",
            Code::TooFewArgs => "too-few-args",
            Code::ArgType => "arg-type",
            Code::ListenerParams => "listener-params",
            Code::RowListenNotCollection => "row-listen-not-collection",
            Code::WrongKind => "wrong-kind",
            Code::NonLiteralKey => "non-literal-key",
            Code::TableError => "table-error",
            Code::ManifestError => "manifest-error",
            Code::SyntaxError => "syntax-error",
            Code::FileError => "file-error",
            Code::NotGranted => "not-granted",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Hint,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Hint => "hint",
        })
    }
}

/// A replacement that fixes a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub range: Range<usize>,
    pub new_text: String,
}

/// One finding, in byte offsets of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub range: Range<usize>,
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    pub fix: Option<Fix>,
}

/// Checks every call. `table` is the script's table (its table file, the
/// host's keys and its manifest, merged; empty for a fresh mod), `None`
/// when the table file could not be read: then only what needs no table
/// (malformed and non-literal keys) is checked. `uses` is what the whole
/// workspace does with keys ([`KeyUse::of`] the same table and workspace).
pub fn check_calls(
    calls: &[ScannedCall],
    table: Option<&SignatureTable>,
    workspace: &WorkspaceIndex,
    uses: &KeyUse,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut listeners = ListenerNeeds::default();
    for call in calls {
        check_call(call, table, workspace, uses, &mut listeners, &mut out);
    }
    out.sort_by_key(|d| (d.range.start, d.code));
    out
}

/// What the mod does with keys, workspace-wide, and what is declared: the
/// keys sent (by a script, or by the host where the table recorded a Rust
/// site), the keys listened to, the keys declared. A typo'd key is caught
/// here with no table at all: it is listened to and sent nowhere.
#[derive(Debug, Clone, Default)]
pub struct KeyUse {
    sent: BTreeSet<String>,
    listened: BTreeSet<String>,
    declared: BTreeSet<String>,
}

impl KeyUse {
    /// Built once per check (or publish) from the table and the index.
    pub fn of(table: Option<&SignatureTable>, workspace: &WorkspaceIndex) -> Self {
        let mut uses = KeyUse::default();
        for (key, role) in workspace.keys() {
            let set = match role {
                Role::Send => &mut uses.sent,
                Role::Listen => &mut uses.listened,
                Role::Declare => continue,
            };
            if !set.contains(key) {
                set.insert(key.to_owned());
            }
        }
        for (key, entry) in table.into_iter().flat_map(SignatureTable::entries) {
            if entry.origin == Origin::Declared {
                uses.declared.insert(key.to_owned());
            }
            // The host's own sends and listens (Rust sites) are not in the
            // scripts; a script's recorded site may be a typo a run saved.
            for site in entry.sites.iter().filter(|s| s.language == Language::Rust) {
                match site.role {
                    Role::Send => uses.sent.insert(key.to_owned()),
                    Role::Listen => uses.listened.insert(key.to_owned()),
                    Role::Declare => false,
                };
            }
        }
        uses
    }

    /// Does anything send `key`, or declare it or a key under it (a
    /// listener of `Inv` hears `Inv.Gold`)?
    fn reaches(&self, key: &str) -> bool {
        let below = format!("{key}.");
        let under = |set: &BTreeSet<String>| {
            set.range(below.clone()..)
                .next()
                .is_some_and(|k| k.starts_with(&below))
        };
        self.sent.contains(key)
            || self.declared.contains(key)
            || under(&self.sent)
            || under(&self.declared)
    }

    /// Does anything listen to `key` or a key above it, or declare it?
    fn hears(&self, key: &str) -> bool {
        self.declared.contains(key)
            || std::iter::successors(Some(key), |k| parent_key(k))
                .any(|k| self.listened.contains(k))
    }

    /// The key nearest `key` among the declared and those `role` uses.
    fn nearest(&self, key: &str, role: Role) -> Option<&str> {
        let used = match role {
            Role::Listen => &self.listened,
            _ => &self.sent,
        };
        nearest_of(self.declared.iter().chain(used).map(String::as_str), key)
    }
}

/// The most parameters a workspace listener of each key takes (capped at
/// the key's parameter count), with where that listener is: asked once per
/// key, not once per call — a script sends the same key from many places.
type ListenerNeeds<'a> = HashMap<&'a str, Option<(usize, &'a Path, u32)>>;

fn check_call<'a>(
    call: &'a ScannedCall,
    table: Option<&SignatureTable>,
    workspace: &'a WorkspaceIndex,
    uses: &KeyUse,
    listeners: &mut ListenerNeeds<'a>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(key_arg) = call.key_arg() else {
        return;
    };
    let range = key_arg.span.start..key_arg.span.end;
    let key = match &key_arg.literal {
        Some(Literal::Str(key)) => key,
        Some(_) => {
            out.push(diag(
                range,
                Severity::Error,
                Code::MalformedKey,
                format!("the key of {} must be a string", call.function),
            ));
            return;
        }
        None => {
            out.push(diag(
                range,
                Severity::Hint,
                Code::NonLiteralKey,
                format!(
                    "the key of this {} call is not a string literal: it cannot be baked and is resolved on every call",
                    call.function
                ),
            ));
            return;
        }
    };
    if let Err(error) = validate_key(key) {
        out.push(diag(
            range,
            Severity::Error,
            Code::MalformedKey,
            error.to_string(),
        ));
        return;
    }
    let Some(table) = table else {
        return;
    };
    if let Some(d) = orphan(call.function, key, key_arg, uses) {
        out.push(d);
    }
    let Some(entry) = table.get(key) else {
        return;
    };
    let severity = match entry.origin {
        Origin::Declared => Severity::Error,
        Origin::Observed => Severity::Warning,
    };
    check_kind(call.function, key, key_arg, entry, severity, out);
    if call.function.message_args_start().is_some() {
        check_message_args(call, key, entry, table, workspace, listeners, severity, out);
    }
    if call.function == ApiFunction::ListenRowMessage && entry.kind != gantry_host::Kind::Collection
    {
        out.push(diag(
            range,
            Severity::Error,
            Code::RowListenNotCollection,
            format!(
                "`{key}` is a {} message, not a collection: ListenRowMessage needs a stored array of structs",
                entry.kind
            ),
        ));
    }
    check_listener(call, key, entry, severity, out);
}

/// A key listened to that nothing sends nor declares (its listener never
/// fires), or sent and that nothing listens to nor declares. With a known
/// key a few edits away, a listen is an error (a typo) and says which key
/// was meant, with the fix; a send stays a warning (sending to nobody is
/// harmless, and another mod may listen).
fn orphan(
    function: ApiFunction,
    key: &str,
    key_arg: &ScannedArg,
    uses: &KeyUse,
) -> Option<Diagnostic> {
    let range = key_arg.span.start..key_arg.span.end;
    let (message, nearest, severity) = match function.role()? {
        Role::Listen if !uses.reaches(key) => {
            let nearest = uses.nearest(key, Role::Send);
            let severity = if nearest.is_some() {
                Severity::Error
            } else {
                Severity::Warning
            };
            (
                format!("`{key}` is listened to but sent nowhere and declared nowhere"),
                nearest,
                severity,
            )
        }
        Role::Send if !uses.hears(key) => (
            format!("`{key}` is sent but listened to nowhere and declared nowhere"),
            uses.nearest(key, Role::Listen),
            Severity::Warning,
        ),
        _ => return None,
    };
    let mut d = diag(range.clone(), severity, Code::UnknownKey, message);
    match nearest {
        Some(nearest) => {
            d.message.push_str(&format!("; did you mean `{nearest}`?"));
            d.fix = Some(Fix {
                title: format!("Change to `{nearest}`"),
                range: range.start + 1..range.end.saturating_sub(1).max(range.start + 1),
                new_text: nearest.to_owned(),
            });
        }
        None => d
            .message
            .push_str(" (declare it in mod.toml if another mod or the host uses it)"),
    }
    Some(d)
}

/// The known key closest to `key` by edit distance, if it is close enough to
/// be a plausible typo (a third of the key's length, at least two edits).
pub fn nearest_key<'t>(table: &'t SignatureTable, key: &str) -> Option<&'t str> {
    nearest_of(table.keys.keys().map(String::as_str), key)
}

/// [`nearest_key`] among `candidates` (`key` itself left out).
fn nearest_of<'k>(candidates: impl Iterator<Item = &'k str>, key: &str) -> Option<&'k str> {
    let limit = (key.len() / 3).max(2);
    let lower = key.to_ascii_lowercase();
    candidates
        .filter(|k| *k != key)
        .map(|k| {
            (
                strsim::levenshtein(&k.to_ascii_lowercase(), &lower),
                strsim::levenshtein(k, key),
                k,
            )
        })
        .filter(|(folded, _, _)| *folded <= limit)
        .min_by_key(|&(folded, exact, _)| (folded, exact))
        .map(|(_, _, k)| k)
}

/// Whether `function` may be called with a key of `entry`'s kind, as the
/// stubs' shapes say ([`FunctionSet`]), so that completion, the checks and
/// the stubs agree. A store of a key observed as a plain event fits: the
/// run makes it a store.
pub fn kind_fits(function: ApiFunction, entry: &KeyEntry) -> bool {
    FunctionSet::of(entry).contains(function)
}

/// A function used on a key of another kind, as the stubs' shapes say
/// which fit ([`kind_fits`]): an error when the kind is declared.
/// `ListenRowMessage` has its own finding.
fn check_kind(
    function: ApiFunction,
    key: &str,
    key_arg: &ScannedArg,
    entry: &KeyEntry,
    severity: Severity,
    out: &mut Vec<Diagnostic>,
) {
    use ApiFunction::*;
    if function == ListenRowMessage || kind_fits(function, entry) {
        return;
    }
    let kind = if entry.response.is_some() {
        "request".to_owned()
    } else {
        entry.kind.to_string()
    };
    let needs = match function {
        RunHook | ListenHook => "a hook key",
        StoredArray => "a collection key (one array of structs, stored)",
        Request => "a request key (one with a response)",
        StoreObjectMessage | OnceObjectMessage | RemoveStoredObjectMessage => {
            "a store or collection key"
        }
        _ => "a message key, not a hook (hooks run with RunHook)",
    };
    out.push(diag(
        key_arg.span.start..key_arg.span.end,
        severity,
        Code::WrongKind,
        format!("`{key}` is a {kind} key: {function} takes {needs}"),
    ));
}

#[allow(clippy::too_many_arguments)] // one call's context, passed down once
fn check_message_args<'a>(
    call: &ScannedCall,
    key: &'a str,
    entry: &KeyEntry,
    table: &SignatureTable,
    workspace: &'a WorkspaceIndex,
    listeners: &mut ListenerNeeds<'a>,
    severity: Severity,
    out: &mut Vec<Diagnostic>,
) {
    let args = call.message_args();
    if args.len() > entry.params.len() {
        let extra = &args[entry.params.len()..];
        let range = extra[0].span.start..extra[extra.len() - 1].span.end;
        out.push(diag(
            range,
            severity,
            Code::TooManyArgs,
            format!(
                "`{key}` carries {} parameter(s) {} but this call passes {}",
                entry.params.len(),
                entry.signature_label(),
                args.len()
            ),
        ));
    }
    for (position, (arg, param)) in args.iter().zip(&entry.params).enumerate() {
        let Some(literal) = &arg.literal else {
            continue;
        };
        if !literal_fits(table, literal, &param.ty) {
            out.push(diag(
                arg.span.start..arg.span.end,
                severity,
                Code::ArgType,
                format!(
                    "argument {} of `{key}` ({}) expects {}, got {}",
                    position + 1,
                    param.name,
                    param.ty,
                    literal_name(literal)
                ),
            ));
        }
    }
    let needed = *listeners.entry(key).or_insert_with(|| {
        workspace
            .calls_of(key)
            .filter_map(|(path, _, c)| {
                Some((
                    c.listener_params?.min(entry.params.len()),
                    path,
                    c.range.start.line,
                ))
            })
            .max_by_key(|(n, _, _)| *n)
    });
    if let Some((needs, path, line)) = needed
        && needs > args.len()
    {
        out.push(diag(
            call.arg_list.start..call.arg_list.end,
            Severity::Warning,
            Code::TooFewArgs,
            format!(
                "the listener of `{key}` at {}:{} takes {needs} parameter(s) but this call passes {}",
                path.display(),
                line + 1,
                args.len()
            ),
        ));
    }
}

/// Can a literal be sent where the table expects `ty`? Tables may be structs
/// or arrays (Lua); a Rhai map is a struct and a Rhai array an array.
fn literal_fits(table: &SignatureTable, literal: &Literal, ty: &Type) -> bool {
    match (literal.ty(), literal) {
        (Some(got), _) => table.structs.accepts(ty, &got),
        (None, Literal::Array) => matches!(ty, Type::Any | Type::Array(_)),
        (None, _) => matches!(ty, Type::Any | Type::Array(_) | Type::Struct(_)),
    }
}

fn literal_name(literal: &Literal) -> String {
    match literal.ty() {
        Some(ty) => ty.to_string(),
        None if *literal == Literal::Array => "an array".to_owned(),
        None => "a table".to_owned(),
    }
}

/// The prefix rule: a listener may drop trailing parameters, never add any.
fn check_listener(
    call: &ScannedCall,
    key: &str,
    entry: &KeyEntry,
    severity: Severity,
    out: &mut Vec<Diagnostic>,
) {
    if !call.function.is_message_listen() {
        return;
    }
    let Some(listener) = call.listener_arg() else {
        return;
    };
    let Some(params) = &listener.function_params else {
        return;
    };
    if params.iter().any(|p| p == "...") {
        return;
    }
    // A request's listener may take the responder after the message, a
    // whole-table listener the update.
    let allowed = entry.listener_params_allowed();
    if params.len() > allowed {
        out.push(diag(
            listener.span.start..listener.span.end,
            severity,
            Code::ListenerParams,
            format!(
                "this listener declares {} parameter(s) but `{key}` carries {} {}: a listener may only drop trailing parameters",
                params.len(),
                entry.params.len(),
                entry.signature_label()
            ),
        ));
    }
}

fn diag(range: Range<usize>, severity: Severity, code: Code, message: String) -> Diagnostic {
    Diagnostic {
        range,
        severity,
        code,
        message,
        fix: None,
    }
}
