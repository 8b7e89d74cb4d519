//! Hover, definition, references and workspace symbols: a key's signature,
//! kind, doc, declaration and counts, and its Rust, Lua and Rhai sites.

use expect_test::expect;
use lsp_types::request::{GotoDefinition, HoverRequest, References, WorkspaceSymbolRequest};
use lsp_types::{
    GotoDefinitionParams, GotoDefinitionResponse, HoverContents, HoverParams, OneOf,
    PartialResultParams, Position, ReferenceContext, ReferenceParams, WorkDoneProgressParams,
    WorkspaceSymbolParams, WorkspaceSymbolResponse,
};

use crate::support::editor::{after, at, one_script};
use crate::support::{Server, project};

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

#[test]
fn hover_shows_signature_kind_doc_declaration_and_counts() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player.H$0urt", 1.0)
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.cursor.as_ref().unwrap().0);
    let hover = server
        .request::<HoverRequest>(HoverParams {
            text_document_position_params: p.at_cursor(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .expect("hover");
    let HoverContents::Markup(markup) = hover.contents else {
        panic!("markdown")
    };
    expect![[r#"
        ```
        Player.Hurt(dmg: float, causer: object)
        ```
        event · declared

        The player took damage.

        1 sender(s), 1 listener(s) recorded

        declared at src/game.rs:12:5"#]]
    .assert_eq(&markup.value);
}

#[test]
fn definition_and_references_reach_rust_lua_and_rhai_sites() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /src/game.rs
// game
//- /mods/ui.lua
ListenMessage("Player.Hurt", self, function(dmg) end)
//- /mods/fx.rhai
NotifyMessage("Player.Hurt", 1.0, this);
//- /main.lua
NotifyMessage("Player.Hu$0rt", 1.0)
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.cursor.as_ref().unwrap().0);
    server.sync();
    let root = p.dir.path().to_string_lossy().into_owned();
    let short = |uri: &lsp_types::Uri| {
        gantry_lsp::uri::uri_to_path(uri)
            .unwrap()
            .to_string_lossy()
            .replace(&root, "")
    };
    // The declaration, then every sender: the scripts' and the host's.
    let mut defs = String::new();
    for _ in 0..100 {
        let Some(GotoDefinitionResponse::Array(found)) =
            server.request::<GotoDefinition>(GotoDefinitionParams {
                text_document_position_params: p.at_cursor(),
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
            })
        else {
            panic!("a definition")
        };
        defs = found
            .iter()
            .map(|l| {
                format!(
                    "{}:{:?}\n",
                    short(&l.uri),
                    (l.range.start.line, l.range.start.character)
                )
            })
            .collect();
        if defs.contains("fx.rhai") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    expect![[r#"
        /src/game.rs:(11, 4)
        /main.lua:(0, 14)
        /mods/fx.rhai:(0, 14)
        /src/game.rs:(39, 8)
    "#]]
    .assert_eq(&defs);

    // Indexing runs in the background: ask until the scripts are in.
    let mut rendered = String::new();
    for _ in 0..100 {
        let refs = server
            .request::<References>(ReferenceParams {
                text_document_position: p.at_cursor(),
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
                context: ReferenceContext {
                    include_declaration: true,
                },
            })
            .unwrap();
        rendered = refs
            .iter()
            .map(|l| {
                format!(
                    "{}:{}:{}\n",
                    short(&l.uri),
                    l.range.start.line + 1,
                    l.range.start.character
                )
            })
            .collect();
        if rendered.contains("fx.rhai") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    expect![[r#"
        /main.lua:1:14
        /mods/fx.rhai:1:14
        /mods/ui.lua:1:14
        /mods/ui.lua:3:0
        /src/game.rs:12:4
        /src/game.rs:40:8
    "#]]
    .assert_eq(&rendered);
}

#[test]
fn workspace_symbols_are_the_keys() {
    let p = project(
        r#"
//- /.gantry/signatures.json
$TABLE
//- /main.lua
NotifyMessage("Player.Hurt", 1.0)
"#,
    );
    let server = Server::start(p.dir.path());
    server.open(&p.path("main.lua"));
    let Some(WorkspaceSymbolResponse::Nested(symbols)) =
        server.request::<WorkspaceSymbolRequest>(WorkspaceSymbolParams {
            query: "player".to_owned(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
    else {
        panic!("symbols")
    };
    let names: Vec<String> = symbols
        .iter()
        .map(|s| {
            let located = matches!(s.location, OneOf::Left(_));
            format!(
                "{} in {:?} located={located}",
                s.name,
                s.container_name.as_deref().unwrap_or("")
            )
        })
        .collect();
    expect![[r#"["Player.Healed in \"Player\" located=false", "Player.Hurt in \"Player\" located=false"]"#]]
    .assert_eq(&format!("{names:?}"));
}
