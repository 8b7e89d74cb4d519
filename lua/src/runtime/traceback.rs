//! What a modder sees of a Lua traceback: the frames of the mod's own
//! files, in the words the modder wrote.
//!
//! Lua's traceback names every frame of the stack: the sandbox's wrappers
//! (`gantry-sandbox:151`), the budget's hook, the C function that raised
//! the error, and the baked functions the loader rewrote literal-key calls
//! into, by the local they are held in (`[C]: in upvalue '__ga3'`). None of
//! these is something a modder can open or act on. So a traceback keeps:
//!
//! - every frame of a Lua chunk of the mod (its scripts, the modules they
//!   `require`, chunks they `load`);
//! - a C frame (or a `(...tail calls...)` / skipped-levels line) only
//!   between two of those: a function the mod called that called back into
//!   the mod (`pcall`, `table.sort`, a send delivering to a listener), which
//!   is how one of its frames reached the next. A baked call is named as
//!   written (`[C]: in function 'NotifyObjectMessage'`); a C frame without
//!   a name (`[C]: in ?`) says nothing and goes.
//!
//! C frames above the mod's first frame go: they are the function that
//! raised the error (`[C]: in function 'error'`, an API function refusing
//! its arguments), which the message already names with the mod's line.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use gantry_host::ApiFunction;

/// The API function behind each baked slot of each chunk, to name a baked
/// call in a traceback as the modder wrote it. Filled as the loader bakes a
/// chunk's slots, in slot order (see [`BakedNames::chunk`]).
#[derive(Default)]
pub(crate) struct BakedNames {
    /// By chunk name (the script's file): slot `n` is at `n - 1`. A file
    /// loaded again (the same script on another object) bakes the same
    /// slots; the latest load's list is kept.
    by_file: RefCell<HashMap<Rc<str>, Slots>>,
}

/// The functions of one chunk's slots, shared by the chunk's context (which
/// appends as it bakes) and [`BakedNames`].
pub(crate) type Slots = Rc<RefCell<Vec<ApiFunction>>>;

impl BakedNames {
    /// Starts the slot list of a chunk of `file` being baked.
    pub fn chunk(&self, file: &Rc<str>) -> Slots {
        let slots = Slots::default();
        self.by_file
            .borrow_mut()
            .insert(file.clone(), slots.clone());
        slots
    }

    /// The API function of baked local `name` (`__ga3`: slot 3) in `file`.
    fn function(&self, file: &str, name: &str) -> Option<ApiFunction> {
        let slot: usize = baked_slot(name)?;
        let by_file = self.by_file.borrow();
        let slots = match by_file.get(file) {
            Some(slots) => slots,
            // Lua shortens a long chunk name to `...` and its end.
            None => {
                let tail = file.strip_prefix("...")?;
                by_file
                    .iter()
                    .find(|(f, _)| f.ends_with(tail))
                    .map(|(_, s)| s)?
            }
        };
        slots.borrow().get(slot.checked_sub(1)?).copied()
    }
}

/// The slot of a baked local's name: `__g` + a letter + the slot number
/// (see `crate::syntax::rewrite`).
fn baked_slot(name: &str) -> Option<usize> {
    let rest = name.strip_prefix("__g")?;
    let mut chars = rest.chars();
    if !chars.next()?.is_ascii_lowercase() {
        return None;
    }
    let digits = chars.as_str();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// One line of a traceback.
enum Frame<'a> {
    /// A frame of the mod's Lua: its file.
    Mod(&'a str),
    /// The runtime's own Lua (`gantry-…` chunks), by what its caller calls
    /// it (a sandbox wrapper the loader baked in, such as `GMP.Request`'s,
    /// is called by its slot's name), or the budget's hook.
    Internal(Option<&'a str>),
    /// A C function, by what its caller calls it (`function 'pcall'`,
    /// `upvalue '__ga3'`, `?`).
    C(&'a str),
    /// `(...tail calls...)` or `...` followed by `(skipping N levels)`.
    Gap,
}

fn frame(line: &str) -> Frame<'_> {
    let line = line.trim_start_matches('\t');
    if line.starts_with("gantry-") {
        return Frame::Internal(line.split_once(": in ").map(|(_, what)| what));
    }
    if let Some(what) = line.strip_prefix("[C]: in ") {
        return if what.starts_with("hook") {
            Frame::Internal(None)
        } else {
            Frame::C(what)
        };
    }
    let Some((place, _)) = line.split_once(": in ") else {
        return Frame::Gap;
    };
    match place.rsplit_once(':') {
        Some((file, number)) if number.bytes().all(|b| b.is_ascii_digit()) => Frame::Mod(file),
        _ => Frame::Gap,
    }
}

/// `text` (a Lua error message, with tracebacks) with each traceback cut to
/// the mod's frames (see the module's doc); baked calls named through
/// `baked` when given.
pub(crate) fn mod_frames_only(text: &str, baked: Option<&BakedNames>) -> String {
    if !text.contains("stack traceback:") {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.trim() != "stack traceback:" {
            out.push(line.to_owned());
            continue;
        }
        let start = i;
        while i < lines.len() && lines[i].starts_with('\t') {
            i += 1;
        }
        let kept = mod_frames(&lines[start..i], baked);
        // A traceback left with no frame says nothing.
        if !kept.is_empty() {
            out.push(line.to_owned());
            out.extend(kept);
        }
    }
    out.join("\n")
}

/// The frames of one traceback that a modder sees.
fn mod_frames(lines: &[&str], baked: Option<&BakedNames>) -> Vec<String> {
    let frames: Vec<Frame<'_>> = lines.iter().map(|l| frame(l)).collect();
    let Some(first) = frames.iter().position(|f| matches!(f, Frame::Mod(_))) else {
        return Vec::new();
    };
    let last = frames
        .iter()
        .rposition(|f| matches!(f, Frame::Mod(_)))
        .unwrap_or(first);
    let mut kept = Vec::new();
    for (at, (line, frame)) in lines.iter().zip(&frames).enumerate() {
        if at < first || at > last {
            continue;
        }
        // The file whose code made this call: the next mod frame.
        let caller = || {
            frames[at..].iter().find_map(|f| match f {
                Frame::Mod(file) => Some(*file),
                _ => None,
            })
        };
        match frame {
            Frame::Mod(_) | Frame::Gap => kept.push((*line).to_owned()),
            // A sandbox wrapper stands for the API function it wraps only
            // when the mod called it by a baked name.
            Frame::Internal(Some(what)) => {
                if let Some(name) = baked_frame_name(what, caller(), baked) {
                    kept.push(format!("\t[C]: in {name}"));
                }
            }
            Frame::Internal(None) => {}
            // Called by the sandbox's own code: named by its locals.
            Frame::C(_) if matches!(frames.get(at + 1), Some(Frame::Internal(_))) => {}
            Frame::C(what) => {
                if let Some(name) = c_frame_name(what, caller(), baked) {
                    kept.push(format!("\t[C]: in {name}"));
                }
            }
        }
    }
    kept
}

/// `function 'X'` for a frame the mod called by a baked local's name.
fn baked_frame_name(
    what: &str,
    caller: Option<&str>,
    baked: Option<&BakedNames>,
) -> Option<String> {
    let function = baked?.function(caller?, quoted_name(what)?)?;
    let gmp = if function.gmp_only() { "GMP." } else { "" };
    Some(format!("function '{gmp}{}'", function.name()))
}

/// The name in `upvalue 'x'`, `local 'x'`, `field 'x'`, `function 'x'`,
/// `method 'x'`.
fn quoted_name(what: &str) -> Option<&str> {
    what.split_once(" '")
        .and_then(|(_, rest)| rest.strip_suffix('\''))
}

/// What a C frame between the mod's frames is shown as, or `None` when it
/// names nothing the modder wrote.
fn c_frame_name(what: &str, caller: Option<&str>, baked: Option<&BakedNames>) -> Option<String> {
    match quoted_name(what) {
        Some(name) if baked_slot(name).is_some() => baked_frame_name(what, caller, baked),
        // A table element called by number names no function.
        Some("?" | "integer index") => None,
        None if what == "?" => None,
        _ => Some(what.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baked_local_name_gives_its_slot() {
        assert_eq!(baked_slot("__ga3"), Some(3));
        assert_eq!(baked_slot("__gz151"), Some(151));
        assert_eq!(baked_slot("__ga"), None);
        assert_eq!(baked_slot("__gA1"), None);
        assert_eq!(baked_slot("inner"), None);
    }

    #[test]
    fn frames_outside_the_mods_are_cut_and_baked_calls_renamed() {
        let baked = BakedNames::default();
        let slots = baked.chunk(&Rc::from("mod.lua"));
        slots.borrow_mut().push(ApiFunction::ListenMessage);
        slots.borrow_mut().push(ApiFunction::NotifyObjectMessage);
        let text = "mod.lua:2: bad\nstack traceback:\n\t[C]: in ?\n\t[C]: in function 'error'\n\
                    \tmod.lua:2: in upvalue 'inner'\n\tgantry-sandbox:151: in function <gantry-sandbox:140>\n\
                    \t[C]: in upvalue '__gb2'\n\tmod.lua:11: in function <mod.lua:10>\n\t[C]: in ?";
        assert_eq!(
            mod_frames_only(text, Some(&baked)),
            "mod.lua:2: bad\nstack traceback:\n\tmod.lua:2: in upvalue 'inner'\n\
             \t[C]: in function 'NotifyObjectMessage'\n\tmod.lua:11: in function <mod.lua:10>"
        );
    }
}
