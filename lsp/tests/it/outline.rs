//! A script's outline: its keys grouped by what it does with them
//! (document symbols), the uses of the key under the cursor (document
//! highlight), and folds of calls that span lines.

use lsp_types::request::{DocumentHighlightRequest, DocumentSymbolRequest, FoldingRangeRequest};
use lsp_types::{
    DocumentHighlightKind, DocumentHighlightParams, DocumentSymbolParams, DocumentSymbolResponse,
    FoldingRangeParams, PartialResultParams, TextDocumentIdentifier, WorkDoneProgressParams,
};

use crate::support::Server;
use crate::support::editor::{after, at, one_script};

const SCRIPT: &str = r#"NotifyMessage("Player.Hurt", 1.0, self)
ListenMessage("Player.Hurt", self, function(dmg, causer)
  print(dmg)
end)
StoreObjectMessage(self, "Inv.Gold", 5)
ListenHook("Door.Open", nil, function(door, ctx) end)
NotifyMessage("Player.Healed", 3)
UnbindMessage("Player.Hurt", self)
"#;

fn doc(uri: &lsp_types::Uri) -> TextDocumentIdentifier {
    TextDocumentIdentifier::new(uri.clone())
}

#[test]
fn document_symbols_group_the_keys_a_script_sends_listens_to_stores_and_hooks() {
    let p = one_script("main.lua", SCRIPT);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let Some(DocumentSymbolResponse::Nested(groups)) =
        server.request::<DocumentSymbolRequest>(DocumentSymbolParams {
            text_document: doc(&uri),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
    else {
        panic!("nested symbols")
    };
    let rendered: Vec<String> = groups
        .iter()
        .map(|g| {
            let children: Vec<String> = g
                .children
                .iter()
                .flatten()
                .map(|c| {
                    format!(
                        "{} ({}) line {}",
                        c.name,
                        c.detail.as_deref().unwrap(),
                        c.selection_range.start.line + 1
                    )
                })
                .collect();
            format!("{}: {}", g.name, children.join(", "))
        })
        .collect();
    assert_eq!(
        rendered,
        [
            "sends: Player.Hurt (NotifyMessage) line 1, Player.Healed (NotifyMessage) line 7",
            "listens: Player.Hurt (ListenMessage) line 2",
            "stores: Inv.Gold (StoreObjectMessage) line 5",
            "hooks: Door.Open (ListenHook) line 6",
        ]
    );
}

#[test]
fn highlighting_a_key_marks_its_sends_as_writes_and_its_listens_as_reads() {
    let p = one_script("main.lua", SCRIPT);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let found = server
        .request::<DocumentHighlightRequest>(DocumentHighlightParams {
            text_document_position_params: at(&uri, after(SCRIPT, "Player.Hu", 1)),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .expect("highlights");
    let rendered: Vec<(u32, u32, u32, Option<DocumentHighlightKind>)> = found
        .iter()
        .map(|h| {
            (
                h.range.start.line,
                h.range.start.character,
                h.range.end.character,
                h.kind,
            )
        })
        .collect();
    assert_eq!(
        rendered,
        [
            (0, 15, 26, Some(DocumentHighlightKind::WRITE)),
            (1, 15, 26, Some(DocumentHighlightKind::READ)),
            (7, 15, 26, Some(DocumentHighlightKind::TEXT)),
        ]
    );
}

#[test]
fn a_listener_spanning_lines_folds_and_a_one_line_call_does_not() {
    let p = one_script("main.lua", SCRIPT);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let folds = server
        .request::<FoldingRangeRequest>(FoldingRangeParams {
            text_document: doc(&uri),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .expect("folds");
    let lines: Vec<(u32, u32)> = folds.iter().map(|f| (f.start_line, f.end_line)).collect();
    assert_eq!(lines, [(1, 3)]);
}
