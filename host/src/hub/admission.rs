//! Admission: a dispatch's arguments checked against the key's signature,
//! what is new recorded in the table (types, call sites), and a refusal
//! reported once the state is released.

use std::panic::Location;

use crate::api::{ApiFunction, kind_text, kinds_text};
use crate::collection::Spans;
use crate::key::Key;
use crate::report::Report;
use crate::signature::{Kind, Recorded, Role, SignatureTable, Site};
use crate::source::Source;
use crate::trace::TraceEvent;
use crate::types::{Mismatch, StructRegistry, Type};
use crate::value::Value;

use super::routing::{Gathered, collect_lists_into};
use super::state::{Slot, State, refresh_sig};
use super::{Caller, Hub, HubError};

impl Hub {
    /// Records a Rust call site of `key` as a send, once per location (a
    /// heard hook run; sends record theirs in `admit`).
    pub(crate) fn record_rust_site(&self, key: Key, loc: &'static Location<'static>) {
        let mut state = self.inner.state.borrow_mut();
        let s = &mut *state;
        let Some(slot) = s.slots.get_mut(key.index()) else {
            return;
        };
        if let Some(site) = note_rust_site(slot, loc) {
            let name = s.keys.name(key).clone();
            if s.table.record_site(&name, site) {
                self.inner.table_dirty.set(true);
            }
        }
    }

    /// Records a hook's payload type on its first run (a plain table
    /// names its struct).
    pub(crate) fn record_hook_payload(&self, key: Key, payload: &mut Value) {
        let mut state = self.inner.state.borrow_mut();
        let s = &mut *state;
        let name = s.keys.name(key).clone();
        if payload.holds_plain() {
            // Refused, the payload stays plain: listeners expecting a
            // struct are skipped, as for any payload of another type.
            let _ = s.table.settle_args(&name, std::slice::from_mut(payload));
        }
        if s.table
            .record_args(&name, Kind::Hook, std::slice::from_ref(payload))
            == Recorded::Changed
        {
            self.inner.table_dirty.set(true);
        }
        refresh_sig(s, key);
    }

    /// Phase 1: check, record, collect listener lists into `lists`. Also
    /// used by stores.
    pub(crate) fn gather(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
        kind: Kind,
        lists: &mut Gathered,
    ) -> Result<(), HubError> {
        self.admit_then(key, args, caller, kind, |s| {
            collect_lists_into(s, key, source, lists)
        })
        .map(drop)
    }

    /// [`Hub::gather`] for a writer's store of a table whose other rows
    /// were checked when stored: only the `changed` rows are checked. A
    /// refusal comes back unreported (the writer puts the stored table
    /// back first, then [`Hub::refuse`]s).
    pub(crate) fn gather_edited(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
        changed: &Spans,
        lists: &mut Gathered,
    ) -> Result<(), Refused> {
        self.admit_then_quiet(key, args, caller, Kind::Store, Some(changed), |s| {
            collect_lists_into(s, key, source, lists)
        })
        .map(drop)
    }

    /// Phase 1 of every dispatch: with the state borrowed, admit the
    /// arguments, then run `then` (collect or route). `None` for a key the
    /// state has no slot for (nobody listens). A refusal is reported once
    /// the borrow is released.
    pub(super) fn admit_then<R>(
        &self,
        key: Key,
        args: &mut [Value],
        caller: Caller<'_>,
        kind: Kind,
        then: impl FnOnce(&mut State) -> R,
    ) -> Result<Option<R>, HubError> {
        self.admit_then_quiet(key, args, caller, kind, None, then)
            .map_err(|refused| self.refuse(refused, caller))
    }

    /// [`Hub::admit_then`] that hands a refusal back unreported, for a
    /// caller with something to undo before anyone hears of it.
    pub(super) fn admit_then_quiet<R>(
        &self,
        key: Key,
        args: &mut [Value],
        caller: Caller<'_>,
        kind: Kind,
        changed: Option<&Spans>,
        then: impl FnOnce(&mut State) -> R,
    ) -> Result<Option<R>, Refused> {
        let mut state = self.inner.state.borrow_mut();
        let s = &mut *state;
        if key.index() >= s.slots.len() {
            return Ok(None);
        }
        self.admit(s, key, args, caller, kind, changed)?;
        let routed = then(s);
        let epoch = s.epoch;
        drop(state);
        // A first send records the key's types: the epoch moves.
        self.epoch_moved(epoch);
        Ok(Some(routed))
    }

    /// Checks `args` against the key's signature and records what is new
    /// (the types on first use, the call site). The state stays borrowed:
    /// a refusal is reported by the caller once it is released.
    ///
    /// `changed`: a writer's publish of a table whose other rows were
    /// checked when they were stored; only these rows are checked again.
    pub(super) fn admit(
        &self,
        s: &mut State,
        key: Key,
        args: &mut [Value],
        caller: Caller<'_>,
        kind: Kind,
        changed: Option<&Spans>,
    ) -> Result<(), Refused> {
        let checked = self.inner.checked.get();
        let slot = &mut s.slots[key.index()];
        // A key the table holds to another kind (a hook sent or stored, a
        // declared event stored) is refused before anything is recorded:
        // a branch on the compiled signature, no lookup.
        if let Some(sig) = &slot.sig
            && sig.refused >> kind as u8 & 1 != 0
        {
            return Err(Refused::WrongKind {
                key: s.keys.name(key).to_string(),
                kind: sig.kind,
                declared: sig.declared,
                function: dispatch_function(kind),
            });
        }
        let new_site = match caller {
            Caller::Rust(loc) => note_rust_site(slot, loc),
            Caller::Script(site) => Some(site.clone()),
            Caller::Unrecorded | Caller::Located(_) => None,
        };
        // Fast signature check against the slot's compiled parameters.
        let mut failure: Option<(usize, String, String)> = None;
        let needs_record = match &slot.sig {
            Some(sig) if args.len() <= sig.params.len() || sig.declared => {
                let mut narrow = !sig.knows_kind(kind);
                for (position, (arg, ty)) in args.iter_mut().zip(sig.params.iter()).enumerate() {
                    match (ty, &*arg) {
                        (Type::Int, Value::Int(_))
                        | (Type::Float, Value::Float(_))
                        | (Type::Bool, Value::Bool(_))
                        | (Type::String, Value::Str(_))
                        | (Type::Object, Value::Object(_))
                        | (Type::Any, _) => {}
                        (Type::Float, Value::Int(i)) => *arg = Value::Float(*i as f64),
                        (Type::Nil, _) if !sig.declared => narrow = true,
                        _ if !checked => {}
                        _ => {
                            let mut fits = rows_match(
                                &s.table.structs,
                                s.row_shape.at(s.epoch),
                                arg,
                                ty,
                                changed,
                            );
                            if !fits && arg.holds_plain() {
                                // A table without `__struct`: named as the
                                // parameter's struct here, or by the table
                                // below when it grows it or is refused.
                                if s.table.structs.name_plain(arg, ty).is_err() {
                                    narrow = true;
                                    break;
                                }
                                fits = rows_match(
                                    &s.table.structs,
                                    s.row_shape.at(s.epoch),
                                    arg,
                                    ty,
                                    changed,
                                );
                            }
                            if !fits {
                                let got = s.table.structs.describe(arg, ty);
                                failure = Some((position, ty.to_string(), got));
                                break;
                            }
                            if sig.nested_floats >> position.min(63) & 1 != 0 {
                                s.table.structs.widen_ints(arg, ty);
                            }
                        }
                    }
                }
                // A send missing parameters the key carries would hand
                // listeners nothing where they expect a value.
                if failure.is_none() && checked && args.len() < sig.params.len() {
                    let position = args.len();
                    failure = Some((position, sig.params[position].to_string(), "nothing".into()));
                }
                if failure.is_none() && checked && sig.declared && args.len() > sig.params.len() {
                    let position = sig.params.len();
                    failure = Some((
                        position,
                        format!("at most {position} argument(s)"),
                        args[position].kind_name(),
                    ));
                }
                narrow
            }
            _ => true,
        };
        if let Some((position, expected, got)) = failure {
            return Err(Refused::Mismatch {
                key: s.keys.name(key).to_string(),
                position,
                expected,
                got,
            });
        }
        if needs_record || new_site.is_some() {
            let name = s.keys.name(key).clone();
            if needs_record {
                let plain = args.iter().any(Value::holds_plain);
                let undo = (checked || plain).then(|| Recording::before(&s.table, &name, args));
                if plain {
                    // Tables without `__struct` name their structs (the
                    // table may learn one); unchecked, a refused one stays
                    // plain.
                    match s.table.settle_args(&name, args) {
                        Ok(Recorded::Changed) => self.inner.table_dirty.set(true),
                        Ok(Recorded::Unchanged) => {}
                        Err(m) if checked => {
                            let refused = refused_args(&s.table, &name, m, args);
                            if let Some(undo) = undo {
                                undo.restore(&mut s.table, &name);
                            }
                            return Err(refused);
                        }
                        Err(_) => {}
                    }
                }
                if checked && let Err(m) = s.table.check_args(&name, args) {
                    let refused = refused_args(&s.table, &name, m, args);
                    if plain && let Some(undo) = undo {
                        undo.restore(&mut s.table, &name);
                    }
                    return Err(refused);
                }
                if s.table.record_args(&name, kind, args) == Recorded::Changed {
                    // What a first send records is what later sends are held
                    // to; a send that fails it (an array mixing types, rows
                    // of one struct with fields of different types) is
                    // refused now, as each later one would be, and leaves
                    // nothing recorded.
                    if let Err(m) = s.table.check_args(&name, args) {
                        let refused = refused_args(&s.table, &name, m, args);
                        if let Some(undo) = undo {
                            undo.restore(&mut s.table, &name);
                        }
                        return Err(refused);
                    }
                    self.inner.table_dirty.set(true);
                }
                // An int for a float is converted here too: the fast check
                // above converts only a send that fits the slot's parameters
                // (not one that appends to an observed key, nor a first one).
                if let Some(entry) = s.table.get(&name) {
                    for (arg, param) in args.iter_mut().zip(&entry.params) {
                        s.table.structs.widen_ints(arg, &param.ty);
                    }
                }
                refresh_sig(s, key);
            }
            if let Some(site) = new_site
                && s.table.record_site(&name, site)
            {
                self.inner.table_dirty.set(true);
            }
        }
        Ok(())
    }

    /// Reports a refused dispatch (the state released) and makes its error.
    #[cold]
    pub(crate) fn refuse(&self, refused: Refused, caller: Caller<'_>) -> HubError {
        match refused {
            Refused::Mismatch {
                key,
                position,
                expected,
                got,
            } => self.mismatch(key, position, expected, got, caller, None),
            Refused::WrongKind {
                key,
                kind,
                declared,
                function,
            } => {
                let error = HubError::WrongKind {
                    key,
                    kind: kind_text(kind).to_owned(),
                    declared,
                    function,
                    fits: kinds_text(function),
                };
                if self.is_tracing()
                    && let HubError::WrongKind { key, .. } = &error
                {
                    let reason = error.to_string();
                    self.trace(&TraceEvent::Aborted {
                        key,
                        reason: &reason,
                    });
                }
                error
            }
        }
    }

    pub(super) fn mismatch(
        &self,
        key: String,
        position: usize,
        expected: String,
        got: String,
        caller: Caller<'_>,
        listener_site: Option<Site>,
    ) -> HubError {
        if self.is_tracing() {
            let reason = format!("argument {}: expected {expected}, got {got}", position + 1);
            self.trace(&TraceEvent::Aborted {
                key: &key,
                reason: &reason,
            });
        }
        self.report(Report::Mismatch {
            key: key.clone(),
            position,
            expected: expected.clone(),
            got: got.clone(),
            site: caller.site(),
            listener_site,
        });
        HubError::Mismatch {
            key,
            mismatch: Mismatch {
                position,
                expected,
                got,
            },
        }
    }
}

/// The argument check of `admit` for a value the fast match did not
/// settle: the whole value, or, for a table a writer edited, its changed
/// rows only (a full reload checks them all).
#[inline]
pub(super) fn rows_match(
    structs: &StructRegistry,
    shape: &mut crate::types::RowShape,
    arg: &Value,
    ty: &Type,
    changed: Option<&Spans>,
) -> bool {
    match (changed, ty, arg) {
        (Some(spans), Type::Array(element), Value::Array(rows)) if !spans.is_full() => {
            spans.ranges().iter().all(|range| {
                let end = (range.end().max(0) as usize).min(rows.len());
                let start = (range.index.max(0) as usize).min(end);
                structs.values_match_with(&rows[start..end], element, shape)
            })
        }
        (_, Type::Array(element), Value::Array(rows)) => {
            structs.values_match_with(rows, element, shape)
        }
        _ => structs.value_matches(arg, ty),
    }
}

/// The refusal of `args` by the table entry of `key`, saying what the
/// refused argument is where the table's check only named its kind.
pub(super) fn refused_args(
    table: &SignatureTable,
    key: &str,
    m: Mismatch,
    args: &[Value],
) -> Refused {
    let param = table.get(key).and_then(|e| e.params.get(m.position));
    let got = match (param, args.get(m.position)) {
        (Some(param), Some(arg)) if param.ty.to_string() == m.expected => {
            table.structs.describe(arg, &param.ty)
        }
        _ => m.got,
    };
    Refused::Mismatch {
        key: key.to_owned(),
        position: m.position,
        expected: m.expected,
        got,
    }
}

/// What recording a send's types may change in the table, kept to put
/// back when the send contradicts what it recorded.
pub(super) struct Recording {
    /// The entry's kind and parameters (`None`: there was no entry).
    entry: Option<(Kind, Vec<crate::types::Param>)>,
    /// The structs, when the send may define new ones.
    structs: Option<StructRegistry>,
}

impl Recording {
    pub(super) fn before(table: &SignatureTable, key: &str, args: &[Value]) -> Recording {
        Recording {
            entry: table.get(key).map(|e| (e.kind, e.params.clone())),
            structs: args
                .iter()
                .any(|arg| names_unknown_struct(&table.structs, arg, 0))
                .then(|| table.structs.clone()),
        }
    }

    pub(super) fn restore(self, table: &mut SignatureTable, key: &str) {
        match self.entry {
            Some((kind, params)) => {
                if let Some(entry) = table.keys.get_mut(key) {
                    entry.kind = kind;
                    entry.params = params;
                }
            }
            None => {
                table.keys.remove(key);
            }
        }
        if let Some(structs) = self.structs {
            table.structs = structs;
        }
    }
}

/// Whether recording `value` may define a struct (the values
/// `SignatureTable::record_args` reads: struct values, their fields, an
/// array's first element).
pub(super) fn names_unknown_struct(structs: &StructRegistry, value: &Value, depth: usize) -> bool {
    if depth > crate::types::MAX_TYPE_DEPTH {
        return true;
    }
    match value {
        Value::Struct(s) => {
            !structs.defs.contains_key(&*s.name)
                || s.fields
                    .iter()
                    .any(|(_, field)| names_unknown_struct(structs, field, depth + 1))
        }
        Value::Array(items) => items
            .first()
            .is_some_and(|item| names_unknown_struct(structs, item, depth + 1)),
        _ => false,
    }
}

/// A dispatch the signature refused, held until the state is released.
pub(crate) enum Refused {
    /// An argument of another type than the key's parameter.
    Mismatch {
        key: String,
        position: usize,
        expected: String,
        got: String,
    },
    /// A key the table holds to a kind the dispatch does not fit.
    WrongKind {
        key: String,
        kind: Kind,
        declared: bool,
        function: ApiFunction,
    },
}

/// The function a dispatch of `kind` stands for, as a refusal names it: a
/// send is a `NotifyMessage`, a store (or a writer's publish) a
/// `StoreObjectMessage`, and a hook run a `RunHook`.
pub(super) fn dispatch_function(kind: Kind) -> ApiFunction {
    match kind {
        Kind::Event => ApiFunction::NotifyMessage,
        Kind::Store | Kind::Collection => ApiFunction::StoreObjectMessage,
        Kind::Hook => ApiFunction::RunHook,
    }
}

/// A Rust call site to record, once per location (a pointer compare for
/// the site that sent last, a set lookup for the others).
#[inline]
pub(super) fn note_rust_site(slot: &mut Slot, loc: &'static Location<'static>) -> Option<Site> {
    if slot.last_rust_site.is_some_and(|l| std::ptr::eq(l, loc)) {
        return None;
    }
    slot.last_rust_site = Some(loc);
    slot.rust_sites
        .insert(loc as *const Location<'static> as usize)
        .then(|| Site::rust(loc, Role::Send))
}
