//! Turning table names and docs into text that is safe inside generated
//! code: parameter names that are identifiers of the target language, and
//! doc lines that stay on one line.

/// Lua's reserved words: a parameter may not be named after one.
const LUA_KEYWORDS: [&str; 22] = [
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
];

/// Names Rhai refuses as a parameter: its keywords (`KEYWORDS_LIST` in
/// rhai's `types/token.rs`) and the identifier-shaped entries of its
/// reserved symbols (`RESERVED_LIST`, the words it keeps for the future or
/// for its own functions), for the rhai version in Cargo.lock (1.27) with
/// default features. Sorted; a test asks rhai's parser about each of them.
const RHAI_KEYWORDS: [&str; 62] = [
    "Fn",
    "_",
    "as",
    "async",
    "await",
    "break",
    "call",
    "case",
    "catch",
    "const",
    "continue",
    "curry",
    "debug",
    "default",
    "do",
    "else",
    "eval",
    "export",
    "false",
    "fn",
    "for",
    "go",
    "goto",
    "if",
    "import",
    "in",
    "is",
    "is_def_fn",
    "is_def_var",
    "is_shared",
    "let",
    "loop",
    "match",
    "module",
    "new",
    "nil",
    "null",
    "package",
    "print",
    "private",
    "protected",
    "public",
    "return",
    "shared",
    "spawn",
    "static",
    "super",
    "switch",
    "sync",
    "this",
    "thread",
    "throw",
    "true",
    "try",
    "type_of",
    "until",
    "use",
    "var",
    "void",
    "while",
    "with",
    "yield",
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
        Lang::Rhai => RHAI_KEYWORDS.binary_search(&name.as_str()).is_ok(),
    };
    if reserved {
        name.push('_');
    }
    // A Rhai identifier needs a letter before any digit (`_1st`, `_` are none).
    if lang == Lang::Rhai && !is_rhai_identifier(&name) {
        name.insert(0, 'p');
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

/// Rhai's identifier rule (without its `unicode-xid-ident` feature):
/// letters, digits and `_`, with a letter before any digit.
pub fn is_rhai_identifier(name: &str) -> bool {
    rhai_identifier_bytes(name.bytes())
}

/// [`is_rhai_identifier`] of a name given as bytes (a name written in
/// pieces, for one).
pub fn rhai_identifier_bytes(bytes: impl IntoIterator<Item = u8>) -> bool {
    let mut letter = false;
    for b in bytes {
        match b {
            b'_' => {}
            _ if b.is_ascii_alphabetic() => letter = true,
            _ if b.is_ascii_digit() && letter => {}
            _ => return false,
        }
    }
    letter
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
        assert_eq!(param_name("1st", Lang::Rhai, &[]), "p_1st");
    }

    /// Every listed word is one rhai's parser refuses as a parameter, and
    /// what `param_name` makes of it is one it takes.
    #[test]
    fn rhai_refuses_every_listed_word_and_takes_its_replacement() {
        assert!(
            RHAI_KEYWORDS.is_sorted(),
            "binary_search needs the list sorted"
        );
        let compiles = |name: &str| {
            rhai::Engine::new_raw()
                .compile(format!("fn f({name}) {{ }}"))
                .is_ok()
        };
        let kept: Vec<&str> = RHAI_KEYWORDS
            .iter()
            .copied()
            .filter(|w| compiles(w))
            .collect();
        assert!(kept.is_empty(), "rhai takes these: {kept:?}");
        for word in RHAI_KEYWORDS {
            let name = param_name(word, Lang::Rhai, &[]);
            assert!(compiles(&name), "{word} -> {name}");
        }
        // Words of the list that are not identifiers of other languages'
        // lists, as parameter names in real tables use them.
        for word in [
            "nil", "null", "new", "match", "default", "case", "public", "use",
        ] {
            assert_eq!(param_name(word, Lang::Rhai, &[]), format!("{word}_"));
        }
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
