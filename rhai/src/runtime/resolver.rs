//! `import` inside the mod folder only: the module resolver the sandboxed
//! engine installs when a script has a mod folder.
//!
//! Rhai's own file resolver reads the file itself, following a symbolic
//! link anywhere, reading a device such as `/dev/zero` until memory runs
//! out and blocking forever on a FIFO. This one reads the module as every
//! file of a mod is read ([`gantry_host::files`]) and compiles it itself.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gantry_host::files::{self, FileError};
use rhai::{Dynamic, Engine, EvalAltResult, Module, ModuleResolver, Position, Scope};

type SharedModule = rhai::Shared<Module>;

/// The extension an imported name gets: `import "lib/util"` is
/// `lib/util.rhai` in the mod folder.
const EXTENSION: &str = "rhai";

/// Resolves `import "name"` to `name.rhai` in the mod folder, and nothing
/// else: no absolute paths, no `..`, no other characters than letters,
/// digits, `_`, `-` and `/`; after symbolic links, the file must still be
/// inside the folder, a regular file of at most
/// [`files::MAX_SCRIPT_BYTES`], in UTF-8.
pub(crate) struct ModDirResolver {
    dir: PathBuf,
    /// A module is evaluated once per runtime, as Rhai's file resolver did:
    /// every script importing it shares its one instance.
    cache: RefCell<HashMap<String, SharedModule>>,
}

impl ModDirResolver {
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            cache: RefCell::new(HashMap::new()),
        }
    }

    /// The source of module `name`, read safely.
    fn read(&self, name: &str) -> Result<String, FileError> {
        let mut relative = PathBuf::from(name);
        relative.set_extension(EXTENSION);
        files::read_text_in(&self.dir, Path::new(&relative), files::MAX_SCRIPT_BYTES)
    }
}

/// Is `path` a module name inside the folder?
pub(crate) fn safe_module_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && path.split('/').all(|segment| {
            !segment.is_empty()
                && segment != ".."
                && segment != "."
                && segment
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// An import error in Gantry's words (not `ErrorModuleNotFound`, whose
/// text Rhai replaces with its own).
fn refused(path: &str, why: impl std::fmt::Display, pos: Position) -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorRuntime(
        Dynamic::from(format!("cannot import \"{path}\": {why}")),
        pos,
    ))
}

impl ModuleResolver for ModDirResolver {
    fn resolve(
        &self,
        engine: &Engine,
        _source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        if !safe_module_path(path) {
            return Err(refused(
                path,
                "only modules inside the mod folder can be imported",
                pos,
            ));
        }
        if let Some(module) = self.cache.borrow().get(path) {
            return Ok(module.clone());
        }
        // Resolved against the mod folder, never the importing script's place.
        let source = self.read(path).map_err(|e| match e {
            FileError::NotFound { .. } => {
                Box::new(EvalAltResult::ErrorModuleNotFound(path.to_owned(), pos))
            }
            e => refused(path, e, pos),
        })?;
        let in_module = |err: Box<EvalAltResult>| {
            Box::new(EvalAltResult::ErrorInModule(path.to_owned(), err, pos))
        };
        let mut ast = engine.compile(&source).map_err(|e| in_module(e.into()))?;
        ast.set_source(path);
        let module: SharedModule = Module::eval_ast_as_new(Scope::new(), &ast, engine)
            .map_err(in_module)?
            .into();
        self.cache
            .borrow_mut()
            .insert(path.to_owned(), module.clone());
        Ok(module)
    }
}
