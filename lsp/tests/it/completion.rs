//! Audit 11: the language server probed as an editor uses it, against issue
//! #8 ("The language server: completion, signature help and diagnostics from
//! the table"), DESIGN.md ("Language server and stubs") and reference 002
//! ("scripts get completion and red squiggles"). Each test is named after the
//! rule it holds.

mod support;

use std::path::Path;

use gantry_host::ApiFunction;
use gantry_lsp::uri::path_to_uri;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::DidChangeTextDocument;
use lsp_types::request::{CodeActionRequest, Completion, HoverRequest, SignatureHelpRequest};
use lsp_types::{
    CodeActionContext, CodeActionOrCommand, CodeActionParams, CompletionParams, CompletionResponse,
    CompletionTextEdit, DidChangeTextDocumentParams, HoverContents, HoverParams,
    PartialResultParams, Position, Range, SignatureHelpParams, TextDocumentContentChangeEvent,
    TextDocumentIdentifier, TextDocumentPositionParams, Uri, VersionedTextDocumentIdentifier,
    WorkDoneProgressParams,
};
use serde_json::{Value, json};
use support::{Server, project, render_diagnostics};

/// The support table plus a struct-taking key and a three-level key.
fn table() -> String {
    support::TABLE.replace(
        "\"Player.Healed\"",
        r#""Ui.Show": { "kind": "event", "origin": "declared", "params": [ { "name": "item", "type": "Item" }, { "name": "count", "type": "int" } ] },
    "Ui.Deep.Leaf": { "kind": "event", "origin": "declared", "params": [] },
    "Player.Healed""#,
    )
}

/// A project with the audit table and one script `name` holding `text`.
fn one_script(name: &str, text: &str) -> support::Project {
    let p = project("//- /keep.txt\n");
    std::fs::create_dir_all(p.path(".gantry")).unwrap();
    std::fs::write(p.path(".gantry/signatures.json"), table()).unwrap();
    std::fs::write(p.path(name), text).unwrap();
    p
}

/// The LSP position (UTF-16 column) of byte `offset` in `text`.
fn pos(text: &str, offset: usize) -> Position {
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let last = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    Position::new(line, last.encode_utf16().count() as u32)
}

/// The position just after the `n`th (0-based) occurrence of `marker`.
fn after(text: &str, marker: &str, n: usize) -> Position {
    let (i, _) = text
        .match_indices(marker)
        .nth(n)
        .unwrap_or_else(|| panic!("{marker:?} #{n} in {text:?}"));
    pos(text, i + marker.len())
}

fn at(uri: &Uri, position: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams::new(TextDocumentIdentifier::new(uri.clone()), position)
}

fn completion_items(
    server: &Server,
    uri: &Uri,
    position: Position,
) -> Vec<lsp_types::CompletionItem> {
    match server.request::<Completion>(CompletionParams {
        text_document_position: at(uri, position),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: None,
    }) {
        Some(CompletionResponse::Array(items)) => items,
        Some(CompletionResponse::List(list)) => list.items,
        None => Vec::new(),
    }
}

fn labels(server: &Server, uri: &Uri, position: Position) -> Vec<String> {
    completion_items(server, uri, position)
        .into_iter()
        .map(|i| i.label)
        .collect()
}

/// (signature label, active parameter, the active parameter's text).
fn signature(server: &Server, uri: &Uri, position: Position) -> Option<(String, u32, String)> {
    let help = server.request::<SignatureHelpRequest>(SignatureHelpParams {
        context: None,
        text_document_position_params: at(uri, position),
        work_done_progress_params: WorkDoneProgressParams::default(),
    })?;
    let sig = help
        .signatures
        .get(help.active_signature.unwrap_or(0) as usize)?;
    let active = help.active_parameter.or(sig.active_parameter)?;
    let text = match &sig.parameters.as_ref()?.get(active as usize)?.label {
        lsp_types::ParameterLabel::Simple(s) => s.clone(),
        lsp_types::ParameterLabel::LabelOffsets([a, b]) => {
            let units: Vec<u16> = sig.label.encode_utf16().collect();
            String::from_utf16(&units[*a as usize..*b as usize]).unwrap()
        }
    };
    Some((sig.label.clone(), active, text))
}

fn active_param(server: &Server, uri: &Uri, position: Position) -> Option<String> {
    signature(server, uri, position).map(|(_, _, text)| text)
}

/// Sends one didChange with several content changes.
fn change(server: &Server, uri: &Uri, version: i32, changes: Vec<(Option<Range>, &str)>) {
    server.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
        text_document: VersionedTextDocumentIdentifier::new(uri.clone(), version),
        content_changes: changes
            .into_iter()
            .map(|(range, text)| TextDocumentContentChangeEvent {
                range,
                range_length: None,
                text: text.to_owned(),
            })
            .collect(),
    });
}

/// The diagnostics published for `uri` at `version`.
fn diagnostics_at_version(server: &Server, uri: &Uri, version: i32) -> String {
    loop {
        let published = server.diagnostics(uri);
        if published.version == Some(version) {
            return render_diagnostics(&published);
        }
    }
}

fn lua_call(function: ApiFunction, gmp: bool, key: &str) -> String {
    let name = if gmp {
        format!("GMP.{function}")
    } else {
        function.to_string()
    };
    if function.key_index() == 0 {
        format!("{name}(\"{key}\")")
    } else {
        format!("{name}(self, \"{key}\")")
    }
}

fn rhai_call(function: ApiFunction, gmp: bool, key: &str) -> String {
    let name = if gmp {
        format!("GMP::{function}")
    } else {
        function.to_string()
    };
    if function.key_index() == 0 {
        format!("{name}(\"{key}\");")
    } else {
        format!("{name}(this, \"{key}\");")
    }
}

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
        if got != ["Healed", "Hurt"] {
            wrong.push(format!("{line}: {got:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "no key completion in:\n{}",
        wrong.join("\n")
    );
}

/// Issue #8: "Key completion inside the key argument of every API call, by
/// hierarchy (after `Inv.` the keys under `Inv`)". DESIGN: the API exists
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
    assert_eq!(
        labels(&server, &l, after(lua, "Inv.", 0)),
        ["Gold", "Items"]
    );
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

/// "Signature help for the arguments after the key, with the active
/// parameter": every position of a Lua and a Rhai object send.
#[test]
fn signature_help_marks_each_argument_position_after_the_key_in_both_languages() {
    let lua = "NotifyObjectMessage(self, \"Player.Hurt\", 1.5, self)\n";
    let rhai = "NotifyObjectMessage(this, \"Player.Hurt\", 1.5, this);\n";
    let p = one_script("main.lua", lua);
    std::fs::write(p.path("main.rhai"), rhai).unwrap();
    let server = Server::start(p.dir.path());
    for (name, text, me) in [("main.lua", lua, "self"), ("main.rhai", rhai, "this")] {
        let uri = server.open(&p.path(name));
        let dmg = after(text, "1.", 0);
        let causer = after(text, &format!(", {me}"), 0);
        let causer = Position::new(causer.line, causer.character - 1);
        assert_eq!(
            active_param(&server, &uri, dmg).as_deref(),
            Some("dmg: float"),
            "{name}"
        );
        assert_eq!(
            active_param(&server, &uri, causer).as_deref(),
            Some("causer: object"),
            "{name}"
        );
    }
}

/// Signature help after a nested (non-API) call argument: the nested call's
/// commas and parentheses do not move the active parameter; closed call and
/// one still being typed (no `)` yet).
#[test]
fn signature_help_after_a_nested_call_argument() {
    let closed = "NotifyObjectMessage(self, \"Player.Hurt\", math.max(1, 2), )\n";
    let open = "local x = 1\nNotifyObjectMessage(self, \"Player.Hurt\", math.max(1, 2), ";
    let p = one_script("closed.lua", closed);
    std::fs::write(p.path("open.lua"), open).unwrap();
    let server = Server::start(p.dir.path());
    let c = server.open(&p.path("closed.lua"));
    let o = server.open(&p.path("open.lua"));
    assert_eq!(
        active_param(&server, &c, after(closed, "2), ", 0)).as_deref(),
        Some("causer: object")
    );
    assert_eq!(
        active_param(&server, &o, after(open, "2), ", 0)).as_deref(),
        Some("causer: object")
    );
}

/// Signature help after a table constructor argument, in a closed call and
/// in one still being typed (no `)`): the constructor's commas are its own.
#[test]
fn signature_help_after_a_table_constructor_argument() {
    let closed_lua = "NotifyObjectMessage(self, \"Ui.Show\", { id = 1, x = 2 }, )\n";
    let closed_rhai = "NotifyObjectMessage(this, \"Ui.Show\", #{ id: 1, x: 2 }, );\n";
    let lua = "local x = 1\nNotifyObjectMessage(self, \"Ui.Show\", { id = 1, x = 2 }, ";
    let rhai = "let x = 1;\nNotifyObjectMessage(this, \"Ui.Show\", #{ id: 1, x: 2 }, ";
    let p = one_script("main.lua", lua);
    std::fs::write(p.path("main.rhai"), rhai).unwrap();
    std::fs::write(p.path("closed.lua"), closed_lua).unwrap();
    std::fs::write(p.path("closed.rhai"), closed_rhai).unwrap();
    let server = Server::start(p.dir.path());
    for (name, text) in [("closed.lua", closed_lua), ("closed.rhai", closed_rhai)] {
        let uri = server.open(&p.path(name));
        assert_eq!(
            active_param(&server, &uri, after(text, "}, ", 0)).as_deref(),
            Some("count: int"),
            "{name}"
        );
    }
    let l = server.open(&p.path("main.lua"));
    let r = server.open(&p.path("main.rhai"));
    assert_eq!(
        active_param(&server, &l, after(lua, "}, ", 0)).as_deref(),
        Some("count: int"),
        "lua"
    );
    assert_eq!(
        active_param(&server, &r, after(rhai, "}, ", 0)).as_deref(),
        Some("count: int"),
        "rhai"
    );
}

/// Signature help is for the arguments *after* the key: none at the source
/// or inside the key (the key position has completion instead).
#[test]
fn signature_help_is_not_offered_at_the_source_or_inside_the_key() {
    let text = "NotifyObjectMessage(self, \"Player.Hurt\", 1.5)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert_eq!(signature(&server, &uri, after(text, "sel", 0)), None);
    assert_eq!(signature(&server, &uri, after(text, "Player.Hu", 0)), None);
}

/// Diagnostics in a Rhai script with non-ASCII text before each site: the
/// ranges are in UTF-16 columns (LSP's default position encoding).
#[test]
fn rhai_diagnostic_ranges_are_utf16_after_non_ascii_text() {
    let text = "let s = \"🎮é\"; NotifyMessage(\"Player.Hurt\", \"ouch\", this, 3);\n\
                let t = \"ü\"; NotifyMessage(\"Player.Hrut\", 1.0);\n\
                let u = \"🎮\"; NotifyMessage(k, 1.0);\n";
    let p = one_script("main.rhai", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.rhai"));
    // line 0: `let s = "🎮é"; ` is 15 UTF-16 units, `NotifyMessage(` 14.
    expect_test::expect![[r#"
        0:44-0:50 error arg-type: argument 1 of `Player.Hurt` (dmg) expects float, got string
        0:58-0:59 error too-many-args: `Player.Hurt` carries 2 parameter(s) (dmg: float, causer: object) but this call passes 3
        1:27-1:40 warning unknown-key: unknown key `Player.Hrut`: it is not in the signature table; did you mean `Player.Hurt`?
        2:28-2:29 hint non-literal-key: the key of this NotifyMessage call is not a string literal: it cannot be baked and is resolved on every call
    "#]]
    .assert_eq(&render_diagnostics(&server.diagnostics(&uri)));
}

/// The quick fix for an unknown key in Rhai edits the key's text, in UTF-16
/// columns, after non-ASCII text.
#[test]
fn rhai_unknown_key_quick_fix_replaces_the_key_text_in_utf16_columns() {
    let text = "let t = \"🎮\"; ListenMessage(\"Player.Hrut\", this, |d| {});\n";
    let p = one_script("main.rhai", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.rhai"));
    server.diagnostics(&uri);
    let actions = server
        .request::<CodeActionRequest>(CodeActionParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
            range: Range::new(Position::new(0, 30), Position::new(0, 30)),
            context: CodeActionContext::default(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .unwrap_or_default();
    let edits: Vec<String> = actions
        .iter()
        .filter_map(|a| match a {
            CodeActionOrCommand::CodeAction(a) => a.edit.as_ref(),
            _ => None,
        })
        .flat_map(|e| e.changes.as_ref().unwrap().values().flatten())
        .map(|e| {
            format!(
                "{}:{}-{}:{} {}",
                e.range.start.line,
                e.range.start.character,
                e.range.end.line,
                e.range.end.character,
                e.new_text
            )
        })
        .collect();
    // `let t = "🎮"; ` is 14 units, `ListenMessage("` 15.
    assert_eq!(edits, ["0:29-0:40 Player.Hurt"]);
}

/// Lua diagnostics after non-ASCII text: too many arguments (the extra
/// ones), a listener declaring more parameters than the message carries.
#[test]
fn lua_arity_and_listener_ranges_are_utf16_after_non_ascii_text() {
    let text = "local s = \"🎮\" NotifyMessage(\"Player.Healed\", 1, 2, 3)\n\
                local t = \"é\" ListenMessage(\"Player.Healed\", self, function(a, b) end)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    expect_test::expect![[r#"
        0:49-0:53 warning too-many-args: `Player.Healed` carries 1 parameter(s) (amount: int) but this call passes 3
        1:51-1:69 warning listener-params: this listener declares 2 parameter(s) but `Player.Healed` carries 1 (amount: int): a listener may only drop trailing parameters
    "#]]
    .assert_eq(&render_diagnostics(&server.diagnostics(&uri)));
}

/// "a non-literal key (a hint: that call cannot be baked)" — a
/// concatenation is not a literal; a number is not a key at all.
#[test]
fn concatenated_keys_are_non_literal_hints_and_number_keys_are_malformed() {
    let text = "NotifyMessage(\"Player.\" .. x, 1.0)\nNotifyMessage(42)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let rendered = render_diagnostics(&server.diagnostics(&uri));
    let codes: Vec<&str> = rendered
        .lines()
        .map(|l| l.split_whitespace().nth(2).unwrap_or(""))
        .collect();
    assert_eq!(codes, ["non-literal-key:", "malformed-key:"], "{rendered}");
}

/// A syntax error further down does not hide the findings of the calls
/// above it (the scanner walks tree-sitter's recovered tree).
#[test]
fn a_syntax_error_below_does_not_hide_diagnostics_above() {
    let text = "NotifyMessage(\"Player.Hrut\", 1.0)\nlocal function f(\n";
    let p = one_script("main.lua", text);
    let rhai = "NotifyMessage(\"Player.Hrut\", 1.0);\nlet = ;\n";
    std::fs::write(p.path("main.rhai"), rhai).unwrap();
    let server = Server::start(p.dir.path());
    let l = server.open(&p.path("main.lua"));
    let r = server.open(&p.path("main.rhai"));
    assert!(
        render_diagnostics(&server.diagnostics(&l)).contains("unknown-key"),
        "lua"
    );
    assert!(
        render_diagnostics(&server.diagnostics(&r)).contains("unknown-key"),
        "rhai"
    );
}

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
        1:14-1:27 warning unknown-key: unknown key `Player.Hrut`: it is not in the signature table; did you mean `Player.Hurt`?
        2:32-2:50 warning listener-params: this listener declares 2 parameter(s) but `Inv.Gold` carries 1 (amount: int): a listener may only drop trailing parameters
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
        0:26-0:29 warning arg-type: argument 1 of `Inv.Gold` (amount) expects int, got string
    "#]]
    .assert_eq(&diagnostics_at_version(&server, &l, 2));
    expect_test::expect![[r#"
        0:29-0:32 error arg-type: argument 1 of `Player.Hurt` (dmg) expects float, got string
        1:29-1:30 warning too-many-args: `Inv.Gold` carries 1 parameter(s) (amount: int) but this call passes 2
    "#]]
    .assert_eq(&diagnostics_at_version(&server, &r, 2));
}

/// Hover on a key in the Rhai `GMP::` form and the Lua `GMP.` form: the
/// signature, kind and counts, with the key's range.
#[test]
fn hover_on_keys_of_gmp_forms_in_both_languages() {
    let rhai = "let s = \"🎮\"; GMP::NotifyObjectMessage(this, \"Player.Hurt\", 1.0);\n";
    let lua = "GMP.ListenMessage(\"Player.Hurt\", self, function(d) end)\n";
    let p = one_script("main.rhai", rhai);
    std::fs::write(p.path("main.lua"), lua).unwrap();
    let server = Server::start(p.dir.path());
    for (name, text) in [("main.rhai", rhai), ("main.lua", lua)] {
        let uri = server.open(&p.path(name));
        let hover = server
            .request::<HoverRequest>(HoverParams {
                text_document_position_params: at(&uri, after(text, "Player.Hu", 0)),
                work_done_progress_params: WorkDoneProgressParams::default(),
            })
            .unwrap_or_else(|| panic!("hover in {name}"));
        let HoverContents::Markup(m) = hover.contents else {
            panic!("markup")
        };
        assert!(
            m.value.contains("Player.Hurt(dmg: float, causer: object)"),
            "{}",
            m.value
        );
        assert!(m.value.contains("event"), "{}", m.value);
        assert!(
            m.value.contains("1 sender(s), 1 listener(s)"),
            "{}",
            m.value
        );
        let start = after(text, "Player.Hurt", 0);
        let range = hover.range.expect("a range");
        assert_eq!(range.end, Position::new(0, start.character + 1), "{name}");
    }
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
        "\"Player.Jumped\": { \"params\": [] },\n    \"Player.Healed\"",
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
    assert_eq!(render_diagnostics(&server.diagnostics(&uri)), "");
    std::fs::create_dir_all(p.path("mods/.gantry")).unwrap();
    std::fs::write(p.path("mods/.gantry/signatures.json"), table()).unwrap();
    assert!(render_diagnostics(&server.diagnostics(&uri)).contains("did you mean `Player.Hurt`"));
}

// ---------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------
// Strings and comments that span lines (the line lexer sees one line).

/// Issue #6 (the scanner the server shares): "Left alone: strings and
/// comments (including long brackets)"; session 9's fix for #8: "No
/// answers inside a comment". The line lexer behind unterminated strings
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

/// Signature help while a later string argument is still unterminated (the
/// line lexer answers): the commas of a table constructor before it are the
/// constructor's, not the call's.
#[test]
fn signature_help_in_an_unterminated_string_after_a_table_constructor() {
    let three = table().replace(
        "\"Player.Healed\"",
        r#""Ui.Three": { "kind": "event", "origin": "declared", "params": [ { "name": "a", "type": "any" }, { "name": "b", "type": "string" }, { "name": "c", "type": "string" } ] },
    "Player.Healed""#,
    );
    let lua = "NotifyMessage(\"Ui.Three\", { 1, 2 }, \"hel\nlocal x = 1\n";
    let rhai = "NotifyMessage(\"Ui.Three\", [1, 2], \"hel\nlet x = 1;\n";
    let rhai_map = "NotifyMessage(\"Ui.Three\", #{ a: 1, b: 2 }, \"hel\nlet x = 1;\n";
    let p = one_script("a.lua", lua);
    std::fs::write(p.path(".gantry/signatures.json"), three).unwrap();
    std::fs::write(p.path("b.rhai"), rhai).unwrap();
    std::fs::write(p.path("c.rhai"), rhai_map).unwrap();
    let server = Server::start(p.dir.path());
    let mut wrong = Vec::new();
    for (name, text) in [("a.lua", lua), ("b.rhai", rhai), ("c.rhai", rhai_map)] {
        let uri = server.open(&p.path(name));
        let got = active_param(&server, &uri, after(text, "\"hel", 0));
        if got.as_deref() != Some("b: string") {
            wrong.push(format!("{name}: {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
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

/// "`gantry check DIR` prints the same diagnostics" as the server: for
/// every script of a mod with findings of every kind, the server's ranges
/// (converted to 1-based line, column) equal the check's.
#[test]
fn check_prints_the_same_diagnostics_as_the_server() {
    let lua = "NotifyMessage(\"Player.Hurt\", \"ouch\")\nNotifyMessage(\"Player.Hrut\")\nNotifyMessage(k)\n\
               ListenMessage(\"Player.Healed\", self, function(a, b) end)\nListenRowMessage(self, \"Inv.Gold\", self, 1, function(i, r) end)\n\
               NotifyMessage(\"Inv..Gold\")\nNotifyMessage(\"Player.Healed\", 1, 2)\n";
    let rhai = "ListenMessage(\"Player.Hurt\", this, |dmg, causer| {});\nNotifyMessage(\"Player.Hurt\", 1.0);\nNotifyMessage(\"Inv.Gold\", true);\n";
    let p = one_script("placeholder.txt", "");
    std::fs::create_dir_all(p.path("mods")).unwrap();
    std::fs::write(p.path("mods/a.lua"), lua).unwrap();
    std::fs::write(p.path("mods/b.rhai"), rhai).unwrap();
    let files = gantry_lsp::check_dir(p.dir.path()).unwrap();
    let from_check: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let name = f.path.file_name().unwrap().to_string_lossy().into_owned();
            f.diagnostics
                .iter()
                .map(move |d| format!("{name}:{}:{} {} {}", d.line, d.column, d.code, d.message))
        })
        .collect();
    let server = Server::start(p.dir.path());
    let mut from_server = Vec::new();
    for name in ["a.lua", "b.rhai"] {
        let uri = server.open(&p.path(&format!("mods/{name}")));
        for d in server.diagnostics(&uri).diagnostics {
            let code = match d.code {
                Some(lsp_types::NumberOrString::String(s)) => s,
                _ => String::new(),
            };
            // Every line here is ASCII: UTF-16 columns are characters.
            from_server.push(format!(
                "{name}:{}:{} {code} {}",
                d.range.start.line + 1,
                d.range.start.character + 1,
                d.message
            ));
        }
    }
    assert_eq!(from_check, from_server);
    assert!(from_check.len() >= 9, "{from_check:#?}");
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
