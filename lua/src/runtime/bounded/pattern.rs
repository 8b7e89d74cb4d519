//! Lua 5.4 patterns with a step limit.
//!
//! Lua's own matcher (`lstrlib.c`) backtracks without bound: `("a-"):rep(12)
//! .. "b"` against 20,000 `a`s tries about 20,000^12 ways and no hook can
//! stop it (it is one C call). This is the same algorithm, line for line —
//! so every pattern means what it means in Lua, captures, position
//! captures, `%b`, `%f`, back-references and all, with the same error
//! texts — that counts its steps: past its allowance it fails with
//! [`PatternError::TooManySteps`], and every [`CHECK_EVERY`] steps it asks
//! its caller whether the call must stop (the time limit, an interrupt).
//!
//! Positions are byte offsets into the subject; the pattern and subject
//! read as NUL past their end, as Lua's NUL-terminated strings do.

/// Most captures in one pattern (`LUA_MAXCAPTURES`).
pub const MAX_CAPTURES: usize = 32;

/// Nested `match` calls before "pattern too complex" (`MAXCCALLS`).
const MAX_DEPTH: u32 = 200;

/// Steps between two questions to the caller's stop check.
pub const CHECK_EVERY: u64 = 4096;

const CAP_UNFINISHED: isize = -1;
const CAP_POSITION: isize = -2;

/// Why a match failed with an error (Lua's own errors, then ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternError {
    EndsWithPercent,
    MissingBracket,
    MissingBalanceArguments,
    MissingFrontierBracket,
    /// `%n` (in a pattern or a replacement) names no finished capture.
    InvalidCaptureIndex(i32),
    InvalidPatternCapture,
    TooManyCaptures,
    TooComplex,
    UnfinishedCapture,
    /// More steps than the match was allowed.
    TooManySteps,
    /// The caller's stop check asked to stop.
    Stopped,
}

impl PatternError {
    /// Lua's text for its own errors (ours are worded by the caller).
    pub fn lua_text(self) -> Option<String> {
        Some(match self {
            Self::EndsWithPercent => "malformed pattern (ends with '%')".to_owned(),
            Self::MissingBracket => "malformed pattern (missing ']')".to_owned(),
            Self::MissingBalanceArguments => {
                "malformed pattern (missing arguments to '%b')".to_owned()
            }
            Self::MissingFrontierBracket => "missing '[' after '%f' in pattern".to_owned(),
            Self::InvalidCaptureIndex(n) => format!("invalid capture index %{n}"),
            Self::InvalidPatternCapture => "invalid pattern capture".to_owned(),
            Self::TooManyCaptures => "too many captures".to_owned(),
            Self::TooComplex => "pattern too complex".to_owned(),
            Self::UnfinishedCapture => "unfinished capture".to_owned(),
            Self::TooManySteps | Self::Stopped => return None,
        })
    }
}

/// One capture's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// `len` bytes of the subject from `start`.
    Text { start: usize, len: usize },
    /// A position capture `()`: the 1-based position.
    Position(usize),
}

#[derive(Clone, Copy)]
struct Slot {
    init: usize,
    len: isize,
}

/// A pattern (its `^` anchor already taken off by the caller, as Lua does)
/// matched against a subject.
pub struct Matcher<'a> {
    src: &'a [u8],
    pat: &'a [u8],
    level: usize,
    capture: [Slot; MAX_CAPTURES],
    depth: u32,
    /// Steps left; every [`CHECK_EVERY`]th asks `stop`.
    left: u64,
    stop: &'a dyn Fn() -> bool,
}

impl<'a> Matcher<'a> {
    /// A matcher allowed `steps` steps in all (across every
    /// [`Matcher::match_at`]), asking `stop` every [`CHECK_EVERY`] steps.
    pub fn new(src: &'a [u8], pat: &'a [u8], steps: u64, stop: &'a dyn Fn() -> bool) -> Self {
        Self {
            src,
            pat,
            level: 0,
            capture: [Slot { init: 0, len: 0 }; MAX_CAPTURES],
            depth: MAX_DEPTH,
            left: steps,
            stop,
        }
    }

    /// Matches the whole pattern at subject offset `s`; the end of the
    /// match, if it matches. Captures are read with [`Matcher::capture`].
    pub fn match_at(&mut self, s: usize) -> Result<Option<usize>, PatternError> {
        self.depth = MAX_DEPTH;
        self.level = 0;
        self.do_match(s, 0)
    }

    /// How many values a match gives: its captures, or the whole match
    /// when it has none and `whole` (find gives none then).
    pub fn count(&self, whole: bool) -> usize {
        if self.level == 0 && whole {
            1
        } else {
            self.level
        }
    }

    /// Capture `i` (0-based) of the match `s..e`; with no captures,
    /// capture 0 is the whole match.
    pub fn capture(&self, i: usize, s: usize, e: usize) -> Result<Capture, PatternError> {
        if i >= self.level {
            if i != 0 {
                return Err(PatternError::InvalidCaptureIndex(i as i32 + 1));
            }
            return Ok(Capture::Text {
                start: s,
                len: e - s,
            });
        }
        let slot = self.capture[i];
        match slot.len {
            CAP_UNFINISHED => Err(PatternError::UnfinishedCapture),
            CAP_POSITION => Ok(Capture::Position(slot.init + 1)),
            len => Ok(Capture::Text {
                start: slot.init,
                len: len as usize,
            }),
        }
    }

    #[inline]
    fn step(&mut self, n: u64) -> Result<(), PatternError> {
        let before = self.left;
        if before <= n {
            self.left = 0;
            return Err(PatternError::TooManySteps);
        }
        self.left -= n;
        if before / CHECK_EVERY != self.left / CHECK_EVERY && (self.stop)() {
            return Err(PatternError::Stopped);
        }
        Ok(())
    }

    /// The pattern byte at `i`, NUL past the end.
    #[inline]
    fn p(&self, i: usize) -> u8 {
        self.pat.get(i).copied().unwrap_or(0)
    }

    /// The subject byte at `i`, NUL past the end.
    #[inline]
    fn s(&self, i: usize) -> u8 {
        self.src.get(i).copied().unwrap_or(0)
    }

    fn do_match(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        if self.depth == 0 {
            return Err(PatternError::TooComplex);
        }
        self.depth -= 1;
        let result = self.match_body(s, p);
        self.depth += 1;
        result
    }

    fn match_body(&mut self, mut s: usize, mut p: usize) -> Result<Option<usize>, PatternError> {
        loop {
            self.step(1)?;
            if p == self.pat.len() {
                return Ok(Some(s));
            }
            match self.pat[p] {
                b'(' => {
                    return if self.p(p + 1) == b')' {
                        self.start_capture(s, p + 2, CAP_POSITION)
                    } else {
                        self.start_capture(s, p + 1, CAP_UNFINISHED)
                    };
                }
                b')' => return self.end_capture(s, p + 1),
                b'$' if p + 1 == self.pat.len() => {
                    return Ok((s == self.src.len()).then_some(s));
                }
                b'%' if self.p(p + 1) == b'b' => match self.match_balance(s, p + 2)? {
                    Some(next) => {
                        s = next;
                        p += 4;
                        continue;
                    }
                    None => return Ok(None),
                },
                b'%' if self.p(p + 1) == b'f' => {
                    p += 2;
                    if self.p(p) != b'[' {
                        return Err(PatternError::MissingFrontierBracket);
                    }
                    let ep = self.class_end(p)?;
                    let previous = if s == 0 { 0 } else { self.src[s - 1] };
                    if !self.match_bracket_class(previous, p, ep - 1)
                        && self.match_bracket_class(self.s(s), p, ep - 1)
                    {
                        p = ep;
                        continue;
                    }
                    return Ok(None);
                }
                b'%' if self.p(p + 1).is_ascii_digit() => {
                    match self.match_capture(s, self.p(p + 1))? {
                        Some(next) => {
                            s = next;
                            p += 2;
                            continue;
                        }
                        None => return Ok(None),
                    }
                }
                _ => {
                    let ep = self.class_end(p)?;
                    let suffix = self.p(ep);
                    if !self.single_match(s, p, ep) {
                        if matches!(suffix, b'*' | b'?' | b'-') {
                            p = ep + 1;
                            continue;
                        }
                        return Ok(None);
                    }
                    match suffix {
                        b'?' => {
                            if let Some(end) = self.do_match(s + 1, ep + 1)? {
                                return Ok(Some(end));
                            }
                            p = ep + 1;
                        }
                        b'+' => return self.max_expand(s + 1, p, ep),
                        b'*' => return self.max_expand(s, p, ep),
                        b'-' => return self.min_expand(s, p, ep),
                        _ => {
                            s += 1;
                            p = ep;
                        }
                    }
                }
            }
        }
    }

    /// Where the single-character class at `p` ends.
    fn class_end(&self, p: usize) -> Result<usize, PatternError> {
        let first = self.pat[p];
        let mut p = p + 1;
        match first {
            b'%' => {
                if p == self.pat.len() {
                    return Err(PatternError::EndsWithPercent);
                }
                Ok(p + 1)
            }
            b'[' => {
                if self.p(p) == b'^' {
                    p += 1;
                }
                loop {
                    // Looks for a `]`; the first character is never it.
                    if p == self.pat.len() {
                        return Err(PatternError::MissingBracket);
                    }
                    let c = self.pat[p];
                    p += 1;
                    if c == b'%' && p < self.pat.len() {
                        p += 1;
                    }
                    if self.p(p) == b']' {
                        break;
                    }
                }
                Ok(p + 1)
            }
            _ => Ok(p),
        }
    }

    /// Does byte `c` match the set `[...]` from `p` (the `[`) to `ec` (the
    /// `]`)?
    fn match_bracket_class(&self, c: u8, p: usize, ec: usize) -> bool {
        let mut p = p;
        let mut sig = true;
        if self.p(p + 1) == b'^' {
            sig = false;
            p += 1;
        }
        loop {
            p += 1;
            if p >= ec {
                return !sig;
            }
            let pc = self.pat[p];
            if pc == b'%' {
                p += 1;
                if match_class(c, self.p(p)) {
                    return sig;
                }
            } else if self.p(p + 1) == b'-' && p + 2 < ec {
                p += 2;
                if self.pat[p - 2] <= c && c <= self.pat[p] {
                    return sig;
                }
            } else if pc == c {
                return sig;
            }
        }
    }

    fn single_match(&self, s: usize, p: usize, ep: usize) -> bool {
        if s >= self.src.len() {
            return false;
        }
        let c = self.src[s];
        match self.pat[p] {
            b'.' => true,
            b'%' => match_class(c, self.p(p + 1)),
            b'[' => self.match_bracket_class(c, p, ep - 1),
            pc => pc == c,
        }
    }

    fn match_balance(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        if p + 1 >= self.pat.len() {
            return Err(PatternError::MissingBalanceArguments);
        }
        if self.s(s) != self.pat[p] {
            return Ok(None);
        }
        let (open, close) = (self.pat[p], self.pat[p + 1]);
        let mut depth = 1u64;
        let mut i = s + 1;
        let mut found = None;
        while i < self.src.len() {
            let c = self.src[i];
            if c == close {
                depth -= 1;
                if depth == 0 {
                    found = Some(i + 1);
                    break;
                }
            } else if c == open {
                depth += 1;
            }
            i += 1;
        }
        self.step((i - s) as u64 / 8)?;
        Ok(found)
    }

    fn max_expand(&mut self, s: usize, p: usize, ep: usize) -> Result<Option<usize>, PatternError> {
        let mut i = 0;
        while self.single_match(s + i, p, ep) {
            i += 1;
            self.step(1)?;
        }
        loop {
            if let Some(end) = self.do_match(s + i, ep + 1)? {
                return Ok(Some(end));
            }
            if i == 0 {
                return Ok(None);
            }
            i -= 1;
        }
    }

    fn min_expand(
        &mut self,
        mut s: usize,
        p: usize,
        ep: usize,
    ) -> Result<Option<usize>, PatternError> {
        loop {
            if let Some(end) = self.do_match(s, ep + 1)? {
                return Ok(Some(end));
            }
            if !self.single_match(s, p, ep) {
                return Ok(None);
            }
            s += 1;
        }
    }

    fn start_capture(
        &mut self,
        s: usize,
        p: usize,
        what: isize,
    ) -> Result<Option<usize>, PatternError> {
        if self.level >= MAX_CAPTURES {
            return Err(PatternError::TooManyCaptures);
        }
        self.capture[self.level] = Slot { init: s, len: what };
        self.level += 1;
        let result = self.do_match(s, p)?;
        if result.is_none() {
            self.level -= 1;
        }
        Ok(result)
    }

    fn end_capture(&mut self, s: usize, p: usize) -> Result<Option<usize>, PatternError> {
        let l = (0..self.level)
            .rev()
            .find(|&l| self.capture[l].len == CAP_UNFINISHED)
            .ok_or(PatternError::InvalidPatternCapture)?;
        self.capture[l].len = (s - self.capture[l].init) as isize;
        let result = self.do_match(s, p)?;
        if result.is_none() {
            self.capture[l].len = CAP_UNFINISHED;
        }
        Ok(result)
    }

    /// A back-reference `%1`..`%9` (`digit` the ASCII digit) at `s`.
    fn match_capture(&mut self, s: usize, digit: u8) -> Result<Option<usize>, PatternError> {
        let l = i32::from(digit) - i32::from(b'1');
        if l < 0 || l as usize >= self.level || self.capture[l as usize].len == CAP_UNFINISHED {
            return Err(PatternError::InvalidCaptureIndex(l + 1));
        }
        let slot = self.capture[l as usize];
        // A position capture has no text: Lua compares a length of
        // (size_t)-2, which never fits.
        let Ok(len) = usize::try_from(slot.len) else {
            return Ok(None);
        };
        self.step(len as u64 / 8)?;
        if self.src.len() - s >= len && self.src[slot.init..slot.init + len] == self.src[s..s + len]
        {
            Ok(Some(s + len))
        } else {
            Ok(None)
        }
    }
}

/// Does byte `c` belong to the class letter `cl` (`%a`, `%D`, ...), or
/// equal it when it is no class letter? The C locale's classes, as Lua
/// uses them.
fn match_class(c: u8, cl: u8) -> bool {
    let res = match cl.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'g' => c.is_ascii_graphic(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        // C's isspace has the vertical tab, Rust's is_ascii_whitespace not.
        b's' => c == b' ' || (b'\t'..=b'\r').contains(&c),
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        b'z' => c == 0,
        _ => return cl == c,
    };
    if cl.is_ascii_lowercase() { res } else { !res }
}

/// Does the pattern have none of Lua's special characters (so `find` may
/// search it as plain text)?
pub fn no_specials(pat: &[u8]) -> bool {
    !pat.iter().any(|b| b"^$*+?.([%-".contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> bool {
        false
    }

    /// `string.match(src, pat)` as (start, end) of the match, anchored
    /// patterns included.
    fn find(src: &str, pat: &str) -> Result<Option<(usize, usize)>, PatternError> {
        let (anchor, pat) = match pat.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, pat),
        };
        let stop = never;
        let mut m = Matcher::new(src.as_bytes(), pat.as_bytes(), 1_000_000, &stop);
        let mut s = 0;
        loop {
            if let Some(e) = m.match_at(s)? {
                return Ok(Some((s, e)));
            }
            if anchor || s >= src.len() {
                return Ok(None);
            }
            s += 1;
        }
    }

    #[test]
    fn classes_sets_and_quantifiers_match_as_in_lua() {
        assert_eq!(find("hello world", "o w"), Ok(Some((4, 7))));
        assert_eq!(find("key = value", "%w+%s*=%s*%w+"), Ok(Some((0, 11))));
        assert_eq!(find("x\u{b}y", "%s"), Ok(Some((1, 2))));
        assert_eq!(find("abc123", "[%d]+"), Ok(Some((3, 6))));
        assert_eq!(find("abc", "[^a]"), Ok(Some((1, 2))));
        assert_eq!(find("a]b", "[]]"), Ok(Some((1, 2))));
        assert_eq!(find("aaab", "a-b"), Ok(Some((0, 4))));
        assert_eq!(find("aaa", "^a?a?a?a$"), Ok(Some((0, 3))));
        assert_eq!(find("THE (quick) fox", "%f[%a]%a+"), Ok(Some((0, 3))));
        assert_eq!(find("x(a(b)c)y", "%b()"), Ok(Some((1, 8))));
        assert_eq!(find("abab", "(ab)%1"), Ok(Some((0, 4))));
        assert_eq!(find("abc", "^b"), Ok(None));
    }

    #[test]
    fn malformed_patterns_fail_with_lua_errors() {
        assert_eq!(find("a", "%"), Err(PatternError::EndsWithPercent));
        assert_eq!(find("a", "[a"), Err(PatternError::MissingBracket));
        assert_eq!(find("a", "%b("), Err(PatternError::MissingBalanceArguments));
        assert_eq!(find("a", "%fa"), Err(PatternError::MissingFrontierBracket));
        assert_eq!(
            find("a", "(a)%2"),
            Err(PatternError::InvalidCaptureIndex(2))
        );
        assert_eq!(find("a", "a)"), Err(PatternError::InvalidPatternCapture));
        assert_eq!(
            find("a", &"(".repeat(33)),
            Err(PatternError::TooManyCaptures)
        );
    }

    #[test]
    fn a_backtracking_pattern_runs_out_of_steps() {
        let src = "a".repeat(20_000);
        let pat = "a-".repeat(12) + "b";
        assert_eq!(find(&src, &pat), Err(PatternError::TooManySteps));
    }

    #[test]
    fn the_stop_check_is_asked_while_matching() {
        let src = "a".repeat(20_000);
        let stop = || true;
        let mut m = Matcher::new(src.as_bytes(), b"a-a-a-b", u64::MAX, &stop);
        assert_eq!(m.match_at(0), Err(PatternError::Stopped));
    }
}
