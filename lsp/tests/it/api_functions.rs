//! The API's own functions in the editor: their names complete with their
//! documentation (`Lis…`, `GMP.`), hover documents them, and signature
//! help names their parameters from `(` on, before the key is known.

use lsp_types::request::HoverRequest;
use lsp_types::{Documentation, HoverContents, HoverParams, WorkDoneProgressParams};

use crate::support::Server;
use crate::support::editor::{
    active_param, after, at, completion_items, labels, one_script, signature,
};

#[test]
fn a_written_prefix_completes_the_api_functions_with_their_documentation() {
    let text = "local x = 1\nLis\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let items = completion_items(&server, &uri, after(text, "Lis", 0));
    let names: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(
        names,
        [
            "ListenMessage",
            "ListenWorldMessage",
            "ListenObjectMessage",
            "ListenRowMessage",
            "ListenHook"
        ]
    );
    let listen = &items[0];
    assert_eq!(
        listen.detail.as_deref(),
        Some("ListenMessage(key, owner, fn, [opts])")
    );
    let Some(Documentation::MarkupContent(doc)) = &listen.documentation else {
        panic!("markdown documentation")
    };
    assert!(
        doc.value.contains("Listens to global messages"),
        "{}",
        doc.value
    );
}

#[test]
fn gmp_completes_every_function_and_only_there_the_lua_only_ones() {
    let lua = "local w = GMP.\n";
    let rhai = "let w = GMP::\n";
    let p = one_script("main.lua", lua);
    std::fs::write(p.path("main.rhai"), rhai).unwrap();
    let server = Server::start(p.dir.path());
    let l = server.open(&p.path("main.lua"));
    let gmp = labels(&server, &l, after(lua, "GMP.", 0));
    assert!(gmp.contains(&"Request".to_owned()), "{gmp:?}");
    assert!(gmp.contains(&"StoredArray".to_owned()), "{gmp:?}");
    assert_eq!(gmp.len(), 16, "{gmp:?}");
    let r = server.open(&p.path("main.rhai"));
    assert_eq!(labels(&server, &r, after(rhai, "GMP::", 0)).len(), 16);
    // A global prefix does not offer what only `GMP.` has in Lua.
    std::fs::write(p.path("b.lua"), "Req\n").unwrap();
    let b = server.open(&p.path("b.lua"));
    assert!(labels(&server, &b, after("Req\n", "Req", 0)).is_empty());
}

#[test]
fn no_api_name_is_offered_in_a_string_a_comment_or_after_another_table() {
    let text = "print(\"Lis\")\n-- Lis\nlocal t = obj.Lis\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    for n in 0..3 {
        assert!(
            labels(&server, &uri, after(text, "Lis", n)).is_empty(),
            "#{n}"
        );
    }
}

#[test]
fn hover_on_an_api_function_shows_its_signature_and_parameters() {
    let text = "GMP.ListenHook(\"Door.Open\", nil, function(door, ctx) end)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let hover = server
        .request::<HoverRequest>(HoverParams {
            text_document_position_params: at(&uri, after(text, "Listen", 0)),
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .expect("a hover");
    let HoverContents::Markup(markup) = hover.contents else {
        panic!("markup")
    };
    assert!(
        markup.value.contains("ListenHook(key, owner, fn, [opts])"),
        "{}",
        markup.value
    );
    assert!(
        markup.value.contains("`opts`: optional: `priority`"),
        "{}",
        markup.value
    );
}

#[test]
fn signature_help_names_the_functions_parameters_from_the_open_parenthesis() {
    let lua = "ListenObjectMessage(\n";
    let typing = "NotifyMessage(\"Inv.\n";
    let p = one_script("main.lua", lua);
    std::fs::write(p.path("b.lua"), typing).unwrap();
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let (label, active, text) = signature(&server, &uri, after(lua, "(", 0)).expect("help");
    assert_eq!(
        (label.as_str(), active, text.as_str()),
        ("ListenObjectMessage(obj, key, owner, fn, [opts])", 0, "obj")
    );
    let b = server.open(&p.path("b.lua"));
    assert_eq!(
        active_param(&server, &b, after(typing, "Inv.", 0)).as_deref(),
        Some("key")
    );
}
