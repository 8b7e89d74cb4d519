//! Rhai functions as hub listeners: message listeners (a responder after
//! the parameters for requests), collection listeners (rows and whole
//! tables, with the update as a map), hook listeners, replies — each run as
//! its script's code under the per-call operation limit.

use std::rc::{Rc, Weak};

use gantry_host::collection::{RowFn, TableFn, TableView, Update};
use gantry_host::hook::HookCall;
use gantry_host::listener::{HookFn, MessageFn};
use gantry_host::{ListenerError, Message, Type, Value};
use rhai::{AST, Array, Dynamic, FnPtr, INT, Map, NativeCallContext};

use super::api::Args;
use gantry_host::face::options::Delivery;
use gantry_host::face::{MAX_DEPTH, STRUCT_FIELD, takes_too_many};

use super::convert::{from_value, to_value};
use super::depth;
use super::error::{self, ScriptError};
use super::handles::{HookCtx, ResponderHandle};
use super::shared::{MAX_NESTING, Script, Shared};
use super::stack::ScriptStack;

thread_local! {
    /// The Rhai call depth of the innermost API function running on this
    /// thread deeper than [`FREE_DEPTH`] (0 outside any; API calls no
    /// deeper leave it as it is, so the hot path pays one compare).
    static NATIVE_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks an API function running at a Rhai call depth, until dropped.
///
/// Rhai limits how deep one script's calls nest (`max_call_depth`), but a
/// handler the hub runs from inside an API call starts a new call, at depth
/// 0 — so with each handler sending what it listens to, the limit applied
/// per handler, times the hub's nesting limit: 32 × 64 recursing calls
/// overflowed the native stack and aborted the process. A handler run
/// from inside an API call deeper than [`FREE_DEPTH`] now goes on from
/// that call's depth, so the native stack holds at most
/// `FREE_DEPTH` × the hub's nesting limit + `max_call_depth` Rhai calls.
/// From a shallower call it starts afresh, as before: going on would cost
/// a copy of the script's global state per delivery (the Rhai → Rhai bus).
pub(crate) struct CallDepth(usize);

/// The Rhai call depth an API call may be at and still start the handlers
/// it runs at depth 0.
pub(crate) const FREE_DEPTH: usize = 8;

impl CallDepth {
    pub(crate) fn enter(depth: usize) -> CallDepth {
        CallDepth(NATIVE_DEPTH.with(|d| d.replace(depth)))
    }
}

impl Drop for CallDepth {
    fn drop(&mut self) {
        NATIVE_DEPTH.with(|d| d.set(self.0));
    }
}

/// Calls `f` of `script` with `args` under the per-call limit.
pub(crate) fn call_fn(
    shared: &Shared,
    script: &Rc<Script>,
    f: &FnPtr,
    mut args: impl AsMut<[Dynamic]>,
) -> Result<Dynamic, ScriptError> {
    if shared.too_deep() {
        return Err(error::at(
            &script.file,
            rhai::Position::NONE,
            format!(
                "not called: Rhai handlers nested {MAX_NESTING} deep (a listener sending what it listens to?)"
            ),
        ));
    }
    let engine = shared.engine.try_borrow().map_err(|_| {
        error::at(
            &script.file,
            rhai::Position::NONE,
            "not called: the Rhai engine is being changed (a script loading inside a handler?)",
        )
    })?;
    let limit = shared.limits.per_call.get();
    shared
        .running(script, limit, || {
            // What `FnPtr::call` does, less making a global state per call
            // (unless nested in an API call: see `CallDepth`).
            let depth = NATIVE_DEPTH.with(|d| d.get());
            let nested;
            let global = if depth <= FREE_DEPTH {
                &script.global
            } else {
                let mut global = script.global.clone();
                global.level = depth;
                nested = global;
                &nested
            };
            let context = NativeCallContext::new_with_all_fields(
                &engine,
                f.fn_name(),
                None,
                global,
                rhai::Position::NONE,
            );
            let result = f.call_raw(&context, None, args.as_mut())?;
            kept_within(f, shared.limits.depth)?;
            handed_out(result)
        })
        .map_err(|e| error::from_eval(&script.file, &e))
}

/// Clears a variable `f` captured that now nests deeper than `limit`
/// levels (see `depth`), dropping its value here, on the script stack, and
/// fails the call. A closure's captured variables are where a script keeps
/// values between calls that no size limit counts: a chain of closures
/// grown a little each call would otherwise grow without end.
fn kept_within(f: &FnPtr, limit: usize) -> Result<(), Box<rhai::EvalAltResult>> {
    for captured in f.iter_curry().filter(|x| x.is_shared()) {
        if depth::deeper_than(captured, limit) {
            let mut cell = captured.clone();
            if let Some(mut value) = cell.write_lock::<Dynamic>() {
                drop(std::mem::take(&mut *value));
            }
            return Err(Box::new(rhai::EvalAltResult::ErrorRuntime(
                format!(
                    "a variable this function captured nests deeper than {limit} levels \
                     (closures capturing closures?); it is cleared"
                )
                .into(),
                rhai::Position::NONE,
            )));
        }
    }
    Ok(())
}

/// `result`, unless it nests deeper than a value the host takes
/// ([`MAX_DEPTH`]): the host drops what it is handed on its own stack, where
/// Rhai's recursive drop of a deep value does not fit. Such a result is
/// dropped here and the call fails.
pub(crate) fn handed_out(result: Dynamic) -> Result<Dynamic, Box<rhai::EvalAltResult>> {
    if depth::deeper_than(&result, MAX_DEPTH) {
        return Err(Box::new(rhai::EvalAltResult::ErrorRuntime(
            format!("returned a value nested deeper than {MAX_DEPTH} levels").into(),
            rhai::Position::NONE,
        )));
    }
    Ok(result)
}

/// A failing handler: told to `on_error` and handed to the hub, which
/// reports it and goes on with the other listeners. An error
/// Rhai gives no position (an operation limit hit in a closure) names the
/// line the listener was registered at.
pub(crate) fn failed(shared: &Shared, mut error: ScriptError, listen_line: u32) -> ListenerError {
    if error.line.is_none() && listen_line > 0 {
        error.line = Some(listen_line);
        error
            .message
            .push_str(" (in the listener registered at this line)");
    }
    shared.notify(&error);
    ListenerError::new(error.to_string())
}

/// A Rhai function registered as a listener: what every callback form
/// needs to run it — the runtime (weakly: a listener does not keep it
/// alive), its script, and the line it was registered at for errors that
/// carry no position.
pub(crate) struct Handler {
    weak: Weak<Shared>,
    script: Rc<Script>,
    f: FnPtr,
    listen_line: u32,
    /// The parameter counts the script function declares (see
    /// [`declared_arities`]); empty when it is not the script's own.
    arities: Vec<usize>,
}

impl Handler {
    fn new(
        shared: &Rc<Shared>,
        script: &Rc<Script>,
        f: FnPtr,
        listen_line: u32,
    ) -> OnStack<Handler> {
        OnStack::new(
            Self {
                weak: Rc::downgrade(shared),
                arities: declared_arities(&script.ast, &f),
                script: script.clone(),
                f,
                listen_line,
            },
            shared.limits.stack,
        )
    }

    /// Calls the function with what `args` builds, or nothing once the
    /// runtime is gone. Returns the runtime with the result, for callers
    /// that read the result back.
    fn run(
        &self,
        args: impl FnOnce() -> Args,
    ) -> Result<Option<(Rc<Shared>, Dynamic)>, ListenerError> {
        let Some(shared) = self.weak.upgrade() else {
            return Ok(None);
        };
        let mut args = args();
        fit_args(&self.arities, &mut args);
        match call_fn(&shared, &self.script, &self.f, args) {
            Ok(result) => Ok(Some((shared, result))),
            Err(e) => Err(failed(&shared, e, self.listen_line)),
        }
    }
}

/// A plain message listener's handler, shared by its hub callback and the
/// runtime's lane (see `lane`), which calls it without the hub.
pub(crate) type MessageHandler = Rc<OnStack<Handler>>;

impl Handler {
    /// The fewest parameters the function's overloads declare (`None`: a
    /// native function pointer, which takes any number).
    pub(crate) fn fewest(&self) -> Option<usize> {
        self.arities.iter().copied().min()
    }

    /// How many of `carried` values a call passes (see [`fit_args`]).
    pub(crate) fn passes(&self, carried: usize) -> usize {
        fitted(&self.arities, carried)
    }

    /// Calls the function with `args` as a plain send delivers them (no
    /// key first, no responder), fitted already ([`Handler::passes`]);
    /// fails as the hub callback fails.
    pub(crate) fn call_plain(&self, shared: &Shared, args: Args) -> Result<(), ListenerError> {
        match call_fn(shared, &self.script, &self.f, args) {
            Ok(_) => Ok(()),
            Err(e) => Err(failed(shared, e, self.listen_line)),
        }
    }
}

/// A value holding what a script made, dropped on the script stack: what
/// a closure captured (and the script itself, once its runtime is gone)
/// may nest as deep as the runtime allows, and the hub drops a listener
/// wherever it unbinds it, on the host's stack. The stack is the thread's
/// (see `stack`), so it outlives the runtime.
pub(crate) struct OnStack<T> {
    value: Option<T>,
    stack: ScriptStack,
}

impl<T> OnStack<T> {
    pub(crate) fn new(value: T, stack: ScriptStack) -> Self {
        Self {
            value: Some(value),
            stack,
        }
    }
}

impl<T> std::ops::Deref for OnStack<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.as_ref().expect("taken only when dropped")
    }
}

impl<T> Drop for OnStack<T> {
    fn drop(&mut self) {
        let value = self.value.take();
        if let Err(e) = self.stack.run(move || drop(value)) {
            tracing::warn!("cannot reserve the script stack to drop a listener: {e}");
        }
    }
}

/// The hub callback of a Rhai message listener, with its handler.
pub(crate) fn message_callback(
    shared: &Rc<Shared>,
    script: &Rc<Script>,
    f: FnPtr,
    listen_line: u32,
    delivery: Delivery,
) -> (Rc<MessageFn>, MessageHandler) {
    let handler = Rc::new(Handler::new(shared, script, f, listen_line));
    let held = handler.clone();
    let with_key = delivery.key;
    // The arity rule, at the first call of a listener registered before its
    // key was known: the overload taking the fewest is the one called.
    let fewest = handler.arities.iter().copied().min();
    let key_first = usize::from(with_key);
    let callback = Rc::new(move |m: &Message<'_>| -> Result<(), ListenerError> {
        let carries = key_first + m.args.len() + usize::from(m.responder.is_some());
        if let Some(takes) = fewest.filter(|&takes| takes > carries) {
            return Err(ListenerError::new(takes_too_many(
                takes - key_first,
                &m.key_name(),
                m.args.len(),
                m.responder.is_some(),
            )));
        }
        handler
            .run(|| {
                let mut args: Args = Args::with_capacity(m.args.len() + 2);
                if with_key {
                    args.push(Dynamic::from(m.key_name().to_string()));
                }
                args.extend(m.args.iter().map(from_value));
                if let Some(responder) = m.responder {
                    if delivery.respond {
                        room_for_responder(&handler.arities, &mut args);
                    }
                    args.push(Dynamic::from(ResponderHandle {
                        responder: responder.clone(),
                        key: m.key_name(),
                    }));
                }
                args
            })
            .map(|_| ())
    });
    (callback, held)
}

/// Makes room for a responder in the last parameter of a listener that
/// said it responds: keeps the values before it of the overload with the
/// most parameters that still fits (`arities`, see [`declared_arities`]),
/// dropping the rest. A native function pointer takes every value.
fn room_for_responder(arities: &[usize], args: &mut Args) {
    let fits = arities
        .iter()
        .copied()
        .filter(|&n| n >= 1 && n <= args.len() + 1);
    if let Some(n) = fits.max() {
        args.truncate(n - 1);
    }
}

/// The hub callback of a Rhai hook listener: `fn(payload, ctx)`. The
/// payload is shared, so a listener's changes to a map payload are seen; a
/// listener that returns a value replaces the payload with it.
pub(crate) fn hook_callback(
    shared: &Rc<Shared>,
    script: &Rc<Script>,
    f: FnPtr,
    listen_line: u32,
) -> Rc<HookFn> {
    let handler = Handler::new(shared, script, f, listen_line);
    Rc::new(
        move |call: &mut HookCall<'_>| -> Result<(), ListenerError> {
            let payload = from_value(call.payload).into_shared();
            let ctx = HookCtx::default();
            let Some((shared, returned)) =
                handler.run(|| smallvec::smallvec![payload.clone(), Dynamic::from(ctx.clone())])?
            else {
                return Ok(());
            };
            let changed = if returned.is_unit() {
                payload.flatten_clone()
            } else {
                returned.flatten()
            };
            let expected = match &*call.payload {
                Value::Struct(s) => Some(Type::Struct(s.name.clone())),
                _ => None,
            };
            let changed = match (changed.is_map(), &expected) {
                (true, Some(Type::Struct(name))) => {
                    // Keep the struct's name even if the listener dropped it.
                    let mut map = changed.cast::<Map>();
                    map.entry(STRUCT_FIELD.into())
                        .or_insert_with(|| Dynamic::from(name.to_string()));
                    Dynamic::from_map(map)
                }
                _ => changed,
            };
            let converted = {
                let table = shared.hub.table();
                to_value(&changed, expected.as_ref(), &table.structs)
            };
            *call.payload = converted.map_err(|e| {
                failed(
                    &shared,
                    error::at(
                        &handler.script.file,
                        rhai::Position::NONE,
                        format!("hook payload: {e}"),
                    ),
                    handler.listen_line,
                )
            })?;
            if ctx.handled.get() {
                call.handled();
            }
            if ctx.cancelled.get() {
                call.cancel();
            }
            Ok(())
        },
    )
}

/// A listener may drop trailing parameters (the compatibility rule): drops the
/// trailing arguments a function declaring `arities` (see
/// [`declared_arities`]) does not take, when none of its overloads takes
/// them all, as a Lua function would ignore them (Rhai resolves a function
/// by its parameter count, so the rest must not be passed). A function
/// declaring more is left to fail: the message does not carry them.
pub(crate) fn fit_args(arities: &[usize], args: &mut Args) {
    args.truncate(fitted(arities, args.len()));
}

/// How many of `carried` values [`fit_args`] passes to a function
/// declaring `arities`.
fn fitted(arities: &[usize], carried: usize) -> usize {
    if arities.is_empty() || arities.contains(&carried) {
        return carried;
    }
    (arities.iter().copied())
        .filter(|&n| n < carried)
        .max()
        .unwrap_or(carried)
}

/// How many parameters the script function behind `f` declares, without
/// the values a closure captured (Rhai curries those in front). Every
/// overload of a named function counts; `None` when the function is not
/// the script's own (a native function pointer).
pub(crate) fn declared_arities(ast: &AST, f: &FnPtr) -> Vec<usize> {
    let curried = f.curry().len();
    ast.iter_functions()
        .filter(|m| m.name == f.fn_name())
        .filter_map(|m| m.params.len().checked_sub(curried))
        .collect()
}

/// The update a collection listener is told, as a Rhai map:
/// `#{ total, prev_total, ranges: [#{ index, count }, ...], full_reload }`
/// (no ranges: every row is to be considered changed).
pub(crate) fn update_map(update: &Update) -> Dynamic {
    let ranges: Array = update
        .ranges()
        .iter()
        .map(|r| {
            let mut range = Map::new();
            range.insert("index".into(), Dynamic::from_int(INT::from(r.index)));
            range.insert("count".into(), Dynamic::from_int(INT::from(r.count)));
            Dynamic::from_map(range)
        })
        .collect();
    let mut map = Map::new();
    map.insert("total".into(), Dynamic::from_int(INT::from(update.total)));
    map.insert(
        "prev_total".into(),
        Dynamic::from_int(INT::from(update.prev_total)),
    );
    map.insert("ranges".into(), Dynamic::from_array(ranges));
    map.insert(
        "full_reload".into(),
        Dynamic::from_bool(update.is_full_reload()),
    );
    Dynamic::from_map(map)
}

/// The hub callback of a Rhai row listener: `fn(row, item)` or, when the
/// function declares a third parameter, `fn(row, item, update)`. Rows are
/// 0-based; a removed row arrives as `!row` (negative) with a
/// default-valued item.
pub(crate) fn row_callback(
    shared: &Rc<Shared>,
    script: &Rc<Script>,
    f: FnPtr,
    listen_line: u32,
    with_update: bool,
) -> Rc<RowFn> {
    let handler = Handler::new(shared, script, f, listen_line);
    Rc::new(
        move |row: i32, item: &Value, update: &Update| -> Result<(), ListenerError> {
            handler
                .run(|| {
                    let mut args =
                        smallvec::smallvec![Dynamic::from_int(INT::from(row)), from_value(item)];
                    if with_update {
                        args.push(update_map(update));
                    }
                    args
                })
                .map(|_| ())
        },
    )
}

/// The hub callback of a Rhai whole-table listener: `fn(items, update)`,
/// the table as an array of maps (a copy: Rhai cannot borrow it).
pub(crate) fn table_callback(
    shared: &Rc<Shared>,
    script: &Rc<Script>,
    f: FnPtr,
    listen_line: u32,
) -> Rc<TableFn> {
    let handler = Handler::new(shared, script, f, listen_line);
    Rc::new(
        move |view: &TableView<'_>, update: &Update| -> Result<(), ListenerError> {
            handler
                .run(|| {
                    let items: Array = view.rows().iter().map(from_value).collect();
                    smallvec::smallvec![Dynamic::from_array(items), update_map(update)]
                })
                .map(|_| ())
        },
    )
}
