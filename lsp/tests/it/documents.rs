//! Documents as the editor edits them: incremental and full changes in
//! order, CRLF lines, a file without a final newline, Lua and Rhai open at
//! once; and the line lexer that reads unterminated strings against comments
//! and strings spanning lines, before the document is reparsed.

use expect_test::expect;
use lsp_types::request::{Completion, SignatureHelpRequest};
use lsp_types::{
    CompletionParams, CompletionResponse, PartialResultParams, Position, Range,
    SignatureHelpParams, TextDocumentIdentifier, Uri, WorkDoneProgressParams,
};

use crate::support::editor::{after, at, change, diagnostics_at_version, labels, one_script};
use crate::support::{Server, TABLE, project, render_diagnostics};

/// "Incremental text sync": several changes in one notification apply in
/// order, each against the text the previous one left.
#[test]
fn several_changes_in_one_notification_apply_in_order() {
    let text = "NotifyMessage(\"Player.Hurt\", 1.0)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert_eq!(render_diagnostics(&server.diagnostics(&uri)), "");
    change(
        &server,
        &uri,
        2,
        vec![
            // a new first line (the call moves to line 1) ...
            (
                Some(Range::new(Position::new(0, 0), Position::new(0, 0))),
                "local é = \"🎮\"\n",
            ),
            // ... then `Hurt` -> `Hrut` on the call's new line
            (
                Some(Range::new(Position::new(1, 22), Position::new(1, 26))),
                "Hrut",
            ),
            // ... then a third line appended at the end of the file.
            (
                Some(Range::new(Position::new(2, 0), Position::new(2, 0))),
                "ListenMessage(\"Inv.Gold\", self, function(a, b) end)\n",
            ),
        ],
    );
    expect_test::expect![[r#"
        1:14-1:27 warning unknown-key: `Player.Hrut` is sent but listened to nowhere and declared nowhere; did you mean `Player.Hurt`?
        2:14-2:24 warning unknown-key: `Inv.Gold` is listened to but sent nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
        2:40-2:46 warning listener-params: this listener declares 2 parameter(s) but `Inv.Gold` carries 1 (amount: int): a listener may only drop trailing parameters
    "#]]
    .assert_eq(&diagnostics_at_version(&server, &uri, 2));
    // A completion right after a further edit sees it.
    change(
        &server,
        &uri,
        3,
        vec![(
            Some(Range::new(Position::new(1, 22), Position::new(1, 26))),
            "",
        )],
    );
    assert_eq!(
        labels(&server, &uri, Position::new(1, 22)),
        ["Healed", "Hurt"]
    );
}

/// Edits at the very end of a file without a final newline, typed one
/// character at a time as an editor sends them, and completion there.
#[test]
fn typing_at_the_end_of_a_file_without_a_final_newline() {
    let text = "NotifyMessage(\"Player.Hurt\", 1.0)";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let mut line0 = text.len() as u32;
    let mut version = 1;
    for piece in [
        "\n",
        "G",
        "M",
        "P",
        ".",
        "NotifyObjectMessage",
        "(",
        "self",
        ",",
        " ",
        "\"",
        "I",
        "n",
        "v",
        ".",
    ] {
        version += 1;
        let (line, character) = if piece == "\n" {
            (0, line0)
        } else {
            (1, line0)
        };
        change(
            &server,
            &uri,
            version,
            vec![(
                Some(Range::new(
                    Position::new(line, character),
                    Position::new(line, character),
                )),
                piece,
            )],
        );
        line0 = if piece == "\n" {
            0
        } else {
            line0 + piece.len() as u32
        };
    }
    assert_eq!(
        labels(&server, &uri, Position::new(1, line0)),
        ["Gold", "Items"]
    );
    // Close the string and the call, then the final diagnostics.
    version += 1;
    change(
        &server,
        &uri,
        version,
        vec![(
            Some(Range::new(Position::new(1, line0), Position::new(1, line0))),
            "Gold\", \"x\")",
        )],
    );
    expect_test::expect![[r#"
        1:30-1:40 warning unknown-key: `Inv.Gold` is sent but listened to nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
        1:42-1:45 warning arg-type: argument 1 of `Inv.Gold` (amount) expects int, got string
    "#]]
    .assert_eq(&diagnostics_at_version(&server, &uri, version));
}

/// A CRLF file: diagnostics land on the right line and column, an edit at
/// the end of a line (before `\r\n`) and a completion there work.
#[test]
fn crlf_documents_keep_lines_columns_and_edits_right() {
    let text = "local a = 1\r\nNotifyMessage(\"Player.Hrut\", 1.0)\r\nNotifyMessage(\"Inv.\r\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let first = render_diagnostics(&server.diagnostics(&uri));
    assert!(
        first.starts_with("1:14-1:27 warning unknown-key"),
        "{first}"
    );
    // Completion at the end of line 2 (before its `\r\n`).
    assert_eq!(
        labels(&server, &uri, Position::new(2, 19)),
        ["Gold", "Items"]
    );
    // Finish line 2 at its end; fix line 1's key.
    change(
        &server,
        &uri,
        2,
        vec![
            (
                Some(Range::new(Position::new(2, 19), Position::new(2, 19))),
                "Gold\", 1.5)",
            ),
            (
                Some(Range::new(Position::new(1, 22), Position::new(1, 26))),
                "Hurt",
            ),
        ],
    );
    expect_test::expect![[r#"
        2:14-2:24 warning unknown-key: `Inv.Gold` is sent but listened to nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
        2:26-2:29 warning arg-type: argument 1 of `Inv.Gold` (amount) expects int, got float
    "#]]
    .assert_eq(&diagnostics_at_version(&server, &uri, 2));
}

/// A full-text change (no range) after incremental ones replaces the
/// document, and a Rhai document follows incremental edits too.
#[test]
fn full_replacement_after_incremental_edits_and_rhai_incremental_edits() {
    let lua = "NotifyMessage(\"Player.Hurt\", 1.0)\n";
    let rhai = "NotifyMessage(\"Player.Hurt\", 1.0);\n";
    let p = one_script("main.lua", lua);
    std::fs::write(p.path("main.rhai"), rhai).unwrap();
    let server = Server::start(p.dir.path());
    let l = server.open(&p.path("main.lua"));
    let r = server.open(&p.path("main.rhai"));
    change(
        &server,
        &l,
        2,
        vec![
            (
                Some(Range::new(Position::new(0, 0), Position::new(0, 0))),
                "\n\n",
            ),
            (None, "NotifyMessage(\"Inv.Gold\", \"x\")\n"),
        ],
    );
    change(
        &server,
        &r,
        2,
        vec![
            (
                Some(Range::new(Position::new(0, 29), Position::new(0, 32))),
                "\"y\"",
            ),
            (
                Some(Range::new(Position::new(1, 0), Position::new(1, 0))),
                "NotifyMessage(\"Inv.Gold\", 1, 2);\n",
            ),
        ],
    );
    expect_test::expect![[r#"
        0:14-0:24 warning unknown-key: `Inv.Gold` is sent but listened to nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
        0:26-0:29 warning arg-type: argument 1 of `Inv.Gold` (amount) expects int, got string
    "#]]
    .assert_eq(&diagnostics_at_version(&server, &l, 2));
    expect_test::expect![[r#"
        0:29-0:32 error arg-type: argument 1 of `Player.Hurt` (dmg) expects float, got string
        1:14-1:24 warning unknown-key: `Inv.Gold` is sent but listened to nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
        1:29-1:30 warning too-many-args: `Inv.Gold` carries 1 parameter(s) (amount: int) but this call passes 2
    "#]]
    .assert_eq(&diagnostics_at_version(&server, &r, 2));
}

/// Documents of both languages open at once: each gets its own diagnostics
/// and completion, and closing one clears only its diagnostics.
#[test]
fn lua_and_rhai_documents_open_at_once_are_served_independently() {
    let lua = "NotifyMessage(\"Player.Hrut\", 1.0)\nNotifyMessage(\"Inv.\")\n";
    let rhai = "NotifyMessage(\"Inv.Gold\", 1.5);\nNotifyMessage(\"Player.\");\n";
    let p = one_script("a.lua", lua);
    std::fs::write(p.path("b.rhai"), rhai).unwrap();
    let server = Server::start(p.dir.path());
    let l = server.open(&p.path("a.lua"));
    let r = server.open(&p.path("b.rhai"));
    let dl = render_diagnostics(&server.diagnostics(&l));
    let dr = render_diagnostics(&server.diagnostics(&r));
    assert!(
        dl.contains("`Player.Hrut`") && !dl.contains("Inv.Gold"),
        "{dl}"
    );
    assert!(
        dr.contains("expects int, got float") && !dr.contains("Hrut"),
        "{dr}"
    );
    assert_eq!(
        labels(&server, &l, after(lua, "Inv.", 0)),
        ["Gold", "Items"]
    );
    assert_eq!(
        labels(&server, &r, after(rhai, "Player.", 0)),
        ["Healed", "Hurt"]
    );
    server.notify::<lsp_types::notification::DidCloseTextDocument>(
        lsp_types::DidCloseTextDocumentParams {
            text_document: TextDocumentIdentifier::new(l.clone()),
        },
    );
    assert!(server.diagnostics(&l).diagnostics.is_empty());
    // The other document still answers.
    assert_eq!(
        labels(&server, &r, after(rhai, "Player.", 0)),
        ["Healed", "Hurt"]
    );
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
        0:30-0:44 warning unknown-key: `Player.Hurtz` is sent but listened to nowhere and declared nowhere; did you mean `Player.Hurt`?
    "#]]
    .assert_eq(&render_diagnostics(&server.diagnostics(&uri)));
}

fn pos_after(text: &str, marker: &str) -> Position {
    let offset = text.find(marker).unwrap_or_else(|| panic!("{marker:?}")) + marker.len();
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .encode_utf16()
        .count() as u32;
    Position::new(line, column)
}

fn labels_at_position(server: &Server, uri: &Uri, position: Position) -> Vec<String> {
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

/// The support table_with_a_four_argument_key plus `Ui.Four`, a key with four parameters.
fn table_with_a_four_argument_key() -> String {
    TABLE.replace(
        "\"Player.Healed\"",
        r#""Ui.Four": { "kind": "event", "origin": "declared", "params": [ { "name": "a", "type": "any" }, { "name": "b", "type": "any" }, { "name": "c", "type": "any" }, { "name": "d", "type": "any" } ] },
    "Player.Healed""#,
    )
}

fn server_with(files: &[(&str, &str)]) -> (crate::support::Project, Server) {
    let p = project(&format!(
        "//- /.gantry/signatures.json\n{}",
        table_with_a_four_argument_key()
    ));
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
        let got = labels_at_position(&server, &uri, pos_after(text, "Inv."));
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
        labels_at_position(&server, &uri, Position::new(1, 24)),
        Vec::<String>::new()
    );
    server.edit(
        &uri,
        Range::new(Position::new(3, 11), Position::new(3, 11)),
        " NotifyMessage(\"Inv.",
    );
    assert_eq!(
        labels_at_position(&server, &uri, Position::new(3, 31)),
        ["Gold", "Items"]
    );
}

/// A Rhai closure's parameter list and a Lua table_with_a_four_argument_key are frames of their own:
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
