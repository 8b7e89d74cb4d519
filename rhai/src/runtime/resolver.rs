//! `import` inside the mod folder only: the module resolver the sandboxed
//! engine installs when a script has a mod folder.

use std::path::PathBuf;

use rhai::module_resolvers::FileModuleResolver;
use rhai::{Dynamic, Engine, EvalAltResult, Module, ModuleResolver, Position};

type SharedModule = rhai::Shared<Module>;

/// Resolves `import "name"` to `name.rhai` in the mod folder, and nothing
/// else: no absolute paths, no `..`, no other characters than letters,
/// digits, `_`, `-` and `/`.
pub(crate) struct ModDirResolver {
    inner: FileModuleResolver,
}

impl ModDirResolver {
    pub fn new(dir: PathBuf) -> Self {
        Self {
            inner: FileModuleResolver::new_with_path(dir),
        }
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

impl ModuleResolver for ModDirResolver {
    fn resolve(
        &self,
        engine: &Engine,
        _source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        if !safe_module_path(path) {
            // Not `ErrorModuleNotFound`: Rhai replaces that with its own text.
            return Err(Box::new(EvalAltResult::ErrorRuntime(
                Dynamic::from(format!(
                    "cannot import \"{path}\": only modules inside the mod folder can be imported"
                )),
                pos,
            )));
        }
        // Resolved against the mod folder, never the importing script's place.
        self.inner.resolve(engine, None, path, pos)
    }
}
