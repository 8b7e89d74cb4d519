//! Never crashes: random bytes as documents and random edit sequences keep
//! the server answering.

mod support;

use lsp_types::request::{Completion, HoverRequest, SignatureHelpRequest, WorkspaceSymbolRequest};
use lsp_types::{
    CompletionParams, HoverParams, PartialResultParams, Position, Range, SignatureHelpParams,
    TextDocumentIdentifier, TextDocumentPositionParams, WorkDoneProgressParams,
    WorkspaceSymbolParams,
};
use proptest::prelude::*;
use support::{Server, project, render_diagnostics};

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

// ----- a mod's files: the table and scripts are read without trusting them --

/// Runs `f` on its own thread; fails if it has not returned in 5 s (a read
/// that blocks on a FIFO shows as a failure, not a hang).
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(5))
        .expect("blocked: the call did not return within 5 s")
}

#[cfg(unix)]
fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
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
    let files = within_seconds(move || gantry_lsp::check::check_dir(&dir).unwrap());
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
    mkfifo(&dir.path().join(".gantry/signatures.json"));
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
    let err = gantry_lsp::check::check_dir(dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "latin1.lua is not valid UTF-8 text (line 2)"
    );
}

#[cfg(unix)]
#[test]
fn the_server_keeps_answering_when_the_workspace_table_is_a_fifo() {
    let dir = mod_folder();
    mkfifo(&dir.path().join(".gantry/signatures.json"));
    let root = dir.path().to_owned();
    let answered = within_seconds(move || {
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
