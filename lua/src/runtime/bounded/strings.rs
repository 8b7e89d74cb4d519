//! `string.find`, `match`, `gmatch` and `gsub` on the bounded matcher:
//! `lstrlib.c`'s functions, argument for argument and error for error,
//! except that a match runs out of steps ([`steps_for`]) and stops when
//! the time limit or an interrupt says so. A plain `find` (asked for, or a
//! pattern without special characters) searches in linear time.

use std::ffi::c_int;

use mlua::ffi;

use super::pattern::{Capture, Matcher, PatternError, no_specials};
use super::{Message, arg_error, budget, check_bytes, message, raise};
use crate::runtime::budget::{Budget, raise_stop};

/// Steps a match may take before it fails (a step is about 20 ns): a
/// base that a pattern on a short subject comes near only by backtracking
/// (or by a quadratic search of a few thousand bytes), plus a margin per
/// subject byte that a pattern which does not backtrack stays far below
/// (each byte costs it a few steps). A backtracking pattern needs a power
/// of the subject's length and fails in about a tenth of a second, with an
/// error a script can catch, as Lua's own "pattern too complex". The time
/// limit bounds the rest.
pub fn steps_for(subject: usize) -> u64 {
    4_000_000u64.saturating_add((subject as u64).saturating_mul(128))
}

/// `posrelatI` of `lstrlib.c`: a 1-based start position, negative from the
/// end, clipped to 1.
fn start_position(pos: ffi::lua_Integer, len: usize) -> usize {
    if pos > 0 {
        pos as u64 as usize
    } else if pos == 0 || pos < -(len as i64) {
        1
    } else {
        len - pos.unsigned_abs() as usize + 1
    }
}

/// Raises a matcher's error: Lua's own text, ours for a match out of
/// steps, or the budget's stop.
///
/// # Safety
/// Inside one of this module's C functions, nothing to drop in its frames.
unsafe fn raise_pattern(
    l: *mut ffi::lua_State,
    budget: &Budget,
    function: &str,
    subject: usize,
    error: PatternError,
) -> ! {
    // SAFETY: as the caller promises.
    unsafe {
        match error {
            PatternError::Stopped => raise_stop(budget, l),
            PatternError::TooManySteps => raise(
                l,
                &message!(
                    "{function}: pattern too complex for a subject of {subject} bytes \
                     (more than {} matching steps: it backtracks too much)",
                    steps_for(subject)
                ),
            ),
            other => {
                let mut m = Message::new();
                if let Some(text) = other.lua_text() {
                    let _ = std::fmt::Write::write_str(&mut m, &text);
                }
                // `text` is dropped: only the fixed buffer is left.
                raise(l, &m)
            }
        }
    }
}

/// Pushes capture `i` of the match `s..e`.
///
/// # Safety
/// Inside a C function, `src` the subject the matcher ran on.
unsafe fn push_capture(
    l: *mut ffi::lua_State,
    m: &Matcher<'_>,
    src: &[u8],
    i: usize,
    s: usize,
    e: usize,
) -> Result<(), PatternError> {
    // SAFETY: as the caller promises.
    unsafe {
        match m.capture(i, s, e)? {
            Capture::Text { start, len } => {
                ffi::lua_pushlstring(l, src[start..].as_ptr().cast(), len);
            }
            Capture::Position(pos) => ffi::lua_pushinteger(l, pos as ffi::lua_Integer),
        }
        Ok(())
    }
}

/// Pushes the captures of the match `s..e` (the whole match when there
/// are none and `whole`); how many it pushed.
///
/// # Safety
/// As [`push_capture`].
unsafe fn push_captures(
    l: *mut ffi::lua_State,
    m: &Matcher<'_>,
    src: &[u8],
    whole: bool,
    s: usize,
    e: usize,
) -> Result<c_int, PatternError> {
    // SAFETY: as the caller promises.
    unsafe {
        let n = m.count(whole);
        ffi::luaL_checkstack(l, n as c_int, c"too many captures".as_ptr());
        for i in 0..n {
            push_capture(l, m, src, i, s, e)?;
        }
        Ok(n as c_int)
    }
}

/// `string.find` (`find`) and `string.match` (not `find`).
///
/// # Safety
/// A Lua C function made by `install`.
unsafe fn find_aux(l: *mut ffi::lua_State, find: bool) -> c_int {
    // SAFETY: called by Lua as a C function made by `install`.
    unsafe {
        let budget = budget(l);
        let src = check_bytes(l, 1);
        let pat = check_bytes(l, 2);
        let init = start_position(ffi::luaL_optinteger(l, 3, 1), src.len()) - 1;
        if init > src.len() {
            ffi::lua_pushnil(l);
            return 1;
        }
        if find && (ffi::lua_toboolean(l, 4) != 0 || no_specials(pat)) {
            if let Some(at) = memchr::memmem::find(&src[init..], pat) {
                let start = init + at;
                ffi::lua_pushinteger(l, (start + 1) as ffi::lua_Integer);
                ffi::lua_pushinteger(l, (start + pat.len()) as ffi::lua_Integer);
                return 2;
            }
            ffi::lua_pushnil(l);
            return 1;
        }
        let name = if find { "string.find" } else { "string.match" };
        let anchor = pat.first() == Some(&b'^');
        let pat = if anchor { &pat[1..] } else { pat };
        let stop = || budget.stop_due();
        let mut m = Matcher::new(src, pat, steps_for(src.len()), &stop);
        let mut s1 = init;
        loop {
            match m.match_at(s1) {
                Err(e) => raise_pattern(l, budget, name, src.len(), e),
                Ok(Some(end)) => {
                    let pushed = if find {
                        ffi::lua_pushinteger(l, (s1 + 1) as ffi::lua_Integer);
                        ffi::lua_pushinteger(l, end as ffi::lua_Integer);
                        push_captures(l, &m, src, false, 0, 0).map(|n| n + 2)
                    } else {
                        push_captures(l, &m, src, true, s1, end)
                    };
                    match pushed {
                        Ok(n) => return n,
                        Err(e) => raise_pattern(l, budget, name, src.len(), e),
                    }
                }
                Ok(None) => {}
            }
            let more = s1 < src.len() && !anchor;
            s1 += 1;
            if !more {
                break;
            }
        }
        ffi::lua_pushnil(l);
        1
    }
}

/// `string.find(s, pattern [, init [, plain]])`.
pub unsafe extern "C-unwind" fn find(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua.
    unsafe { find_aux(l, true) }
}

/// `string.match(s, pattern [, init])`.
pub unsafe extern "C-unwind" fn match_(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua.
    unsafe { find_aux(l, false) }
}

/// Where a `gmatch` iterator is (a userdata, its upvalue 4).
#[derive(Clone, Copy)]
struct GmatchState {
    src: usize,
    last_match: Option<usize>,
}

/// `string.gmatch(s, pattern [, init])`: an iterator whose every call is
/// one bounded search.
pub unsafe extern "C-unwind" fn gmatch(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua.
    unsafe {
        let src = check_bytes(l, 1);
        check_bytes(l, 2);
        let init = start_position(ffi::luaL_optinteger(l, 3, 1), src.len()) - 1;
        // Avoids overflow past the end, as Lua does.
        let init = if init > src.len() {
            src.len() + 1
        } else {
            init
        };
        ffi::lua_settop(l, 2);
        let state =
            ffi::lua_newuserdatauv(l, std::mem::size_of::<GmatchState>(), 0).cast::<GmatchState>();
        state.write(GmatchState {
            src: init,
            last_match: None,
        });
        // Upvalues: the budget (as every bounded function), the subject,
        // the pattern, the state.
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_rotate(l, 1, 1);
        ffi::lua_pushcclosure(l, gmatch_next, 4);
        1
    }
}

unsafe extern "C-unwind" fn gmatch_next(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as the closure `gmatch` made.
    unsafe {
        let budget = budget(l);
        let mut len = 0;
        let ptr = ffi::lua_tolstring(l, ffi::lua_upvalueindex(2), &mut len);
        let src = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        let ptr = ffi::lua_tolstring(l, ffi::lua_upvalueindex(3), &mut len);
        let pat = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        let state = ffi::lua_touserdata(l, ffi::lua_upvalueindex(4)).cast::<GmatchState>();
        let GmatchState {
            src: start,
            last_match,
        } = *state;
        let stop = || budget.stop_due();
        let mut m = Matcher::new(src, pat, steps_for(src.len()), &stop);
        let mut s = start;
        while s <= src.len() {
            match m.match_at(s) {
                Err(e) => raise_pattern(l, budget, "string.gmatch", src.len(), e),
                Ok(Some(end)) if Some(end) != last_match => {
                    *state = GmatchState {
                        src: end,
                        last_match: Some(end),
                    };
                    match push_captures(l, &m, src, true, s, end) {
                        Ok(n) => return n,
                        Err(e) => raise_pattern(l, budget, "string.gmatch", src.len(), e),
                    }
                }
                Ok(_) => {}
            }
            s += 1;
        }
        0
    }
}

/// `string.gsub(s, pattern, repl [, n])`.
pub unsafe extern "C-unwind" fn gsub(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua.
    unsafe {
        let budget = budget(l);
        let src = check_bytes(l, 1);
        let pat = check_bytes(l, 2);
        let tr = ffi::lua_type(l, 3);
        let max_s = ffi::luaL_optinteger(l, 4, src.len() as ffi::lua_Integer + 1);
        let anchor = pat.first() == Some(&b'^');
        if !matches!(
            tr,
            ffi::LUA_TNUMBER | ffi::LUA_TSTRING | ffi::LUA_TFUNCTION | ffi::LUA_TTABLE
        ) {
            type_error(l, 3, "string/function/table");
        }
        let mut b: ffi::luaL_Buffer = std::mem::zeroed();
        ffi::luaL_buffinit(l, &mut b);
        let pat = if anchor { &pat[1..] } else { pat };
        let stop = || budget.stop_due();
        let mut m = Matcher::new(src, pat, steps_for(src.len()), &stop);
        let mut s = 0;
        let mut last_match = None;
        let mut n: ffi::lua_Integer = 0;
        let mut changed = false;
        while n < max_s {
            let end = match m.match_at(s) {
                Ok(end) => end,
                Err(e) => raise_pattern(l, budget, "string.gsub", src.len(), e),
            };
            match end {
                Some(e) if Some(e) != last_match => {
                    n += 1;
                    match add_value(l, &mut b, &m, src, s, e, tr) {
                        Ok(c) => changed |= c,
                        Err(err) => raise_pattern(l, budget, "string.gsub", src.len(), err),
                    }
                    s = e;
                    last_match = Some(e);
                }
                _ if s < src.len() => {
                    ffi::luaL_addchar(&mut b, src[s] as std::ffi::c_char);
                    s += 1;
                }
                _ => break,
            }
            if anchor {
                break;
            }
        }
        if !changed {
            ffi::lua_pushvalue(l, 1);
        } else {
            ffi::luaL_addlstring(&mut b, src[s..].as_ptr().cast(), src.len() - s);
            ffi::luaL_pushresult(&mut b);
        }
        ffi::lua_pushinteger(l, n);
        2
    }
}

/// Adds the replacement of the match `s..e` to `b`; whether it changed
/// the subject (a function or table giving `nil` or `false` keeps it).
///
/// # Safety
/// Inside `gsub`, with the buffer's box on top of the stack.
unsafe fn add_value(
    l: *mut ffi::lua_State,
    b: &mut ffi::luaL_Buffer,
    m: &Matcher<'_>,
    src: &[u8],
    s: usize,
    e: usize,
    tr: c_int,
) -> Result<bool, PatternError> {
    // SAFETY: as the caller promises.
    unsafe {
        match tr {
            ffi::LUA_TFUNCTION => {
                ffi::lua_pushvalue(l, 3);
                let n = push_captures(l, m, src, true, s, e)?;
                ffi::lua_call(l, n, 1);
            }
            ffi::LUA_TTABLE => {
                push_capture(l, m, src, 0, s, e)?;
                ffi::lua_gettable(l, 3);
            }
            _ => {
                add_replacement_text(l, b, m, src, s, e)?;
                return Ok(true);
            }
        }
        if ffi::lua_toboolean(l, -1) == 0 {
            ffi::lua_pop(l, 1);
            ffi::luaL_addlstring(b, src[s..].as_ptr().cast(), e - s);
            Ok(false)
        } else if ffi::lua_isstring(l, -1) == 0 {
            let kind = std::ffi::CStr::from_ptr(ffi::luaL_typename(l, -1));
            raise(
                l,
                &message!(
                    "invalid replacement value (a {})",
                    kind.to_str().unwrap_or("?")
                ),
            )
        } else {
            ffi::luaL_addvalue(b);
            Ok(true)
        }
    }
}

/// A replacement string: `%0`..`%9` are captures, `%%` a percent sign.
///
/// # Safety
/// As [`add_value`].
unsafe fn add_replacement_text(
    l: *mut ffi::lua_State,
    b: &mut ffi::luaL_Buffer,
    m: &Matcher<'_>,
    src: &[u8],
    s: usize,
    e: usize,
) -> Result<(), PatternError> {
    // SAFETY: as the caller promises (argument 3 is a string or number,
    // which `lua_tolstring` turns into a string in place).
    unsafe {
        let mut len = 0;
        let ptr = ffi::lua_tolstring(l, 3, &mut len);
        let mut news = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        while let Some(at) = memchr::memchr(b'%', news) {
            ffi::luaL_addlstring(b, news.as_ptr().cast(), at);
            let c = news.get(at + 1).copied().unwrap_or(0);
            if c == b'%' {
                ffi::luaL_addchar(b, b'%' as std::ffi::c_char);
            } else if c == b'0' {
                ffi::luaL_addlstring(b, src[s..].as_ptr().cast(), e - s);
            } else if c.is_ascii_digit() {
                match m.capture(usize::from(c - b'1'), s, e)? {
                    Capture::Text { start, len } => {
                        ffi::luaL_addlstring(b, src[start..].as_ptr().cast(), len);
                    }
                    Capture::Position(pos) => {
                        ffi::lua_pushinteger(l, pos as ffi::lua_Integer);
                        ffi::luaL_addvalue(b);
                    }
                }
            } else {
                raise(l, &message!("invalid use of '%' in replacement string"));
            }
            news = news.get(at + 2..).unwrap_or_default();
        }
        ffi::luaL_addlstring(b, news.as_ptr().cast(), news.len());
        Ok(())
    }
}

/// Raises "bad argument #`arg` to '…' (`expected` expected, got …)", as
/// `luaL_typeerror`.
///
/// # Safety
/// Inside a C function, nothing to drop in its frames.
pub(super) unsafe fn type_error(l: *mut ffi::lua_State, arg: c_int, expected: &str) -> ! {
    // SAFETY: as the caller promises.
    unsafe {
        let got = if ffi::luaL_getmetafield(l, arg, c"__name".as_ptr()) == ffi::LUA_TSTRING {
            ffi::lua_tostring(l, -1)
        } else if ffi::lua_type(l, arg) == ffi::LUA_TLIGHTUSERDATA {
            c"light userdata".as_ptr()
        } else {
            ffi::luaL_typename(l, arg)
        };
        let got = std::ffi::CStr::from_ptr(got).to_str().unwrap_or("?");
        arg_error(l, arg, &message!("{expected} expected, got {got}"))
    }
}
