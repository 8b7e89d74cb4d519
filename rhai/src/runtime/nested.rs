//! Comparing and printing arrays and maps, replaced because Rhai's own call
//! a script function per level of nesting: 8 KiB of stack a level in an
//! unoptimised build, so `a == a` or `print(a)` of an array a few hundred
//! deep overflowed a 2 MiB thread. These recurse in plain Rust, within the
//! script stack's budget per level (see `stack`), and call Rhai's own
//! function only for a value that is neither an array nor a map. (The
//! engine's own functions are found before its packages', so these shadow
//! the standard ones; `contains`, `in`, `index_of` and `dedup` call `==`,
//! and so these, per element.)

use std::fmt::Write;

use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString, Map, NativeCallContext};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// Installs the replacements on `engine`.
pub(crate) fn install(engine: &mut Engine) {
    engine.register_fn("==", |ctx: NativeCallContext, a: &mut Array, b: Array| {
        arrays_equal(&ctx, a, &b)
    });
    engine.register_fn("!=", |ctx: NativeCallContext, a: &mut Array, b: Array| {
        arrays_equal(&ctx, a, &b).map(|same| !same)
    });
    engine.register_fn("==", |ctx: NativeCallContext, a: &mut Map, b: Map| {
        maps_equal(&ctx, a, &b)
    });
    engine.register_fn("!=", |ctx: NativeCallContext, a: &mut Map, b: Map| {
        maps_equal(&ctx, a, &b).map(|same| !same)
    });
    for name in ["print", "to_string", "debug", "to_debug"] {
        engine.register_fn(name, |ctx: NativeCallContext, a: &mut Array| {
            text(&ctx, |out| write_array(&ctx, a, out))
        });
        engine.register_fn(name, |ctx: NativeCallContext, m: &mut Map| {
            text(&ctx, |out| write_map(&ctx, m, out))
        });
    }
}

fn arrays_equal(ctx: &NativeCallContext, a: &Array, b: &Array) -> Result<bool> {
    if a.len() != b.len() {
        return Ok(false);
    }
    for (x, y) in a.iter().zip(b) {
        if !equal(ctx, x, y)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn maps_equal(ctx: &NativeCallContext, a: &Map, b: &Map) -> Result<bool> {
    if a.len() != b.len() {
        return Ok(false);
    }
    for (key, x) in a {
        match b.get(key) {
            Some(y) if equal(ctx, x, y)? => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// Rhai's `==` of two values, arrays and maps compared here.
fn equal(ctx: &NativeCallContext, a: &Dynamic, b: &Dynamic) -> Result<bool> {
    if a.is_array()
        && b.is_array()
        && let (Some(a), Some(b)) = (a.read_lock::<Array>(), b.read_lock::<Array>())
    {
        return arrays_equal(ctx, &a, &b);
    }
    if a.is_map()
        && b.is_map()
        && let (Some(a), Some(b)) = (a.read_lock::<Map>(), b.read_lock::<Map>())
    {
        return maps_equal(ctx, &a, &b);
    }
    // As Rhai's: values without an `==` between them are not equal.
    match ctx.call_native_fn_raw("==", true, &mut [&mut a.clone(), &mut b.clone()]) {
        Ok(same) => Ok(same.as_bool().unwrap_or(false)),
        Err(e) if matches!(&*e, EvalAltResult::ErrorFunctionNotFound(sig, _) if sig.starts_with("==")) => {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The text `write` makes. Writing stops once past the string size limit:
/// Rhai refuses the too-long result with its own error.
fn text(
    ctx: &NativeCallContext,
    write: impl FnOnce(&mut Limited) -> Result<()>,
) -> Result<ImmutableString> {
    let mut out = Limited {
        text: String::new(),
        max: match ctx.engine().max_string_size() {
            0 => usize::MAX,
            max => max,
        },
    };
    write(&mut out)?;
    Ok(out.text.into())
}

/// A text being written, and the length past which writing stops.
struct Limited {
    text: String,
    max: usize,
}

impl Limited {
    fn full(&self) -> bool {
        self.text.len() > self.max
    }
}

fn write_array(ctx: &NativeCallContext, a: &Array, out: &mut Limited) -> Result<()> {
    out.text.push('[');
    for (i, x) in a.iter().enumerate() {
        if out.full() {
            return Ok(());
        }
        if i > 0 {
            out.text.push_str(", ");
        }
        write_value(ctx, x, out)?;
    }
    out.text.push(']');
    Ok(())
}

fn write_map(ctx: &NativeCallContext, m: &Map, out: &mut Limited) -> Result<()> {
    out.text.push_str("#{");
    for (i, (key, x)) in m.iter().enumerate() {
        if out.full() {
            return Ok(());
        }
        if i > 0 {
            out.text.push_str(", ");
        }
        let _ = write!(out.text, "{key:?}: ");
        write_value(ctx, x, out)?;
    }
    out.text.push('}');
    Ok(())
}

/// An element as Rhai prints it inside an array or map: its `to_debug`.
fn write_value(ctx: &NativeCallContext, x: &Dynamic, out: &mut Limited) -> Result<()> {
    if x.is_array()
        && let Some(a) = x.read_lock::<Array>()
    {
        return write_array(ctx, &a, out);
    }
    if x.is_map()
        && let Some(m) = x.read_lock::<Map>()
    {
        return write_map(ctx, &m, out);
    }
    match ctx.call_native_fn_raw("to_debug", true, &mut [&mut x.clone()]) {
        Ok(s) if s.is_string() => out
            .text
            .push_str(&s.into_immutable_string().unwrap_or_default()),
        _ => {
            let _ = write!(out.text, "{x}");
        }
    }
    Ok(())
}
