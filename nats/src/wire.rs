//! The payload a bridged message carries: a small hand-written binary
//! format over the hub's [`Value`].
//!
//! Why not serde with postcard or bincode: the hub's values are `Rc`s, so a
//! serde format would first copy them into an owned mirror type and back;
//! and a payload comes from a peer, so decoding must be bounded in depth
//! as well as in size. serde's derived decoders recurse without a limit:
//! a few kilobytes of nested arrays would overflow the game thread's
//! stack. This format is as compact as postcard (varints, one tag byte per
//! value), keeps each value's type (an int stays an int, a float a float),
//! refuses nesting past [`MAX_DEPTH`] and never allocates more than the
//! payload's own length justifies.
//!
//! Layout: `version (1) | node id (u64 LE) | count (varint) | value*`,
//! where a value is a tag byte and its body (see `Tag`). The sender's node
//! id rides in the payload rather than in a NATS header because a
//! JetStream KV entry (a stored message) keeps no headers: one envelope
//! serves live, stored and once messages, and a node drops its own.

use std::rc::Rc;

use bytes::BufMut;
use gantry_host::value::shared_name;
use gantry_host::{StructValue, Value};
use thiserror::Error;

/// The format's version byte: a peer speaking another is refused.
pub const VERSION: u8 = 1;

/// The deepest nesting of arrays and structs a payload may carry.
pub const MAX_DEPTH: usize = 32;

/// The most arguments one message carries (the hub's own limit is lower).
const MAX_ARGS: u64 = 255;

/// Why a payload could not be read. Names the byte where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("payload is {len} bytes, shorter than the 9-byte envelope")]
    Short { len: usize },
    #[error("payload speaks format version {got}, this node speaks {VERSION}")]
    Version { got: u8 },
    #[error("payload ends early at byte {at}")]
    Truncated { at: usize },
    #[error("unknown value tag {tag} at byte {at}")]
    Tag { tag: u8, at: usize },
    #[error("text at byte {at} is not UTF-8")]
    Utf8 { at: usize },
    #[error("values nest deeper than {MAX_DEPTH} at byte {at}")]
    TooDeep { at: usize },
    #[error("a count of {count} at byte {at} exceeds what the payload can hold")]
    Count { count: u64, at: usize },
    #[error("{extra} stray bytes after the last value")]
    Trailing { extra: usize },
    /// Only on encoding: an object id names something in this process.
    #[error("argument {position} is an object ({id}), which means nothing on another node")]
    Object { position: usize, id: u64 },
}

/// One value's tag byte.
#[repr(u8)]
enum Tag {
    Nil = 0,
    False = 1,
    True = 2,
    Int = 3,
    Float = 4,
    Str = 5,
    Struct = 6,
    Array = 7,
}

/// Encodes `args` sent by `node` into `out` (cleared first).
pub fn encode(node: u64, args: &[Value], out: &mut Vec<u8>) -> Result<(), WireError> {
    out.clear();
    encode_to(node, args, out)
}

/// Encodes `args` sent by `node` after what `out` holds already: a
/// `Vec`, or the bridge's arena of payloads (written in place there, not
/// copied in from a scratch one).
pub fn encode_to(node: u64, args: &[Value], out: &mut impl BufMut) -> Result<(), WireError> {
    out.put_u8(VERSION);
    out.put_slice(&node.to_le_bytes());
    varint(out, args.len() as u64);
    for (position, value) in args.iter().enumerate() {
        value_into(out, value).map_err(|id| WireError::Object { position, id })?;
    }
    Ok(())
}

/// The sender's node id, read without decoding the values (a node drops
/// its own messages before it pays for them).
pub fn node_of(payload: &[u8]) -> Option<u64> {
    let bytes: [u8; 8] = payload.get(1..9)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// Decodes a payload: the sender's node id and the values.
pub fn decode(payload: &[u8]) -> Result<(u64, Vec<Value>), WireError> {
    let mut values = Vec::new();
    let node = decode_into(payload, &mut values)?;
    Ok((node, values))
}

/// Decodes a payload's values into `values` (cleared first), whose room
/// a receiver keeps from one message to the next; returns the sender's
/// node id.
pub fn decode_into(payload: &[u8], values: &mut Vec<Value>) -> Result<u64, WireError> {
    decode_after(payload, values, &[])
}

/// [`decode_into`], given the values of the message before (whatever
/// its key: only equal bytes are shared): a text argument equal to the
/// one at its place there shares its string instead of a new one being
/// checked and allocated. A stream of
/// one key's sends mostly repeats its texts (a chat channel's name, an
/// event's kind), and a string per argument per message was a large
/// share of a receiving game thread's work.
pub fn decode_after(
    payload: &[u8],
    values: &mut Vec<Value>,
    before: &[Value],
) -> Result<u64, WireError> {
    values.clear();
    if payload.len() < 9 {
        return Err(WireError::Short { len: payload.len() });
    }
    if payload[0] != VERSION {
        return Err(WireError::Version { got: payload[0] });
    }
    let node = node_of(payload).unwrap_or_default();
    let mut reader = Reader {
        bytes: payload,
        at: 9,
    };
    let count = reader.count()?;
    if count > MAX_ARGS {
        return Err(WireError::Count {
            count,
            at: reader.at,
        });
    }
    values.reserve(count as usize);
    for i in 0..count as usize {
        let value = match before.get(i) {
            Some(Value::Str(last)) if reader.peek() == Some(Tag::Str as u8) => {
                reader.at += 1;
                let (at, bytes) = reader.text_bytes()?;
                if bytes == last.as_bytes() {
                    Value::Str(last.clone())
                } else {
                    Value::Str(Rc::from(utf8(bytes, at)?))
                }
            }
            _ => reader.value(0)?,
        };
        values.push(value);
    }
    if reader.at != payload.len() {
        return Err(WireError::Trailing {
            extra: payload.len() - reader.at,
        });
    }
    Ok(node)
}

/// Writes one value; `Err` carries the id of an object met on the way.
fn value_into(out: &mut impl BufMut, value: &Value) -> Result<(), u64> {
    match value {
        Value::Nil => out.put_u8(Tag::Nil as u8),
        Value::Bool(false) => out.put_u8(Tag::False as u8),
        Value::Bool(true) => out.put_u8(Tag::True as u8),
        Value::Int(i) => {
            out.put_u8(Tag::Int as u8);
            varint(out, ((i << 1) ^ (i >> 63)) as u64);
        }
        Value::Float(f) => {
            out.put_u8(Tag::Float as u8);
            out.put_slice(&f.to_le_bytes());
        }
        Value::Str(s) => {
            out.put_u8(Tag::Str as u8);
            text(out, s);
        }
        Value::Object(o) => return Err(o.get()),
        Value::Struct(s) => {
            out.put_u8(Tag::Struct as u8);
            text(out, &s.name);
            varint(out, s.fields.len() as u64);
            for (name, field) in &s.fields {
                text(out, name);
                value_into(out, field)?;
            }
        }
        Value::Array(items) => {
            out.put_u8(Tag::Array as u8);
            varint(out, items.len() as u64);
            for item in items.iter() {
                value_into(out, item)?;
            }
        }
    }
    Ok(())
}

fn text(out: &mut impl BufMut, s: &str) {
    varint(out, s.len() as u64);
    out.put_slice(s.as_bytes());
}

fn varint(out: &mut impl BufMut, mut n: u64) {
    while n >= 0x80 {
        out.put_u8((n as u8) | 0x80);
        n >>= 7;
    }
    out.put_u8(n as u8);
}

/// `bytes`, read from `at` in a payload, as text.
fn utf8(bytes: &[u8], at: usize) -> Result<&str, WireError> {
    std::str::from_utf8(bytes).map_err(|_| WireError::Utf8 { at })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn byte(&mut self) -> Result<u8, WireError> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or(WireError::Truncated { at: self.at })?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let start = self.at;
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(WireError::Count {
            count: n,
            at: start,
        })
    }

    /// A count of things that each take at least one byte: never more
    /// than the bytes left, so a hostile count allocates nothing.
    fn count(&mut self) -> Result<u64, WireError> {
        let at = self.at;
        let count = self.varint()?;
        if count > (self.bytes.len() - self.at) as u64 {
            return Err(WireError::Count { count, at });
        }
        Ok(count)
    }

    fn text(&mut self) -> Result<&'a str, WireError> {
        let (at, bytes) = self.text_bytes()?;
        utf8(bytes, at)
    }

    /// A text's bytes, not yet checked to be UTF-8, and where they start.
    fn text_bytes(&mut self) -> Result<(usize, &'a [u8]), WireError> {
        let len = self.count()? as usize;
        let at = self.at;
        self.at += len;
        // `count` checked that `len` bytes are left.
        Ok((at, &self.bytes[at..at + len]))
    }

    fn value(&mut self, depth: usize) -> Result<Value, WireError> {
        let at = self.at;
        let tag = self.byte()?;
        Ok(match tag {
            0 => Value::Nil,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => {
                let z = self.varint()?;
                Value::Int(((z >> 1) as i64) ^ -((z & 1) as i64))
            }
            4 => {
                let bytes: [u8; 8] = self
                    .bytes
                    .get(self.at..self.at + 8)
                    .and_then(|b| b.try_into().ok())
                    .ok_or(WireError::Truncated { at: self.at })?;
                self.at += 8;
                Value::Float(f64::from_le_bytes(bytes))
            }
            5 => Value::Str(Rc::from(self.text()?)),
            6 | 7 if depth >= MAX_DEPTH => return Err(WireError::TooDeep { at }),
            6 => {
                let name = shared_name(self.text()?);
                let count = self.count()?;
                let mut fields = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    let field = shared_name(self.text()?);
                    fields.push((field, self.value(depth + 1)?));
                }
                Value::Struct(Rc::new(StructValue { name, fields }))
            }
            7 => {
                let count = self.count()?;
                let mut items = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    items.push(self.value(depth + 1)?);
                }
                Value::Array(Rc::new(items))
            }
            tag => return Err(WireError::Tag { tag, at }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(values: Vec<Value>) -> Vec<Value> {
        let mut out = Vec::new();
        encode(7, &values, &mut out).unwrap();
        let (node, back) = decode(&out).unwrap();
        assert_eq!(node, 7);
        back
    }

    #[test]
    fn values_cross_with_their_types() {
        let s = StructValue::new("Pos").with("x", 1.5).with("name", "a");
        let values = vec![
            Value::Int(-3),
            Value::Float(2.0),
            Value::str("hé"),
            Value::Bool(true),
            Value::Nil,
            Value::structure(s),
            Value::array(vec![Value::Int(i64::MIN), Value::Int(i64::MAX)]),
        ];
        let back = round(values.clone());
        assert_eq!(format!("{back:?}"), format!("{values:?}"));
    }

    #[test]
    fn a_text_repeated_from_the_message_before_is_shared_and_a_changed_one_is_not() {
        let mut out = Vec::new();
        let mut before = Vec::new();
        encode(7, &[Value::str("hello"), Value::Int(1)], &mut out).unwrap();
        decode_into(&out, &mut before).unwrap();
        let mut values = Vec::new();
        encode(7, &[Value::str("hello"), Value::str("x")], &mut out).unwrap();
        decode_after(&out, &mut values, &before).unwrap();
        assert_eq!(format!("{values:?}"), r#"[Str("hello"), Str("x")]"#);
        let (Value::Str(a), Value::Str(b)) = (&values[0], &before[0]) else {
            panic!("texts expected");
        };
        assert!(Rc::ptr_eq(a, b));
        encode(7, &[Value::str("hellO"), Value::Int(2)], &mut out).unwrap();
        decode_after(&out, &mut values, &before).unwrap();
        assert_eq!(format!("{values:?}"), r#"[Str("hellO"), Int(2)]"#);
        // A changed text that is not UTF-8 is refused as before.
        encode(7, &[Value::str("hello")], &mut out).unwrap();
        *out.last_mut().unwrap() = 0xff;
        assert!(matches!(
            decode_after(&out, &mut values, &before),
            Err(WireError::Utf8 { .. })
        ));
        // A text shorter than its count says is refused as before.
        encode(7, &[Value::str("hellO"), Value::Int(2)], &mut out).unwrap();
        let cut = &out[..out.len() - 3];
        assert!(matches!(
            decode_after(cut, &mut values, &before),
            Err(WireError::Count { .. } | WireError::Truncated { .. })
        ));
    }

    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        let mut payload = vec![VERSION];
        payload.extend_from_slice(&0u64.to_le_bytes());
        payload.push(1);
        payload.extend(std::iter::repeat_n(7u8, 100_000).flat_map(|t| [t, 1]));
        assert!(matches!(decode(&payload), Err(WireError::TooDeep { .. })));
    }

    #[test]
    fn a_huge_count_allocates_nothing() {
        let mut payload = vec![VERSION];
        payload.extend_from_slice(&0u64.to_le_bytes());
        payload.push(1);
        payload.push(7);
        payload.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(matches!(decode(&payload), Err(WireError::Count { .. })));
    }
}
