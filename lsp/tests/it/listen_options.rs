//! Inside the options table of a listen, the option names complete with
//! their types and docs (only those not written yet, only those the listen
//! takes), and `match` completes its two values — in Lua and in Rhai.

use lsp_types::{CompletionTextEdit, Documentation, Position};

use crate::support::Server;
use crate::support::editor::{after, completion_items, labels, one_script};

/// Labels and what each inserts, at `position` of the file `name` holding `text`.
fn inserts(name: &str, text: &str, position: Position) -> Vec<(String, String)> {
    let p = one_script(name, text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path(name));
    completion_items(&server, &uri, position)
        .into_iter()
        .map(|i| {
            let insert = match i.text_edit {
                Some(CompletionTextEdit::Edit(e)) => e.new_text,
                _ => String::new(),
            };
            (i.label, insert)
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn a_lua_message_listen_completes_every_option_with_its_doc() {
    let text = "ListenMessage(\"Player.Hurt\", self, function(d) end, { })\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    let items = completion_items(&server, &uri, after(text, "{ ", 0));
    let names: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(names, ["times", "order", "match", "key", "respond"]);
    let respond = &items[4];
    assert_eq!(respond.detail.as_deref(), Some("respond: boolean"));
    let Some(Documentation::MarkupContent(doc)) = &respond.documentation else {
        panic!("markdown documentation")
    };
    assert!(doc.value.contains("answers requests"), "{}", doc.value);
    let Some(CompletionTextEdit::Edit(edit)) = &items[0].text_edit else {
        panic!("a text edit")
    };
    assert_eq!(edit.new_text, "times = ");
}

#[test]
fn options_already_written_are_not_offered_again() {
    let text = "ListenMessage(\"Player.Hurt\", self, function(d) end, { order = 1, match = \"partial\", re })\n";
    assert_eq!(
        inserts("main.lua", text, after(text, "re", 0)),
        pairs(&[
            ("times", "times = "),
            ("key", "key = "),
            ("respond", "respond = ")
        ])
    );
}

#[test]
fn match_completes_its_values_inside_and_before_the_quotes() {
    let text = "ListenMessage(\"Player.Hurt\", self, function(d) end, { match = \"pa\" })\n";
    assert_eq!(
        inserts("main.lua", text, after(text, "\"pa", 0)),
        pairs(&[("exact", "exact"), ("partial", "partial")])
    );
    let text = "ListenMessage(\"Player.Hurt\", self, function(d) end, { match =  })\n";
    assert_eq!(
        inserts("main.lua", text, after(text, "match = ", 0)),
        pairs(&[("exact", "\"exact\""), ("partial", "\"partial\"")])
    );
    let text = "ListenMessage(\"Player.Hurt\", self, function(d) end, { key = t })\n";
    assert_eq!(
        inserts("main.lua", text, after(text, "key = t", 0)),
        pairs(&[("true", "true"), ("false", "false")])
    );
}

#[test]
fn a_hook_listen_offers_the_hook_options_only() {
    let text = "ListenHook(\"Door.Open\", nil, function(door, ctx) end, {\n  pr\n})\n";
    assert_eq!(
        inserts("main.lua", text, after(text, "pr", 0)),
        pairs(&[("priority", "priority = "), ("match", "match = ")])
    );
}

#[test]
fn a_rhai_map_completes_the_options_and_match_values() {
    let text = "ListenMessage(\"Player.Hurt\", (), |d| {}, #{ order: 1,  });\n";
    assert_eq!(
        labels_of(inserts("main.rhai", text, after(text, "order: 1, ", 0))),
        ["times", "match", "key", "respond"]
    );
    assert_eq!(
        inserts("main.rhai", text, after(text, "order: 1, ", 0))[0].1,
        "times: "
    );
    let text = "ListenMessage(\"Player.Hurt\", (), |d| {}, #{ \"match\": \"ex\" });\n";
    assert_eq!(
        inserts("main.rhai", text, after(text, "\"ex", 0)),
        pairs(&[("exact", "exact"), ("partial", "partial")])
    );
}

#[test]
fn other_arguments_and_other_calls_get_no_options() {
    // A table as a message value is not an options table.
    let text = "NotifyMessage(\"Player.Hurt\", { }, self)\nListenMessage(\"Player.Hurt\", self, function(d) local t = { } end)\n";
    let p = one_script("main.lua", text);
    let server = Server::start(p.dir.path());
    let uri = server.open(&p.path("main.lua"));
    assert!(labels(&server, &uri, after(text, "{ ", 0)).is_empty());
    assert!(labels(&server, &uri, after(text, "{ ", 1)).is_empty());
}

fn labels_of(items: Vec<(String, String)>) -> Vec<String> {
    items.into_iter().map(|(l, _)| l).collect()
}

#[test]
fn a_comparison_in_a_value_is_not_taken_for_the_next_option() {
    let text = "ListenMessage(\"Player.Hurt\", self, function(d) end, { order = n >= 2 and 1 or 2, times = n == 1 and 1 or 3, ma })\n";
    assert_eq!(
        labels_of(inserts("main.lua", text, after(text, ", ma", 0))),
        ["match", "key", "respond"]
    );
}
