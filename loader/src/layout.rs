//! What a folder is: a game of many mods (`GAME/mods/*/mod.toml`, with an
//! optional `GAME/game.toml`), or a single mod (a folder with `mod.toml`
//! at its root and no `mods/`, or a bare folder of scripts).
//!
//! A game's mods folder is hostile like every mod file: a mod folder that
//! is a link out of the game folder is refused, a `mod.toml` that is a
//! FIFO is refused without being opened (the manifest reader checks), and
//! at most [`MAX_MODS`] mods are listed, past which the game is refused
//! rather than loaded in part.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gantry_host::files::{self, MIB};
use gantry_host::manifest::Grants;
use gantry_host::manifest::game::GameGrants;
use serde::Deserialize;

use crate::LoaderError;

/// A game's mods folder.
pub const MODS_DIR: &str = "mods";

/// A game's own file: which mods are enabled, and its policy.
pub const GAME_FILE: &str = gantry_host::manifest::game::GAME_FILE;

/// The most mods one game folder holds.
pub const MAX_MODS: usize = 1000;

/// The largest game.toml read.
const MAX_GAME_FILE_BYTES: u64 = MIB;

/// Whether `root` is a game folder: it has a `mods/` folder.
pub fn is_game(root: &Path) -> bool {
    std::fs::symlink_metadata(root.join(MODS_DIR)).is_ok_and(|m| m.is_dir())
}

/// `game.toml`: every field optional.
///
/// ```toml
/// enabled = ["core", "quest"]   # only these mods load (default: every one)
/// disabled = ["ui"]             # these do not
/// save_every = 30               # seconds between saves of persisted keys while watching
/// require_grants = false        # a mod without [grants] may use nothing
/// tick_budget_ms = 4            # each mod's listeners' time per tick, unless said below
/// quarantine_after = 3          # a listener failing 3 times in a row is unlistened
///
/// [tick_budgets]                # per mod, over its mod.toml's `tick_budget_ms`
/// ui = 1.5
///
/// [bridge]                      # keys shared with other game servers (gantry-nats)
/// cluster = "mygame"
/// export = ["Chat"]
/// import = ["Chat"]
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GamePolicy {
    /// The mods that load, by name (`None`: every mod of `mods/`).
    #[serde(default)]
    pub enabled: Option<Vec<String>>,
    /// Mods that do not load, by name.
    #[serde(default)]
    pub disabled: Vec<String>,
    /// Seconds between saves of the persisted keys while watching.
    #[serde(default)]
    pub save_every: Option<u64>,
    /// A mod without `[grants]` may use nothing.
    #[serde(default)]
    pub require_grants: bool,
    /// Every mod's per-tick budget, unless its `mod.toml` or
    /// `[tick_budgets]` says otherwise ([`crate::budget`]).
    #[serde(default)]
    pub tick_budget_ms: Option<crate::budget::BudgetMs>,
    /// Per-tick budgets by mod name, over the mods' own.
    #[serde(default)]
    pub tick_budgets: std::collections::BTreeMap<String, crate::budget::BudgetMs>,
    /// A listener that fails this many times in a row is unlistened and
    /// said ([`crate::quarantine`]); off when absent.
    #[serde(default)]
    pub quarantine_after: Option<std::num::NonZeroU32>,
    /// Each mod's grants as the game narrows them (`[grants.ui]`), kept as
    /// written for the grants' own reader.
    #[serde(default)]
    pub grants: Option<toml::Table>,
    /// `require_grants` and `[grants]` as read by the host's reader, the
    /// one `gantry check` uses too ([`GameGrants`]).
    #[serde(skip)]
    pub game_grants: GameGrants,
    /// The `[bridge]` table, kept as written: the host that runs the game
    /// reads it with the bridge's own configuration (`gantry run` with
    /// `gantry-nats`), so the loader stays free of the network.
    #[serde(default)]
    pub bridge: Option<toml::Table>,
}

impl GamePolicy {
    /// The game's narrowing of mod `name`'s grants (`[grants.name]`, each
    /// of `send`, `listen`, `hook`, `store` a list of key subtrees; a field
    /// left out grants nothing), `None` when the game says nothing of it.
    pub fn grants_for(&self, name: &str) -> Result<Option<Grants>, String> {
        Ok(self.game_grants.for_mod(name).cloned())
    }

    /// Whether the mod `name` is enabled.
    pub fn enables(&self, name: &str) -> bool {
        self.enabled
            .as_ref()
            .is_none_or(|enabled| enabled.iter().any(|e| e == name))
            && !self.disabled.iter().any(|d| d == name)
    }
}

/// Reads `root/game.toml` (the default policy when there is none).
pub fn read_policy(root: &Path) -> Result<GamePolicy, LoaderError> {
    let text = match files::read_text_in(root, Path::new(GAME_FILE), MAX_GAME_FILE_BYTES) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(GamePolicy::default()),
        Err(e) => return Err(LoaderError::GameFile(e)),
    };
    let mut policy: GamePolicy = toml::from_str(&text)
        .map_err(|e| LoaderError::GameToml(format!("{GAME_FILE}: {}", e.to_string().trim())))?;
    policy.game_grants = GameGrants::parse(&text).map_err(LoaderError::GameToml)?;
    let listed = policy.enabled.as_ref().map_or(0, Vec::len) + policy.disabled.len();
    if listed > 2 * MAX_MODS {
        return Err(LoaderError::GameToml(format!(
            "{GAME_FILE}: lists {listed} mods; a game holds at most {MAX_MODS}"
        )));
    }
    Ok(policy)
}

/// One folder of `mods/` that may be a mod.
#[derive(Debug)]
pub struct ModFolder {
    /// Its name in `mods/` (`core`).
    pub folder: String,
    pub dir: PathBuf,
}

/// The folders of `root/mods/`, in name order; each entry that cannot be
/// a mod folder is a finding (`mods/evil: …`), the others still listed.
pub fn mod_folders(root: &Path) -> Result<(Vec<ModFolder>, Vec<String>), LoaderError> {
    let mods = root.join(MODS_DIR);
    let read_err = |error| LoaderError::Mods {
        path: mods.clone(),
        error,
    };
    let canonical_root = std::fs::canonicalize(root).map_err(read_err)?;
    let mut names = BTreeSet::new();
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(&mods).map_err(read_err)? {
        let Ok(entry) = entry else { continue };
        if names.len() + problems.len() >= MAX_MODS {
            return Err(LoaderError::GameToml(format!(
                "{MODS_DIR}/ holds more than {MAX_MODS} entries; a game holds at most {MAX_MODS} mods"
            )));
        }
        let name = entry.file_name();
        let Some(text) = name.to_str() else {
            problems.push(format!(
                "{MODS_DIR}/{}: a mod folder's name must be UTF-8 text",
                name.to_string_lossy()
            ));
            continue;
        };
        if text.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let inside = std::fs::canonicalize(&path)
                .is_ok_and(|target| target.starts_with(&canonical_root) && target.is_dir());
            if !inside {
                problems.push(format!(
                    "{MODS_DIR}/{text}: a link out of the game folder; not loaded"
                ));
                continue;
            }
        } else if !meta.is_dir() {
            // A README beside the mods.
            continue;
        }
        names.insert(text.to_owned());
    }
    let folders = names
        .into_iter()
        .map(|folder| ModFolder {
            dir: mods.join(&folder),
            folder,
        })
        .collect();
    Ok((folders, problems))
}
