//! Frame trimming: a fault of one frame (a load, a tick) carried by
//! several texts is kept once.
//!
//! A refused send is the hub's report *and* an error raised in the script
//! that sent it, which may fail a listener in turn (another report) and
//! reach the script's top level (an engine error): one fault. The later
//! texts carry the first report whole: at the start of a line (`a.lua:4:
//! …; dispatch aborted` then a traceback) or after a `: ` (`a.lua:2:
//! listener of `K.B` failed: a.lua:2: …`), running to the end of that
//! line. So a text repeats a report of the same frame when, at a line
//! start or after a `: `, the rest of its line is the report's first line
//! and the report's other lines follow.
//!
//! That test is a hash lookup per candidate position, a line's suffix
//! hashes prepared in one backward pass over it (seven bytes a step): a
//! hostile mod's 40,000 distinct refused sends in one tick are sorted out
//! in tens of milliseconds, where testing every error against every
//! earlier report took 45 s. The hash is polynomial modulo the prime
//! 2^61 - 1 with a base drawn per process, so a mod cannot craft colliding
//! reports (modulo 2^64 it could, whatever the base); a collision would
//! cost one string comparison, never a wrong answer.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// Reports of one frame remembered for the test; past this many, later
/// reports are still kept but a later error repeating one of them may be
/// kept too (the memory a flood of reports takes stays bounded).
const MAX_RECENT: usize = 1 << 16;

/// The reports of the frame under way, by the hash and length of
/// their first line.
pub(crate) struct Recent {
    base: u64,
    reports: Vec<String>,
    /// The latest report with a first line of this hash and length...
    by_first_line: HashMap<(u64, usize), usize, Prehashed>,
    /// ...and, for each report, the one before it with the same key.
    same_key_before: Vec<Option<usize>>,
    /// The suffix hashes of the line being scanned (kept to reuse the
    /// allocation).
    suffixes: Suffixes,
}

/// The keys are hashes already (of a per-process random base): hashing
/// them again would only cost time; one multiply spreads them.
#[derive(Default, Clone, Copy)]
struct Prehashed;

impl BuildHasher for Prehashed {
    type Hasher = PrehashedHasher;
    fn build_hasher(&self) -> PrehashedHasher {
        PrehashedHasher(0)
    }
}

struct PrehashedHasher(u64);

impl Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        // Spread to the top bits, which the table also reads.
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = self.0.wrapping_add(n as u64);
    }
}

impl Default for Recent {
    fn default() -> Self {
        Self {
            base: random_base(),
            reports: Vec::new(),
            by_first_line: HashMap::default(),
            same_key_before: Vec::new(),
            suffixes: Suffixes::default(),
        }
    }
}

impl Recent {
    /// The frame is over: its reports are no longer repeated.
    pub(crate) fn clear(&mut self) {
        self.reports.clear();
        self.by_first_line.clear();
        self.same_key_before.clear();
    }

    /// Keeps `report`, whose first line hashes to `first_line`.
    pub(crate) fn remember(&mut self, report: String, first_line: u64) {
        if self.reports.len() >= MAX_RECENT {
            return;
        }
        let key = (first_line, first_line_of(&report).len());
        let before = self.by_first_line.insert(key, self.reports.len());
        self.same_key_before.push(before);
        self.reports.push(report);
    }

    /// Does `text` carry a remembered report whole, at a line start or
    /// after a `: `, to the end of that line and beyond? And the hash of
    /// its first line (to remember it by, when it is a report).
    pub(crate) fn scan(&mut self, text: &str) -> (bool, u64) {
        let mut suffixes = std::mem::take(&mut self.suffixes);
        let mut first_line = None;
        let mut repeated = false;
        let mut line_start = 0;
        for line in text.split('\n') {
            let bytes = line.as_bytes();
            suffixes.prepare(self.base, bytes);
            first_line.get_or_insert_with(|| suffixes.of(bytes, 0));
            if self.reports.is_empty() {
                break;
            }
            if self.carries_at(text, line_start, bytes, &suffixes) {
                repeated = true;
                break;
            }
            line_start += line.len() + 1;
        }
        self.suffixes = suffixes;
        (repeated, first_line.unwrap_or_default())
    }

    /// Does a remembered report start at a candidate position of the line
    /// `bytes` (at `line_start` in `text`, its suffixes hashed)?
    fn carries_at(&self, text: &str, line_start: usize, bytes: &[u8], suffixes: &Suffixes) -> bool {
        let candidates = std::iter::once(0).chain(
            bytes
                .windows(2)
                .enumerate()
                .filter(|(_, pair)| pair == b": ")
                .map(|(at, _)| at + 2),
        );
        for at in candidates {
            let key = (suffixes.of(bytes, at), bytes.len() - at);
            let rest = &text[line_start + at..];
            let mut report = self.by_first_line.get(&key).copied();
            while let Some(r) = report {
                if rest.starts_with(&self.reports[r]) {
                    return true;
                }
                report = self.same_key_before[r];
            }
        }
        false
    }
}

pub(crate) fn first_line_of(text: &str) -> &str {
    text.split('\n').next().unwrap_or_default()
}

/// The modulus of the hash, the Mersenne prime 2^61 - 1.
const MODULUS: u64 = (1 << 61) - 1;

/// `a * b + c` modulo [`MODULUS`], for `a`, `b`, `c` below it.
fn mul_add(a: u64, b: u64, c: u64) -> u64 {
    let product = u128::from(a) * u128::from(b) + u128::from(c);
    let folded = (product as u64 & MODULUS) + (product >> 61) as u64;
    let folded = (folded & MODULUS) + (folded >> 61);
    if folded >= MODULUS {
        folded - MODULUS
    } else {
        folded
    }
}

/// A base for the hash, below [`MODULUS`] and not 0 or 1, drawn per process.
fn random_base() -> u64 {
    let drawn = std::collections::hash_map::RandomState::new().hash_one(0u64);
    2 + drawn % (MODULUS - 2)
}

/// Up to seven bytes as one digit of the hash (below 2^56, so below the
/// modulus).
fn digit(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |v, &b| v << 8 | u64::from(b))
}

/// The hashes of every suffix of one line, in O(1) each after one pass.
///
/// A text's hash is polynomial in `base` over its seven-byte digits
/// counted from its end (digit 0 is the last seven bytes), the bytes left
/// over at its start one last, shorter digit. Counted from the end, the
/// digits of a suffix are the line's own, but for that first one: so the
/// sums of the line's last k digits, prepared once, give every suffix's
/// hash. Texts are compared by hash and length, and among texts of one
/// length the digits are unambiguous.
#[derive(Default)]
struct Suffixes {
    /// `sums[k]`: the hash of the line's last `7 k` bytes.
    sums: Vec<u64>,
    /// `powers[k]`: `base^k`.
    powers: Vec<u64>,
}

impl Suffixes {
    fn prepare(&mut self, base: u64, line: &[u8]) {
        self.sums.clear();
        self.powers.clear();
        self.sums.push(0);
        self.powers.push(1);
        for (k, chunk) in line.rchunks_exact(7).enumerate() {
            let power = self.powers[k];
            self.sums.push(mul_add(digit(chunk), power, self.sums[k]));
            self.powers.push(mul_add(power, base, 0));
        }
    }

    /// The hash of `line[at..]` (`line` the one prepared).
    fn of(&self, line: &[u8], at: usize) -> u64 {
        let len = line.len() - at;
        let k = len / 7;
        mul_add(digit(&line[at..at + len % 7]), self.powers[k], self.sums[k])
    }
}

/// The hash of a whole text, as [`Suffixes`] computes it.
#[cfg(test)]
fn hash(base: u64, text: &[u8]) -> u64 {
    let mut suffixes = Suffixes::default();
    suffixes.prepare(base, text);
    suffixes.of(text, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_of_a_suffix_is_the_hash_of_that_text() {
        let base = random_base();
        let text = b"a.lua:2: listener of `K.B` failed: x: y: z";
        let mut suffixes = Suffixes::default();
        suffixes.prepare(base, text);
        for at in 0..=text.len() {
            assert_eq!(suffixes.of(text, at), hash(base, &text[at..]), "at {at}");
        }
        // Texts of one length that differ anywhere hash apart.
        assert_ne!(hash(base, b"abcdefghij"), hash(base, b"abcdefghik"));
        assert_ne!(hash(base, b"abcdefghij"), hash(base, b"bbcdefghij"));
    }

    #[test]
    fn the_hash_is_taken_modulo_a_prime() {
        assert_eq!(mul_add(MODULUS - 1, MODULUS - 1, 0), 1);
        assert_eq!(mul_add(MODULUS - 1, 1, 1), 0);
        assert_eq!(mul_add(1 << 40, 1 << 40, 5), (1 << 19) + 5);
    }
}
