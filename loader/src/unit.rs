//! One mod as the loader runs it: its folder, its manifest, its runtimes
//! and the scripts they loaded, each on an object of its own.
//!
//! A script's object is what the mod registered and stored through.
//! Reloading a script swaps it in place on the same object (the runtime's
//! `reload`): its listeners and environment are the new version's, what it
//! stored on the object stays. Removing a script, or unloading the mod,
//! unloads it and destroys its object, with its listeners, its stored
//! messages and what it owns.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use gantry_host::ObjectId;
use gantry_host::face::{ModGrants, ScriptId, ScriptRuntime};
use gantry_host::files::FileError;
use gantry_host::manifest::Manifest;

use crate::context::Context;
use crate::engines::{self, EXTENSIONS};
use crate::event::Event;
use crate::watch::{Change, ManifestWatch, Watcher};

/// A loaded script: which object it lives on and the source it runs.
pub(crate) struct Loaded {
    /// Its name in errors and sites (`main.lua`, `mods/core/main.lua`).
    pub file: String,
    pub object: ObjectId,
    /// The runtime's id of the loaded script; `None` when its first load
    /// failed (nothing to reload in place: the next version starts anew).
    id: Option<ScriptId>,
    source: String,
}

/// One mod, loaded.
pub(crate) struct ModUnit {
    pub name: String,
    pub dir: PathBuf,
    /// What goes before a script's file name to name it from the game
    /// folder (`mods/core/`); empty for a single mod.
    pub label: String,
    pub manifest: Option<Manifest>,
    /// Its keys declared `persist = true` (and whether each is a once key).
    pub persisted: Vec<(String, bool)>,
    /// What its scripts may reach (`None`: everything), the game's policy
    /// applied.
    grants: Option<Rc<ModGrants>>,
    engines: Vec<Box<dyn ScriptRuntime>>,
    pub scripts: Vec<Loaded>,
    watcher: Watcher,
    manifest_watch: ManifestWatch,
    print: Rc<dyn Fn(&str)>,
}

impl ModUnit {
    pub fn new(
        name: String,
        dir: &Path,
        label: String,
        manifest: Option<Manifest>,
        grants: Option<Rc<ModGrants>>,
        print: Rc<dyn Fn(&str)>,
    ) -> Self {
        Self {
            grants,
            name,
            dir: dir.to_path_buf(),
            label,
            persisted: manifest
                .as_ref()
                .map(crate::saved::persisted)
                .unwrap_or_default(),
            manifest,
            engines: Vec::new(),
            scripts: Vec::new(),
            watcher: Watcher::new(dir, &EXTENSIONS),
            manifest_watch: ManifestWatch::new(dir),
            print,
        }
    }

    /// Says every error the mod's runtimes filed that no report carries.
    pub fn take_errors(&self, ctx: &Context) {
        let errors: Vec<String> = self
            .engines
            .iter()
            .flat_map(|e| e.take_errors())
            .map(|e| e.to_string())
            .collect();
        for error in errors {
            ctx.error(&error);
        }
    }

    fn end_step(&self, ctx: &Context) {
        self.take_errors(ctx);
        ctx.say(Event::StepEnd);
    }

    /// The runtime for `file`'s language, started on first use.
    fn engine_for(&mut self, ctx: &Context, file: &str) -> Option<&dyn ScriptRuntime> {
        let extension = Path::new(file).extension()?.to_str()?;
        let at = match self.engines.iter().position(|e| e.extension() == extension) {
            Some(at) => at,
            None => {
                let started = engines::start(
                    extension,
                    &ctx.hub,
                    &self.dir,
                    &ctx.lua,
                    &ctx.rhai,
                    &self.print,
                    &ctx.interrupters,
                );
                match started {
                    Ok(engine) => self.engines.push(engine),
                    Err(e) => {
                        ctx.error(&format!("{}{file}: {e}", self.label));
                        return None;
                    }
                }
                self.engines.len() - 1
            }
        };
        Some(self.engines[at].as_ref())
    }

    /// Loads `source` as `file` on a fresh object: the object, and the
    /// script's id if it loaded.
    fn load(
        &mut self,
        ctx: &Context,
        file: &str,
        source: &str,
    ) -> Option<(ObjectId, Option<ScriptId>)> {
        let shown = format!("{}{file}", self.label);
        let object = match ctx.hub.spawn(ctx.world) {
            Ok(object) => object,
            Err(e) => {
                ctx.error(&format!("{shown}: {e}"));
                return None;
            }
        };
        let grants = self.grants.clone();
        let result = self
            .engine_for(ctx, file)?
            .load_granted(&shown, source, object, grants);
        if let Err(error) = &result {
            ctx.error(&error.to_string());
        }
        self.end_step(ctx);
        Some((object, result.ok()))
    }

    /// First load of a script.
    fn add(&mut self, ctx: &Context, file: &str, source: String) {
        if let Some((object, id)) = self.load(ctx, file, &source) {
            self.scripts.push(Loaded {
                file: format!("{}{file}", self.label),
                object,
                id,
                source,
            });
        }
    }

    /// Loads every script of the mod, in file name order; stops early
    /// when `stop` says so. A script that cannot be read (a name or text
    /// that is not UTF-8, a special file, a link out of the folder) is an
    /// error like one that does not compile: said, and the others run.
    pub fn load_all(&mut self, ctx: &Context, stop: &dyn Fn() -> bool) {
        let changes = match self.watcher.scan() {
            Ok(changes) => changes,
            Err(e) => {
                ctx.error(&format!("reading {}: {e}", self.shown_dir()));
                return;
            }
        };
        for change in changes {
            if stop() {
                break;
            }
            match change {
                Change::Changed { file, source } => self.add(ctx, &file, source),
                Change::Unreadable { error, .. } => self.unreadable_error(ctx, &error),
                Change::Removed { .. } => {}
            }
        }
    }

    fn shown_dir(&self) -> String {
        if self.label.is_empty() {
            self.dir.display().to_string()
        } else {
            self.label.trim_end_matches('/').to_owned()
        }
    }

    fn unreadable_error(&self, ctx: &Context, error: &FileError) {
        ctx.error(&format!("{}{error}", self.label));
    }

    /// Reloads what changed on disk: the manifest first (a script reloaded
    /// with it is held to it), then each changed script.
    pub fn poll(&mut self, ctx: &Context) {
        if let Some(read) = self.manifest_watch.poll() {
            self.reload_manifest(ctx, read);
        }
        for change in self.watcher.poll() {
            match change {
                Change::Changed { file, source } => self.reload(ctx, &file, source),
                Change::Removed { file } => self.remove(ctx, &file),
                Change::Unreadable { file, error } => self.unreadable(ctx, &file, &error),
            }
        }
    }

    /// Replaces a running script with a new version, in place: the same
    /// object, so what it stored there survives, and the runtime swaps the
    /// script's listeners and environment. A version that does not compile
    /// or whose top level fails is reported and the old one keeps running
    /// untouched. A script whose first load failed has nothing to keep: its
    /// object goes and the new version starts on a fresh one.
    fn reload(&mut self, ctx: &Context, file: &str, source: String) {
        let shown = format!("{}{file}", self.label);
        let Some(at) = self.scripts.iter().position(|s| s.file == shown) else {
            self.add(ctx, file, source);
            return;
        };
        let Some(id) = self.scripts[at].id else {
            let old = self.scripts.remove(at);
            ctx.say(Event::Progress(&format!("[reloading {shown}]")));
            let _ = ctx.hub.destroy(old.object);
            self.add(ctx, file, source);
            return;
        };
        let Some(engine) = self.engine_for(ctx, file) else {
            return;
        };
        ctx.say(Event::Progress(&format!("[reloading {shown}]")));
        let reloaded = engine.reload(id, &source);
        self.end_step(ctx);
        match reloaded {
            Ok(()) => self.scripts[at].source = source,
            Err(error) => ctx.error(&format!("{error} (the previous version keeps running)")),
        }
    }

    /// A new version of a script that cannot be read: said, and the
    /// previous version (if any) keeps running.
    fn unreadable(&mut self, ctx: &Context, file: &str, error: &FileError) {
        let shown = format!("{}{file}", self.label);
        if self.scripts.iter().any(|s| s.file == shown) {
            ctx.error(&format!(
                "{}{error}; the previous version keeps running",
                self.label
            ));
        } else {
            self.unreadable_error(ctx, error);
        }
    }

    /// A script's file is gone: so is the script.
    fn remove(&mut self, ctx: &Context, file: &str) {
        let shown = format!("{}{file}", self.label);
        if let Some(at) = self.scripts.iter().position(|s| s.file == shown) {
            let old = self.scripts.remove(at);
            self.forget(ctx, &old);
            ctx.say(Event::Progress(&format!("[unloaded {shown}]")));
        }
    }

    /// Removes everything the mod registered or stored: every script's
    /// object goes, with its listeners and stored messages.
    pub fn unload(&mut self, ctx: &Context) {
        for script in std::mem::take(&mut self.scripts) {
            self.forget(ctx, &script);
        }
        self.engines.clear();
    }

    /// Unloads a script (its environment goes) and destroys its object
    /// (which existed for it alone), with what was stored on it.
    fn forget(&mut self, ctx: &Context, script: &Loaded) {
        if let Some(id) = script.id
            && let Some(engine) = self.engine_for(ctx, &script.file)
        {
            engine.unload(id);
        }
        let _ = ctx.hub.destroy(script.object);
    }

    /// Declares a `mod.toml` read again while watching, its keys over the
    /// table as at the start. One that cannot be used is said, every
    /// finding at its line, and the declarations already made stay; so do
    /// those of a manifest removed: a declaration is not taken back while
    /// the run lasts.
    fn reload_manifest(
        &mut self,
        ctx: &Context,
        read: Result<Option<Manifest>, gantry_host::manifest::ManifestErrors>,
    ) {
        match read {
            Ok(Some(mut manifest)) => {
                manifest.file = format!("{}{}", self.label, manifest.file);
                ctx.say(Event::Progress(&format!("[reloading {}]", manifest.file)));
                if let Err(e) = manifest.declare_on(&ctx.hub) {
                    ctx.error(&format!("declaring the keys of {}: {e}", manifest.file));
                }
                self.manifest = Some(manifest);
            }
            Ok(None) => ctx.say(Event::Note(&format!(
                "{}{} was removed; what it declared stays until the run ends",
                self.label,
                gantry_host::manifest::MANIFEST_FILE
            ))),
            Err(errors) => {
                for text in crate::manifest_findings(&errors, &self.label) {
                    ctx.error(&text);
                }
                ctx.say(Event::Note(&format!(
                    "{}{} has {} error(s); the previous declarations stay",
                    self.label,
                    errors.file,
                    errors.len()
                )));
            }
        }
    }
}
