//! The scanner's and rewriter's rules, one test each, as a script author
//! would notice them.

use gantry_host::{ApiFunction, Literal, ScannedCall, baked_name};
use proptest::prelude::*;
use rhai::{Dynamic, Engine, EvalAltResult, Position};

use super::{rewrite, scan};

fn only(src: &str) -> ScannedCall {
    let calls = scan(src);
    assert_eq!(calls.len(), 1, "expected one call in {src:?}: {calls:#?}");
    calls.into_iter().next().unwrap()
}

fn text(src: &str, span: gantry_host::Span) -> &str {
    &src[span.start..span.end]
}

fn arg_texts<'a>(src: &'a str, call: &ScannedCall) -> Vec<&'a str> {
    call.args.iter().map(|a| text(src, a.span)).collect()
}

#[test]
fn call_reports_spans_of_call_callee_arg_list_and_each_argument() {
    let src = "let x = 1;\n  NotifyObjectMessage(obj, \"Player.Hurt\", 5, x + 1);";
    let call = only(src);
    assert_eq!(call.function, ApiFunction::NotifyObjectMessage);
    assert!(!call.via_gmp);
    assert_eq!(
        text(src, call.call),
        "NotifyObjectMessage(obj, \"Player.Hurt\", 5, x + 1)"
    );
    assert_eq!(text(src, call.callee), "NotifyObjectMessage");
    assert_eq!(text(src, call.arg_list), "(obj, \"Player.Hurt\", 5, x + 1)");
    assert_eq!(
        arg_texts(src, &call),
        ["obj", "\"Player.Hurt\"", "5", "x + 1"]
    );
    assert_eq!(call.call.start_pos.line, 1);
    assert_eq!(call.call.start_pos.column, 2);
    assert_eq!(call.args[1].span.start_pos.column, 27);
    assert_eq!(call.literal_key(), Some("Player.Hurt"));
}

#[test]
fn literal_arguments_are_reported_with_their_values() {
    let src = r##"NotifyMessage("K.A", "a\tb\"c\u0041", 42, -7, 2.5, true, false, (), #{a: 1}, [1, 2], 'c', x, #"raw"#)"##;
    let call = only(src);
    let literals: Vec<_> = call.args.iter().map(|a| a.literal.clone()).collect();
    assert_eq!(
        literals,
        [
            Some(Literal::Str("K.A".into())),
            Some(Literal::Str("a\tb\"cA".into())),
            Some(Literal::Int(42)),
            Some(Literal::Int(-7)),
            Some(Literal::Float(2.5)),
            Some(Literal::Bool(true)),
            Some(Literal::Bool(false)),
            Some(Literal::Nil),
            Some(Literal::Table),
            Some(Literal::Array),
            None,
            None,
            Some(Literal::Str("raw".into())),
        ]
    );
}

#[test]
fn nested_calls_are_each_reported() {
    let src = r#"NotifyObjectMessage(GetObj(NotifyMessage("Inner", 1)), "Outer", f(2, 3))"#;
    let calls = scan(src);
    assert_eq!(calls.len(), 2);
    let outer = &calls[0];
    assert_eq!(outer.literal_key(), Some("Outer"));
    assert_eq!(
        arg_texts(src, outer),
        [
            r#"GetObj(NotifyMessage("Inner", 1))"#,
            r#""Outer""#,
            "f(2, 3)"
        ]
    );
    assert_eq!(calls[1].function, ApiFunction::NotifyMessage);
    assert_eq!(calls[1].literal_key(), Some("Inner"));
    assert_eq!(arg_texts(src, &calls[1]), [r#""Inner""#, "1"]);
}

#[test]
fn closure_listener_reports_its_params() {
    let src = r#"ListenObjectMessage(self, "Player.Hurt", self, |dmg, causer| {
    NotifyMessage("Log", dmg, causer);
}, #{ times: 1, order: -10 });"#;
    let calls = scan(src);
    assert_eq!(calls.len(), 2);
    let listen = &calls[0];
    assert_eq!(listen.args.len(), 5);
    let listener = listen.listener_arg().unwrap();
    assert_eq!(
        listener.function_params,
        Some(vec!["dmg".to_owned(), "causer".to_owned()])
    );
    assert!(text(src, listener.span).starts_with("|dmg, causer| {"));
    assert!(text(src, listener.span).ends_with('}'));
    assert_eq!(listen.args[4].literal, Some(Literal::Table));
    assert_eq!(calls[1].literal_key(), Some("Log"));
}

#[test]
fn closure_without_params_and_expression_body() {
    let src = r#"ListenMessage("A", self, || x + 1, #{}); ListenMessage("B", self, |a| a | 1, 2)"#;
    let calls = scan(src);
    assert_eq!(calls[0].args[2].function_params, Some(vec![]));
    assert_eq!(calls[0].args.len(), 4);
    // A `|` after an operand is a bitwise or, not a second closure.
    assert_eq!(calls[1].args[2].function_params, Some(vec!["a".to_owned()]));
    assert_eq!(text(src, calls[1].args[2].span), "|a| a | 1");
    assert_eq!(calls[1].args.len(), 4);
}

#[test]
fn fn_pointer_is_not_a_function_literal() {
    let call = only(r#"ListenMessage("A", self, Fn("on_a"))"#);
    assert_eq!(call.args[2].function_params, None);
    assert_eq!(call.args[2].literal, None);
}

#[test]
fn maps_and_arrays_as_args_keep_their_commas() {
    let src = r#"NotifyMessage("Inv.Items", #{ a: 1, b: [2, 3] }, [#{x: 1}, #{y: 2}], [1][0])"#;
    let call = only(src);
    assert_eq!(
        arg_texts(src, &call),
        [
            r#""Inv.Items""#,
            "#{ a: 1, b: [2, 3] }",
            "[#{x: 1}, #{y: 2}]",
            "[1][0]"
        ]
    );
    assert_eq!(call.args[1].literal, Some(Literal::Table));
    assert_eq!(call.args[2].literal, Some(Literal::Array));
    // Indexing an array literal is an expression, not a literal.
    assert_eq!(call.args[3].literal, None);
}

#[test]
fn multi_line_call_spans_lines() {
    let src = "NotifyObjectMessage(\n    obj,\n    \"Player.Hurt\",\n    5\n)";
    let call = only(src);
    assert_eq!(call.call.start_pos.line, 0);
    assert_eq!(call.call.end_pos.line, 4);
    assert_eq!(call.args[1].span.start_pos.line, 2);
    assert_eq!(call.args[1].span.start_pos.column, 4);
    assert_eq!(call.literal_key(), Some("Player.Hurt"));
}

#[test]
fn strings_and_comments_containing_call_text_are_not_calls() {
    let src = r##"
// NotifyMessage("InLineComment")
/* NotifyMessage("InBlock") /* nested NotifyMessage("X") */ */
/// NotifyMessage("InDoc")
let a = "NotifyMessage(\"InString\")";
let b = `NotifyMessage("InBacktick")`;
let c = #"NotifyMessage("InRaw")"#;
NotifyMessage("Real");
"##;
    let call = only(src);
    assert_eq!(call.literal_key(), Some("Real"));
}

#[test]
fn method_call_form_is_ignored() {
    let src = r#"obj.NotifyMessage("A"); obj?.NotifyMessage("B"); other::NotifyMessage("C"); NotifyMessage("D")"#;
    assert_eq!(only(src).literal_key(), Some("D"));
}

#[test]
fn user_defined_fn_shadows_the_name_everywhere_in_the_file() {
    let src = r#"
NotifyMessage("Before", 1);
fn NotifyMessage(key, value) { print(key); }
NotifyMessage("After", 2);
NotifyObjectMessage(obj, "Other", 3);
GMP::NotifyMessage("Qualified", 4);
"#;
    let keys: Vec<_> = scan(src)
        .iter()
        .map(|c| c.literal_key().unwrap().to_owned())
        .collect();
    // The author's own function is theirs; the qualified module call is not.
    assert_eq!(keys, ["Other", "Qualified"]);
}

#[test]
fn local_variable_shadows_the_name() {
    let src = r#"let RunHook = |k, p| p; RunHook("Hook.A", 1); ListenHook("Hook.B", self, |p| p)"#;
    assert_eq!(only(src).function, ApiFunction::ListenHook);
}

#[test]
fn module_qualified_gmp_form_sets_via_gmp() {
    let src = r#"GMP::NotifyMessage("A", 1); GMP::Request(obj, "B"); Request(obj, "C"); GMP::StoredArray(obj, "D")"#;
    let calls = scan(src);
    let found: Vec<_> = calls
        .iter()
        .map(|c| (c.function, c.via_gmp, c.literal_key().unwrap()))
        .collect();
    assert_eq!(
        found,
        [
            (ApiFunction::NotifyMessage, true, "A"),
            (ApiFunction::Request, true, "B"),
            (ApiFunction::StoredArray, true, "D"),
        ]
    );
    assert_eq!(text(src, calls[0].callee), "GMP::NotifyMessage");
    assert_eq!(text(src, calls[0].call), r#"GMP::NotifyMessage("A", 1)"#);
}

#[test]
fn gmp_imported_by_the_script_is_the_authors_module() {
    let src = r#"import "mine" as GMP; GMP::NotifyMessage("A"); NotifyMessage("B")"#;
    assert_eq!(only(src).literal_key(), Some("B"));
}

#[test]
fn interpolated_string_key_is_not_a_literal() {
    let src = "NotifyMessage(`Player.${name}.Hurt`, 1); NotifyMessage(`Plain.Key`, 2)";
    let calls = scan(src);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].literal_key(), None);
    assert_eq!(text(src, calls[0].args[0].span), "`Player.${name}.Hurt`");
    assert_eq!(calls[0].args.len(), 2);
    assert_eq!(calls[1].literal_key(), Some("Plain.Key"));
}

#[test]
fn calls_inside_interpolation_blocks_are_calls() {
    let src = "let s = `a ${ NotifyMessage(\"In.Block\", 1) } b`; NotifyMessage(\"After\")";
    let keys: Vec<_> = scan(src)
        .iter()
        .map(|c| c.literal_key().unwrap().to_owned())
        .collect();
    assert_eq!(keys, ["In.Block", "After"]);
}

#[test]
fn concatenated_string_key_is_not_a_literal() {
    let call = only(r#"NotifyMessage("a" + "b", 1)"#);
    assert_eq!(call.literal_key(), None);
    assert_eq!(call.args.len(), 2);
}

#[test]
fn unit_call_has_no_arguments() {
    let src = "NotifyMessage()";
    let call = only(src);
    assert!(call.args.is_empty());
    assert_eq!(text(src, call.arg_list), "()");
}

#[test]
fn unclosed_call_ends_at_its_last_argument() {
    let src = "NotifyObjectMessage(obj, \"Player.Hu\nlet y = 2;\nNotifyMessage(\"Next\", 1);";
    let calls = scan(src);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].args.len(), 2);
    assert_eq!(calls[0].literal_key(), None);
    assert_eq!(calls[0].call.end_pos.line, 0);
    assert_eq!(calls[1].literal_key(), Some("Next"));
}

#[test]
fn unterminated_strings_and_broken_code_do_not_panic() {
    for src in [
        "NotifyMessage(\"abc",
        "NotifyMessage(`abc ${",
        "NotifyMessage(`abc ${ x }",
        "NotifyMessage(|a, b",
        "NotifyMessage(#{a: [1, (2}",
        "GMP::",
        "GMP::NotifyMessage",
        "fn",
        "/* never closed NotifyMessage(\"x\")",
        "\"\\",
        "`\\",
        "#\"raw",
        "'",
        "'ab'",
        "0x",
        "1e",
        "1.",
        "\u{0}\u{FFFF}\r\r\n",
        "}}}}]]]))) NotifyMessage(",
    ] {
        let _ = scan(src);
        assert_eq!(rewrite(src).source, src);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_text_never_panics(src in "\\PC{0,200}") {
        let _ = scan(&src);
        let _ = rewrite(&src);
    }

    #[test]
    fn random_rhai_fragments_never_panic(parts in proptest::collection::vec(
        prop::sample::select(vec![
            "NotifyMessage", "GMP", "::", "(", ")", "\"K.A\"", "\"", "`", "${", "}", "{",
            "#{", "[", "]", "|", "||", ",", ";", "fn", "let", "obj", ".", "1", "-2.5",
            "//", "/*", "*/", "\n", " ", "\\", "'", "#", "ListenMessage", "x", "$",
        ]),
        0..60,
    )) {
        let src: String = parts.concat();
        let calls = scan(&src);
        for call in &calls {
            prop_assert!(call.call.start <= call.call.end && call.call.end <= src.len());
            for arg in &call.args {
                prop_assert!(arg.span.start <= arg.span.end && arg.span.end <= src.len());
            }
        }
        let _ = rewrite(&src);
    }
}

// ---- rewrite ----

#[test]
fn rewrite_bakes_literal_keys_and_removes_the_key_argument() {
    let src = r#"NotifyObjectMessage(obj, "Player.Hurt", 5); NotifyMessage("Score.Add", 1);"#;
    let out = rewrite(src);
    assert_eq!(
        out.source,
        r#"NotifyObjectMessage__Player__Hurt(obj , 5); NotifyMessage__Score__Add( 1);"#
    );
    assert_eq!(out.source.len(), src.len());
    assert_eq!(out.bakes.len(), 2);
    assert_eq!(out.bakes[0].function, ApiFunction::NotifyObjectMessage);
    assert_eq!(out.bakes[0].key, "Player.Hurt");
    assert_eq!(out.bakes[0].name, "NotifyObjectMessage__Player__Hurt");
    assert_eq!(out.bakes[0].site.start, 0);
}

#[test]
fn rewrite_keeps_lines_and_columns_of_tokens_after_the_key() {
    let src = "let a = 1;\nNotifyObjectMessage(obj, \"Player.Hurt\", a, b); let zz = 3;\n\
               ListenMessage(\"Enemy.Hit\", self, |d| {\n  NotifyMessage(\"Log\", d);\n});\n";
    let out = rewrite(src);
    assert_eq!(out.bakes.len(), 3);
    assert_eq!(out.source.lines().count(), src.lines().count());
    for (before, after) in src.lines().zip(out.source.lines()) {
        for token in ["a,", "b)", "let zz", "self,", "d);", "|d|", "});"] {
            if let Some(column) = before.find(token) {
                assert_eq!(
                    after.find(token),
                    Some(column),
                    "{token} moved in {after:?}"
                );
            }
        }
    }
}

#[test]
fn rewrite_of_a_multi_line_call_keeps_every_line() {
    let src = "NotifyObjectMessage(\n    obj,\n    \"Player.Hurt\",\n    5\n); let after = 1;";
    let out = rewrite(src);
    assert_eq!(out.bakes.len(), 1);
    assert_eq!(out.source.lines().count(), src.lines().count());
    let last = out.source.lines().last().unwrap();
    assert_eq!(last, src.lines().last().unwrap());
    assert!(!out.source.contains("Player.Hurt\""));
}

#[test]
fn rewrite_of_a_tiny_key_keeps_lines_and_columns_best_effort() {
    // `__A__B__C` is longer than `, "A.B.C"` minus nothing: the rest of the
    // line shifts, later lines do not.
    let src = "NotifyObjectMessage(o,\"A.B.C\",1); let q = 1;\nlet r = 2;";
    let out = rewrite(src);
    assert_eq!(out.bakes[0].name, "NotifyObjectMessage__A__B__C");
    assert_eq!(out.source.lines().count(), 2);
    assert_eq!(out.source.lines().nth(1), Some("let r = 2;"));
    let shift = out.source.find("let q").unwrap() - src.find("let q").unwrap();
    assert_eq!(shift, "__A__B__C".len() - ",\"A.B.C\"".len());
}

#[test]
fn rewrite_leaves_non_literal_and_invalid_keys_generic() {
    let src = r#"NotifyMessage(key, 1); NotifyMessage("a" + "b", 2); NotifyMessage(`X.${y}`, 3); NotifyMessage("bad key!", 4); NotifyMessage("", 5);"#;
    let out = rewrite(src);
    assert_eq!(out.source, src);
    assert!(out.bakes.is_empty());
}

#[test]
fn rewrite_leaves_a_script_that_does_not_parse_unchanged() {
    let src = "NotifyMessage(\"Player.Hurt\", 1);\nlet = ;";
    let out = rewrite(src);
    assert_eq!(out.source, src);
    assert!(out.bakes.is_empty());
}

#[test]
fn rewrite_handles_nested_and_trailing_comma_calls() {
    let src = r#"NotifyObjectMessage(Get(NotifyMessage("In", 1)), "Out", 2); RunHook("H.K",);"#;
    let out = rewrite(src);
    let names: Vec<_> = out.bakes.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "NotifyObjectMessage__Out",
            "NotifyMessage__In",
            "RunHook__H__K"
        ]
    );
    assert!(out.source.contains("RunHook__H__K("), "{}", out.source);
    assert!(!out.source.contains("\"H.K\""));
}

#[test]
fn distinct_keys_get_distinct_names() {
    let src = r#"NotifyMessage("A.B"); NotifyMessage("A_B"); NotifyMessage("A.B"); ListenMessage("A.B", self, |x| x);"#;
    let out = rewrite(src);
    let names: Vec<_> = out.bakes.iter().map(|b| b.name.clone()).collect();
    assert_eq!(
        names,
        [
            "NotifyMessage__A__B",
            "NotifyMessage__A_0B",
            "NotifyMessage__A__B",
            "ListenMessage__A__B"
        ]
    );
}

#[test]
fn gmp_form_is_baked_to_the_global_baked_name() {
    let src = r#"GMP::NotifyMessage("Player.Hurt", 1);"#;
    let out = rewrite(src);
    assert_eq!(out.bakes[0].name, "NotifyMessage__Player__Hurt");
    assert!(out.source.starts_with("NotifyMessage__Player__Hurt("));
    assert_eq!(out.source.len(), src.len());
}

/// An engine with a dummy native function for every baked name (and the
/// generic functions), recording which were called.
fn engine_for(bakes: &[super::Bake]) -> (Engine, std::rc::Rc<std::cell::RefCell<Vec<String>>>) {
    let calls = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut engine = Engine::new();
    for bake in bakes {
        let name = bake.name.clone();
        let log = calls.clone();
        match bake.function {
            ApiFunction::NotifyObjectMessage => {
                engine.register_fn(bake.name.clone(), move |_o: i64, v: i64| {
                    log.borrow_mut().push(format!("{name}({v})"));
                });
            }
            _ => {
                engine.register_fn(bake.name.clone(), move |v: i64| {
                    log.borrow_mut().push(format!("{name}({v})"));
                });
            }
        }
    }
    let log = calls.clone();
    engine.register_fn("NotifyMessage", move |key: &str, v: i64| {
        log.borrow_mut().push(format!("generic {key}({v})"));
    });
    (engine, calls)
}

#[test]
fn rewritten_script_runs_the_baked_functions() {
    let src = r#"
let obj = 7;
let key = "Dyn.Key";
NotifyObjectMessage(obj, "Player.Hurt", 5);
NotifyMessage(key, 6);
NotifyMessage("Score.Add", 7);
"#;
    let out = rewrite(src);
    let (engine, calls) = engine_for(&out.bakes);
    engine.run(&out.source).unwrap();
    assert_eq!(
        *calls.borrow(),
        [
            "NotifyObjectMessage__Player__Hurt(5)",
            "generic Dyn.Key(6)",
            "NotifyMessage__Score__Add(7)"
        ]
    );
    assert_eq!(
        baked_name(ApiFunction::NotifyMessage, "Score.Add"),
        out.bakes[1].name
    );
}

fn error_position(error: &EvalAltResult) -> Position {
    error.position()
}

#[test]
fn errors_in_a_rewritten_script_report_the_original_line_and_column() {
    let src = "let obj = 1;\n\
               NotifyObjectMessage(obj, \"Player.Hurt\",\n    2); let broken = undefined_fn(1);\n\
               NotifyMessage(\"Score.Add\", 3); throw \"boom\";\n";
    let out = rewrite(src);
    assert_eq!(out.bakes.len(), 2);
    let (engine, _) = engine_for(&out.bakes);
    let original = Engine::new().run(src).unwrap_err();
    let baked = engine.run(&out.source).unwrap_err();
    // Without the baked functions the original fails at the first call.
    assert_eq!(error_position(&original).line(), Some(2));
    // The baked script gets further and fails at the author's position.
    let pos = error_position(&baked);
    assert_eq!(pos.line(), Some(3));
    let expected_column = src.lines().nth(2).unwrap().find("undefined_fn").unwrap() + 1;
    assert_eq!(pos.position(), Some(expected_column));

    // An error in a baked call points at the call itself.
    let mut failing = Engine::new();
    failing.register_fn(
        "NotifyObjectMessage__Player__Hurt",
        |_o: i64, _v: i64| -> Result<Dynamic, Box<EvalAltResult>> { Err("type mismatch".into()) },
    );
    let err = failing.run(&out.source).unwrap_err();
    assert_eq!(err.position().line(), Some(2));
    assert_eq!(err.position().position(), Some(1));
}

#[test]
fn shorter_baked_name_is_padded_and_still_runs() {
    let src = r#"GMP::NotifyMessage("A", 1); NotifyMessage("B.C", 2);"#;
    let out = rewrite(src);
    assert_eq!(
        out.source,
        r#"NotifyMessage__A  (     1); NotifyMessage__B__C( 2);"#
    );
    let (engine, calls) = engine_for(&out.bakes);
    engine.run(&out.source).unwrap();
    assert_eq!(
        *calls.borrow(),
        ["NotifyMessage__A(1)", "NotifyMessage__B__C(2)"]
    );
}
