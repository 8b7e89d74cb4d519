//! While a key is being typed the editor shows no red: `""` and `"Inv."`
//! are hints (`gantry check` still refuses them), and Rhai's string still
//! open is no "non-literal key".

use gantry_lsp::{Severity, check_dir};

use crate::support::editor::{change, diagnostics_at_version, one_script, pos};
use crate::support::{Server, render_diagnostics};

#[test]
fn an_empty_or_unfinished_key_is_a_hint_in_the_editor_and_an_error_for_check() {
    let text = "NotifyMessage(\"\")\nNotifyMessage(\"Inv.\")\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let shown = render_diagnostics(&server.diagnostics(&uri));
    let malformed: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("malformed-key"))
        .collect();
    assert_eq!(malformed.len(), 2, "{shown}");
    assert!(malformed.iter().all(|l| l.contains(" hint ")), "{shown}");
    let checked = check_dir(p.dir.path()).unwrap();
    let errors = checked[0]
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str() == "malformed-key" && d.severity == Severity::Error)
        .count();
    assert_eq!(errors, 2);
}

#[test]
fn a_rhai_string_still_open_in_the_key_is_no_non_literal_key() {
    let text = "let x = 1;\n";
    let p = one_script("main.rhai", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.rhai"));
    let end = pos(text, text.len());
    change(
        &server,
        &uri,
        2,
        vec![(Some(lsp_types::Range::new(end, end)), "NotifyMessage(\"Inv")],
    );
    let shown = diagnostics_at_version(&server, &uri, 2);
    assert!(!shown.contains("non-literal-key"), "{shown}");
    assert!(!shown.contains(" error "), "{shown}");
}
