//! From manifest text to a [`Manifest`], or to every finding in it.
//!
//! The TOML parser gives a document whose every key and value carries its
//! byte span; the reader walks it once, checking each table's fields
//! against the fields it may have, and records each finding at the span
//! of the text at fault instead of stopping. Structs are named before any
//! type is read, so a key may use a struct declared further down.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{MAX_REPORTED_ERRORS, ManifestError, ManifestErrors, Problem};
use super::near::nearest;
use super::place::Lines;
use super::{
    BUILTIN_TYPES, DeclaredKey, DeclaredStruct, MAX_DOC_BYTES, MAX_FIELDS, MAX_KEYS,
    MAX_NAME_BYTES, MAX_PARAMS, MAX_STRUCTS, MAX_TICK_BUDGET_MS, Manifest, ManifestKind, ModInfo,
    struct_named,
};
use crate::key::validate_key;
use crate::types::{Param, Type, is_struct_name};

type Table<'i> = DeTable<'i>;
type Entry<'a, 'i> = (
    &'a Spanned<std::borrow::Cow<'i, str>>,
    &'a Spanned<DeValue<'i>>,
);

const TOP_TABLES: [&str; 4] = ["mod", "structs", "keys", "grants"];
const MOD_FIELDS: [&str; 6] = [
    "name",
    "version",
    "description",
    "depends",
    "optional",
    "tick_budget_ms",
];
const STRUCT_FIELDS: [&str; 2] = ["fields", "doc"];
const KEY_FIELDS: [&str; 5] = ["kind", "params", "returns", "doc", "persist"];

pub(super) fn read(file: &str, text: &str) -> Result<Manifest, ManifestErrors> {
    let mut reader = Reader {
        file,
        lines: Lines::new(text),
        errors: Vec::new(),
    };
    let (root, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        // What the parser recovered into is a guess; findings about it
        // would be about text the user did not write.
        for error in syntax {
            reader.toml_error(&error);
        }
        return Err(reader.finish());
    }
    let manifest = reader.document(root.get_ref());
    match manifest {
        Some(manifest) if reader.errors.is_empty() => Ok(manifest),
        _ => Err(reader.finish()),
    }
}

struct Reader<'t> {
    file: &'t str,
    lines: Lines<'t>,
    errors: Vec<ManifestError>,
}

/// A struct name as declared, for resolving types and telling names that
/// differ only in case apart.
struct Structs {
    names: BTreeSet<String>,
}

impl<'t> Reader<'t> {
    fn finish(mut self) -> ManifestErrors {
        self.errors.sort_by_key(|e| (e.line, e.column));
        let omitted = self.errors.len().saturating_sub(MAX_REPORTED_ERRORS);
        self.errors.truncate(MAX_REPORTED_ERRORS);
        ManifestErrors {
            file: self.file.to_owned(),
            errors: self.errors,
            omitted,
        }
    }

    fn report(
        &mut self,
        at: Range<usize>,
        field: &str,
        problem: Problem,
        suggestion: Option<String>,
    ) {
        let (line, column) = self.lines.at(at.start);
        self.errors.push(ManifestError {
            file: self.file.to_owned(),
            line,
            column,
            field: field.to_owned(),
            problem,
            suggestion,
        });
    }

    fn toml_error(&mut self, error: &toml::de::Error) {
        let span = error.span().unwrap_or(0..0);
        let mut message = error.message().trim().to_owned();
        if message == "duplicate key"
            && let Some(key) = self.lines.text(span.clone())
            && !key.contains('\n')
        {
            // The parser says which position; say which key.
            message = format!("`{key}` is written twice");
        }
        self.report(span, "", Problem::Toml { message }, None);
    }

    fn document(&mut self, root: &Table<'_>) -> Option<Manifest> {
        let mut module = None;
        let mut structs_table = None;
        let mut keys_table = None;
        let mut grants_table = None;
        for (name, value) in in_file_order(root) {
            match (name.get_ref().as_ref(), value.get_ref()) {
                ("mod", _) => module = Some((name, value)),
                ("structs", _) => structs_table = Some(value),
                ("keys", _) => keys_table = Some(value),
                ("grants", _) => grants_table = Some(value),
                (other, DeValue::Table(_)) => self.report(
                    name.span(),
                    "",
                    Problem::UnknownTable {
                        name: other.to_owned(),
                    },
                    nearest(other, TOP_TABLES),
                ),
                (other, _) => self.report(
                    name.span(),
                    "",
                    Problem::UnknownField {
                        name: other.to_owned(),
                        expected: "the tables [mod], [structs.*], [keys.*] and [grants]",
                    },
                    nearest(other, TOP_TABLES),
                ),
            }
        }
        let module = match module {
            Some((name, value)) => self.module(name, value),
            None => {
                self.report(0..0, "", Problem::MissingMod, None);
                None
            }
        };
        let structs_entries = structs_table
            .and_then(|v| self.section(v, "structs", "structs", MAX_STRUCTS))
            .unwrap_or_default();
        let known = Structs {
            names: structs_entries
                .iter()
                .map(|(name, _)| name.get_ref().to_string())
                .filter(|name| is_struct_name(name))
                .collect(),
        };
        self.case_conflicts(&structs_entries, "structs");
        let structs: Vec<DeclaredStruct> = structs_entries
            .iter()
            .filter_map(|&(name, value)| self.declared_struct(name, value, &known))
            .collect();
        let keys_entries = keys_table
            .and_then(|v| self.section(v, "keys", "keys", MAX_KEYS))
            .unwrap_or_default();
        self.case_conflicts(&keys_entries, "keys");
        let keys: Vec<DeclaredKey> = keys_entries
            .iter()
            .filter_map(|&(name, value)| self.declared_key(name, value, &known))
            .collect();
        let grants = grants_table.and_then(|value| {
            let mut findings = Vec::new();
            let grants = super::grants::read(value, &mut findings);
            for (at, field, problem, suggestion) in findings {
                self.report(at, &field, problem, suggestion);
            }
            grants
        });
        Some(Manifest {
            file: self.file.to_owned(),
            module: module?,
            structs,
            keys,
            grants,
        })
    }

    /// The entries of `[structs]` or `[keys]`, in file order, at most
    /// `limit` of them.
    fn section<'a, 'i>(
        &mut self,
        value: &'a Spanned<DeValue<'i>>,
        name: &'static str,
        what: &'static str,
        limit: usize,
    ) -> Option<Vec<Entry<'a, 'i>>> {
        let table = self.table(value, name)?;
        if table.len() > limit {
            self.report(value.span(), name, Problem::TooMany { what, limit }, None);
            return None;
        }
        Some(in_file_order(table))
    }

    /// Two struct names or keys that differ only in case: the later one
    /// is the finding.
    fn case_conflicts(&mut self, entries: &[Entry<'_, '_>], field: &str) {
        let mut seen: BTreeMap<String, (String, u32)> = BTreeMap::new();
        for (name, _) in entries {
            let text = name.get_ref().as_ref();
            let line = self.lines.line(name.span().start);
            match seen.get(&text.to_lowercase()) {
                Some((other, other_line)) => {
                    let problem = Problem::CaseConflict {
                        name: text.to_owned(),
                        other: other.clone(),
                        other_line: *other_line,
                    };
                    self.report(name.span(), field, problem, None);
                }
                None => {
                    seen.insert(text.to_lowercase(), (text.to_owned(), line));
                }
            }
        }
    }

    fn module(
        &mut self,
        name: &Spanned<std::borrow::Cow<'_, str>>,
        value: &Spanned<DeValue<'_>>,
    ) -> Option<ModInfo> {
        let table = self.table(value, "mod")?;
        self.unknown_fields(
            table,
            "mod",
            &MOD_FIELDS,
            "name, version, description, depends, optional, tick_budget_ms",
        );
        let mod_name = match table.get("name") {
            Some(v) => self.string(v, "mod.name", MAX_NAME_BYTES),
            None => {
                self.report(
                    name.span(),
                    "mod",
                    Problem::MissingField { name: "name" },
                    None,
                );
                None
            }
        };
        if let Some(n) = &mod_name
            && (n.is_empty()
                || !n.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                }))
        {
            let at = table.get("name").map(|v| v.span()).unwrap_or(name.span());
            self.report(
                at,
                "mod.name",
                Problem::BadModName { name: n.clone() },
                None,
            );
        }
        let version = table
            .get("version")
            .and_then(|v| self.string(v, "mod.version", MAX_NAME_BYTES));
        let description = table
            .get("description")
            .and_then(|v| self.string(v, "mod.description", MAX_DOC_BYTES));
        let depends = self.dependencies(table, "depends");
        let optional = self.dependencies(table, "optional");
        let tick_budget = table
            .get("tick_budget_ms")
            .and_then(|v| self.budget(v, "mod.tick_budget_ms"));
        Some(ModInfo {
            name: mod_name?,
            version,
            description,
            depends,
            optional,
            tick_budget,
        })
    }

    /// A time budget in milliseconds (an integer or a float): more than
    /// zero and at most [`MAX_TICK_BUDGET_MS`].
    fn budget(&mut self, value: &Spanned<DeValue<'_>>, field: &str) -> Option<Duration> {
        let ms = match value.get_ref() {
            DeValue::Integer(n) => i64::from_str_radix(n.as_str(), n.radix())
                .ok()
                .map(|n| n as f64),
            DeValue::Float(x) => x.as_str().parse::<f64>().ok(),
            _ => {
                self.wrong_type(value, field, "a number of milliseconds");
                return None;
            }
        };
        match ms {
            Some(ms) if ms.is_finite() && ms > 0.0 && ms <= MAX_TICK_BUDGET_MS => {
                Some(Duration::from_secs_f64(ms / 1e3))
            }
            _ => {
                let text = self.lines.text(value.span()).unwrap_or_default().to_owned();
                self.report(
                    value.span(),
                    field,
                    Problem::OutOfRange {
                        text,
                        range: "more than 0 and at most 60000 milliseconds",
                    },
                    None,
                );
                None
            }
        }
    }

    fn declared_struct(
        &mut self,
        name: &Spanned<std::borrow::Cow<'_, str>>,
        value: &Spanned<DeValue<'_>>,
        known: &Structs,
    ) -> Option<DeclaredStruct> {
        let struct_name = name.get_ref().as_ref();
        let field = format!("structs.{}", toml_key(struct_name));
        let mut ok = true;
        if BUILTIN_TYPES.contains(&struct_name) {
            // `int` always reads as the built-in type: the struct could
            // never be used.
            let problem = Problem::BuiltinName {
                name: struct_name.to_owned(),
            };
            self.report(name.span(), "structs", problem, None);
            ok = false;
        } else if !is_struct_name(struct_name) || struct_name.len() > MAX_NAME_BYTES {
            self.report(
                name.span(),
                "structs",
                Problem::BadName {
                    name: struct_name.to_owned(),
                },
                None,
            );
            ok = false;
        }
        let table = self.table(value, &field)?;
        self.unknown_fields(table, &field, &STRUCT_FIELDS, "fields, doc");
        let fields = match table.get("fields") {
            Some(v) => self.params(v, &format!("{field}.fields"), MAX_FIELDS, known, true),
            None => {
                self.report(
                    name.span(),
                    &field,
                    Problem::MissingField { name: "fields" },
                    None,
                );
                None
            }
        };
        let doc = self.doc(table, &field);
        let (line, column) = self.lines.at(name.span().start);
        Some(DeclaredStruct {
            name: struct_name.to_owned(),
            fields: fields?,
            doc: doc?,
            line,
            column,
        })
        .filter(|_| ok)
    }

    fn declared_key(
        &mut self,
        name: &Spanned<std::borrow::Cow<'_, str>>,
        value: &Spanned<DeValue<'_>>,
        known: &Structs,
    ) -> Option<DeclaredKey> {
        let key = name.get_ref().as_ref();
        let field = format!("keys.{}", toml_key(key));
        let mut ok = true;
        if let Err(e) = validate_key(key) {
            self.report(name.span(), "keys", Problem::BadKey(e), None);
            ok = false;
        }
        let table = self.table(value, &field)?;
        // `[keys.Quest.Start]`: TOML made `Start` a table inside `Quest`.
        let mut nested = false;
        for (inner, inner_value) in in_file_order(table) {
            if !KEY_FIELDS.contains(&inner.get_ref().as_ref())
                && matches!(inner_value.get_ref(), DeValue::Table(_))
            {
                nested = true;
                let problem = Problem::UnquotedKey {
                    key: format!("{key}.{}", inner.get_ref()),
                };
                self.report(inner.span(), "keys", problem, None);
            }
        }
        if nested {
            return None;
        }
        self.unknown_fields(
            table,
            &field,
            &KEY_FIELDS,
            "kind, params, returns, doc, persist",
        );
        let kind = match table.get("kind") {
            Some(v) => self.kind(v, &format!("{field}.kind")),
            None => {
                self.report(
                    name.span(),
                    &field,
                    Problem::MissingField { name: "kind" },
                    None,
                );
                None
            }
        };
        let params_field = format!("{field}.params");
        let params = match table.get("params") {
            Some(v) => self.params(v, &params_field, MAX_PARAMS, known, true),
            None => Some(Vec::new()),
        };
        let returns = match (table.get_key_value("returns"), kind) {
            (Some((returns_key, _)), Some(kind)) if kind != ManifestKind::Request => {
                let problem = Problem::ReturnsOnNonRequest {
                    kind: kind.as_str(),
                };
                self.report(returns_key.span(), &field, problem, None);
                None
            }
            (Some((_, v)), _) => self
                .params(v, &format!("{field}.returns"), MAX_PARAMS, known, false)
                .map(Some),
            (None, Some(ManifestKind::Request)) => {
                self.report(name.span(), &field, Problem::MissingReturns, None);
                None
            }
            (None, _) => Some(None),
        };
        if kind == Some(ManifestKind::Table)
            && let Some(params) = &params
            && !matches!(params.as_slice(), [p] if p.ty.struct_array_element().is_some())
        {
            let at = table.get("params").map_or(name.span(), |v| v.span());
            self.report(at, &params_field, Problem::TableShape, None);
        }
        let doc = self.doc(table, &field);
        let persist = table.get("persist").is_some_and(|value| {
            let mut findings = Vec::new();
            let persist =
                super::persist::read(value, &format!("{field}.persist"), kind, &mut findings);
            self.report_all(findings);
            persist
        });
        let (line, column) = self.lines.at(name.span().start);
        Some(DeclaredKey {
            key: key.to_owned(),
            kind: kind?,
            params: params?,
            returns: returns?,
            doc: doc?,
            persist,
            line,
            column,
        })
        .filter(|_| ok)
    }

    /// `[mod] depends` or `optional` (empty when absent).
    fn dependencies(&mut self, table: &Table<'_>, name: &str) -> Vec<super::Dependency> {
        let Some(value) = table.get(name) else {
            return Vec::new();
        };
        let mut findings = Vec::new();
        let found = super::depends::read(value, &format!("mod.{name}"), &self.lines, &mut findings);
        self.report_all(findings);
        found
    }

    fn report_all(&mut self, findings: Vec<super::depends::Finding>) {
        for (at, field, problem, suggestion) in findings {
            self.report(at, &field, problem, suggestion);
        }
    }

    fn kind(&mut self, value: &Spanned<DeValue<'_>>, field: &str) -> Option<ManifestKind> {
        let text = self.string(value, field, MAX_NAME_BYTES)?;
        match text.parse() {
            Ok(kind) => Some(kind),
            Err(()) => {
                let suggestion = nearest(&text, ManifestKind::ALL.map(ManifestKind::as_str));
                self.report(
                    value.span(),
                    field,
                    Problem::UnknownKind { kind: text },
                    suggestion,
                );
                None
            }
        }
    }

    /// An array of `name: type` (`named`), or of `type` or `name: type`
    /// (a request's `returns`, unnamed ones named `ret1`, `ret2`, …).
    fn params(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        field: &str,
        limit: usize,
        known: &Structs,
        named: bool,
    ) -> Option<Vec<Param>> {
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(value, field, "an array of strings");
            return None;
        };
        if items.len() > limit {
            let what = if named { "entries" } else { "returned values" };
            self.report(value.span(), field, Problem::TooMany { what, limit }, None);
            return None;
        }
        let mut params = Vec::with_capacity(items.len());
        let mut first_line: BTreeMap<String, u32> = BTreeMap::new();
        let mut ok = true;
        for (position, item) in items.iter().enumerate() {
            let DeValue::String(text) = item.get_ref() else {
                self.wrong_type(item, field, "a string (`name: type`)");
                ok = false;
                continue;
            };
            // Where in the file the string's text starts: after its quote,
            // when the text stands as written (no escapes).
            let start = item.span().start;
            let inner = match self.lines.text(start + 1..start + 1 + text.len()) {
                Some(written) if written == text.as_ref() => start + 1,
                _ => start,
            };
            let (name, type_text, type_at) = match text.split_once(':') {
                Some((name, ty)) => {
                    let offset = text.len() - ty.trim_start().len();
                    (name.trim(), ty.trim(), inner + offset)
                }
                None if !named => (
                    "",
                    text.trim(),
                    inner + (text.len() - text.trim_start().len()),
                ),
                None => {
                    let problem = Problem::NotNameAndType {
                        text: text.to_string(),
                    };
                    self.report(item.span(), field, problem, None);
                    ok = false;
                    continue;
                }
            };
            let name = if name.is_empty() && !named {
                format!("ret{}", position + 1)
            } else if !is_struct_name(name) || name.len() > MAX_NAME_BYTES {
                let at = inner + (text.len() - text.trim_start().len());
                self.report(
                    at..at,
                    field,
                    Problem::BadName {
                        name: name.to_owned(),
                    },
                    None,
                );
                ok = false;
                continue;
            } else {
                name.to_owned()
            };
            let line = self.lines.line(item.span().start);
            if let Some(&first) = first_line.get(&name) {
                let problem = Problem::Duplicate {
                    name,
                    first_line: first,
                };
                self.report(item.span(), field, problem, None);
                ok = false;
                continue;
            }
            first_line.insert(name.clone(), line);
            match self.resolve(type_text, type_at, field, known) {
                Some(ty) => params.push(Param::new(name, ty)),
                None => ok = false,
            }
        }
        ok.then_some(params)
    }

    /// A type as the table writes it; a struct must be one this manifest
    /// declares.
    fn resolve(&mut self, text: &str, at: usize, field: &str, known: &Structs) -> Option<Type> {
        let candidates = || {
            BUILTIN_TYPES
                .into_iter()
                .chain(known.names.iter().map(String::as_str))
        };
        let ty = match text.parse::<Type>() {
            Ok(ty) => ty,
            Err(e) => {
                // `Quest[]`, as other languages write an array.
                let suggestion = text
                    .strip_suffix("[]")
                    .filter(|inner| inner.parse::<Type>().is_ok())
                    .map(|inner| format!("array<{}>", inner.trim()));
                let problem = Problem::BadType {
                    text: text.to_owned(),
                    reason: e.reason.to_owned(),
                };
                self.report(at..at, field, problem, suggestion);
                return None;
            }
        };
        let Some(name) = struct_named(&ty) else {
            return Some(ty);
        };
        if known.names.contains(name) {
            return Some(ty);
        }
        let suggestion = nearest(name, candidates());
        let problem = if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            Problem::UnknownStruct {
                name: name.to_owned(),
            }
        } else {
            Problem::UnknownType {
                name: name.to_owned(),
            }
        };
        // Point at the name itself inside `array<…>`.
        let offset = text.find(name).unwrap_or(0);
        self.report(at + offset..at + offset, field, problem, suggestion);
        None
    }

    fn doc(&mut self, table: &Table<'_>, field: &str) -> Option<String> {
        match table.get("doc") {
            Some(v) => self.string(v, &format!("{field}.doc"), MAX_DOC_BYTES),
            None => Some(String::new()),
        }
    }

    fn table<'a, 'i>(
        &mut self,
        value: &'a Spanned<DeValue<'i>>,
        field: &str,
    ) -> Option<&'a Table<'i>> {
        match value.get_ref() {
            DeValue::Table(table) => Some(table),
            _ => {
                self.wrong_type(value, field, "a table");
                None
            }
        }
    }

    fn string(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        field: &str,
        limit: usize,
    ) -> Option<String> {
        match value.get_ref() {
            DeValue::String(text) if text.len() > limit => {
                self.report(value.span(), field, Problem::TooLong { limit }, None);
                None
            }
            DeValue::String(text) => Some(text.to_string()),
            _ => {
                self.wrong_type(value, field, "a string");
                None
            }
        }
    }

    fn wrong_type(&mut self, value: &Spanned<DeValue<'_>>, field: &str, expected: &'static str) {
        let found = found(value.get_ref());
        self.report(
            value.span(),
            field,
            Problem::WrongType { expected, found },
            None,
        );
    }

    fn unknown_fields(
        &mut self,
        table: &Table<'_>,
        field: &str,
        allowed: &[&'static str],
        expected: &'static str,
    ) {
        for (name, _) in in_file_order(table) {
            let text = name.get_ref().as_ref();
            if !allowed.contains(&text) {
                let problem = Problem::UnknownField {
                    name: text.to_owned(),
                    expected,
                };
                self.report(
                    name.span(),
                    field,
                    problem,
                    nearest(text, allowed.iter().copied()),
                );
            }
        }
    }
}

/// A table's entries in the order the file writes them (the parser's map
/// is sorted by name).
fn in_file_order<'a, 'i>(table: &'a Table<'i>) -> Vec<Entry<'a, 'i>> {
    let mut entries: Vec<Entry<'a, 'i>> = table.iter().collect();
    entries.sort_by_key(|(name, _)| name.span().start);
    entries
}

/// `name` as a TOML key: bare when it can be, else quoted.
fn toml_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        name.to_owned()
    } else {
        format!("{name:?}")
    }
}

/// What a TOML value is, as a manifest error says it (`found a string`).
pub(super) fn found(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}
