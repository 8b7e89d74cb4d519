//! What the cursor is in: which API call, which argument, and whether it
//! sits inside a string.
//!
//! The scanner's calls answer first. While a string is still unterminated,
//! tree-sitter folds the rest of the chunk into an error node and the scanner
//! sees no call, so a small lexer over the current line answers instead,
//! from where code begins on the line (the document's parse state knows
//! whether it begins inside a comment or string opened above).

use gantry_host::{ApiFunction, Language, Literal, ScannedCall};

use gantry_lua::syntax::{long_bracket_close, long_bracket_level};

/// The call around the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallAt {
    pub function: ApiFunction,
    /// The key, when it is written as a complete string literal.
    pub key: Option<String>,
    /// The 0-based argument the cursor is in (or about to write).
    pub arg_index: usize,
    /// Byte range of the argument text under the cursor (empty when nothing
    /// is written there yet).
    pub arg: std::ops::Range<usize>,
    /// Set when the cursor is inside a string literal at that argument.
    pub string: Option<StringAt>,
    /// Whether the argument under the cursor is already a function literal.
    pub arg_is_function: bool,
}

/// A string literal holding the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringAt {
    /// First byte of the content (after the opening quote).
    pub content_start: usize,
    /// End of the content (the closing quote, or the line end when unterminated).
    pub content_end: usize,
}

/// Finds the API call around byte `offset`. `code_start` is where code
/// begins on the line (after a comment or string opened on an earlier line;
/// past `offset` when the cursor is inside one, and then the line lexer
/// does not answer).
pub fn call_at(
    text: &str,
    language: Language,
    calls: &[ScannedCall],
    line: std::ops::Range<usize>,
    code_start: usize,
    offset: usize,
) -> Option<CallAt> {
    let from_line = scan_line(text, language, line, code_start, offset);
    if let Some(found) = &from_line
        && found.string.is_some_and(|s| !closed_on_line(text, s))
    {
        return from_line;
    }
    from_calls(text, calls, offset).or(from_line)
}

fn closed_on_line(text: &str, s: StringAt) -> bool {
    text.as_bytes()
        .get(s.content_end)
        .is_some_and(|&b| b == b'"' || b == b'\'')
}

/// The innermost scanned call whose parentheses hold the cursor.
fn from_calls(text: &str, calls: &[ScannedCall], offset: usize) -> Option<CallAt> {
    let call = calls
        .iter()
        .filter(|c| c.arg_list.start < offset && offset < c.arg_list.end.max(c.arg_list.start + 1))
        .min_by_key(|c| c.arg_list.end - c.arg_list.start)?;
    let (arg_index, arg) = match call.args.iter().position(|a| a.span.contains(offset)) {
        Some(i) => (i, Some(&call.args[i])),
        None => {
            let before = call.args.iter().filter(|a| a.span.end <= offset).count();
            let gap_start = call
                .args
                .iter()
                .rev()
                .find(|a| a.span.end <= offset)
                .map_or(call.arg_list.start + 1, |a| a.span.end);
            let gap = text.get(gap_start..offset).unwrap_or("");
            // Whitespace after an argument still belongs to it; a comma starts the next.
            let index = if gap.contains(',') {
                before
            } else {
                before.saturating_sub(1)
            };
            (index, None)
        }
    };
    let string = arg.and_then(|a| {
        let quote = *text.as_bytes().get(a.span.start)?;
        let is_str =
            matches!(a.literal, Some(Literal::Str(_))) && (quote == b'"' || quote == b'\'');
        let content_end = a.span.end.saturating_sub(1).max(a.span.start + 1);
        (is_str && offset > a.span.start && offset <= content_end).then_some(StringAt {
            content_start: a.span.start + 1,
            content_end,
        })
    });
    Some(CallAt {
        function: call.function,
        key: call.literal_key().map(str::to_owned),
        arg_index,
        arg: arg.map_or(offset..offset, |a| a.span.start..a.span.end),
        string,
        arg_is_function: arg.is_some_and(|a| a.function_params.is_some()),
    })
}

/// What opened a frame of the line lexer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// `(`: a call's arguments (or a parenthesized expression).
    Paren,
    /// `[`: an index or a Rhai array.
    Bracket,
    /// `{` (and Rhai's `#{`): a table constructor, map or block.
    Brace,
    /// A Rhai closure's parameters, `|a, b|`.
    Pipe,
}

/// An open `(` on the line, with what the lexer saw inside it (what is
/// inside the other frames is never reported: only a call's arguments are).
struct Open {
    callee: Option<ApiFunction>,
    arg_index: usize,
    arg_start: usize,
    /// Whether the argument under way has a token before the current one
    /// (kept as the lexer goes: asking the text since `arg_start` at each
    /// string would cost the line's length per string).
    seen: bool,
    /// The string literal of each argument that is exactly one string.
    strings: Vec<Option<String>>,
}

impl Open {
    fn new(callee: Option<ApiFunction>, arg_start: usize) -> Self {
        Self {
            callee,
            arg_index: 0,
            arg_start,
            seen: false,
            strings: Vec::new(),
        }
    }
}

/// The open frames of the line, innermost last: the kind of each (a byte:
/// a line of 40,000 `{` keeps 40 KB, not 40,000 records), the record of
/// each `(`, and how many of each kind are open — a closer with no opener
/// is ignored at once, not after a search of every frame (a line of 50,000
/// `{` and as many `)` would cost their product). Each frame is pushed and
/// popped once: linear in the line.
#[derive(Default)]
struct Frames {
    kinds: Vec<Frame>,
    parens: Vec<Open>,
    open: [usize; 4],
}

impl Frames {
    fn push(&mut self, frame: Frame) {
        debug_assert!(frame != Frame::Paren, "a `(` has its record");
        self.open[frame as usize] += 1;
        self.kinds.push(frame);
    }

    fn push_paren(&mut self, open: Open) {
        self.open[Frame::Paren as usize] += 1;
        self.kinds.push(Frame::Paren);
        self.parens.push(open);
    }

    /// Pops the innermost frame, with its record when it is a `(`.
    fn pop(&mut self) -> Option<(Frame, Option<Open>)> {
        let frame = self.kinds.pop()?;
        self.open[frame as usize] -= 1;
        let open = if frame == Frame::Paren {
            self.parens.pop()
        } else {
            None
        };
        Some((frame, open))
    }

    fn top(&self) -> Option<Frame> {
        self.kinds.last().copied()
    }

    /// The innermost frame's record, when it is a `(`.
    fn top_paren(&mut self) -> Option<&mut Open> {
        match self.top()? {
            Frame::Paren => self.parens.last_mut(),
            _ => None,
        }
    }

    /// Pops the frames down to and including the innermost `frame`; a
    /// closer with no opener on the line is ignored.
    fn close(&mut self, frame: Frame) {
        if self.open[frame as usize] == 0 {
            return;
        }
        while let Some((popped, _)) = self.pop() {
            if popped == frame {
                return;
            }
        }
    }
}

/// The end of a Rhai block comment opening at `i` (nested, as rhai reads
/// them), if it closes before `limit`.
fn block_comment_end(bytes: &[u8], i: usize, limit: usize) -> Option<usize> {
    let mut j = i + 2;
    let mut level = 1usize;
    while j < limit {
        match (bytes[j], bytes.get(j + 1)) {
            (b'/', Some(b'*')) if j + 1 < limit => {
                level += 1;
                j += 2;
            }
            (b'*', Some(b'/')) if j + 1 < limit => {
                level -= 1;
                j += 2;
                if level == 0 {
                    return Some(j);
                }
            }
            _ => j += 1,
        }
    }
    None
}

/// Lexes `line` from `code_start` (where code begins on it: after a
/// comment or string opened above) up to `offset`: strings, comments,
/// brackets and commas.
fn scan_line(
    text: &str,
    language: Language,
    line: std::ops::Range<usize>,
    code_start: usize,
    offset: usize,
) -> Option<CallAt> {
    let end = offset.min(line.end).max(line.start);
    if code_start > end {
        // The cursor is inside a comment or string opened above.
        return None;
    }
    let from = code_start.max(line.start);
    let bytes = text.as_bytes();
    let mut stack = Frames::default();
    let mut last_ident: Option<(usize, usize)> = None;
    // Whether the last token ends an operand (a Rhai `|` after one is an
    // or, not a closure's parameter list).
    let mut operand = false;
    let mut i = from;
    let mut string: Option<StringAt> = None;
    while i < end {
        let b = bytes[i];
        // Whether this token starts its argument; every token marks the
        // argument it is in as begun (an opener, its parent's).
        let mut first_token = false;
        if !b.is_ascii_whitespace()
            && let Some(open) = stack.top_paren()
        {
            first_token = !std::mem::replace(&mut open.seen, true);
        }
        match b {
            b'"' | b'\'' => {
                let start = i;
                i += 1;
                while i < line.end && bytes[i] != b {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if i >= end {
                    string = Some(StringAt {
                        content_start: start + 1,
                        content_end: i.min(line.end),
                    });
                    break;
                }
                if first_token && let Some(open) = stack.top_paren() {
                    let content = text.get(start + 1..i).unwrap_or("").to_owned();
                    if open.strings.len() == open.arg_index {
                        open.strings.push(Some(content));
                    }
                }
                i += 1;
                last_ident = None;
                operand = true;
                continue;
            }
            b'-' if language == Language::Lua && bytes.get(i + 1) == Some(&b'-') => {
                // A long comment closed before the cursor is skipped; a
                // line comment, or a long one still open, holds the cursor.
                let level = long_bracket_level(&bytes[..line.end], i + 2)?;
                i = long_bracket_close(&bytes[..end], i + 4 + level, level)?;
                continue;
            }
            b'[' if language == Language::Lua
                && let Some(level) = long_bracket_level(&bytes[..line.end], i) =>
            {
                // A long string: skipped when it closes before the cursor.
                i = long_bracket_close(&bytes[..end], i + 2 + level, level)?;
                last_ident = None;
                operand = true;
                continue;
            }
            b'/' if language == Language::Rhai && bytes.get(i + 1) == Some(&b'/') => return None,
            b'/' if language == Language::Rhai && bytes.get(i + 1) == Some(&b'*') => {
                i = block_comment_end(bytes, i, end)?;
                continue;
            }
            b'`' if language == Language::Rhai => {
                // A back-tick string: skipped when it closes before the cursor.
                let close = bytes[i + 1..end].iter().position(|&c| c == b'`')?;
                i += close + 2;
                last_ident = None;
                operand = true;
                continue;
            }
            b'|' if language == Language::Rhai => {
                if bytes.get(i + 1) == Some(&b'|') {
                    // `||`: an or, or a closure without parameters.
                    i += 2;
                    last_ident = None;
                    operand = false;
                    continue;
                }
                if stack.top() == Some(Frame::Pipe) {
                    stack.pop();
                } else if !operand {
                    stack.push(Frame::Pipe);
                }
            }
            b'(' => {
                let callee = last_ident.and_then(|(s, e)| api_callee(&text[s..e]));
                stack.push_paren(Open::new(callee, i + 1));
            }
            b'[' => stack.push(Frame::Bracket),
            b'{' => stack.push(Frame::Brace),
            b')' => stack.close(Frame::Paren),
            b']' => stack.close(Frame::Bracket),
            b'}' => stack.close(Frame::Brace),
            b',' => {
                if let Some(open) = stack.top_paren() {
                    if open.strings.len() == open.arg_index {
                        open.strings.push(None);
                    }
                    open.arg_index += 1;
                    open.arg_start = i + 1;
                    open.seen = false;
                }
            }
            _ if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' => {
                let start = i;
                while i < end
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
                {
                    i += 1;
                }
                // `obj:Name(` is a method call, never the API; Rhai's
                // `GMP::Name(` is the API's module form.
                let before = &text[from..start];
                let method = before.ends_with(':') && !before.ends_with("::");
                last_ident = match before.strip_suffix("::") {
                    Some(module) if module.ends_with("GMP") => Some((start - 5, i)),
                    Some(_) => None,
                    None if method => None,
                    None => Some((start, i)),
                };
                operand = true;
                continue;
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            last_ident = None;
            operand = matches!(b, b')' | b']' | b'}');
        }
        i += 1;
    }
    let (_, open) = stack.pop()?;
    let open = open?;
    let function = open.callee?;
    let key = open
        .strings
        .get(function.key_index())
        .cloned()
        .flatten()
        .filter(|_| open.arg_index != function.key_index());
    let arg_text = text.get(open.arg_start..end).unwrap_or("");
    let arg_start = open.arg_start + (arg_text.len() - arg_text.trim_start().len());
    Some(CallAt {
        function,
        key,
        arg_index: open.arg_index,
        arg: arg_start.min(end)..end,
        string,
        arg_is_function: false,
    })
}

/// `NotifyMessage`, `GMP.NotifyMessage`; not `obj:NotifyMessage` (a method).
fn api_callee(name: &str) -> Option<ApiFunction> {
    let bare = name
        .strip_prefix("GMP.")
        .or_else(|| name.strip_prefix("GMP::"))
        .unwrap_or(name);
    let function = ApiFunction::from_name(bare)?;
    (bare.len() < name.len() || !function.gmp_only()).then_some(function)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(src: &str, language: Language) -> Option<CallAt> {
        let offset = src.find("$0").unwrap();
        let text = src.replace("$0", "");
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
        call_at(
            &text,
            language,
            &[],
            line_start..line_end,
            line_start,
            offset,
        )
    }

    #[test]
    fn unterminated_key_string_is_found_by_the_line_lexer() {
        let found = at(
            "x = 1\nGMP.NotifyObjectMessage(self, \"Inv.$0\n",
            Language::Lua,
        )
        .unwrap();
        assert_eq!(found.function, ApiFunction::NotifyObjectMessage);
        assert_eq!(found.arg_index, 1);
        assert!(found.string.is_some());
    }

    #[test]
    fn later_arguments_know_the_key() {
        let found = at("ListenMessage(\"A.B\", self, $0", Language::Rhai).unwrap();
        assert_eq!(found.key.as_deref(), Some("A.B"));
        assert_eq!(found.arg_index, 2);
        assert!(found.string.is_none());
    }

    #[test]
    fn comments_and_methods_are_not_calls() {
        assert!(at("-- NotifyMessage(\"$0", Language::Lua).is_none());
        assert!(at("obj:NotifyMessage(\"$0", Language::Lua).is_none());
        assert!(at("Request(self, \"$0", Language::Lua).is_none());
        assert!(at("GMP.Request(self, \"$0", Language::Lua).is_some());
        assert!(at("GMP::Request(self, \"$0", Language::Rhai).is_some());
    }
}
