//! `persist = true` on a key: its stored messages outlive the run.
//!
//! The loader saves what a persisted key stores (per source that outlives
//! a run: global, and named sources) in the game's save folder at exit
//! and replays it before the next run's first tick. Only a key that
//! stores can persist: an event, a request or a hook keeps nothing, so
//! `persist` on one is a mistake said at its line.

use std::ops::Range;

use toml::Spanned;
use toml::de::DeValue;

use super::{ManifestKind, Problem};

/// Reads `persist` (`field` is `keys."Quest.Log".persist`) for a key of
/// `kind`; a finding when it is not a boolean or the kind keeps nothing.
pub(super) fn read(
    value: &Spanned<DeValue<'_>>,
    field: &str,
    kind: Option<ManifestKind>,
    findings: &mut Vec<(Range<usize>, String, Problem, Option<String>)>,
) -> bool {
    let DeValue::Boolean(persist) = *value.get_ref() else {
        findings.push((
            value.span(),
            field.to_owned(),
            Problem::WrongType {
                expected: "a boolean",
                found: super::read::found(value.get_ref()),
            },
            None,
        ));
        return false;
    };
    if persist
        && let Some(kind) = kind
        && !matches!(kind, ManifestKind::Store | ManifestKind::Once)
    {
        findings.push((
            value.span(),
            field.to_owned(),
            Problem::WrongType {
                expected: "`persist` only on a key that stores (kind `store` or `once`)",
                found: kind.as_str(),
            },
            None,
        ));
        return false;
    }
    persist
}
