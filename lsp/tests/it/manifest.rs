//! `mod.toml`, the mod's contract, as `gantry check` and the server read
//! it: its keys are declared (a send contradicting one is an error, where an
//! observed key's is a warning), it wins over the table, a broken one is a
//! finding at each mistake's line (in check and on the manifest's URI in the
//! server, refreshed when it changes), and editors show its names and docs
//! and go to its lines.

use expect_test::expect;
use gantry_lsp::{Severity, check_dir, format_text, has_errors};
use lsp_types::notification::DidChangeWatchedFiles;
use lsp_types::request::{GotoDefinition, HoverRequest};
use lsp_types::{
    DidChangeWatchedFilesParams, FileChangeType, FileEvent, GotoDefinitionParams,
    GotoDefinitionResponse, HoverContents, HoverParams, PartialResultParams, Position,
    WorkDoneProgressParams,
};

use crate::support::editor::{after, at, completion_items, signature};
use crate::support::{Server, project, render_diagnostics};

const MANIFEST: &str = r#"[mod]
name = "questlog"

[structs.Quest]
fields = ["id: string", "reward: int"]

[keys."Quest.Start"]
kind = "event"
params = ["id: string", "reward: int"]
doc = "A quest begins."

[keys."Quest.Log"]
kind = "store"
params = ["count: int"]
"#;

fn check_text(dir: &std::path::Path) -> String {
    let files = check_dir(dir).unwrap();
    format_text(&files).replace(&*dir.to_string_lossy(), "ROOT")
}

#[test]
fn a_send_contradicting_a_manifest_key_is_an_error_and_an_observed_keys_a_warning() {
    let p = project(&format!(
        r#"
//- /mod.toml
{MANIFEST}
//- /.gantry/signatures.json
{{ "version": 1, "keys": {{ "Quest.Seen": {{ "origin": "observed", "params": [ {{ "name": "n", "type": "int" }} ] }} }} }}
//- /quest.lua
NotifyMessage("Quest.Start", 5, 100)
NotifyMessage("Quest.Seen", "five")
ListenMessage("Quest.Seen", self, function(n) end)
ListenMessage("Quest.Start", self, function(id, reward) end)
"#
    ));
    expect![[r#"
        ROOT/quest.lua:1:30: error arg-type: argument 1 of `Quest.Start` (id) expects string, got int
        ROOT/quest.lua:2:29: warning arg-type: argument 1 of `Quest.Seen` (n) expects int, got string
    "#]]
    .assert_eq(&check_text(p.dir.path()));
    assert!(has_errors(&check_dir(p.dir.path()).unwrap()));
}

#[test]
fn the_manifest_wins_over_the_table() {
    let p = project(&format!(
        r#"
//- /mod.toml
{MANIFEST}
//- /.gantry/signatures.json
{{ "version": 1, "keys": {{ "Quest.Start": {{ "origin": "observed", "params": [ {{ "name": "arg1", "type": "int" }} ] }} }} }}
//- /quest.rhai
NotifyMessage("Quest.Start", 5);
ListenMessage("Quest.Start", SELF, |id| {{}});
"#
    ));
    expect![[r#"
        ROOT/quest.rhai:1:30: error arg-type: argument 1 of `Quest.Start` (id) expects string, got int
    "#]]
    .assert_eq(&check_text(p.dir.path()));
}

#[test]
fn check_reports_each_mistake_of_a_broken_manifest_at_its_line_and_fails() {
    let p = project(
        r#"
//- /mod.toml
[mod]
name = "questlog"

[keys."Quest.Start"]
kind = "event"
params = ["id: strng"]

[keys."Quest.End"]
kind = "evnt"
//- /quest.lua
NotifyMessage("Quest.Start", "q1")
"#,
    );
    let files = check_dir(p.dir.path()).unwrap();
    let text = format_text(&files).replace(&*p.dir.path().to_string_lossy(), "ROOT");
    let manifest: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("ROOT/mod.toml:"))
        .collect();
    assert_eq!(manifest.len(), 2, "{text}");
    assert!(
        manifest[0].starts_with("ROOT/mod.toml:6:") && manifest[0].contains("strng"),
        "{text}"
    );
    assert!(
        manifest[1].starts_with("ROOT/mod.toml:9:") && manifest[1].contains("evnt"),
        "{text}"
    );
    assert!(
        manifest
            .iter()
            .all(|l| l.contains(" error manifest-error: ")),
        "{text}"
    );
    assert!(has_errors(&files));
}

#[test]
fn a_broken_manifest_is_shown_on_mod_toml_and_cleared_once_fixed() {
    let p = project(
        r#"
//- /mod.toml
[mod]
name = "questlog"

[keys."Quest.Start"]
kind = "event"
params = ["id: strng"]
//- /quest.lua
NotifyMessage("Quest.Start", "q1")
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.path("quest.lua"));
    let manifest = p.uri("mod.toml");
    let shown = render_diagnostics(&server.diagnostics(&manifest));
    assert!(shown.starts_with("5:"), "at the line of params: {shown}");
    assert!(shown.contains("error manifest-error: "), "{shown}");
    assert!(shown.contains("strng"), "{shown}");

    std::fs::write(
        p.path("mod.toml"),
        "[mod]\nname = \"questlog\"\n\n[keys.\"Quest.Start\"]\nkind = \"event\"\nparams = [\"id: int\"]\n",
    )
    .unwrap();
    server.notify::<DidChangeWatchedFiles>(DidChangeWatchedFilesParams {
        changes: vec![FileEvent::new(manifest.clone(), FileChangeType::CHANGED)],
    });
    assert_eq!(render_diagnostics(&server.diagnostics(&manifest)), "");
    // The script is checked against the new declaration.
    let script = p.uri("quest.lua");
    let mut last = String::new();
    for _ in 0..10 {
        last = render_diagnostics(&server.diagnostics(&script));
        if last.contains("expects int") {
            break;
        }
    }
    assert!(last.contains("error arg-type"), "{last}");
}

#[test]
fn editors_show_the_declared_names_and_doc_of_a_manifest_key() {
    let text =
        "NotifyMessage(\"Quest.Start\", \"q1\", 5)\nListenMessage(\"Quest.Start\", self, )\n";
    let p = project(&format!(
        "//- /mod.toml\n{MANIFEST}\n//- /quest.lua\n{text}"
    ));
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("quest.lua"));
    let (label, _, active) = signature(&server, &uri, after(text, "\"q1\", ", 0)).unwrap();
    assert_eq!(
        label,
        "NotifyMessage(\"Quest.Start\", id: string, reward: int)"
    );
    assert_eq!(active, "reward: int");

    let Some(hover) = server.request::<HoverRequest>(HoverParams {
        text_document_position_params: at(&uri, after(text, "Quest.St", 0)),
        work_done_progress_params: WorkDoneProgressParams::default(),
    }) else {
        panic!("a hover")
    };
    let HoverContents::Markup(markup) = hover.contents else {
        panic!("markup")
    };
    assert!(
        markup
            .value
            .contains("Quest.Start(id: string, reward: int)"),
        "{}",
        markup.value
    );
    assert!(markup.value.contains("A quest begins."), "{}", markup.value);
    assert!(
        markup.value.contains("declared at mod.toml:7"),
        "{}",
        markup.value
    );

    let snippets: Vec<String> = completion_items(&server, &uri, after(text, "self, ", 0))
        .into_iter()
        .map(|i| i.label)
        .collect();
    assert_eq!(snippets, ["function(id, reward) end"]);
}

fn definition(server: &Server, uri: &lsp_types::Uri, position: Position) -> Option<(String, u32)> {
    let found = server.request::<GotoDefinition>(GotoDefinitionParams {
        text_document_position_params: at(uri, position),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    })?;
    // The declaration comes first, then the senders.
    let GotoDefinitionResponse::Array(locations) = found else {
        panic!("a list of locations")
    };
    let location = locations.into_iter().next()?;
    let path = gantry_lsp::uri::uri_to_path(&location.uri).unwrap();
    Some((
        path.file_name().unwrap().to_string_lossy().into_owned(),
        location.range.start.line + 1,
    ))
}

#[test]
fn go_to_definition_of_a_manifest_key_lands_on_its_line_in_mod_toml() {
    let text = "ListenMessage(\"Quest.Log\", self, function(count) end)\n";
    let p = project(&format!(
        "//- /mod.toml\n{MANIFEST}\n//- /mods/quest.lua\n{text}"
    ));
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("mods/quest.lua"));
    assert_eq!(
        definition(&server, &uri, after(text, "Quest.L", 0)),
        Some(("mod.toml".to_owned(), 12))
    );
}

/// `gantry run` declares `Game.Tick` with no site and records its send as
/// `(gantry run)`: no such file is ever opened; a Rust declaration that
/// exists is.
#[test]
fn go_to_definition_of_a_host_key_never_opens_a_file_that_is_not_there() {
    let table = r#"{ "version": 1, "keys": {
      "Game.Tick": { "origin": "declared", "params": [ { "name": "n", "type": "int" }, { "name": "dt", "type": "float" } ],
        "sites": [ { "file": "(gantry run)", "line": 0, "language": "rust", "role": "send" } ] },
      "Game.Save": { "origin": "declared", "params": [],
        "sites": [ { "file": "src/host.rs", "line": 3, "column": 9, "language": "rust", "role": "declare" } ] },
      "Game.Gone": { "origin": "declared", "params": [],
        "sites": [ { "file": "src/gone.rs", "line": 3, "language": "rust", "role": "declare" } ] }
    } }"#;
    let text = "ListenMessage(\"Game.Tick\", self, function(n, dt) end)\nListenMessage(\"Game.Save\", self, function() end)\nListenMessage(\"Game.Gone\", self, function() end)\n";
    let p = project(&format!(
        "//- /.gantry/signatures.json\n{table}\n//- /src/host.rs\n// host\n\n\n\n//- /main.lua\n{text}"
    ));
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert_eq!(definition(&server, &uri, after(text, "Game.Ti", 0)), None);
    assert_eq!(definition(&server, &uri, after(text, "Game.Go", 0)), None);
    assert_eq!(
        definition(&server, &uri, after(text, "Game.Sa", 0)),
        Some(("host.rs".to_owned(), 3))
    );
    let Some(hover) = server.request::<HoverRequest>(HoverParams {
        text_document_position_params: at(&uri, after(text, "Game.Ti", 0)),
        work_done_progress_params: WorkDoneProgressParams::default(),
    }) else {
        panic!("a hover")
    };
    let HoverContents::Markup(markup) = hover.contents else {
        panic!("markup")
    };
    assert!(
        markup.value.contains("declared by the host"),
        "{}",
        markup.value
    );
}

#[test]
fn a_fresh_mod_with_only_a_manifest_checks_its_undeclared_keys_against_each_other() {
    let p = project(&format!(
        "//- /mod.toml\n{MANIFEST}\n//- /quest.lua\nListenMessage(\"Quest.Strat\", self, function(id) end)\n"
    ));
    let files = check_dir(p.dir.path()).unwrap();
    let d = &files[0].diagnostics[0];
    assert_eq!(d.severity, Severity::Error);
    assert!(d.message.contains("did you mean `Quest.Start`?"), "{d:?}");
}
