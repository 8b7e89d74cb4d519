//! Completion inside the options table of a listen (`{ order = 1, match =
//! "partial" }`, Rhai `#{ order: 1, match: "partial" }`): the option names
//! not yet written, with their types and docs, and the fixed values of an
//! option (`match = "` → `exact`, `partial`) — from the stubs' table of
//! options ([`gantry_stubs::options`]), so the server, the stubs and the
//! book say the same.

use gantry_host::Language;
use gantry_stubs::options::{ListenOption, options_of};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, TextEdit,
};

use super::SourceFile;

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Where the options table holding byte `offset` opens (its `{`), on the
/// line or at the argument's start: the last `{` still open before the
/// cursor, strings skipped.
fn table_open(text: &str, from: usize, offset: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut open = Vec::new();
    let mut i = from;
    while i < offset {
        match bytes[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < offset && bytes[i] != q {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => open.push(i),
            b'}' => {
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    open.pop()
}

/// One `name = value` entry of the table, as far as the cursor.
struct Entry {
    /// Where the entry's text begins (after the `{` or separator).
    start: usize,
    /// Where `=` (Lua) or `:` (Rhai) is, if written.
    assign: Option<usize>,
}

/// The entries of the table body `open + 1 .. offset`: the names written
/// before the cursor's entry, and the cursor's entry. `None` when the cursor
/// is inside a nested table or a string that is not a value.
fn entries(text: &str, open: usize, offset: usize, assign: u8) -> Option<(Vec<String>, Entry)> {
    let bytes = text.as_bytes();
    let mut names = Vec::new();
    let mut entry = Entry {
        start: open + 1,
        assign: None,
    };
    let mut depth = 0usize;
    let mut i = open + 1;
    while i < offset {
        match bytes[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < offset && bytes[i] != q {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => depth = depth.saturating_sub(1),
            b',' | b';' if depth == 0 => {
                let end = entry.assign.unwrap_or(i);
                names.push(name_of(text.get(entry.start..end).unwrap_or("")));
                entry = Entry {
                    start: i + 1,
                    assign: None,
                };
            }
            // Lua's `==` (and `~=`, `<=`, `>=`) compare; they are no
            // entry's `=`.
            b'=' if assign == b'=' && bytes.get(i + 1) == Some(&b'=') => i += 1,
            b if b == assign
                && depth == 0
                && entry.assign.is_none()
                && !(assign == b'='
                    && i > open + 1
                    && matches!(bytes[i - 1], b'~' | b'<' | b'>')) =>
            {
                entry.assign = Some(i);
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then_some((names, entry))
}

/// An entry's name as written (`order`, `"order"`, `["order"]`).
fn name_of(written: &str) -> String {
    written
        .trim()
        .trim_matches(|c| c == '[' || c == ']')
        .trim_matches(|c| c == '"' || c == '\'')
        .to_owned()
}

fn markdown(value: String) -> Option<Documentation> {
    Some(Documentation::MarkupContent(MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    }))
}

/// Option names and values at byte `offset`, inside the options argument
/// of a listen; empty elsewhere.
pub fn option_completion(file: &SourceFile<'_>, offset: usize) -> Vec<CompletionItem> {
    let text = file.text;
    if offset > text.len() || !text.is_char_boundary(offset) {
        return Vec::new();
    }
    let Some(at) = file.call_at(offset) else {
        return Vec::new();
    };
    let Some((index, options)) = options_of(at.function) else {
        return Vec::new();
    };
    if at.arg_index != index {
        return Vec::new();
    }
    let line = file.lines.line_range(text, file.lines.line_of(offset));
    let from = if at.arg.start < offset {
        at.arg.start
    } else {
        line.start
    };
    let Some(open) = table_open(text, from.min(line.start), offset) else {
        return Vec::new();
    };
    let rhai = file.language == Language::Rhai;
    let assign = if rhai { b':' } else { b'=' };
    let Some((written, entry)) = entries(text, open, offset, assign) else {
        return Vec::new();
    };
    match entry.assign {
        None => name_items(file, options, &written, entry.start, offset, rhai),
        Some(at_assign) => {
            let name = name_of(text.get(entry.start..at_assign).unwrap_or(""));
            match options.iter().find(|o| o.name == name) {
                Some(option) => value_items(file, option, at_assign + 1, offset),
                None => Vec::new(),
            }
        }
    }
}

/// The options not written yet, for the name being typed at `offset`.
fn name_items(
    file: &SourceFile<'_>,
    options: &[ListenOption],
    written: &[String],
    start: usize,
    offset: usize,
    rhai: bool,
) -> Vec<CompletionItem> {
    let text = file.text;
    let typed = text.get(start..offset).unwrap_or("");
    let lead = typed.len() - typed.trim_start().len();
    let typed = typed.trim_start();
    // A Rhai map may quote its names (`#{ "match": ... }`).
    let quoted = typed.starts_with('"');
    let prefix = typed.trim_start_matches('"');
    if !prefix.bytes().all(is_ident) {
        return Vec::new();
    }
    let replace_start = start + lead + usize::from(quoted);
    let mut replace_end = offset;
    while text
        .as_bytes()
        .get(replace_end)
        .copied()
        .is_some_and(is_ident)
    {
        replace_end += 1;
    }
    let rest = text.get(replace_end..).unwrap_or("").trim_start();
    let has_assign =
        rest.starts_with(if rhai { ':' } else { '=' }) || (quoted && rest.starts_with('"'));
    let range = file.range(replace_start..replace_end);
    options
        .iter()
        .filter(|o| !written.iter().any(|w| w == o.name))
        .map(|o| {
            let ty = if rhai { o.rhai_type } else { o.lua_type };
            let insert = match (has_assign, quoted, rhai) {
                (true, _, _) | (false, true, _) => o.name.to_owned(),
                (false, false, true) => format!("{}: ", o.name),
                (false, false, false) => format!("{} = ", o.name),
            };
            CompletionItem {
                label: o.name.to_owned(),
                kind: Some(CompletionItemKind::FIELD),
                detail: Some(format!("{}: {ty}", o.name)),
                documentation: markdown(o.doc.to_owned()),
                filter_text: Some(o.name.to_owned()),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(range, insert))),
                ..Default::default()
            }
        })
        .collect()
}

/// The fixed values of `option` (`"exact"`, `"partial"`), or `true` and
/// `false` for a flag, for the value being typed from `start` to `offset`.
fn value_items(
    file: &SourceFile<'_>,
    option: &ListenOption,
    start: usize,
    offset: usize,
) -> Vec<CompletionItem> {
    let text = file.text;
    let typed = text.get(start..offset).unwrap_or("");
    let lead = typed.len() - typed.trim_start().len();
    let typed = typed.trim_start();
    let value_start = start + lead;
    let in_string = typed.starts_with('"') || typed.starts_with('\'');
    let prefix = if in_string { &typed[1..] } else { typed };
    if !prefix.bytes().all(is_ident) {
        return Vec::new();
    }
    let mut end = offset;
    while text.as_bytes().get(end).copied().is_some_and(is_ident) {
        end += 1;
    }
    let (values, quote): (Vec<&str>, bool) = match option.values {
        [] if option.lua_type == "boolean" && !in_string => (vec!["true", "false"], false),
        [] => return Vec::new(),
        values => (values.to_vec(), !in_string),
    };
    let replace = if in_string {
        value_start + 1..end
    } else {
        value_start..end
    };
    let range = file.range(replace);
    values
        .into_iter()
        .map(|value| CompletionItem {
            label: value.to_owned(),
            kind: Some(if quote || in_string {
                CompletionItemKind::ENUM_MEMBER
            } else {
                CompletionItemKind::VALUE
            }),
            detail: Some(format!("{} = {value}", option.name)),
            documentation: markdown(option.doc.to_owned()),
            filter_text: Some(if quote {
                format!("\"{value}\"")
            } else {
                value.to_owned()
            }),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
                range,
                if quote {
                    format!("\"{value}\"")
                } else {
                    value.to_owned()
                },
            ))),
            ..Default::default()
        })
        .collect()
}
