//! What the derives refuse, and what they read from doc comments: checked
//! on the tokens, without compiling the generated code (the host's tests
//! compile it).

use syn::DeriveInput;

fn input(tokens: &str) -> DeriveInput {
    syn::parse_str(tokens).expect("test input parses")
}

fn message_error(tokens: &str) -> String {
    match crate::message::derive(&input(tokens)) {
        Ok(_) => panic!("expected an error for {tokens}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_misspelt_key_is_refused_at_compile_time_naming_the_character() {
    let error = message_error(r#"#[message(key = "Player Hurt")] struct Hurt { dmg: f64 }"#);
    assert!(error.contains("holds ` `"), "{error}");
    let error = message_error(r#"#[message(key = "Player..Hurt")] struct Hurt { dmg: f64 }"#);
    assert!(error.contains("empty segment"), "{error}");
}

#[test]
fn an_unknown_kind_names_the_kinds_there_are() {
    let error = message_error(r#"#[message(key = "A.B", kind = "evnt")] struct A;"#);
    assert!(error.contains("unknown kind `evnt`"), "{error}");
    assert!(error.contains("\"request\""), "{error}");
}

#[test]
fn a_message_without_a_key_says_how_to_give_one() {
    let error = message_error("struct Hurt { dmg: f64 }");
    assert!(error.contains("#[message(key ="), "{error}");
}

#[test]
fn a_hook_needs_named_fields_and_a_message_at_most_eight() {
    let error = message_error(r#"#[message(key = "A.B", kind = "hook")] struct Hit(f64);"#);
    assert!(error.contains("named fields"), "{error}");
    let error = message_error(
        r#"#[message(key = "A.B")] struct Many(i64, i64, i64, i64, i64, i64, i64, i64, i64);"#,
    );
    assert!(error.contains("at most 8"), "{error}");
}

#[test]
fn a_response_on_a_message_of_another_kind_is_refused() {
    let error =
        message_error(r#"#[message(key = "A.B", kind = "store", response(ok = bool))] struct A;"#);
    assert!(error.contains("only a `kind = \"request\"`"), "{error}");
}

#[test]
fn a_generic_struct_cannot_derive() {
    let error = match crate::structure::derive(&input("struct Pair<T> { a: T }")) {
        Ok(_) => panic!("a generic struct derived"),
        Err(e) => e.to_string(),
    };
    assert!(error.contains("generic"), "{error}");
}

#[test]
fn the_doc_is_the_first_paragraph_on_one_line() {
    let parsed =
        input("/// A player got\n/// hurt.\n///\n/// Sent by the combat system.\nstruct Hurt;");
    assert_eq!(crate::attrs::doc_of(&parsed.attrs), "A player got hurt.");
}
