//! The one Rhai call-site scanner: finds calls of the generic API functions.
//!
//! The loader's rewriter and the language server both read its output, so
//! what the editor flags is exactly what the loader bakes. It works on the
//! token list alone (no parse), so it returns what it can on broken code.

use std::collections::HashSet;

use gantry_host::{ApiFunction, Literal, ScannedArg, ScannedCall};

use super::lexer::{Kind, Lexed, Tok, lex};
use super::lines::LineIndex;

/// Find every call of a generic API function in a Rhai source.
///
/// Reported: `Name(...)` for the global functions and `GMP::Name(...)` for
/// every function (`via_gmp`), nested calls included, each with the spans of
/// the call, callee, argument list and every argument, literal arguments and
/// closure parameters. Not reported: method calls (`obj.Name(...)`), text in
/// strings and comments, names the script defines itself (`fn Name`, or a
/// `let`/`const` of that name: the name is the author's everywhere in the
/// file), and the `GMP::` form when the script imports a module as `GMP`.
///
/// Never panics; on incomplete code an unclosed call ends at its last
/// argument.
pub fn scan(source: &str) -> Vec<ScannedCall> {
    let lexed = lex(source);
    let lines = LineIndex::new(source);
    Scanner::new(source, &lexed, &lines).calls()
}

/// [`scan`], and the byte ranges of the source's comments and strings (the
/// text that is not code), in order, from the same one pass of rhai's
/// tokenizer: the language server asks whether a line begins inside one.
pub fn scan_with_text(source: &str) -> (Vec<ScannedCall>, Vec<std::ops::Range<usize>>) {
    let lexed = lex(source);
    let lines = LineIndex::new(source);
    let calls = Scanner::new(source, &lexed, &lines).calls();
    (calls, lexed.text_spans())
}

struct Scanner<'a> {
    src: &'a str,
    toks: &'a [Tok],
    lines: &'a LineIndex,
    /// Names the script binds itself.
    shadowed: HashSet<&'a str>,
    /// `import ... as GMP`: the `GMP::` form is the author's module.
    gmp_shadowed: bool,
    /// For each opening bracket token, the token that closes it (`None`
    /// when unclosed); see [`closers`].
    closer: Vec<Option<usize>>,
}

/// The closing token of every opening bracket, by token index, from one
/// pass with a stack: any closer closes the innermost opener, as the
/// argument reader counts depth. An argument list then skips a bracketed
/// group at once instead of walking it: walking made nested calls cost the
/// square of their depth (each call walked every call inside it).
fn closers(toks: &[Tok]) -> Vec<Option<usize>> {
    let mut closer = vec![None; toks.len()];
    let mut open = Vec::new();
    for (index, tok) in toks.iter().enumerate() {
        if tok.kind.opens() {
            open.push(index);
        } else if tok.kind.closes()
            && let Some(opener) = open.pop()
        {
            closer[opener] = Some(index);
        }
    }
    closer
}

impl<'a> Scanner<'a> {
    fn new(src: &'a str, lexed: &'a Lexed, lines: &'a LineIndex) -> Self {
        let toks = lexed.toks.as_slice();
        let mut shadowed = HashSet::new();
        let mut gmp_shadowed = false;
        for pair in toks.windows(2) {
            if pair[1].kind != Kind::Ident {
                continue;
            }
            let name = &src[pair[1].start..pair[1].end];
            match pair[0].kind {
                Kind::Fn | Kind::Let | Kind::Const => {
                    shadowed.insert(name);
                }
                Kind::As if name == "GMP" => gmp_shadowed = true,
                _ => {}
            }
        }
        Scanner {
            src,
            toks,
            lines,
            shadowed,
            gmp_shadowed,
            closer: closers(toks),
        }
    }

    fn text(&self, tok: &Tok) -> &'a str {
        &self.src[tok.start..tok.end]
    }

    fn kind(&self, index: usize) -> Option<&Kind> {
        self.toks.get(index).map(|t| &t.kind)
    }

    fn calls(&self) -> Vec<ScannedCall> {
        let mut calls = Vec::new();
        for index in 0..self.toks.len() {
            if let Some(call) = self.call_at(index) {
                calls.push(call);
            }
        }
        calls
    }

    /// A call whose callee starts at token `index`, if there is one.
    fn call_at(&self, index: usize) -> Option<ScannedCall> {
        let tok = &self.toks[index];
        if tok.kind != Kind::Ident {
            return None;
        }
        // `obj.Name(...)`, `obj?.Name(...)`, `other::Name(...)`, `fn Name(...)`.
        let after_member = index
            .checked_sub(1)
            .and_then(|i| self.kind(i))
            .is_some_and(|k| {
                matches!(k, Kind::Period | Kind::Elvis | Kind::DoubleColon | Kind::Fn)
            });
        if after_member {
            return None;
        }
        let (function, via_gmp, name_index) = if self.text(tok) == "GMP"
            && self.kind(index + 1) == Some(&Kind::DoubleColon)
            && self.kind(index + 2) == Some(&Kind::Ident)
        {
            if self.gmp_shadowed {
                return None;
            }
            let function = ApiFunction::from_name(self.text(&self.toks[index + 2]))?;
            (function, true, index + 2)
        } else {
            let name = self.text(tok);
            let function = ApiFunction::from_name(name)?;
            if function.gmp_only() || self.shadowed.contains(name) {
                return None;
            }
            (function, false, index)
        };
        let open = self.toks.get(name_index + 1)?;
        let (arg_list_end, args) = match open.kind {
            Kind::Unit => (open.end, Vec::new()),
            Kind::LParen => self.args(name_index + 2, open.end),
            _ => return None,
        };
        let callee_end = self.toks[name_index].end;
        Some(ScannedCall {
            function,
            via_gmp,
            call: self.lines.span(tok.start, arg_list_end),
            callee: self.lines.span(tok.start, callee_end),
            arg_list: self.lines.span(open.start, arg_list_end),
            args,
        })
    }

    /// Parse the arguments from token `first` (just after the `(`, which ends
    /// at `open_end`) to the closing `)`. Returns the end of the argument list
    /// and the arguments.
    fn args(&self, first: usize, open_end: usize) -> (usize, Vec<ScannedArg>) {
        let mut args = Vec::new();
        let mut arg = ArgBuilder::default();
        let mut end = open_end;
        let mut index = first;
        // Where an empty argument would sit (just after the last comma).
        let mut gap_at = open_end;
        while let Some(tok) = self.toks.get(index) {
            match tok.kind {
                Kind::RParen => {
                    if let Some(done) = arg.finish(self) {
                        args.push(done);
                    }
                    return (tok.end, args);
                }
                Kind::Comma => {
                    match arg.finish(self) {
                        Some(done) => args.push(done),
                        None => args.push(self.empty_arg(gap_at)),
                    }
                    arg = ArgBuilder::default();
                    gap_at = tok.end;
                    end = tok.end;
                    index += 1;
                    continue;
                }
                // Nothing that can sit inside an argument list: the call
                // is unclosed (the author is still typing).
                Kind::Semi
                | Kind::Let
                | Kind::Const
                | Kind::Fn
                | Kind::Import
                | Kind::Export
                | Kind::RBracket
                | Kind::RBrace => break,
                Kind::Pipe if arg.last_kind(self).is_none_or(|k: &Kind| !k.ends_operand()) => {
                    // A closure's parameter list: its commas separate
                    // parameters, not arguments.
                    let (params, close) = self.closure_params(index);
                    if arg.is_empty() {
                        arg.params = Some(params);
                    }
                    arg.push(index);
                    arg.push(close);
                    end = self.toks[close].end;
                    index = close + 1;
                    continue;
                }
                Kind::OrOr if arg.is_empty() => arg.params = Some(Vec::new()),
                _ => {}
            }
            if tok.kind.opens() {
                // The whole bracketed group belongs to the argument.
                arg.push(index);
                match self.closer[index] {
                    Some(close) => {
                        arg.push(close);
                        arg.first_closed.get_or_insert(close);
                        end = self.toks[close].end;
                        index = close + 1;
                        continue;
                    }
                    None => {
                        // Unclosed: the argument runs to the end.
                        let last = self.toks.len() - 1;
                        arg.push(last);
                        end = self.toks[last].end;
                        break;
                    }
                }
            }
            arg.push(index);
            arg.first_closed.get_or_insert(index);
            end = tok.end;
            index += 1;
        }
        // Unclosed: keep what was written.
        if let Some(done) = arg.finish(self) {
            args.push(done);
        }
        (end, args)
    }

    /// The parameter names of the closure whose `|` is token `open`, and the
    /// index of its closing `|` (or of the last token looked at).
    fn closure_params(&self, open: usize) -> (Vec<String>, usize) {
        let mut params = Vec::new();
        let mut index = open + 1;
        while let Some(tok) = self.toks.get(index) {
            match tok.kind {
                Kind::Pipe => return (params, index),
                Kind::Ident => params.push(self.text(tok).to_owned()),
                Kind::Comma => {}
                _ => return (params, index.saturating_sub(1).max(open)),
            }
            index += 1;
        }
        (params, index.saturating_sub(1).max(open))
    }

    fn empty_arg(&self, at: usize) -> ScannedArg {
        ScannedArg {
            span: self.lines.span(at, at),
            literal: None,
            function_params: None,
        }
    }
}

/// The tokens of one argument, as they are read.
#[derive(Default)]
struct ArgBuilder {
    first: Option<usize>,
    last: usize,
    /// The token at which the argument first returned to bracket depth 0:
    /// the first token itself, or the closer of an opening first token.
    first_closed: Option<usize>,
    params: Option<Vec<String>>,
}

impl ArgBuilder {
    fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    fn push(&mut self, index: usize) {
        self.first.get_or_insert(index);
        self.last = index;
    }

    fn last_kind<'s>(&self, scanner: &'s Scanner<'_>) -> Option<&'s Kind> {
        self.first.and_then(|_| scanner.kind(self.last))
    }

    fn finish(&self, scanner: &Scanner<'_>) -> Option<ScannedArg> {
        let first = self.first?;
        let toks = scanner.toks;
        let (head, tail) = (&toks[first], &toks[self.last]);
        let literal = if first == self.last {
            match &head.kind {
                Kind::Str(s) => Some(Literal::Str(s.to_string())),
                Kind::Int(v) => Some(Literal::Int(*v)),
                Kind::Float(v) => Some(Literal::Float(*v)),
                Kind::True => Some(Literal::Bool(true)),
                Kind::False => Some(Literal::Bool(false)),
                Kind::Unit => Some(Literal::Nil),
                _ => None,
            }
        } else if self.first_closed == Some(self.last) {
            // One bracketed literal spanning the whole argument.
            match (&head.kind, &tail.kind) {
                (Kind::MapStart, Kind::RBrace) => Some(Literal::Table),
                (Kind::LBracket, Kind::RBracket) => Some(Literal::Array),
                _ => None,
            }
        } else {
            None
        };
        Some(ScannedArg {
            span: scanner.lines.span(head.start, tail.end),
            literal,
            function_params: self.params.clone(),
        })
    }
}
