//! Whether a line begins inside a comment or a string opened on an earlier
//! line — what the line lexer behind unterminated strings
//! ([`crate::analysis::context`]) cannot see from the line alone.
//!
//! Lua asks its tree-sitter tree (the document's last parse, with the edits
//! since applied to it) for the `string` or `comment` node spanning the
//! line start. Rhai scripts are small and rescanned whole on every change:
//! their multi-line comments and strings are collected then, in one pass
//! over the bytes ([`rhai_spans`]) that follows rhai's lexical rules
//! (nested `/* */`, `\`-continued strings, back-tick strings with `${ }`
//! interpolation, raw `#"…"#` strings).

use std::ops::Range;

/// The length of a Lua long bracket opening at the start of `s` (`[[`,
/// `[=[`, ...) and its level, or `None`.
pub fn long_bracket_open(s: &[u8]) -> Option<(usize, usize)> {
    if s.first() != Some(&b'[') {
        return None;
    }
    let level = s[1..].iter().take_while(|&&b| b == b'=').count();
    (s.get(1 + level) == Some(&b'[')).then_some((level + 2, level))
}

/// The end (after the closing bracket) of a Lua long bracket of `level`
/// whose content is searched from byte `from`; `None` when it is not
/// closed before `limit`.
pub fn long_bracket_close(text: &[u8], from: usize, limit: usize, level: usize) -> Option<usize> {
    let limit = limit.min(text.len());
    let mut i = from;
    while i < limit {
        if text[i] == b']' {
            let equals = text[i + 1..limit]
                .iter()
                .take_while(|&&b| b == b'=')
                .count();
            let close = i + 1 + equals;
            if equals == level && close < limit && text[close] == b']' {
                return Some(close + 1);
            }
        }
        i += 1;
    }
    None
}

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
    let mut node = tree
        .root_node()
        .descendant_for_byte_range(before, line_start);
    while let Some(n) = node {
        let kind = n.kind();
        if kind == "string" || kind == "comment" {
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
            return match long_bracket_open(opener) {
                Some((_, level)) => {
                    Some(long_bracket_close(bytes, line_start, limit, level).unwrap_or(limit + 1))
                }
                // A quoted string continued with `\` or `\z`: its end as parsed.
                None if kind == "string" => Some(n.end_byte().min(bytes.len())),
                None => None,
            };
        }
        node = n.parent();
    }
    None
}

/// The comments and strings of a Rhai script that hold a line break (or
/// run to the end unterminated), in order: a line starting inside one
/// begins in text, not code.
pub fn rhai_spans(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut spans = Vec::new();
    let mut push = |range: Range<usize>| {
        if bytes[range.clone()].contains(&b'\n') {
            spans.push(range);
        }
    };
    let mut depth = 0usize;
    // Brace depths at which a back-tick string's `${` opened.
    let mut interpolations: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < n {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < n && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                let mut level = 1usize;
                while i < n && level > 0 {
                    match (bytes[i], bytes.get(i + 1)) {
                        (b'/', Some(b'*')) => {
                            level += 1;
                            i += 2;
                        }
                        (b'*', Some(b'/')) => {
                            level -= 1;
                            i += 2;
                        }
                        _ => i += 1,
                    }
                }
                i = i.min(n);
                push(start..i);
            }
            quote @ (b'"' | b'\'') => {
                let start = i;
                i += 1;
                while i < n && bytes[i] != quote && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                // An unterminated string ends at its line's end (as rhai
                // reads it); a closed one after its quote.
                i = if bytes.get(i) == Some(&quote) {
                    i + 1
                } else {
                    i.min(n)
                };
                push(start..i);
            }
            b'`' => {
                let (end, interpolated) = backtick_text(bytes, i + 1);
                push(i..end);
                i = end;
                if interpolated {
                    interpolations.push(depth);
                    depth += 1;
                }
            }
            b'#' if raw_string_hashes(&bytes[i..]).is_some() => {
                let hashes = raw_string_hashes(&bytes[i..]).unwrap_or(0);
                let start = i;
                i += hashes + 1;
                loop {
                    if i >= n {
                        break;
                    }
                    if bytes[i] == b'"'
                        && bytes
                            .get(i + 1..i + 1 + hashes)
                            .is_some_and(|h| h.iter().all(|&b| b == b'#'))
                    {
                        i += 1 + hashes;
                        break;
                    }
                    i += 1;
                }
                i = i.min(n);
                push(start..i);
            }
            b'{' => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
                if interpolations.last() == Some(&depth) {
                    interpolations.pop();
                    // The back-tick string goes on after the interpolation.
                    let (end, interpolated) = backtick_text(bytes, i);
                    push(i - 1..end);
                    i = end;
                    if interpolated {
                        interpolations.push(depth);
                        depth += 1;
                    }
                }
            }
            _ => i += 1,
        }
    }
    spans
}

/// A back-tick string's text from `from`: where it ends (after the closing
/// back-tick or the `${` that opens an interpolation, or at the end), and
/// whether it ended in an interpolation.
fn backtick_text(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => return (i + 1, false),
            b'$' if bytes.get(i + 1) == Some(&b'{') => return (i + 2, true),
            _ => i += 1,
        }
    }
    (bytes.len(), false)
}

/// The number of `#` of a raw string opening at the start of `s` (`#"`,
/// `##"`, ...).
fn raw_string_hashes(s: &[u8]) -> Option<usize> {
    let hashes = s.iter().take_while(|&&b| b == b'#').count();
    (hashes > 0 && s.get(hashes) == Some(&b'"')).then_some(hashes)
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

    fn texts(text: &str) -> Vec<&str> {
        rhai_spans(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn rhai_spans_are_the_multiline_comments_and_strings() {
        assert_eq!(
            texts("/* a\n /* nested */ b */ x; // c\n\"one\" \"two\\\n three\""),
            ["/* a\n /* nested */ b */", "\"two\\\n three\""]
        );
        assert_eq!(
            texts("let s = `a\n${ \"x\" + `in\nner` }\nb`; /* open\n"),
            ["`a\n${", "`in\nner`", "}\nb`", "/* open\n"]
        );
        assert_eq!(texts("let r = #\"raw\n\"# + ##\"x\"##;"), ["#\"raw\n\"#"]);
        assert_eq!(
            texts("let q = \"unterminated\nNotify(1);"),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn a_line_inside_a_span_resumes_after_it() {
        let text = "/* a\nb */ c\nd";
        let spans = rhai_spans(text);
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
        assert_eq!(long_bracket_open(b"[=[x"), Some((3, 1)));
        assert_eq!(long_bracket_open(b"[x"), None);
    }
}
