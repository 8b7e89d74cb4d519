//! Gantry's own stdio transport: `Content-Length` framing over any reader
//! and writer, feeding lsp-server's [`Connection`] and [`Message`] types.
//!
//! lsp-server's stdio reader stops at the first message it cannot read,
//! which ends the server. This one never does: a body that is not JSON is
//! answered with JSON-RPC's Parse error (-32700, id `null`), a JSON value
//! that is not a message with Invalid Request (-32600), a frame without a
//! usable `Content-Length` with a Parse error, and reading goes on with the
//! next frame. Only the end of the input (or an I/O error) ends the reader,
//! and the `exit` notification, after which nothing more is read.

use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, RequestId};
use serde_json::{Value, json};
use thiserror::Error;

/// The longest header line read; longer ones are cut (and the frame refused).
const MAX_HEADER_LINE: u64 = 8 * 1024;
/// The largest body accepted; a larger one is skipped and refused.
const MAX_BODY: usize = 256 * 1024 * 1024;

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
    mut input: impl BufRead,
    to_server: &Sender<Message>,
    reply: &Sender<Value>,
) -> Result<(), TransportError> {
    loop {
        let frame = match read_frame(&mut input) {
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

/// Reads one frame: `Ok(None)` at the end of the input; `Ok(Err(_))` for a
/// frame whose headers give no usable length (its headers are consumed).
pub fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Result<Vec<u8>, Refused>>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut malformed: Option<String> = None;
    let mut seen_header = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = input
            .by_ref()
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            if seen_header {
                tracing::debug!("input ended inside a frame's headers");
            }
            return Ok(None);
        }
        if line.last() != Some(&b'\n') && read as u64 == MAX_HEADER_LINE {
            malformed.get_or_insert_with(|| "a header line is too long".to_owned());
            seen_header = true;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if seen_header {
                break;
            }
            // Blank lines between frames are skipped.
            continue;
        }
        seen_header = true;
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("Content-Length") => {
                let value = value.trim();
                length = Some(
                    value
                        .parse::<usize>()
                        .map_err(|_| format!("Content-Length {value:?} is not a length")),
                );
            }
            Some(_) => {}
            None => {
                malformed.get_or_insert_with(|| format!("malformed header {text:?}"));
            }
        }
    }
    let length = match length {
        Some(Ok(length)) => length,
        Some(Err(reason)) => return Ok(Some(Err(Refused::parse_error(reason)))),
        None => {
            let reason = malformed.unwrap_or_else(|| "no Content-Length header".to_owned());
            return Ok(Some(Err(Refused::parse_error(reason))));
        }
    };
    if length > MAX_BODY {
        io::copy(&mut input.by_ref().take(length as u64), &mut io::sink())?;
        return Ok(Some(Err(Refused::parse_error(format!(
            "a body of {length} bytes is over the {MAX_BODY}-byte limit"
        )))));
    }
    let mut body = Vec::with_capacity(length.min(64 * 1024));
    input.by_ref().take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        tracing::debug!("input ended inside a body");
        return Ok(None);
    }
    Ok(Some(Ok(body)))
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
        let mut input = Cursor::new(input.as_bytes().to_vec());
        let mut out = Vec::new();
        while let Some(frame) = read_frame(&mut input).unwrap() {
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
            "Content-Type: x\r\n\r\n".to_owned(),
            "\r\n".to_owned(),
            frame("\u{fffd}\u{0}"),
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
