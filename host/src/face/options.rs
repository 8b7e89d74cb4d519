//! The options of a listen (`{times=, order=, match=}`) and of a hook
//! listen (`{priority=, match=}`): one rule and one message for every
//! language (`key` and `respond` too, for a message listen). Absent or nil options are the defaults; anything but an
//! options table is refused naming the call and key; an integer option is a
//! 32-bit integer (an integral float counts); `match` is `"exact"` or
//! `"partial"`.

use crate::hook::HookOptions;
use crate::{ListenOptions, Match, Type, Value};

use super::call::Face;
use super::error::{ApiError, Call};

/// The options of a message, row or table listen.
pub fn listen_options<F: Face>(
    face: &F,
    call: &Call,
    value: F::Value,
) -> Result<ListenOptions, F::Error> {
    match options_table(face, call, value, &["times", "order", "match"])? {
        Some(table) => listen_options_of(face, call, &table),
        None => Ok(ListenOptions::new()),
    }
}

/// How a message listener is handed a dispatch, beyond its values: the
/// options `key` and `respond` of a message listen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// `key = true`: the key that was sent goes first (a partial
    /// listener's way to tell which key fired).
    pub key: bool,
    /// `respond = true`: the listener answers requests, and the responder
    /// goes in its last declared parameter (after the first `n - 1`
    /// values), so it may drop trailing values of a request. Without it the
    /// responder follows every value, for a listener with room for it.
    pub respond: bool,
}

/// The options of a message listen: those of [`listen_options`], `key` and
/// `respond` (see [`Delivery`]).
pub fn message_listen_options<F: Face>(
    face: &F,
    call: &Call,
    value: F::Value,
) -> Result<(ListenOptions, Delivery), F::Error> {
    let names = ["times", "order", "match", "key", "respond"];
    let Some(table) = options_table(face, call, value, &names)? else {
        return Ok((ListenOptions::new(), Delivery::default()));
    };
    let options = listen_options_of(face, call, &table)?;
    let delivery = Delivery {
        key: bool_option(face, call, &table, "key")?,
        respond: bool_option(face, call, &table, "respond")?,
    };
    Ok((options, delivery))
}

/// A true-or-false option (`key`, `respond`); absent is false.
fn bool_option<F: Face>(
    face: &F,
    call: &Call,
    table: &F::Options,
    name: &'static str,
) -> Result<bool, F::Error> {
    let value = face.option(table, name)?;
    if F::is_nil(&value) {
        return Ok(false);
    }
    match face.to_value(&value, Some(&Type::Bool)) {
        Ok(Value::Bool(on)) => Ok(on),
        _ => Err(face.raise(ApiError::BadOption {
            call: call.clone(),
            option: name,
            expected: "true or false",
            got: F::describe(&value),
        })),
    }
}

/// The listen options an options table sets.
fn listen_options_of<F: Face>(
    face: &F,
    call: &Call,
    table: &F::Options,
) -> Result<ListenOptions, F::Error> {
    let mut options = ListenOptions::new();
    if let Some(times) = int_option(face, call, table, "times")? {
        options = options.times(times);
    }
    if let Some(order) = int_option(face, call, table, "order")? {
        options = options.order(order);
    }
    Ok(options.matching(match_option(face, call, table)?))
}

/// The options of a hook listen.
pub fn hook_options<F: Face>(
    face: &F,
    call: &Call,
    value: F::Value,
) -> Result<HookOptions, F::Error> {
    let mut options = HookOptions::new();
    let Some(table) = options_table(face, call, value, &["priority", "match"])? else {
        return Ok(options);
    };
    if let Some(priority) = int_option(face, call, &table, "priority")? {
        options = options.priority(priority);
    }
    options.matching = match_option(face, call, &table)?;
    Ok(options)
}

/// The options table (`None`: the defaults).
fn options_table<F: Face>(
    face: &F,
    call: &Call,
    value: F::Value,
    names: &[&str],
) -> Result<Option<F::Options>, F::Error> {
    if F::is_nil(&value) {
        return Ok(None);
    }
    let got = F::describe(&value);
    match F::options(value) {
        Some(table) => Ok(Some(table)),
        None => Err(face.raise(ApiError::BadOptions {
            call: call.clone(),
            expected: F::TABLE.with(names),
            got,
        })),
    }
}

/// An integer option (`times`, `order`, `priority`).
fn int_option<F: Face>(
    face: &F,
    call: &Call,
    table: &F::Options,
    name: &'static str,
) -> Result<Option<i32>, F::Error> {
    let value = face.option(table, name)?;
    if F::is_nil(&value) {
        return Ok(None);
    }
    match F::whole_number(&value).and_then(|i| i32::try_from(i).ok()) {
        Some(n) => Ok(Some(n)),
        None => Err(face.raise(ApiError::BadOption {
            call: call.clone(),
            option: name,
            expected: "a 32-bit integer",
            got: F::describe(&value),
        })),
    }
}

/// The `match` option.
fn match_option<F: Face>(face: &F, call: &Call, table: &F::Options) -> Result<Match, F::Error> {
    let value = face.option(table, "match")?;
    if F::is_nil(&value) || F::is_text(&value, "exact") {
        return Ok(Match::Exact);
    }
    if F::is_text(&value, "partial") {
        return Ok(Match::Partial);
    }
    Err(face.raise(ApiError::BadOption {
        call: call.clone(),
        option: "match",
        expected: "\"exact\" or \"partial\"",
        got: F::describe(&value),
    }))
}
