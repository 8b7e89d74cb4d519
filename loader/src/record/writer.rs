//! The recorder's writer: compact records on the game thread, JSON lines
//! on a thread of their own.
//!
//! This is the `non_blocking` pattern of `tracing-appender`: the thread
//! that makes the records only appends them, as compact binary records,
//! to a buffer (no formatting, no system call, no allocation once the
//! buffers have been made); a full buffer (64 KiB) is handed to a writer
//! thread over a bounded channel, and the writer formats each record as
//! the recording's JSON line and writes the file. Emptied buffers come
//! back to be filled again.
//!
//! The channel holds [`IN_FLIGHT`] buffers. When the writer falls that
//! far behind, the game thread waits for it: a recording with a record
//! missing would replay as a difference that never happened, so losing
//! records to keep the game's pace is not an option, and an unbounded
//! queue would trade the wait for memory without limit.
//!
//! What has been handed over is written whole, line after line, so a
//! crash leaves a readable prefix: the recorder hands its buffer over at
//! each new tick's first input, once the mods are loaded, and at the end.
//!
//! The compact records (all integers little-endian):
//! - `KEY` id:u32 len:u32 name — a key's name, before its first dispatch;
//! - `TICK` tick:u32 — the tick of the dispatches after it;
//! - `IN`/`OUT` key:u32 source nargs:u32 value… — a dispatch;
//! - `LANE` key:u32 source:u8 id:[u8; 8] nargs:u16 value… — an output a
//!   Lua lane wrote itself ([`lane_head`]): its head one size whatever its
//!   source, the id zero-padded;
//! - `END` ticks:u32 — the run ended cleanly.
//!
//! A source is `0` (global), `1` world:u32, `2` object:u64 or `3` len:u32
//! name (a named source, named on the game thread, which knows its name).
//! A value is a tag and its payload, as [`Tag`] lists.

use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError};
use std::thread::JoinHandle;

use std::cell::{Cell, RefMut};
use std::rc::Rc;

use gantry_host::dispatch_log::{plain_tag, write_plain};
use gantry_host::{LaneSink, LoggedArgs, PlainArg, SendSink, Source, Value};

use super::{write_float, write_str};

/// The size a buffer is handed over at.
pub const BATCH_BYTES: usize = 64 * 1024;
/// Buffers handed over and not written yet, at most, before the game
/// thread waits.
pub const IN_FLIGHT: usize = 4;

const KEY: u8 = 1;
const TICK: u8 = 2;
const IN: u8 = 3;
const OUT: u8 = 4;
const END: u8 = 5;
const LANE: u8 = 6;

/// A value's tag: the plain ones as a lane writes them in the sink
/// ([`plain_tag`]).
#[repr(u8)]
enum Tag {
    Nil = 0,
    False = plain_tag::FALSE,
    True = plain_tag::TRUE,
    /// i64
    Int = plain_tag::INT,
    /// f64
    Float = plain_tag::FLOAT,
    /// len:u32, bytes
    Str = plain_tag::STR,
    /// u64
    Object = 6,
    /// name (len:u32, bytes), fields:u32, (name, value)…
    Struct = 7,
    /// items:u32, value…
    Array = 8,
}

/// The game thread's side: appends records, hands buffers over. The
/// buffer is a [`SendSink`] the Lua lanes share: a lane appends its sends'
/// records to it itself, in order with the recorder's.
pub struct Batcher {
    sink: Rc<SendSink>,
    to_writer: Option<SyncSender<Vec<u8>>>,
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl Batcher {
    /// Starts the writer thread on `file` (its header already written);
    /// `tick` is the host's, which the sink's records are stamped with.
    pub fn start(file: File, tick: Rc<Cell<u32>>) -> std::io::Result<Self> {
        let (to_writer, from_game) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        let (back, spare) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("gantry-record".into())
            .spawn(move || write_batches(file, from_game, back))?;
        Ok(Self {
            sink: SendSink::new(tick, BATCH_BYTES, BATCH_BYTES + 1024),
            to_writer: Some(to_writer),
            spare,
            thread: Some(thread),
        })
    }

    /// The sink the lanes share.
    pub fn sink(&self) -> &Rc<SendSink> {
        &self.sink
    }

    /// The buffer records are appended to (`None` while a lane writes
    /// one, which never calls the recorder then).
    #[inline]
    pub fn buf(&self) -> Option<RefMut<'_, Vec<u8>>> {
        self.sink.bytes()
    }

    /// Hands what the buffer holds to the writer (waiting while
    /// [`IN_FLIGHT`] buffers are); `Err` when the writer is gone.
    #[cold]
    pub fn hand_over(&mut self) -> Result<(), ()> {
        if self.buf().is_none_or(|buf| buf.is_empty()) {
            return Ok(());
        }
        let Some(to_writer) = &self.to_writer else {
            if let Some(mut buf) = self.buf() {
                buf.clear();
            }
            return Err(());
        };
        let next = match self.spare.try_recv() {
            Ok(spare) => spare,
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => {
                Vec::with_capacity(BATCH_BYTES + 1024)
            }
        };
        let full = self.sink.replace(next);
        if to_writer.send(full).is_err() {
            self.to_writer = None;
            return Err(());
        }
        Ok(())
    }

    /// Hands over what is left, lets the writer finish and joins it: the
    /// first error it met, if any.
    pub fn close(&mut self) -> std::io::Result<()> {
        let _ = self.hand_over();
        self.sink.close();
        self.to_writer = None;
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the recording's writer failed")),
        }
    }
}

impl Drop for Batcher {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

// ----- the game thread's records ------------------------------------------

/// A key's name, before its first dispatch.
pub fn key(buf: &mut Vec<u8>, id: u32, name: &str) {
    buf.push(KEY);
    buf.extend_from_slice(&id.to_le_bytes());
    bytes(buf, name.as_bytes());
}

/// The tick of the dispatches that follow.
pub fn tick(buf: &mut Vec<u8>, tick: u32) {
    let mut record = [TICK; 5];
    record[1..].copy_from_slice(&tick.to_le_bytes());
    buf.extend_from_slice(&record);
}

/// The end line's record.
pub fn end(buf: &mut Vec<u8>, ticks: u32) {
    let mut record = [END; 5];
    record[1..].copy_from_slice(&ticks.to_le_bytes());
    buf.extend_from_slice(&record);
}

/// A dispatch. `named` is a named source's name (the others are written
/// by their ids).
#[inline]
pub fn dispatch(
    buf: &mut Vec<u8>,
    input: bool,
    key: u32,
    source: Source,
    named: Option<&str>,
    args: LoggedArgs<'_>,
) {
    // Each piece of a constant size, so that no copy is a call.
    let kind = if input { IN } else { OUT };
    let [k0, k1, k2, k3] = key.to_le_bytes();
    let [n0, n1, n2, n3] = (args.len() as u32).to_le_bytes();
    match source {
        Source::Global => buf.extend_from_slice(&[kind, k0, k1, k2, k3, 0, n0, n1, n2, n3]),
        Source::World(w) => {
            let [w0, w1, w2, w3] = w.get().to_le_bytes();
            buf.extend_from_slice(&[kind, k0, k1, k2, k3, 1, w0, w1, w2, w3, n0, n1, n2, n3]);
        }
        Source::Object(o) => {
            let [o0, o1, o2, o3, o4, o5, o6, o7] = o.get().to_le_bytes();
            buf.extend_from_slice(&[
                kind, k0, k1, k2, k3, 2, o0, o1, o2, o3, o4, o5, o6, o7, n0, n1, n2, n3,
            ]);
        }
        Source::Named(..) => {
            buf.extend_from_slice(&[kind, k0, k1, k2, k3, 3]);
            bytes(buf, named.unwrap_or_default().as_bytes());
            buf.extend_from_slice(&[n0, n1, n2, n3]);
        }
    }
    match args {
        LoggedArgs::Plain(args) => {
            for arg in args {
                plain(buf, arg);
            }
        }
        LoggedArgs::Values(values) => {
            for v in values {
                value(buf, v);
            }
        }
    }
}

/// The head of the `LANE` records of a lane's sends (key, source, count):
/// `None` for a named source (whose name is written with each record) or
/// more values than a `u16` counts.
pub fn lane_head(key: u32, source: Source, count: usize) -> Option<[u8; LaneSink::HEAD]> {
    let mut head = [0u8; LaneSink::HEAD];
    head[0] = LANE;
    head[1..5].copy_from_slice(&key.to_le_bytes());
    match source {
        Source::Global => {}
        Source::World(w) => {
            head[5] = 1;
            head[6..10].copy_from_slice(&w.get().to_le_bytes());
        }
        Source::Object(o) => {
            head[5] = 2;
            head[6..14].copy_from_slice(&o.get().to_le_bytes());
        }
        Source::Named(..) => return None,
    }
    head[14..16].copy_from_slice(&u16::try_from(count).ok()?.to_le_bytes());
    Some(head)
}

#[inline(always)]
fn plain(buf: &mut Vec<u8>, arg: &PlainArg<'_>) {
    write_plain(buf, *arg);
}

fn value(buf: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Nil => buf.push(Tag::Nil as u8),
        Value::Bool(b) => plain(buf, &PlainArg::Bool(*b)),
        Value::Int(n) => plain(buf, &PlainArg::Int(*n)),
        Value::Float(x) => plain(buf, &PlainArg::Float(*x)),
        Value::Str(s) => plain(buf, &PlainArg::Str(s)),
        Value::Object(o) => {
            buf.push(Tag::Object as u8);
            buf.extend_from_slice(&o.get().to_le_bytes());
        }
        Value::Struct(s) => {
            buf.push(Tag::Struct as u8);
            bytes(buf, s.name.as_bytes());
            buf.extend_from_slice(&(s.fields.len() as u32).to_le_bytes());
            for (name, v) in s.fields.iter() {
                bytes(buf, name.as_bytes());
                value(buf, v);
            }
        }
        Value::Array(items) => {
            buf.push(Tag::Array as u8);
            buf.extend_from_slice(&(items.len() as u32).to_le_bytes());
            for v in items.iter() {
                value(buf, v);
            }
        }
    }
}

#[inline]
fn bytes(buf: &mut Vec<u8>, b: &[u8]) {
    buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
    buf.extend_from_slice(b);
}

// ----- the writer thread ---------------------------------------------------

/// The writer thread: formats each buffer's records as lines and writes
/// them, until the game side hangs up. Stops at the first write that
/// fails (the game side then sees the channel closed).
fn write_batches(
    mut file: File,
    from_game: Receiver<Vec<u8>>,
    back: Sender<Vec<u8>>,
) -> std::io::Result<()> {
    let mut lines = Lines::default();
    let mut text = Vec::with_capacity(4 * BATCH_BYTES);
    for mut batch in from_game {
        text.clear();
        lines.format(&batch, &mut text)?;
        file.write_all(&text)?;
        batch.clear();
        let _ = back.send(batch);
    }
    file.flush()
}

/// What the writer knows between buffers: the keys' names (as JSON
/// strings) and the tick, as each line starts (`{"t":…,`); and, since a
/// run sends the same key from the same source many times in a row, the
/// last line's start up to its values with the record head it was made
/// of, and the last float with its text.
struct Lines {
    keys: Vec<Option<Box<[u8]>>>,
    tick: Vec<u8>,
    /// The head (kind, key, source) of the line `prefix` starts; an empty
    /// head matches nothing.
    head: Vec<u8>,
    prefix: Vec<u8>,
    float: Option<(u64, Vec<u8>)>,
}

impl Default for Lines {
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            tick: b"{\"t\":0,".to_vec(),
            head: Vec::new(),
            prefix: Vec::new(),
            float: None,
        }
    }
}

/// Writes `n` in decimal, as `Display` does, without its machinery (the
/// writer writes a few numbers per line).
fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Writes `n` in decimal, as `Display` does.
fn write_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    write_u64(out, n.unsigned_abs());
}

/// A buffer that is no run of records (a bug, never a user's input).
fn malformed() -> std::io::Error {
    std::io::Error::other("the recording's records are malformed")
}

/// Reads a buffer of records.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::io::Result<&'a [u8]> {
        if self.b.len() < n {
            return Err(malformed());
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(head)
    }
    fn u8(&mut self) -> std::io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }
    fn str(&mut self) -> std::io::Result<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| malformed())
    }
}

impl Lines {
    /// Formats the records of `batch` as the recording's lines.
    fn format(&mut self, batch: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        let mut r = Reader { b: batch };
        while !r.b.is_empty() {
            match r.u8()? {
                KEY => {
                    let id = r.u32()? as usize;
                    let mut name = Vec::new();
                    write_str(&mut name, r.str()?);
                    if self.keys.len() <= id {
                        self.keys.resize(id + 1, None);
                    }
                    self.keys[id] = Some(name.into_boxed_slice());
                    self.head.clear();
                }
                TICK => {
                    self.head.clear();
                    self.tick.truncate(5);
                    write_u64(&mut self.tick, u64::from(r.u32()?));
                    self.tick.push(b',');
                }
                LANE => {
                    // `{"t":…,"out":…,"src":…,"args":[…]}`, as for `OUT`.
                    let head = r.take(13)?;
                    let n = u16::from_le_bytes(r.take(2)?.try_into().unwrap_or_default());
                    if self.head.first() == Some(&LANE) && self.head.get(1..) == Some(head) {
                        out.extend_from_slice(&self.prefix);
                    } else {
                        let start = out.len();
                        out.extend_from_slice(&self.tick);
                        out.extend_from_slice(b"\"out\":");
                        let mut h = Reader { b: head };
                        let key = h.u32()? as usize;
                        let name = self.keys.get(key).and_then(Option::as_ref);
                        out.extend_from_slice(name.ok_or_else(malformed)?);
                        out.extend_from_slice(b",\"src\":");
                        match h.u8()? {
                            0 => out.extend_from_slice(b"\"global\""),
                            1 => {
                                out.extend_from_slice(b"\"world#");
                                write_u64(out, u64::from(h.u32()?));
                                out.push(b'"');
                            }
                            2 => {
                                out.extend_from_slice(b"\"object#");
                                write_u64(out, h.u64()?);
                                out.push(b'"');
                            }
                            _ => return Err(malformed()),
                        }
                        out.extend_from_slice(b",\"args\":[");
                        self.head.clear();
                        self.head.push(LANE);
                        self.head.extend_from_slice(head);
                        self.prefix.clear();
                        self.prefix.extend_from_slice(&out[start..]);
                    }
                    self.values(&mut r, out, u32::from(n))?;
                }
                END => {
                    let ticks = r.u32()?;
                    let _ = writeln!(out, "{{\"end\":true,\"ticks\":{ticks}}}");
                }
                kind @ (IN | OUT) => {
                    // `{"t":…,"in"|"out":…,"src":…,"args":[…]}`, as `json!`
                    // writes it.
                    // The head's bytes after its kind: key, source (not a
                    // named one, whose name is in the record).
                    let len = match r.b.get(4) {
                        Some(0) => 5,
                        Some(1) => 9,
                        Some(2) => 13,
                        _ => 0,
                    };
                    let head = r.b.get(..len).unwrap_or_default();
                    if len > 0
                        && self.head.first() == Some(&kind)
                        && self.head.get(1..) == Some(head)
                    {
                        r.b = &r.b[len..];
                        out.extend_from_slice(&self.prefix);
                        self.args(&mut r, out)?;
                        continue;
                    }
                    let start = out.len();
                    out.extend_from_slice(&self.tick);
                    out.extend_from_slice(if kind == IN { b"\"in\":" } else { b"\"out\":" });
                    let key = r.u32()? as usize;
                    let name = self.keys.get(key).and_then(Option::as_ref);
                    out.extend_from_slice(name.ok_or_else(malformed)?);
                    out.extend_from_slice(b",\"src\":");
                    match r.u8()? {
                        0 => out.extend_from_slice(b"\"global\""),
                        1 => {
                            out.extend_from_slice(b"\"world#");
                            write_u64(out, u64::from(r.u32()?));
                            out.push(b'"');
                        }
                        2 => {
                            out.extend_from_slice(b"\"object#");
                            write_u64(out, r.u64()?);
                            out.push(b'"');
                        }
                        3 => write_str(out, r.str()?),
                        _ => return Err(malformed()),
                    }
                    out.extend_from_slice(b",\"args\":[");
                    self.head.clear();
                    if len > 0 {
                        self.head.push(kind);
                        self.head.extend_from_slice(head);
                        self.prefix.clear();
                        self.prefix.extend_from_slice(&out[start..]);
                    }
                    self.args(&mut r, out)?;
                }
                _ => return Err(malformed()),
            }
        }
        Ok(())
    }

    /// A line's values and its end: `…]}` and a newline.
    fn args(&mut self, r: &mut Reader<'_>, out: &mut Vec<u8>) -> std::io::Result<()> {
        let n = r.u32()?;
        self.values(r, out, n)
    }

    /// `n` values and the line's end.
    fn values(&mut self, r: &mut Reader<'_>, out: &mut Vec<u8>, n: u32) -> std::io::Result<()> {
        for i in 0..n {
            if i > 0 {
                out.push(b',');
            }
            self.value(r, out)?;
        }
        out.extend_from_slice(b"]}\n");
        Ok(())
    }

    /// A float, as [`write_float`] writes it; the same float as the last
    /// one is copied.
    fn float(&mut self, bits: u64, out: &mut Vec<u8>) {
        if let Some((last, text)) = &self.float
            && *last == bits
        {
            out.extend_from_slice(text);
            return;
        }
        let start = out.len();
        write_float(out, f64::from_bits(bits));
        let (last, text) = self.float.get_or_insert_with(Default::default);
        *last = bits;
        text.clear();
        text.extend_from_slice(&out[start..]);
    }

    /// One value, as [`super::write_value`] writes it.
    fn value(&mut self, r: &mut Reader<'_>, out: &mut Vec<u8>) -> std::io::Result<()> {
        format_value(self, r, out)
    }
}

/// One value, as [`super::write_value`] writes it.
fn format_value(lines: &mut Lines, r: &mut Reader<'_>, out: &mut Vec<u8>) -> std::io::Result<()> {
    match r.u8()? {
        t if t == Tag::Nil as u8 => out.extend_from_slice(b"null"),
        t if t == Tag::False as u8 => out.extend_from_slice(b"false"),
        t if t == Tag::True as u8 => out.extend_from_slice(b"true"),
        t if t == Tag::Int as u8 => write_i64(out, r.u64()? as i64),
        t if t == Tag::Float as u8 => lines.float(r.u64()?, out),
        t if t == Tag::Str as u8 => write_str(out, r.str()?),
        t if t == Tag::Object as u8 => {
            out.extend_from_slice(b"{\"object\":");
            write_u64(out, r.u64()?);
            out.push(b'}');
        }
        t if t == Tag::Struct as u8 => {
            out.extend_from_slice(b"{\"struct\":");
            write_str(out, r.str()?);
            out.extend_from_slice(b",\"fields\":{");
            for i in 0..r.u32()? {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, r.str()?);
                out.push(b':');
                format_value(lines, r, out)?;
            }
            out.extend_from_slice(b"}}");
        }
        t if t == Tag::Array as u8 => {
            out.push(b'[');
            for i in 0..r.u32()? {
                if i > 0 {
                    out.push(b',');
                }
                format_value(lines, r, out)?;
            }
            out.push(b']');
        }
        _ => return Err(malformed()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gantry_host::ObjectId;
    use gantry_host::value::StructValue;

    /// The lines the writer makes of `values` sent as one dispatch.
    fn line_of(values: &[Value]) -> String {
        let mut buf = Vec::new();
        key(&mut buf, 0, "Quest.Done");
        tick(&mut buf, 3);
        dispatch(
            &mut buf,
            false,
            0,
            Source::Object(ObjectId::from_raw(4).unwrap()),
            None,
            LoggedArgs::Values(values),
        );
        let mut out = Vec::new();
        Lines::default().format(&buf, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_are_written_as_display_writes_them() {
        for n in [0, 7, -7, 10, 1234567890, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            write_i64(&mut out, n);
            assert_eq!(out, n.to_string().into_bytes());
        }
    }

    #[test]
    fn a_dispatch_is_written_as_the_line_the_recording_has_always_had() {
        let reward = StructValue::new("Reward").with("gold", 50i64);
        let values = vec![
            Value::str("wolves \"x\""),
            Value::structure(reward),
            Value::Float(f64::NAN),
            Value::Int(-42),
            Value::Object(ObjectId::from_raw(9).unwrap()),
            Value::array(vec![Value::Nil, Value::Bool(true), Value::Float(0.5)]),
        ];
        let mut expected = Vec::new();
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                expected.push(b',');
            }
            super::super::write_value(&mut expected, v);
        }
        let expected = format!(
            "{{\"t\":3,\"out\":\"Quest.Done\",\"src\":\"object#4\",\"args\":[{}]}}\n",
            String::from_utf8(expected).unwrap()
        );
        assert_eq!(line_of(&values), expected);
    }

    #[test]
    fn lines_that_start_alike_are_written_whole_each_time() {
        let mut buf = Vec::new();
        key(&mut buf, 0, "Hit");
        key(&mut buf, 1, "Miss");
        let send = |buf: &mut Vec<u8>, input: bool, key: u32, x: f64| {
            let args = [PlainArg::Float(x), PlainArg::Int(-1)];
            dispatch(
                buf,
                input,
                key,
                Source::Global,
                None,
                LoggedArgs::Plain(&args),
            );
        };
        send(&mut buf, false, 0, 0.5);
        send(&mut buf, false, 0, 0.5);
        send(&mut buf, true, 0, 0.25);
        tick(&mut buf, 2);
        send(&mut buf, true, 0, 0.25);
        send(&mut buf, true, 1, 0.25);
        let mut out = Vec::new();
        Lines::default().format(&buf, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                "{\"t\":0,\"out\":\"Hit\",\"src\":\"global\",\"args\":[0.5,-1]}\n",
                "{\"t\":0,\"out\":\"Hit\",\"src\":\"global\",\"args\":[0.5,-1]}\n",
                "{\"t\":0,\"in\":\"Hit\",\"src\":\"global\",\"args\":[0.25,-1]}\n",
                "{\"t\":2,\"in\":\"Hit\",\"src\":\"global\",\"args\":[0.25,-1]}\n",
                "{\"t\":2,\"in\":\"Miss\",\"src\":\"global\",\"args\":[0.25,-1]}\n",
            )
        );
    }
}
