//! Rhai source → a flat token list with exact byte spans.
//!
//! The tokens come from rhai's own tokenizer (`rhai::get_next_token`, exposed
//! by the `internals` feature), so a string, comment or number is exactly what
//! the engine will see. Rhai's `Position`s are 16-bit character counts that
//! saturate on long files and carry no end, so they are not used for spans:
//! the tokenizer reads from [`ByteStream`], which knows the byte offset of
//! every character it hands out, and whitespace and comments are skipped here
//! (mirroring rhai's rules) so that each token starts exactly where the
//! tokenizer is called.
//!
//! Interpolated strings need one thing the bare tokenizer leaves to the
//! parser: after the `}` that closes a `${ ... }` block, the text goes on as
//! string text. The lexer tracks those braces and switches the tokenizer back
//! into text mode itself.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use rhai::{InputStream, Position, Token, TokenizeState, TokenizerControlBlock};

/// What a token is, as far as the scanner cares.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Ident,
    /// A complete string literal (`"..."`, `` `...` `` without interpolation,
    /// `#"..."#`), with escapes resolved.
    Str(Box<str>),
    /// A piece of an interpolated string that ends in `${`.
    StrOpen,
    /// The last piece of an interpolated string (after its final `}`).
    StrTail,
    Int(i64),
    Float(f64),
    Char,
    True,
    False,
    /// `()`
    Unit,
    LParen,
    RParen,
    /// `[` or `?[`
    LBracket,
    RBracket,
    LBrace,
    /// `#{`
    MapStart,
    RBrace,
    Comma,
    Semi,
    /// `|`
    Pipe,
    /// `||`
    OrOr,
    DoubleColon,
    Period,
    /// `?.`
    Elvis,
    Fn,
    Let,
    Const,
    Import,
    Export,
    As,
    /// A lexical error (unterminated string, malformed number, stray byte...).
    Error,
    /// Any other operator or keyword.
    Other,
}

impl Kind {
    pub(crate) fn opens(&self) -> bool {
        matches!(
            self,
            Kind::LParen | Kind::LBracket | Kind::LBrace | Kind::MapStart
        )
    }

    pub(crate) fn closes(&self) -> bool {
        matches!(self, Kind::RParen | Kind::RBracket | Kind::RBrace)
    }

    /// Does this token end an operand (so a `|` after it is a binary or, not
    /// the start of a closure)?
    pub(crate) fn ends_operand(&self) -> bool {
        matches!(
            self,
            Kind::Ident
                | Kind::Str(_)
                | Kind::StrTail
                | Kind::Int(_)
                | Kind::Float(_)
                | Kind::Char
                | Kind::True
                | Kind::False
                | Kind::Unit
                | Kind::RParen
                | Kind::RBracket
                | Kind::RBrace
                | Kind::Error
        )
    }
}

/// One token: its kind and its byte range in the source (end exclusive).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tok {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// The token list of a whole source.
#[derive(Debug, Default)]
pub(crate) struct Lexed {
    pub toks: Vec<Tok>,
    /// Did the tokenizer report any error (the source will not compile)?
    pub had_error: bool,
    /// The comments, in order (the tokens skip them).
    pub comments: Vec<std::ops::Range<usize>>,
    /// Where each unterminated string token really ends (its token is cut
    /// at the line end for the scanner): `(token index, end)`.
    pub open_strings: Vec<(usize, usize)>,
}

/// A character stream over a `&str` that knows its byte offset.
///
/// Rhai only ever un-gets the character it just read, which is a rewind of
/// the offset; anything else is kept in `pending` so the stream never lies.
struct ByteStream<'a> {
    src: &'a str,
    offset: usize,
    pending: Vec<char>,
    /// The comments skipped so far.
    comments: Vec<std::ops::Range<usize>>,
}

impl ByteStream<'_> {
    /// The offset of the next character the tokenizer will read.
    fn consumed(&self) -> usize {
        let pending: usize = self.pending.iter().map(|c| c.len_utf8()).sum();
        self.offset.saturating_sub(pending)
    }

    /// Skip whitespace and comments as rhai does (ASCII whitespace, `//` to
    /// the end of the line, nested `/* */`).
    fn skip_trivia(&mut self) {
        if !self.pending.is_empty() {
            return;
        }
        let bytes = self.src.as_bytes();
        let mut i = self.offset;
        loop {
            match bytes.get(i) {
                Some(b) if b.is_ascii_whitespace() => i += 1,
                Some(b'/') if bytes.get(i + 1) == Some(&b'/') => {
                    let start = i;
                    i += 2;
                    while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                        i += 1;
                    }
                    self.comments.push(start..i);
                }
                Some(b'/') if bytes.get(i + 1) == Some(&b'*') => {
                    let start = i;
                    i += 2;
                    let mut level = 1usize;
                    while i < bytes.len() {
                        match (bytes[i], bytes.get(i + 1)) {
                            (b'/', Some(b'*')) => {
                                level += 1;
                                i += 2;
                            }
                            (b'*', Some(b'/')) => {
                                level -= 1;
                                i += 2;
                                if level == 0 {
                                    break;
                                }
                            }
                            _ => i += 1,
                        }
                    }
                    i = i.min(bytes.len());
                    self.comments.push(start..i);
                }
                _ => break,
            }
        }
        self.offset = i;
    }
}

impl InputStream for ByteStream<'_> {
    fn unget(&mut self, ch: char) {
        if self.pending.is_empty() && self.src[..self.offset].ends_with(ch) {
            self.offset -= ch.len_utf8();
        } else {
            self.pending.push(ch);
        }
    }

    fn get_next(&mut self) -> Option<char> {
        if let Some(ch) = self.pending.pop() {
            return Some(ch);
        }
        let ch = self.src[self.offset..].chars().next()?;
        self.offset += ch.len_utf8();
        Some(ch)
    }

    fn peek_next(&mut self) -> Option<char> {
        self.pending
            .last()
            .copied()
            .or_else(|| self.src[self.offset..].chars().next())
    }
}

/// Tokenize `src`. Never panics: a failure inside the tokenizer ends the
/// token list early and marks it as erroneous.
pub(crate) fn lex(src: &str) -> Lexed {
    let mut out = Lexed::default();
    let result = catch_unwind(AssertUnwindSafe(|| lex_into(src, &mut out)));
    if result.is_err() {
        tracing::warn!("rhai tokenizer panicked; scanning stopped early");
        out.had_error = true;
    }
    out
}

fn lex_into(src: &str, out: &mut Lexed) {
    let mut stream = ByteStream {
        src,
        offset: 0,
        pending: Vec::new(),
        comments: Vec::new(),
    };
    let mut state = TokenizeState {
        max_string_len: None,
        next_token_cannot_be_unary: false,
        tokenizer_control: Rc::new(RefCell::new(TokenizerControlBlock::new())),
        comment_level: 0,
        include_comments: false,
        is_within_text_terminated_by: None,
        last_token: None,
    };
    // Character column of the stream, for rhai's own `Position` (it decides
    // how much indentation a `\`-continued string skips).
    let mut column_at = (0usize, 0usize);
    let mut brace_depth: usize = 0;
    // Brace depths at which an interpolation `${` was opened.
    let mut interpolations: Vec<usize> = Vec::new();
    let mut in_text = false;
    let mut stalls = 0;

    loop {
        if !in_text {
            stream.skip_trivia();
        }
        let start = stream.consumed();
        column_at = advance_column(src, column_at, start);
        let column = u16::try_from(column_at.1).unwrap_or(u16::MAX);
        let mut pos = Position::new(1, column);

        let (token, _) = rhai::get_next_token(&mut stream, &mut state, &mut pos);
        let end = stream.consumed().max(start);
        let continuation = std::mem::take(&mut in_text);

        let kind = match token {
            Token::EOF => break,
            // A verbatim or `\`-continued string that ran into the end.
            Token::StringConstant(_) if state.is_within_text_terminated_by.is_some() => {
                state.is_within_text_terminated_by = None;
                Kind::Error
            }
            Token::StringConstant(_) if continuation => Kind::StrTail,
            Token::StringConstant(s) => Kind::Str(s.as_str().into()),
            Token::InterpolatedString(_) => {
                interpolations.push(brace_depth);
                Kind::StrOpen
            }
            Token::IntegerConstant(v) => Kind::Int(v),
            Token::FloatConstant(f) => Kind::Float(*f.0),
            Token::CharConstant(_) => Kind::Char,
            Token::Identifier(_) => Kind::Ident,
            Token::True => Kind::True,
            Token::False => Kind::False,
            Token::Unit => Kind::Unit,
            Token::LeftParen => Kind::LParen,
            Token::RightParen => Kind::RParen,
            Token::LeftBracket | Token::QuestionBracket => Kind::LBracket,
            Token::RightBracket => Kind::RBracket,
            Token::LeftBrace => {
                brace_depth += 1;
                Kind::LBrace
            }
            Token::MapStart => {
                brace_depth += 1;
                Kind::MapStart
            }
            Token::RightBrace => {
                brace_depth = brace_depth.saturating_sub(1);
                if interpolations.last() == Some(&brace_depth) {
                    interpolations.pop();
                    state.is_within_text_terminated_by = Some("`".into());
                    in_text = true;
                }
                Kind::RBrace
            }
            Token::Comma => Kind::Comma,
            Token::SemiColon => Kind::Semi,
            Token::Pipe => Kind::Pipe,
            Token::Or => Kind::OrOr,
            Token::DoubleColon => Kind::DoubleColon,
            Token::Period => Kind::Period,
            Token::Elvis => Kind::Elvis,
            Token::Fn => Kind::Fn,
            Token::Let => Kind::Let,
            Token::Const => Kind::Const,
            Token::Import => Kind::Import,
            Token::Export => Kind::Export,
            Token::As => Kind::As,
            Token::LexError(_) | Token::Reserved(_) => Kind::Error,
            _ => Kind::Other,
        };
        let mut end = end;
        if kind == Kind::Error {
            out.had_error = true;
            if matches!(src.as_bytes().get(start), Some(b'"' | b'`' | b'#')) {
                out.open_strings.push((out.toks.len(), end));
            }
            // An unterminated string stops at the line end it consumed.
            end = start + src.get(start..end).map_or(0, |t| t.trim_end().len());
        }

        // Every token consumes input; guard against a tokenizer that would not.
        if stream.consumed() <= start {
            stalls += 1;
            if stalls > 2 {
                out.had_error = true;
                break;
            }
        } else {
            stalls = 0;
        }
        out.toks.push(Tok { kind, start, end });
    }
    if !interpolations.is_empty() {
        out.had_error = true;
    }
    out.comments = stream.comments;
}

impl Lexed {
    /// The comments and strings (string pieces of an interpolated string,
    /// an unterminated string to where it really stopped), in order: the
    /// parts of the source that are text, not code.
    pub(crate) fn text_spans(&self) -> Vec<std::ops::Range<usize>> {
        let mut open = self.open_strings.iter().peekable();
        let strings = self.toks.iter().enumerate().filter_map(|(i, t)| {
            if let Some(&&(at, end)) = open.peek()
                && at == i
            {
                open.next();
                return Some(t.start..end);
            }
            match &t.kind {
                Kind::Str(_) | Kind::StrOpen | Kind::StrTail | Kind::Char => Some(t.start..t.end),
                _ => None,
            }
        });
        let mut spans: Vec<_> = strings.chain(self.comments.iter().cloned()).collect();
        spans.sort_by_key(|r| r.start);
        spans
    }
}

/// Move a (byte offset, character column) cursor forward to `to`.
fn advance_column(src: &str, (from, column): (usize, usize), to: usize) -> (usize, usize) {
    let Some(skipped) = src.get(from..to) else {
        return (to, 0);
    };
    match skipped.rfind('\n') {
        Some(nl) => (to, skipped[nl + 1..].chars().count()),
        None => (to, column + skipped.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        lex(src).toks.iter().map(|t| &src[t.start..t.end]).collect()
    }

    #[test]
    fn token_spans_are_exact_byte_ranges() {
        let src = "let x = \"ü\\\"b\"; // c\n/* ü /* y */ */ f(1.5, -2, `t`)";
        assert_eq!(
            texts(src),
            [
                "let",
                "x",
                "=",
                "\"ü\\\"b\"",
                ";",
                "f",
                "(",
                "1.5",
                ",",
                "-2",
                ",",
                "`t`",
                ")"
            ]
        );
    }

    #[test]
    fn interpolated_strings_resume_text_after_the_block() {
        let src = "`a ${ #{x: 1}.x } b ${y} c` + z";
        let lexed = lex(src);
        assert!(!lexed.had_error);
        let kinds: Vec<_> = lexed.toks.iter().map(|t| t.kind.clone()).collect();
        assert_eq!(kinds[0], Kind::StrOpen);
        assert!(kinds.contains(&Kind::StrTail));
        assert_eq!(texts(src).last(), Some(&"z"));
    }

    fn text(src: &str) -> Vec<&str> {
        lex(src).text_spans().into_iter().map(|r| &src[r]).collect()
    }

    /// What is text and not code, as the engine reads it: comments (nested
    /// ones whole), strings of every kind, the string pieces of an
    /// interpolated string (not the code inside `${ }`), and an unterminated
    /// string to where the tokenizer stopped.
    #[test]
    fn text_spans_are_the_comments_and_strings() {
        assert_eq!(
            text("/* a\n /* nested */ b */ x; // c\n\"one\" \"two\\\n three\""),
            [
                "/* a\n /* nested */ b */",
                "// c",
                "\"one\"",
                "\"two\\\n three\""
            ]
        );
        assert_eq!(
            text("let s = `a\n${ \"x\" + `in\nner` }\nb`; /* open\n"),
            // The interpolation's braces are code tokens of their own.
            ["`a\n$", "\"x\"", "`in\nner`", "\nb`", "/* open\n"]
        );
        assert_eq!(text("let r = #\"raw\n\"# + 'c';"), ["#\"raw\n\"#", "'c'"]);
        let open = text("let s = `never\nclosed");
        assert_eq!(open, ["`never\nclosed"]);
    }

    #[test]
    fn unterminated_string_is_an_error_not_a_hang() {
        let lexed = lex("f(\"abc\nlet x = 1;");
        assert!(lexed.had_error);
        assert_eq!(lexed.toks.last().map(|t| t.kind.clone()), Some(Kind::Semi));
    }
}
