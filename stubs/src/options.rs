//! The options a listen takes (`{ order = 1, match = "partial" }` in Lua,
//! `#{ order: 1, match: "partial" }` in Rhai): each one's name, type,
//! fixed values and meaning. The Lua stubs' option classes declare exactly
//! these (a test holds them together), and the language server completes
//! them inside an options table.

use gantry_host::ApiFunction;

/// One option of a listen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenOption {
    pub name: &'static str,
    /// The type as the Lua stubs write it.
    pub lua_type: &'static str,
    /// The type as Rhai writes it.
    pub rhai_type: &'static str,
    /// The values it takes, when they are a fixed set of strings.
    pub values: &'static [&'static str],
    /// What it does (Markdown, one line).
    pub doc: &'static str,
}

const TIMES: ListenOption = ListenOption {
    name: "times",
    lua_type: "integer",
    rhai_type: "int",
    values: &[],
    doc: "How many calls before it unlistens itself (-1: forever).",
};

const ORDER: ListenOption = ListenOption {
    name: "order",
    lua_type: "integer",
    rhai_type: "int",
    values: &[],
    doc: "Lower runs first; ties keep registration order.",
};

const MATCH: ListenOption = ListenOption {
    name: "match",
    lua_type: "\"exact\"|\"partial\"",
    rhai_type: "String",
    values: &["exact", "partial"],
    doc: "`partial` also hears the keys below this one.",
};

const KEY: ListenOption = ListenOption {
    name: "key",
    lua_type: "boolean",
    rhai_type: "bool",
    values: &[],
    doc: "A message listener gets the key that was sent first (which key a `partial` one heard).",
};

const RESPOND: ListenOption = ListenOption {
    name: "respond",
    lua_type: "boolean",
    rhai_type: "bool",
    values: &[],
    doc: "A message listener answers requests: the responder goes in its last parameter, after the values it declares room for.",
};

const PRIORITY: ListenOption = ListenOption {
    name: "priority",
    lua_type: "integer",
    rhai_type: "int",
    values: &[],
    doc: "Higher runs first; ties keep registration order.",
};

const HOOK_MATCH: ListenOption = ListenOption {
    doc: "`partial` also hears the hooks below this one.",
    ..MATCH
};

/// The options of a message listen (`ListenMessage`, `ListenWorldMessage`,
/// `ListenObjectMessage`).
pub const MESSAGE_LISTEN_OPTIONS: [ListenOption; 5] = [TIMES, ORDER, MATCH, KEY, RESPOND];
/// The options of a row listen (`ListenRowMessage`).
pub const ROW_LISTEN_OPTIONS: [ListenOption; 3] = [TIMES, ORDER, MATCH];
/// The options of a hook listen (`ListenHook`).
pub const HOOK_OPTIONS: [ListenOption; 2] = [PRIORITY, HOOK_MATCH];

/// The options argument of `function` (its 0-based index, after the
/// listener) and the options it takes; `None` for a function without one.
pub fn options_of(function: ApiFunction) -> Option<(usize, &'static [ListenOption])> {
    let options: &'static [ListenOption] = match function {
        _ if function.is_message_listen() => &MESSAGE_LISTEN_OPTIONS,
        ApiFunction::ListenRowMessage => &ROW_LISTEN_OPTIONS,
        ApiFunction::ListenHook => &HOOK_OPTIONS,
        _ => return None,
    };
    Some((function.listener_index()? + 1, options))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Lua stubs' option classes declare each option with this type
    /// and doc: the two cannot drift apart.
    #[test]
    fn the_lua_stubs_declare_every_option_as_the_table_says() {
        let stubs = crate::lua_stubs(&gantry_host::SignatureTable::new());
        for (class, options) in [
            ("GantryListenOptions", &MESSAGE_LISTEN_OPTIONS[..]),
            ("GantryHookOptions", &HOOK_OPTIONS[..]),
        ] {
            let body = stubs
                .split(&format!("---@class {class}\n"))
                .nth(1)
                .unwrap_or_else(|| panic!("{class} in the stubs"));
            let fields: Vec<&str> = body
                .lines()
                .take_while(|l| l.starts_with("---@field"))
                .collect();
            let expected: Vec<String> = options
                .iter()
                .map(|o| format!("---@field {}? {} {}", o.name, o.lua_type, o.doc))
                .collect();
            assert_eq!(fields, expected, "{class}");
        }
    }

    #[test]
    fn each_listen_takes_its_options_after_the_listener() {
        assert_eq!(options_of(ApiFunction::ListenMessage).map(|o| o.0), Some(3));
        assert_eq!(
            options_of(ApiFunction::ListenObjectMessage).map(|o| o.0),
            Some(4)
        );
        assert_eq!(
            options_of(ApiFunction::ListenHook).map(|o| o.1.len()),
            Some(2)
        );
        assert_eq!(options_of(ApiFunction::NotifyMessage), None);
    }
}
