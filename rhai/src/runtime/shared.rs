//! What every script of one runtime shares: the hub, the engine, the stack
//! of scripts running now, the limits of the running call and the output
//! (print and errors).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gantry_host::face::call::Values;
use gantry_host::face::{ApiError, KeyRef, Registrations, ScriptOutput, SiteBook};
use gantry_host::{Hub, Value};
use rhai::{AST, Dynamic, Engine, EvalAltResult, GlobalRuntimeState, Position, Scope};
use std::collections::HashSet;

use super::RhaiOptions;
use super::convert::to_value;
use super::error::ScriptError;
use super::stack::ScriptStack;
use super::watchdog::{Clock, Stop};

/// How many Rhai calls may nest through the hub (a handler sending to a
/// handler sending ...) before the next one fails instead of running.
pub const MAX_NESTING: u32 = 32;

/// Where `print` goes.
pub(crate) type PrintSink = gantry_host::face::PrintSink;

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
    /// Sites already recorded by generic calls of this script.
    pub recorded: SiteBook,
    /// What the script registered, for unloading it.
    pub registered: Rc<Registrations>,
    /// Counts the script among the runtime's live environments (read
    /// only by its drop).
    pub _alive: Alive,
    /// The grants of the script's mod, as the host gave them at load;
    /// `None`: it may use everything.
    pub grants: Option<Rc<gantry_host::face::ModGrants>>,
}

/// One count of a live script environment (its AST, top-level variables
/// and closures), given back when the script is dropped: how a host sees
/// that unloading freed it.
pub(crate) struct Alive(Rc<Cell<usize>>);

impl Alive {
    pub fn new(count: &Rc<Cell<usize>>) -> Self {
        count.set(count.get() + 1);
        Self(count.clone())
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

impl Script {
    /// The global state [`Script::global`] is made from.
    pub fn global_for(engine: &Engine, ast: &AST) -> GlobalRuntimeState {
        let mut global = engine.new_global_runtime_state();
        global.lib.push(ast.shared_lib().clone());
        global
    }
}

/// The bounds of the running call, read by the engine's progress callback:
/// its operation limit and count, and the clock of its time limit.
///
/// Operations are counted here, once per progress callback, rather than
/// read from Rhai's count: Rhai runs a callback a built-in calls (a `sort`
/// comparator, a `map` function) on a copy of the caller's state and drops
/// its count afterwards, so by Rhai's count a loop of `map`s over a large
/// array never spends its budget.
///
/// A spent budget stays spent: the count only grows and the clock's signal
/// stays raised until the outermost call ends, so once a call was stopped,
/// every later operation of it stops again — after a built-in that ignores
/// the error (`sort` ignores its comparator's), in a `catch` block, in any
/// code the call still reaches.
#[derive(Debug)]
pub(crate) struct Limits {
    /// The operation limit in force for the running call (0: none).
    pub current: Cell<u64>,
    /// Operations the running call has run so far.
    pub ops: Cell<u64>,
    pub per_call: Cell<u64>,
    pub top_level: Cell<u64>,
    pub clock: Clock,
    /// The stack outermost calls run on (see `stack`).
    pub stack: ScriptStack,
    /// How deep a value a closure keeps between calls may nest (see
    /// `depth`): the nesting the size limits allow, which the stack is
    /// sized for.
    pub depth: usize,
    /// [`RhaiOptions::operation_counter`].
    pub counter: Option<std::rc::Rc<Cell<u64>>>,
}

impl Limits {
    pub fn new(options: &RhaiOptions) -> std::io::Result<Self> {
        Ok(Self {
            current: Cell::new(0),
            ops: Cell::new(0),
            // Zero is the clock's and the counters' "unlimited".
            per_call: Cell::new(options.budget.unwrap_or(0)),
            top_level: Cell::new(options.top_level_budget.unwrap_or(0)),
            clock: Clock::new(options.time_limit.unwrap_or_default())?,
            stack: ScriptStack::new(options),
            depth: super::stack::deepest(options),
            counter: options.operation_counter.clone(),
        })
    }

    /// The engine's progress callback: counts one operation and says why
    /// the running call must stop, if it must.
    #[inline]
    pub fn progress(&self) -> Option<Dynamic> {
        self.ops.set(self.ops.get() + 1);
        if let Some(counter) = &self.counter {
            counter.set(counter.get() + 1);
        }
        if self.within() {
            return None;
        }
        self.stopped().map(Dynamic::from)
    }

    /// Is the running call within its bounds? (No signal raised, no more
    /// operations than its limit.)
    #[inline]
    fn within(&self) -> bool {
        let limit = self.current.get();
        (limit == 0 || self.ops.get() <= limit) && !self.clock.signalled()
    }

    /// Why the running call is stopped: its operations are spent, its
    /// outermost call's time is up, or the host interrupted.
    #[cold]
    pub fn stopped(&self) -> Option<String> {
        let limit = self.current.get();
        if limit > 0 && self.ops.get() > limit {
            let what = if limit == self.top_level.get() && limit != self.per_call.get() {
                "top level"
            } else {
                "call"
            };
            return Some(format!(
                "operation limit exceeded: more than {limit} operations in one {what}"
            ));
        }
        self.clock.stop().map(|stop| match stop {
            Stop::TimeUp(limit) => {
                format!("time limit exceeded: the call ran longer than {limit:?}")
            }
            Stop::Interrupted => "interrupted: the host stopped the script".to_owned(),
            Stop::Frame(text) => text,
        })
    }
}

pub(crate) struct Shared {
    pub hub: Hub,
    pub engine: RefCell<Engine>,
    /// The scripts whose code runs now, innermost last: API functions act
    /// for the innermost (its object is the default owner, its file names
    /// the call site).
    stack: RefCell<Vec<Rc<Script>>>,
    pub limits: Rc<Limits>,
    /// Where `print` goes, and the errors no hub report carries.
    pub output: ScriptOutput,
    /// How many script environments are alive (see [`Alive`]).
    pub alive: Rc<Cell<usize>>,
    pub rewrite: Cell<bool>,
    /// Baked function names already registered on the engine.
    pub baked: RefCell<HashSet<String>>,
    /// The plain message listeners a baked send's lane may call.
    pub lane: super::lane::Listeners,
}

impl Shared {
    pub fn new(
        hub: Hub,
        engine: Engine,
        limits: Rc<Limits>,
        output: ScriptOutput,
        rewrite: bool,
    ) -> Self {
        Self {
            hub,
            engine: RefCell::new(engine),
            stack: RefCell::new(Vec::new()),
            limits,
            output,
            alive: Rc::default(),
            rewrite: Cell::new(rewrite),
            baked: RefCell::new(HashSet::new()),
            lane: Default::default(),
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

    /// Runs `f` as `script`'s code under `limit` operations, counted from
    /// zero, and — when no script code runs yet — under the time limit; the
    /// previous script, limit and count come back afterwards, even on error.
    ///
    /// A call stopped by a limit fails with the limit's error even when it
    /// returned normally: a built-in may ignore the error of the callback
    /// it ran (`sort` ignores its comparator's) and the call may have no
    /// operation left after it to stop again.
    pub fn running<T>(
        &self,
        script: &Rc<Script>,
        limit: u64,
        f: impl FnOnce() -> Result<T, Box<EvalAltResult>>,
    ) -> Result<T, Box<EvalAltResult>> {
        struct Exit<'a> {
            shared: &'a Shared,
            limit: u64,
            ops: u64,
            outermost: bool,
        }
        impl Drop for Exit<'_> {
            #[inline]
            fn drop(&mut self) {
                let limits = &self.shared.limits;
                self.shared.stack.borrow_mut().pop();
                limits.current.set(self.limit);
                limits.ops.set(self.ops);
                if self.outermost {
                    limits.clock.end();
                }
            }
        }
        let outermost = self.stack.borrow().is_empty();
        if outermost {
            self.limits.clock.begin();
        }
        let _exit = Exit {
            shared: self,
            limit: self.limits.current.replace(limit),
            ops: self.limits.ops.replace(0),
            outermost,
        };
        self.stack.borrow_mut().push(script.clone());
        let result = if outermost {
            let f = || f().map_err(super::error::without_thrown_values);
            self.limits.stack.run(f).unwrap_or_else(|e| {
                Err(Box::new(EvalAltResult::ErrorSystem(
                    "cannot reserve the script stack".into(),
                    Box::new(e),
                )))
            })?
        } else {
            f()?
        };
        if self.limits.within() {
            return Ok(result);
        }
        match self.limits.stopped() {
            None => Ok(result),
            Some(why) => Err(Box::new(EvalAltResult::ErrorTerminated(
                why.into(),
                Position::NONE,
            ))),
        }
    }

    /// Files an error no hub report carries (top levels, replies): the
    /// host hears it through `on_error` and `take_errors`.
    pub fn report(&self, error: ScriptError) {
        self.output.report(error);
    }

    /// Tells `on_error` about a failing handler. Not filed for
    /// `take_errors`: the hub reports it (`ListenerFailed`), so a host
    /// reading both sees it once.
    pub fn notify(&self, error: &ScriptError) {
        self.output.errors.notify(error);
    }

    /// Converts message arguments without the signature: a map without
    /// `__struct` goes as a plain record, which the hub names when it
    /// checks the send (one rule for both languages).
    ///
    /// A plain loop rather than a `collect` into `Result`: every send
    /// converts here, and the collect grew the small vector an element at
    /// a time behind an adapter (some 270 instructions for one integer).
    pub fn values_for(&self, key: &KeyRef, args: &[Dynamic]) -> Result<Values, ApiError> {
        let table = self.hub.table();
        let mut values = Values::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match to_value(a, None, &table.structs) {
                Ok(value) => values.push(value),
                Err(why) => {
                    return Err(ApiError::BadValue {
                        key: key.text.clone(),
                        position: i + 1,
                        why,
                    });
                }
            }
        }
        Ok(values)
    }

    /// Converts the values of `rsp.Response(...)` by the response types.
    pub fn response_values(&self, key: &str, args: &[Dynamic]) -> Result<Vec<Value>, String> {
        let types = gantry_host::face::response_types(&self.hub, key);
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
