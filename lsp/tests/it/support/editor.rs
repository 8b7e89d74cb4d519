//! Editor actions over the in-process server, as the protocol tests use
//! them: positions in UTF-16 columns, completion labels, signature help,
//! edits, diagnostics at a version, and an API call of either language.

use gantry_host::ApiFunction;
use lsp_types::notification::DidChangeTextDocument;
use lsp_types::request::{Completion, SignatureHelpRequest};
use lsp_types::{
    CompletionParams, CompletionResponse, DidChangeTextDocumentParams, PartialResultParams,
    Position, Range, SignatureHelpParams, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentPositionParams, Uri, VersionedTextDocumentIdentifier, WorkDoneProgressParams,
};

use super::{Server, project, render_diagnostics};

/// The support table plus a struct-taking key and a three-level key.
pub fn table() -> String {
    super::TABLE.replace(
        "\"Player.Healed\"",
        r#""Ui.Show": { "kind": "event", "origin": "declared", "params": [ { "name": "item", "type": "Item" }, { "name": "count", "type": "int" } ] },
    "Ui.Deep.Leaf": { "kind": "event", "origin": "declared", "params": [] },
    "Player.Healed""#,
    )
}

/// A project with the sample table and one script `name` holding `text`.
pub fn one_script(name: &str, text: &str) -> super::Project {
    let p = project("//- /keep.txt\n");
    std::fs::create_dir_all(p.path(".gantry")).unwrap();
    std::fs::write(p.path(".gantry/signatures.json"), table()).unwrap();
    std::fs::write(p.path(name), text).unwrap();
    p
}

/// The LSP position (UTF-16 column) of byte `offset` in `text`.
pub fn pos(text: &str, offset: usize) -> Position {
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let last = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    Position::new(line, last.encode_utf16().count() as u32)
}

/// The position just after the `n`th (0-based) occurrence of `marker`.
pub fn after(text: &str, marker: &str, n: usize) -> Position {
    let (i, _) = text
        .match_indices(marker)
        .nth(n)
        .unwrap_or_else(|| panic!("{marker:?} #{n} in {text:?}"));
    pos(text, i + marker.len())
}

pub fn at(uri: &Uri, position: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams::new(TextDocumentIdentifier::new(uri.clone()), position)
}

pub fn completion_items(
    server: &Server,
    uri: &Uri,
    position: Position,
) -> Vec<lsp_types::CompletionItem> {
    match server.request::<Completion>(CompletionParams {
        text_document_position: at(uri, position),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    }) {
        Some(CompletionResponse::Array(items)) => items,
        Some(CompletionResponse::List(list)) => list.items,
        None => Vec::new(),
    }
}

pub fn labels(server: &Server, uri: &Uri, position: Position) -> Vec<String> {
    completion_items(server, uri, position)
        .into_iter()
        .map(|i| i.label)
        .collect()
}

/// (signature label, active parameter, the active parameter's text).
pub fn signature(server: &Server, uri: &Uri, position: Position) -> Option<(String, u32, String)> {
    let help = server.request::<SignatureHelpRequest>(SignatureHelpParams {
        context: None,
        text_document_position_params: at(uri, position),
        work_done_progress_params: WorkDoneProgressParams::default(),
    })?;
    let sig = help
        .signatures
        .get(help.active_signature.unwrap_or(0) as usize)?;
    let active = help.active_parameter.or(sig.active_parameter)?;
    let text = match &sig.parameters.as_ref()?.get(active as usize)?.label {
        lsp_types::ParameterLabel::Simple(s) => s.clone(),
        lsp_types::ParameterLabel::LabelOffsets([a, b]) => {
            let units: Vec<u16> = sig.label.encode_utf16().collect();
            String::from_utf16(&units[*a as usize..*b as usize]).unwrap()
        }
    };
    Some((sig.label.clone(), active, text))
}

pub fn active_param(server: &Server, uri: &Uri, position: Position) -> Option<String> {
    signature(server, uri, position).map(|(_, _, text)| text)
}

/// Sends one didChange with several content changes.
pub fn change(server: &Server, uri: &Uri, version: i32, changes: Vec<(Option<Range>, &str)>) {
    server.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
        text_document: VersionedTextDocumentIdentifier::new(uri.clone(), version),
        content_changes: changes
            .into_iter()
            .map(|(range, text)| TextDocumentContentChangeEvent {
                range,
                range_length: None,
                text: text.to_owned(),
            })
            .collect(),
    });
}

/// The diagnostics published for `uri` at `version`.
pub fn diagnostics_at_version(server: &Server, uri: &Uri, version: i32) -> String {
    loop {
        let published = server.diagnostics(uri);
        if published.version == Some(version) {
            return render_diagnostics(&published);
        }
    }
}

pub fn lua_call(function: ApiFunction, gmp: bool, key: &str) -> String {
    let name = if gmp {
        format!("GMP.{function}")
    } else {
        function.to_string()
    };
    if function.key_index() == 0 {
        format!("{name}(\"{key}\")")
    } else {
        format!("{name}(self, \"{key}\")")
    }
}

pub fn rhai_call(function: ApiFunction, gmp: bool, key: &str) -> String {
    let name = if gmp {
        format!("GMP::{function}")
    } else {
        function.to_string()
    };
    if function.key_index() == 0 {
        format!("{name}(\"{key}\");")
    } else {
        format!("{name}(this, \"{key}\");")
    }
}
