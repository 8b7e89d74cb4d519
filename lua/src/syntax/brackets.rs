//! Lua's long brackets (`[[ … ]]`, `[==[ … ]==]`, and `--[[ … ]]`
//! comments), read from bytes: the cut finder ([`super::split`]) and the
//! language server's line lexer skip them without a parse.

/// `[`, any number of `=`, `[` at `at`: the number of `=` (the level).
pub fn long_bracket_level(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'[') {
        return None;
    }
    let level = b[at + 1..].iter().take_while(|&&c| c == b'=').count();
    (b.get(at + 1 + level) == Some(&b'[')).then_some(level)
}

/// The offset just past the first `]`, `=` × `level`, `]` at or after
/// `from` (the closing bracket of a long bracket of that level); `None`
/// if there is none.
pub fn long_bracket_close(b: &[u8], from: usize, level: usize) -> Option<usize> {
    let mut i = from;
    loop {
        i = i + b.get(i..)?.iter().position(|&c| c == b']')?;
        let eqs = b[i + 1..]
            .iter()
            .take(level)
            .take_while(|&&c| c == b'=')
            .count();
        if eqs == level && b.get(i + 1 + level) == Some(&b']') {
            return Some(i + level + 2);
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_brackets_open_and_close_by_level() {
        assert_eq!(long_bracket_level(b"x [=[a", 2), Some(1));
        assert_eq!(long_bracket_level(b"[[", 0), Some(0));
        assert_eq!(long_bracket_level(b"[=x", 0), None);
        assert_eq!(long_bracket_level(b"[", 0), None);
        let text = b"[==[ a ]] ]=] ]==] z";
        assert_eq!(long_bracket_close(text, 4, 2), Some(18));
        assert_eq!(long_bracket_close(text, 4, 0), Some(9));
        assert_eq!(long_bracket_close(text, 4, 3), None);
        assert_eq!(long_bracket_close(text, 99, 0), None);
    }
}
