//! Message keys: validation and interning.
//!
//! A key is a hierarchical tag such as `Player.Hurt`: dot-separated segments of
//! `[A-Za-z0-9_]`. Keys arrive from scripts and table files, so a bad one is an
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

/// Why a piece of text is not a valid key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyError {
    /// The text is empty.
    #[error("message key is empty")]
    Empty,
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

/// Checks that `text` is a well-formed key.
pub fn validate_key(text: &str) -> Result<(), KeyError> {
    if text.is_empty() {
        return Err(KeyError::Empty);
    }
    let mut segment_start = 0;
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
