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

/// A doc line that cannot break out of the comment it is written into.
pub fn one_line(doc: &str) -> String {
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

    #[test]
    fn docs_stay_on_one_line() {
        assert_eq!(one_line("a\n  b\r\nc"), "a b c");
    }
}
