//! Diagnostics: every scanned call checked against the signature table.
//!
//! Each finding has a stable [`Code`] (editors and `gantry check` users
//! filter on it). Severity follows one rule: what contradicts a *declared*
//! key is an error (the hub would refuse it at run time); what contradicts a
//! key only *observed* from traffic is a warning (the table may simply not
//! have seen enough yet).

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;

use gantry_host::key::validate_key;
use gantry_host::{
    ApiFunction, KeyEntry, Literal, Origin, ScannedArg, ScannedCall, SignatureTable, Type,
};
use serde::Serialize;

use crate::index::WorkspaceIndex;

/// A stable diagnostic code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The key is not in the signature table.
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
    /// The key is not a string literal: the call cannot be baked.
    NonLiteralKey,
    /// The signature table could not be read.
    TableError,
    /// A script could not be read (a FIFO or device, a link out of the mod
    /// folder, too large, not UTF-8): it was not checked.
    FileError,
}

impl Code {
    pub const ALL: [Code; 10] = [
        Code::UnknownKey,
        Code::MalformedKey,
        Code::TooManyArgs,
        Code::TooFewArgs,
        Code::ArgType,
        Code::ListenerParams,
        Code::RowListenNotCollection,
        Code::NonLiteralKey,
        Code::TableError,
        Code::FileError,
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
            Code::NonLiteralKey => "non-literal-key",
            Code::TableError => "table-error",
            Code::FileError => "file-error",
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

/// Checks every call. `table` is `None` when no signature table was found:
/// then only what needs no table (malformed and non-literal keys) is checked.
pub fn check_calls(
    calls: &[ScannedCall],
    table: Option<&SignatureTable>,
    workspace: &WorkspaceIndex,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut listeners = ListenerNeeds::default();
    for call in calls {
        check_call(call, table, workspace, &mut listeners, &mut out);
    }
    out.sort_by_key(|d| (d.range.start, d.code));
    out
}

/// The most parameters a workspace listener of each key takes (capped at
/// the key's parameter count), with where that listener is: asked once per
/// key, not once per call — a script sends the same key from many places.
type ListenerNeeds<'a> = HashMap<&'a str, Option<(usize, &'a Path, u32)>>;

fn check_call<'a>(
    call: &'a ScannedCall,
    table: Option<&SignatureTable>,
    workspace: &'a WorkspaceIndex,
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
    let Some(entry) = table.get(key) else {
        if !(call.function.role() == Some(gantry_host::Role::Listen) && is_namespace(table, key)) {
            out.push(unknown_key(table, key, key_arg));
        }
        return;
    };
    let severity = match entry.origin {
        Origin::Declared => Severity::Error,
        Origin::Observed => Severity::Warning,
    };
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

/// Is `key` a parent of known keys (a partial listen on `Inv` hears `Inv.Items`)?
fn is_namespace(table: &SignatureTable, key: &str) -> bool {
    let prefix = format!("{key}.");
    table
        .keys
        .range(prefix.clone()..)
        .next()
        .is_some_and(|(k, _)| k.starts_with(&prefix))
}

fn unknown_key(table: &SignatureTable, key: &str, key_arg: &ScannedArg) -> Diagnostic {
    let range = key_arg.span.start..key_arg.span.end;
    let mut d = diag(
        range.clone(),
        Severity::Warning,
        Code::UnknownKey,
        format!("unknown key `{key}`: it is not in the signature table"),
    );
    if let Some(nearest) = nearest_key(table, key) {
        d.message.push_str(&format!("; did you mean `{nearest}`?"));
        d.fix = Some(Fix {
            title: format!("Change to `{nearest}`"),
            range: range.start + 1..range.end.saturating_sub(1).max(range.start + 1),
            new_text: nearest.to_owned(),
        });
    }
    d
}

/// The known key closest to `key` by edit distance, if it is close enough to
/// be a plausible typo (a third of the key's length, at least two edits).
pub fn nearest_key<'t>(table: &'t SignatureTable, key: &str) -> Option<&'t str> {
    let limit = (key.len() / 3).max(2);
    let lower = key.to_ascii_lowercase();
    table
        .keys
        .keys()
        .map(|k| {
            (
                strsim::levenshtein(&k.to_ascii_lowercase(), &lower),
                strsim::levenshtein(k, key),
                k,
            )
        })
        .filter(|(folded, _, _)| *folded <= limit)
        .min_by_key(|&(folded, exact, _)| (folded, exact))
        .map(|(_, _, k)| k.as_str())
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
