//! A game as the loader runs it: its mods in dependency order on one hub,
//! ticked, watched, and saved.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::{Rc, Weak};

use gantry_host::face::{Faced, ModGrants};
use gantry_host::manifest::{self, Grants, Manifest};
use gantry_host::{
    Caller, Hub, Key, KeyDecl, ObjectId, SignatureTable, Source, TableFile, Type, Value, WorldId,
};
use gantry_lua::runtime::LuaOptions;
use gantry_rhai::RhaiOptions;

use crate::context::Context;
use crate::engines::Interrupt;
use crate::event::{Event, Sink};
use crate::guard::{Guards, Watch};
use crate::layout::{self, GamePolicy};
use crate::order::{self, Refusal};
use crate::unit::ModUnit;
use crate::{LoaderError, folder};

/// The key each tick is sent on.
pub const TICK_KEY: &str = "Game.Tick";

/// The file name earlier versions recorded the tick's send site under: no
/// file a user could open, so a table that still has it loses it.
const OLD_TICK_SITE: &str = "(gantry run)";

/// The tick as the loader declares it to every mod (and `gantry check`
/// and the language server know it from): no site, since no line of a
/// mod declares it.
pub fn tick_decl() -> KeyDecl {
    KeyDecl::event()
        .doc("Sent by `gantry run` once per tick: the tick's number from 1, and its length in seconds.")
        .param("n", Type::Int)
        .param("dt", Type::Float)
}

/// Which signature table a game reads and saves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TableChoice {
    /// `GAME/.gantry/signatures.json`.
    #[default]
    Default,
    /// A file the user named.
    At(PathBuf),
    /// Neither load nor save a table.
    Off,
}

/// How a game is opened.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every Lua runtime's options (each mod's `mod_dir` is set to its folder).
    pub lua: LuaOptions,
    /// Every Rhai runtime's options (each mod's `mod_dir` is set to its folder).
    pub rhai: RhaiOptions,
    pub table: TableChoice,
    /// Start without the saved state of persisted keys (`gantry test`'s
    /// cases, a replay of a run that started without one): nothing is
    /// replayed from `GAME/.gantry/saved/` before the first tick.
    pub fresh: bool,
    /// Every mod's per-tick budget for this run (`gantry run
    /// --tick-budget`), over game.toml's and the mods' own
    /// ([`crate::budget`]).
    pub tick_budget: Option<std::time::Duration>,
    /// Quarantine a listener after this many failures in a row (`gantry
    /// run --quarantine`), over game.toml's `quarantine_after`
    /// ([`crate::quarantine`]).
    pub quarantine_after: Option<std::num::NonZeroU32>,
}

/// Which mod a text is about, from the file it starts with.
#[derive(Debug, Clone, Default)]
pub struct ModNames {
    /// `(mods/core/, core)`, for a game's mods; empty for a single mod.
    labels: Rc<RefCell<Vec<(String, String)>>>,
}

impl ModNames {
    /// The mod whose file `text` starts with (`mods/core/main.lua:3: …`
    /// is about `core`); `None` for a single mod's texts.
    pub fn mod_of(&self, text: &str) -> Option<String> {
        self.labels
            .borrow()
            .iter()
            .find(|(label, _)| text.starts_with(label.as_str()))
            .map(|(_, name)| name.clone())
    }
}

/// One mod of the game, as a host sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModSummary {
    pub name: String,
    pub version: Option<String>,
    pub dir: PathBuf,
    /// Its scripts as errors name them.
    pub scripts: Vec<String>,
}

/// A game (or a single mod) opened: its mods resolved and ordered, the
/// hub made and its table read; nothing run yet ([`Game::load`]).
pub struct Game {
    root: PathBuf,
    is_game: bool,
    ctx: Rc<Context>,
    mods: Vec<ModUnit>,
    refused: Vec<Refusal>,
    /// Findings about the game folder said at load (mod folders that are
    /// links out, unreadable manifests, unmatched optional dependencies).
    findings: Vec<(bool, String)>,
    names: ModNames,
    policy: GamePolicy,
    table_file: Option<TableFile>,
    /// [`Options::fresh`].
    fresh: bool,
    before: SignatureTable,
    tick: Key,
    ticks: u32,
    said_findings: bool,
    policy_watch: PolicyWatch,
    /// Every folder of `mods/` met so far, loaded or not: a folder that
    /// appears while watching is new.
    known_folders: BTreeSet<String>,
    /// New folders waiting for their `mod.toml` to settle, by its stamp.
    pending: BTreeMap<String, Option<(Option<std::time::SystemTime>, u64)>>,
    /// Tick budgets and quarantine, when asked for ([`crate::guard`]).
    guards: Rc<Guards>,
    /// [`Options::tick_budget`], [`Options::quarantine_after`].
    run_watch: (Option<std::time::Duration>, Option<std::num::NonZeroU32>),
    print: Rc<dyn Fn(&str)>,
    /// The objects the game named to outlive the run ([`Game::name_object`]).
    stable: BTreeMap<String, ObjectId>,
    /// Saved messages on stable names no object holds yet.
    unclaimed: Vec<crate::saved::Pending>,
}

/// Watches game.toml as the loader watches scripts: a new version is read
/// once it has looked the same for two polls in a row.
struct PolicyWatch {
    seen: Option<(Option<std::time::SystemTime>, u64)>,
    read: Option<(Option<std::time::SystemTime>, u64)>,
}

impl PolicyWatch {
    fn new(root: &Path) -> Self {
        let now = Self::stamp(root);
        Self {
            seen: now,
            read: now,
        }
    }

    fn stamp(root: &Path) -> Option<(Option<std::time::SystemTime>, u64)> {
        let meta = std::fs::metadata(root.join(layout::GAME_FILE)).ok()?;
        Some((meta.modified().ok(), meta.len()))
    }

    fn poll(&mut self, root: &Path) -> Option<Result<GamePolicy, LoaderError>> {
        let now = Self::stamp(root);
        if now != self.seen {
            self.seen = now;
            return None;
        }
        if now == self.read {
            return None;
        }
        self.read = now;
        Some(layout::read_policy(root))
    }
}

impl Game {
    /// Opens the game or mod folder `root`: reads `game.toml` and every
    /// mod's `mod.toml`, orders the mods, reads the signature table and
    /// declares the tick and every loadable mod's keys on a new hub.
    ///
    /// A single mod whose `mod.toml` cannot be used is
    /// [`LoaderError::Manifest`]; in a game such a mod is refused (with
    /// the mods that need it) and the others open.
    pub fn open(root: &Path, options: Options) -> Result<Self, LoaderError> {
        let game = Self::open_unwatched(root, options)?;
        game.watch();
        Ok(game)
    }

    /// [`Game::open`] but for the tick budgets and quarantine.
    fn open_unwatched(root: &Path, options: Options) -> Result<Self, LoaderError> {
        folder::mod_folder(root)?;
        let is_game = layout::is_game(root);
        let mut findings = Vec::new();
        let mut refused = Vec::new();
        let mut labels = Vec::new();
        let mut known_folders = BTreeSet::new();
        let mut policy = GamePolicy::default();
        // (name, dir, label, manifest) in load order.
        let mut units: Vec<(String, PathBuf, String, Option<Manifest>)> = Vec::new();
        if is_game {
            policy = layout::read_policy(root)?;
            let (folders, problems) = layout::mod_folders(root)?;
            known_folders.extend(folders.iter().map(|f| f.folder.clone()));
            findings.extend(problems.into_iter().map(|p| (true, p)));
            let mut candidates = Vec::new();
            let mut found: Vec<(String, PathBuf, String, Manifest)> = Vec::new();
            let mut seen: BTreeMap<String, String> = BTreeMap::new();
            // Every mod found, loaded or not: a refused mod's errors carry
            // its name too.
            for folder in folders {
                let label = format!("{}/{}/", layout::MODS_DIR, folder.folder);
                let manifest = match manifest::load(&folder.dir) {
                    Ok(Some(mut manifest)) => {
                        manifest.file = format!("{label}{}", manifest.file);
                        manifest
                    }
                    Ok(None) => {
                        findings.push((
                            false,
                            format!(
                                "{label}: no {} here, so no mod; skipped",
                                manifest::MANIFEST_FILE
                            ),
                        ));
                        continue;
                    }
                    Err(errors) => {
                        for text in crate::manifest_findings(&errors, &label) {
                            findings.push((true, text));
                        }
                        findings.push((
                            true,
                            format!(
                                "{label}{}: cannot be used; the mod in {label} is not loaded",
                                errors.file
                            ),
                        ));
                        continue;
                    }
                };
                let name = manifest.module.name.clone();
                if !policy.enables(&name) {
                    findings.push((
                        false,
                        format!("{label}: {name} is disabled in {}", layout::GAME_FILE),
                    ));
                    continue;
                }
                if let Some(other) = seen.get(&name) {
                    findings.push((
                        true,
                        format!(
                            "{}: the mod name {name} is taken by {other}; not loaded",
                            manifest.file
                        ),
                    ));
                    continue;
                }
                seen.insert(name.clone(), label.clone());
                labels.push((label.clone(), name.clone()));
                let (candidate, problems) = crate::needs::candidate(&manifest);
                findings.extend(problems.into_iter().map(|p| (true, p)));
                candidates.push(candidate);
                found.push((name, folder.dir, label, manifest));
            }
            let mut resolved = order::resolve(&candidates);
            // A mod the game disabled is there, just not wanted: say so.
            for refusal in &mut resolved.refused {
                if let Some(missing) = refusal.chain.last()
                    && !policy.enables(missing)
                {
                    refusal.reason = refusal.reason.replace(
                        "which is not in the game",
                        &format!("which is disabled in {}", layout::GAME_FILE),
                    );
                }
            }
            findings.extend(resolved.warnings.into_iter().map(|w| (false, w)));
            refused = resolved.refused;
            let mut found: Vec<Option<_>> = found.into_iter().map(Some).collect();
            for i in resolved.order {
                if let Some((name, dir, label, manifest)) = found[i].take() {
                    units.push((name, dir, label, Some(manifest)));
                }
            }
        } else {
            let manifest = manifest::load(root).map_err(LoaderError::Manifest)?;
            let name = manifest.as_ref().map_or_else(
                || {
                    root.canonicalize()
                        .ok()
                        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                        .unwrap_or_else(|| "mod".to_owned())
                },
                |m| m.module.name.clone(),
            );
            units.push((name, root.to_path_buf(), String::new(), manifest));
        }
        let table_file = match &options.table {
            TableChoice::Off => None,
            TableChoice::Default => Some(folder::open_table(root, None)?),
            TableChoice::At(path) => Some(folder::open_table(root, Some(path))?),
        };
        let before = table_file
            .as_ref()
            .map(|file| file.table().clone())
            .unwrap_or_default();
        let hub = Hub::with_table(before.clone());
        // The tick is the host's, declared before any script runs: a mod's
        // send that contradicts it is refused and records nothing, so the
        // ticks keep working.
        hub.declare_at(TICK_KEY, tick_decl(), None)
            .map_err(|error| LoaderError::Hub {
                what: format!("declaring {TICK_KEY}"),
                error,
            })?;
        hub.edit_table(|table| {
            if let Some(entry) = table.keys.get_mut(TICK_KEY) {
                entry.sites.retain(|site| site.file != OLD_TICK_SITE);
            }
        });
        // Declared after the table file is merged: a manifest is the newer
        // word, and its keys are held as the host's are.
        let mut declared = Vec::new();
        for (name, dir, label, manifest) in units {
            if let Some(manifest) = &manifest
                && let Err(error) = manifest.declare_on(&hub)
            {
                if !is_game {
                    return Err(LoaderError::Hub {
                        what: format!("declaring the keys of {}", manifest.file),
                        error,
                    });
                }
                refused.push(Refusal {
                    module: name.clone(),
                    reason: format!("{}: declaring its keys: {error}", manifest.file),
                    chain: vec![name],
                });
                continue;
            }
            declared.push((name, dir, label, manifest));
        }
        let tick = hub.key(TICK_KEY).map_err(|error| LoaderError::Hub {
            what: format!("the key {TICK_KEY}"),
            error,
        })?;
        let world = hub.create_world();
        let ctx = Context::new(hub.clone(), world, options.lua, options.rhai);
        let weak: Weak<Context> = Rc::downgrade(&ctx);
        let guards = Rc::new(Guards::default());
        let watching = Rc::downgrade(&guards);
        hub.on_report(move |report| {
            if let Some(guards) = watching.upgrade() {
                guards.on_report(report);
            }
            if let Some(ctx) = weak.upgrade() {
                ctx.say(Event::Report(&report.to_string()));
            }
        });
        let weak: Weak<Context> = Rc::downgrade(&ctx);
        let print: Rc<dyn Fn(&str)> = Rc::new(move |line: &str| {
            if let Some(ctx) = weak.upgrade() {
                ctx.say(Event::Print(line));
            }
        });
        let names = ModNames {
            labels: Rc::new(RefCell::new(labels)),
        };
        let mut mods = Vec::new();
        for (name, dir, label, manifest) in declared {
            let narrowed = policy.grants_for(&name).map_err(LoaderError::GameToml)?;
            let grants = Grants::effective(
                manifest.as_ref().and_then(|m| m.grants.as_ref()),
                narrowed.as_ref(),
                policy.require_grants,
            );
            let grants = ModGrants::of(&name, grants);
            mods.push(ModUnit::new(
                name,
                &dir,
                label,
                manifest,
                grants,
                print.clone(),
            ));
        }
        Ok(Self {
            root: root.to_path_buf(),
            is_game,
            ctx,
            mods,
            refused,
            findings,
            names,
            policy,
            table_file,
            fresh: options.fresh,
            before,
            tick,
            ticks: 0,
            said_findings: false,
            policy_watch: PolicyWatch::new(root),
            known_folders,
            pending: BTreeMap::new(),
            guards,
            run_watch: (options.tick_budget, options.quarantine_after),
            print,
            stable: BTreeMap::new(),
            unclaimed: Vec::new(),
        })
    }

    /// Watches the tick budgets and quarantine the run, game.toml and
    /// the mods' manifests ask for (again after any of them changed).
    fn watch(&self) {
        let (run_budget, run_quarantine) = self.run_watch;
        let budgets = crate::budget::resolve(
            run_budget,
            &self.policy,
            self.mods.iter().map(|m| {
                let own = m.manifest.as_ref().and_then(|m| m.module.tick_budget);
                (m.name.as_str(), own)
            }),
        );
        let single = (!self.is_game)
            .then(|| self.mods.first().map(|m| m.name.clone()))
            .flatten();
        let watch = Watch {
            budgets,
            quarantine_after: run_quarantine.or(self.policy.quarantine_after),
        };
        self.guards.configure(&self.ctx, &self.names, single, watch);
    }

    /// Installs a host's tracer (`None`: the host's off): what
    /// [`Hub::set_tracer`] does, chained with the loader's own when the
    /// game asks for tick budgets or quarantine. Use it, not the hub's.
    pub fn set_tracer(&self, tracer: Option<Rc<gantry_host::TraceFn>>) {
        self.guards.set_host(&self.ctx.hub, tracer);
    }

    /// The listeners quarantined so far ([`crate::quarantine`]).
    pub fn quarantined(&self) -> Vec<crate::quarantine::Quarantined> {
        self.guards.quarantined()
    }

    /// Where events go from now on (by default, to `tracing`).
    pub fn on_event(&self, sink: impl Fn(Event<'_>) + 'static) {
        let sink: Sink = Box::new(sink);
        self.ctx.set_sink(sink);
    }

    /// The hub every mod runs on: declare the game's own keys, listen to
    /// the mods' keys from Rust, send to them.
    pub fn hub(&self) -> &Hub {
        &self.ctx.hub
    }

    /// The world the mods' scripts live in.
    pub fn world(&self) -> WorldId {
        self.ctx.world
    }

    /// The folder the game was opened from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether it is a game of many mods (`mods/`), not a single mod.
    pub fn is_game(&self) -> bool {
        self.is_game
    }

    /// The game's policy (`game.toml`; the default for a single mod).
    pub fn policy(&self) -> &GamePolicy {
        &self.policy
    }

    /// Which mod a text is about.
    pub fn names(&self) -> ModNames {
        self.names.clone()
    }

    /// Stops the script call running in any mod, from another thread.
    pub fn interrupter(&self) -> Interrupt {
        self.ctx.interrupters.all()
    }

    /// The mods that load, in load order.
    pub fn mods(&self) -> Vec<ModSummary> {
        self.mods
            .iter()
            .map(|m| ModSummary {
                name: m.name.clone(),
                version: m.manifest.as_ref().and_then(|m| m.module.version.clone()),
                dir: m.dir.clone(),
                scripts: m.scripts.iter().map(|s| s.file.clone()).collect(),
            })
            .collect()
    }

    /// The mods that do not load, and why.
    pub fn refused(&self) -> &[Refusal] {
        &self.refused
    }

    /// Errors said so far (reports and script errors, each time).
    pub fn errors(&self) -> usize {
        self.ctx.errors()
    }

    /// Whether anything failed: an error said, or a mod refused.
    pub fn failed(&self) -> bool {
        self.ctx.errors() > 0 || !self.refused.is_empty()
    }

    /// Says what was found opening the game: refused mods as errors (the
    /// chain named), the rest as warnings.
    fn say_findings(&mut self) {
        if self.said_findings {
            return;
        }
        self.said_findings = true;
        for (error, text) in &self.findings {
            if *error {
                self.ctx.error(text);
            } else {
                self.ctx.say(Event::Warning(text));
            }
        }
        for refusal in &self.refused {
            self.ctx.error(&format!(
                "{}; {} is not loaded",
                refusal.reason, refusal.module
            ));
        }
        if !self.findings.is_empty() || !self.refused.is_empty() {
            self.ctx.say(Event::StepEnd);
        }
    }

    /// Loads every mod's scripts, dependencies first; each script's top
    /// level runs as it loads.
    pub fn load(&mut self) {
        self.load_until(&|| false);
    }

    /// [`Game::load`], stopping between scripts once `stop` says so (a
    /// Ctrl-C).
    pub fn load_until(&mut self, stop: &dyn Fn() -> bool) {
        self.say_findings();
        for at in 0..self.mods.len() {
            if stop() {
                break;
            }
            self.mods[at].load_all(&self.ctx, stop);
            // After the scripts, before the first tick: the saved state
            // wins over what a top level stored as its default, and every
            // listener of the mod hears it.
            if self.replay_saved(at) {
                self.ctx.say(Event::StepEnd);
            }
        }
    }

    /// Gives `object` a name that outlives the run, so what the mods'
    /// persisted keys store on it, and on its named sources, is saved
    /// and stored on the object named the same in the next run (an
    /// object's number means nothing in the next run; a name does).
    /// What a save holds for the name is stored on it now. A name is
    /// one object's: giving it to another is refused, as is an object
    /// that is gone, an empty name or one longer than
    /// [`gantry_host::hub::MAX_SOURCE_NAME_BYTES`].
    pub fn name_object(&mut self, object: ObjectId, name: &str) -> Result<(), LoaderError> {
        let refuse = |reason: String| LoaderError::StableName {
            object,
            name: name.chars().take(64).collect(),
            reason,
        };
        if name.is_empty() || name.len() > gantry_host::hub::MAX_SOURCE_NAME_BYTES {
            return Err(refuse(format!(
                "a name has 1 to {} bytes",
                gantry_host::hub::MAX_SOURCE_NAME_BYTES
            )));
        }
        if !self.ctx.hub.is_alive(object) {
            return Err(refuse("the object is gone".into()));
        }
        match self.stable.get(name) {
            Some(held) if *held != object && self.ctx.hub.is_alive(*held) => {
                return Err(refuse(format!("the name is {held}'s")));
            }
            _ => {}
        }
        self.stable.insert(name.to_owned(), object);
        self.claim_unclaimed();
        Ok(())
    }

    /// Every object with a stable name now: the game's named objects and
    /// each script's own object, by its file.
    fn holders(&self, extra: Option<&ModUnit>) -> crate::saved::Holders {
        let hub = &self.ctx.hub;
        let game = self
            .stable
            .iter()
            .filter(|(_, o)| hub.is_alive(**o))
            .map(|(n, o)| (crate::saved::Holder::Game(n.clone()), *o));
        let scripts = self
            .mods
            .iter()
            .chain(extra)
            .flat_map(|m| m.scripts.iter())
            .filter(|s| hub.is_alive(s.object))
            .map(|s| (crate::saved::Holder::Script(s.file.clone()), s.object));
        game.chain(scripts).collect()
    }

    /// Stores the saved messages whose object has a holder now.
    fn claim_unclaimed(&mut self) {
        if self.unclaimed.is_empty() {
            return;
        }
        let holders = self.holders(None);
        let mut unclaimed = std::mem::take(&mut self.unclaimed);
        for warning in crate::saved::claim(&mut unclaimed, &self.ctx.hub, self.ctx.world, &holders)
        {
            self.ctx.say(Event::Warning(&warning));
        }
        self.unclaimed = unclaimed;
    }

    /// Replays the saved state of the mod at `at` of the loaded mods.
    fn replay_saved(&mut self, at: usize) -> bool {
        let holders = self.holders(None);
        let tried = replay_saved(
            &self.root,
            &self.ctx,
            &self.mods[at],
            self.fresh,
            &holders,
            &mut self.unclaimed,
        );
        // A later mod's script may hold what an earlier mod saved.
        self.claim_unclaimed();
        tried
    }

    /// Seconds between saves of the persisted keys while watching
    /// (`save_every` in game.toml; 30 by default).
    pub fn save_every(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.policy.save_every.unwrap_or(30).max(1))
    }

    /// Saves every mod's persisted keys (`GAME/.gantry/saved/<mod>.json`,
    /// each written whole). What cannot be saved is said; whether every
    /// save was written.
    pub fn save_state(&mut self) -> bool {
        let mut ok = true;
        let holders = self.holders(None);
        for unit in &self.mods {
            ok &= self.save_unit(unit, &holders);
        }
        ok
    }

    /// Saves one mod's persisted keys; whether it was written.
    fn save_unit(&self, unit: &ModUnit, holders: &crate::saved::Holders) -> bool {
        if unit.persisted.is_empty() {
            return true;
        }
        let saved = crate::saved::save(
            &self.root,
            &unit.name,
            &unit.persisted,
            &self.ctx.hub,
            self.ctx.world,
            holders,
            &self.unclaimed,
        );
        match saved {
            Ok(dropped) => {
                for text in dropped {
                    self.ctx
                        .say(Event::Warning(&format!("{}{text}", mod_tag(unit))));
                }
                true
            }
            Err(e) => {
                self.ctx.error(&format!(
                    "{}saving the state of {}: {e}",
                    mod_tag(unit),
                    unit.name
                ));
                false
            }
        }
    }

    /// The ticks sent so far.
    pub fn ticks(&self) -> u32 {
        self.ticks
    }

    /// Sends the next `Game.Tick` (its number from 1, and `dt`) to every
    /// mod; errors are said as they happen.
    pub fn tick(&mut self, dt: f64) {
        self.ticks += 1;
        // Unrecorded: the tick's one site is the host's, not a line of
        // the loader's own source that moves with every edit.
        let mut args = [Value::Int(i64::from(self.ticks)), Value::Float(dt)];
        self.guards.begin_tick();
        let _ = self
            .ctx
            .hub
            .send_values(self.tick, Source::Global, &mut args, Caller::Unrecorded);
        for overrun in self.guards.end_tick(self.ticks) {
            self.ctx.say(Event::Warning(&overrun.to_string()));
        }
        for unit in &self.mods {
            unit.take_errors(&self.ctx);
        }
        self.ctx.say(Event::StepEnd);
    }

    /// Reloads what changed on disk since the last poll: game.toml (a mod
    /// it disables is unloaded), each mod's manifest and scripts; a mod
    /// whose folder is gone is unloaded.
    pub fn poll(&mut self) {
        if self.is_game
            && let Some(policy) = self.policy_watch.poll(&self.root)
        {
            self.apply_policy(policy);
        }
        if self.is_game {
            self.poll_new_mods();
        }
        let mut gone = Vec::new();
        for (at, unit) in self.mods.iter_mut().enumerate() {
            if !unit.dir.is_dir() {
                gone.push(at);
                continue;
            }
            unit.poll(&self.ctx);
        }
        for at in gone.into_iter().rev() {
            let mut unit = self.mods.remove(at);
            unit.unload(&self.ctx);
            self.ctx
                .say(Event::Progress(&format!("[unloaded mod {}]", unit.name)));
        }
        // game.toml, a mod.toml or the mods themselves may have changed.
        self.watch();
    }

    /// Loads the mods whose folders appeared in `mods/` since the last
    /// poll, once their `mod.toml` has looked the same for two polls. A new
    /// mod loads when what it depends on is loaded and matches; otherwise,
    /// or when it cannot be read, it is said once and not loaded.
    fn poll_new_mods(&mut self) {
        let Ok((folders, _)) = layout::mod_folders(&self.root) else {
            return;
        };
        // A folder gone is new again when it comes back.
        self.known_folders
            .retain(|known| folders.iter().any(|f| f.folder == *known));
        for folder in folders {
            if self.known_folders.contains(&folder.folder) {
                continue;
            }
            let stamp = std::fs::metadata(folder.dir.join(manifest::MANIFEST_FILE))
                .ok()
                .map(|m| (m.modified().ok(), m.len()));
            match self.pending.get(&folder.folder) {
                Some(seen) if *seen == stamp => {
                    self.pending.remove(&folder.folder);
                    self.known_folders.insert(folder.folder.clone());
                    self.add_mod(&folder);
                    self.ctx.say(Event::StepEnd);
                }
                _ => {
                    self.pending.insert(folder.folder.clone(), stamp);
                }
            }
        }
    }

    /// Adds the mod in `folder` to the running game, if it can run.
    fn add_mod(&mut self, folder: &layout::ModFolder) {
        let label = format!("{}/{}/", layout::MODS_DIR, folder.folder);
        let mut manifest = match manifest::load(&folder.dir) {
            Ok(Some(manifest)) => manifest,
            Ok(None) => return,
            Err(errors) => {
                for text in crate::manifest_findings(&errors, &label) {
                    self.ctx.error(&text);
                }
                return;
            }
        };
        manifest.file = format!("{label}{}", manifest.file);
        let name = manifest.module.name.clone();
        if !self.policy.enables(&name) {
            return;
        }
        if self.mods.iter().any(|m| m.name == name) {
            self.ctx.error(&format!(
                "{}: the mod name {name} is taken; not loaded",
                manifest.file
            ));
            return;
        }
        // Its errors carry its name from now on, loaded or not.
        let mut labels = self.names.labels.borrow_mut();
        if !labels.iter().any(|(l, n)| *l == label && *n == name) {
            labels.push((label.clone(), name.clone()));
        }
        drop(labels);
        let (candidate, problems) = crate::needs::candidate(&manifest);
        for problem in problems {
            self.ctx.error(&problem);
        }
        let mut why = candidate.broken.clone();
        for need in &candidate.depends {
            if why.is_some() {
                break;
            }
            let loaded = self.mods.iter().find(|m| m.name == need.name);
            let version = loaded
                .and_then(|m| m.manifest.as_ref())
                .and_then(|m| m.module.version.as_deref())
                .and_then(|v| semver::Version::parse(v).ok());
            why = match (loaded, &need.requirement) {
                (None, _) => Some(format!(
                    "{}: {name} needs {}, which is not loaded",
                    need.at, need.name
                )),
                (Some(_), Some(req)) if !version.as_ref().is_some_and(|v| req.matches(v)) => {
                    Some(format!(
                        "{}: {name} needs {} {req}, which does not match the loaded one",
                        need.at, need.name
                    ))
                }
                _ => None,
            };
        }
        if let Some(why) = why {
            self.ctx.error(&format!("{why}; {name} is not loaded"));
            return;
        }
        if let Err(e) = manifest.declare_on(&self.ctx.hub) {
            self.ctx.error(&format!(
                "{}: declaring its keys: {e}; {name} is not loaded",
                manifest.file
            ));
            return;
        }
        let narrowed = match self.policy.grants_for(&name) {
            Ok(narrowed) => narrowed,
            Err(e) => {
                self.ctx.error(&format!("{e}; {name} is not loaded"));
                return;
            }
        };
        let grants = Grants::effective(
            manifest.grants.as_ref(),
            narrowed.as_ref(),
            self.policy.require_grants,
        );
        let grants = ModGrants::of(&name, grants);
        self.ctx
            .say(Event::Progress(&format!("[loading mod {name}]")));
        let mut unit = ModUnit::new(
            name,
            &folder.dir,
            label,
            Some(manifest),
            grants,
            self.print.clone(),
        );
        unit.load_all(&self.ctx, &|| false);
        self.mods.push(unit);
        self.replay_saved(self.mods.len() - 1);
        self.refused.retain(|r| r.module != name_of_new(&self.mods));
    }

    /// A game.toml read again while watching: each loaded mod it no longer
    /// enables is unloaded. One that cannot be used is said, and the mods
    /// stay as they are.
    fn apply_policy(&mut self, policy: Result<GamePolicy, LoaderError>) {
        let policy = match policy {
            Ok(policy) => policy,
            Err(e) => {
                self.ctx.error(&format!("{e}; the mods stay as they are"));
                self.ctx.say(Event::StepEnd);
                return;
            }
        };
        let disabled: Vec<String> = self
            .mods
            .iter()
            .filter(|m| !policy.enables(&m.name))
            .map(|m| m.name.clone())
            .collect();
        // What a disabled mod stored is kept for when it comes back.
        let holders = self.holders(None);
        for name in disabled {
            if let Some(unit) = self.mods.iter().find(|m| m.name == name) {
                self.save_unit(unit, &holders);
            }
            self.unload(&name);
        }
        let before = std::mem::replace(&mut self.policy, policy);
        self.load_enabled(&before);
    }

    /// Loads the mods of known folders that `before` did not enable and
    /// the policy now does, and those refused at the start that may run
    /// now (a dependency enabled), dependencies first.
    fn load_enabled(&mut self, before: &GamePolicy) {
        let Ok((folders, _)) = layout::mod_folders(&self.root) else {
            return;
        };
        let mut waiting = Vec::new();
        for folder in folders {
            if !self.known_folders.contains(&folder.folder) {
                continue;
            }
            let Ok(Some(manifest)) = manifest::load(&folder.dir) else {
                continue;
            };
            let name = &manifest.module.name;
            let newly = !before.enables(name) || self.refused.iter().any(|r| r.module == *name);
            if newly && self.policy.enables(name) && !self.mods.iter().any(|m| m.name == *name) {
                let needs: Vec<String> = manifest
                    .module
                    .depends
                    .iter()
                    .map(|d| d.name.clone())
                    .collect();
                waiting.push((name.clone(), needs, folder));
            }
        }
        // Each pass loads those whose dependencies wait no more; what is
        // left when a pass loads nothing is tried anyway, to say why not.
        while !waiting.is_empty() {
            let ready = waiting.iter().position(|(_, needs, _)| {
                needs
                    .iter()
                    .all(|n| !waiting.iter().any(|(w, _, _)| w == n))
            });
            let (_, _, folder) = waiting.remove(ready.unwrap_or(0));
            self.add_mod(&folder);
            self.ctx.say(Event::StepEnd);
        }
    }

    /// Unloads the mod `name`: everything its scripts registered or
    /// stored goes. Whether it was loaded.
    pub fn unload(&mut self, name: &str) -> bool {
        let Some(at) = self.mods.iter().position(|m| m.name == name) else {
            return false;
        };
        let mut unit = self.mods.remove(at);
        unit.unload(&self.ctx);
        self.ctx
            .say(Event::Progress(&format!("[unloaded mod {name}]")));
        true
    }

    /// Every loaded script's object and its file as errors name it.
    pub fn script_files(&self) -> HashMap<ObjectId, String> {
        self.mods
            .iter()
            .flat_map(|m| m.scripts.iter().map(|s| (s.object, s.file.clone())))
            .collect()
    }

    /// The table as read when the game opened.
    pub fn table_before(&self) -> &SignatureTable {
        &self.before
    }

    /// The table file, unless the game runs without one.
    pub fn table_path(&self) -> Option<&Path> {
        self.table_file.as_ref().map(TableFile::path)
    }

    /// Saves the hub's table to the table file, merged with what changed
    /// on disk since it was read; what both changed keeps the file's
    /// version, each said in the result. `None` without a table file.
    pub fn save_table(&mut self) -> Result<Option<gantry_host::Saved>, LoaderError> {
        let mut after = self.ctx.hub.table_snapshot();
        let Some(file) = &mut self.table_file else {
            return Ok(None);
        };
        let path = file.path().to_path_buf();
        // This run saw the whole folder: a script it no longer holds
        // (deleted, renamed) keeps no sites. Only for the folder's own
        // table: one given elsewhere may be shared with other folders.
        if path.starts_with(&self.root) {
            after.forget_missing_files(&self.root);
        }
        file.save(&after)
            .map(Some)
            .map_err(|error| LoaderError::SaveTable { path, error })
    }
}

/// Replays a mod's saved state (its persisted keys, from
/// `GAME/.gantry/saved/`) after its scripts loaded and before the first
/// tick, saying what could not be replayed; unless the game starts
/// `fresh`. Whether anything was tried.
fn replay_saved(
    root: &Path,
    ctx: &Context,
    unit: &ModUnit,
    fresh: bool,
    holders: &crate::saved::Holders,
    unclaimed: &mut Vec<crate::saved::Pending>,
) -> bool {
    if unit.persisted.is_empty() || fresh {
        return false;
    }
    let replayed = crate::saved::replay(
        root,
        &unit.name,
        &unit.persisted,
        &ctx.hub,
        ctx.world,
        holders,
    );
    for warning in replayed.warnings {
        ctx.say(Event::Warning(&format!("{}{warning}", mod_tag(unit))));
    }
    unclaimed.retain(|p| p.owner != unit.name);
    unclaimed.extend(replayed.pending);
    true
}

/// The name of the mod added last.
fn name_of_new(mods: &[ModUnit]) -> String {
    mods.last().map(|m| m.name.clone()).unwrap_or_default()
}

/// `[quest] ` before a text about a game's mod that names no file of
/// it (a single mod's texts need none).
fn mod_tag(unit: &ModUnit) -> String {
    if unit.label.is_empty() {
        String::new()
    } else {
        format!("[{}] ", unit.name)
    }
}

impl Drop for Game {
    fn drop(&mut self) {
        // Scripts first, while the hub they hold is whole.
        for unit in &mut self.mods {
            unit.unload(&self.ctx);
        }
    }
}
