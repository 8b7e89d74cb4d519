//! A call outside its mod's `[grants]`: `gantry check` and the editor say
//! so before any run, in the words the hub refuses it with, at the key.

use gantry_lsp::{check_dir, format_text, has_errors};

use crate::support::{Server, project, render_diagnostics};

const MANIFEST: &str = r#"[mod]
name = "ui"

[grants]
send = ["Ui"]
listen = ["Quest.Start"]
"#;

const SCRIPT: &str = "NotifyMessage(\"Ui.Open\", 1)\n\
                      NotifyMessage(\"Quest.Start\", 2)\n\
                      ListenMessage(\"Quest\", self, function() end, { match = \"partial\" })\n\
                      ListenMessage(\"QuestLog\", self, function() end)\n\
                      ListenMessage(\"Quest.Start\", self, function() end)\n";

#[test]
fn check_reports_each_call_outside_the_grants_as_an_error_at_its_key() {
    let p = project(&format!("//- /mod.toml\n{MANIFEST}\n//- /ui.lua\n{SCRIPT}"));
    let files = check_dir(p.dir.path()).unwrap();
    let text = format_text(&files).replace(&*p.dir.path().to_string_lossy(), "ROOT");
    let grants: Vec<&str> = text.lines().filter(|l| l.contains("not-granted")).collect();
    assert_eq!(
        grants,
        [
            "ROOT/ui.lua:2:15: error not-granted: mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only",
            "ROOT/ui.lua:3:15: error not-granted: mod \"ui\" may not listen to \"Quest\": its grants listen to Quest.Start only",
            "ROOT/ui.lua:4:15: error not-granted: mod \"ui\" may not listen to \"QuestLog\": its grants listen to Quest.Start only",
        ],
        "{text}"
    );
    assert!(has_errors(&files));
}

#[test]
fn the_editor_shows_the_same_grant_errors_as_check() {
    let p = project(&format!("//- /mod.toml\n{MANIFEST}\n//- /ui.lua\n{SCRIPT}"));
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("ui.lua"));
    let shown = render_diagnostics(&server.diagnostics(&uri));
    let grants: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("not-granted"))
        .collect();
    assert_eq!(
        grants,
        [
            "1:14-1:27 error not-granted: mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only",
            "2:14-2:21 error not-granted: mod \"ui\" may not listen to \"Quest\": its grants listen to Quest.Start only",
            "3:14-3:24 error not-granted: mod \"ui\" may not listen to \"QuestLog\": its grants listen to Quest.Start only",
        ],
        "{shown}"
    );
}

#[test]
fn a_mod_without_grants_has_no_grant_findings() {
    let p = project(&format!(
        "//- /mod.toml\n[mod]\nname = \"free\"\n//- /ui.lua\n{SCRIPT}"
    ));
    let text = format_text(&check_dir(p.dir.path()).unwrap());
    assert!(!text.contains("not-granted"), "{text}");
}
