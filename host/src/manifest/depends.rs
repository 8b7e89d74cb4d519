//! `[mod] depends = ["core", "ui >= 0.2"]` and `optional = [...]`: the
//! mods a mod needs, and those it uses when they are there.
//!
//! Each entry is a mod name, then optionally a version requirement as
//! Cargo writes one (`>= 0.2`, `^1.4`, `=2.0.0`, `>=1, <2`); the loader
//! reads the requirement with the `semver` crate and orders the mods. The
//! reader here checks the shape only: a list of strings, each starting
//! with a mod name, at most [`MAX_DEPENDS`] of them: a hostile list of
//! 100,000 entries is one finding, not 100,000.

use std::collections::BTreeMap;
use std::ops::Range;

use toml::Spanned;
use toml::de::DeValue;

use super::place::Lines;
use super::read::found;
use super::{MAX_NAME_BYTES, Problem};

/// The most entries of one `depends` or `optional` list.
pub const MAX_DEPENDS: usize = 256;

/// One entry of `depends` or `optional`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The mod needed (`ui`).
    pub name: String,
    /// The version requirement as written (`>= 0.2`); `None`: any version.
    pub requirement: Option<String>,
    /// Where the entry is written, 1-based.
    pub line: u32,
    pub column: u32,
}

/// A finding: where, the field, what is wrong.
pub(super) type Finding = (Range<usize>, String, Problem, Option<String>);

/// Reads the list `value` of the field `field` (`mod.depends`).
pub(super) fn read(
    value: &Spanned<DeValue<'_>>,
    field: &str,
    lines: &Lines<'_>,
    findings: &mut Vec<Finding>,
) -> Vec<Dependency> {
    let DeValue::Array(items) = value.get_ref() else {
        findings.push((
            value.span(),
            field.to_owned(),
            Problem::WrongType {
                expected: "an array of strings (`[\"core\", \"ui >= 0.2\"]`)",
                found: found(value.get_ref()),
            },
            None,
        ));
        return Vec::new();
    };
    if items.len() > MAX_DEPENDS {
        findings.push((
            value.span(),
            field.to_owned(),
            Problem::TooMany {
                what: "dependencies",
                limit: MAX_DEPENDS,
            },
            None,
        ));
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut first: BTreeMap<String, u32> = BTreeMap::new();
    for item in items {
        let DeValue::String(text) = item.get_ref() else {
            findings.push((
                item.span(),
                field.to_owned(),
                Problem::WrongType {
                    expected: "a string (`core` or `ui >= 0.2`)",
                    found: found(item.get_ref()),
                },
                None,
            ));
            continue;
        };
        let text = text.trim();
        let end = text
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'))
            .unwrap_or(text.len());
        let (name, requirement) = text.split_at(end);
        let requirement = requirement.trim();
        if name.is_empty() || name.len() > MAX_NAME_BYTES {
            findings.push((
                item.span(),
                field.to_owned(),
                Problem::BadModName {
                    name: text.to_owned(),
                },
                None,
            ));
            continue;
        }
        let (line, column) = lines.at(item.span().start);
        if let Some(&first_line) = first.get(name) {
            findings.push((
                item.span(),
                field.to_owned(),
                Problem::Duplicate {
                    name: name.to_owned(),
                    first_line,
                },
                None,
            ));
            continue;
        }
        first.insert(name.to_owned(), line);
        out.push(Dependency {
            name: name.to_owned(),
            requirement: (!requirement.is_empty()).then(|| requirement.to_owned()),
            line,
            column,
        });
    }
    out
}
