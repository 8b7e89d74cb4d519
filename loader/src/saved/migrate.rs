//! Fitting a saved message to its key's declaration as it is now.
//!
//! A save records each persisted key's parameters by name beside its
//! messages, so a declaration that changed between two runs is matched
//! parameter by parameter, by NAME, never by place:
//!
//! - a parameter kept under the same name keeps its saved value when the
//!   value still fits the declared type (an int where a float is declared
//!   now fits, by the hub's own compatibility rule: it becomes that float
//!   when stored, exactly as a live send would; a float where an int is
//!   declared does not, since it could lose its fraction);
//! - a parameter renamed, retyped or removed loses its value, and the
//!   report names it with the value it dropped;
//! - a parameter with no saved value (new, renamed, or whose value was
//!   dropped) starts empty when its type has an empty value the key could
//!   have been sent with: `any` and `nil` start as nil, an array as `[]`.
//!   Any other type (an int, a string, a struct) has no value the loader
//!   could make up without inventing game state, so the whole message is
//!   dropped and the report says which parameter had nothing;
//! - a struct-typed value is fitted the same way, field by field, at any
//!   depth: a field the struct no longer has, or whose value no longer
//!   fits, is dropped and named (`quest.reward`); a new field is left out,
//!   which the hub's rule for structs already takes as its default.
//!
//! A save of version 1 recorded no names: its values are matched to the
//! declaration's parameters by place, which is all it can say.

use gantry_host::types::{StructRegistry, Type};
use gantry_host::value::StructValue;
use gantry_host::{KeyEntry, Value};

/// The deepest value fitted (arrays and structs inside each other).
const MAX_DEPTH: usize = 64;

/// A saved message fitted to the declaration.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Fitted {
    /// The values to store, `None` when the message cannot be kept.
    pub values: Option<Vec<Value>>,
    /// The parameters that kept their saved value.
    pub kept: Vec<String>,
    /// The parameters that start empty.
    pub emptied: Vec<String>,
    /// What was dropped, each `name (value: why)`.
    pub dropped: Vec<String>,
    /// Why the whole message is dropped.
    pub why: Option<String>,
}

impl Fitted {
    /// Whether the message changed on its way: what a report is about.
    pub fn changed(&self) -> bool {
        self.values.is_none() || !self.emptied.is_empty() || !self.dropped.is_empty()
    }

    /// `keeps n, starts log empty, drops who ("ann": no longer a
    /// parameter)`, or `is dropped: …`: what a report says of it.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(why) = &self.why {
            parts.push(format!("is dropped: {why}"));
        } else if !self.kept.is_empty() {
            parts.push(format!("keeps {}", self.kept.join(", ")));
        }
        if self.why.is_none() && !self.emptied.is_empty() {
            parts.push(format!("starts {} empty", self.emptied.join(", ")));
        }
        if !self.dropped.is_empty() {
            parts.push(format!("drops {}", self.dropped.join(", ")));
        }
        let text = parts.join("; ");
        if text.chars().count() > 600 {
            text.chars().take(600).chain(['…']).collect()
        } else {
            text
        }
    }
}

/// Fits `values`, saved under the parameter names `saved` (`None`: a
/// version 1 save, by place), to `entry` as declared now.
pub(crate) fn fit(
    saved: Option<&[String]>,
    values: &[Value],
    entry: &KeyEntry,
    structs: &StructRegistry,
) -> Fitted {
    let names: Vec<String> = (0..values.len())
        .map(|at| {
            let by_place = || entry.params.get(at).map(|p| p.name.clone());
            match saved {
                Some(saved) => saved.get(at).cloned(),
                None => by_place(),
            }
            .unwrap_or_else(|| format!("#{}", at + 1))
        })
        .collect();
    let mut out = Fitted::default();
    let mut used = vec![false; values.len()];
    let mut fitted = Vec::with_capacity(entry.params.len());
    for param in &entry.params {
        let found = names.iter().position(|n| *n == param.name);
        let value = match found {
            Some(at) => {
                used[at] = true;
                match fit_value(&values[at], &param.ty, structs, &param.name, &mut out, 0) {
                    Ok(value) => {
                        out.kept.push(param.name.clone());
                        Some(value)
                    }
                    Err(why) => {
                        out.dropped
                            .push(format!("{} ({}: {why})", param.name, shown(&values[at])));
                        None
                    }
                }
            }
            None => None,
        };
        let value = match value {
            Some(value) => value,
            None => match empty_of(&param.ty) {
                Some(empty) => {
                    out.emptied.push(param.name.clone());
                    empty
                }
                None => {
                    let what = if found.is_some() {
                        "kept no value"
                    } else {
                        "has no saved value"
                    };
                    out.why.get_or_insert(format!(
                        "`{}: {}` {what}, and only an `any`, `nil` or array parameter can start empty",
                        param.name, param.ty
                    ));
                    Value::Nil
                }
            },
        };
        fitted.push(value);
    }
    for (at, used) in used.into_iter().enumerate() {
        if !used {
            out.dropped.push(format!(
                "{} ({}: no longer a parameter)",
                names[at],
                shown(&values[at])
            ));
        }
    }
    out.dropped.dedup();
    if out.why.is_none() {
        out.values = Some(fitted);
    }
    out
}

/// The value a parameter of type `ty` starts with when it has none.
fn empty_of(ty: &Type) -> Option<Value> {
    match ty {
        Type::Any | Type::Nil => Some(Value::Nil),
        Type::Array(_) => Some(Value::array(Vec::new())),
        _ => None,
    }
}

/// `value` fitted to `ty`, its struct fields by name; what a struct
/// drops on the way is added to `out` under `path`.
fn fit_value(
    value: &Value,
    ty: &Type,
    structs: &StructRegistry,
    path: &str,
    out: &mut Fitted,
    depth: usize,
) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("nested too deeply".into());
    }
    match (ty, value) {
        (Type::Struct(name), Value::Struct(saved)) if structs.get(name).is_some() => {
            if !structs.is_a(&saved.name, name) {
                return Err(format!("a {} where a {name} is declared now", saved.name));
            }
            let fields = structs.all_fields(&saved.name);
            let mut fitted = StructValue::new(saved.name.clone());
            for (field, v) in &saved.fields {
                let at = format!("{path}.{field}");
                match fields.iter().find(|f| *f.name == **field) {
                    Some(f) => match fit_value(v, &f.ty, structs, &at, out, depth + 1) {
                        Ok(v) => fitted.fields.push((field.clone(), v)),
                        Err(why) => out.dropped.push(format!("{at} ({}: {why})", shown(v))),
                    },
                    None => out.dropped.push(format!(
                        "{at} ({}: no longer a field of {})",
                        shown(v),
                        saved.name
                    )),
                }
            }
            Ok(Value::structure(fitted))
        }
        (Type::Array(inner), Value::Array(items)) => {
            let at = format!("{path}[]");
            let items = items
                .iter()
                .map(|item| fit_value(item, inner, structs, &at, out, depth + 1))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|why| format!("an element is {why}"))?;
            Ok(Value::array(items))
        }
        _ if structs.value_matches(value, ty) => Ok(value.clone()),
        _ => Err(format!("{ty} declared now")),
    }
}

/// A value as a report quotes it: strings quoted, at most 60 characters.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::Str(s) => format!("{:?}", &**s),
        other => other.to_string(),
    };
    if text.chars().count() > 60 {
        text.chars().take(60).chain(['…']).collect()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gantry_host::types::{Param, StructDef};

    fn entry(params: &[(&str, Type)]) -> KeyEntry {
        KeyEntry {
            params: params
                .iter()
                .map(|(n, t)| Param::new(*n, t.clone()))
                .collect(),
            ..KeyEntry::default()
        }
    }

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn a_reordered_declaration_keeps_every_value_under_its_name() {
        let now = entry(&[("who", Type::String), ("n", Type::Int)]);
        let fitted = fit(
            Some(&names(&["n", "who"])),
            &[Value::Int(4), Value::str("ann")],
            &now,
            &StructRegistry::default(),
        );
        assert_eq!(fitted.values, Some(vec![Value::str("ann"), Value::Int(4)]));
        assert!(!fitted.changed());
    }

    #[test]
    fn a_new_array_or_any_parameter_starts_empty_and_a_renamed_one_is_dropped() {
        let now = entry(&[
            ("n", Type::Int),
            ("log", Type::Array(Box::new(Type::String))),
            ("note", Type::Any),
        ]);
        let fitted = fit(
            Some(&names(&["n", "who"])),
            &[Value::Int(4), Value::str("ann")],
            &now,
            &StructRegistry::default(),
        );
        assert_eq!(
            fitted.values,
            Some(vec![Value::Int(4), Value::array(Vec::new()), Value::Nil])
        );
        assert_eq!(
            fitted.describe(),
            "keeps n; starts log, note empty; drops who (\"ann\": no longer a parameter)"
        );
    }

    #[test]
    fn an_int_saved_where_a_float_is_declared_now_is_kept() {
        let now = entry(&[("n", Type::Float)]);
        let fitted = fit(
            Some(&names(&["n"])),
            &[Value::Int(4)],
            &now,
            &StructRegistry::default(),
        );
        assert_eq!(fitted.values, Some(vec![Value::Int(4)]));
        assert_eq!(fitted.kept, ["n"]);
    }

    #[test]
    fn a_float_saved_where_an_int_is_declared_now_is_dropped_naming_both() {
        let now = entry(&[
            ("n", Type::Int),
            ("log", Type::Array(Box::new(Type::String))),
        ]);
        let fitted = fit(
            Some(&names(&["n", "log"])),
            &[Value::Float(1.5), Value::array(vec![Value::str("a")])],
            &now,
            &StructRegistry::default(),
        );
        assert_eq!(fitted.values, None);
        assert_eq!(
            fitted.describe(),
            "is dropped: `n: int` kept no value, and only an `any`, `nil` or array parameter \
             can start empty; drops n (1.5: int declared now)"
        );
    }

    #[test]
    fn a_struct_keeps_its_fields_by_name_and_names_what_it_dropped() {
        let mut structs = StructRegistry::default();
        structs.defs.insert(
            "Quest".into(),
            StructDef {
                fields: vec![
                    Param::new("id", Type::String),
                    Param::new("reward", Type::String),
                    Param::new("giver", Type::String),
                ],
                ..StructDef::default()
            },
        );
        let now = entry(&[("quest", Type::Struct("Quest".into()))]);
        let saved = StructValue::new("Quest")
            .with("id", "q1")
            .with("reward", 3)
            .with("level", 2);
        let fitted = fit(
            Some(&names(&["quest"])),
            &[Value::structure(saved)],
            &now,
            &structs,
        );
        assert_eq!(
            fitted.values,
            Some(vec![Value::structure(
                StructValue::new("Quest").with("id", "q1")
            )])
        );
        assert_eq!(
            fitted.describe(),
            "keeps quest; drops quest.reward (3: string declared now), \
             quest.level (2: no longer a field of Quest)"
        );
    }
}
