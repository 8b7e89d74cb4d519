//! The signature table the server reads: a change refreshes both languages'
//! diagnostics and completion (even at the same size and mtime), a table
//! made after a document opened is found, and a corrupt one is reported,
//! not fatal.

use expect_test::expect;
use gantry_lsp::uri::path_to_uri;
use lsp_types::{Position, Range};

use crate::support::editor::{after, change, diagnostics_at_version, labels, one_script, table};
use crate::support::{Server, project, render_diagnostics};

/// "when that file changes, diagnostics of open documents are refreshed":
/// a Lua and a Rhai document on one table both get fresh diagnostics, and
/// completion offers the new key.
#[test]
fn a_changed_table_refreshes_both_languages_and_completion() {
    let lua = "NotifyMessage(\"Player.Jumped\")\n";
    let rhai = "NotifyMessage(\"Player.Jumped\");\nNotifyMessage(\"Player.Hurt\", 1.0);\n";
    let p = one_script("a.lua", lua);
    std::fs::write(p.path("b.rhai"), rhai).unwrap();
    let server = Server::start(p.dir.path());
    let l = server.open(&p.path("a.lua"));
    let r = server.open(&p.path("b.rhai"));
    assert!(render_diagnostics(&server.diagnostics(&l)).contains("unknown-key"));
    assert!(render_diagnostics(&server.diagnostics(&r)).contains("unknown-key"));
    let new_table = table().replace(
        "\"Player.Healed\"",
        "\"Player.Jumped\": { \"origin\": \"declared\", \"params\": [] },\n    \"Player.Healed\"",
    );
    std::fs::write(p.path(".gantry/signatures.json"), new_table).unwrap();
    assert_eq!(render_diagnostics(&server.diagnostics(&l)), "");
    assert_eq!(render_diagnostics(&server.diagnostics(&r)), "");
    assert_eq!(
        labels(&server, &r, after(rhai, "Player.", 1)),
        ["Healed", "Hurt", "Jumped"]
    );
}

/// "The table is found by walking up from the document": a table that
/// appears after the document was opened is found and used.
#[test]
fn a_table_created_after_the_document_was_opened_is_found() {
    let p = project("//- /mods/m/main.lua\nNotifyMessage(\"Player.Hrut\", 1.0)\n");
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("mods/m/main.lua"));
    // Without a table, nothing near `Player.Hrut` is known.
    assert!(!render_diagnostics(&server.diagnostics(&uri)).contains("did you mean"));
    std::fs::create_dir_all(p.path("mods/.gantry")).unwrap();
    std::fs::write(p.path("mods/.gantry/signatures.json"), table()).unwrap();
    assert!(render_diagnostics(&server.diagnostics(&uri)).contains("did you mean `Player.Hurt`"));
}

/// "when that file changes, diagnostics of open documents are refreshed":
/// a client that watches files says the table changed
/// (`workspace/didChangeWatchedFiles`); the server must reload it even when
/// the file's size and modification time look the same (a same-length edit
/// within the file system's timestamp granularity, simulated here by
/// restoring the old mtime).
#[test]
fn a_table_change_the_client_reports_is_reloaded_even_with_the_same_size_and_mtime() {
    let text = "NotifyMessage(\"Player.Hurx\", 1.0, self)\n";
    let p = one_script("main.lua", text);
    let table_path = p.path(".gantry/signatures.json");
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert!(render_diagnostics(&server.diagnostics(&uri)).contains("unknown-key"));
    let before = std::fs::metadata(&table_path).unwrap().modified().unwrap();
    let renamed = table().replace("\"Player.Hurt\"", "\"Player.Hurx\"");
    assert_eq!(renamed.len(), table().len());
    std::fs::write(&table_path, renamed).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&table_path)
        .unwrap()
        .set_modified(before)
        .unwrap();
    server.notify::<lsp_types::notification::DidChangeWatchedFiles>(
        lsp_types::DidChangeWatchedFilesParams {
            changes: vec![lsp_types::FileEvent::new(
                path_to_uri(&table_path).unwrap(),
                lsp_types::FileChangeType::CHANGED,
            )],
        },
    );
    // Whatever is published next (a trivial edit forces a publish) must
    // describe the new table.
    change(
        &server,
        &uri,
        2,
        vec![(
            Some(Range::new(Position::new(1, 0), Position::new(1, 0))),
            "\n",
        )],
    );
    assert_eq!(diagnostics_at_version(&server, &uri, 2), "");
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
    let table = crate::support::TABLE.replace(
        "\"Player.Healed\"",
        "\"Player.Jumped\": { \"origin\": \"declared\", \"params\": [] },\n    \"Player.Healed\"",
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
