//! The requests that read a whole script or the whole mod: rename,
//! symbols, highlights, folds, inlay hints, code lenses, semantic tokens
//! and pulled diagnostics. Each one rescans changed documents first (the
//! main loop does, for any request not answered from the cursor).

use std::collections::HashMap;
use std::path::PathBuf;

use lsp_types::{
    CodeLens, CodeLensParams, DocumentDiagnosticParams, DocumentDiagnosticReport,
    DocumentDiagnosticReportResult, DocumentHighlight, DocumentHighlightParams,
    DocumentSymbolParams, DocumentSymbolResponse, FoldingRange, FoldingRangeParams,
    FullDocumentDiagnosticReport, InlayHint, InlayHintParams, PrepareRenameResponse,
    RelatedFullDocumentDiagnosticReport, RenameParams, SemanticTokensParams, SemanticTokensResult,
    TextDocumentPositionParams, WorkspaceDiagnosticParams, WorkspaceDiagnosticReport,
    WorkspaceDiagnosticReportResult, WorkspaceDocumentDiagnosticReport, WorkspaceEdit,
    WorkspaceFullDocumentDiagnosticReport,
};

use super::handlers::files;
use super::state::{Document, Snapshot, to_lsp_diagnostic};
use crate::analysis::keys::literal_key_at;
use crate::analysis::rename::{DataFile, Script, plan_rename};
use crate::analysis::{inlay, lens, outline, semantic};
use crate::text::LineIndex;
use crate::uri::path_to_uri;
use crate::workspace::read_script;

/// A request the user asked for and the server declines, with why: the
/// client shows the message (`RequestFailed`), it is no server fault.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Declined(pub String);

pub fn document_symbol(
    snap: Snapshot<'_>,
    params: DocumentSymbolParams,
) -> anyhow::Result<Option<DocumentSymbolResponse>> {
    let Some(doc) = snap.document(&params.text_document.uri) else {
        return Ok(None);
    };
    Ok(Some(DocumentSymbolResponse::Nested(
        outline::document_symbols(&doc.source()),
    )))
}

pub fn document_highlight(
    snap: Snapshot<'_>,
    params: DocumentHighlightParams,
) -> anyhow::Result<Option<Vec<DocumentHighlight>>> {
    let at = params.text_document_position_params;
    let Some(doc) = snap.document(&at.text_document.uri) else {
        return Ok(None);
    };
    let offset = doc.lines.offset(&doc.text, at.position);
    let found = outline::highlights(&doc.source(), offset);
    Ok((!found.is_empty()).then_some(found))
}

pub fn folding_range(
    snap: Snapshot<'_>,
    params: FoldingRangeParams,
) -> anyhow::Result<Option<Vec<FoldingRange>>> {
    let Some(doc) = snap.document(&params.text_document.uri) else {
        return Ok(None);
    };
    Ok(Some(outline::folding_ranges(&doc.source())))
}

pub fn inlay_hint(
    snap: Snapshot<'_>,
    params: InlayHintParams,
) -> anyhow::Result<Option<Vec<InlayHint>>> {
    let Some(doc) = snap.document(&params.text_document.uri) else {
        return Ok(None);
    };
    let Some(table) = snap.table_of(doc) else {
        return Ok(None);
    };
    let start = doc.lines.offset(&doc.text, params.range.start);
    let end = doc.lines.offset(&doc.text, params.range.end);
    Ok(Some(inlay::inlay_hints(
        &doc.source(),
        &table.table,
        start..end,
    )))
}

pub fn code_lens(
    snap: Snapshot<'_>,
    params: CodeLensParams,
) -> anyhow::Result<Option<Vec<CodeLens>>> {
    let uri = params.text_document.uri;
    let Some(doc) = snap.document(&uri) else {
        return Ok(None);
    };
    let Some(table) = snap.table_of(doc) else {
        return Ok(None);
    };
    Ok(Some(lens::code_lenses(
        &doc.source(),
        &uri,
        &table.table,
        files(table),
        snap.workspace(),
    )))
}

pub fn semantic_tokens_full(
    snap: Snapshot<'_>,
    params: SemanticTokensParams,
) -> anyhow::Result<Option<SemanticTokensResult>> {
    let Some(doc) = snap.document(&params.text_document.uri) else {
        return Ok(None);
    };
    let table = snap.table_of(doc).map(|t| &*t.table);
    Ok(Some(SemanticTokensResult::Tokens(
        semantic::semantic_tokens(&doc.source(), table),
    )))
}

fn report(snap: &Snapshot<'_>, doc: &Document) -> FullDocumentDiagnosticReport {
    FullDocumentDiagnosticReport {
        result_id: None,
        items: snap
            .diagnostics(doc)
            .into_iter()
            .map(|d| to_lsp_diagnostic(doc, &d))
            .collect(),
    }
}

pub fn document_diagnostic(
    snap: Snapshot<'_>,
    params: DocumentDiagnosticParams,
) -> anyhow::Result<DocumentDiagnosticReportResult> {
    let items = match snap.document(&params.text_document.uri) {
        Some(doc) => report(&snap, doc),
        None => FullDocumentDiagnosticReport::default(),
    };
    Ok(DocumentDiagnosticReportResult::Report(
        DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: items,
        }),
    ))
}

/// The open documents' diagnostics (a closed script's are what `gantry
/// check` reports; the editor has no place to show them before it opens).
pub fn workspace_diagnostic(
    snap: Snapshot<'_>,
    _params: WorkspaceDiagnosticParams,
) -> anyhow::Result<WorkspaceDiagnosticReportResult> {
    let items = snap
        .documents()
        .map(|(uri, doc)| {
            WorkspaceDocumentDiagnosticReport::Full(WorkspaceFullDocumentDiagnosticReport {
                uri: uri.clone(),
                version: Some(i64::from(doc.version)),
                full_document_diagnostic_report: report(&snap, doc),
            })
        })
        .collect();
    Ok(WorkspaceDiagnosticReportResult::Report(
        WorkspaceDiagnosticReport { items },
    ))
}

/// The key under the cursor and its text's range, or why it cannot be
/// renamed from here.
fn key_under<'a>(
    snap: &Snapshot<'a>,
    at: &TextDocumentPositionParams,
) -> Result<(&'a Document, String, lsp_types::Range), Declined> {
    let doc = snap
        .document(&at.text_document.uri)
        .ok_or_else(|| Declined("this document is not open".to_owned()))?;
    let offset = doc.lines.offset(&doc.text, at.position);
    let source = doc.source();
    let key = literal_key_at(&source, offset)
        .ok_or_else(|| Declined("the cursor is on no literal message key".to_owned()))?;
    let content = key.content.clone().ok_or_else(|| {
        Declined(format!(
            "`{}` is written with escapes here: rename cannot edit it",
            key.key
        ))
    })?;
    Ok((doc, key.key.to_owned(), doc.lines.range(&doc.text, content)))
}

/// Renames `key` to `new` (`None`: only checks that a rename can follow
/// every use of `key`).
fn rename_edit(
    snap: &Snapshot<'_>,
    doc: &Document,
    key: &str,
    new: Option<&str>,
) -> Result<WorkspaceEdit, Declined> {
    // Every script of the workspace: the open ones as the editor has them.
    let mut texts: Vec<(PathBuf, String, Option<&LineIndex>)> = Vec::new();
    let open: HashMap<PathBuf, &Document> = snap
        .documents()
        .filter_map(|(_, d)| Some((d.path.clone()?, d)))
        .collect();
    for path in snap.workspace().paths() {
        match open.get(path) {
            Some(d) => texts.push((path.to_owned(), d.text.clone(), Some(&d.lines))),
            None => match read_script(snap.roots(), path) {
                Ok(text) => texts.push((path.to_owned(), text, None)),
                Err(e) => tracing::warn!(error = %e, "script left out of the rename"),
            },
        }
    }
    let owned_lines: Vec<Option<LineIndex>> = texts
        .iter()
        .map(|(_, text, lines)| lines.is_none().then(|| LineIndex::new(text)))
        .collect();
    let workspace = snap.workspace();
    let scripts: Vec<Script<'_>> = texts
        .iter()
        .zip(&owned_lines)
        .filter_map(|((path, text, lines), owned)| {
            Some(Script {
                path,
                text,
                lines: lines.or(owned.as_ref())?,
                calls: workspace
                    .calls_of(key)
                    .filter(|(p, _, _)| p == path)
                    .map(|(_, _, c)| c.range)
                    .collect(),
            })
        })
        .collect();
    let table = snap.table_of(doc);
    let mut data_texts = Vec::new();
    for path in table
        .into_iter()
        .flat_map(|t| t.sources.table.iter().chain(&t.sources.manifest))
    {
        match read_script(&[], path) {
            Ok(text) => data_texts.push((path.clone(), text)),
            Err(e) => {
                return Err(Declined(format!(
                    "cannot read {} to rename `{key}` there: {e}",
                    path.display()
                )));
            }
        }
    }
    let data: Vec<DataFile<'_>> = data_texts
        .iter()
        .map(|(path, text)| DataFile { path, text })
        .collect();
    let taken = new.is_some_and(|new| {
        table.is_some_and(|t| t.table.get(new).is_some())
            || workspace.calls_of(new).next().is_some()
    });
    let edits =
        plan_rename(key, new, &scripts, &data, taken).map_err(|e| Declined(e.to_string()))?;
    let changes = edits
        .into_iter()
        .filter_map(|(path, edits)| Some((path_to_uri(&path)?, edits)))
        .collect();
    Ok(WorkspaceEdit {
        changes: Some(changes),
        ..Default::default()
    })
}

pub fn prepare_rename(
    snap: Snapshot<'_>,
    params: TextDocumentPositionParams,
) -> anyhow::Result<Option<PrepareRenameResponse>> {
    let (doc, key, range) = key_under(&snap, &params)?;
    // The rename's own plan: refuses where the rename would.
    rename_edit(&snap, doc, &key, None)?;
    Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
        range,
        placeholder: key,
    }))
}

pub fn rename(snap: Snapshot<'_>, params: RenameParams) -> anyhow::Result<Option<WorkspaceEdit>> {
    let (doc, key, _) = key_under(&snap, &params.text_document_position)?;
    Ok(Some(rename_edit(&snap, doc, &key, Some(&params.new_name))?))
}
