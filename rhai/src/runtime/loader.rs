//! Loading a script: bake its literal-key calls (see [`crate::syntax::rewrite()`]),
//! register the per-key functions the bakes need, compile, record the baked
//! call sites once, and run the top level under the top-level limit.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::{ModGrants, Registrations};
use gantry_host::{Language, ObjectId, Role, Site};
use rhai::{Module, Position, Scope};

use super::error::{self, RhaiError};
use super::handles::ObjectHandle;
use super::register::bake;
use super::shared::{Alive, Script, Shared};
use crate::syntax;

/// The name of the constant holding the script's own object.
pub const SELF_CONSTANT: &str = "SELF";

pub(crate) fn load(
    shared: &Rc<Shared>,
    file: &str,
    source: &str,
    object: ObjectId,
    grants: Option<Rc<ModGrants>>,
    registered: Rc<Registrations>,
) -> Result<Rc<Script>, RhaiError> {
    let world = shared
        .hub
        .world_of(object)
        .ok_or_else(|| RhaiError::Setup(format!("{file}: {object} does not exist")))?;
    // This load records the file's sites again: the old ones go.
    shared.hub.restart_sites(Language::Rhai, file, source);
    let rewrite = shared.rewrite.get().then(|| syntax::rewrite(source));
    let text = rewrite.as_ref().map_or(source, |r| r.source.as_str());
    let bakes = rewrite.as_ref().map_or(&[][..], |r| r.bakes.as_slice());
    {
        let mut engine = shared.engine.try_borrow_mut().map_err(|_| {
            RhaiError::Setup(format!("{file}: cannot load a script while scripts run"))
        })?;
        let mut module = Module::new();
        let mut added = false;
        for b in bakes {
            added |= bake(&mut module, shared, b.function, &b.key)
                .map_err(|e| error::at(file, Position::NONE, format!("`{}`: {e}", b.key)))?;
        }
        if added {
            engine.register_global_module(module.into());
        }
    }
    let mut ast = shared
        .engine
        .borrow()
        .compile(text)
        .map_err(|e| error::from_parse(file, &e))?;
    ast.set_source(file);
    for b in bakes {
        // Listens record their site when they register; sends here.
        if b.function.role() == Some(Role::Send) {
            let line = b.site.start_pos.line + 1;
            shared
                .hub
                .record_site(&b.key, Site::new(file, line, Language::Rhai, Role::Send));
        }
        // A listener closure names the key's parameters where nothing
        // declares them, before or after the first send.
        if let Some(names) = &b.listener_params {
            shared
                .hub
                .suggest_param_names(&b.key, b.function.names_params(names));
        }
    }
    if bakes.is_empty() {
        // Unbaked (baking off, or nothing to bake): the listeners' names
        // come from the scanner, as baked ones from the bakes.
        for call in syntax::scan(source) {
            if let Some((key, names)) = call.named_params() {
                shared.hub.suggest_param_names(key, names);
            }
        }
    }
    let mut scope = Scope::new();
    scope.push_constant(SELF_CONSTANT, ObjectHandle(object));
    let engine = shared.engine.borrow();
    let script = Rc::new(Script {
        file: Rc::from(file),
        object,
        world,
        global: Script::global_for(&engine, &ast),
        ast,
        scope: RefCell::new(scope),
        recorded: Default::default(),
        grants,
        registered,
        _alive: Alive::new(&shared.alive),
    });
    let limit = shared.limits.top_level.get();
    let ran = shared.running(&script, limit, || {
        engine.run_ast_with_scope(&mut script.scope.borrow_mut(), &script.ast)
    });
    if let Err(e) = ran {
        let error = error::from_eval(file, &e);
        // What a failed top level left in its scope may nest as deep as the
        // size limits allow: it is dropped on the script stack, as every
        // value a script made is.
        drop(engine);
        let _ = shared.limits.stack.run(move || drop(script));
        return Err(error.into());
    }
    Ok(script)
}
