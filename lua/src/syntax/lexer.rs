//! Lua 5.4's lexer, one token at a time, from bytes.
//!
//! tree-sitter-lua reads some text differently from Lua: it lexes only the
//! tokens its parse state expects (`local x<const>=1` is `>` `=` to it,
//! `>=` to Lua), takes a reserved word for a name where the word does not
//! fit (`local nil`), and accepts what later Lua versions or other dialects
//! allow (`0b101`, `1ULL`, `é` in a name, a newline in a quoted string,
//! `"\300"`). [`super::refusal`] checks every token of a parse against this
//! lexer, so a chunk is trusted only when both read the same tokens.

use super::brackets::{long_bracket_close, long_bracket_level};
use super::literal::unescape_short;

/// What Lua's lexer reads at an offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    /// A name that is not a reserved word.
    Name,
    /// One of Lua 5.4's 22 reserved words.
    Keyword,
    Number,
    /// A quoted or long-bracket string, its escapes valid.
    Str,
    Comment,
    /// An operator or punctuation, or a byte Lua has no token for (its
    /// parser refuses that).
    Symbol,
}

const KEYWORDS: [&[u8]; 22] = [
    b"and",
    b"break",
    b"do",
    b"else",
    b"elseif",
    b"end",
    b"false",
    b"for",
    b"function",
    b"goto",
    b"if",
    b"in",
    b"local",
    b"nil",
    b"not",
    b"or",
    b"repeat",
    b"return",
    b"then",
    b"true",
    b"until",
    b"while",
];

/// C's `isspace` in the "C" locale: what Lua's lexer skips between tokens.
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Lua's `lislalpha`: a byte that may start a name.
fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// The token Lua's lexer reads at `at` (not at a space) and the offset just
/// past it; `None` where the lexer raises an error: a malformed number, an
/// unfinished string or long bracket, an invalid escape, `[=` not followed
/// by `[`. `scratch` is reused to unescape strings.
pub(crate) fn token_at(b: &[u8], at: usize, scratch: &mut Vec<u8>) -> Option<(Token, usize)> {
    let c = *b.get(at)?;
    let next = b.get(at + 1).copied();
    let symbol = |len: usize| Some((Token::Symbol, at + len));
    match c {
        b'-' if next == Some(b'-') => {
            let end = match long_bracket_level(b, at + 2) {
                Some(level) => long_bracket_close(b, at + 4 + level, level)?,
                None => {
                    at + b[at..]
                        .iter()
                        .position(|&c| c == b'\n' || c == b'\r')
                        .unwrap_or(b.len() - at)
                }
            };
            Some((Token::Comment, end))
        }
        b'[' => {
            let level = b[at + 1..].iter().take_while(|&&c| c == b'=').count();
            match b.get(at + 1 + level) {
                Some(b'[') => Some((Token::Str, long_bracket_close(b, at + 2 + level, level)?)),
                _ if level > 0 => None, // invalid long string delimiter
                _ => symbol(1),
            }
        }
        b'"' | b'\'' => short_string(b, at, scratch).map(|end| (Token::Str, end)),
        b'.' => match next {
            Some(b'.') if b.get(at + 2) == Some(&b'.') => symbol(3),
            Some(b'.') => symbol(2),
            Some(d) if d.is_ascii_digit() => number(b, at),
            _ => symbol(1),
        },
        b'0'..=b'9' => number(b, at),
        b'=' | b'<' | b'>' | b'/' | b'~' | b':' => {
            let two = matches!(
                (c, next),
                (b'=' | b'<' | b'>' | b'~', Some(b'='))
                    | (b'<', Some(b'<'))
                    | (b'>', Some(b'>'))
                    | (b'/', Some(b'/'))
                    | (b':', Some(b':'))
            );
            symbol(if two { 2 } else { 1 })
        }
        c if is_name_start(c) => {
            let len = b[at..]
                .iter()
                .take_while(|&&c| is_name_start(c) || c.is_ascii_digit())
                .count();
            let word = &b[at..at + len];
            let kind = if KEYWORDS.contains(&word) {
                Token::Keyword
            } else {
                Token::Name
            };
            Some((kind, at + len))
        }
        _ => symbol(1),
    }
}

/// Lua's `read_string`: the end of the quoted string opening at `at`, if it
/// closes on its line and every escape in it is valid.
fn short_string(b: &[u8], at: usize, scratch: &mut Vec<u8>) -> Option<usize> {
    let quote = b[at];
    let mut i = at + 1;
    let mut escapes = false;
    loop {
        match *b.get(i)? {
            b'\n' | b'\r' => return None, // unfinished string
            c if c == quote => break,
            b'\\' => {
                escapes = true;
                i += 1;
                match *b.get(i)? {
                    // An escaped line break, `\r\n` or `\n\r` as one.
                    first @ (b'\n' | b'\r') => {
                        i += 1;
                        if b.get(i)
                            .is_some_and(|&c| (c == b'\n' || c == b'\r') && c != first)
                        {
                            i += 1;
                        }
                    }
                    // `\z` skips spaces, line breaks included.
                    b'z' => {
                        i += 1;
                        while b.get(i).is_some_and(|&c| is_space(c)) {
                            i += 1;
                        }
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    if escapes {
        scratch.clear();
        unescape_short(&b[at + 1..i], scratch)?;
    }
    Some(i + 1)
}

/// Lua's `read_numeral` from `at` (a digit, or a `.` before one): it reads
/// hex digits, dots and exponents greedily, and one letter touching them,
/// then refuses the whole if it is not a numeral (`3..2`, `0b1`, `1ULL`).
fn number(b: &[u8], at: usize) -> Option<(Token, usize)> {
    let mut i = at;
    if b[i] == b'.' {
        i += 1;
    }
    let hex = b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X'));
    i += if hex { 2 } else { 1 };
    let exponent: &[u8] = if hex { b"pP" } else { b"eE" };
    while let Some(&c) = b.get(i) {
        if exponent.contains(&c) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
        } else if c.is_ascii_hexdigit() || c == b'.' {
            i += 1;
        } else {
            break;
        }
    }
    if b.get(i).is_some_and(|&c| is_name_start(c)) {
        i += 1;
    }
    is_numeral(&b[at..i]).then_some((Token::Number, i))
}

/// Whether Lua's `luaO_str2num` takes all of `t`: decimal digits with an
/// optional fraction and `e` exponent, or `0x` hex digits with an optional
/// fraction and `p` exponent; at least one digit before the exponent, and
/// at least one in it.
fn is_numeral(t: &[u8]) -> bool {
    let hex = t.strip_prefix(b"0x").or_else(|| t.strip_prefix(b"0X"));
    let digits = hex.unwrap_or(t);
    let exponent: &[u8] = if hex.is_some() { b"pP" } else { b"eE" };
    let is_digit = |c: &u8| {
        if hex.is_some() {
            c.is_ascii_hexdigit()
        } else {
            c.is_ascii_digit()
        }
    };
    let int = digits.iter().take_while(|c| is_digit(c)).count();
    let mut rest = &digits[int..];
    let mut frac = 0;
    if let Some(after) = rest.strip_prefix(b".") {
        frac = after.iter().take_while(|c| is_digit(c)).count();
        rest = &after[frac..];
    }
    if int + frac == 0 {
        return false;
    }
    match rest.split_first() {
        None => true,
        Some((e, power)) if exponent.contains(e) => {
            let power = power
                .strip_prefix(b"+")
                .or_else(|| power.strip_prefix(b"-"))
                .unwrap_or(power);
            !power.is_empty() && power.iter().all(u8::is_ascii_digit)
        }
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(text: &str) -> Option<(Token, &str)> {
        token_at(text.as_bytes(), 0, &mut Vec::new()).map(|(kind, end)| (kind, &text[..end]))
    }

    #[test]
    fn numbers_are_read_as_far_as_lua_reads_them_and_refused_if_malformed() {
        for ok in [
            "1", "3.", ".5", "1e5", "1E+5", "0x1F", "0xA.8P-1", "0x.8", "08", "1e-0",
        ] {
            assert_eq!(lex(ok), Some((Token::Number, ok)), "{ok}");
        }
        assert_eq!(lex("1 x"), Some((Token::Number, "1")));
        assert_eq!(lex("0x1e+5"), Some((Token::Number, "0x1e")));
        for bad in [
            "1..2", "3x", "0b101", "1ULL", "3i", "1e", "0x", "0x1p", "1.5.5", "0xg", "1f",
        ] {
            assert_eq!(lex(bad), None, "{bad}");
        }
    }

    #[test]
    fn strings_must_close_on_their_line_with_valid_escapes() {
        for ok in [
            r#""a\"b""#,
            "'a\\z\n  b'",
            "\"a\\\r\nb\"",
            r#""\x41\u{7FFFFFFF}\255""#,
            "[==[a]]b]==]",
        ] {
            assert_eq!(lex(ok), Some((Token::Str, ok)), "{ok}");
        }
        for bad in [
            "\"a\nb\"",
            r#""\300""#,
            r#""\u{80000000}""#,
            r#""\q""#,
            "\"open",
            "[[open",
            "[=x",
        ] {
            assert_eq!(lex(bad), None, "{bad}");
        }
    }

    #[test]
    fn comments_run_to_the_line_end_unless_a_long_bracket_opens_them() {
        assert_eq!(lex("-- a --[[ b\nc"), Some((Token::Comment, "-- a --[[ b")));
        assert_eq!(
            lex("--[==[ a\n]] ]==] c"),
            Some((Token::Comment, "--[==[ a\n]] ]==]"))
        );
        assert_eq!(lex("--[==x\ny"), Some((Token::Comment, "--[==x")));
        assert_eq!(lex("--[[ open"), None);
    }

    #[test]
    fn reserved_words_are_not_names_and_other_bytes_are_lone_symbols() {
        assert_eq!(lex("nil"), Some((Token::Keyword, "nil")));
        assert_eq!(lex("goto_x"), Some((Token::Name, "goto_x")));
        assert_eq!(lex("global"), Some((Token::Name, "global")));
        assert_eq!(lex(">=1"), Some((Token::Symbol, ">=")));
        assert_eq!(lex("..."), Some((Token::Symbol, "...")));
        assert_eq!(lex("$x"), Some((Token::Symbol, "$")));
        // A byte of a non-ASCII letter is a token of its own, which no
        // Lua grammar rule takes.
        let mut scratch = Vec::new();
        assert_eq!(
            token_at("é".as_bytes(), 0, &mut scratch),
            Some((Token::Symbol, 1))
        );
    }
}
