//! One function per LSP method: requests read a [`Snapshot`], notifications
//! change the [`GlobalState`].

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
    CompletionParams, CompletionResponse, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, FileChangeType, GotoDefinitionParams,
    GotoDefinitionResponse, Hover, HoverParams, Location, ReferenceParams, SignatureHelp,
    SignatureHelpParams, TextDocumentPositionParams, TextEdit, WorkspaceEdit,
    WorkspaceSymbolParams, WorkspaceSymbolResponse,
};

use super::state::{Document, GlobalState, Snapshot, to_lsp_diagnostic};
use crate::analysis::navigation::{self, TableFiles};
use crate::analysis::{api, completion, options, signature_help};
use crate::index::index_calls;
use crate::syntax::{language_of, language_of_id, scan};
use crate::table::LoadedTable;
use crate::text::LineIndex;
use crate::uri::uri_to_path;

/// The document, its table and the byte offset of a position.
fn locate<'a>(
    snap: &Snapshot<'a>,
    at: &TextDocumentPositionParams,
) -> Option<(&'a Document, Option<&'a LoadedTable>, usize)> {
    let doc = snap.document(&at.text_document.uri)?;
    let offset = doc.lines.offset(&doc.text, at.position);
    Some((doc, snap.table_of(doc), offset))
}

pub(super) fn files(table: &LoadedTable) -> TableFiles<'_> {
    TableFiles {
        file: &table.file,
        root: &table.root,
        manifest_dir: table.manifest_dir.as_deref(),
    }
}

pub fn completion(
    snap: Snapshot<'_>,
    params: CompletionParams,
) -> anyhow::Result<Option<CompletionResponse>> {
    let Some((doc, Some(table), offset)) = locate(&snap, &params.text_document_position) else {
        return Ok(None);
    };
    let Some(calls) = doc.calls_near(offset) else {
        return Ok(None);
    };
    let source = doc.source_with(&calls);
    let mut items = completion::completion(&source, &table.table, offset);
    if items.is_empty() {
        items = options::option_completion(&source, offset);
    }
    if items.is_empty() {
        items = api::name_completion(&source, offset);
    }
    Ok((!items.is_empty()).then_some(CompletionResponse::Array(items)))
}

pub fn signature_help(
    snap: Snapshot<'_>,
    params: SignatureHelpParams,
) -> anyhow::Result<Option<SignatureHelp>> {
    let Some((doc, Some(table), offset)) = locate(&snap, &params.text_document_position_params)
    else {
        return Ok(None);
    };
    let Some(calls) = doc.calls_near(offset) else {
        return Ok(None);
    };
    Ok(signature_help::signature_help(
        &doc.source_with(&calls),
        &table.table,
        offset,
    ))
}

pub fn hover(snap: Snapshot<'_>, params: HoverParams) -> anyhow::Result<Option<Hover>> {
    let Some((doc, Some(table), offset)) = locate(&snap, &params.text_document_position_params)
    else {
        return Ok(None);
    };
    let Some(calls) = doc.calls_near(offset) else {
        return Ok(None);
    };
    let source = doc.source_with(&calls);
    Ok(navigation::hover(&source, &table.table, offset).or_else(|| api::hover(&source, offset)))
}

pub fn definition(
    snap: Snapshot<'_>,
    params: GotoDefinitionParams,
) -> anyhow::Result<Option<GotoDefinitionResponse>> {
    let Some((doc, Some(table), offset)) = locate(&snap, &params.text_document_position_params)
    else {
        return Ok(None);
    };
    let Some(calls) = doc.calls_near(offset) else {
        return Ok(None);
    };
    let found = navigation::definition(
        &doc.source_with(&calls),
        &table.table,
        files(table),
        snap.workspace(),
        offset,
    );
    Ok((!found.is_empty()).then_some(GotoDefinitionResponse::Array(found)))
}

pub fn references(
    snap: Snapshot<'_>,
    params: ReferenceParams,
) -> anyhow::Result<Option<Vec<Location>>> {
    let Some((doc, Some(table), offset)) = locate(&snap, &params.text_document_position) else {
        return Ok(None);
    };
    Ok(Some(navigation::references(
        &doc.source(),
        &table.table,
        files(table),
        snap.workspace(),
        offset,
        params.context.include_declaration,
    )))
}

pub fn workspace_symbol(
    snap: Snapshot<'_>,
    params: WorkspaceSymbolParams,
) -> anyhow::Result<Option<WorkspaceSymbolResponse>> {
    let mut symbols = Vec::new();
    for table in snap.tables() {
        symbols.extend(navigation::workspace_symbols(
            &table.table,
            files(table),
            &params.query,
        ));
    }
    Ok(Some(WorkspaceSymbolResponse::Nested(symbols)))
}

/// Quick fixes for the diagnostics in the requested range.
pub fn code_action(
    snap: Snapshot<'_>,
    params: CodeActionParams,
) -> anyhow::Result<Option<CodeActionResponse>> {
    let uri = params.text_document.uri;
    let Some(doc) = snap.document(&uri) else {
        return Ok(None);
    };
    let start = doc.lines.offset(&doc.text, params.range.start);
    let end = doc.lines.offset(&doc.text, params.range.end);
    let actions = snap
        .diagnostics(doc)
        .into_iter()
        .filter(|d| d.range.start <= end && start <= d.range.end)
        .filter_map(|d| {
            let fix = d.fix.clone()?;
            let edit = TextEdit::new(doc.lines.range(&doc.text, fix.range.clone()), fix.new_text);
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![to_lsp_diagnostic(doc, &d)]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..Default::default()
                }),
                is_preferred: Some(true),
                ..Default::default()
            }))
        })
        .collect();
    Ok(Some(actions))
}

pub fn did_open(state: &mut GlobalState, params: DidOpenTextDocumentParams) -> anyhow::Result<()> {
    let item = params.text_document;
    let path = uri_to_path(&item.uri);
    let fallback = std::path::PathBuf::from(item.uri.as_str());
    let Some(language) = language_of_id(&item.language_id, path.as_deref().unwrap_or(&fallback))
    else {
        tracing::debug!(uri = item.uri.as_str(), "not a Lua or Rhai script");
        return Ok(());
    };
    state.open(
        item.uri,
        Document::new(path, language, item.version, item.text),
    );
    Ok(())
}

pub fn did_change(
    state: &mut GlobalState,
    params: DidChangeTextDocumentParams,
) -> anyhow::Result<()> {
    let uri = params.text_document.uri;
    let Some(mut doc) = state.docs.remove(&uri) else {
        return Ok(());
    };
    doc.apply_changes(params.text_document.version, params.content_changes);
    state.reindex(&uri, &doc);
    state.docs.insert(uri.clone(), doc);
    state.dirty.insert(uri);
    Ok(())
}

pub fn did_close(
    state: &mut GlobalState,
    params: DidCloseTextDocumentParams,
) -> anyhow::Result<()> {
    let uri = params.text_document.uri;
    if let Some(path) = state.docs.remove(&uri).and_then(|d| d.path) {
        reindex_from_disk(state, path);
    }
    // Publishing for a closed document clears its diagnostics.
    state.dirty.insert(uri);
    Ok(())
}

pub fn did_change_watched_files(
    state: &mut GlobalState,
    params: DidChangeWatchedFilesParams,
) -> anyhow::Result<()> {
    let mut reloaded = Vec::new();
    for change in params.changes {
        let Some(path) = uri_to_path(&change.uri) else {
            continue;
        };
        // A reported change of a loaded table or manifest reloads it even
        // when its (mtime, size) stamp looks the same; a deleted one too (a
        // table then reads as a table error until a table is back).
        let tables = state.tables.reload(&path);
        if !tables.is_empty() {
            tracing::debug!(file = %path.display(), "table reloaded on the client's report");
            reloaded.extend(tables);
            continue;
        }
        if language_of(&path).is_some() && !state.docs.contains_key(&change.uri) {
            if change.typ == FileChangeType::DELETED {
                state.workspace.remove_file(&path);
            } else {
                reindex_from_disk(state, path);
            }
        }
    }
    state.refresh_tables_with(reloaded);
    Ok(())
}

fn reindex_from_disk(state: &mut GlobalState, path: std::path::PathBuf) {
    let text = crate::workspace::read_or_skip(&state.roots, &path);
    let (Some(language), Some(text)) = (language_of(&path), text) else {
        state.workspace.remove_file(&path);
        return;
    };
    let lines = LineIndex::new(&text);
    let calls = scan(language, &text);
    state
        .workspace
        .set_file(path, language, index_calls(&text, &lines, &calls));
}
