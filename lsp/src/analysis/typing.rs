//! The editor's view of findings while the user types, where `gantry
//! check` keeps them as they are: a key being written (`""`, `"Inv."`) is
//! a hint, not a red error; a string still open is no "non-literal key";
//! a listener with too many parameters underlines its parameter list, not
//! its whole body.

use super::diagnostics::{Code, Diagnostic, Severity};

/// Adjusts `diagnostics` of the script `text` for an editor: [`narrow`],
/// and the key being written.
pub fn as_typed(text: &str, diagnostics: &mut Vec<Diagnostic>) {
    narrow(text, diagnostics);
    diagnostics.retain_mut(|d| {
        let written = text.get(d.range.clone()).unwrap_or("");
        match d.code {
            Code::MalformedKey if being_written(written) => {
                d.severity = Severity::Hint;
                true
            }
            Code::NonLiteralKey => !is_open_string(written),
            _ => true,
        }
    });
}

/// Points each finding at what is wrong, for the editor and `gantry
/// check` alike: a listener's parameter list, not its body.
pub fn narrow(text: &str, diagnostics: &mut [Diagnostic]) {
    for d in diagnostics
        .iter_mut()
        .filter(|d| d.code == Code::ListenerParams)
    {
        let written = text.get(d.range.clone()).unwrap_or("");
        if let Some(params) = parameter_list(written) {
            d.range = d.range.start + params.start..d.range.start + params.end;
        }
    }
}

/// `""` or `"Inv."`: a key the user is still writing.
fn being_written(literal: &str) -> bool {
    let content = literal
        .strip_prefix(['"', '\''])
        .map(|rest| rest.strip_suffix(['"', '\'']).unwrap_or(rest))
        .unwrap_or(literal);
    content.is_empty() || content.ends_with('.')
}

/// A string literal with no closing quote (Rhai's scanner takes the rest
/// of the line as the key argument).
fn is_open_string(written: &str) -> bool {
    let mut chars = written.chars();
    match chars.next() {
        Some(quote @ ('"' | '\'' | '`')) => !chars.as_str().contains(quote),
        _ => false,
    }
}

/// The parameter list of a function literal: `(a, b)` of `function(a, b)`,
/// `|a, b|` of a Rhai closure.
fn parameter_list(function: &str) -> Option<std::ops::Range<usize>> {
    if let Some(rest) = function.strip_prefix('|') {
        return Some(0..rest.find('|')? + 2);
    }
    let open = function.find('(')?;
    let close = open + function[open..].find(')')? + 1;
    Some(open..close)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_list_is_found_in_both_languages() {
        assert_eq!(parameter_list("function(a, b)\n  x()\nend"), Some(8..14));
        assert_eq!(parameter_list("|a, b| { x() }"), Some(0..6));
        assert_eq!(parameter_list("|| 1"), Some(0..2));
    }

    #[test]
    fn only_an_unfinished_key_counts_as_being_written() {
        assert!(being_written("\"\""));
        assert!(being_written("\"Inv.\""));
        assert!(!being_written("\"Inv..Gold\""));
        assert!(is_open_string("\"Inv"));
        assert!(!is_open_string("\"Inv\""));
        assert!(!is_open_string("name"));
        assert!(!is_open_string("\"Inv.\" .. name"));
    }
}
