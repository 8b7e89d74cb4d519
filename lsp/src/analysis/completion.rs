//! Completion: keys inside the key argument, by hierarchy, and a listener
//! snippet at the function argument of a listen.

use std::collections::BTreeMap;

use gantry_host::{ApiFunction, KeyEntry, Language, Origin, Role, SignatureTable};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, InsertTextFormat,
    MarkupContent, MarkupKind, TextEdit,
};

use super::SourceFile;
use super::diagnostics::kind_fits;

/// Completion items at byte `offset`; empty when the cursor is in no key
/// argument or listener position.
pub fn completion(
    file: &SourceFile<'_>,
    table: &SignatureTable,
    offset: usize,
) -> Vec<CompletionItem> {
    let Some(at) = file.call_at(offset) else {
        return Vec::new();
    };
    if at.arg_index == at.function.key_index() {
        return match at.string {
            Some(string) => {
                let prefix = file.text.get(string.content_start..offset).unwrap_or("");
                let parent_len = prefix.rfind('.').map_or(0, |dot| dot + 1);
                let segment_start = string.content_start + parent_len;
                let rest = file.text.get(offset..string.content_end).unwrap_or("");
                let segment_end = offset
                    + rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                key_items(
                    file,
                    table,
                    at.function,
                    &prefix[..parent_len],
                    segment_start..segment_end,
                )
            }
            None if file
                .text
                .get(at.arg.clone())
                .is_some_and(|t| t.trim().is_empty()) =>
            {
                quoted_key_items(file, table, at.function, at.arg.clone())
            }
            None => Vec::new(),
        };
    }
    if Some(at.arg_index) == at.function.listener_index() && !at.arg_is_function {
        let written = file.text.get(at.arg.clone()).unwrap_or("").trim();
        let plausible = written.is_empty()
            || (written.chars().all(|c| c.is_ascii_alphabetic())
                && "function".starts_with(written))
            || written == "|";
        if let (true, Some(entry)) = (plausible, at.key.as_deref().and_then(|k| table.get(k))) {
            return vec![listener_snippet(file, at.function, entry, at.arg.clone())];
        }
    }
    Vec::new()
}

/// A full key and its table entry.
type KeyAt<'t> = (&'t str, &'t KeyEntry);

/// The children of `parent` (`""` or `"Inv."`): one item per next segment,
/// counting only the keys whose kind fits `function` (no store key inside
/// `RunHook`, no event key inside `GMP.StoredArray`).
fn key_items(
    file: &SourceFile<'_>,
    table: &SignatureTable,
    function: ApiFunction,
    parent: &str,
    replace: std::ops::Range<usize>,
) -> Vec<CompletionItem> {
    let range = file.range(replace);
    // segment → (the key that ends there, if any; how many keys lie below)
    let mut segments: BTreeMap<&str, (Option<KeyAt<'_>>, usize)> = BTreeMap::new();
    for (key, entry) in table.keys.range(parent.to_owned()..) {
        let Some(rest) = key.strip_prefix(parent) else {
            break;
        };
        if rest.is_empty() || !kind_fits(function, entry) {
            continue;
        }
        let segment = rest.split('.').next().unwrap_or(rest);
        let slot = segments.entry(segment).or_default();
        if segment.len() == rest.len() {
            slot.0 = Some((key.as_str(), entry));
        } else {
            slot.1 += 1;
        }
    }
    segments
        .into_iter()
        .map(|(segment, (own, children))| {
            let mut item = match own {
                Some((key, entry)) => key_item(segment, key, entry),
                None => CompletionItem {
                    label: segment.to_owned(),
                    kind: Some(CompletionItemKind::MODULE),
                    detail: Some(format!("{parent}{segment}.* ({children} key(s))")),
                    ..Default::default()
                },
            };
            item.filter_text = Some(segment.to_owned());
            item.text_edit = Some(CompletionTextEdit::Edit(TextEdit::new(
                range,
                segment.to_owned(),
            )));
            item
        })
        .collect()
}

/// At an empty key position: every key whose kind fits `function`, with
/// its quotes.
fn quoted_key_items(
    file: &SourceFile<'_>,
    table: &SignatureTable,
    function: ApiFunction,
    replace: std::ops::Range<usize>,
) -> Vec<CompletionItem> {
    let range = file.range(replace);
    table
        .entries()
        .filter(|(_, entry)| kind_fits(function, entry))
        .map(|(key, entry)| {
            let mut item = key_item(key, key, entry);
            item.filter_text = Some(format!("\"{key}\""));
            item.text_edit = Some(CompletionTextEdit::Edit(TextEdit::new(
                range,
                format!("\"{key}\""),
            )));
            item
        })
        .collect()
}

fn key_item(label: &str, key: &str, entry: &KeyEntry) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(CompletionItemKind::EVENT),
        detail: Some(format!("{key}{}", entry.signature_label())),
        documentation: Some(Documentation::MarkupContent(MarkupContent {
            kind: MarkupKind::Markdown,
            value: key_summary(entry),
        })),
        ..Default::default()
    }
}

/// Kind, origin, doc and site counts: shared by completion and hover.
pub fn key_summary(entry: &KeyEntry) -> String {
    let origin = match entry.origin {
        Origin::Declared => "declared",
        Origin::Observed => "observed",
    };
    let mut text = format!("{} · {origin}", entry.kind);
    if !entry.doc.is_empty() {
        text.push_str("\n\n");
        text.push_str(&entry.doc);
    }
    let senders = entry.sites_with_role(Role::Send).count();
    let listeners = entry.sites_with_role(Role::Listen).count();
    text.push_str(&format!(
        "\n\n{senders} sender(s), {listeners} listener(s) recorded"
    ));
    text
}

/// The parameter names a listener of `function` on `entry` receives.
pub fn listener_param_names(function: ApiFunction, entry: &KeyEntry) -> Vec<String> {
    if function == ApiFunction::ListenRowMessage {
        let row = entry
            .params
            .first()
            .and_then(|p| p.ty.struct_array_element())
            .map_or("item".to_owned(), |s| s.to_ascii_lowercase());
        return vec!["index".to_owned(), row];
    }
    entry.params.iter().map(|p| p.name.clone()).collect()
}

fn listener_snippet(
    file: &SourceFile<'_>,
    function: ApiFunction,
    entry: &KeyEntry,
    replace: std::ops::Range<usize>,
) -> CompletionItem {
    let names = listener_param_names(function, entry);
    let placeholders: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("${{{}:{n}}}", i + 1))
        .collect();
    let (label, snippet) = match file.language {
        Language::Rhai => (
            format!("|{}| {{}}", names.join(", ")),
            format!("|{}| {{ $0 }}", placeholders.join(", ")),
        ),
        _ => (
            format!("function({}) end", names.join(", ")),
            format!("function({}) $0 end", placeholders.join(", ")),
        ),
    };
    CompletionItem {
        label: label.clone(),
        kind: Some(CompletionItemKind::SNIPPET),
        detail: Some(format!("listener {}", entry.signature_label())),
        filter_text: Some(label),
        insert_text_format: Some(InsertTextFormat::SNIPPET),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
            file.range(replace),
            snippet,
        ))),
        ..Default::default()
    }
}
