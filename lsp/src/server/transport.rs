//! Gantry's own stdio transport: `Content-Length` framing over any reader
//! and writer, feeding lsp-server's [`Connection`] and [`Message`] types.
//!
//! lsp-server's stdio reader stops at the first message it cannot read,
//! which ends the server. This one never does: a body that is not JSON is
//! answered with JSON-RPC's Parse error (-32700, id `null`), a JSON value
//! that is not a message with Invalid Request (-32600), a frame without a
//! usable `Content-Length` with a Parse error, and reading goes on with the
//! next frame, found again after a broken one ([`FrameReader`]). Sizes are
//! bounded: a header line ([`MAX_HEADER_LINE`]), a header block
//! ([`MAX_HEADER_BLOCK`]) and a body ([`MAX_BODY`]). Only the end of the
//! input (or an I/O error) ends the reader, and the `exit` notification,
//! after which nothing more is read.

use std::io::{self, BufRead, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, RequestId};
use serde_json::{Value, json};
use thiserror::Error;

/// The longest header line: a longer line is no header, and is skipped.
pub const MAX_HEADER_LINE: usize = 8 * 1024;
/// The largest header block (every header line of one message together);
/// a larger one is refused.
pub const MAX_HEADER_BLOCK: usize = 16 * 1024;
/// The largest body accepted (64 MiB): a larger `Content-Length` is
/// refused, and the reader looks for the next message after it rather than
/// reading (or waiting for) that many bytes.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// A failure of the transport's threads.
#[derive(Debug, Error)]
pub enum TransportError {
    #[error("reading the client's messages: {0}")]
    Read(#[source] io::Error),
    #[error("writing to the client: {0}")]
    Write(#[source] io::Error),
    #[error("the transport's {0} thread panicked")]
    Panicked(&'static str),
    #[error("cannot start the transport's {0} thread: {1}")]
    Spawn(&'static str, #[source] io::Error),
}

/// The reader and writer threads of a transport.
#[derive(Debug)]
pub struct IoThreads {
    reader: JoinHandle<Result<(), TransportError>>,
    writer: JoinHandle<Result<(), TransportError>>,
}

impl IoThreads {
    /// Waits for the writer (it ends once every [`Connection`] sender is
    /// dropped, after writing what was sent) and then for the reader, when
    /// it has ended (after `exit` or at the end of the input; one still
    /// blocked on input is left to the process's end). The writer is
    /// joined whatever the reader did.
    pub fn join(self) -> Result<(), TransportError> {
        let written = self
            .writer
            .join()
            .unwrap_or(Err(TransportError::Panicked("writer")));
        let read = if self.reader.is_finished() {
            self.reader
                .join()
                .unwrap_or(Err(TransportError::Panicked("reader")))
        } else {
            tracing::debug!("the reader is still waiting for input; not joined");
            Ok(())
        };
        written.and(read)
    }
}

/// A connection over the process's stdin and stdout.
pub fn stdio() -> Result<(Connection, IoThreads), TransportError> {
    connect(io::BufReader::new(io::stdin()), io::stdout())
}

/// A connection reading framed messages from `input` and writing them to
/// `output`, each on its own thread.
pub fn connect<R, W>(input: R, output: W) -> Result<(Connection, IoThreads), TransportError>
where
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let (to_server, from_client) = crossbeam_channel::bounded::<Message>(0);
    let (to_client, outgoing) = crossbeam_channel::unbounded::<Message>();
    let (reply, replies) = crossbeam_channel::unbounded::<Value>();
    let writer = std::thread::Builder::new()
        .name("gantry-lsp-writer".to_owned())
        .spawn(move || write_loop(output, &outgoing, replies))
        .map_err(|e| TransportError::Spawn("writer", e))?;
    let reader = std::thread::Builder::new()
        .name("gantry-lsp-reader".to_owned())
        .spawn(move || read_loop(input, &to_server, &reply))
        .map_err(|e| TransportError::Spawn("reader", e))?;
    let connection = Connection {
        sender: to_client,
        receiver: from_client,
    };
    Ok((connection, IoThreads { reader, writer }))
}

fn read_loop(
    input: impl BufRead,
    to_server: &Sender<Message>,
    reply: &Sender<Value>,
) -> Result<(), TransportError> {
    let mut input = FrameReader::new(input);
    loop {
        let frame = match input.read_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => return Ok(()),
            Err(e) => return Err(TransportError::Read(e)),
        };
        let message = match frame.and_then(|body| decode(&body)) {
            Ok(message) => message,
            Err(refused) => {
                tracing::warn!(code = refused.code, reason = %refused.message, "refused a message");
                // The writer outlives the reader; a send fails only when
                // the output is gone, and then no answer can be written.
                let _ = reply.send(refused.into_response());
                continue;
            }
        };
        let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
        if to_server.send(message).is_err() {
            // The server stopped listening.
            return Ok(());
        }
        if exit {
            return Ok(());
        }
    }
}

fn write_loop(
    mut output: impl Write,
    outgoing: &Receiver<Message>,
    replies: Receiver<Value>,
) -> Result<(), TransportError> {
    let mut replies = Some(replies);
    let never = crossbeam_channel::never();
    loop {
        select! {
            recv(outgoing) -> message => match message {
                Ok(message) => message.write(&mut output).map_err(TransportError::Write)?,
                // Every sender is gone: the server has ended. Answer the
                // refusals already read, then stop.
                Err(_) => {
                    for value in replies.iter().flat_map(Receiver::try_iter) {
                        write_raw(&mut output, &value).map_err(TransportError::Write)?;
                    }
                    return Ok(());
                }
            },
            recv(replies.as_ref().unwrap_or(&never)) -> value => match value {
                Ok(value) => write_raw(&mut output, &value).map_err(TransportError::Write)?,
                // The reader ended; keep writing the server's messages.
                Err(_) => replies = None,
            },
        }
    }
}

fn write_raw(output: &mut impl Write, value: &Value) -> io::Result<()> {
    let text = value.to_string();
    write!(output, "Content-Length: {}\r\n\r\n", text.len())?;
    output.write_all(text.as_bytes())?;
    output.flush()
}

/// A message refused, with the JSON-RPC error that answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub code: i32,
    pub message: String,
    /// The id to answer, when the refused message carried a usable one.
    pub id: Option<RequestId>,
}

impl Refused {
    fn parse_error(message: String) -> Self {
        Self {
            code: ErrorCode::ParseError as i32,
            message,
            id: None,
        }
    }

    fn invalid(message: String, id: Option<RequestId>) -> Self {
        Self {
            code: ErrorCode::InvalidRequest as i32,
            message,
            id,
        }
    }

    /// The JSON-RPC error response (`id` is `null` when none is known).
    pub fn into_response(self) -> Value {
        let id = self
            .id
            .and_then(|id| serde_json::to_value(id).ok())
            .unwrap_or(Value::Null);
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": self.code, "message": self.message },
        })
    }
}

/// What a frame's headers said.
struct Headers {
    /// The `Content-Length`, or why it is not usable.
    length: Result<usize, String>,
}

/// Reads framed messages from a byte stream and finds the next frame again
/// after a broken one.
///
/// A frame is a block of `Name: value` header lines ended by a blank line
/// (CRLF or bare LF line ends), then `Content-Length` bytes of body. What
/// breaks the framing, and what the reader does:
/// - a block without a usable `Content-Length` (missing, not a number,
///   negative, over [`MAX_BODY`]) or over [`MAX_HEADER_BLOCK`]: refused
///   (Parse error), and the bytes after it are skipped up to the next line
///   that starts a frame — a `Content-Length: N` header, wherever it starts
///   in the line (a body without a final line break runs into the next
///   frame's header);
/// - a line that is no header (a body read as headers, noise): skipped the
///   same way, with a warning;
/// - a body shorter than its `Content-Length`, followed by the next frame:
///   the body read so far holds that frame's `Content-Length: N` header
///   line, which no JSON text can hold (a raw line break cannot sit inside
///   a JSON string, and the header's name can only be inside one). The body
///   is cut there and refused (Parse error, with its id when it is a
///   request), and reading resumes at the header, at once: it does not
///   wait for bytes that will not come.
///
/// So one bad frame costs that frame, never the ones after it.
pub struct FrameReader<R> {
    input: R,
    /// Bytes taken from `input` and handed back, read before it.
    pending: Vec<u8>,
    /// How much of `pending` has been read.
    pending_at: usize,
    /// Set after a broken frame until the next frame starts: only a
    /// `Content-Length` line starts one then.
    resyncing: bool,
    /// Bytes skipped since the last frame, for the warning.
    skipped: usize,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(input: R) -> Self {
        Self {
            input,
            pending: Vec::new(),
            pending_at: 0,
            resyncing: false,
            skipped: 0,
        }
    }

    fn fill(&mut self) -> io::Result<&[u8]> {
        if self.pending_at < self.pending.len() {
            return Ok(&self.pending[self.pending_at..]);
        }
        self.input.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if self.pending_at < self.pending.len() {
            self.pending_at += n;
            if self.pending_at == self.pending.len() {
                self.pending.clear();
                self.pending_at = 0;
            }
        } else {
            self.input.consume(n);
        }
    }

    /// Hands `bytes` back: they are read again before anything else.
    fn unread(&mut self, bytes: &[u8]) {
        let rest = self.pending.split_off(self.pending_at);
        self.pending.clear();
        self.pending.extend_from_slice(bytes);
        self.pending.extend_from_slice(&rest);
        self.pending_at = 0;
    }

    /// Reads up to and including the next `\n`, at most `limit` bytes.
    fn read_line(&mut self, line: &mut Vec<u8>, limit: usize) -> io::Result<()> {
        line.clear();
        while line.len() < limit {
            let buf = self.fill()?;
            if buf.is_empty() {
                break;
            }
            let room = (limit - line.len()).min(buf.len());
            let (take, done) = match buf[..room].iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (room, false),
            };
            line.extend_from_slice(&buf[..take]);
            self.consume(take);
            if done {
                break;
            }
        }
        Ok(())
    }

    /// Skips `line` (read, not a header) up to a `Content-Length` header
    /// inside it, which is handed back to be read as a line of its own.
    fn skip(&mut self, line: &[u8]) {
        self.resyncing = true;
        let from = usize::from(starts_with_length_header(line));
        match find_ignore_case(&line[from..], CONTENT_LENGTH).map(|i| from + i) {
            Some(at) => {
                self.skipped += at;
                self.unread(&line[at..]);
            }
            None if line.last() == Some(&b'\n') => self.skipped += line.len(),
            None => {
                // Cut inside a long line: a header split by the cut is
                // found when its start is read again with what follows.
                let keep = (CONTENT_LENGTH.len() - 1).min(line.len() - 1);
                self.skipped += line.len() - keep;
                self.unread(&line[line.len() - keep..]);
            }
        }
    }

    /// Reads one frame: `Ok(None)` at the end of the input; `Ok(Err(_))`
    /// for a frame refused (its headers, or the body read, are consumed).
    pub fn read_frame(&mut self) -> io::Result<Option<Result<Vec<u8>, Refused>>> {
        let Some(headers) = self.read_headers()? else {
            return Ok(None);
        };
        if self.skipped > 0 {
            tracing::warn!(
                bytes = self.skipped,
                "skipped bytes that were not a message, up to the next Content-Length header"
            );
            self.skipped = 0;
        }
        let length = match headers.length {
            Ok(length) => length,
            Err(reason) => {
                // Where its body ends is unknown: find the next frame.
                self.resyncing = true;
                return Ok(Some(Err(Refused::parse_error(reason))));
            }
        };
        self.read_body(length)
    }

    /// Reads a header block (skipping what is no header before it); `None`
    /// at the end of the input.
    fn read_headers(&mut self) -> io::Result<Option<Headers>> {
        let mut line = Vec::new();
        let mut length: Option<Result<usize, String>> = None;
        let mut block = 0usize;
        loop {
            self.read_line(&mut line, MAX_HEADER_LINE)?;
            if line.is_empty() {
                if block > 0 || self.skipped > 0 {
                    tracing::warn!(
                        skipped = self.skipped,
                        "the input ended inside a message's headers"
                    );
                }
                return Ok(None);
            }
            if line.last() != Some(&b'\n') {
                if line.len() < MAX_HEADER_LINE {
                    tracing::warn!("the input ended inside a message's headers");
                    return Ok(None);
                }
                // Too long for a header line.
                self.skip(&line);
                (block, length) = (0, None);
                continue;
            }
            let text = trim_line_end(&line);
            if text.is_empty() {
                if block == 0 {
                    // Blank lines between frames are skipped.
                    continue;
                }
                let length = length.unwrap_or_else(|| Err("no Content-Length header".to_owned()));
                return Ok(Some(Headers { length }));
            }
            let Some((name, value)) = header(text) else {
                self.skip(&line);
                (block, length) = (0, None);
                continue;
            };
            let is_length = name.eq_ignore_ascii_case(b"Content-Length");
            if !is_length && find_ignore_case(name, b"content-length").is_some() {
                // The end of a body longer than declared, run into the next
                // frame's header (`abcContent-Length: 12`).
                self.skip(&line);
                (block, length) = (0, None);
                continue;
            }
            if block == 0 && self.resyncing && !(is_length && parse_length(value).is_ok()) {
                // Resynchronising: only a usable Content-Length starts a
                // frame; anything else may be a broken body's text.
                self.skip(&line);
                continue;
            }
            self.resyncing = false;
            block += line.len();
            if block > MAX_HEADER_BLOCK {
                self.resyncing = true;
                return Ok(Some(Headers {
                    length: Err(format!(
                        "a message's headers are over the {MAX_HEADER_BLOCK}-byte limit"
                    )),
                }));
            }
            if is_length {
                length = Some(parse_length(value));
            }
        }
    }

    /// Reads a body of `length` bytes, cutting it where the next frame's
    /// header shows it was shorter than declared.
    fn read_body(&mut self, length: usize) -> io::Result<Option<Result<Vec<u8>, Refused>>> {
        let mut body = Vec::with_capacity(length.min(64 * 1024));
        while body.len() < length {
            let buf = self.fill()?;
            if buf.is_empty() {
                tracing::warn!(
                    read = body.len(),
                    declared = length,
                    "the input ended inside a message's body"
                );
                return Ok(None);
            }
            let take = buf.len().min(length - body.len());
            // Look again at the last bytes too: a header split between two
            // reads is found whole.
            let scan_from = body.len().saturating_sub(HEADER_PROBE);
            body.extend_from_slice(&buf[..take]);
            self.consume(take);
            if let Some(at) = length_header_line(&body[scan_from..]) {
                let at = scan_from + at;
                self.unread(&body[at..]);
                body.truncate(at);
                let id = request_id(&body);
                return Ok(Some(Err(Refused {
                    id,
                    ..Refused::parse_error(format!(
                        "the body ended after {at} of the {length} bytes its Content-Length \
                         declared: the next message's header followed"
                    ))
                })));
            }
        }
        Ok(Some(Ok(body)))
    }
}

const CONTENT_LENGTH: &[u8] = b"content-length:";

/// The longest `Content-Length` header line looked for across two reads.
const HEADER_PROBE: usize = 64;

/// A line without its line end (`\r\n` or `\n`).
fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `Name: value` with a name of HTTP token characters (blanks before the
/// colon allowed); the value trimmed.
fn header(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = text.iter().position(|&b| b == b':')?;
    let (name, value) = (text[..colon].trim_ascii_end(), &text[colon + 1..]);
    let token = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
    (!name.is_empty() && name.iter().all(token)).then_some((name, value.trim_ascii()))
}

fn parse_length(value: &[u8]) -> Result<usize, String> {
    let shown = String::from_utf8_lossy(value);
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(format!("Content-Length {shown:?} is not a length"));
    }
    match std::str::from_utf8(value)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        Some(length) if length <= MAX_BODY => Ok(length),
        _ => Err(format!(
            "a body of {shown} bytes is over the {MAX_BODY}-byte limit"
        )),
    }
}

fn starts_with_length_header(line: &[u8]) -> bool {
    line.len() >= CONTENT_LENGTH.len()
        && line[..CONTENT_LENGTH.len()].eq_ignore_ascii_case(CONTENT_LENGTH)
}

/// Where `needle` (lowercase ASCII) first occurs in `haystack`, ignoring
/// ASCII case.
fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, _) = needle.split_first()?;
    let last_start = haystack.len().checked_sub(needle.len())?;
    (0..=last_start).find(|&i| {
        haystack[i].to_ascii_lowercase() == first
            && haystack[i..i + needle.len()].eq_ignore_ascii_case(needle)
    })
}

/// Where a whole `Content-Length: N` line (digits, then a line end) starts
/// in `bytes`: text no JSON body holds. Read back from each line break, so
/// a body without one (as clients write JSON) costs one pass.
fn length_header_line(bytes: &[u8]) -> Option<usize> {
    let blank = |b: &&u8| **b == b' ' || **b == b'\t';
    bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .find_map(|(newline, _)| {
            let line = &bytes[..newline];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = &line[..line.len() - line.iter().rev().take_while(blank).count()];
            let digits = line.iter().rev().take_while(|b| b.is_ascii_digit()).count();
            let line = &line[..line.len() - digits];
            let line = &line[..line.len() - line.iter().rev().take_while(blank).count()];
            let start = line.len().checked_sub(CONTENT_LENGTH.len())?;
            (digits > 0 && line[start..].eq_ignore_ascii_case(CONTENT_LENGTH)).then_some(start)
        })
}

/// The id of a request, if `body` is one: the answer to a refused request
/// carries it, so the client stops waiting.
fn request_id(body: &[u8]) -> Option<RequestId> {
    let value: Value = serde_json::from_slice(body).ok()?;
    value.get("method")?;
    serde_json::from_value(value.get("id")?.clone()).ok()
}

/// A body as a message: Parse error when it is not JSON, Invalid Request
/// when it is JSON but not a JSON-RPC request, notification or response.
pub fn decode(body: &[u8]) -> Result<Message, Refused> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Refused::parse_error(format!("the message is not JSON: {e}")))?;
    let Value::Object(object) = &value else {
        return Err(Refused::invalid(
            "a message must be a JSON object".to_owned(),
            None,
        ));
    };
    let has_method = object.contains_key("method");
    // Answer with the message's id only when it is a request's: a broken
    // response's id is the server's own.
    let id = match object.get("id") {
        None | Some(Value::Null) => None,
        Some(id) => match serde_json::from_value::<RequestId>(id.clone()) {
            Ok(id) => Some(id),
            Err(_) => {
                return Err(Refused::invalid(
                    format!("the id {id} is neither a number nor a string"),
                    None,
                ));
            }
        },
    }
    .filter(|_| has_method);
    if let Some(method) = object.get("method")
        && !method.is_string()
    {
        return Err(Refused::invalid(
            format!("the method {method} is not a string"),
            id,
        ));
    }
    let answers = object.contains_key("result") || object.contains_key("error");
    if !has_method && !answers {
        return Err(Refused::invalid(
            "neither a request, a notification nor a response".to_owned(),
            None,
        ));
    }
    serde_json::from_value::<Message>(value)
        .map_err(|e| Refused::invalid(format!("not a JSON-RPC message: {e}"), id))
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    fn frames(input: &str) -> Vec<Result<Message, Refused>> {
        let mut input = FrameReader::new(Cursor::new(input.as_bytes().to_vec()));
        let mut out = Vec::new();
        while let Some(frame) = input.read_frame().unwrap() {
            out.push(frame.and_then(|body| decode(&body)));
        }
        out
    }

    fn code(result: &Result<Message, Refused>) -> Option<i32> {
        result.as_ref().err().map(|r| r.code)
    }

    #[test]
    fn bad_bodies_are_refused_and_reading_goes_on() {
        let input = [
            frame(r#"{"jsonrpc":"2.0","id":1,"method":"#),
            frame(r#"{"jsonrpc":"2.0","id":9,"method":12}"#),
            frame("[1, 2]"),
            frame(r#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#),
            frame(r#"{"jsonrpc":"2.0","id":4}"#),
            "Content-Length: many\r\n\r\n".to_owned(),
            frame("\u{fffd}\u{0}"),
            "Content-Type: x\r\n\r\n".to_owned(),
            "\r\n".to_owned(),
            frame(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#),
        ]
        .concat();
        let got = frames(&input);
        let codes: Vec<Option<i32>> = got.iter().map(code).collect();
        assert_eq!(
            codes,
            [
                Some(-32700),
                Some(-32600),
                Some(-32600),
                Some(-32600),
                Some(-32600),
                Some(-32700),
                Some(-32700),
                Some(-32700),
                None,
            ]
        );
        assert_eq!(got[1].as_ref().unwrap_err().id, Some(RequestId::from(9)));
        assert!(matches!(&got[8], Ok(Message::Request(r)) if r.method == "shutdown"));
    }

    fn request(id: i32) -> String {
        frame(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"workspace/symbol","params":{{"query":""}}}}"#
        ))
    }

    /// What each frame read gave: `Ok(id)` for a request, `Err(code, id)`
    /// for a refusal.
    fn outcomes(input: &str) -> Vec<Result<String, (i32, Option<String>)>> {
        frames(input)
            .into_iter()
            .map(|frame| match frame {
                Ok(Message::Request(r)) => Ok(r.id.to_string()),
                Ok(other) => panic!("not a request: {other:?}"),
                Err(refused) => Err((refused.code, refused.id.map(|id| id.to_string()))),
            })
            .collect()
    }

    /// `bad`, then two requests: the bad frame is one refusal, the two
    /// requests are read.
    fn assert_recovers_after(bad: &str) {
        let input = format!("{bad}{}{}", request(1), request(2));
        assert_eq!(
            outcomes(&input),
            [Err((-32700, None)), Ok("1".to_owned()), Ok("2".to_owned())],
            "after {:?}",
            &bad[..bad.len().min(80)]
        );
    }

    const BODY: &str =
        r#"{"jsonrpc":"2.0","id":99,"method":"workspace/symbol","params":{"query":""}}"#;

    #[test]
    fn after_a_frame_without_a_usable_length_the_next_frames_are_read() {
        for header in [
            "Content-Type: application/json".to_owned(),
            "Content-Length: many".to_owned(),
            "Content-Length: -5".to_owned(),
            "Content-Length: 99999999999999999999999999".to_owned(),
            format!("Content-Length: {}", MAX_BODY + 1),
            format!("Content-Length: {}", 1u64 << 40),
            "Content-Length:".to_owned(),
        ] {
            // The body, with no line break after it, runs into the next
            // frame's header; and on a line of its own.
            assert_recovers_after(&format!("{header}\r\n\r\n{BODY}"));
            assert_recovers_after(&format!("{header}\r\n\r\n{BODY}\r\n"));
        }
    }

    #[test]
    fn a_body_that_is_not_json_is_refused_and_the_next_frames_are_read() {
        assert_recovers_after(&frame("this is not json"));
        assert_recovers_after(&frame("{\"jsonrpc\": \"2.0\",\n\"id\": 5,"));
    }

    #[test]
    fn a_body_shorter_than_declared_is_cut_at_the_next_frames_header() {
        let input = format!(
            "Content-Length: {}\r\n\r\n{BODY}{}{}",
            BODY.len() + 150,
            request(1),
            request(2)
        );
        // Refused with its id, so the client stops waiting for it.
        assert_eq!(
            outcomes(&input),
            [
                Err((-32700, Some("99".to_owned()))),
                Ok("1".to_owned()),
                Ok("2".to_owned())
            ]
        );
        // Declared far longer than all that follows: the reader does not
        // wait for the bytes (it would never finish reading this input).
        let input = format!("Content-Length: 60000000\r\n\r\n{BODY}{}", request(1));
        assert_eq!(
            outcomes(&input),
            [Err((-32700, Some("99".to_owned()))), Ok("1".to_owned())]
        );
    }

    #[test]
    fn a_body_longer_than_declared_costs_only_its_own_frame() {
        let input = format!(
            "Content-Length: 10\r\n\r\n{BODY}{}{}",
            request(1),
            request(2)
        );
        assert_eq!(
            outcomes(&input),
            [Err((-32700, None)), Ok("1".to_owned()), Ok("2".to_owned())]
        );
        let input = format!("Content-Length: 10\r\n\r\n0123456789abc{}", request(1));
        assert_eq!(outcomes(&input)[1..], [Ok("1".to_owned())]);
    }

    #[test]
    fn header_lines_may_end_in_a_bare_line_feed() {
        let input = format!(
            "Content-Length: {}\n\n{BODY}Content-Length: {}\nContent-Type: x\n\n{BODY}",
            BODY.len(),
            BODY.len()
        );
        assert_eq!(outcomes(&input), [Ok("99".to_owned()), Ok("99".to_owned())]);
    }

    #[test]
    fn noise_between_frames_is_skipped_up_to_the_next_header() {
        // Short noise, a long line without a break (longer than a header
        // line may be, with a header cut in two by that limit), noise
        // before a header on its line.
        let cut = "x".repeat(MAX_HEADER_LINE - 7);
        let input = format!(
            "garbage\r\n{}\r\n{cut}{}{{]}}noise{}",
            "y".repeat(100_000),
            request(1),
            request(2)
        );
        assert_eq!(outcomes(&input), [Ok("1".to_owned()), Ok("2".to_owned())]);
    }

    #[test]
    fn a_header_block_over_its_limit_is_refused() {
        let padding = format!("X-Padding: {}\r\n", "p".repeat(1000));
        let bad = format!(
            "Content-Length: 2\r\n{}\r\n{{}}",
            padding.repeat(MAX_HEADER_BLOCK / 1000 + 1)
        );
        assert_recovers_after(&bad);
    }

    #[test]
    fn a_truncated_body_ends_the_input() {
        assert!(frames("Content-Length: 10\r\n\r\n{}").is_empty());
        assert!(frames("Content-Len").is_empty());
    }

    #[test]
    fn the_parse_error_answer_has_a_null_id() {
        let answer = Refused::parse_error("x".to_owned()).into_response();
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["error"]["code"], -32700);
    }

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_connection_answers_refusals_and_delivers_messages_until_exit() {
        let input = [
            frame("not json"),
            frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#),
            frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
            frame(r#"{"jsonrpc":"2.0","method":"never read"}"#),
        ]
        .concat();
        let out = Shared::default();
        let (connection, threads) = connect(Cursor::new(input.into_bytes()), out.clone()).unwrap();
        let methods: Vec<String> = connection
            .receiver
            .iter()
            .map(|m| match m {
                Message::Notification(n) => n.method,
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(methods, ["initialized", "exit"]);
        drop(connection);
        threads.join().unwrap();
        let written = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert!(written.starts_with("Content-Length: "), "{written}");
        assert!(
            written.contains(r#""id":null"#) && written.contains("-32700"),
            "{written}"
        );
    }
}
