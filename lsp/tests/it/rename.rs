//! Renaming a key: every literal use in the mod's Lua and Rhai scripts, its
//! declaration in `mod.toml` and its record in the table, in one edit; a
//! refusal that names each place a rename cannot follow.

use lsp_types::request::PrepareRenameRequest;
use lsp_types::{PrepareRenameResponse, RenameParams, WorkDoneProgressParams, WorkspaceEdit};

use crate::support::editor::{after, at};
use crate::support::{Server, project};

const MANIFEST: &str = r#"[mod]
name = "quest"

[keys."Quest.Start"]
kind = "event"
params = ["id: string", "reward: int"]
doc = "Starts a quest; see also \"Quest.Start\" in the book."
"#;

const TABLE: &str = r#"{ "version": 1, "keys": {
  "Quest.Start": { "kind": "event", "origin": "observed", "params": [ { "name": "id", "type": "string" }, { "name": "reward", "type": "int" } ] },
  "Quest.Done": { "kind": "event", "origin": "observed", "params": [] }
} }
"#;

const GIVER: &str = "NotifyMessage(\"Quest.Start\", \"wolves\", 5)\n-- \"Quest.Start\" in a comment is no use\nNotifyMessage('Quest.Start', \"bears\", 2)\n";
const LOG: &str = "ListenMessage(\"Quest.Start\", (), |id, reward| print(id));\n";

fn quest(extra: &str) -> crate::support::Project {
    project(&format!(
        "//- /mod.toml\n{MANIFEST}//- /.gantry/signatures.json\n{TABLE}//- /giver.lua\n{GIVER}{extra}//- /log.rhai\n{LOG}"
    ))
}

fn rename(server: &Server, uri: &lsp_types::Uri, text: &str, new: &str) -> lsp_server::Response {
    server.request_raw(
        "textDocument/rename",
        serde_json::to_value(RenameParams {
            text_document_position: at(uri, after(text, "Quest.St", 0)),
            new_name: new.to_owned(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .unwrap(),
    )
}

fn refused(response: lsp_server::Response) -> lsp_server::ResponseError {
    response.response_result.expect_err("refused")
}

/// `file line:col-col new`, one edit a line, files in name order.
fn render(root: &std::path::Path, edit: &WorkspaceEdit) -> String {
    let mut lines: Vec<String> = Vec::new();
    for (uri, edits) in edit.changes.as_ref().unwrap() {
        let path = gantry_lsp::uri::uri_to_path(uri).unwrap();
        let name = path.strip_prefix(root).unwrap().display().to_string();
        for e in edits {
            lines.push(format!(
                "{name} {}:{}-{} {}",
                e.range.start.line + 1,
                e.range.start.character,
                e.range.end.character,
                e.new_text
            ));
        }
    }
    lines.sort();
    lines.join("\n")
}

#[test]
fn renaming_a_key_edits_every_script_the_manifest_and_the_table_and_nothing_else() {
    let p = quest("");
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("giver.lua"));
    let response = rename(&server, &uri, GIVER, "Quest.Begin");
    let edit: WorkspaceEdit =
        serde_json::from_value(response.response_result.expect("an edit")).unwrap();
    assert_eq!(
        render(p.dir.path(), &edit),
        [
            ".gantry/signatures.json 2:3-14 Quest.Begin",
            "giver.lua 1:15-26 Quest.Begin",
            "giver.lua 3:15-26 Quest.Begin",
            "log.rhai 1:15-26 Quest.Begin",
            "mod.toml 4:7-18 Quest.Begin",
        ]
        .join("\n")
    );
}

#[test]
fn prepare_rename_offers_the_key_text_without_its_quotes() {
    let p = quest("");
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("log.rhai"));
    let answer = server.request::<PrepareRenameRequest>(at(&uri, after(LOG, "Quest.St", 0)));
    let Some(PrepareRenameResponse::RangeWithPlaceholder { range, placeholder }) = answer else {
        panic!("a range and a placeholder: {answer:?}")
    };
    assert_eq!(placeholder, "Quest.Start");
    assert_eq!((range.start.character, range.end.character), (15, 26));
}

#[test]
fn a_key_built_from_pieces_refuses_the_rename_and_says_where() {
    let built =
        "local which = \"Quest.\" .. kind\nNotifyMessage(which, 1)\nlocal k = \"Quest.Start\"\n";
    let p = quest(built);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("log.rhai"));
    for response in [
        server.request_raw(
            "textDocument/prepareRename",
            serde_json::to_value(at(&uri, after(LOG, "Quest.St", 0))).unwrap(),
        ),
        rename(&server, &uri, LOG, "Quest.Begin"),
    ] {
        let error = refused(response);
        assert_eq!(error.code, lsp_server::ErrorCode::RequestFailed as i32);
        let giver = p.path("giver.lua").display().to_string();
        assert!(
            error.message.contains(&format!("{giver}:4:15")),
            "{}",
            error.message
        );
        assert!(
            error.message.contains(&format!("{giver}:6:11")),
            "{}",
            error.message
        );
        assert!(!error.message.contains("giver.lua:2"), "{}", error.message);
    }
}

#[test]
fn a_rename_onto_a_malformed_or_existing_key_is_refused_with_the_reason() {
    let p = quest("");
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("giver.lua"));
    let malformed = refused(rename(&server, &uri, GIVER, "Quest..Begin"));
    assert!(
        malformed.message.contains("`Quest..Begin` is not a key"),
        "{}",
        malformed.message
    );
    let taken = refused(rename(&server, &uri, GIVER, "Quest.Done"));
    assert!(
        taken.message.contains("`Quest.Done` is already a key"),
        "{}",
        taken.message
    );
}

#[test]
fn renaming_from_a_place_that_is_no_key_says_so() {
    let p = quest("");
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("giver.lua"));
    let response = server.request_raw(
        "textDocument/prepareRename",
        serde_json::to_value(at(&uri, lsp_types::Position::new(0, 2))).unwrap(),
    );
    let error = refused(response);
    assert!(
        error.message.contains("no literal message key"),
        "{}",
        error.message
    );
}
