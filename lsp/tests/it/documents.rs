//! The line lexer behind unterminated strings, against comments and
//! strings that span lines, brackets that are not calls, and edits the
//! document has not reparsed yet; and the session's ending.

mod support;

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use lsp_types::request::{Completion, SignatureHelpRequest};
use lsp_types::{
    CompletionParams, CompletionResponse, PartialResultParams, Position, Range,
    SignatureHelpParams, TextDocumentIdentifier, TextDocumentPositionParams, Uri,
    WorkDoneProgressParams,
};
use serde_json::{Value, json};
use support::{Server, TABLE, project};

fn pos_after(text: &str, marker: &str) -> Position {
    let offset = text.find(marker).unwrap_or_else(|| panic!("{marker:?}")) + marker.len();
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .encode_utf16()
        .count() as u32;
    Position::new(line, column)
}

fn at(uri: &Uri, position: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams::new(TextDocumentIdentifier::new(uri.clone()), position)
}

fn labels(server: &Server, uri: &Uri, position: Position) -> Vec<String> {
    match server.request::<Completion>(CompletionParams {
        text_document_position: at(uri, position),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    }) {
        Some(CompletionResponse::Array(items)) => items.into_iter().map(|i| i.label).collect(),
        Some(CompletionResponse::List(list)) => list.items.into_iter().map(|i| i.label).collect(),
        None => Vec::new(),
    }
}

fn active_parameter(server: &Server, uri: &Uri, position: Position) -> Option<u32> {
    let help = server.request::<SignatureHelpRequest>(SignatureHelpParams {
        context: None,
        text_document_position_params: at(uri, position),
        work_done_progress_params: WorkDoneProgressParams::default(),
    })?;
    help.active_parameter
        .or_else(|| help.signatures.first()?.active_parameter)
}

/// The support table plus `Ui.Four`, a key with four parameters.
fn table() -> String {
    TABLE.replace(
        "\"Player.Healed\"",
        r#""Ui.Four": { "kind": "event", "origin": "declared", "params": [ { "name": "a", "type": "any" }, { "name": "b", "type": "any" }, { "name": "c", "type": "any" }, { "name": "d", "type": "any" } ] },
    "Player.Healed""#,
    )
}

fn server_with(files: &[(&str, &str)]) -> (support::Project, Server) {
    let p = project(&format!("//- /.gantry/signatures.json\n{}", table()));
    for (name, text) in files {
        std::fs::write(p.path(name), text).unwrap();
    }
    let server = Server::start(p.dir.path());
    (p, server)
}

/// A comment or string that closes on the cursor's line, before the call,
/// leaves the rest of the line to code: the unterminated key is completed.
#[test]
fn code_after_a_comment_or_string_closed_on_the_line_is_completed() {
    let cases = [
        ("a.lua", "local s = [[\nx]] NotifyMessage(\"Inv."),
        ("b.lua", "--[==[ note\nstill ]==] NotifyMessage(\"Inv."),
        ("c.lua", "--[[ one line ]] NotifyMessage(\"Inv."),
        ("d.rhai", "/* note\nstill */ NotifyMessage(\"Inv."),
        ("e.rhai", "/* one /* nested */ line */ NotifyMessage(\"Inv."),
        ("f.rhai", "let s = `a\nb`; NotifyMessage(\"Inv."),
    ];
    let (p, server) = server_with(&cases);
    let mut wrong = Vec::new();
    for (name, text) in cases {
        let uri = server.open(&p.path(name));
        let got = labels(&server, &uri, pos_after(text, "Inv."));
        if got != ["Gold", "Items"] {
            wrong.push(format!("{name}: {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Typing inside a Lua long string opened lines above, before the document
/// is reparsed (a completion right behind the edit), answers nothing; the
/// same edit below the string is completed.
#[test]
fn typing_inside_a_long_string_opened_above_answers_nothing() {
    let text = "local s = [[\nnote\n]]\nlocal x = 1\n";
    let (p, server) = server_with(&[("main.lua", text)]);
    let uri = server.open(&p.path("main.lua"));
    server.diagnostics(&uri);
    server.edit(
        &uri,
        Range::new(Position::new(1, 4), Position::new(1, 4)),
        " NotifyMessage(\"Inv.",
    );
    assert_eq!(
        labels(&server, &uri, Position::new(1, 24)),
        Vec::<String>::new()
    );
    server.edit(
        &uri,
        Range::new(Position::new(3, 11), Position::new(3, 11)),
        " NotifyMessage(\"Inv.",
    );
    assert_eq!(
        labels(&server, &uri, Position::new(3, 31)),
        ["Gold", "Items"]
    );
}

/// A Rhai closure's parameter list and a Lua table are frames of their own:
/// their commas do not move the call's active parameter.
#[test]
fn closure_pipes_and_tables_keep_their_commas() {
    let rhai = "NotifyMessage(\"Ui.Four\", |a, b| a, \"x";
    let lua = "NotifyMessage(\"Ui.Four\", t[{ 1, 2 }], \"x";
    let (p, server) = server_with(&[("a.rhai", rhai), ("b.lua", lua)]);
    for (name, text) in [("a.rhai", rhai), ("b.lua", lua)] {
        let uri = server.open(&p.path(name));
        assert_eq!(
            // key, a, b: the third position.
            active_parameter(&server, &uri, pos_after(text, "\"x")),
            Some(2),
            "{name}"
        );
    }
}

/// `exit` before `initialize` ends the session like an `exit` without
/// `shutdown`; requests before `initialize` answer ServerNotInitialized.
#[test]
fn exit_before_initialize_is_an_exit_without_shutdown() {
    let (server, client) = Connection::memory();
    let thread = std::thread::spawn(move || gantry_lsp::serve(server));
    client
        .sender
        .send(Request::new(RequestId::from(1), "workspace/symbol".to_owned(), json!({})).into())
        .unwrap();
    match client.receiver.recv().unwrap() {
        Message::Response(r) => assert_eq!(
            r.response_result.unwrap_err().code,
            lsp_server::ErrorCode::ServerNotInitialized as i32
        ),
        other => panic!("{other:?}"),
    }
    client
        .sender
        .send(Notification::new("exit".to_owned(), Value::Null).into())
        .unwrap();
    assert_eq!(
        thread.join().unwrap().unwrap(),
        gantry_lsp::Ending::ExitWithoutShutdown
    );
}

/// `run` reports an `exit` without `shutdown` as its typed error.
#[test]
fn run_reports_exit_without_shutdown() {
    let (server, client) = Connection::memory();
    let thread = std::thread::spawn(move || gantry_lsp::run(server));
    client
        .sender
        .send(
            Request::new(
                RequestId::from(1),
                "initialize".to_owned(),
                json!({ "capabilities": {} }),
            )
            .into(),
        )
        .unwrap();
    assert!(matches!(
        client.receiver.recv().unwrap(),
        Message::Response(_)
    ));
    client
        .sender
        .send(Notification::new("exit".to_owned(), Value::Null).into())
        .unwrap();
    let error = thread.join().unwrap().unwrap_err();
    assert!(
        matches!(
            error.downcast_ref::<gantry_lsp::ServerError>(),
            Some(gantry_lsp::ServerError::ExitWithoutShutdown)
        ),
        "{error}"
    );
}
