//! Rhai built-ins the sandbox replaces, because one call of them could
//! spend unbounded time or memory: no operation is counted inside a
//! built-in, so neither the operation limit nor the time limit can stop
//! it halfway. (The engine's own functions are found before its packages',
//! so these shadow the standard ones.)

use rhai::{
    Dynamic, Engine, EvalAltResult, FLOAT, INT, ImmutableString, NativeCallContext, Position,
};

/// Installs the replacements on `engine`.
pub(crate) fn install(engine: &mut Engine) {
    refuse_sleep(engine);
    bound_replace(engine);
}

/// `sleep` blocks the host's thread for as long as the script asks: it
/// fails instead, naming itself.
fn refuse_sleep(engine: &mut Engine) {
    fn refused() -> Result<(), Box<EvalAltResult>> {
        Err(Box::new(EvalAltResult::ErrorRuntime(
            Dynamic::from("`sleep` is not available: a script may not block the host"),
            Position::NONE,
        )))
    }
    engine.register_fn("sleep", |_: INT| refused());
    engine.register_fn("sleep", |_: FLOAT| refused());
}

/// `replace` builds its whole result before Rhai checks its size: a
/// 100 KB string whose every character is replaced by itself asks for
/// 10 GB. The result's length is computed first and refused over the
/// string size limit, with Rhai's own error.
fn bound_replace(engine: &mut Engine) {
    engine.register_fn(
        "replace",
        |ctx: NativeCallContext, s: &mut ImmutableString, find: &str, with: &str| {
            replace(&ctx, s, find, with)
        },
    );
    engine.register_fn(
        "replace",
        |ctx: NativeCallContext, s: &mut ImmutableString, find: &str, with: char| {
            replace(&ctx, s, find, with.encode_utf8(&mut [0; 4]))
        },
    );
    engine.register_fn(
        "replace",
        |ctx: NativeCallContext, s: &mut ImmutableString, find: char, with: &str| {
            replace(&ctx, s, find.encode_utf8(&mut [0; 4]), with)
        },
    );
    engine.register_fn(
        "replace",
        |ctx: NativeCallContext, s: &mut ImmutableString, find: char, with: char| {
            replace(
                &ctx,
                s,
                find.encode_utf8(&mut [0; 4]),
                with.encode_utf8(&mut [0; 4]),
            )
        },
    );
}

/// Rhai's `replace`, refusing a result longer than the string size limit
/// before building it.
fn replace(
    ctx: &NativeCallContext,
    s: &mut ImmutableString,
    find: &str,
    with: &str,
) -> Result<(), Box<EvalAltResult>> {
    if s.is_empty() {
        return Ok(());
    }
    let max = ctx.engine().max_string_size();
    if max > 0 && with.len() > find.len() {
        // An empty pattern matches before every character and at the end.
        let matches = if find.is_empty() {
            s.chars().count() + 1
        } else {
            s.matches(find).count()
        };
        let length = matches
            .saturating_mul(with.len() - find.len())
            .saturating_add(s.len());
        if length > max {
            return Err(Box::new(EvalAltResult::ErrorDataTooLarge(
                "Length of string".into(),
                Position::NONE,
            )));
        }
    }
    *s = s.replace(find, with).into();
    Ok(())
}
