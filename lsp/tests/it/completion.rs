//! Key completion: in the key argument of every API function of both
//! languages (global and `GMP` forms, unterminated strings, single quotes,
//! calls over several lines), replacing only the segment typed, in UTF-16
//! columns; never inside a comment or a string opened above; a listener
//! argument completes to a snippet with the recorded names.

use expect_test::{Expect, expect};
use gantry_host::ApiFunction;
use lsp_types::request::Completion;
use lsp_types::{
    CompletionParams, CompletionResponse, CompletionTextEdit, PartialResultParams, Position, Range,
    TextDocumentIdentifier, WorkDoneProgressParams,
};

use crate::support::editor::{after, completion_items, labels, lua_call, one_script, rhai_call};
use crate::support::{Project, Server, project, render_diagnostics};

/// Every API function called in both forms (global, unless `GMP`-only, and
/// `GMP`) with the key `"Player.H`, one call a line in `file`, completes
/// the key's last segment with the keys under `Player`.
fn assert_key_completion_in_every_api_call(
    file: &str,
    call: fn(ApiFunction, bool, &str) -> String,
) {
    let mut lines = Vec::new();
    for f in ApiFunction::ALL {
        if !f.gmp_only() {
            lines.push(call(f, false, "Player.H"));
        }
        lines.push(call(f, true, "Player.H"));
    }
    let text = lines.join("\n") + "\n";
    let p = one_script(file, &text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path(file));
    let mut wrong = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let column = line.find("Player.H").unwrap() + "Player.H".len();
        let got = labels(&server, &uri, Position::new(n as u32, column as u32));
        // Only the keys whose kind fits the function: both events in a
        // send or listen, the one only observed as an event in a store (a
        // run makes it a store), none in a hook, row or request call.
        let function = ApiFunction::ALL
            .into_iter()
            .find(|f| line.contains(&format!("{f}(")))
            .unwrap();
        let expected: &[&str] = match function {
            ApiFunction::RunHook
            | ApiFunction::ListenHook
            | ApiFunction::StoredArray
            | ApiFunction::ListenRowMessage
            | ApiFunction::Request => &[],
            ApiFunction::StoreObjectMessage
            | ApiFunction::OnceObjectMessage
            | ApiFunction::RemoveStoredObjectMessage => &["Healed"],
            _ => &["Healed", "Hurt"],
        };
        if got != expected {
            wrong.push(format!("{line}: {got:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "no key completion in:\n{}",
        wrong.join("\n")
    );
}

/// "Key completion inside the key argument of every API call, by
/// hierarchy (after `Inv.` the keys under `Inv`)"; the API exists
/// "as globals and as fields of the `GMP` table".
#[test]
fn key_completion_in_the_key_argument_of_every_lua_api_function_global_and_gmp_forms() {
    assert_key_completion_in_every_api_call("main.lua", lua_call);
}

/// The same rule for Rhai: global functions and the `GMP::` module form.
#[test]
fn key_completion_in_the_key_argument_of_every_rhai_api_function_global_and_gmp_forms() {
    assert_key_completion_in_every_api_call("main.rhai", rhai_call);
}

/// "It works while the string is still unterminated": the Rhai `GMP::` form
/// and a Lua `GMP.` listen form, each typed at the end of a file below code.
#[test]
fn key_completion_in_unterminated_strings_of_gmp_forms_in_both_languages() {
    let rhai = "let x = 1;\nGMP::ListenObjectMessage(this, \"Inv.";
    let p = one_script("main.rhai", rhai);
    let lua = "local x = 1\nGMP.ListenRowMessage(self, \"Inv.";
    std::fs::write(p.path("main.lua"), lua).unwrap();
    let server = Server::start(p.dir.path());
    let r = server.open(&p.path("main.rhai"));
    let l = server.open(&p.path("main.lua"));
    assert_eq!(
        labels(&server, &r, after(rhai, "Inv.", 0)),
        ["Gold", "Items"]
    );
    // A row listen takes a collection only.
    assert_eq!(labels(&server, &l, after(lua, "Inv.", 0)), ["Items"]);
}

/// "by hierarchy": after a partial segment below two dots the next
/// segments are offered, and the edit replaces just the segment under the
/// cursor (in UTF-16 columns, with non-ASCII text before it).
#[test]
fn completion_after_a_partial_segment_replaces_only_that_segment_in_utf16_columns() {
    let text = "local s = \"é🎮\" NotifyMessage(\"Ui.De\")\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let items = completion_items(&server, &uri, after(text, "Ui.De", 0));
    let rendered: Vec<String> = items
        .iter()
        .map(|i| match &i.text_edit {
            Some(CompletionTextEdit::Edit(e)) => format!(
                "{} {}:{}-{}:{} {}",
                i.label,
                e.range.start.line,
                e.range.start.character,
                e.range.end.line,
                e.range.end.character,
                e.new_text
            ),
            _ => format!("{} (no edit)", i.label),
        })
        .collect();
    // `local s = "é🎮" ` is 16 UTF-16 units, `NotifyMessage("Ui.` 18 more.
    assert_eq!(rendered, ["Deep 0:34-0:36 Deep", "Show 0:34-0:36 Show"]);
    // Below two dots: the leaf.
    let text2 = "NotifyMessage(\"Ui.Deep.\")\n";
    std::fs::write(p.path("two.lua"), text2).unwrap();
    let uri2 = server.open(&p.path("two.lua"));
    assert_eq!(labels(&server, &uri2, after(text2, "Deep.", 0)), ["Leaf"]);
}

/// Listener completion for the `GMP.` / `GMP::` forms.
#[test]
fn listener_snippets_for_gmp_forms() {
    let lua = "GMP.ListenObjectMessage(self, \"Player.Hurt\", self, )\n";
    let rhai = "GMP::ListenMessage(\"Player.Hurt\", this, );\n";
    let p = one_script("main.lua", lua);
    std::fs::write(p.path("main.rhai"), rhai).unwrap();
    let server = Server::start(p.dir.path());
    let l = server.open(&p.path("main.lua"));
    let r = server.open(&p.path("main.rhai"));
    assert_eq!(
        labels(&server, &l, after(lua, "\"Player.Hurt\", self, ", 0)),
        ["function(dmg, causer) end"]
    );
    assert_eq!(
        labels(&server, &r, after(rhai, "this, ", 0)),
        ["|dmg, causer| {}"]
    );
}

// Strings and comments that span lines (the line lexer sees one line).

/// The scanner the server shares: "Left alone: strings and
/// comments (including long brackets)", and no answers inside a
/// comment. The line lexer behind unterminated strings
/// sees one line: a Rhai block comment (opened above, or on the line), a
/// Lua long string and a Rhai back-tick string opened above all hold text,
/// not calls — no key completion inside them.
#[test]
fn no_completion_inside_comments_or_strings_opened_before_the_line() {
    let cases = [
        (
            "block_above.rhai",
            "/* a note\nNotifyMessage(\"Inv.\n*/\nNotifyMessage(\"Inv.Gold\", 1);\n",
        ),
        (
            "block_same_line.rhai",
            "/* NotifyMessage(\"Inv.\nstill comment */\nNotifyMessage(\"Inv.Gold\", 1);\n",
        ),
        (
            "long_string.lua",
            "local s = [[\nNotifyMessage(\"Inv.\n]]\nNotifyMessage(\"Inv.Gold\", 1)\n",
        ),
        (
            "backtick.rhai",
            "let s = `\nNotifyMessage(\"Inv.\n`;\nNotifyMessage(\"Inv.Gold\", 1);\n",
        ),
    ];
    let p = one_script("placeholder.txt", "");
    for (name, text) in cases {
        std::fs::write(p.path(name), text).unwrap();
    }
    let server = Server::start(p.dir.path());
    let mut answered = Vec::new();
    for (name, text) in cases {
        let uri = server.open(&p.path(name));
        let got = labels(&server, &uri, after(text, "Inv.", 0));
        if !got.is_empty() {
            answered.push(format!("{name}: {got:?}"));
        }
    }
    assert!(
        answered.is_empty(),
        "completion inside a comment or string:\n{}",
        answered.join("\n")
    );
}

/// Key completion in a Lua single-quoted key and in a key on the line after
/// the call's opening parenthesis (a multi-line call, closed).
#[test]
fn key_completion_in_single_quotes_and_in_a_closed_multiline_call() {
    let text =
        "NotifyMessage('Inv.')\nNotifyObjectMessage(\n    self,\n    \"Player.\",\n    1.0\n)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert_eq!(
        labels(&server, &uri, after(text, "Inv.", 0)),
        ["Gold", "Items"]
    );
    assert_eq!(
        labels(&server, &uri, after(text, "Player.", 0)),
        ["Healed", "Hurt"]
    );
}

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
        1:26-1:32 hint malformed-key: message key `Inv.` has an empty segment at byte 4
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
        2:30-2:36 hint malformed-key: message key `Inv.` has an empty segment at byte 4
    "#]]
    .assert_eq(&render_diagnostics(&server.diagnostics(&uri)));
}

const KINDS_MANIFEST: &str = r#"[mod]
name = "kinds"

[structs.Item]
fields = ["id: int"]

[keys."Inv.Gold"]
kind = "store"
params = ["amount: int"]

[keys."Inv.Opened"]
kind = "event"

[keys."Inv.Rows"]
kind = "table"
params = ["items: array<Item>"]

[keys."Inv.Check"]
kind = "hook"
params = ["amount: int"]
"#;

/// Completion offers only the keys whose kind fits the function called:
/// no store key inside `RunHook`, no event key inside `GMP.StoredArray`.
#[test]
fn completion_offers_only_keys_whose_kind_fits_the_function() {
    let lua = "GMP.RunHook(\"Inv.\")\nGMP.StoredArray(self, \"Inv.\")\nNotifyMessage(\"Inv.\")\nStoreObjectMessage(self, \"Inv.\")\n";
    let p = project(&format!(
        "//- /mod.toml\n{KINDS_MANIFEST}\n//- /main.lua\n{lua}"
    ));
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let at = |n| labels(&server, &uri, after(lua, "\"Inv.", n));
    assert_eq!(at(0), ["Check"]);
    assert_eq!(at(1), ["Rows"]);
    assert_eq!(at(2), ["Gold", "Opened", "Rows"]);
    assert_eq!(at(3), ["Gold", "Rows"]);
}
