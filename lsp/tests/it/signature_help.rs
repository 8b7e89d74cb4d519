//! Signature help marks the argument under the cursor, after the key, after
//! nested calls and table constructors, and is not offered at the source or
//! inside the key.

use expect_test::expect;
use lsp_types::request::SignatureHelpRequest;
use lsp_types::{Position, SignatureHelpParams, WorkDoneProgressParams};

use crate::support::editor::{active_param, after, at, one_script, signature, table};
use crate::support::{Server, project};

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

/// Signature help covers the whole call: the source and the key too, once
/// the key is known; past the last parameter none is active.
#[test]
fn signature_help_covers_the_source_and_the_key_and_nothing_past_the_last_parameter() {
    let text = "NotifyObjectMessage(self, \"Player.Hurt\", 1.5, self, 7)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert_eq!(
        active_param(&server, &uri, after(text, "sel", 0)).as_deref(),
        Some("obj")
    );
    assert_eq!(
        active_param(&server, &uri, after(text, "Player.Hu", 0)).as_deref(),
        Some("\"Player.Hurt\"")
    );
    assert_eq!(
        active_param(&server, &uri, after(text, "1.5, ", 0)).as_deref(),
        Some("causer: object")
    );
    // The fifth argument has no parameter: the active index says so, it is
    // not held at the last one.
    let help = server
        .request::<SignatureHelpRequest>(SignatureHelpParams {
            context: None,
            text_document_position_params: at(&uri, after(text, "7", 0)),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .expect("signature help");
    assert_eq!(help.signatures[0].parameters.as_ref().unwrap().len(), 4);
    assert_eq!(help.active_parameter, Some(4));
    assert_eq!(signature(&server, &uri, after(text, "7", 0)), None);
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

#[test]
fn signature_help_marks_the_active_parameter() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyObjectMessage(self, "Player.Hurt", 2.5, $0)
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.cursor.as_ref().unwrap().0);
    let help = server
        .request::<SignatureHelpRequest>(SignatureHelpParams {
            context: None,
            text_document_position_params: p.at_cursor(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .expect("signature help");
    let signature = &help.signatures[0];
    let active = help.active_parameter.unwrap() as usize;
    let Some(lsp_types::ParameterLabel::LabelOffsets([start, end])) = signature
        .parameters
        .as_ref()
        .map(|p| p[active].label.clone())
    else {
        panic!("offset labels")
    };
    expect![[
        r#"NotifyObjectMessage(obj, "Player.Hurt", dmg: float, causer: object) -> causer: object"#
    ]]
    .assert_eq(&format!(
        "{} -> {}",
        signature.label,
        &signature.label[start as usize..end as usize]
    ));
}
