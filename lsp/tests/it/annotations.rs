//! What the server draws over a script: parameter names at send sites
//! (inlay hints), sender and listener counts on each key (code lenses),
//! and each key's colour by what the table knows of it (semantic tokens).

use lsp_types::request::{CodeLensRequest, InlayHintRequest, SemanticTokensFullRequest};
use lsp_types::{
    CodeLensParams, InlayHintLabel, InlayHintParams, PartialResultParams, Position, Range,
    SemanticTokensParams, SemanticTokensResult, TextDocumentIdentifier, WorkDoneProgressParams,
};

use crate::support::Server;
use crate::support::editor::one_script;

fn doc(uri: &lsp_types::Uri) -> TextDocumentIdentifier {
    TextDocumentIdentifier::new(uri.clone())
}

#[test]
fn a_send_shows_each_value_s_parameter_name_unless_the_value_says_it() {
    let text = "local causer = self\nNotifyMessage(\"Player.Hurt\", 2.5, causer)\nNotifyMessage(\"Nobody.Knows\", 1)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let hints = server
        .request::<InlayHintRequest>(InlayHintParams {
            text_document: doc(&uri),
            range: Range::new(Position::new(0, 0), Position::new(3, 0)),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .expect("hints");
    let rendered: Vec<String> = hints
        .iter()
        .map(|h| {
            let InlayHintLabel::String(label) = &h.label else {
                panic!("a plain label")
            };
            format!("{}:{} {label}", h.position.line, h.position.character)
        })
        .collect();
    assert_eq!(rendered, ["1:29 dmg:"]);
}

#[test]
fn hints_outside_the_requested_lines_are_not_computed() {
    let text = "NotifyMessage(\"Player.Hurt\", 2.5, self)\n\n\nNotifyMessage(\"Player.Hurt\", 1.5, self)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let hints = server
        .request::<InlayHintRequest>(InlayHintParams {
            text_document: doc(&uri),
            range: Range::new(Position::new(2, 0), Position::new(4, 0)),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .expect("hints");
    let lines: Vec<u32> = hints.iter().map(|h| h.position.line).collect();
    assert_eq!(lines, [3, 3]);
}

#[test]
fn a_code_lens_counts_the_senders_and_listeners_of_its_key_and_opens_them() {
    let p = one_script(
        "main.lua",
        "NotifyMessage(\"Player.Hurt\", 1.0, self)\nListenMessage(\"Player.Hurt\", self, function(d) end)\n",
    );
    std::fs::write(
        p.path("fx.rhai"),
        "NotifyMessage(\"Player.Hurt\", 2.0, this);\n",
    )
    .unwrap();
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let lenses = server
        .request::<CodeLensRequest>(CodeLensParams {
            text_document: doc(&uri),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .expect("lenses");
    assert_eq!(lenses.len(), 2);
    let command = lenses[0].command.as_ref().expect("a command");
    // Two scripts send it, and the host's Rust (a site the table recorded).
    assert_eq!(command.title, "3 senders · 1 listener");
    assert_eq!(command.command, "gantry.showReferences");
    let args = command.arguments.as_ref().unwrap();
    assert_eq!(args[0], serde_json::json!(uri.as_str()));
    let locations = args[2].as_array().unwrap();
    // The scripts' three calls; the Rust file is not there to open.
    assert_eq!(locations.len(), 3, "{locations:?}");
}

#[test]
fn semantic_tokens_tell_declared_observed_and_unknown_keys_apart() {
    let text = "NotifyMessage(\"Player.Hurt\", 1.0, self)\nNotifyMessage(\"Player.Healed\", 1)\nGMP.NotifyMessage(\"Nobody.Knows\")\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let Some(SemanticTokensResult::Tokens(tokens)) =
        server.request::<SemanticTokensFullRequest>(SemanticTokensParams {
            text_document: doc(&uri),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
    else {
        panic!("tokens")
    };
    // (line, column, length, type, modifiers), absolute.
    let (mut line, mut column) = (0, 0);
    let mut absolute = Vec::new();
    for t in &tokens.data {
        if t.delta_line > 0 {
            line += t.delta_line;
            column = 0;
        }
        column += t.delta_start;
        absolute.push((
            line,
            column,
            t.length,
            t.token_type,
            t.token_modifiers_bitset,
        ));
    }
    let function = (1, 1 << 3);
    let (declared, observed, unknown) = ((0, 1), (0, 2), (0, 4));
    assert_eq!(
        absolute,
        [
            (0, 0, 13, function.0, function.1),
            (0, 15, 11, declared.0, declared.1),
            (1, 0, 13, function.0, function.1),
            (1, 15, 13, observed.0, observed.1),
            (2, 4, 13, function.0, function.1),
            (2, 19, 12, unknown.0, unknown.1),
        ]
    );
}
