//! What every script of one runtime shares: the hub, the engine, the stack
//! of scripts running now, the operation limit in force and the error sink.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gantry_host::{Hub, Key, Role, Type, Value};
use rhai::{AST, Dynamic, Engine, GlobalRuntimeState, Scope};
use std::collections::HashSet;

use super::convert::{to_value, to_value_untyped};
use super::error::ScriptError;

/// How many Rhai calls may nest through the hub (a handler sending to a
/// handler sending ...) before the next one fails instead of running.
pub const MAX_NESTING: u32 = 32;

/// Where script errors go as they happen (the CLI prints them).
pub(crate) type ErrorSink = Rc<dyn Fn(&ScriptError)>;
/// Where `print` goes.
pub(crate) type PrintSink = Rc<dyn Fn(&str)>;

/// One loaded script: its file, object, compiled AST and top-level scope.
pub(crate) struct Script {
    pub file: Rc<str>,
    pub object: gantry_host::ObjectId,
    pub world: gantry_host::WorldId,
    pub ast: AST,
    pub scope: RefCell<Scope<'static>>,
    /// The global state a handler of this script is called in: a fresh
    /// engine state with the script's functions, made once instead of per
    /// call (Rhai copies it for each call, so every call still starts from
    /// zero operations).
    pub global: GlobalRuntimeState,
    /// (key, line, role) already recorded by generic calls of this script.
    pub recorded: RefCell<HashSet<(Key, u32, Role)>>,
}

impl Script {
    /// The global state [`Script::global`] is made from.
    pub fn global_for(engine: &Engine, ast: &AST) -> GlobalRuntimeState {
        let mut global = engine.new_global_runtime_state();
        global.lib.push(ast.shared_lib().clone());
        global
    }
}

/// The operation limits, read by the engine's progress callback.
#[derive(Default)]
pub(crate) struct Limits {
    /// The limit in force for the running call (0: none).
    pub current: Cell<u64>,
    pub per_call: Cell<u64>,
    pub top_level: Cell<u64>,
}

pub(crate) struct Shared {
    pub hub: Hub,
    pub engine: RefCell<Engine>,
    /// The scripts whose code runs now, innermost last: API functions act
    /// for the innermost (its object is the default owner, its file names
    /// the call site).
    stack: RefCell<Vec<Rc<Script>>>,
    pub limits: Rc<Limits>,
    errors: RefCell<Vec<ScriptError>>,
    on_error: RefCell<Option<ErrorSink>>,
    pub print: Rc<RefCell<PrintSink>>,
    pub rewrite: Cell<bool>,
    /// Baked function names already registered on the engine.
    pub baked: RefCell<HashSet<String>>,
}

impl Shared {
    pub fn new(
        hub: Hub,
        engine: Engine,
        limits: Rc<Limits>,
        print: Rc<RefCell<PrintSink>>,
        rewrite: bool,
    ) -> Self {
        Self {
            hub,
            engine: RefCell::new(engine),
            stack: RefCell::new(Vec::new()),
            limits,
            errors: RefCell::new(Vec::new()),
            on_error: RefCell::new(None),
            print,
            rewrite: Cell::new(rewrite),
            baked: RefCell::new(HashSet::new()),
        }
    }

    /// The innermost running script.
    pub fn current(&self) -> Option<Rc<Script>> {
        self.stack.borrow().last().cloned()
    }

    /// Is the host already [`MAX_NESTING`] script calls deep?
    pub fn too_deep(&self) -> bool {
        self.stack.borrow().len() as u32 >= MAX_NESTING
    }

    /// Runs `f` as `script`'s code under `limit` operations; the previous
    /// script and limit come back afterwards, even on error.
    pub fn running<R>(&self, script: &Rc<Script>, limit: u64, f: impl FnOnce() -> R) -> R {
        struct Exit<'a>(&'a Shared, u64);
        impl Drop for Exit<'_> {
            fn drop(&mut self) {
                self.0.stack.borrow_mut().pop();
                self.0.limits.current.set(self.1);
            }
        }
        let previous = self.limits.current.replace(limit);
        self.stack.borrow_mut().push(script.clone());
        let _exit = Exit(self, previous);
        f()
    }

    /// Files an error no hub report carries (top levels, replies): the
    /// host hears it through `on_error` and `take_errors`.
    pub fn report(&self, error: ScriptError) {
        tracing::warn!(file = %error.file, "{error}");
        self.notify(&error);
        self.errors.borrow_mut().push(error);
    }

    /// Tells `on_error` about a failing handler. Not filed for
    /// `take_errors`: the hub reports it (`ListenerFailed`), so a host
    /// reading both sees it once.
    pub fn notify(&self, error: &ScriptError) {
        let hook = self.on_error.borrow().clone();
        if let Some(hook) = hook {
            hook(error);
        }
    }

    pub fn set_on_error(&self, f: ErrorSink) {
        *self.on_error.borrow_mut() = Some(f);
    }

    pub fn take_errors(&self) -> Vec<ScriptError> {
        std::mem::take(&mut self.errors.borrow_mut())
    }

    /// The recorded parameter types of a key.
    pub fn param_types(&self, key: &str) -> Vec<Type> {
        self.hub
            .table()
            .get(key)
            .map(|e| e.param_types())
            .unwrap_or_default()
    }

    /// Does the key carry a table (its single parameter is an array of
    /// structs)? Known once it was declared, stored or first used.
    pub fn is_table_key(&self, key: &str) -> bool {
        self.hub
            .table()
            .get(key)
            .is_some_and(|e| match e.params.as_slice() {
                [param] => param.ty.struct_array_element().is_some(),
                _ => false,
            })
    }

    /// Converts message arguments. A map without `__struct`, at any depth,
    /// is the struct the key's signature declares at its place; the
    /// signature is looked up only for an argument holding such a map.
    pub fn values_for<C: FromIterator<Value>>(
        &self,
        key: &str,
        args: &[Dynamic],
    ) -> Result<C, String> {
        let table = self.hub.table();
        args.iter()
            .enumerate()
            .map(|(i, a)| {
                to_value_untyped(a, &table.structs)
                    .unwrap_or_else(|| {
                        let expected = table.get(key).and_then(|e| e.params.get(i)).map(|p| &p.ty);
                        to_value(a, expected, &table.structs)
                    })
                    .map_err(|e| format!("argument {}: {e}", i + 1))
            })
            .collect()
    }

    /// Converts the values of `rsp.Response(...)` by the response types.
    pub fn response_values(&self, key: &str, args: &[Dynamic]) -> Result<Vec<Value>, String> {
        let types: Vec<Type> = self
            .hub
            .table()
            .get(key)
            .and_then(|e| e.response.as_ref())
            .map(|r| r.iter().map(|p| p.ty.clone()).collect())
            .unwrap_or_default();
        let table = self.hub.table();
        args.iter()
            .enumerate()
            .map(|(i, a)| {
                to_value(a, types.get(i), &table.structs)
                    .map_err(|e| format!("response of `{key}` value {}: {e}", i + 1))
            })
            .collect()
    }
}
