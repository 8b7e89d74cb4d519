//! Renaming a key: every literal use of it in the mod's Lua and Rhai
//! scripts, its declaration in `mod.toml` and its record in the signature
//! table, in one edit — or a refusal that names every place a rename could
//! not follow (the key built from pieces, held in a variable first).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use gantry_host::key::validate_key;
use lsp_types::{Position, TextEdit};

use crate::text::LineIndex;

/// One script of the mod, as the rename reads it.
pub struct Script<'a> {
    pub path: &'a Path,
    pub text: &'a str,
    pub lines: &'a LineIndex,
    /// Where each call of the key writes it (the literal's range), as the
    /// workspace index found them.
    pub calls: Vec<lsp_types::Range>,
}

/// A file that is not a script but names the key: `mod.toml` or the table.
pub struct DataFile<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

/// Why a key cannot be renamed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenameError {
    #[error("`{new}` is not a key: {reason}")]
    Invalid { new: String, reason: String },
    #[error("`{new}` is already a key: renaming `{key}` onto it would merge the two")]
    Taken { key: String, new: String },
    #[error(
        "`{key}` is also written where a rename cannot follow it (not as the key of a call): {}; change those by hand, or make them literal keys of calls",
        places.join(", ")
    )]
    NotLiteral { key: String, places: Vec<String> },
}

/// The edits, file by file, in document order.
pub type Edits = BTreeMap<PathBuf, Vec<TextEdit>>;

/// The literal key occurrences of `key` in `text`: (the literal's range,
/// the key's own range). A literal is the key between the same quotes
/// (`"…"`, `'…'`) or in `[[…]]`.
fn quoted(text: &str, key: &str) -> Vec<(Range<usize>, Range<usize>)> {
    let bytes = text.as_bytes();
    text.match_indices(key)
        .filter_map(|(at, _)| {
            let end = at + key.len();
            let open = *bytes.get(at.checked_sub(1)?)?;
            let close = *bytes.get(end)?;
            let width = match (open, close) {
                (b'"', b'"') | (b'\'', b'\'') => 1,
                (b'[', b']')
                    if at >= 2
                        && bytes.get(at - 2) == Some(&b'[')
                        && bytes.get(end + 1) == Some(&b']') =>
                {
                    2
                }
                _ => return None,
            };
            Some((at - width..end + width, at..end))
        })
        .collect()
}

/// Whether byte `at` is after a line comment's start on its line (`--`,
/// `//`): a key in a comment is no use of it.
fn in_line_comment(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..at];
    before.contains("--") || before.contains("//")
}

/// The dotted prefixes of `key` a script might build it from by joining
/// strings: `"Quest."` for `Quest.Start`.
fn prefixes(key: &str) -> Vec<&str> {
    key.match_indices('.').map(|(i, _)| &key[..=i]).collect()
}

/// Plans renaming `key` to `new` across `scripts` and `data` (`mod.toml`,
/// the table); `new: None` only checks that a rename could follow every
/// use (what `prepareRename` asks). `taken`: whether `new` is already a
/// key of the table or the scripts.
pub fn plan_rename(
    key: &str,
    new: Option<&str>,
    scripts: &[Script<'_>],
    data: &[DataFile<'_>],
    taken: bool,
) -> Result<Edits, RenameError> {
    let mut edits = Edits::new();
    if let Some(new) = new {
        if let Err(e) = validate_key(new) {
            return Err(RenameError::Invalid {
                new: new.to_owned(),
                reason: e.to_string(),
            });
        }
        if new == key {
            return Ok(edits);
        }
        if taken {
            return Err(RenameError::Taken {
                key: key.to_owned(),
                new: new.to_owned(),
            });
        }
    }
    let new = new.unwrap_or(key);
    let mut refused = Vec::new();
    for script in scripts {
        let place = |offset: usize| {
            let p = script.lines.position(script.text, offset);
            format!(
                "{}:{}:{}",
                script.path.display(),
                p.line + 1,
                p.character + 1
            )
        };
        let calls: Vec<Position> = script.calls.iter().map(|r| r.start).collect();
        let mut matched: Vec<Position> = Vec::new();
        for (literal, content) in quoted(script.text, key) {
            if in_line_comment(script.text, literal.start) {
                continue;
            }
            let start = script.lines.position(script.text, literal.start);
            if calls.contains(&start) {
                matched.push(start);
                edits
                    .entry(script.path.to_owned())
                    .or_default()
                    .push(TextEdit::new(
                        script.lines.range(script.text, content),
                        new.to_owned(),
                    ));
            } else {
                refused.push(place(literal.start));
            }
        }
        // `"Quest." .. kind` (Lua) or `"Quest." + kind` (Rhai) may build
        // the key at run time.
        for prefix in prefixes(key) {
            for (literal, _) in quoted(script.text, prefix) {
                let after = script.text[literal.end..].trim_start_matches([' ', '\t']);
                let joined = after.starts_with("..") || after.starts_with('+');
                if joined && !in_line_comment(script.text, literal.start) {
                    refused.push(place(literal.start));
                }
            }
        }
        // A call of the key written with escapes has no verbatim literal
        // to edit.
        for start in calls.iter().filter(|c| !matched.contains(c)) {
            refused.push(place(script.lines.offset(script.text, *start)));
        }
    }
    if !refused.is_empty() {
        refused.sort();
        refused.dedup();
        return Err(RenameError::NotLiteral {
            key: key.to_owned(),
            places: refused,
        });
    }
    for file in data {
        let lines = LineIndex::new(file.text);
        for (_, content) in quoted(file.text, key) {
            // Only where the key is a TOML or JSON key: `[keys."K"]`,
            // `"K" = …`, `"K": …` — never a doc string that mentions it.
            let after = file.text[content.end + 1..].trim_start_matches([' ', '\t']);
            if after.starts_with([']', '=', ':', '.']) {
                edits
                    .entry(file.path.to_owned())
                    .or_default()
                    .push(TextEdit::new(
                        lines.range(file.text, content),
                        new.to_owned(),
                    ));
            }
        }
    }
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_found_between_each_kind_of_quote_and_nowhere_else() {
        let text = r#"a("K.A") b('K.A') c([[K.A]]) d("K.AB") e(K.A)"#;
        let found: Vec<&str> = quoted(text, "K.A")
            .into_iter()
            .map(|(l, _)| &text[l])
            .collect();
        assert_eq!(found, ["\"K.A\"", "'K.A'", "[[K.A]]"]);
    }
}
