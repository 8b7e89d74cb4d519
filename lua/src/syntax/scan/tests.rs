use expect_test::expect;
use gantry_host::{ApiFunction, Literal, ScannedCall};

use super::scan;

/// `Function@line:col key` per call (1-based line, 0-based byte column).
fn summary(source: &str) -> String {
    scan(source)
        .iter()
        .map(|c| {
            format!(
                "{}{}@{}:{} {:?}\n",
                if c.via_gmp { "GMP." } else { "" },
                c.function,
                c.call.start_pos.line + 1,
                c.call.start_pos.column,
                c.literal_key()
            )
        })
        .collect()
}

fn text(source: &str, span: gantry_host::Span) -> &str {
    &source[span.start..span.end]
}

fn only(source: &str) -> ScannedCall {
    let mut calls = scan(source);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    calls.remove(0)
}

#[test]
fn nested_calls_in_listener_functions_are_reported_outer_first() {
    let src = r#"
ListenMessage("Player.Hurt", self, function(dmg)
    NotifyObjectMessage(self, "Ui.Flash", { color = GMP.RunHook("Theme.Color", dmg) })
end)
"#;
    expect![[r#"
        ListenMessage@2:0 Some("Player.Hurt")
        NotifyObjectMessage@3:4 Some("Ui.Flash")
        GMP.RunHook@3:52 Some("Theme.Color")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn calls_in_table_constructors_are_reported() {
    let src = "local t = { NotifyMessage('A'), x = RunHook('B', 1), [UnbindMessage('C', 1)] = 2 }";
    expect![[r#"
        NotifyMessage@1:12 Some("A")
        RunHook@1:36 Some("B")
        UnbindMessage@1:54 Some("C")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn calls_in_strings_and_comments_are_not_reported() {
    let src = r#"
local s = "NotifyMessage('A')"
local l = [==[ NotifyMessage("B") ]] still string ]==]
-- NotifyMessage("C")
--[==[
NotifyMessage("D") ]]
]==]
NotifyMessage("E")
"#;
    expect![[r#"
        NotifyMessage@8:0 Some("E")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn multi_line_calls_have_spans_on_every_line() {
    let src = "NotifyObjectMessage(\n  self,\n  \"Player.Hurt\",\n  10\n)\n";
    let call = only(src);
    assert_eq!(call.call.start_pos.line, 0);
    assert_eq!(call.call.end_pos.line, 4);
    assert_eq!(text(src, call.callee), "NotifyObjectMessage");
    assert_eq!(
        text(src, call.arg_list),
        "(\n  self,\n  \"Player.Hurt\",\n  10\n)"
    );
    let key = call.key_arg().unwrap();
    assert_eq!((key.span.start_pos.line, key.span.start_pos.column), (2, 2));
    assert_eq!(text(src, call.args[2].span), "10");
}

#[test]
fn long_bracket_keys_are_unescaped() {
    let call = only("NotifyMessage([==[\nPlayer.Hurt]==])");
    assert_eq!(call.literal_key(), Some("Player.Hurt"));
    let call = only(r#"NotifyMessage("Player\x2eHurt")"#);
    assert_eq!(call.literal_key(), Some("Player.Hurt"));
}

#[test]
fn local_shadows_only_after_its_statement() {
    let src = r#"
NotifyObjectMessage(self, "Before", 1)
local NotifyObjectMessage = function(...) NotifyObjectMessage(self, "InsideInit") end
NotifyObjectMessage(self, "After", 1)
"#;
    expect![[r#"
        NotifyObjectMessage@2:0 Some("Before")
        NotifyObjectMessage@3:42 Some("InsideInit")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn local_alias_of_the_global_shadows_after_the_statement() {
    let src = "local NotifyMessage = NotifyMessage\nNotifyMessage('A')\n";
    assert!(scan(src).is_empty());
}

#[test]
fn block_local_does_not_shadow_after_its_block() {
    let src = r#"
do local RunHook = print; RunHook("In") end
if x then local RunHook = 1 else RunHook("Else") end
RunHook("Out")
"#;
    expect![[r#"
        RunHook@3:33 Some("Else")
        RunHook@4:0 Some("Out")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn function_parameters_shadow_in_the_body_only() {
    let src = r#"
local function f(NotifyMessage, ...) NotifyMessage("Param") end
local g = function(GMP) GMP.NotifyMessage("ParamGmp") end
NotifyMessage("Outside")
GMP.NotifyMessage("OutsideGmp")
"#;
    expect![[r#"
        NotifyMessage@4:0 Some("Outside")
        GMP.NotifyMessage@5:0 Some("OutsideGmp")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn local_function_shadows_in_its_own_body_and_after() {
    let src = r#"
RunHook("Before")
local function RunHook(k) RunHook("Recursive") end
RunHook("After")
"#;
    expect![[r#"
        RunHook@2:0 Some("Before")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn global_function_declaration_does_not_shadow() {
    // Replacing the global is not a local; the call still reaches a global.
    let src = "function Helper(NotifyMessage) end\nNotifyMessage('A')";
    assert_eq!(scan(src).len(), 1);
}

#[test]
fn for_variables_shadow_in_the_loop_body_only() {
    let src = r#"
for RunHook = RunHook("Start"), 3 do RunHook("Body") end
for _, GMP in ipairs(GMP.RunHook("List")) do GMP.RunHook("Body") end
RunHook("After")
"#;
    expect![[r#"
        RunHook@2:14 Some("Start")
        GMP.RunHook@3:21 Some("List")
        RunHook@4:0 Some("After")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn repeat_body_locals_are_visible_in_until() {
    let src = "repeat local RunHook = f until RunHook('Cond')\nRunHook('After')";
    expect![[r#"
        RunHook@2:0 Some("After")
    "#]]
    .assert_eq(&summary(src));
}

#[test]
fn attributes_are_not_names() {
    let src = "local NotifyMessage <const> = 1\nlocal x <close> = nil\nNotifyMessage('A')";
    assert!(scan(src).is_empty());
    let src = "local close <close> = nil\nNotifyMessage('A')";
    assert_eq!(scan(src).len(), 1);
}

#[test]
fn method_calls_are_not_api_calls() {
    assert!(scan(r#"obj:NotifyObjectMessage(self, "A")"#).is_empty());
    assert!(scan(r#"GMP:NotifyObjectMessage(self, "A")"#).is_empty());
}

#[test]
fn field_calls_on_tables_other_than_gmp_are_not_api_calls() {
    assert!(scan(r#"t.NotifyMessage("A")"#).is_empty());
    assert!(scan(r#"a.GMP.NotifyMessage("A")"#).is_empty());
    assert!(scan(r#"GMP["NotifyMessage"]("A")"#).is_empty());
    assert!(scan(r#"GMP.NotAnApi("A")"#).is_empty());
}

#[test]
fn gmp_field_calls_are_api_calls() {
    let src = r#"GMP.NotifyMessage("A")"#;
    let call = only(src);
    assert!(call.via_gmp);
    assert_eq!(text(src, call.callee), "GMP.NotifyMessage");
}

#[test]
fn request_and_stored_array_only_via_gmp() {
    assert!(scan(r#"Request(self, "A")"#).is_empty());
    assert!(scan(r#"StoredArray(self, "A")"#).is_empty());
    assert_eq!(
        only(r#"GMP.Request(self, "A")"#).function,
        ApiFunction::Request
    );
    assert_eq!(
        only(r#"GMP.StoredArray(self, "A")"#).function,
        ApiFunction::StoredArray
    );
}

#[test]
fn parenthesised_and_concatenated_keys_are_not_literal() {
    assert_eq!(only(r#"NotifyMessage(("Key"))"#).literal_key(), None);
    assert_eq!(only(r#"NotifyMessage("A" .. ".B")"#).literal_key(), None);
    assert_eq!(only(r#"NotifyMessage(key)"#).literal_key(), None);
}

#[test]
fn string_and_table_call_forms_have_one_argument() {
    let src = r#"NotifyMessage "Player.Hurt""#;
    let call = only(src);
    assert_eq!(call.literal_key(), Some("Player.Hurt"));
    assert_eq!(text(src, call.arg_list), r#""Player.Hurt""#);
    let call = only("NotifyMessage{1}");
    assert_eq!(call.args.len(), 1);
    assert_eq!(call.args[0].literal, Some(Literal::Table));
}

#[test]
fn literal_types_of_arguments() {
    let call = only(
        r#"NotifyMessage("K", 1, -2, 1.5, -0.5, 0x10, true, false, nil, {a=1}, 'x', x, f(), (1))"#,
    );
    let literals: Vec<Option<Literal>> = call.args.iter().map(|a| a.literal.clone()).collect();
    assert_eq!(
        literals,
        vec![
            Some(Literal::Str("K".into())),
            Some(Literal::Int(1)),
            Some(Literal::Int(-2)),
            Some(Literal::Float(1.5)),
            Some(Literal::Float(-0.5)),
            Some(Literal::Int(16)),
            Some(Literal::Bool(true)),
            Some(Literal::Bool(false)),
            Some(Literal::Nil),
            Some(Literal::Table),
            Some(Literal::Str("x".into())),
            None,
            None,
            None,
        ]
    );
    assert_eq!(call.message_args().len(), 13);
}

#[test]
fn listener_function_literals_carry_their_parameter_names() {
    let call = only(
        "ListenObjectMessage(self, 'Player.Hurt', self, function(dmg, causer, ...) end, {times = 1})",
    );
    let listener = call.listener_arg().unwrap();
    assert_eq!(
        listener.function_params.as_deref(),
        Some(&["dmg".to_owned(), "causer".to_owned(), "...".to_owned()][..])
    );
    assert_eq!(call.args[4].function_params, None);
    assert_eq!(call.args[4].literal, Some(Literal::Table));
    let call = only("ListenMessage('K', self, function() end)");
    assert_eq!(call.listener_arg().unwrap().function_params, Some(vec![]));
}

#[test]
fn columns_are_byte_columns_after_utf8_text() {
    let src = "local s = 'héllo wörld'; NotifyMessage('A')";
    let call = only(src);
    assert_eq!(call.call.start, src.find("NotifyMessage").unwrap());
    assert_eq!(
        call.call.start_pos.column as usize,
        src.find("NotifyMessage").unwrap()
    );
    assert_eq!(call.call.start_pos.column, 27);
}

#[test]
fn source_with_syntax_errors_still_scans_the_valid_parts() {
    let src = "NotifyMessage('A')\nlocal = = =\n";
    assert!(scan(src).iter().any(|c| c.literal_key() == Some("A")));
}

#[test]
fn deeply_nested_expressions_do_not_overflow_the_stack() {
    let mut src = String::from("local x = 1");
    for _ in 0..20_000 {
        src.push_str(" .. 1");
    }
    src.push_str("\nNotifyMessage('A')");
    assert_eq!(scan(&src).len(), 1);
}

#[test]
fn local_env_hides_every_global_api_call() {
    let src = "local _ENV = { NotifyMessage = print }\nNotifyMessage('A')\nGMP.NotifyMessage('B')";
    assert!(scan(src).is_empty());
    let src = "local function f(_ENV) NotifyMessage('A') end\nNotifyMessage('B')";
    assert_eq!(summary(src), "NotifyMessage@2:0 Some(\"B\")\n");
}

/// Spans of the calls `scan_around` reports at the `$0` marker.
fn around(marked: &str) -> (String, Vec<(usize, usize)>) {
    let offset = marked.find("$0").expect("a $0 marker");
    let source = marked.replacen("$0", "", 1);
    let tree = crate::syntax::parse(&source, None).expect("parses");
    let calls = super::scan_around(&tree, &source, offset)
        .iter()
        .map(|c| (c.call.start, c.call.end))
        .collect();
    (source, calls)
}

#[test]
fn scan_around_reports_exactly_the_whole_scans_calls_of_the_statement_at_the_cursor() {
    let marked = r#"
NotifyMessage("A.One", 1)
local function f(x)
    NotifyObjectMessage(self, "B.Two", x)
    if x then GMP.RunHook("B.$0Three", x) end
end
ListenMessage("C.Four", self, function(a) NotifyMessage("C.Five", a) end)
"#;
    let (source, calls) = around(marked);
    let statement = source.find("local function").unwrap()..source.find("\nListenMessage").unwrap();
    let expected: Vec<(usize, usize)> = scan(&source)
        .iter()
        .filter(|c| statement.contains(&c.call.start))
        .map(|c| (c.call.start, c.call.end))
        .collect();
    assert_eq!(expected.len(), 2);
    assert_eq!(calls, expected);
}

#[test]
fn scan_around_honours_top_level_locals_above_the_statement() {
    // Shadowed by a chunk-level local declared earlier: not an API call.
    let (_, calls) = around("local NotifyMessage = print\nlocal x = 1\nNotifyMessage(\"A.$0B\")\n");
    assert!(calls.is_empty(), "{calls:?}");
    let (_, calls) = around("local function GMP() end\nGMP.NotifyMessage(\"A.$0B\")\n");
    assert!(calls.is_empty(), "{calls:?}");
    // A local inside an earlier function body does not leak out.
    let (_, calls) =
        around("local function f() local NotifyMessage = print end\nNotifyMessage(\"A.$0B\")\n");
    assert_eq!(calls.len(), 1);
}

#[test]
fn scan_around_between_statements_finds_nothing_and_does_not_panic() {
    let (_, calls) = around("NotifyMessage(\"A\")\n\n$0\nNotifyMessage(\"B\")\n");
    assert!(calls.is_empty(), "{calls:?}");
    let (_, calls) = around("$0");
    assert!(calls.is_empty());
    let (_, calls) = around("NotifyMessage(\"A.$0");
    assert!(calls.len() <= 1);
}

/// Scripts whose whole-chunk statement scan must equal the tree walk:
/// nesting, shadowing at every level, syntax errors.
const STATEMENT_SCRIPTS: &[&str] = &[
    "NotifyMessage(\"A\")\nlocal function f(x) GMP.RunHook(\"B\", x) end\nListenMessage(\"C\", self, function(a) NotifyMessage(\"D\", a) end)\n",
    "local NotifyMessage = print\nNotifyMessage(\"A\")\nGMP.NotifyMessage(\"B\")\n",
    "do local GMP = {} GMP.NotifyMessage(\"A\") end\nGMP.NotifyMessage(\"B\")\n",
    "NotifyMessage(\"A.\nlocal x = 1\nNotifyMessage(\"B\")\n",
    "local _ENV = {}\nNotifyMessage(\"A\")\n",
    "for NotifyMessage = 1, 2 do NotifyMessage(\"A\") end NotifyMessage(\"B\")\n",
    "repeat local RunHook = 1 until RunHook(\"A\")\nRunHook(\"B\")\n",
    "if x then local NotifyMessage = 1 end NotifyMessage(\"A\") ) ( NotifyMessage(\"B\"\n",
];

#[test]
fn scan_statements_over_the_whole_chunk_equals_the_tree_walk() {
    for source in STATEMENT_SCRIPTS {
        let tree = crate::syntax::parse(source, None).expect("parses");
        let whole = super::scan_tree(&tree, source);
        let statements =
            super::scan_statements(&tree, source, 0..source.len(), super::ChunkLocals::NONE);
        assert_eq!(statements.calls, whole, "{source}");
    }
}

#[test]
fn scan_statements_reports_chunk_level_declarations_of_tracked_names_only() {
    let source = "local x = 1\nlocal NotifyMessage = print\nlocal function f() local GMP = 1 end\nlocal function RunHook() end\n";
    let tree = crate::syntax::parse(source, None).expect("parses");
    let scan = super::scan_statements(&tree, source, 0..source.len(), super::ChunkLocals::NONE);
    let lines: Vec<&str> = scan
        .declarations
        .iter()
        .map(|(range, names)| {
            assert!(!names.is_empty());
            &source[range.clone()]
        })
        .collect();
    assert_eq!(
        lines,
        [
            "local NotifyMessage = print",
            "local function RunHook() end"
        ]
    );
    assert_eq!(scan.covered, Some(0..source.len() - 1));
}

#[test]
fn scan_statements_scans_only_the_statements_overlapping_the_range_with_the_locals_above() {
    let source =
        "local NotifyMessage = print\nNotifyMessage(\"A\")\nRunHook(\"B\")\nRunHook(\"C\")\n";
    let tree = crate::syntax::parse(source, None).expect("parses");
    let above = super::scan_statements(&tree, source, 0..0, super::ChunkLocals::NONE);
    assert_eq!(above.declarations.len(), 1);
    let names = above.declarations[0].1;
    let start = source.find("NotifyMessage(").unwrap();
    let end = source.find("RunHook(\"B\")").unwrap() + 2;
    // Without the declaration above, the first statement is an API call.
    let unseeded = super::scan_statements(&tree, source, start..end, super::ChunkLocals::NONE);
    assert_eq!(unseeded.calls.len(), 2);
    let seeded = super::scan_statements(&tree, source, start..end, names);
    let keys: Vec<_> = seeded.calls.iter().map(|c| c.literal_key()).collect();
    assert_eq!(keys, [Some("B")]);
    assert_eq!(
        seeded.covered,
        Some(start..source.find("RunHook(\"B\")").unwrap() + "RunHook(\"B\")".len())
    );
    // A range inside blank lines between statements touches none.
    let source = "NotifyMessage(\"A\")\n\n\nNotifyMessage(\"B\")\n";
    let tree = crate::syntax::parse(source, None).expect("parses");
    let gap = source.find("\n\n").unwrap() + 1;
    let none = super::scan_statements(&tree, source, gap..gap, super::ChunkLocals::NONE);
    assert!(none.calls.is_empty());
    assert_eq!(none.covered, None);
}

/// Replaces the first `old` of `source` by `new` as an editor would: the
/// tree learns the edit but is not reparsed. Returns the new text and the
/// written bytes.
fn edit_unparsed(
    tree: &mut tree_sitter::Tree,
    source: &str,
    old: &str,
    new: &str,
) -> (String, std::ops::Range<usize>) {
    let start = source.find(old).expect("the text to replace");
    let text = format!("{}{new}{}", &source[..start], &source[start + old.len()..]);
    let point = |text: &str, offset: usize| {
        let before = &text[..offset];
        let row = before.matches('\n').count();
        let column = offset - before.rfind('\n').map_or(0, |i| i + 1);
        tree_sitter::Point::new(row, column)
    };
    tree.edit(&tree_sitter::InputEdit {
        start_byte: start,
        old_end_byte: start + old.len(),
        new_end_byte: start + new.len(),
        start_position: point(source, start),
        old_end_position: point(source, start + old.len()),
        new_end_position: point(&text, start + new.len()),
    });
    (text, start..start + new.len())
}

const EDITED_SCRIPT: &str = r#"NotifyMessage("A.One", 1)
local function f(x)
    NotifyObjectMessage(self, "B.Two", x)
    if x then GMP.RunHook("B.Three", x) end
end
ListenMessage("C.Four", self, function(a) NotifyMessage("C.Five", a) end)
"#;

#[test]
fn scan_edited_parses_the_edited_statement_alone_and_agrees_with_a_reparse() {
    let mut tree = crate::syntax::parse(EDITED_SCRIPT, None).unwrap();
    let (text, written) = edit_unparsed(&mut tree, EDITED_SCRIPT, "B.Two", "B.Twice");
    let offset = written.end - 1;
    let calls = super::scan_edited(&tree, &text, written, offset)
        .expect("answers")
        .calls;
    let fresh = crate::syntax::parse(&text, Some(&tree)).unwrap();
    assert_eq!(calls, super::scan_around(&fresh, &text, offset));
    let keys: Vec<_> = calls.iter().filter_map(|c| c.literal_key()).collect();
    assert_eq!(keys, ["B.Twice", "B.Three"]);
    // Positions are the document's, not the statement's.
    assert_eq!(calls[0].call.start_pos.line, 2);
    assert_eq!(calls[0].call.start_pos.column, 4);
}

#[test]
fn scan_edited_honours_top_level_locals_above_the_edited_statement() {
    let source = format!("local NotifyObjectMessage = print\n{EDITED_SCRIPT}");
    let mut tree = crate::syntax::parse(&source, None).unwrap();
    let (text, written) = edit_unparsed(&mut tree, &source, "B.Two", "B.Twice");
    let calls = super::scan_edited(&tree, &text, written.clone(), written.end)
        .expect("answers")
        .calls;
    let keys: Vec<_> = calls.iter().filter_map(|c| c.literal_key()).collect();
    assert_eq!(keys, ["B.Three"]);
}

#[test]
fn scan_edited_declines_an_edit_at_a_statement_edge_and_parses_from_the_edit_to_the_cursor() {
    // Typing at a statement's first byte can join it to the one before.
    let mut tree = crate::syntax::parse(EDITED_SCRIPT, None).unwrap();
    let (text, written) =
        edit_unparsed(&mut tree, EDITED_SCRIPT, "ListenMessage", "xListenMessage");
    assert_eq!(
        super::scan_edited(&tree, &text, written.clone(), written.end),
        None
    );
    // An edit in the first statement, a completion in the last.
    let mut tree = crate::syntax::parse(EDITED_SCRIPT, None).unwrap();
    let (text, written) = edit_unparsed(&mut tree, EDITED_SCRIPT, "A.One", "A.Once");
    let cursor = text.find("C.Four").unwrap();
    let calls = super::scan_edited(&tree, &text, written, cursor).map(|e| e.calls);
    // Both statements and everything between are parsed together; the
    // answer is the cursor's statement's calls.
    let calls = calls.expect("the statements from the edit to the cursor are parsed");
    let fresh = crate::syntax::parse(&text, None).unwrap();
    assert_eq!(calls, super::scan_around(&fresh, &text, cursor));
    let keys: Vec<_> = calls.iter().filter_map(|c| c.literal_key()).collect();
    assert_eq!(keys, ["C.Four", "C.Five"]);
    // An edit after a statement that is a parse error is not trusted.
    let source = format!("local = = 1\n{EDITED_SCRIPT}");
    let mut tree = crate::syntax::parse(&source, None).unwrap();
    let (text, written) = edit_unparsed(&mut tree, &source, "A.One", "A.Once");
    assert_eq!(
        super::scan_edited(&tree, &text, written.clone(), written.end),
        None
    );
}

/// `comment_at` at the `$0` marker of a parsed source.
fn in_comment(marked: &str) -> bool {
    let offset = marked.find("$0").expect("a $0 marker");
    let source = marked.replacen("$0", "", 1);
    let tree = crate::syntax::parse(&source, None).expect("parses");
    super::comment_at(&tree, &source, offset)
}

#[test]
fn comment_at_knows_line_and_long_comments_and_where_they_end() {
    assert!(in_comment("-- NotifyMessage(\"A.$0\")\nx = 1\n"));
    assert!(in_comment("x = 1 -- trailing$0\n"));
    assert!(in_comment("--[[\nNotifyMessage(\"A.$0\")\n]]\n"));
    // Tree-sitter reads an unterminated long comment's opener as an error
    // and what follows as code (Lua refuses the chunk): no comment there.
    assert!(!in_comment("--[==[\nNotifyMessage(\"A.$0\")\n"));
    assert!(!in_comment("--[[ closed ]]$0 NotifyMessage(\"A\")\n"));
    assert!(!in_comment("--[=[ closed ]=]$0\n"));
    assert!(!in_comment("NotifyMessage(\"A.$0\") -- after\n"));
    assert!(!in_comment("$0-- before the comment\n"));
    assert!(!in_comment("x = \"--[[ in a string $0\"\n"));
}
