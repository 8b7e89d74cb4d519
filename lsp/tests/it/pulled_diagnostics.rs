//! Diagnostics a client pulls (`textDocument/diagnostic`,
//! `workspace/diagnostic`) are the ones the server pushes.

use lsp_types::request::{DocumentDiagnosticRequest, WorkspaceDiagnosticRequest};
use lsp_types::{
    DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportResult,
    PartialResultParams, TextDocumentIdentifier, WorkDoneProgressParams, WorkspaceDiagnosticParams,
    WorkspaceDiagnosticReportResult, WorkspaceDocumentDiagnosticReport,
};

use crate::support::Server;
use crate::support::editor::one_script;

#[test]
fn a_pulled_report_holds_what_is_pushed_for_the_same_document() {
    let text = "ListenMessage(\"Player.Hurtt\", self, function(d) end)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let pushed = server.diagnostics(&uri).diagnostics;
    assert!(!pushed.is_empty());
    let DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(report)) =
        server.request::<DocumentDiagnosticRequest>(DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
    else {
        panic!("a full report")
    };
    assert_eq!(report.full_document_diagnostic_report.items, pushed);
    let WorkspaceDiagnosticReportResult::Report(workspace) = server
        .request::<WorkspaceDiagnosticRequest>(WorkspaceDiagnosticParams {
            identifier: None,
            previous_result_ids: Vec::new(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
    else {
        panic!("a workspace report")
    };
    let [WorkspaceDocumentDiagnosticReport::Full(only)] = &workspace.items[..] else {
        panic!("one open document: {:?}", workspace.items)
    };
    assert_eq!(only.uri, uri);
    assert_eq!(only.full_document_diagnostic_report.items, pushed);
}
