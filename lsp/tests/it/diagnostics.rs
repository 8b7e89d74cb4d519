//! Diagnostics against the table: an unknown key (with the nearest key as a
//! quick fix), malformed and non-literal keys, argument counts and literal
//! types, listeners wanting more than the message carries; ranges in UTF-16
//! columns, and a syntax error below never hiding what is above.

use expect_test::expect;
use lsp_types::request::CodeActionRequest;
use lsp_types::{
    CodeActionContext, CodeActionOrCommand, CodeActionParams, PartialResultParams, Position, Range,
    TextDocumentIdentifier, WorkDoneProgressParams,
};

use crate::support::editor::one_script;
use crate::support::{Server, project, render_diagnostics};

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
        1:27-1:40 warning unknown-key: `Player.Hrut` is sent but listened to nowhere and declared nowhere; did you mean `Player.Hurt`?
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
        1:59-1:65 warning listener-params: this listener declares 2 parameter(s) but `Player.Healed` carries 1 (amount: int): a listener may only drop trailing parameters
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

fn diagnostics_of(fixture: &str, file: &str) -> String {
    let p = project(fixture);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path(file));
    server.sync();
    render_diagnostics(&server.diagnostics(&uri)).replace(&*p.dir.path().to_string_lossy(), "ROOT")
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
        0:14-0:27 warning unknown-key: `Player.Hrut` is sent but listened to nowhere and declared nowhere; did you mean `Player.Hurt`?
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
        2:14-2:29 warning unknown-key: `Player.Healed` is sent but listened to nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
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
        0:14-0:29 warning unknown-key: `Player.Healed` is listened to but sent nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
        0:37-0:50 warning listener-params: this listener declares 2 parameter(s) but `Player.Healed` carries 1 (amount: int): a listener may only drop trailing parameters
        1:35-1:44 error listener-params: this listener declares 3 parameter(s) but `Player.Hurt` carries 2 (dmg: float, causer: object): a listener may only drop trailing parameters
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
        0:23-0:33 warning unknown-key: `Inv.Gold` is listened to but sent nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
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

/// A function of another kind than the key's: an error when the kind is
/// declared (`mod.toml`), a warning when only observed.
#[test]
fn a_wrong_kind_use_is_an_error_when_declared_and_a_warning_when_observed() {
    let fixture = r#"
//- /mod.toml
[mod]
name = "kinds"

[keys."Inv.Gold"]
kind = "store"
params = ["amount: int"]
//- /.gantry/signatures.json
{ "version": 1, "keys": { "Inv.Silver": { "kind": "store", "origin": "observed", "params": [ { "name": "amount", "type": "int" } ] } } }
//- /main.lua
GMP.RunHook("Inv.Gold", 1)
GMP.RunHook("Inv.Silver", 1)
GMP.StoredArray(self, "Inv.Gold")
ListenMessage("Inv.Gold", self, function(amount) end)
ListenMessage("Inv.Silver", self, function(amount) end)
"#;
    expect![[r#"
        0:12-0:22 error wrong-kind: `Inv.Gold` is a store key: RunHook takes a hook key
        1:12-1:24 warning wrong-kind: `Inv.Silver` is a store key: RunHook takes a hook key
        2:22-2:32 error wrong-kind: `Inv.Gold` is a store key: StoredArray takes a collection key (one array of structs, stored)
    "#]]
    .assert_eq(&diagnostics_of(fixture, "main.lua"));
}
