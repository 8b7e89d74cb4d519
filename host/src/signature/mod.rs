//! The signature table: what each key carries, who declared it, where it is
//! used. The language server, the stub generator and the script rewriters all
//! read it; the hub writes it as messages flow.
//!
//! On disk it is a versioned JSON file (see [`crate::persist`]) that users
//! commit, so everything here is kept in sorted maps and sets: saving an
//! unchanged table changes no byte.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::key::{KeyError, validate_key};
use crate::types::{Mismatch, Param, StructDef, StructRegistry, Type};
use crate::value::{StructValue, Value};

mod sites;

pub(crate) use sites::FreshFiles;
pub use sites::{Language, Role, Site};

/// What kind of message a key is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A plain message: delivered to whoever listens now.
    #[default]
    Event,
    /// A stored (or once) message: replayed to late listeners.
    Store,
    /// A stored message whose one parameter is an array of structs.
    Collection,
    /// A hook: listeners get the payload itself and may change it.
    Hook,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Event => "event",
            Kind::Store => "store",
            Kind::Collection => "collection",
            Kind::Hook => "hook",
        })
    }
}

/// Whether an entry was declared (by Rust code or by hand in the file) or
/// only observed from traffic.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Declared,
    #[default]
    Observed,
}

/// Everything the table knows about one key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct KeyEntry {
    #[serde(default)]
    pub kind: Kind,
    #[serde(default)]
    pub origin: Origin,
    /// One line of documentation; written by hand or by a declaration.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub doc: String,
    /// The ordered parameters the message carries.
    #[serde(default)]
    pub params: Vec<Param>,
    /// For requests: the types of the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Vec<Param>>,
    /// Every call site seen, sorted.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub sites: BTreeSet<Site>,
}

impl KeyEntry {
    /// Whether the key carries one array of structs: a collection.
    pub fn is_collection(&self) -> bool {
        matches!(self.params.as_slice(), [p] if p.ty.struct_array_element().is_some())
    }

    /// How many parameters a message listener's function may declare: the
    /// message's, plus the responder of a request, plus the update of a
    /// whole-table collection listener. More and the extra ones never get
    /// a value (the prefix rule).
    pub fn listener_params_allowed(&self) -> usize {
        self.params.len() + usize::from(self.response.is_some()) + usize::from(self.is_collection())
    }

    pub fn param_types(&self) -> Vec<Type> {
        self.params.iter().map(|p| p.ty.clone()).collect()
    }

    /// The types a typed listener is held to: the parameters', except that
    /// an observed `nil` says nothing yet (the first real value narrows it,
    /// see [`check_values`]), so any type fits there.
    pub(crate) fn listener_types(&self) -> Vec<Type> {
        let declared = self.origin == Origin::Declared;
        self.params
            .iter()
            .map(|p| match p.ty {
                Type::Nil if !declared => Type::Any,
                _ => p.ty.clone(),
            })
            .collect()
    }

    /// `(dmg: float, causer: object)`: a one-line rendering for editors.
    pub fn signature_label(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.ty))
            .collect();
        let mut label = format!("({})", params.join(", "));
        if let Some(response) = &self.response {
            let types: Vec<String> = response.iter().map(|p| p.ty.to_string()).collect();
            label.push_str(&format!(" -> ({})", types.join(", ")));
        }
        label
    }

    pub fn sites_with_role(&self, role: Role) -> impl Iterator<Item = &Site> {
        self.sites.iter().filter(move |s| s.role == role)
    }

    /// The declaring site, if a declaration recorded one.
    pub fn declaration_site(&self) -> Option<&Site> {
        self.sites_with_role(Role::Declare).next()
    }
}

/// What Rust code declares about a key.
#[derive(Debug, Clone, Default)]
pub struct KeyDecl {
    pub kind: Kind,
    pub doc: String,
    pub params: Vec<Param>,
    pub response: Option<Vec<Param>>,
}

impl KeyDecl {
    /// A plain message's declaration: delivered to whoever listens now.
    pub fn event() -> Self {
        Self::default()
    }
    /// A stored message's declaration: replayed to late listeners.
    pub fn store() -> Self {
        Self::default().kind(Kind::Store)
    }
    /// A hook's declaration: its one parameter is the payload (a struct)
    /// listeners change in place.
    pub fn hook() -> Self {
        Self::default().kind(Kind::Hook)
    }
    /// A request's declaration: a message whose listeners answer with the
    /// [`response`](Self::response) parameters (none until some are
    /// added: an answer that carries nothing).
    pub fn request() -> Self {
        Self {
            response: Some(Vec::new()),
            ..Self::default()
        }
    }
    pub fn kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self
    }
    pub fn doc(mut self, doc: impl Into<String>) -> Self {
        self.doc = doc.into();
        self
    }
    pub fn param(mut self, name: impl Into<String>, ty: Type) -> Self {
        self.params.push(Param::new(name, ty));
        self
    }
    pub fn response(mut self, name: impl Into<String>, ty: Type) -> Self {
        self.response
            .get_or_insert_with(Vec::new)
            .push(Param::new(name, ty));
        self
    }
}

/// What a send or store did to the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The arguments matched what was known; nothing new.
    Unchanged,
    /// The table learned something (a new key, an appended parameter, a kind).
    Changed,
}

/// The current file format version. A file with a higher number is refused.
pub const TABLE_VERSION: u32 = 1;

/// The signature table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureTable {
    pub version: u32,
    #[serde(default, skip_serializing_if = "is_empty_registry")]
    pub structs: StructRegistry,
    #[serde(default, deserialize_with = "crate::persist::unique_names")]
    pub keys: BTreeMap<String, KeyEntry>,
    /// Fields of the file this Gantry does not know (a newer Gantry's, a
    /// tool's), kept to be written back.
    #[serde(skip)]
    pub(crate) extra: crate::persist::Extra,
    /// Names listeners gave parameters the key does not carry yet (a
    /// listener that registers before the first send): applied when a send
    /// appends those parameters ([`Self::record_args`]). Never saved.
    #[serde(skip)]
    pub(crate) pending_names: PendingNames,
    /// The files whose sites this table has recorded since it was made or
    /// read (see [`Self::record_site`]). Never saved.
    #[serde(skip)]
    pub(crate) fresh: FreshFiles,
}

/// The most parameter names kept per key for parameters not seen yet, and
/// the longest name kept: what a listener's source says is hostile input.
const MAX_PENDING_NAMES: usize = 64;
const MAX_PENDING_NAME_BYTES: usize = 64;

/// Parameter names waiting for their parameters, by key. Not part of what
/// the table says (a table read back from its file equals the one saved):
/// equal whatever they hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct PendingNames(BTreeMap<String, Vec<String>>);

impl PartialEq for PendingNames {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for PendingNames {}

/// Whether a listener's parameter name may name a parameter: not a
/// placeholder (`_`, `argN`), not empty, not absurdly long.
fn usable_name(name: &str) -> bool {
    !name.is_empty()
        && name != "_"
        && !name.starts_with("arg")
        && name.len() <= MAX_PENDING_NAME_BYTES
}

fn is_empty_registry(r: &StructRegistry) -> bool {
    r.defs.is_empty()
}

impl Default for SignatureTable {
    fn default() -> Self {
        Self {
            version: TABLE_VERSION,
            structs: StructRegistry::default(),
            keys: BTreeMap::new(),
            extra: Default::default(),
            pending_names: Default::default(),
            fresh: Default::default(),
        }
    }
}

impl SignatureTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, key: &str) -> Option<&KeyEntry> {
        self.keys.get(key)
    }

    /// Every key, sorted.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &KeyEntry)> {
        self.keys.iter().map(|(k, e)| (k.as_str(), e))
    }

    /// Declares a key. A declaration replaces the parameters, kind and
    /// response; a declaration without a doc keeps a doc written by hand.
    pub fn declare(
        &mut self,
        key: &str,
        decl: KeyDecl,
        site: Option<Site>,
    ) -> Result<(), KeyError> {
        validate_key(key)?;
        let entry = self.keys.entry(key.to_owned()).or_default();
        entry.kind = decl.kind;
        entry.origin = Origin::Declared;
        entry.params = decl.params;
        entry.response = decl.response;
        if !decl.doc.is_empty() {
            entry.doc = decl.doc;
        }
        if let Some(site) = site {
            self.insert_site(key, site);
        }
        Ok(())
    }

    /// Declares a struct, replacing an observed definition of the same name.
    /// Its fields are the whole truth: a plain table sent as it may not add
    /// one (see [`crate::types::plain`]).
    pub fn declare_struct(&mut self, name: &str, def: StructDef) {
        self.structs.defs.insert(name.to_owned(), def);
        self.structs.declared.0.insert(name.to_owned());
    }

    /// Checks arguments against the recorded parameters: each argument must
    /// match its position. Extra arguments are a mismatch for a declared key;
    /// for an observed one they are new parameters ([`Self::record_args`]).
    /// Missing trailing arguments are a mismatch too: a listener may take
    /// fewer parameters than a key carries, but a send must carry them all,
    /// or a listener expecting one would be handed nothing.
    pub fn check_args(&self, key: &str, args: &[Value]) -> Result<(), Mismatch> {
        let Some(entry) = self.keys.get(key) else {
            return Ok(());
        };
        if let Some(missing) = entry.params.get(args.len()) {
            return Err(Mismatch {
                position: args.len(),
                expected: missing.ty.to_string(),
                got: "nothing".into(),
            });
        }
        check_values(
            &self.structs,
            &entry.params,
            args,
            entry.origin == Origin::Declared,
        )
    }

    /// Records what a send carried: a new key gets its types inferred from the
    /// values; an observed key grows by appended parameters; structs seen in
    /// the values are recorded. Call after [`Self::check_args`] passed.
    pub fn record_args(&mut self, key: &str, kind: Kind, args: &[Value]) -> Recorded {
        let mut changed = false;
        for arg in args {
            changed |= self.observe_structs_in(arg);
        }
        let entry = match self.keys.get_mut(key) {
            Some(entry) => entry,
            None => {
                if validate_key(key).is_err() {
                    return Recorded::Unchanged;
                }
                changed = true;
                self.keys.entry(key.to_owned()).or_default()
            }
        };
        if entry.origin == Origin::Observed {
            let pending = self.pending_names.0.get(key);
            for (position, arg) in args.iter().enumerate().skip(entry.params.len()) {
                let name = pending
                    .and_then(|names| names.get(position))
                    .filter(|name| !name.is_empty())
                    .cloned()
                    .unwrap_or_else(|| format!("arg{}", position + 1));
                let ty = self
                    .structs
                    .infer_type(arg, &crate::types::plain::param_struct_name(key, position));
                entry.params.push(Param::new(name, ty));
                changed = true;
            }
            // An `any` recorded from a nil can be narrowed by a later real value.
            for (position, (param, arg)) in entry.params.iter_mut().zip(args).enumerate() {
                if matches!(param.ty, Type::Nil) && !arg.is_nil() {
                    param.ty = self
                        .structs
                        .infer_type(arg, &crate::types::plain::param_struct_name(key, position));
                    changed = true;
                }
            }
            let kind = if kind == Kind::Store
                && entry.params.len() == 1
                && entry.params[0].ty.struct_array_element().is_some()
            {
                Kind::Collection
            } else {
                kind
            };
            if entry.kind != kind && !(entry.kind == Kind::Collection && kind == Kind::Store) {
                // Store and hook are stickier than event: a key once stored stays a store.
                if entry.kind == Kind::Event || kind == Kind::Collection {
                    entry.kind = kind;
                    changed = true;
                }
            }
        }
        if changed {
            Recorded::Changed
        } else {
            Recorded::Unchanged
        }
    }

    /// Records response types of a request the first time a reply is seen.
    pub fn record_response(&mut self, key: &str, values: &[Value]) -> Recorded {
        let Some(entry) = self.keys.get_mut(key) else {
            return Recorded::Unchanged;
        };
        if entry.response.is_some() {
            return Recorded::Unchanged;
        }
        let reply = crate::types::plain::reply_struct_name;
        entry.response = Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let ty = self.structs.infer_type(v, &reply(key, i));
                    Param::new(format!("ret{}", i + 1), ty)
                })
                .collect(),
        );
        Recorded::Changed
    }

    /// Checks response values against the recorded response types.
    pub fn check_response(&self, key: &str, values: &[Value]) -> Result<(), Mismatch> {
        match self.keys.get(key).and_then(|e| e.response.as_ref()) {
            Some(params) => check_values(&self.structs, params, values, true),
            None => Ok(()),
        }
    }

    /// Gives observed parameters the names a listener used (`function(dmg,
    /// causer)`), where they still carry generated `argN` names. Names of
    /// parameters the key does not carry yet (the listener registered
    /// before the first send) are kept and given when a send records them.
    /// A declared key keeps its declared names.
    pub fn suggest_param_names(&mut self, key: &str, names: &[String]) -> Recorded {
        let known = match self.keys.get(key) {
            Some(entry) if entry.origin == Origin::Declared => return Recorded::Unchanged,
            Some(entry) => entry.params.len(),
            None => 0,
        };
        if names.len() > known && validate_key(key).is_ok() {
            let names: Vec<String> = names
                .iter()
                .take(MAX_PENDING_NAMES)
                .map(|name| {
                    if usable_name(name) {
                        name.clone()
                    } else {
                        String::new()
                    }
                })
                .collect();
            let kept = self.pending_names.0.entry(key.to_owned()).or_default();
            // The first listener to name a position names it.
            for (position, name) in names.into_iter().enumerate() {
                match kept.get_mut(position) {
                    Some(old) if old.is_empty() => *old = name,
                    Some(_) => {}
                    None => kept.push(name),
                }
            }
        }
        let Some(entry) = self.keys.get_mut(key) else {
            return Recorded::Unchanged;
        };
        let mut changed = false;
        for (position, (param, name)) in entry.params.iter_mut().zip(names).enumerate() {
            if param.name == format!("arg{}", position + 1) && usable_name(name) {
                param.name = name.clone();
                changed = true;
            }
        }
        if changed {
            Recorded::Changed
        } else {
            Recorded::Unchanged
        }
    }

    /// Marks a key's kind when it is first seen as a hook or store, without
    /// arguments to infer from.
    pub fn note_kind(&mut self, key: &str, kind: Kind) -> Recorded {
        if validate_key(key).is_err() {
            return Recorded::Unchanged;
        }
        let entry = self.keys.entry(key.to_owned()).or_default();
        if entry.origin == Origin::Observed && entry.kind == Kind::Event && kind != Kind::Event {
            entry.kind = kind;
            return Recorded::Changed;
        }
        Recorded::Unchanged
    }

    fn observe_structs_in(&mut self, value: &Value) -> bool {
        match value {
            Value::Struct(s) => self.observe_struct(s),
            Value::Array(items) => items
                .iter()
                .take(1)
                .any(|item| self.observe_structs_in(item)),
            _ => false,
        }
    }

    /// Records a struct's fields from a value, if the struct is not known yet.
    pub fn observe_struct(&mut self, value: &StructValue) -> bool {
        let mut changed = false;
        for (_, field) in &value.fields {
            changed |= self.observe_structs_in(field);
        }
        if self.structs.defs.contains_key(&*value.name)
            || !crate::types::is_struct_name(&value.name)
        {
            return changed;
        }
        let field_struct = crate::types::plain::field_struct_name;
        let fields = value
            .fields
            .iter()
            .map(|(name, v)| {
                let ty = self.structs.infer_type(v, &field_struct(&value.name, name));
                Param::new(name.to_string(), ty)
            })
            .collect();
        self.structs.defs.insert(
            value.name.to_string(),
            StructDef {
                parent: None,
                doc: String::new(),
                fields,
            },
        );
        true
    }

    /// Merges `other` (for example what a run observed) into this table:
    /// declared entries win over observed ones, docs written by hand survive,
    /// sites are united.
    pub fn merge(&mut self, other: &SignatureTable) {
        for (name, def) in &other.structs.defs {
            self.structs
                .defs
                .entry(name.clone())
                .or_insert_with(|| def.clone());
        }
        for (key, theirs) in &other.keys {
            match self.keys.get_mut(key) {
                None => {
                    self.keys.insert(key.clone(), theirs.clone());
                }
                Some(ours) => {
                    let take_theirs = theirs.origin == Origin::Declared
                        || (ours.origin == Origin::Observed
                            && theirs.params.len() > ours.params.len());
                    if take_theirs {
                        ours.params = theirs.params.clone();
                        ours.kind = theirs.kind;
                        ours.origin = theirs.origin;
                        if theirs.response.is_some() {
                            ours.response = theirs.response.clone();
                        }
                    }
                    if ours.response.is_none() {
                        ours.response = theirs.response.clone();
                    }
                    if ours.doc.is_empty() {
                        ours.doc = theirs.doc.clone();
                    }
                    ours.sites.extend(theirs.sites.iter().cloned());
                }
            }
        }
    }
}

/// The compatibility rule's one conversion: an int where a float is
/// declared (the parameter, or an element or field inside it) becomes that
/// float. Borrows `values` when nothing converts.
pub(crate) fn ints_widened<'v>(
    structs: &StructRegistry,
    values: &'v [Value],
    params: &[Param],
) -> Cow<'v, [Value]> {
    let mut out = Cow::Borrowed(values);
    for (i, (value, param)) in values.iter().zip(params).enumerate() {
        if structs.needs_widening(value, &param.ty) {
            structs.widen_ints(&mut out.to_mut()[i], &param.ty);
        }
    }
    out
}

/// Checks values against parameters position by position. A `declared`
/// signature is the whole truth: extra arguments are a mismatch and a `nil`
/// parameter means nil. An observed one grows: extra arguments are new
/// parameters, and an observed `nil` says nothing yet (the first real value
/// narrows it, see `record_args`).
pub(crate) fn check_values(
    structs: &StructRegistry,
    params: &[Param],
    args: &[Value],
    declared: bool,
) -> Result<(), Mismatch> {
    for (position, arg) in args.iter().enumerate() {
        match params.get(position) {
            Some(param) if !declared && param.ty == Type::Nil => {}
            Some(param) if !structs.value_matches(arg, &param.ty) => {
                return Err(Mismatch {
                    position,
                    expected: param.ty.to_string(),
                    got: arg.kind_name(),
                });
            }
            Some(_) => {}
            None if declared => {
                return Err(Mismatch {
                    position,
                    expected: format!("at most {} argument(s)", params.len()),
                    got: arg.kind_name(),
                });
            }
            None => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_use_records_inferred_types() {
        let mut t = SignatureTable::new();
        t.record_args(
            "Player.Hurt",
            Kind::Event,
            &[Value::Float(2.5), Value::Int(3)],
        );
        let e = t.get("Player.Hurt").unwrap();
        assert_eq!(e.param_types(), vec![Type::Float, Type::Int]);
        assert_eq!(e.origin, Origin::Observed);
        assert!(t.check_args("Player.Hurt", &[Value::str("x")]).is_err());
        assert!(
            t.check_args("Player.Hurt", &[Value::Int(1), Value::Int(2)])
                .is_ok(),
            "int for float"
        );
        assert!(
            t.check_args("Player.Hurt", &[Value::Int(1)]).is_err(),
            "a send missing a parameter"
        );
    }

    #[test]
    fn declared_keys_refuse_extra_arguments() {
        let mut t = SignatureTable::new();
        t.declare("A", KeyDecl::event().param("x", Type::Int), None)
            .unwrap();
        let m = t
            .check_args("A", &[Value::Int(1), Value::Int(2)])
            .unwrap_err();
        assert_eq!(m.position, 1);
    }

    #[test]
    fn storing_an_array_of_structs_makes_a_collection() {
        let mut t = SignatureTable::new();
        let item = Value::structure(StructValue::new("Item").with("id", 1i64));
        t.record_args("Inv.Items", Kind::Store, &[Value::array(vec![item])]);
        assert_eq!(t.get("Inv.Items").unwrap().kind, Kind::Collection);
        assert_eq!(t.structs.get("Item").unwrap().fields[0].name, "id");
    }
}
