//! Drives the server in-process over `Connection::memory()`, in
//! rust-analyzer's slow-tests style: a fixture of files (one may mark the
//! cursor with `$0`) written to a temp dir, then requests and notifications.

#![allow(dead_code)]

pub mod editor;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use gantry_lsp::uri::path_to_uri;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{DidChangeTextDocument, DidOpenTextDocument, Exit, Initialized};
use lsp_types::request::{Initialize, Shutdown};
use lsp_types::{
    ClientCapabilities, DidChangeTextDocumentParams, DidOpenTextDocumentParams, InitializeParams,
    Position, PublishDiagnosticsParams, Range, TextDocumentContentChangeEvent,
    TextDocumentIdentifier, TextDocumentItem, TextDocumentPositionParams, Uri,
    VersionedTextDocumentIdentifier, WindowClientCapabilities, WorkspaceFolder,
};
use serde_json::Value;

/// A table with a few keys, declared and observed.
pub const TABLE: &str = r#"{
  "version": 1,
  "structs": { "Item": { "fields": [ { "name": "id", "type": "int" } ] } },
  "keys": {
    "Inv.Items": { "kind": "collection", "origin": "declared", "params": [ { "name": "items", "type": "array<Item>" } ] },
    "Inv.Gold": { "kind": "store", "origin": "observed", "params": [ { "name": "amount", "type": "int" } ] },
    "Player.Hurt": {
      "kind": "event", "origin": "declared", "doc": "The player took damage.",
      "params": [ { "name": "dmg", "type": "float" }, { "name": "causer", "type": "object" } ],
      "sites": [
        { "file": "src/game.rs", "line": 12, "column": 5, "language": "rust", "role": "declare" },
        { "file": "src/game.rs", "line": 40, "column": 9, "language": "rust", "role": "send" },
        { "file": "mods/ui.lua", "line": 3, "language": "lua", "role": "listen" }
      ]
    },
    "Player.Healed": { "kind": "event", "origin": "observed", "params": [ { "name": "amount", "type": "int" } ] }
  }
}
"#;

/// A fixture written to disk.
pub struct Project {
    pub dir: tempfile::TempDir,
    /// The file holding `$0` and the cursor's position in it.
    pub cursor: Option<(PathBuf, Position)>,
}

impl Project {
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative.trim_start_matches('/'))
    }

    pub fn uri(&self, relative: &str) -> Uri {
        path_to_uri(&self.path(relative)).unwrap()
    }

    pub fn cursor_uri(&self) -> Uri {
        path_to_uri(&self.cursor.as_ref().expect("fixture has a $0").0).unwrap()
    }

    pub fn at_cursor(&self) -> TextDocumentPositionParams {
        let (path, position) = self.cursor.clone().expect("fixture has a $0");
        TextDocumentPositionParams::new(
            TextDocumentIdentifier::new(path_to_uri(&path).unwrap()),
            position,
        )
    }
}

/// Writes `//- /path` sections to a temp dir. `$TABLE` stands for [`TABLE`].
pub fn project(fixture: &str) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let mut cursor = None;
    for section in fixture.split("//- ").filter(|s| !s.trim().is_empty()) {
        let (name, body) = section.split_once('\n').unwrap_or((section, ""));
        let path = dir.path().join(name.trim().trim_start_matches('/'));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let body = body.replace("$TABLE", TABLE);
        let text = match body.find("$0") {
            Some(offset) => {
                let before = &body[..offset];
                let line = before.matches('\n').count() as u32;
                let last_line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
                let character = last_line.encode_utf16().count() as u32;
                cursor = Some((path.clone(), Position::new(line, character)));
                body.replacen("$0", "", 1)
            }
            None => body,
        };
        std::fs::write(&path, text).unwrap();
    }
    Project { dir, cursor }
}

pub struct Server {
    client: Connection,
    thread: Option<JoinHandle<anyhow::Result<()>>>,
    next_id: Cell<i32>,
    /// Notifications (and server requests) seen while waiting for something else.
    pub inbox: RefCell<VecDeque<Message>>,
    versions: RefCell<std::collections::HashMap<String, i32>>,
}

const TIMEOUT: Duration = Duration::from_secs(20);

impl Server {
    /// Starts a server on `root` and waits until it has indexed the
    /// workspace (the end of its `$/progress`), so tests see every script.
    pub fn start(root: &Path) -> Server {
        let server = Self::start_with(
            root,
            ClientCapabilities {
                window: Some(WindowClientCapabilities {
                    work_done_progress: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            },
        );
        loop {
            let m = server.recv();
            let end = matches!(&m, Message::Notification(n) if n.method == "$/progress"
                && n.params["value"]["kind"] == "end");
            server.stash(m);
            if end {
                break server;
            }
        }
    }

    pub fn start_with(root: &Path, capabilities: ClientCapabilities) -> Server {
        let (server, client) = Connection::memory();
        let thread = std::thread::spawn(move || gantry_lsp::run(server));
        let server = Server {
            client,
            thread: Some(thread),
            next_id: Cell::new(1),
            inbox: RefCell::new(VecDeque::new()),
            versions: RefCell::new(Default::default()),
        };
        let params = InitializeParams {
            capabilities,
            workspace_folders: Some(vec![WorkspaceFolder {
                uri: path_to_uri(root).unwrap(),
                name: "test".to_owned(),
            }]),
            ..Default::default()
        };
        server.request::<Initialize>(params);
        server.notify::<Initialized>(lsp_types::InitializedParams {});
        server
    }

    pub fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.client
            .sender
            .send(Notification::new(N::METHOD.to_owned(), params).into())
            .unwrap();
    }

    /// Sends a raw request and waits for its response.
    pub fn request_raw(&self, method: &str, params: Value) -> Response {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let id = RequestId::from(id);
        self.client
            .sender
            .send(Request::new(id.clone(), method.to_owned(), params).into())
            .unwrap();
        loop {
            match self.recv() {
                Message::Response(r) if r.id == id => return r,
                other => self.stash(other),
            }
        }
    }

    pub fn request<R: lsp_types::request::Request>(&self, params: R::Params) -> R::Result {
        let response = self.request_raw(R::METHOD, serde_json::to_value(params).unwrap());
        match response.response_result {
            Ok(value) => serde_json::from_value(value).unwrap(),
            Err(e) => panic!("{} failed: {e:?}", R::METHOD),
        }
    }

    fn recv(&self) -> Message {
        self.client
            .receiver
            .recv_timeout(TIMEOUT)
            .expect("the server answers")
    }

    /// Keeps a message for later; answers server-to-client requests.
    fn stash(&self, message: Message) {
        if let Message::Request(r) = &message {
            self.client
                .sender
                .send(Response::new_ok(r.id.clone(), Value::Null).into())
                .unwrap();
        }
        self.inbox.borrow_mut().push_back(message);
    }

    /// Opens a file of the project (language from its extension).
    pub fn open(&self, path: &Path) -> Uri {
        let text = std::fs::read_to_string(path).unwrap();
        let uri = path_to_uri(path).unwrap();
        let language = path.extension().unwrap().to_str().unwrap().to_owned();
        self.versions
            .borrow_mut()
            .insert(uri.as_str().to_owned(), 1);
        self.notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
            text_document: TextDocumentItem::new(uri.clone(), language, 1, text),
        });
        uri
    }

    /// Replaces `range` with `text` (incremental sync).
    pub fn edit(&self, uri: &Uri, range: Range, text: &str) {
        let version = {
            let mut versions = self.versions.borrow_mut();
            let v = versions.entry(uri.as_str().to_owned()).or_insert(1);
            *v += 1;
            *v
        };
        self.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
            text_document: VersionedTextDocumentIdentifier::new(uri.clone(), version),
            content_changes: vec![TextDocumentContentChangeEvent {
                range: Some(range),
                range_length: None,
                text: text.to_owned(),
            }],
        });
    }

    /// The next diagnostics published for `uri` (from the inbox first).
    pub fn diagnostics(&self, uri: &Uri) -> PublishDiagnosticsParams {
        let wanted = |m: &Message| {
            matches!(m, Message::Notification(n) if n.method == "textDocument/publishDiagnostics"
                && n.params["uri"].as_str() == Some(uri.as_str()))
        };
        let found = {
            let mut inbox = self.inbox.borrow_mut();
            inbox.iter().position(wanted).and_then(|i| inbox.remove(i))
        };
        let message = match found {
            Some(m) => m,
            None => loop {
                let m = self.recv();
                if wanted(&m) {
                    break m;
                }
                self.stash(m);
            },
        };
        let Message::Notification(n) = message else {
            unreachable!()
        };
        serde_json::from_value(n.params).unwrap()
    }

    /// Waits until every message sent so far has been handled.
    pub fn sync(&self) {
        self.request_raw("workspace/symbol", serde_json::json!({ "query": "" }));
    }

    pub fn notifications(&self, method: &str) -> Vec<Value> {
        self.inbox
            .borrow()
            .iter()
            .filter_map(|m| match m {
                Message::Notification(n) if n.method == method => Some(n.params.clone()),
                _ => None,
            })
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        self.request::<Shutdown>(());
        self.notify::<Exit>(());
        if let Some(thread) = self.thread.take() {
            thread
                .join()
                .expect("server thread")
                .expect("server ran cleanly");
        }
    }
}

/// Renders diagnostics one per line: `line:col severity code: message`.
pub fn render_diagnostics(params: &PublishDiagnosticsParams) -> String {
    let mut out = String::new();
    for d in &params.diagnostics {
        let code = match &d.code {
            Some(lsp_types::NumberOrString::String(s)) => s.clone(),
            _ => String::new(),
        };
        let severity = match d.severity {
            Some(lsp_types::DiagnosticSeverity::ERROR) => "error",
            Some(lsp_types::DiagnosticSeverity::WARNING) => "warning",
            Some(lsp_types::DiagnosticSeverity::HINT) => "hint",
            _ => "info",
        };
        out.push_str(&format!(
            "{}:{}-{}:{} {severity} {code}: {}\n",
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            d.message
        ));
    }
    out
}
