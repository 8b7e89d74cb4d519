//! The language server as an editor sees it, driven in-process.

mod support;

use expect_test::{Expect, expect};
use lsp_types::request::{
    CodeActionRequest, Completion, GotoDefinition, HoverRequest, References, SignatureHelpRequest,
    WorkspaceSymbolRequest,
};
use lsp_types::{
    CodeActionContext, CodeActionOrCommand, CodeActionParams, CompletionParams, CompletionResponse,
    CompletionTextEdit, GotoDefinitionParams, GotoDefinitionResponse, HoverContents, HoverParams,
    OneOf, PartialResultParams, Position, Range, ReferenceContext, ReferenceParams,
    SignatureHelpParams, TextDocumentIdentifier, WorkDoneProgressParams, WorkspaceSymbolParams,
    WorkspaceSymbolResponse,
};
use support::{Project, Server, project, render_diagnostics};

fn completions(fixture: &str) -> String {
    let p = project(fixture);
    let server = Server::start(p.dir.path());
    server.open(&p.cursor.as_ref().unwrap().0);
    render_completion(&p, &server)
}

fn render_completion(p: &Project, server: &Server) -> String {
    let response = server.request::<Completion>(CompletionParams {
        text_document_position: p.at_cursor(),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    });
    let items = match response {
        Some(CompletionResponse::Array(items)) => items,
        Some(CompletionResponse::List(list)) => list.items,
        None => Vec::new(),
    };
    items
        .iter()
        .map(|item| {
            let edit = match &item.text_edit {
                Some(CompletionTextEdit::Edit(e)) => format!(
                    " [{}:{}-{}:{} {:?}]",
                    e.range.start.line,
                    e.range.start.character,
                    e.range.end.line,
                    e.range.end.character,
                    e.new_text
                ),
                _ => String::new(),
            };
            format!(
                "{} ({}){edit}\n",
                item.label,
                item.detail.clone().unwrap_or_default()
            )
        })
        .collect()
}

fn check_completion(fixture: &str, expect: Expect) {
    expect.assert_eq(&completions(fixture));
}

fn diagnostics_of(fixture: &str, file: &str) -> String {
    let p = project(fixture);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path(file));
    server.sync();
    render_diagnostics(&server.diagnostics(&uri)).replace(&*p.dir.path().to_string_lossy(), "ROOT")
}

#[test]
fn key_completion_offers_the_children_after_a_dot() {
    check_completion(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyObjectMessage(self, "Inv.$0")
"#,
        expect![[r#"
            Gold (Inv.Gold(amount: int)) [0:31-0:31 "Gold"]
            Items (Inv.Items(items: array<Item>)) [0:31-0:31 "Items"]
        "#]],
    );
}

#[test]
fn key_completion_at_the_top_offers_namespaces() {
    check_completion(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
ListenMessage("Pl$0", self, function() end)
"#,
        expect![[r#"
            Inv (Inv.* (2 key(s))) [0:15-0:17 "Inv"]
            Player (Player.* (2 key(s))) [0:15-0:17 "Player"]
        "#]],
    );
}

#[test]
fn key_completion_works_in_an_unterminated_string() {
    check_completion(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
local x = 1
GMP.NotifyObjectMessage(self, "Player.H$0
local y = 2
"#,
        expect![[r#"
            Healed (Player.Healed(amount: int)) [1:38-1:39 "Healed"]
            Hurt (Player.Hurt(dmg: float, causer: object)) [1:38-1:39 "Hurt"]
        "#]],
    );
}

#[test]
fn no_completion_inside_a_long_comment_opened_lines_above() {
    check_completion(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
--[[ an old version, kept for reference:
NotifyObjectMessage(self, "Inv.$0")
]]
NotifyObjectMessage(self, "Inv.Gold", 1)
"#,
        expect![[""]],
    );
    // Right after the comment, the same line is code again.
    check_completion(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
--[[ a note ]] NotifyObjectMessage(self, "Inv.$0")
"#,
        expect![[r#"
            Gold (Inv.Gold(amount: int)) [0:46-0:46 "Gold"]
            Items (Inv.Items(items: array<Item>)) [0:46-0:46 "Items"]
        "#]],
    );
}

#[test]
fn key_completion_does_not_filter_by_argument_count() {
    // Three message arguments are written; keys with fewer parameters are still offered.
    check_completion(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.rhai
NotifyMessage("Player.$0", 1.0, 2, 3);
"#,
        expect![[r#"
            Healed (Player.Healed(amount: int)) [0:22-0:22 "Healed"]
            Hurt (Player.Hurt(dmg: float, causer: object)) [0:22-0:22 "Hurt"]
        "#]],
    );
}

#[test]
fn listener_completion_is_a_snippet_with_the_recorded_names() {
    check_completion(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
ListenObjectMessage(self, "Player.Hurt", self, $0)
"#,
        expect![[r#"
            function(dmg, causer) end (listener (dmg: float, causer: object)) [0:47-0:47 "function(${1:dmg}, ${2:causer}) $0 end"]
        "#]],
    );
    check_completion(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.rhai
ListenMessage("Player.Hurt", this, $0);
"#,
        expect![[r#"
            |dmg, causer| {} (listener (dmg: float, causer: object)) [0:35-0:35 "|${1:dmg}, ${2:causer}| { $0 }"]
        "#]],
    );
}

#[test]
fn signature_help_marks_the_active_parameter() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyObjectMessage(self, "Player.Hurt", 2.5, $0)
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.cursor.as_ref().unwrap().0);
    let help = server
        .request::<SignatureHelpRequest>(SignatureHelpParams {
            context: None,
            text_document_position_params: p.at_cursor(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .expect("signature help");
    let signature = &help.signatures[0];
    let active = help.active_parameter.unwrap() as usize;
    let Some(lsp_types::ParameterLabel::LabelOffsets([start, end])) = signature
        .parameters
        .as_ref()
        .map(|p| p[active].label.clone())
    else {
        panic!("offset labels")
    };
    expect![[
        r#"NotifyObjectMessage(obj, "Player.Hurt", dmg: float, causer: object) -> causer: object"#
    ]]
    .assert_eq(&format!(
        "{} -> {}",
        signature.label,
        &signature.label[start as usize..end as usize]
    ));
}

#[test]
fn unknown_key_suggests_the_nearest_key_with_a_quick_fix() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player.Hrut", 1.0)
"#,
    );
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    expect![[r#"
        0:14-0:27 warning unknown-key: unknown key `Player.Hrut`: it is not in the signature table; did you mean `Player.Hurt`?
    "#]]
    .assert_eq(&render_diagnostics(&server.diagnostics(&uri)));
    let actions = server
        .request::<CodeActionRequest>(CodeActionParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
            range: Range::new(Position::new(0, 16), Position::new(0, 16)),
            context: CodeActionContext::default(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .unwrap();
    let CodeActionOrCommand::CodeAction(action) = &actions[0] else {
        panic!("a code action")
    };
    let edit = &action.edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri][0];
    assert_eq!(action.title, "Change to `Player.Hurt`");
    assert_eq!(
        edit.range,
        Range::new(Position::new(0, 15), Position::new(0, 26))
    );
    assert_eq!(edit.new_text, "Player.Hurt");
}

#[test]
fn malformed_and_non_literal_keys() {
    expect![[r#"
        0:14-0:28 error malformed-key: message key `Player..Hurt` has an empty segment at byte 7
        1:14-1:17 hint non-literal-key: the key of this NotifyMessage call is not a string literal: it cannot be baked and is resolved on every call
    "#]]
    .assert_eq(&diagnostics_of(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player..Hurt")
NotifyMessage(key)
"#,
        "main.lua",
    ));
}

#[test]
fn argument_count_and_literal_types_against_the_table() {
    expect![[r#"
        0:29-0:35 error arg-type: argument 1 of `Player.Hurt` (dmg) expects float, got string
        1:38-1:39 error too-many-args: `Player.Hurt` carries 2 parameter(s) (dmg: float, causer: object) but this call passes 3
        2:31-2:34 warning arg-type: argument 1 of `Player.Healed` (amount) expects int, got float
    "#]]
    .assert_eq(&diagnostics_of(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player.Hurt", "ouch")
NotifyMessage("Player.Hurt", 1, self, 3)
NotifyMessage("Player.Healed", 2.5)
NotifyMessage("Player.Hurt", 2)
"#,
        "main.lua",
    ));
}

#[test]
fn fewer_arguments_than_a_recorded_listener_needs() {
    expect![[r#"
        0:13-0:33 warning too-few-args: the listener of `Player.Hurt` at ROOT/ui.lua:1 takes 2 parameter(s) but this call passes 1
    "#]]
    .assert_eq(&diagnostics_of(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /ui.lua
ListenMessage("Player.Hurt", self, function(dmg, causer) end)
//- /main.rhai
NotifyMessage("Player.Hurt", 2.0);
"#,
        "main.rhai",
    ));
}

#[test]
fn listener_declaring_more_parameters_than_the_message_carries() {
    expect![[r#"
        0:37-0:53 warning listener-params: this listener declares 2 parameter(s) but `Player.Healed` carries 1 (amount: int): a listener may only drop trailing parameters
        1:35-1:47 error listener-params: this listener declares 3 parameter(s) but `Player.Hurt` carries 2 (dmg: float, causer: object): a listener may only drop trailing parameters
    "#]]
    .assert_eq(&diagnostics_of(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.rhai
ListenMessage("Player.Healed", this, |amount, who| {});
ListenMessage("Player.Hurt", this, |a, b, c| {});
ListenMessage("Player.Hurt", this, |dmg| {});
"#,
        "main.rhai",
    ));
}

#[test]
fn row_listen_on_a_key_that_is_not_a_collection() {
    expect![[r#"
        0:23-0:33 error row-listen-not-collection: `Inv.Gold` is a store message, not a collection: ListenRowMessage needs a stored array of structs
    "#]]
    .assert_eq(&diagnostics_of(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
ListenRowMessage(self, "Inv.Gold", self, 1, function(i, row) end)
ListenRowMessage(self, "Inv.Items", self, 1, function(i, row) end)
"#,
        "main.lua",
    ));
}

#[test]
fn hover_shows_signature_kind_doc_declaration_and_counts() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player.H$0urt", 1.0)
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.cursor.as_ref().unwrap().0);
    let hover = server
        .request::<HoverRequest>(HoverParams {
            text_document_position_params: p.at_cursor(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .expect("hover");
    let HoverContents::Markup(markup) = hover.contents else {
        panic!("markdown")
    };
    expect![[r#"
        ```
        Player.Hurt(dmg: float, causer: object)
        ```
        event · declared

        The player took damage.

        1 sender(s), 1 listener(s) recorded

        declared at src/game.rs:12:5"#]]
    .assert_eq(&markup.value);
}

#[test]
fn definition_and_references_reach_rust_lua_and_rhai_sites() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /src/game.rs
// game
//- /mods/ui.lua
ListenMessage("Player.Hurt", self, function(dmg) end)
//- /mods/fx.rhai
NotifyMessage("Player.Hurt", 1.0, this);
//- /main.lua
NotifyMessage("Player.Hu$0rt", 1.0)
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.cursor.as_ref().unwrap().0);
    server.sync();
    let root = p.dir.path().to_string_lossy().into_owned();
    let short = |uri: &lsp_types::Uri| {
        gantry_lsp::uri::uri_to_path(uri)
            .unwrap()
            .to_string_lossy()
            .replace(&root, "")
    };
    let Some(GotoDefinitionResponse::Scalar(def)) =
        server.request::<GotoDefinition>(GotoDefinitionParams {
            text_document_position_params: p.at_cursor(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
    else {
        panic!("a definition")
    };
    assert_eq!(
        (short(&def.uri), def.range.start),
        ("/src/game.rs".to_owned(), Position::new(11, 4))
    );

    // Indexing runs in the background: ask until the scripts are in.
    let mut rendered = String::new();
    for _ in 0..100 {
        let refs = server
            .request::<References>(ReferenceParams {
                text_document_position: p.at_cursor(),
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
                context: ReferenceContext {
                    include_declaration: true,
                },
            })
            .unwrap();
        rendered = refs
            .iter()
            .map(|l| {
                format!(
                    "{}:{}:{}\n",
                    short(&l.uri),
                    l.range.start.line + 1,
                    l.range.start.character
                )
            })
            .collect();
        if rendered.contains("fx.rhai") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    expect![[r#"
        /main.lua:1:14
        /mods/fx.rhai:1:14
        /mods/ui.lua:1:14
        /mods/ui.lua:3:0
        /src/game.rs:12:4
        /src/game.rs:40:8
    "#]]
    .assert_eq(&rendered);
}

#[test]
fn workspace_symbols_are_the_keys() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player.Hurt", 1.0)
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.path("main.lua"));
    let Some(WorkspaceSymbolResponse::Nested(symbols)) =
        server.request::<WorkspaceSymbolRequest>(WorkspaceSymbolParams {
            query: "player".to_owned(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
    else {
        panic!("symbols")
    };
    let names: Vec<String> = symbols
        .iter()
        .map(|s| {
            let located = matches!(s.location, OneOf::Left(_));
            format!(
                "{} in {:?} located={located}",
                s.name,
                s.container_name.as_deref().unwrap_or("")
            )
        })
        .collect();
    expect![[
        r#"["Player.Healed in \"Player\" located=false", "Player.Hurt in \"Player\" located=true"]"#
    ]]
    .assert_eq(&format!("{names:?}"));
}

#[test]
fn a_changed_table_refreshes_the_diagnostics_of_open_documents() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player.Jumped")
"#,
    );
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert!(render_diagnostics(&server.diagnostics(&uri)).contains("unknown-key"));
    let table = support::TABLE.replace(
        "\"Player.Healed\"",
        "\"Player.Jumped\": { \"params\": [] },\n    \"Player.Healed\"",
    );
    std::fs::write(p.path(".gantry/signatures.json"), table).unwrap();
    // The next tick (or request) notices the new stamp and republishes.
    assert_eq!(render_diagnostics(&server.diagnostics(&uri)), "");
}

#[test]
fn a_corrupt_table_is_reported_not_fatal() {
    expect![[r#"
        0:0-0:0 error table-error: signature table TABLE is corrupt at line 1, column 9: expected ident at line 1 column 9 (the file was left untouched)
        0:14-0:19 error malformed-key: message key `a b` has invalid character ' ' at byte 1 (allowed: letters, digits, `_`, and `.` between segments)
    "#]]
    .assert_eq(&{
        let p = project(
            r#"
//- /.gantry/signatures.json
{ "v": nope
//- /main.lua
NotifyMessage("a b")
NotifyMessage("Not.Checked")
"#,
        );
        let server = Server::start(p.dir.path());
        let uri = server.open(&p.path("main.lua"));
        let table = p.path(".gantry/signatures.json");
        render_diagnostics(&server.diagnostics(&uri)).replace(&*table.to_string_lossy(), "TABLE")
    });
}

#[test]
fn incremental_edits_keep_utf16_columns_right() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
local s = "🎮é" NotifyMessage("Player.Hurt", 1.0)
"#,
    );
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert_eq!(render_diagnostics(&server.diagnostics(&uri)), "");
    // Break the key: "Player.Hurt" -> "Player.Hurtz". `🎮` is two UTF-16
    // units and `é` one, so the end of `Hurt` is at UTF-16 column 42.
    server.edit(
        &uri,
        Range::new(Position::new(0, 42), Position::new(0, 42)),
        "z",
    );
    expect![[r#"
        0:30-0:44 warning unknown-key: unknown key `Player.Hurtz`: it is not in the signature table; did you mean `Player.Hurt`?
    "#]]
    .assert_eq(&render_diagnostics(&server.diagnostics(&uri)));
}

/// Typing only reparses; the completion that follows an edit is answered
/// from the statement at the cursor before the document is rescanned, and
/// the diagnostics published afterwards describe the edited text.
#[test]
fn completion_right_after_edits_sees_the_edited_text_and_diagnostics_follow() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
local NotifyMessage = print
local function f()
    NotifyObjectMessage(self, "Player.Hurt", 1.0, self)
end
NotifyMessage("Shadowed.Key")
"#,
    );
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert_eq!(render_diagnostics(&server.diagnostics(&uri)), "");
    // Two edits in a row: a new line above the function (every later line
    // moves), then a fresh call with an unfinished key in the new line.
    server.edit(
        &uri,
        Range::new(Position::new(1, 0), Position::new(1, 0)),
        "\n",
    );
    server.edit(
        &uri,
        Range::new(Position::new(1, 0), Position::new(1, 0)),
        "NotifyObjectMessage(self, \"Inv.\")",
    );
    let completion = server.request::<Completion>(CompletionParams {
        text_document_position: lsp_types::TextDocumentPositionParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
            position: Position::new(1, 31),
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    });
    let labels: Vec<String> = match completion {
        Some(CompletionResponse::Array(items)) => items.into_iter().map(|i| i.label).collect(),
        other => panic!("expected items, got {other:?}"),
    };
    assert_eq!(labels, ["Gold", "Items"]);
    // The call shadowed by the chunk's local stays unflagged; the new
    // call's unfinished key is flagged on its (new) line.
    expect![[r#"
        1:26-1:32 error malformed-key: message key `Inv.` has an empty segment at byte 4
    "#]]
    .assert_eq(&render_diagnostics(&server.diagnostics(&uri)));
}

/// The labels a completion at `at` offers.
fn labels_at(server: &Server, uri: &lsp_types::Uri, at: Position) -> Vec<String> {
    let completion = server.request::<Completion>(CompletionParams {
        text_document_position: lsp_types::TextDocumentPositionParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
            position: at,
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    });
    match completion {
        Some(CompletionResponse::Array(items)) => items.into_iter().map(|i| i.label).collect(),
        Some(CompletionResponse::List(list)) => list.items.into_iter().map(|i| i.label).collect(),
        None => Vec::new(),
    }
}

/// Typing inside a call is answered from the statements being edited (the
/// document is reparsed at the pause), and the diagnostics that follow
/// describe every edit.
#[test]
fn completion_after_typing_reads_the_edited_statement_and_sees_edits_above_it() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player.Healed", 1)
local function f()
    NotifyObjectMessage(self, "Player.Hurt", 1.0, self)
end
"#,
    );
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    server.sync();
    // Inside `"Player.Hurt"` on line 2: delete `Hurt`, then type `In`
    // over `Player` (two edits inside the statement, no pause between).
    server.edit(
        &uri,
        Range::new(Position::new(2, 38), Position::new(2, 42)),
        "",
    );
    assert_eq!(
        labels_at(&server, &uri, Position::new(2, 38)),
        ["Healed", "Hurt"]
    );
    server.edit(
        &uri,
        Range::new(Position::new(2, 31), Position::new(2, 37)),
        "Inv",
    );
    assert_eq!(
        labels_at(&server, &uri, Position::new(2, 35)),
        ["Gold", "Items"]
    );
    // An edit in the first statement, a completion in the third: the
    // statements between are parsed with them.
    server.edit(
        &uri,
        Range::new(Position::new(0, 22), Position::new(0, 28)),
        "Hurt",
    );
    assert_eq!(
        labels_at(&server, &uri, Position::new(2, 35)),
        ["Gold", "Items"]
    );
    // At the pause the whole document is reparsed and diagnosed.
    expect![[r#"
        2:30-2:36 error malformed-key: message key `Inv.` has an empty segment at byte 4
    "#]]
    .assert_eq(&render_diagnostics(&server.diagnostics(&uri)));
}

#[test]
fn progress_is_reported_while_the_workspace_is_indexed() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /a.lua
NotifyMessage("Player.Hurt", 1.0)
//- /b.rhai
NotifyMessage("Player.Hurt", 1.0);
"#,
    );
    let server = Server::start(p.dir.path());
    let kinds: Vec<String> = server
        .notifications("$/progress")
        .iter()
        .map(|v| v["value"]["kind"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("begin"));
    assert_eq!(kinds.last().map(String::as_str), Some("end"));
    assert!(
        server.notifications("$/progress").last().unwrap()["value"]["message"]
            .as_str()
            .unwrap()
            .starts_with("2 scripts")
    );
}

#[test]
fn unknown_methods_answer_method_not_found() {
    let p = project("//- /main.lua\n");
    let server = Server::start(p.dir.path());
    let response = server.request_raw("gantry/nope", serde_json::json!({}));
    assert_eq!(
        response.response_result.unwrap_err().code,
        lsp_server::ErrorCode::MethodNotFound as i32
    );
}

#[test]
fn malformed_params_answer_invalid_params_and_the_server_keeps_going() {
    let p = project(
        "//- /.gantry/signatures.json\n$TABLE\n//- /main.lua\nNotifyMessage(\"Player.$0\")\n",
    );
    let server = Server::start(p.dir.path());
    let response = server.request_raw(
        "textDocument/completion",
        serde_json::json!({ "position": 3 }),
    );
    assert_eq!(
        response.response_result.unwrap_err().code,
        lsp_server::ErrorCode::InvalidParams as i32
    );
    server.notify::<lsp_types::notification::DidOpenTextDocument>(serde_json::from_value(serde_json::json!({
        "textDocument": { "uri": "file:///x.lua", "languageId": "lua", "version": 1, "text": "" }
    })).unwrap());
    server.open(&p.cursor.as_ref().unwrap().0);
    assert!(render_completion(&p, &server).contains("Hurt"));
}
