//! Message keys: validation and interning.
//!
//! A key is a hierarchical tag such as `Player.Hurt`: dot-separated segments of
//! `[A-Za-z0-9_]`, at most [`MAX_KEY_BYTES`] bytes and [`MAX_KEY_SEGMENTS`]
//! segments. Keys arrive from scripts and table files, so a bad one is an
//! error value that names the text and the byte position, never a panic.
//!
//! Interning turns the text into a [`Key`], a small copyable handle. A caller
//! that keeps the handle (a *baked* caller) never hashes the string again.

use std::fmt;
use std::rc::Rc;

use std::hash::Hasher;

use hashbrown::HashTable;
use rustc_hash::FxHasher;
use thiserror::Error;

/// The longest key, in bytes. Keys come from scripts, and every key used
/// is kept for the whole run (interned with its ancestors, recorded in the
/// table, saved in its file): one bound, checked before anything else.
pub const MAX_KEY_BYTES: usize = 256;

/// The most segments (`A.B.C` has three) a key may have: each ancestor is
/// interned too, and partial matching walks them on every send.
pub const MAX_KEY_SEGMENTS: usize = 16;

/// How much of an overlong key an error quotes.
const QUOTED_CHARS: usize = 64;

/// Why a piece of text is not a valid key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyError {
    /// The text is empty.
    #[error("message key is empty")]
    Empty,
    /// Longer than [`MAX_KEY_BYTES`]. `key` quotes its first 64 characters
    /// (then `…`): the error of a megabyte of text is not a megabyte.
    #[error("message key `{key}` is {len} bytes long; a key has at most {MAX_KEY_BYTES} bytes")]
    TooLong { key: String, len: usize },
    /// More segments than [`MAX_KEY_SEGMENTS`].
    #[error("message key `{key}` has {segments} segments; a key has at most {MAX_KEY_SEGMENTS}")]
    TooManySegments { key: String, segments: usize },
    /// Two dots in a row, or a leading or trailing dot.
    #[error("message key `{key}` has an empty segment at byte {position}")]
    EmptySegment { key: String, position: usize },
    /// A character outside `[A-Za-z0-9_.]`.
    #[error(
        "message key `{key}` has invalid character {ch:?} at byte {position} (allowed: letters, digits, `_`, and `.` between segments)"
    )]
    InvalidChar {
        key: String,
        ch: char,
        position: usize,
    },
}

/// Whether `text` is a well-formed key: [`validate_key`]'s answer without
/// its error, for paths that must refuse a malformed key yet cost next to
/// nothing for a good one (an unheard hook). Sixteen bytes at a time where
/// the CPU has vectors, byte by byte elsewhere and below eight bytes.
#[inline]
pub(crate) fn is_well_formed(text: &str) -> bool {
    let bytes = text.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if first == b'.' || last == b'.' {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    match bytes.len() {
        // Most keys: one window, inline.
        8..=16 => return vector::window(bytes, 0, bytes.len()),
        17.. => return within_bounds(bytes) && vector::well_formed(bytes),
        _ => {}
    }
    within_bounds(bytes) && well_formed_bytes(bytes)
}

/// [`MAX_KEY_BYTES`] and [`MAX_KEY_SEGMENTS`] for [`is_well_formed`]: a
/// key too short to have more segments than allowed (a letter and a dot
/// per segment) is within both at one compare.
#[inline]
fn within_bounds(bytes: &[u8]) -> bool {
    bytes.len() < 2 * MAX_KEY_SEGMENTS + 1 || long_within_bounds(bytes)
}

#[inline(never)]
fn long_within_bounds(bytes: &[u8]) -> bool {
    bytes.len() <= MAX_KEY_BYTES && bytes.iter().filter(|&&b| b == b'.').count() < MAX_KEY_SEGMENTS
}

/// Every byte a segment character or a dot, no dot right after a dot.
fn well_formed_bytes(bytes: &[u8]) -> bool {
    let mut after_dot = false;
    bytes.iter().all(|&b| {
        let dot = b == b'.';
        let ok = (b.is_ascii_alphanumeric() || b == b'_' || dot) && !(dot && after_dot);
        after_dot = dot;
        ok
    })
}

#[cfg(target_arch = "x86_64")]
mod vector {
    //! SSE2 (part of every x86_64): sixteen bytes classified per step, as
    //! two eight-byte loads that may overlap, so no byte is read past the
    //! text and no copy is made.
    use std::arch::x86_64::*;

    /// Each byte of `v` between `first` and `last` (signed: bytes of 0x80
    /// and up are negative and fail every range).
    #[target_feature(enable = "sse2")]
    fn within(v: __m128i, first: u8, last: u8) -> __m128i {
        _mm_and_si128(
            _mm_cmpgt_epi8(v, _mm_set1_epi8(first as i8 - 1)),
            _mm_cmplt_epi8(v, _mm_set1_epi8(last as i8 + 1)),
        )
    }

    /// Bit i set where byte i of the two words is a segment character or
    /// a dot, and bit i set in the second mask where it is a dot.
    #[target_feature(enable = "sse2")]
    fn classify(lo: u64, hi: u64) -> (u32, u32) {
        let x = _mm_set_epi64x(hi as i64, lo as i64);
        let letter = within(_mm_or_si128(x, _mm_set1_epi8(0x20)), b'a', b'z');
        let digit = within(x, b'0', b'9');
        let under = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'_' as i8));
        let dot = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'.' as i8));
        let good = _mm_or_si128(_mm_or_si128(letter, digit), _mm_or_si128(under, dot));
        (
            _mm_movemask_epi8(good) as u32,
            _mm_movemask_epi8(dot) as u32,
        )
    }

    fn word(bytes: &[u8], at: usize) -> u64 {
        let mut w = [0; 8];
        w.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(w)
    }

    /// Whether the `len` (8 to 16) bytes at `start` are segment characters
    /// or dots with no two dots together. Two words, overlapping in the
    /// middle when `len` is under sixteen.
    #[inline]
    pub(super) fn window(bytes: &[u8], start: usize, len: usize) -> bool {
        // SAFETY: SSE2 is part of the x86_64 baseline, so every CPU this
        // code runs on has it.
        let (good, dots) = unsafe { classify(word(bytes, start), word(bytes, start + len - 8)) };
        let mut pairs = dots & (dots >> 1);
        if len < 16 {
            // Bits 7 and 8 are not neighbours in the text.
            pairs &= !(1 << 7);
        }
        good == 0xFFFF && pairs == 0
    }

    /// `bytes.len() > 16`. Windows of sixteen bytes at 0, 16, …, the last
    /// one ending at the text's end (overlapping the one before).
    #[inline(never)]
    pub(super) fn well_formed(bytes: &[u8]) -> bool {
        let n = bytes.len();
        let mut at = 0;
        loop {
            let start = at.min(n - 16);
            if !window(bytes, start, 16) {
                return false;
            }
            at = start + 16;
            if at >= n {
                return true;
            }
            // A dot pair across into the next window.
            if bytes[at - 1] == b'.' && bytes[at] == b'.' {
                return false;
            }
        }
    }
}

/// Checks that `text` is a well-formed key.
pub fn validate_key(text: &str) -> Result<(), KeyError> {
    if text.is_empty() {
        return Err(KeyError::Empty);
    }
    if text.len() > MAX_KEY_BYTES {
        let mut key: String = text.chars().take(QUOTED_CHARS).collect();
        key.push('…');
        return Err(KeyError::TooLong {
            key,
            len: text.len(),
        });
    }
    let mut segment_start = 0;
    let mut segments = 1;
    for (position, ch) in text.char_indices() {
        match ch {
            '.' => {
                if position == segment_start {
                    return Err(KeyError::EmptySegment {
                        key: text.to_owned(),
                        position,
                    });
                }
                segment_start = position + 1;
                segments += 1;
            }
            'A'..='Z' | 'a'..='z' | '0'..='9' | '_' => {}
            _ => {
                return Err(KeyError::InvalidChar {
                    key: text.to_owned(),
                    ch,
                    position,
                });
            }
        }
    }
    if segment_start == text.len() {
        return Err(KeyError::EmptySegment {
            key: text.to_owned(),
            position: text.len(),
        });
    }
    if segments > MAX_KEY_SEGMENTS {
        return Err(KeyError::TooManySegments {
            key: text.to_owned(),
            segments,
        });
    }
    Ok(())
}

/// The parent of a key: `Inv.Items.Row` → `Inv.Items`; a top-level key has none.
pub fn parent_key(text: &str) -> Option<&str> {
    text.rfind('.').map(|dot| &text[..dot])
}

/// An interned key. Cheap to copy and compare; only meaningful for the
/// [`Keys`] interner (and so the hub) that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub(crate) u32);

impl Key {
    /// The index of this key in its interner, for side tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the interner knows about one key.
#[derive(Debug)]
pub struct KeyInfo {
    pub name: Rc<str>,
    /// The key one level up, interned too, so partial matching walks handles.
    pub parent: Option<Key>,
    /// Number of segments minus one: `A` is 0, `A.B` is 1.
    pub depth: u32,
}

/// The key interner. Interning a key also interns all its ancestors.
///
/// Looking a key up by its text is the whole extra cost of a send by text,
/// so the table is probed with the text's hash and compared inline
/// (`same_text`), not through a `memcmp` call per candidate.
#[derive(Default)]
pub struct Keys {
    by_name: HashTable<Key>,
    infos: Vec<KeyInfo>,
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.infos.iter().map(|i| &i.name))
            .finish()
    }
}

#[inline]
fn hash_text(text: &str) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(text.as_bytes());
    hasher.finish()
}

/// Byte equality for the short texts keys are: two overlapping word loads
/// for up to 16 bytes, the library compare beyond.
#[inline]
fn same_text(a: &[u8], b: &[u8]) -> bool {
    // Forced inline: left to itself the compiler made each a call.
    #[inline(always)]
    fn word(s: &[u8], at: usize) -> u64 {
        s.get(at..)
            .and_then(|w| w.first_chunk::<8>())
            .map_or(0, |w| u64::from_ne_bytes(*w))
    }
    #[inline(always)]
    fn half(s: &[u8], at: usize) -> u32 {
        s.get(at..)
            .and_then(|w| w.first_chunk::<4>())
            .map_or(0, |w| u32::from_ne_bytes(*w))
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0..=3 => a == b,
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

impl Keys {
    pub fn new() -> Self {
        Self::default()
    }

    /// Validates and interns `text`.
    pub fn intern(&mut self, text: &str) -> Result<Key, KeyError> {
        if let Some(key) = self.get(text) {
            return Ok(key);
        }
        validate_key(text)?;
        Ok(self.intern_valid(text))
    }

    fn intern_valid(&mut self, text: &str) -> Key {
        if let Some(key) = self.get(text) {
            return key;
        }
        let parent = parent_key(text).map(|p| self.intern_valid(p));
        let depth = parent.map_or(0, |p| self.infos[p.index()].depth + 1);
        let name: Rc<str> = Rc::from(text);
        let key = Key(u32::try_from(self.infos.len()).expect("more than 4 billion keys"));
        self.infos.push(KeyInfo {
            name: name.clone(),
            parent,
            depth,
        });
        let infos = &self.infos;
        self.by_name
            .insert_unique(hash_text(&name), key, |k| hash_text(&infos[k.index()].name));
        key
    }

    /// Looks a key up without interning it.
    #[inline]
    pub fn get(&self, text: &str) -> Option<Key> {
        let infos = &self.infos;
        self.by_name
            .find(hash_text(text), |k| {
                same_text(infos[k.index()].name.as_bytes(), text.as_bytes())
            })
            .copied()
    }

    pub fn info(&self, key: Key) -> &KeyInfo {
        &self.infos[key.index()]
    }

    pub fn name(&self, key: Key) -> &Rc<str> {
        &self.infos[key.index()].name
    }

    pub fn len(&self) -> usize {
        self.infos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_keys_name_text_and_position() {
        assert_eq!(validate_key(""), Err(KeyError::Empty));
        assert_eq!(
            validate_key("A..B"),
            Err(KeyError::EmptySegment {
                key: "A..B".into(),
                position: 2
            })
        );
        assert_eq!(
            validate_key(".A"),
            Err(KeyError::EmptySegment {
                key: ".A".into(),
                position: 0
            })
        );
        assert_eq!(
            validate_key("A."),
            Err(KeyError::EmptySegment {
                key: "A.".into(),
                position: 2
            })
        );
        assert_eq!(
            validate_key("Player Hurt"),
            Err(KeyError::InvalidChar {
                key: "Player Hurt".into(),
                ch: ' ',
                position: 6
            })
        );
        let err = validate_key("Inv.Ité").unwrap_err().to_string();
        assert!(err.contains("Inv.Ité") && err.contains("byte 6"), "{err}");
        assert!(validate_key("Player.Hurt_2.x").is_ok());
    }

    /// The branch-free check and the erroring one agree on every text:
    /// exhaustively over short texts of the bytes that matter, then on
    /// random ones.
    #[test]
    fn well_formed_agrees_with_validate_key() {
        let alphabet = [b'a', b'Z', b'7', b'_', b'.', b' ', b'-', 0xC3];
        let mut text = Vec::new();
        for len in 0..=5u32 {
            for mut n in 0..alphabet.len().pow(len) {
                text.clear();
                for _ in 0..len {
                    text.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                let text = String::from_utf8_lossy(&text);
                assert_eq!(
                    is_well_formed(&text),
                    validate_key(&text).is_ok(),
                    "{text:?}"
                );
            }
        }
        // Every ASCII character and a few others at every position of a
        // key longer than one word, and a dot pair straddling each place.
        let alphabet = "Abcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGH";
        for base in [6, 7, 8, 9, 11, 15, 16, 17, 24, 31, 32, 33, 40].map(|n| &alphabet[..n]) {
            sweep(base);
        }
        fn sweep(base: &str) {
            for at in 0..base.len() {
                for ch in (0..128u8).map(char::from).chain(['é', 'ÿ', '\u{80}', '😀']) {
                    let mut text = base.to_owned();
                    text.replace_range(at..at + 1, ch.encode_utf8(&mut [0; 4]));
                    assert_eq!(
                        is_well_formed(&text),
                        validate_key(&text).is_ok(),
                        "{text:?}"
                    );
                }
                if at + 1 < base.len() {
                    let mut text = base.to_owned();
                    text.replace_range(at..at + 2, "..");
                    assert!(!is_well_formed(&text), "{text:?}");
                    text.replace_range(at..at + 2, ".a");
                    assert_eq!(is_well_formed(&text), at > 0, "{text:?}");
                }
            }
        }
        proptest::proptest!(|(text in "[A-Za-z0-9_. é-]{0,24}")| {
            proptest::prop_assert_eq!(is_well_formed(&text), validate_key(&text).is_ok());
        });
    }

    #[test]
    fn a_key_over_the_length_or_segment_limit_is_refused_naming_the_limit() {
        let longest = "K".repeat(MAX_KEY_BYTES);
        assert!(validate_key(&longest).is_ok());
        let long = "K".repeat(MAX_KEY_BYTES + 1);
        let err = validate_key(&long).unwrap_err();
        assert_eq!(
            err,
            KeyError::TooLong {
                key: format!("{}…", "K".repeat(64)),
                len: MAX_KEY_BYTES + 1
            }
        );
        assert!(err.to_string().contains("at most 256 bytes"), "{err}");
        let huge = "K".repeat(1 << 20);
        assert!(validate_key(&huge).unwrap_err().to_string().len() < 200);
        let most = vec!["S"; MAX_KEY_SEGMENTS].join(".");
        assert!(validate_key(&most).is_ok());
        let more = vec!["S"; MAX_KEY_SEGMENTS + 1].join(".");
        let err = validate_key(&more).unwrap_err();
        assert_eq!(
            err,
            KeyError::TooManySegments {
                key: more.clone(),
                segments: 17
            }
        );
        assert!(err.to_string().contains("at most 16"), "{err}");
        for text in [&longest, &long, &huge, &most, &more] {
            assert_eq!(is_well_formed(text), validate_key(text).is_ok(), "{text}");
        }
        // Around the bounds, with dots at every place.
        for len in [31, 32, 33, 34, 255, 256, 257] {
            for dots in [15, 16, 17] {
                let mut text = vec![b'a'; len];
                for i in 0..dots {
                    let at = 1 + 2 * i;
                    if at + 1 < len {
                        text[at] = b'.';
                    }
                }
                let text = String::from_utf8(text).unwrap();
                assert_eq!(is_well_formed(&text), validate_key(&text).is_ok(), "{text}");
            }
        }
    }

    #[test]
    fn lookup_tells_texts_apart_at_every_length_and_position() {
        let mut keys = Keys::new();
        let texts: Vec<String> = (1..40).map(|n| "K".repeat(n)).collect();
        let interned: Vec<Key> = texts.iter().map(|t| keys.intern(t).unwrap()).collect();
        for (text, key) in texts.iter().zip(&interned) {
            assert_eq!(keys.get(text), Some(*key));
            for at in 0..text.len() {
                let mut other = text.clone().into_bytes();
                other[at] = b'X';
                let other = String::from_utf8(other).unwrap();
                assert_eq!(keys.get(&other), None, "{other} is not {text}");
            }
        }
        assert!(same_text(b"", b""));
        assert!(!same_text(b"abc", b"abd"));
    }

    #[test]
    fn interning_is_stable_and_interns_ancestors() {
        let mut keys = Keys::new();
        let a = keys.intern("Inv.Items.Row").unwrap();
        let b = keys.intern("Inv.Items.Row").unwrap();
        assert_eq!(a, b);
        let parent = keys.info(a).parent.unwrap();
        assert_eq!(&**keys.name(parent), "Inv.Items");
        assert_eq!(keys.info(a).depth, 2);
        assert_eq!(keys.get("Inv"), Some(keys.info(parent).parent.unwrap()));
        assert!(keys.intern("Inv..Row").is_err());
        assert!(keys.get("Inv..Row").is_none());
    }
}
