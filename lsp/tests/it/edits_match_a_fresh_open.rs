//! A document edited keystroke by keystroke answers as the same text
//! freshly opened does: completions and signature help right after each edit (answered from
//! the last parse and the edited statements, before any reparse), and the
//! diagnostics and document symbols once the edits settle — for edits
//! above, below and inside the statements asked about, new lines inserted
//! and joined, and characters of several bytes and UTF-16 units.

use lsp_types::notification::DidOpenTextDocument;
use lsp_types::request::DocumentSymbolRequest;
use lsp_types::{
    DidOpenTextDocumentParams, DocumentSymbolParams, PartialResultParams, Position, Range,
    TextDocumentIdentifier, TextDocumentItem, Uri, WorkDoneProgressParams,
};
use proptest::prelude::*;

use crate::support::Server;
use crate::support::editor::{
    completion_items, diagnostics_at_version, one_script, pos, signature,
};

const SCRIPT: &str = r#"local function hurt(amount)
  NotifyMessage("Player.Hurt", amount, self)
end
-- a comment: NotifyMessage("Not.A.Call")
ListenMessage("Player.Healed", self, function(amount)
  if amount > 1 then
    NotifyMessage("Player.Hurt", 1.0, self)
  end
end)
local gold = "🎮 é"
NotifyMessage("Player.", 2.0, self)
GMP.NotifyMessage("Inv.Gold", 3)
local function heal()
  NotifyMessage("Player.Healed", 1)
end
ListenMessage("Inv.", self, function(a) end)
NotifyMessage(
  "Player.Hurt",
  4.0, self)
"#;

/// What one keystroke (or paste) writes.
const TYPED: &[&str] = &[
    "x",
    "\n",
    "é",
    "🎮",
    " ",
    "-",
    "\"",
    "local a = 1\n",
    "NotifyMessage(\"Player.Hurt\", 1.0, self)\n",
    "local NotifyMessage = print\n",
];

#[derive(Debug, Clone)]
enum Keystroke {
    /// Writes `TYPED[n]` at (line, column seed).
    Type(usize, usize, usize),
    /// Deletes the character at (line, column seed), a line break at a
    /// line's end.
    Delete(usize, usize),
}

fn keystroke() -> impl Strategy<Value = Keystroke> {
    prop_oneof![
        3 => (0..TYPED.len(), 0usize..20, 0usize..40).prop_map(|(t, l, c)| Keystroke::Type(t, l, c)),
        2 => (0usize..20, 0usize..40).prop_map(|(l, c)| Keystroke::Delete(l, c)),
    ]
}

/// The byte at (line, column seed) of `text`, on a character boundary.
fn offset(text: &str, line: usize, column: usize) -> usize {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let start = starts[line % starts.len()];
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let mut at = (start + column).min(end);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Where completion is asked: in the key of every call whose key starts
/// with a group (`"Player.`, `"Inv.`), and at every line's start.
fn cursors(text: &str) -> Vec<usize> {
    let mut out: Vec<usize> = ["\"Player.", "\"Inv.", "4.0"]
        .iter()
        .flat_map(|m| text.match_indices(m).map(|(i, m)| i + m.len()))
        .collect();
    out.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    out
}

fn clean(text: &str) -> bool {
    gantry_lua::syntax::parse(text, None).is_some_and(|t| !t.root_node().has_error())
}

/// The completion items and the signature help at `position`.
fn labels_at(server: &Server, uri: &Uri, position: Position) -> Vec<String> {
    let mut labels: Vec<String> = completion_items(server, uri, position)
        .into_iter()
        .map(|i| format!("{} {:?}", i.label, i.text_edit))
        .collect();
    labels.sort();
    labels.push(format!("{:?}", signature(server, uri, position)));
    labels
}

fn symbols(server: &Server, uri: &Uri) -> String {
    let found = server.request::<DocumentSymbolRequest>(DocumentSymbolParams {
        text_document: TextDocumentIdentifier::new(uri.clone()),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    });
    serde_json::to_string(&found).unwrap()
}

/// Opens (or reopens) `uri` with `text` from memory.
fn open(server: &Server, uri: &Uri, version: i32, text: &str) {
    server.notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
        text_document: TextDocumentItem::new(
            uri.clone(),
            "lua".to_owned(),
            version,
            text.to_owned(),
        ),
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn an_edited_document_answers_like_the_same_text_freshly_opened(
        keystrokes in prop::collection::vec(keystroke(), 1..12),
        asked in 0usize..64,
    ) {
        let p = one_script("edited.lua", SCRIPT);
        let server = Server::start(p.dir.path());
        let edited = server.open(&p.path("edited.lua"));
        let fresh = p.uri("fresh.lua");
        let mut text = SCRIPT.to_owned();
        let mut version = 1;
        for (step, keystroke) in keystrokes.iter().enumerate() {
            let (start, end, new) = match *keystroke {
                Keystroke::Type(t, line, column) => {
                    let at = offset(&text, line, column);
                    (at, at, TYPED[t])
                }
                Keystroke::Delete(line, column) => {
                    let at = offset(&text, line, column);
                    let len = text[at..].chars().next().map_or(0, char::len_utf8);
                    (at, at + len, "")
                }
            };
            server.edit(&edited, Range::new(pos(&text, start), pos(&text, end)), new);
            text.replace_range(start..end, new);
            version += 1;
            let cursors = cursors(&text);
            let at = pos(&text, cursors[(asked + step) % cursors.len()]);
            // Asked at once, before the pause that reparses the document.
            let answered = labels_at(&server, &edited, at);
            open(&server, &fresh, version, &text);
            if clean(&text) {
                prop_assert_eq!(answered, labels_at(&server, &fresh, at), "at {:?} in {:?}", at, text);
            }
        }
        // Once settled, the diagnostics and the symbols agree too.
        let settled = diagnostics_at_version(&server, &edited, version);
        if clean(&text) {
            prop_assert_eq!(settled, diagnostics_at_version(&server, &fresh, version), "in {:?}", text);
            prop_assert_eq!(symbols(&server, &edited), symbols(&server, &fresh), "in {:?}", text);
        }
    }
}
