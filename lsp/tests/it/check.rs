//! `gantry check DIR`: the server's diagnostics in batch, the same as the
//! server's, as text or JSON, failing only on errors.

use expect_test::expect;
use gantry_lsp::{Severity, check_dir, format_json, format_text, has_errors};

use crate::support::editor::one_script;
use crate::support::{Server, project};

/// "`gantry check DIR` prints the same diagnostics" as the server: for
/// every script of a mod with findings of every kind, the server's ranges
/// (converted to 1-based line, column) equal the check's.
#[test]
fn check_prints_the_same_diagnostics_as_the_server() {
    let lua = "NotifyMessage(\"Player.Hurt\", \"ouch\")\nNotifyMessage(\"Player.Hrut\")\nNotifyMessage(k)\n\
               ListenMessage(\"Player.Healed\", self, function(a, b) end)\nListenRowMessage(self, \"Inv.Gold\", self, 1, function(i, r) end)\n\
               NotifyMessage(\"Inv..Gold\")\nNotifyMessage(\"Player.Healed\", 1, 2)\n";
    let rhai = "ListenMessage(\"Player.Hurt\", SELF, |dmg, causer| {});\nNotifyMessage(\"Player.Hurt\", 1.0);\nNotifyMessage(\"Inv.Gold\", true);\n";
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

#[test]
fn check_prints_file_line_col_severity_code_message() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /mods/a.lua
local s = "é" NotifyMessage("Player.Hurt", "ouch")
NotifyMessage("Player.Hurt", 1.0)
//- /mods/b.rhai
ListenMessage("Player.Hrut", SELF, |dmg| {});
//- /mods/clean.lua
NotifyMessage("Inv.Gold", 3)
//- /.hidden/skipped.lua
NotifyMessage("nope..")
"#,
    );
    let files = check_dir(p.dir.path()).unwrap();
    let root = p.dir.path().to_string_lossy().into_owned();
    expect![[r#"
        ROOT/mods/a.lua:1:44: error arg-type: argument 1 of `Player.Hurt` (dmg) expects float, got string
        ROOT/mods/b.rhai:1:15: error unknown-key: `Player.Hrut` is listened to but sent nowhere and declared nowhere; did you mean `Player.Hurt`?
        ROOT/mods/clean.lua:1:15: warning unknown-key: `Inv.Gold` is sent but listened to nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
    "#]]
    .assert_eq(&format_text(&files).replace(&root, "ROOT"));
    assert!(has_errors(&files), "an error fails the check");
    let json: serde_json::Value = serde_json::from_str(&format_json(&files)).unwrap();
    assert_eq!(json[0]["diagnostics"][0]["code"], "arg-type");
    assert_eq!(json[0]["diagnostics"][0]["severity"], "error");
    assert_eq!(json[1]["diagnostics"][0]["line"], 1);
    assert_eq!(json[1]["diagnostics"][0]["column"], 15);
}

#[test]
fn check_passes_when_there_are_only_warnings() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /a.lua
NotifyMessage("Player.Jump")
"#,
    );
    let files = check_dir(p.dir.path()).unwrap();
    assert_eq!(files[0].diagnostics[0].severity, Severity::Warning);
    assert!(!has_errors(&files));
}

#[test]
fn check_reports_an_unreadable_table_as_an_error() {
    let p = project(
        r#"
//- /.gantry/signatures.json
{ "version": 99 }
//- /a.lua
NotifyMessage("Player.Jump")
"#,
    );
    let files = check_dir(p.dir.path()).unwrap();
    let text = format_text(&files).replace(&*p.dir.path().to_string_lossy(), "ROOT");
    assert!(
        text.starts_with("ROOT/.gantry/signatures.json:1:1: error table-error: signature table"),
        "{text}"
    );
    assert!(has_errors(&files));
}

#[test]
fn check_refuses_a_missing_directory() {
    let err = check_dir(std::path::Path::new("/definitely/not/here")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot check /definitely/not/here: not a directory"
    );
}

/// A fresh mod, no table, no manifest: a key listened to that nothing
/// sends is flagged with the key meant, as an error; a key sent that
/// nothing hears is a warning.
#[test]
fn check_without_a_table_flags_a_typod_listen_with_did_you_mean() {
    let p = project(
        r#"
//- /quest.lua
ListenMessage("Quest.Don", self, function(id) end)
NotifyMessage("Quest.Done", "q1")
//- /log.rhai
ListenMessage("Quest", SELF, |id| {});
NotifyMessage("Quest.Began", "q1");
NotifyMessage("Log.Line", "q1");
"#,
    );
    let files = check_dir(p.dir.path()).unwrap();
    let root = p.dir.path().to_string_lossy().into_owned();
    // A listener of `Quest` hears `Quest.Began`.
    expect![[r#"
        ROOT/log.rhai:3:15: warning unknown-key: `Log.Line` is sent but listened to nowhere and declared nowhere (declare it in mod.toml if another mod or the host uses it)
        ROOT/quest.lua:1:15: error unknown-key: `Quest.Don` is listened to but sent nowhere and declared nowhere; did you mean `Quest.Done`?
    "#]]
    .assert_eq(&format_text(&files).replace(&root, "ROOT"));
    assert!(has_errors(&files));
}

/// The keys the host declares (`gantry run`'s `Game.Tick`) are known with
/// no table: listening to them is no finding.
#[test]
fn check_knows_the_keys_the_host_declares() {
    let p = project(
        r#"
//- /main.lua
ListenMessage("Game.Tick", self, function(n, dt) end)
"#,
    );
    let alone = check_dir(p.dir.path()).unwrap();
    assert_eq!(alone[0].diagnostics[0].code, gantry_lsp::Code::UnknownKey);
    let options = gantry_lsp::CheckOptions {
        host: vec![gantry_lsp::HostKey {
            key: "Game.Tick".to_owned(),
            decl: gantry_host::KeyDecl::event()
                .param("n", gantry_host::Type::Int)
                .param("dt", gantry_host::Type::Float),
        }],
    };
    let hosted = gantry_lsp::check_dir_with(p.dir.path(), &options).unwrap();
    assert!(hosted.is_empty(), "{hosted:?}");
}

/// Syntax errors of both languages, at their line and column: what the
/// runtime would refuse to load, including what tree-sitter's wider Lua
/// grammar accepts (a `goto` with no label, an assignment to a const).
#[test]
fn check_reports_syntax_errors_of_both_languages_at_line_and_column() {
    let p = project(
        r#"
//- /broken.lua
local x = 1
local function f(
//- /const.lua
local n <const> = 1
n = 2
//- /broken.rhai
let a = 1;
let = 2;
//- /fine.lua
local t = { 1, 2 }
"#,
    );
    let files = check_dir(p.dir.path()).unwrap();
    let root = p.dir.path().to_string_lossy().into_owned();
    let text = format_text(&files).replace(&root, "ROOT");
    let syntax: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("error syntax-error:"))
        .collect();
    assert_eq!(syntax.len(), 3, "{text}");
    assert!(syntax[0].starts_with("ROOT/broken.lua:"), "{text}");
    assert!(syntax[1].starts_with("ROOT/broken.rhai:2:5:"), "{text}");
    assert!(
        syntax[2].starts_with("ROOT/const.lua:2:1:") && syntax[2].contains("const"),
        "{text}"
    );
    assert!(!text.contains("fine.lua"), "{text}");
    assert!(has_errors(&files));
}

#[test]
fn warnings_alone_are_told_apart_for_deny_warnings() {
    let p = project(
        r#"
//- /a.lua
NotifyMessage("Mod.Loaded", 1)
"#,
    );
    let files = check_dir(p.dir.path()).unwrap();
    assert!(!has_errors(&files));
    assert!(gantry_lsp::has_warnings(&files));
}
