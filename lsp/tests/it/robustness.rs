//! Never crashes: random bytes as documents and random edit sequences keep
//! the server answering.

use gantry_test_support::guard;
use lsp_types::request::{Completion, HoverRequest, SignatureHelpRequest, WorkspaceSymbolRequest};
use lsp_types::{
    CompletionParams, HoverParams, PartialResultParams, Position, Range, SignatureHelpParams,
    TextDocumentIdentifier, TextDocumentPositionParams, WorkDoneProgressParams,
    WorkspaceSymbolParams,
};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::{Server, project, render_diagnostics};

const PIECES: &[&str] = &[
    "NotifyMessage(",
    "GMP.NotifyObjectMessage(self, ",
    "ListenMessage(\"Player.Hurt\", self, ",
    "ListenRowMessage(self, \"Inv.",
    "function(a, b) end",
    "|a, b| {}",
    "\"",
    "'",
    "\"Player.",
    ")",
    ",",
    ".",
    "\n",
    "🎮",
    "é",
    "--",
    "[[",
    "1.5",
    " ",
];

fn edit() -> impl Strategy<Value = (u32, u32, u32, u32, String)> {
    (
        0u32..6,
        0u32..50,
        0u32..6,
        0u32..50,
        prop::collection::vec(prop::sample::select(PIECES), 0..3).prop_map(|p| p.concat()),
    )
}

fn at(uri: &lsp_types::Uri, line: u32, character: u32) -> TextDocumentPositionParams {
    TextDocumentPositionParams::new(
        TextDocumentIdentifier::new(uri.clone()),
        Position::new(line, character),
    )
}

fn poke(server: &Server, uri: &lsp_types::Uri, line: u32, character: u32) {
    server.request::<Completion>(CompletionParams {
        text_document_position: at(uri, line, character),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    });
    server.request::<SignatureHelpRequest>(SignatureHelpParams {
        context: None,
        text_document_position_params: at(uri, line, character),
        work_done_progress_params: WorkDoneProgressParams::default(),
    });
    server.request::<HoverRequest>(HoverParams {
        text_document_position_params: at(uri, line, character),
        work_done_progress_params: WorkDoneProgressParams::default(),
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_edit_sequences_never_crash_the_server(
        lua in any::<bool>(),
        edits in prop::collection::vec(edit(), 1..25),
    ) {
        let name = if lua { "main.lua" } else { "main.rhai" };
        let p = project(&format!(
            "//- /.gantry/signatures.json\n$TABLE\n//- /{name}\nNotifyMessage(\"Player.Hurt\", 1.0)\nListenMessage(\"Inv.Items\", self, function(x) end)\n"
        ));
        let server = Server::start(p.dir.path());
        let uri = server.open(&p.path(name));
        for (l1, c1, l2, c2, text) in edits {
            server.edit(&uri, Range::new(Position::new(l1, c1), Position::new(l2, c2)), &text);
            poke(&server, &uri, l1, c1 + text.chars().count() as u32);
        }
        // Still answering, with diagnostics for the final text.
        server.diagnostics(&uri);
        server.sync();
    }

    #[test]
    fn diagnostics_after_random_edits_equal_those_of_the_final_text_opened_fresh(
        edits in prop::collection::vec(edit(), 1..25),
    ) {
        let initial = "NotifyMessage(\"Player.Hurt\", 1.0)\nlocal function f(x)\n  NotifyMessage(\"Player.Hrt\", x)\nend\nListenMessage(\"Inv.Items\", self, function(x) end)\nNotifyMessage(\"Player.Hurt\", \"no\")\n";
        let p = project(&format!("//- /.gantry/signatures.json\n$TABLE\n//- /main.lua\n{initial}"));
        let mut text = initial.to_owned();
        let mut lines = gantry_lsp::text::LineIndex::new(&text);
        let incremental = {
            let server = Server::start(p.dir.path());
            let uri = server.open(&p.path("main.lua"));
            let mut version = 1;
            for (l1, c1, l2, c2, new) in edits {
                let range = Range::new(Position::new(l1, c1), Position::new(l2, c2));
                gantry_lsp::text::apply_change(&mut text, &mut lines, Some(range), &new);
                server.edit(&uri, range, &new);
                version += 1;
                if l1 % 3 == 0 {
                    // Sometimes a request answered from the statement at the
                    // cursor, sometimes one that rescans first.
                    poke(&server, &uri, l1, c1);
                    server.request::<WorkspaceSymbolRequest>(WorkspaceSymbolParams {
                        query: String::new(),
                        work_done_progress_params: WorkDoneProgressParams::default(),
                        partial_result_params: PartialResultParams::default(),
                    });
                }
            }
            loop {
                let published = server.diagnostics(&uri);
                if published.version == Some(version) {
                    break render_diagnostics(&published);
                }
            }
        };
        std::fs::write(p.path("main.lua"), &text).unwrap();
        let server = Server::start(p.dir.path());
        let uri = server.open(&p.path("main.lua"));
        let fresh = render_diagnostics(&server.diagnostics(&uri));
        // Tree-sitter's incremental parse of broken code may recover
        // differently from a fresh parse of the same text (a call kept
        // where a typed `--` made a comment): compared when the final text
        // parses cleanly.
        let clean = gantry_lua::syntax::parse(&text, None)
            .is_some_and(|tree| !tree.root_node().has_error());
        if clean {
            prop_assert_eq!(incremental, fresh, "final text {:?}", text);
        }
    }

    #[test]
    fn random_bytes_as_a_document_never_crash_the_server(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let p = project("//- /.gantry/signatures.json\n$TABLE\n");
        std::fs::write(p.path("noise.lua"), String::from_utf8_lossy(&bytes).as_bytes()).unwrap();
        let server = Server::start(p.dir.path());
        let uri = server.open(&p.path("noise.lua"));
        for line in 0..3 {
            for character in [0, 3, 17, 200] {
                poke(&server, &uri, line, character);
            }
        }
        server.diagnostics(&uri);
        server.sync();
    }
}

/// A mod folder with one script and a `.gantry` folder, no table yet.
fn mod_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    std::fs::write(dir.path().join("a.lua"), "NotifyMessage(\"A.B\", 1)\n").unwrap();
    dir
}

/// The table error `gantry check` reports for `dir`, in 5 s at most.
fn table_error_of(dir: &std::path::Path) -> String {
    let dir = dir.to_owned();
    let files = guard::within(std::time::Duration::from_secs(5), move || {
        gantry_lsp::check::check_dir(&dir).unwrap()
    });
    assert!(gantry_lsp::check::has_errors(&files), "{files:?}");
    let table = files
        .iter()
        .find(|f| f.path.ends_with(".gantry/signatures.json"))
        .unwrap_or_else(|| panic!("no table error in {files:?}"));
    table.diagnostics[0].message.clone()
}

#[cfg(unix)]
#[test]
fn check_reports_a_table_that_is_a_fifo_instead_of_blocking() {
    let dir = mod_folder();
    guard::mkfifo(&dir.path().join(".gantry/signatures.json"));
    let message = table_error_of(dir.path());
    assert!(message.contains("FIFO"), "{message}");
}

#[test]
fn check_reports_a_table_path_that_is_a_folder_as_an_error() {
    let dir = mod_folder();
    std::fs::create_dir(dir.path().join(".gantry/signatures.json")).unwrap();
    let message = table_error_of(dir.path());
    assert!(message.contains("is a folder"), "{message}");
}

#[cfg(unix)]
#[test]
fn check_reports_a_table_that_links_out_of_the_mod_folder() {
    let dir = mod_folder();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), "{\"version\": 1}").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".gantry/signatures.json")).unwrap();
    let message = table_error_of(dir.path());
    assert!(message.contains("leads outside"), "{message}");
}

#[test]
fn check_places_findings_of_a_script_with_a_byte_order_mark_as_without_it() {
    let table = "{\"version\": 1, \"keys\": {\"A.B\": {\"origin\": \"declared\", \"params\": [{\"name\": \"n\", \"type\": \"int\"}]}}}";
    let places = |script: &str| {
        let dir = mod_folder();
        std::fs::write(dir.path().join(".gantry/signatures.json"), table).unwrap();
        std::fs::write(dir.path().join("a.lua"), script).unwrap();
        let files = gantry_lsp::check::check_dir(dir.path()).unwrap();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0]
            .diagnostics
            .iter()
            .map(|d| (d.line, d.column, d.message.clone()))
            .collect::<Vec<_>>()
    };
    let plain = places("NotifyMessage(\"A.B\", \"x\")\n");
    assert!(!plain.is_empty());
    assert_eq!(places("\u{FEFF}NotifyMessage(\"A.B\", \"x\")\n"), plain);
}

#[test]
fn check_of_a_script_that_is_not_utf8_is_an_error_naming_it_and_its_line() {
    let dir = mod_folder();
    std::fs::write(dir.path().join("latin1.lua"), b"-- ok\n-- \xE9t\xE9\n").unwrap();
    let files = gantry_lsp::check::check_dir(dir.path()).unwrap();
    assert_eq!(
        file_errors(&files),
        ["latin1.lua: file-error: latin1.lua is not valid UTF-8 text (line 2)"]
    );
    assert!(gantry_lsp::check::has_errors(&files));
}

/// The `file-error` findings, as `file: code: message`.
fn file_errors(files: &[gantry_lsp::check::FileDiagnostics]) -> Vec<String> {
    files
        .iter()
        .flat_map(|f| {
            f.diagnostics
                .iter()
                .filter(|d| d.code == gantry_lsp::analysis::diagnostics::Code::FileError)
                .map(move |d| {
                    let name = f.path.file_name().unwrap().to_string_lossy();
                    format!("{name}: {}: {}", d.code, d.message)
                })
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn check_reports_a_fifo_script_and_one_linked_out_of_the_folder_and_checks_the_rest() {
    let dir = mod_folder();
    guard::mkfifo(&dir.path().join("b.lua"));
    std::os::unix::fs::symlink("/etc/hostname", dir.path().join("c.lua")).unwrap();
    let root = dir.path().to_owned();
    let files = guard::within(std::time::Duration::from_secs(5), move || {
        gantry_lsp::check::check_dir(&root).unwrap()
    });
    let errors = file_errors(&files);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with("b.lua: file-error: b.lua is a FIFO"),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("c.lua: file-error: c.lua leads outside"),
        "{errors:?}"
    );
    assert!(gantry_lsp::check::has_errors(&files));
}

#[cfg(unix)]
#[test]
fn the_server_keeps_answering_when_the_workspace_table_is_a_fifo() {
    let dir = mod_folder();
    guard::mkfifo(&dir.path().join(".gantry/signatures.json"));
    let root = dir.path().to_owned();
    let answered = guard::within(std::time::Duration::from_secs(5), move || {
        let server = Server::start(&root);
        let uri = server.open(&root.join("a.lua"));
        let diagnostics = render_diagnostics(&server.diagnostics(&uri));
        let hover = server.request::<HoverRequest>(HoverParams {
            text_document_position_params: at(&uri, 0, 16),
            work_done_progress_params: WorkDoneProgressParams::default(),
        });
        drop(hover);
        diagnostics
    });
    assert!(answered.contains("FIFO"), "{answered}");
}

// Broken framing: the server finds the next frame and keeps answering.

/// A writer the test reads back once the session is over.
#[derive(Clone, Default)]
struct Written(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Written {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// A request (the id the bad frames below carry: the server must never
/// answer it as if it had been read whole).
const BAD_BODY: &str = r#"{"jsonrpc":"2.0","id":1000,"method":"shutdown"}"#;

/// The messages the server wrote, each frame's body as JSON.
fn written_messages(bytes: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(bytes);
    let mut rest: &str = &text;
    let mut out = Vec::new();
    while let Some(at) = rest.find("Content-Length: ") {
        let after = &rest[at + 16..];
        let (length, after) = after.split_once("\r\n\r\n").expect("a header block");
        let length: usize = length.parse().expect("a length");
        out.push(serde_json::from_str(&after[..length]).expect("JSON"));
        rest = &after[length..];
    }
    out
}

/// A whole session over Gantry's stdio transport: `initialize`, a Lua
/// document opened, `bad` (raw bytes), then 50 hover and completion
/// requests (ids 1 to 50), `shutdown` and `exit`. Returns every message
/// the server wrote.
fn session_after(bad: &str) -> Vec<Value> {
    let p = project(
        "//- /.gantry/signatures.json\n$TABLE\n//- /main.lua\nNotifyMessage(\"Player.Hurt\", 1.0)\n",
    );
    let uri = p.uri("main.lua");
    let mut input = frame(
        &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "capabilities": {} } })
            .to_string(),
    );
    input +=
        &frame(&json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }).to_string());
    input += &frame(
        &json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": {
            "uri": uri.as_str(), "languageId": "lua", "version": 1,
            "text": std::fs::read_to_string(p.path("main.lua")).unwrap() } } })
        .to_string(),
    );
    input += bad;
    for id in 1..=50 {
        let method = if id % 2 == 1 {
            "textDocument/hover"
        } else {
            "textDocument/completion"
        };
        input += &frame(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": {
                "textDocument": { "uri": uri.as_str() },
                "position": { "line": 0, "character": 24 } } })
            .to_string(),
        );
    }
    input += &frame(r#"{"jsonrpc":"2.0","id":51,"method":"shutdown"}"#);
    input += &frame(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    let out = Written::default();
    let (connection, threads) = gantry_lsp::server::transport::connect(
        std::io::Cursor::new(input.into_bytes()),
        out.clone(),
    )
    .unwrap();
    let ending = gantry_lsp::serve(connection).unwrap();
    threads.join().unwrap();
    assert_eq!(
        ending,
        gantry_lsp::Ending::Exit,
        "the session ends with its own exit"
    );
    let written = out.0.lock().unwrap().clone();
    written_messages(&written)
}

/// Every one of the 50 requests after `bad` is answered with a result
/// (hover: the key's signature), and the bad frame is answered with a
/// Parse error (id `null`, or the id of a request cut short).
fn assert_all_answered_after(bad: &str, refused_id: Value) {
    let messages = session_after(bad);
    let result_of = |id: i64| {
        messages
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("request {id} after {bad:?} was not answered"))
    };
    for id in 1..=50 {
        let answer = result_of(id);
        assert!(answer.get("error").is_none(), "request {id}: {answer}");
        if id % 2 == 1 {
            let hover = answer["result"]["contents"]["value"].as_str().unwrap_or("");
            assert!(
                hover.contains("Player.Hurt(dmg: float"),
                "hover {id}: {answer}"
            );
        } else {
            assert!(answer["result"].is_array(), "completion {id}: {answer}");
        }
    }
    assert!(result_of(51)["error"].is_null(), "shutdown answered");
    let refusals: Vec<&Value> = messages
        .iter()
        .filter(|m| m["error"]["code"] == -32700)
        .collect();
    assert!(
        refusals.iter().any(|m| m["id"] == refused_id),
        "a Parse error with id {refused_id} for {bad:?}: {refusals:?}"
    );
    assert!(
        messages
            .iter()
            .all(|m| m["id"] != 1000 || m.get("error").is_some()),
        "the broken request was not served as whole"
    );
}

#[test]
fn after_a_frame_without_content_length_the_server_answers_the_next_requests() {
    assert_all_answered_after(
        &format!("Content-Type: application/json\r\n\r\n{BAD_BODY}"),
        Value::Null,
    );
}

#[test]
fn after_a_non_numeric_content_length_the_server_answers_the_next_requests() {
    assert_all_answered_after(
        &format!("Content-Length: forty\r\n\r\n{BAD_BODY}"),
        Value::Null,
    );
}

#[test]
fn after_a_negative_content_length_the_server_answers_the_next_requests() {
    assert_all_answered_after(
        &format!("Content-Length: -48\r\n\r\n{BAD_BODY}"),
        Value::Null,
    );
}

#[test]
fn after_a_huge_content_length_the_server_answers_the_next_requests() {
    // Over the limit, and past what any integer holds.
    assert_all_answered_after(
        &format!("Content-Length: 1099511627776\r\n\r\n{BAD_BODY}"),
        Value::Null,
    );
    assert_all_answered_after(
        &format!("Content-Length: 123456789012345678901234567890\r\n\r\n{BAD_BODY}"),
        Value::Null,
    );
}

#[test]
fn after_a_body_that_is_not_json_the_server_answers_the_next_requests() {
    assert_all_answered_after(
        &frame("{\"jsonrpc\": \"2.0\", \"id\": 1000, nope"),
        Value::Null,
    );
}

#[test]
fn after_a_body_shorter_than_declared_the_server_answers_the_next_requests() {
    // The short request is refused with its own id.
    assert_all_answered_after(
        &format!("Content-Length: {}\r\n\r\n{BAD_BODY}", BAD_BODY.len() + 500),
        json!(1000),
    );
}

#[test]
fn after_noise_between_frames_the_server_answers_the_next_requests() {
    let noise = format!("garbage\r\n{}\n{{]", "z".repeat(100_000));
    assert_all_answered_after(&format!("{noise}{}", frame("not json")), Value::Null);
}

#[test]
fn header_lines_ending_in_a_bare_line_feed_are_answered() {
    let lf_only = format!(
        "Content-Length: {}\nContent-Type: application/vscode-jsonrpc\n\n{}",
        22, r#"{"jsonrpc":"2.0","id":"#
    );
    // A frame with bare line feeds (its body not JSON: refused), then the
    // 50 requests, each answered.
    assert_all_answered_after(&lf_only, Value::Null);
    let messages = session_after(&format!(
        "Content-Length: {}\n\n{}",
        r#"{"jsonrpc":"2.0","id":77,"method":"workspace/symbol","params":{"query":""}}"#.len(),
        r#"{"jsonrpc":"2.0","id":77,"method":"workspace/symbol","params":{"query":""}}"#
    ));
    assert!(
        messages
            .iter()
            .any(|m| m["id"] == 77 && m["result"].is_array()),
        "a request framed with bare line feeds is answered"
    );
}

// A hostile table file: reported, and the server keeps serving.

#[test]
fn a_table_that_cannot_be_loaded_is_logged_once_and_the_server_keeps_answering() {
    // Nested far past any parser's depth, then not even UTF-8.
    let nested = format!(r#"{{"version": 1, "keys": {}"#, "[".repeat(200_000));
    for table in [nested.into_bytes(), b"{\"version\": 1, \xff\xfe}".to_vec()] {
        let p = project("//- /main.lua\nNotifyMessage(\"Player.Hurt\", 1.0)\n");
        std::fs::create_dir_all(p.path(".gantry")).unwrap();
        std::fs::write(p.path(".gantry/signatures.json"), &table).unwrap();
        let server = Server::start(p.dir.path());
        let uri = server.open(&p.path("main.lua"));
        poke(&server, &uri, 0, 20);
        let diagnostics = render_diagnostics(&server.diagnostics(&uri));
        assert!(diagnostics.contains("table-error"), "{diagnostics}");
        server.sync();
        let logged: Vec<String> = server
            .notifications("window/logMessage")
            .iter()
            .filter_map(|m| m["message"].as_str().map(str::to_owned))
            .filter(|m| m.contains("signatures.json"))
            .collect();
        assert_eq!(logged.len(), 1, "one warning for the table: {logged:?}");
        assert!(
            logged[0].starts_with("cannot load the signature table"),
            "{logged:?}"
        );
    }
}

// Deep nesting: answered in time linear in the file, without recursion.

/// A script of one statement whose API call sits `depth` brackets deep
/// (`open` before it, `close` after it, each repeated), and the position
/// just after `"Player.` in its key.
fn nested_call(file: &str, depth: usize, open: &str, close: &str) -> (String, Position) {
    let (head, tail) = if file.ends_with(".lua") {
        ("local t = ", "\n")
    } else {
        ("let t = ", ";\n")
    };
    let before = format!("{head}{}NotifyMessage(\"Player.", open.repeat(depth));
    let text = format!("{before}Hurt\", 1.0){}{tail}", close.repeat(depth));
    let line = before.matches('\n').count() as u32;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
    (text, Position::new(line, column as u32))
}

fn completion_labels(server: &Server, uri: &lsp_types::Uri, at: Position) -> Vec<String> {
    let response = server.request::<Completion>(CompletionParams {
        text_document_position: TextDocumentPositionParams::new(
            TextDocumentIdentifier::new(uri.clone()),
            at,
        ),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    });
    match response {
        Some(lsp_types::CompletionResponse::Array(items)) => {
            items.into_iter().map(|i| i.label).collect()
        }
        Some(lsp_types::CompletionResponse::List(list)) => {
            list.items.into_iter().map(|i| i.label).collect()
        }
        None => Vec::new(),
    }
}

fn hover_text(server: &Server, uri: &lsp_types::Uri, at: Position) -> String {
    let hover = server.request::<HoverRequest>(HoverParams {
        text_document_position_params: TextDocumentPositionParams::new(
            TextDocumentIdentifier::new(uri.clone()),
            at,
        ),
        work_done_progress_params: WorkDoneProgressParams::default(),
    });
    match hover.map(|h| h.contents) {
        Some(lsp_types::HoverContents::Markup(markup)) => markup.value,
        other => panic!("no hover: {other:?}"),
    }
}

/// Completion and hover in the key of a call `depth` brackets deep, then
/// again right after an edit of the key (the statement reread at once).
fn assert_answers_deep_inside(file: &str, depth: usize, open: &str, close: &str) {
    let (text, at) = nested_call(file, depth, open, close);
    let p = project("//- /.gantry/signatures.json\n$TABLE\n");
    std::fs::write(p.path(file), text).unwrap();
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path(file));
    let labels = completion_labels(&server, &uri, at);
    assert!(
        labels.contains(&"Hurt".to_owned()) && labels.contains(&"Healed".to_owned()),
        "{labels:?}"
    );
    let inside_key = Position::new(at.line, at.character + 2);
    assert!(
        hover_text(&server, &uri, inside_key).contains("Player.Hurt(dmg: float, causer: object)")
    );
    // Typing in the key: `Hurt` becomes `Hu`.
    let key_rest = Range::new(inside_key, Position::new(at.line, at.character + 4));
    server.edit(&uri, key_rest, "");
    let after_edit = completion_labels(&server, &uri, inside_key);
    assert!(after_edit.contains(&"Hurt".to_owned()), "{after_edit:?}");
}

/// Every request on a call `depth` brackets deep answers (the server
/// thread has the default 2 MiB stack: recursion over the depth would
/// overflow it).
fn assert_every_request_answers_deep_inside(file: &str, depth: usize, open: &str, close: &str) {
    let (text, at) = nested_call(file, depth, open, close);
    let p = project("//- /.gantry/signatures.json\n$TABLE\n");
    std::fs::write(p.path(file), text).unwrap();
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path(file));
    poke(&server, &uri, at.line, at.character);
    let inside_key = Position::new(at.line, at.character + 2);
    assert!(hover_text(&server, &uri, inside_key).contains("Player.Hurt"));
    let position =
        TextDocumentPositionParams::new(TextDocumentIdentifier::new(uri.clone()), inside_key);
    let definition = server.request_raw(
        "textDocument/definition",
        serde_json::to_value(&position).unwrap(),
    );
    assert!(definition.response_result.is_ok(), "{definition:?}");
    let references = server.request_raw(
        "textDocument/references",
        json!({ "textDocument": position.text_document, "position": inside_key,
                "context": { "includeDeclaration": true } }),
    );
    let found = references.response_result.expect("references");
    assert!(
        found
            .as_array()
            .is_some_and(|r| r.iter().any(|l| l["uri"] == uri.as_str())),
        "the deep call is a reference of its key: {found}"
    );
    server.request::<WorkspaceSymbolRequest>(WorkspaceSymbolParams {
        query: "Player".to_owned(),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    });
    server.diagnostics(&uri);
}

#[test]
fn hover_and_completion_inside_40000_nested_braces_answer_in_lua() {
    assert_answers_deep_inside("deep.lua", 40_000, "{", "}");
}

#[test]
fn hover_and_completion_inside_40000_nested_braces_answer_in_rhai() {
    assert_answers_deep_inside("deep.rhai", 40_000, "{", "}");
}

#[test]
fn hover_and_completion_inside_40000_nested_parentheses_on_their_own_lines_answer() {
    assert_answers_deep_inside("deep.lua", 40_000, "(\n", "\n)");
    assert_answers_deep_inside("deep.rhai", 40_000, "(\n", "\n)");
}

#[test]
fn no_stack_overflow_at_100000_nested_braces_in_lua() {
    assert_every_request_answers_deep_inside("deep.lua", 100_000, "{", "}");
}

#[test]
fn no_stack_overflow_at_100000_nested_parentheses_in_lua() {
    assert_every_request_answers_deep_inside("deep.lua", 100_000, "(", ")");
}

#[test]
fn no_stack_overflow_at_100000_nested_braces_in_rhai() {
    assert_every_request_answers_deep_inside("deep.rhai", 100_000, "#{a: ", "}");
}

#[test]
fn no_stack_overflow_at_100000_nested_parentheses_in_rhai() {
    assert_every_request_answers_deep_inside("deep.rhai", 100_000, "(", ")");
}

/// Each nested call is a call to scan, index and check (and a few KiB of
/// trees and calls): 10,000 keep the test small; the cost is linear.
#[test]
fn every_request_answers_inside_10000_nested_api_calls_in_either_language() {
    for file in ["calls.lua", "calls.rhai"] {
        assert_every_request_answers_deep_inside(
            file,
            10_000,
            "NotifyMessage(\"Player.Hurt\", ",
            ", 1)",
        );
    }
}
