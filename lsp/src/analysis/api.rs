//! The API's own functions: their names completed where code is written
//! (`Lis…`, `GMP.`), their documentation on hover, their parameters in
//! signature help while the key is unknown or being written — all from
//! the API table the reference page is generated from.

use gantry_host::{ApiFunction, Language};
use gantry_stubs::reference::{FunctionDoc, function_doc};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, Hover, HoverContents,
    MarkupContent, MarkupKind, ParameterInformation, ParameterLabel, SignatureHelp,
    SignatureInformation, TextEdit,
};

use super::SourceFile;

fn doc_of(function: ApiFunction, language: Language) -> FunctionDoc {
    function_doc(function, language == Language::Rhai)
}

fn markdown(value: String) -> MarkupContent {
    MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether byte `offset` of its line is inside a string opened on it
/// (quotes counted from `code_start`, escapes skipped).
fn in_string(text: &str, code_start: usize, offset: usize) -> bool {
    let mut open: Option<u8> = None;
    let mut bytes = text.as_bytes()[code_start.min(offset)..offset].iter();
    while let Some(&b) = bytes.next() {
        match open {
            Some(_) if b == b'\\' => {
                bytes.next();
            }
            Some(q) if b == q => open = None,
            None if b == b'"' || b == b'\'' || b == b'`' => open = Some(b),
            _ => {}
        }
    }
    open.is_some()
}

/// API function names for the identifier before byte `offset`: every
/// global one for a written prefix (`Lis` → `ListenMessage`, ...), every
/// one after `GMP.` (Lua) or `GMP::` (Rhai). Nothing inside a string or
/// after another table's `.`.
pub fn name_completion(file: &SourceFile<'_>, offset: usize) -> Vec<CompletionItem> {
    let text = file.text;
    let bytes = text.as_bytes();
    if offset > text.len() || !text.is_char_boundary(offset) {
        return Vec::new();
    }
    let line = file.lines.line_range(text, file.lines.line_of(offset));
    let code_start = file
        .parsed
        .map_or(line.start, |p| p.code_start(text, line.clone()));
    if code_start > offset || in_string(text, code_start, offset) {
        return Vec::new();
    }
    let mut start = offset;
    while start > line.start && is_ident(bytes[start - 1]) {
        start -= 1;
    }
    if bytes.get(start).is_some_and(u8::is_ascii_digit) {
        return Vec::new();
    }
    let before = &text[line.start..start];
    let separator = if file.language == Language::Rhai {
        "::"
    } else {
        "."
    };
    let via_gmp = before.ends_with(&format!("GMP{separator}"))
        && !before[..before.len() - 3 - separator.len()]
            .bytes()
            .next_back()
            .is_some_and(|b| is_ident(b) || b == b'.');
    if !via_gmp && (start == offset || before.ends_with(['.', ':'])) {
        return Vec::new();
    }
    let prefix = &text[start..offset];
    let range = file.range(start..offset);
    ApiFunction::ALL
        .into_iter()
        .filter(|f| via_gmp || !f.gmp_only() || file.language == Language::Rhai)
        .filter(|f| {
            f.name()
                .to_ascii_lowercase()
                .starts_with(&prefix.to_ascii_lowercase())
        })
        .map(|function| {
            let doc = doc_of(function, file.language);
            CompletionItem {
                label: function.name().to_owned(),
                kind: Some(CompletionItemKind::FUNCTION),
                detail: Some(doc.signature),
                documentation: Some(Documentation::MarkupContent(markdown(doc.markdown))),
                filter_text: Some(function.name().to_owned()),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
                    range,
                    function.name().to_owned(),
                ))),
                ..Default::default()
            }
        })
        .collect()
}

/// The documentation of the API function whose name is under the cursor.
pub fn hover(file: &SourceFile<'_>, offset: usize) -> Option<Hover> {
    let call = file
        .calls
        .iter()
        .find(|c| c.callee.start <= offset && offset <= c.callee.end)?;
    let doc = doc_of(call.function, file.language);
    let mut text = format!("```\n{}\n```\n{}\n", doc.signature, doc.markdown);
    for (name, meaning) in &doc.params {
        text.push_str(&format!("\n- `{name}`: {meaning}"));
    }
    Some(Hover {
        contents: HoverContents::Markup(markdown(text)),
        range: Some(file.range(call.callee.start..call.callee.end)),
    })
}

/// The function's own signature with argument `arg_index` active: while
/// the key is being written, or names no key the table knows. The
/// message's values are one `...` parameter; past the last parameter none
/// is active.
pub fn signature_help(
    function: ApiFunction,
    language: Language,
    arg_index: usize,
) -> SignatureHelp {
    let doc = doc_of(function, language);
    let mut parameters = Vec::with_capacity(doc.params.len());
    let mut from = 0;
    let mut dots = None;
    for (i, (name, meaning)) in doc.params.iter().enumerate() {
        let shown = if *name == "..." { "..." } else { name };
        let Some(at) = doc.signature[from..].find(shown) else {
            continue;
        };
        let start = utf16_len(&doc.signature[..from + at]);
        from += at + shown.len();
        if *name == "..." {
            dots = Some(i);
        }
        parameters.push(ParameterInformation {
            label: ParameterLabel::LabelOffsets([start, utf16_len(&doc.signature[..from])]),
            documentation: Some(Documentation::String((*meaning).to_owned())),
        });
    }
    let active = match dots {
        // Every value of the message is the one `...` (a reply function
        // after them is told apart only once the key is known).
        Some(dots) if arg_index >= dots => dots,
        _ => arg_index,
    };
    SignatureHelp {
        signatures: vec![SignatureInformation {
            label: doc.signature,
            documentation: Some(Documentation::MarkupContent(markdown(doc.markdown))),
            parameters: Some(parameters),
            active_parameter: None,
        }],
        active_signature: Some(0),
        active_parameter: Some(active as u32),
    }
}

fn utf16_len(text: &str) -> u32 {
    text.chars().map(char::len_utf16).sum::<usize>() as u32
}
