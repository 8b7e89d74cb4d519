//! Each mod's script runtimes: one per language the mod uses, started
//! when its first script of that language loads, resolving `require` and
//! `import` inside the mod's own folder and holding the mod's memory
//! apart from the others'.

use std::path::Path;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use gantry_host::Hub;
use gantry_host::face::ScriptRuntime;
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use gantry_rhai::{RhaiOptions, RhaiRuntime};

/// The file extensions of the languages the loader runs.
pub const EXTENSIONS: [&str; 2] = ["lua", "rhai"];

/// Stops the script call running in any runtime, from another thread
/// (Ctrl-C, a game's own watchdog).
pub type Interrupt = Arc<dyn Fn() + Send + Sync>;

/// Every runtime's interrupter, those started later included.
#[derive(Clone, Default)]
pub(crate) struct Interrupters(Arc<Mutex<Vec<Interrupt>>>);

impl Interrupters {
    fn add(&self, interrupt: Interrupt) {
        if let Ok(mut all) = self.0.lock() {
            all.push(interrupt);
        }
    }

    /// One function interrupting them all.
    pub(crate) fn all(&self) -> Interrupt {
        let all = self.0.clone();
        Arc::new(move || {
            if let Ok(all) = all.lock() {
                for interrupt in all.iter() {
                    interrupt();
                }
            }
        })
    }
}

/// Starts the runtime for `extension` for the mod in `dir`.
pub(crate) fn start(
    extension: &str,
    hub: &Hub,
    dir: &Path,
    lua: &LuaOptions,
    rhai: &RhaiOptions,
    print: &Rc<dyn Fn(&str)>,
    interrupters: &Interrupters,
) -> Result<Box<dyn ScriptRuntime>, crate::LoaderError> {
    let engine_error =
        |language: &'static str, error: String| crate::LoaderError::Engine { language, error };
    let (runtime, stop): (Box<dyn ScriptRuntime>, Interrupt) = match extension {
        "lua" => {
            let options = LuaOptions {
                mod_dir: Some(dir.to_path_buf()),
                ..lua.clone()
            };
            let runtime = LuaRuntime::new(hub.clone(), options)
                .map_err(|e| engine_error("Lua", e.to_string()))?;
            let stop = runtime.interrupter();
            (Box::new(runtime), Arc::new(move || stop.interrupt()))
        }
        _ => {
            let options = RhaiOptions {
                mod_dir: Some(dir.to_path_buf()),
                ..rhai.clone()
            };
            let runtime = RhaiRuntime::new(hub.clone(), options)
                .map_err(|e| engine_error("Rhai", e.to_string()))?;
            let stop = runtime.interrupter();
            (Box::new(runtime), Arc::new(move || stop.interrupt()))
        }
    };
    let print = print.clone();
    runtime
        .output()
        .set_print(Rc::new(move |line: &str| print(line)));
    interrupters.add(stop);
    Ok(runtime)
}
