//! What a game's `game.toml` says of its mods' grants: `require_grants`
//! and each mod's narrowing (`[grants.ui]`).
//!
//! Read here, with no script engine, so the loader that enforces the
//! grants and `gantry check` that reports calls outside them before any
//! run read the same file the same way and reach the same verdict. The
//! rest of `game.toml` (which mods are enabled, saves, the bridge) is the
//! loader's to read.

use toml::de::{DeTable, DeValue};

use super::grants::{Grant, Grants};

/// The file a game keeps beside its `mods/` folder.
pub const GAME_FILE: &str = "game.toml";

/// The game's word on its mods' grants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameGrants {
    /// A mod without `[grants]` may use nothing.
    pub require_grants: bool,
    /// `[grants.<mod>]`, each mod's narrowing, by mod name.
    pub narrowed: Vec<(String, Grants)>,
}

impl GameGrants {
    /// Reads the grants part of `game.toml`'s text; every other field is
    /// left to the loader. A mistake names the field (`game.toml:
    /// grants.ui.send: expected an array of keys`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let table =
            DeTable::parse(text).map_err(|e| format!("{GAME_FILE}: {}", e.to_string().trim()))?;
        let table = table.get_ref();
        let mut out = GameGrants::default();
        if let Some(value) = table.get("require_grants") {
            out.require_grants = match value.get_ref() {
                DeValue::Boolean(b) => *b,
                _ => return Err(format!("{GAME_FILE}: require_grants: expected a boolean")),
            };
        }
        let Some(grants) = table.get("grants") else {
            return Ok(out);
        };
        let DeValue::Table(grants) = grants.get_ref() else {
            return Err(format!("{GAME_FILE}: grants: expected a table of mods"));
        };
        for (name, value) in grants {
            let name = name.get_ref().to_string();
            let at = format!("{GAME_FILE}: grants.{name}");
            let DeValue::Table(fields) = value.get_ref() else {
                return Err(format!("{at}: expected a table of grants"));
            };
            let mut narrowed = Grants::none();
            for (field, value) in fields {
                let field = field.get_ref();
                let grant = Grant::ALL
                    .into_iter()
                    .find(|g| g.field() == field.as_ref())
                    .ok_or_else(|| {
                        format!(
                            "{at}: unknown field `{field}` (expected one of send, listen, hook, store)"
                        )
                    })?;
                let roots = match value.get_ref() {
                    DeValue::Array(items) => items
                        .iter()
                        .map(|i| match i.get_ref() {
                            DeValue::String(s) => Some(s.to_string()),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>(),
                    _ => None,
                }
                .ok_or_else(|| format!("{at}.{field}: expected an array of keys"))?;
                narrowed = narrowed.with(grant, roots);
            }
            out.narrowed.push((name, narrowed));
        }
        Ok(out)
    }

    /// The game's narrowing of mod `name`'s grants, `None` when it says
    /// nothing of it.
    pub fn for_mod(&self, name: &str) -> Option<&Grants> {
        self.narrowed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, grants)| grants)
    }

    /// What mod `name`, declaring `declared` (`None`: no `[grants]`), may
    /// use in this game (`None`: everything): [`Grants::effective`].
    pub fn effective(&self, name: &str, declared: Option<&Grants>) -> Option<Grants> {
        Grants::effective(declared, self.for_mod(name), self.require_grants)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_games_narrowing_and_requirement_are_read_and_the_rest_left_alone() {
        let game = GameGrants::parse(
            "enabled = [\"ui\"]\nrequire_grants = true\n[grants.ui]\nsend = [\"Ui\"]\n",
        )
        .unwrap();
        assert!(game.require_grants);
        assert!(game.for_mod("ui").unwrap().allows(Grant::Send, "Ui.Open"));
        assert!(!game.for_mod("ui").unwrap().allows(Grant::Listen, "Ui.Open"));
        assert_eq!(game.effective("core", None), Some(Grants::none()));
    }

    #[test]
    fn a_mistyped_grant_field_is_named() {
        let error = GameGrants::parse("[grants.ui]\nsned = []\n").unwrap_err();
        assert_eq!(
            error,
            "game.toml: grants.ui: unknown field `sned` (expected one of send, listen, hook, store)"
        );
    }
}
