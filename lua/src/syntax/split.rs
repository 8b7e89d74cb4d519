//! Parsing a large chunk in two halves at once.
//!
//! A tree-sitter parse is most of a load's rewrite cost (50 ms of a
//! 10,000-line script's 57 here) and runs on one core. A Lua chunk is a
//! sequence of statements, so a script cut at the start of a top-level
//! statement parses as two chunks whose statements, one list after the
//! other, are the whole chunk's. [`split_point`] finds such a cut with a
//! lexer pass (strings, comments, brackets and blocks; under a millisecond
//! for 10,000 lines), and [`scan_halves`] parses and walks the halves on
//! two threads, the second walk seeded with the first half's chunk-level
//! locals, as one walk of the whole would have them.
//!
//! The cut is trusted only when the parses confirm it: neither half has a
//! syntax error, the first does not end in `return` (which must be a
//! chunk's last statement) and the cut is not inside a comment or string
//! the first half's end closed. Each half is checked as Lua would check it
//! (see `refusal`), the second with the first's top-level locals and labels
//! declared above it; a `goto` across the cut is refused here and decided
//! by the whole parse. Otherwise — or when threads are not available —
//! the caller parses the whole source as before (a script with a syntax
//! error pays for both; Lua then refuses it).

use tree_sitter::Point;

use super::brackets::{long_bracket_close, long_bracket_level};
use super::kinds::KINDS;
use super::parse::{parse, parse_range};
use super::refusal::{Above, Check, above};
use super::registers::main_temporaries;
use super::scan::{ChunkLocals, ChunkScan, chunk_locals, scan_chunk_checked};

/// Sources shorter than this are parsed whole: their parse takes a few
/// milliseconds, and a thread costs tens of microseconds.
pub(crate) const SPLIT_MIN_BYTES: usize = 64 * 1024;

/// A byte offset at or after the middle of `source` where a top-level
/// `local` statement begins: outside any string, comment, bracket or
/// block, so that the text before it is a sequence of whole statements.
/// `local` is reserved and only ever starts a statement, so nothing before
/// it can continue into it. `None` when there is no such point or the
/// lexer meets something it does not follow (an unterminated string).
pub(crate) fn split_point(source: &str) -> Option<usize> {
    let b = source.as_bytes();
    let half = b.len() / 2;
    // A first line starting with `#` is skipped by Lua (a shebang).
    let mut i = if b.first() == Some(&b'#') {
        memchr_from(b, b'\n', 0).unwrap_or(b.len())
    } else {
        0
    };
    // Brackets and blocks open at `i`; a valid chunk never goes below 0.
    let mut depth: i64 = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = match long_bracket_level(b, i + 2) {
                    Some(level) => long_bracket_close(b, i + 4 + level, level)?,
                    None => memchr_from(b, b'\n', i).unwrap_or(b.len()),
                };
            }
            b'[' => match long_bracket_level(b, i) {
                Some(level) => i = long_bracket_close(b, i + 2 + level, level)?,
                None => {
                    depth += 1;
                    i += 1;
                }
            },
            b'"' | b'\'' => i = short_string_end(b, i)?,
            b'(' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' | b'}' | b']' => {
                depth -= 1;
                i += 1;
            }
            b'0'..=b'9' => {
                // A numeral: digits, letters (hex, exponents), dots and an
                // exponent's sign. Its letters are not keywords.
                i += 1;
                while i < b.len() {
                    let d = b[i];
                    let sign =
                        (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                    if !(d.is_ascii_alphanumeric() || d == b'.' || sign) {
                        break;
                    }
                    i += 1;
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80)
                {
                    i += 1;
                }
                match &b[start..i] {
                    b"local" if depth == 0 && start >= half => return Some(start),
                    b"function" | b"if" | b"do" | b"repeat" => depth += 1,
                    b"end" | b"until" => depth -= 1,
                    _ => {}
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The offset just past the quote closing the short string opened at
/// `at`; `None` if the line ends first.
fn short_string_end(b: &[u8], at: usize) -> Option<usize> {
    let quote = b[at];
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            // The escaped byte (a quote, a backslash, a newline) is skipped;
            // `\z` and the rest escape nothing the cut cares about.
            b'\\' => i += 2,
            b'\n' | b'\r' => return None,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn memchr_from(b: &[u8], needle: u8, from: usize) -> Option<usize> {
    b.get(from..)?
        .iter()
        .position(|&c| c == needle)
        .map(|n| from + n)
}

/// The row and column of byte `offset`.
fn point_at(source: &str, offset: usize) -> Point {
    let before = &source.as_bytes()[..offset];
    let row = before.iter().filter(|&&c| c == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |n| n + 1);
    Point::new(row, offset - line_start)
}

/// The scan of `source` cut at `at`, and the most temporaries a statement
/// of its main chunk may need (see `registers`), its halves parsed and
/// walked at once (the second on a thread of its own, after the first
/// half's chunk-level locals are known); `None` when a thread cannot be
/// had, a parse fails, the parses do not confirm the cut, or Lua would
/// refuse a half.
pub(crate) fn scan_halves(source: &str, at: usize) -> Option<(ChunkScan, usize)> {
    let start = point_at(source, at);
    let end = point_at(source, source.len());
    let (above_tx, above_rx) = std::sync::mpsc::sync_channel::<Option<(ChunkLocals, Above<'_>)>>(1);
    std::thread::scope(|scope| {
        let second = std::thread::Builder::new()
            .name("gantry-lua-parse".into())
            .spawn_scoped(scope, move || {
                let tree = parse_range(source, at..source.len(), start, end)?;
                if tree.root_node().has_error() {
                    return None;
                }
                let (locals, above) = above_rx.recv().ok()??;
                let check = Check::new(&tree, source, at..source.len(), &above, true);
                let (scan, refusal) = scan_chunk_checked(&tree, source, locals, check);
                refusal.is_none().then(|| (scan, main_temporaries(&tree)))
            })
            .ok()?;
        let first = parse(&source[..at], None).filter(|tree| confirms_cut(tree, at));
        // The second half waits for this (a dropped sender ends its wait).
        let _ = above_tx.send(
            first
                .as_ref()
                .map(|tree| (chunk_locals(tree, source), above(tree, source))),
        );
        let first = first.and_then(|tree| {
            // The chunk goes on after the first half: a label at its end
            // is not at the chunk's end.
            let check = Check::new(&tree, source, 0..at, &Above::default(), false);
            let (scan, refusal) = scan_chunk_checked(&tree, source, ChunkLocals::default(), check);
            refusal.is_none().then(|| (scan, main_temporaries(&tree)))
        });
        let (second, second_temporaries) = second.join().ok()??;
        let (first, first_temporaries) = first?;
        Some((
            first.then(second),
            first_temporaries.max(second_temporaries),
        ))
    })
}

/// Whether the first half's tree (of `source[..at]`) confirms a cut at
/// `at`: no syntax error, not ending in `return` (which must end a chunk),
/// and the cut not inside a comment or a string that the end of the half
/// closed (a line comment runs to the end of the text; a cut inside one
/// can leave two halves that both parse, meaning something else).
fn confirms_cut(first: &tree_sitter::Tree, at: usize) -> bool {
    let root = first.root_node();
    let k = &*KINDS;
    let Some(last) = root.child(root.child_count().wrapping_sub(1)) else {
        return false;
    };
    let in_text = super::innermost_enclosing(first, at.saturating_sub(1), at, |n| {
        n.kind_id() == k.comment || n.kind_id() == k.string
    });
    in_text.is_none() && !root.has_error() && last.kind_id() != k.return_statement
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(source: &str) -> Option<&str> {
        split_point(source).map(|at| &source[at..])
    }

    #[test]
    fn split_point_is_a_top_level_local_in_the_second_half() {
        let source = "local a = 1\nlocal b = 2\nprint(a)\nlocal c = 3\nlocal d = 4\n";
        assert_eq!(cut(source), Some("local c = 3\nlocal d = 4\n"));
    }

    #[test]
    fn split_point_skips_locals_inside_blocks_brackets_strings_and_comments() {
        let source = concat!(
            "x = 1\n",
            "x = 2\n",
            "function f()\n  local inside = 1\nend\n",
            "if x then local y = 1 end\n",
            "t = { function() local z = 1 end }\n",
            "s = 'local q' .. \"local r\" .. [==[\nlocal s ]] ]==]\n",
            "--[[\nlocal commented\n]]\n",
            "-- local line comment\n",
            "repeat local u = 1 until u\n",
            "for i = 1, 2 do local v = i end\n",
            "n = 0x1e+1 .. 1e-5\n",
            "local here = 1\n",
        );
        assert_eq!(cut(source), Some("local here = 1\n"));
    }

    #[test]
    fn split_point_gives_up_on_an_unterminated_string() {
        assert_eq!(cut("x = 1\nx = 2\ns = 'open\nlocal a = 1\n"), None);
        assert_eq!(cut("x = 1\nx = 2\ns = [[ open\nlocal a = 1\n"), None);
    }

    #[test]
    fn scan_halves_refuses_a_cut_after_a_return_with_an_error_or_in_a_comment() {
        let source = "x = 1\nreturn x\nlocal a = 1\n";
        assert!(scan_halves(source, source.find("local").unwrap()).is_none());
        let source = "x = (1\nlocal a = 1\n";
        assert!(scan_halves(source, source.find("local").unwrap()).is_none());
        let source = "x = 1\nlocal a = 1\nif a then\n";
        assert!(scan_halves(source, source.find("local").unwrap()).is_none());
        // Both halves parse, but the cut is inside a comment.
        let source = "x = 1\n-- local y\nprint(x)\n";
        assert!(scan_halves(source, source.find("local").unwrap()).is_none());
    }

    #[test]
    fn scan_halves_positions_are_the_documents() {
        let source = "x = 1\nprint(x)\nlocal a = 1\n  NotifyMessage('K', a)\n";
        let (scan, _) = scan_halves(source, source.find("local").unwrap()).unwrap();
        assert_eq!(scan.calls.len(), 1);
        let call = &scan.calls[0].call;
        let line = gantry_host::Pos { line: 3, column: 2 };
        assert_eq!(call.call.start_pos, line, "0-based, as the scanner's");
        assert_eq!(call.call.start, source.find("NotifyMessage").unwrap());
    }
}
