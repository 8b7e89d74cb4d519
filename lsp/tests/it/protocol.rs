//! The protocol's edges: unknown methods, malformed params, requests for
//! unopened documents or after shutdown, exit with or without shutdown,
//! and progress while the workspace is indexed.

use std::path::Path;

use gantry_lsp::uri::path_to_uri;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::request::Completion;
use lsp_types::{
    CompletionParams, CompletionResponse, CompletionTextEdit, PartialResultParams,
    WorkDoneProgressParams,
};
use serde_json::{Value, json};

use crate::support::editor::one_script;
use crate::support::{Project, Server, project};

// The protocol: a bare in-process client (the support server's Drop sends
// its own shutdown, which these tests must control).

struct Raw {
    client: Connection,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl Raw {
    fn start(root: &Path) -> Raw {
        let (server, client) = Connection::memory();
        let thread = std::thread::spawn(move || gantry_lsp::run(server));
        let raw = Raw {
            client,
            thread: Some(thread),
        };
        let init = json!({
            "capabilities": {},
            "workspaceFolders": [ { "uri": path_to_uri(root).unwrap().as_str(), "name": "t" } ]
        });
        raw.request(0, "initialize", init);
        raw.notify("initialized", json!({}));
        raw
    }

    fn notify(&self, method: &str, params: Value) {
        self.client
            .sender
            .send(Notification::new(method.to_owned(), params).into())
            .unwrap();
    }

    fn request(&self, id: i32, method: &str, params: Value) -> Response {
        let id = RequestId::from(id);
        self.client
            .sender
            .send(Request::new(id.clone(), method.to_owned(), params).into())
            .unwrap();
        loop {
            match self
                .client
                .receiver
                .recv_timeout(std::time::Duration::from_secs(20))
                .expect("an answer")
            {
                Message::Response(r) if r.id == id => return r,
                Message::Request(r) => self
                    .client
                    .sender
                    .send(Response::new_ok(r.id, Value::Null).into())
                    .unwrap(),
                _ => {}
            }
        }
    }

    fn finish(mut self) -> anyhow::Result<()> {
        self.thread.take().unwrap().join().unwrap()
    }
}

fn code(r: &Response) -> Option<i32> {
    r.response_result.as_ref().err().map(|e| e.code)
}

/// Requests for documents the client never opened answer (null or empty),
/// never an error, and the server keeps going.
#[test]
fn requests_for_unopened_documents_answer_without_error() {
    let p = one_script("main.lua", "NotifyMessage(\"Player.Hurt\", 1.0)\n");
    let raw = Raw::start(p.dir.path());
    let uri = path_to_uri(&p.path("main.lua")).unwrap();
    let position = json!({ "textDocument": { "uri": uri.as_str() }, "position": { "line": 0, "character": 20 } });
    let mut id = 1;
    for method in [
        "textDocument/completion",
        "textDocument/signatureHelp",
        "textDocument/hover",
        "textDocument/definition",
    ] {
        id += 1;
        let r = raw.request(id, method, position.clone());
        assert_eq!(code(&r), None, "{method}");
    }
    let r = raw.request(
        90,
        "textDocument/references",
        json!({ "textDocument": { "uri": uri.as_str() }, "position": { "line": 0, "character": 20 }, "context": { "includeDeclaration": true } }),
    );
    assert_eq!(code(&r), None, "references");
    let r = raw.request(
        91,
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri.as_str() }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 1 } }, "context": { "diagnostics": [] } }),
    );
    assert_eq!(code(&r), None, "codeAction");
    assert_eq!(code(&raw.request(92, "shutdown", Value::Null)), None);
    raw.notify("exit", Value::Null);
    raw.finish().unwrap();
}

/// "Never crashes: unknown methods answer MethodNotFound; malformed params
/// answer an error": a `$/` request, params of the wrong shape for every
/// request the server serves, and malformed notifications.
#[test]
fn malformed_params_of_every_request_answer_invalid_params_and_notifications_are_survived() {
    let p = one_script("main.lua", "NotifyMessage(\"Player.\")\n");
    let raw = Raw::start(p.dir.path());
    let r = raw.request(1, "$/gantry/unknown", json!({}));
    assert_eq!(code(&r), Some(lsp_server::ErrorCode::MethodNotFound as i32));
    let mut id = 10;
    for method in [
        "textDocument/completion",
        "textDocument/signatureHelp",
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/references",
        "textDocument/codeAction",
        "workspace/symbol",
    ] {
        id += 1;
        let r = raw.request(id, method, json!({ "textDocument": 7 }));
        assert_eq!(
            code(&r),
            Some(lsp_server::ErrorCode::InvalidParams as i32),
            "{method}"
        );
    }
    raw.notify("textDocument/didOpen", json!({ "textDocument": "nope" }));
    raw.notify("textDocument/didChange", json!({ "contentChanges": 3 }));
    raw.notify("gantry/whatever", json!([1, 2]));
    // Still serving: open and complete.
    let uri = path_to_uri(&p.path("main.lua")).unwrap();
    raw.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri.as_str(), "languageId": "lua", "version": 1, "text": "NotifyMessage(\"Player.\")\n" } }),
    );
    let r = raw.request(
        50,
        "textDocument/completion",
        json!({ "textDocument": { "uri": uri.as_str() }, "position": { "line": 0, "character": 22 } }),
    );
    let labels: Vec<String> = r
        .response_result
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(labels, ["Healed", "Hurt"]);
    assert_eq!(code(&raw.request(51, "shutdown", Value::Null)), None);
    raw.notify("exit", Value::Null);
    raw.finish().unwrap();
}

/// LSP: after `shutdown`, further requests answer InvalidRequest, and
/// `exit` ends the server cleanly.
#[test]
fn requests_after_shutdown_answer_invalid_request_and_exit_ends_the_loop() {
    let p = one_script("main.lua", "NotifyMessage(\"Player.Hurt\", 1.0)\n");
    let raw = Raw::start(p.dir.path());
    assert_eq!(code(&raw.request(1, "shutdown", Value::Null)), None);
    let r = raw.request(2, "workspace/symbol", json!({ "query": "" }));
    assert_eq!(code(&r), Some(lsp_server::ErrorCode::InvalidRequest as i32));
    raw.notify("exit", Value::Null);
    raw.finish().expect("a clean end after shutdown + exit");
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
