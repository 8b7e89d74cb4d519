//! Decoding Lua literals: what value an argument is written as.
//!
//! Strings are unescaped exactly as Lua 5.4's lexer does (short strings with
//! every escape, long brackets with their first-newline and newline-folding
//! rules), so the key the editor shows is the key the loader bakes. Anything
//! Lua would reject yields `None`: the rewriter then leaves the call alone and
//! Lua reports the error itself.

use gantry_host::Literal;
use tree_sitter::Node;

use super::kinds::KINDS;

/// The literal `node` is written as, if it is one. A parenthesised
/// expression or a concatenation is deliberately not a literal: the rewriter
/// only bakes what is visibly a single literal.
pub(crate) fn literal_of(node: Node<'_>, source: &str) -> Option<Literal> {
    let k = &*KINDS;
    let kind = node.kind_id();
    let text = || source.get(node.byte_range());
    if kind == k.string {
        decode_string(text()?).map(Literal::Str)
    } else if kind == k.number {
        decode_number(text()?)
    } else if kind == k.true_ {
        Some(Literal::Bool(true))
    } else if kind == k.false_ {
        Some(Literal::Bool(false))
    } else if kind == k.nil {
        Some(Literal::Nil)
    } else if kind == k.table_constructor {
        Some(Literal::Table)
    } else if kind == k.unary_expression {
        // `-1` is a unary minus on a numeral; Lua folds it into a constant.
        let op = node.child_by_field_id(k.field_operator)?;
        let operand = node.child_by_field_id(k.field_operand)?;
        if op.kind_id() != k.minus || operand.kind_id() != k.number {
            return None;
        }
        match decode_number(source.get(operand.byte_range())?)? {
            Literal::Int(i) => Some(Literal::Int(i.wrapping_neg())),
            Literal::Float(f) => Some(Literal::Float(-f)),
            _ => None,
        }
    } else {
        None
    }
}

/// Unescapes a Lua string literal, quotes or long brackets included.
pub(crate) fn decode_string(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let decoded = match bytes.first()? {
        b'[' => decode_long(bytes)?,
        &quote @ (b'"' | b'\'') => {
            if bytes.len() < 2 || bytes[bytes.len() - 1] != quote {
                return None;
            }
            decode_short(&bytes[1..bytes.len() - 1])?
        }
        _ => return None,
    };
    // Lua strings are bytes; `\xff` can make them invalid UTF-8. Such a
    // string can never be a valid key, and lossy decoding keeps it invalid.
    Some(match String::from_utf8(decoded) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// `[==[ ... ]==]`: no escapes; a newline right after the opening bracket is
/// skipped; every newline sequence (`\n`, `\r`, `\r\n`, `\n\r`) reads as `\n`.
fn decode_long(bytes: &[u8]) -> Option<Vec<u8>> {
    let level = bytes[1..].iter().take_while(|&&b| b == b'=').count();
    let open = level + 2;
    if bytes.get(open - 1) != Some(&b'[') || bytes.len() < 2 * open {
        return None;
    }
    let close = bytes.len() - open;
    let closing = &bytes[close..];
    if closing[0] != b']'
        || closing[open - 1] != b']'
        || closing[1..open - 1].iter().any(|&b| b != b'=')
    {
        return None;
    }
    let mut body = &bytes[open..close];
    body = skip_newline(body);
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if b == b'\n' || b == b'\r' {
            out.push(b'\n');
            i = body.len() - skip_newline(&body[i..]).len();
        } else {
            out.push(b);
            i += 1;
        }
    }
    Some(out)
}

/// Skips one newline sequence at the start, as Lua's `inclinenumber` does.
fn skip_newline(s: &[u8]) -> &[u8] {
    match s {
        [b'\r', b'\n', rest @ ..] | [b'\n', b'\r', rest @ ..] => rest,
        [b'\n' | b'\r', rest @ ..] => rest,
        _ => s,
    }
}

/// The body of a quoted string, escapes resolved.
fn decode_short(body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    unescape_short(body, &mut out)?;
    Some(out)
}

/// Appends the body of a quoted string to `out`, escapes resolved; `None`
/// where Lua's lexer refuses it (a line break, an invalid escape). The
/// refusal check validates every string of a chunk with it, into one
/// reused buffer.
pub(crate) fn unescape_short(body: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        i += 1;
        match b {
            b'\n' | b'\r' => return None, // unfinished string
            b'\\' => {
                let e = *body.get(i)?;
                i += 1;
                match e {
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'v' => out.push(11),
                    b'\\' | b'"' | b'\'' => out.push(e),
                    b'\n' | b'\r' => {
                        out.push(b'\n');
                        i = body.len() - skip_newline(&body[i - 1..]).len();
                    }
                    b'x' => {
                        let hi = hex_digit(*body.get(i)?)?;
                        let lo = hex_digit(*body.get(i + 1)?)?;
                        out.push(hi * 16 + lo);
                        i += 2;
                    }
                    b'z' => {
                        while body.get(i).is_some_and(|c| is_lua_space(*c)) {
                            i += 1;
                        }
                    }
                    b'u' => {
                        if body.get(i) != Some(&b'{') {
                            return None;
                        }
                        i += 1;
                        let mut code: u32 = 0;
                        let mut digits = 0;
                        while let Some(d) = body.get(i).and_then(|c| hex_digit(*c)) {
                            code = code.checked_mul(16)?.checked_add(u32::from(d))?;
                            if code > 0x7FFF_FFFF {
                                return None;
                            }
                            digits += 1;
                            i += 1;
                        }
                        if digits == 0 || body.get(i) != Some(&b'}') {
                            return None;
                        }
                        i += 1;
                        push_utf8_extended(out, code);
                    }
                    b'0'..=b'9' => {
                        let mut value = u32::from(e - b'0');
                        for _ in 0..2 {
                            match body.get(i) {
                                Some(d @ b'0'..=b'9') => {
                                    value = value * 10 + u32::from(d - b'0');
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        out.push(u8::try_from(value).ok()?);
                    }
                    _ => return None, // invalid escape sequence
                }
            }
            _ => out.push(b),
        }
    }
    Some(())
}

fn hex_digit(c: u8) -> Option<u8> {
    (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// C's `isspace` in the "C" locale, which Lua's `\z` uses.
fn is_lua_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Lua 5.4's `\u{...}`: UTF-8 extended to 31 bits (up to six bytes).
fn push_utf8_extended(out: &mut Vec<u8>, code: u32) {
    if code < 0x80 {
        out.push(code as u8);
        return;
    }
    let mut buf = [0u8; 6];
    let mut n = 0;
    let mut x = code;
    let mut first_max: u32 = 0x3f;
    while x > first_max {
        buf[5 - n] = 0x80 | (x & 0x3f) as u8;
        n += 1;
        x >>= 6;
        first_max >>= 1;
    }
    buf[5 - n] = ((!first_max << 1) | x) as u8;
    n += 1;
    out.extend_from_slice(&buf[6 - n..]);
}

/// A Lua numeral: integers (decimal, or hexadecimal wrapping modulo 2^64)
/// and floats (decimal or hexadecimal). A decimal integer that overflows
/// is a float, as in Lua 5.4.
pub(crate) fn decode_number(text: &str) -> Option<Literal> {
    let t = text.as_bytes();
    if t.len() > 2 && t[0] == b'0' && (t[1] == b'x' || t[1] == b'X') {
        let digits = &t[2..];
        if digits.iter().all(u8::is_ascii_hexdigit) {
            let mut v: u64 = 0;
            for &d in digits {
                v = v.wrapping_mul(16).wrapping_add(u64::from(hex_digit(d)?));
            }
            return Some(Literal::Int(v as i64));
        }
        return hex_float(digits).map(Literal::Float);
    }
    if t.iter().all(u8::is_ascii_digit)
        && let Ok(i) = text.parse::<i64>()
    {
        return Some(Literal::Int(i));
    }
    text.parse::<f64>().ok().map(Literal::Float)
}

/// The digits of a hexadecimal float after `0x`: `1.8p3`, `.8`, `A.`.
fn hex_float(t: &[u8]) -> Option<f64> {
    let mut mantissa = 0f64;
    let mut exp: i64 = 0;
    let mut any_digit = false;
    let mut seen_dot = false;
    let mut i = 0;
    while i < t.len() {
        let c = t[i];
        if c == b'.' {
            if seen_dot {
                return None;
            }
            seen_dot = true;
        } else if let Some(d) = hex_digit(c) {
            mantissa = mantissa * 16.0 + f64::from(d);
            any_digit = true;
            if seen_dot {
                exp -= 4;
            }
        } else {
            break;
        }
        i += 1;
    }
    if !any_digit {
        return None;
    }
    if i < t.len() {
        if t[i] != b'p' && t[i] != b'P' {
            return None;
        }
        let rest = std::str::from_utf8(&t[i + 1..]).ok()?;
        let rest = rest.strip_prefix('+').unwrap_or(rest);
        let e: i64 = rest.parse().ok()?;
        exp = exp.saturating_add(e);
    }
    let exp = i32::try_from(exp.clamp(-2200, 2200)).ok()?;
    Some(mantissa * 2f64.powi(exp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(raw: &str) -> Option<String> {
        decode_string(raw)
    }

    #[test]
    fn short_strings_unescape_every_lua_escape() {
        assert_eq!(s(r#""Player.Hurt""#).as_deref(), Some("Player.Hurt"));
        assert_eq!(s(r#"'say "hi"'"#).as_deref(), Some("say \"hi\""));
        assert_eq!(s(r#""a\tb\n\\\"\'""#).as_deref(), Some("a\tb\n\\\"'"));
        assert_eq!(s(r#""\x41\66\u{48}\u{e9}""#).as_deref(), Some("ABHé"));
        assert_eq!(s("\"a\\z   \n   b\"").as_deref(), Some("ab"));
        assert_eq!(s("\"a\\\r\nb\"").as_deref(), Some("a\nb"));
        assert_eq!(s(r#""\065\0661""#).as_deref(), Some("AB1"));
    }

    #[test]
    fn malformed_strings_are_not_literals() {
        assert_eq!(s(r#""\q""#), None);
        assert_eq!(s(r#""\256""#), None);
        assert_eq!(s(r#""\xZZ""#), None);
        assert_eq!(s("\"a\nb\""), None);
        assert_eq!(s(r#""\u{}""#), None);
    }

    #[test]
    fn long_brackets_skip_first_newline_and_fold_newlines() {
        assert_eq!(s("[[Key]]").as_deref(), Some("Key"));
        assert_eq!(s("[==[a]]b]==]").as_deref(), Some("a]]b"));
        assert_eq!(s("[[\nx\r\ny]]").as_deref(), Some("x\ny"));
        assert_eq!(s("[=[\r\n\\n]=]").as_deref(), Some("\\n"));
        assert_eq!(s("[=[x]]"), None);
    }

    #[test]
    fn numbers_follow_lua_integer_and_float_rules() {
        assert_eq!(decode_number("42"), Some(Literal::Int(42)));
        assert_eq!(decode_number("0x10"), Some(Literal::Int(16)));
        assert_eq!(decode_number("0xffffffffffffffff"), Some(Literal::Int(-1)));
        assert_eq!(decode_number("1.5"), Some(Literal::Float(1.5)));
        assert_eq!(decode_number("3."), Some(Literal::Float(3.0)));
        assert_eq!(decode_number(".5"), Some(Literal::Float(0.5)));
        assert_eq!(decode_number("1e3"), Some(Literal::Float(1000.0)));
        assert_eq!(decode_number("0x1p4"), Some(Literal::Float(16.0)));
        assert_eq!(decode_number("0x.8"), Some(Literal::Float(0.5)));
        assert_eq!(decode_number("0xA.8P-1"), Some(Literal::Float(5.25)));
        assert_eq!(
            decode_number("9223372036854775808"),
            Some(Literal::Float(9223372036854775808.0))
        );
    }
}
