//! Whether a line begins inside a comment or a string opened on an earlier
//! line — what the line lexer behind unterminated strings
//! ([`crate::analysis::context`]) cannot see from the line alone.
//!
//! Lua asks its tree-sitter tree (the document's last parse, with the edits
//! since applied to it) for the `string` or `comment` node spanning the
//! line start. Rhai scripts are small and rescanned whole on every change:
//! their comments and strings come from that same pass of rhai's own
//! tokenizer (`gantry_rhai::syntax::scan_with_text`), so nested `/* */`,
//! `\`-continued strings, back-tick strings with `${ }` interpolation and
//! raw `#"…"#` strings are read as the engine reads them.

use std::ops::Range;

use gantry_lua::syntax::{innermost_enclosing, long_bracket_close, long_bracket_level};

/// Where code resumes after a Lua comment or string node that holds
/// `line_start` and began before it: after its closing bracket (searched
/// in `text` up to `limit`, so edits the tree has not parsed yet are seen),
/// or `limit + 1` when it does not close before `limit`. `None` when the
/// line begins in code.
pub fn lua_open_at(
    tree: &gantry_lua::syntax::Tree,
    text: &str,
    line_start: usize,
    limit: usize,
) -> Option<usize> {
    let before = line_start.checked_sub(1)?;
    let n = innermost_enclosing(tree, before, line_start, |n| {
        matches!(n.kind(), "string" | "comment")
    })?;
    let kind = n.kind();
    let start = n.start_byte();
    if start >= line_start || n.end_byte() <= line_start {
        return None;
    }
    let bytes = text.as_bytes();
    let opener = if kind == "comment" {
        bytes.get(start..)?.strip_prefix(b"--")?
    } else {
        bytes.get(start..)?
    };
    let limit = limit.min(bytes.len());
    match long_bracket_level(opener, 0) {
        Some(level) => {
            Some(long_bracket_close(&bytes[..limit], line_start, level).unwrap_or(limit + 1))
        }
        // A quoted string continued with `\` or `\z`: its end as parsed.
        None if kind == "string" => Some(n.end_byte().min(bytes.len())),
        None => None,
    }
}

/// Where code resumes after the span of `spans` (sorted, disjoint) that
/// holds `line_start` and began before it; `None` when the line begins in
/// code.
pub fn open_span_at(spans: &[Range<usize>], line_start: usize) -> Option<usize> {
    let i = spans.partition_point(|s| s.start < line_start);
    let span = spans.get(i.checked_sub(1)?)?;
    (span.end > line_start).then_some(span.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_inside_a_span_resumes_after_it() {
        let text = "/* a\nb */ c\nd";
        let (_, spans) = gantry_rhai::syntax::scan_with_text(text);
        assert_eq!(open_span_at(&spans, 5), Some(9));
        assert_eq!(open_span_at(&spans, 12), None);
        assert_eq!(open_span_at(&spans, 0), None);
    }

    #[test]
    fn lua_long_strings_and_comments_opened_above() {
        let text = "local s = [==[\nx ]] y\n]==] z\n--[[ c\nd ]] e\nf\n";
        let tree = gantry_lua::syntax::parse(text, None).unwrap();
        let line = |n: usize| text.match_indices('\n').nth(n - 1).unwrap().0 + 1;
        let lua_open_at = |tree: &gantry_lua::syntax::Tree, text: &str, start: usize| {
            lua_open_at(tree, text, start, text.len())
        };
        assert_eq!(
            lua_open_at(&tree, text, line(1)),
            Some(text.find(" z").unwrap())
        );
        assert_eq!(
            lua_open_at(&tree, text, line(2)),
            Some(text.find(" z").unwrap())
        );
        assert_eq!(lua_open_at(&tree, text, line(3)), None);
        assert_eq!(
            lua_open_at(&tree, text, line(4)),
            Some(text.find(" e").unwrap())
        );
        assert_eq!(lua_open_at(&tree, text, line(5)), None);
    }
}
