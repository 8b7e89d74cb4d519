//! Turning table names and docs into text that is safe inside generated
//! code: parameter names that are identifiers of the target language, and
//! doc lines that stay on one line.

/// Lua's reserved words: a parameter may not be named after one.
const LUA_KEYWORDS: [&str; 22] = [
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
];

/// Rhai's reserved words (and the ones it keeps for the future).
const RHAI_KEYWORDS: [&str; 43] = [
    "true",
    "false",
    "let",
    "const",
    "if",
    "else",
    "switch",
    "do",
    "while",
    "loop",
    "until",
    "for",
    "in",
    "continue",
    "break",
    "return",
    "throw",
    "try",
    "catch",
    "import",
    "export",
    "as",
    "global",
    "private",
    "fn",
    "Fn",
    "call",
    "curry",
    "this",
    "type_of",
    "print",
    "debug",
    "eval",
    "is_def_fn",
    "is_def_var",
    "is_shared",
    "var",
    "static",
    "shared",
    "with",
    "is",
    "goto",
    "exit",
];

/// Which language a name must be valid in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Lua,
    Rhai,
}

/// A parameter name usable in `lang`: invalid characters become `_`, a
/// leading digit or a reserved word gets a `_` suffix/prefix, and `taken`
/// names (earlier parameters of the same function) get a number, so that a
/// table written by hand can never produce a stub that does not parse.
pub fn param_name(raw: &str, lang: Lang, taken: &[String]) -> String {
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        name.push_str("arg");
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    let reserved = match lang {
        Lang::Lua => LUA_KEYWORDS.contains(&name.as_str()),
        Lang::Rhai => RHAI_KEYWORDS.contains(&name.as_str()),
    };
    if reserved {
        name.push('_');
    }
    if taken.contains(&name) {
        let base = name.clone();
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
    }
    name
}

/// The names of a parameter list that follows the fixed names `before`
/// (`key`, `obj`, ...), each made valid and unique by [`param_name`].
pub fn param_names<'p>(
    raw: impl IntoIterator<Item = &'p str>,
    lang: Lang,
    before: &[&str],
) -> Vec<String> {
    let mut taken: Vec<String> = before.iter().map(|b| (*b).to_owned()).collect();
    for name in raw {
        let name = param_name(name, lang, &taken);
        taken.push(name);
    }
    taken.drain(..before.len());
    taken
}

/// `names` (from [`param_names`]) again, with one more fixed name `extra`
/// in front: the same list unless one of them *is* `extra`. A name that
/// does not equal `extra` was never renamed because of it, and a numbered
/// name cannot become `extra` as long as `extra` does not end in a digit —
/// so each key's names are computed once, not once per API function.
pub fn param_names_after<'p>(
    names: &[String],
    extra: &str,
    raw: impl IntoIterator<Item = &'p str>,
    lang: Lang,
    before: &[&str],
) -> Option<Vec<String>> {
    debug_assert!(!extra.ends_with(|c: char| c.is_ascii_digit()));
    if !names.iter().any(|n| n == extra) {
        return None;
    }
    let mut all = Vec::with_capacity(before.len() + 1);
    all.push(extra);
    all.extend_from_slice(before);
    Some(param_names(raw, lang, &all))
}

/// A doc line that cannot break out of the comment it is written into.
pub fn one_line(doc: &str) -> String {
    if !doc.contains(['\n', '\r']) {
        return doc.trim().to_owned();
    }
    doc.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_words_and_digits_never_reach_the_stub() {
        assert_eq!(param_name("end", Lang::Lua, &[]), "end_");
        assert_eq!(param_name("fn", Lang::Rhai, &[]), "fn_");
        assert_eq!(param_name("end", Lang::Rhai, &[]), "end");
        assert_eq!(param_name("1st", Lang::Lua, &[]), "_1st");
        assert_eq!(param_name("a-b", Lang::Lua, &[]), "a_b");
        assert_eq!(param_name("", Lang::Lua, &[]), "arg");
    }

    #[test]
    fn duplicate_parameter_names_are_numbered() {
        let taken = vec!["dmg".to_owned(), "dmg2".to_owned()];
        assert_eq!(param_name("dmg", Lang::Lua, &taken), "dmg3");
    }

    /// The shortcut of `param_names_after` must give what naming the whole
    /// list after the longer prefix gives.
    #[test]
    fn names_after_an_extra_fixed_name_match_naming_from_scratch() {
        let cases: [&[&str]; 5] = [
            &["dmg", "causer"],
            &["obj", "obj2"],
            &["obj2", "obj"],
            &["key", "obj", "obj"],
            &["end", "1st", ""],
        ];
        for raw in cases {
            for lang in [Lang::Lua, Lang::Rhai] {
                let base = param_names(raw.iter().copied(), lang, &["key"]);
                let after = param_names_after(&base, "obj", raw.iter().copied(), lang, &["key"])
                    .unwrap_or_else(|| base.clone());
                let direct = param_names(raw.iter().copied(), lang, &["obj", "key"]);
                assert_eq!(after, direct, "{raw:?}");
            }
        }
    }

    #[test]
    fn docs_stay_on_one_line() {
        assert_eq!(one_line("a\n  b\r\nc"), "a b c");
    }
}
