//! The sandboxed engine: the standard packages only (Rhai has no file or
//! process access of its own; `eval` is disabled, and the built-ins that
//! could block or run long in one call are replaced: see `bounded`),
//! `import` only of modules inside the mod folder, and the limits of
//! [`RhaiOptions`].
//!
//! Operation limits are per call: every top level and every handler call
//! counts its operations from zero, and the progress callback stops the one
//! that passes the limit in force ([`Limits::progress`]). The progress
//! callback also stops a call whose time is up or that the host
//! interrupted (see `watchdog`).

use std::cell::RefCell;
use std::rc::Rc;

use rhai::Engine;
use rhai::packages::{Package, StandardPackage};

use super::RhaiOptions;
use super::bounded;
use super::nested;
use super::resolver::ModDirResolver;
use super::shared::{Limits, PrintSink};

/// A fresh engine with the sandbox and limits set (API not installed).
pub(crate) fn engine(
    options: &RhaiOptions,
    limits: Rc<Limits>,
    print: Rc<RefCell<PrintSink>>,
) -> Engine {
    let mut engine = Engine::new_raw();
    engine.register_global_module(StandardPackage::new().as_shared_module());
    engine.disable_symbol("eval");
    engine.set_max_call_levels(options.max_call_depth);
    engine.set_max_string_size(options.max_string_size);
    engine.set_max_array_size(options.max_array_size);
    engine.set_max_map_size(options.max_map_size);
    engine.on_progress(move |_| limits.progress());
    bounded::install(&mut engine);
    nested::install(&mut engine);
    let out = print.clone();
    engine.on_print(move |text| (out.borrow())(text));
    engine.on_debug(move |text, _, _| (print.borrow())(text));
    match &options.mod_dir {
        Some(dir) => {
            engine.set_module_resolver(ModDirResolver::new(dir.clone()));
        }
        None => {
            engine.set_module_resolver(rhai::module_resolvers::DummyModuleResolver::new());
        }
    }
    engine
}
