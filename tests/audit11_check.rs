//! Audit 11: `gantry check DIR` and `gantry lsp` as the binary, against
//! issue #8 ("`gantry check DIR` prints the same diagnostics for every script
//! in DIR as `file:line:col: severity code: message` (or `--format json`)
//! and exits 1 when any is an error"; "Never crashes") and DESIGN.md ("`gantry
//! check DIR` runs the language server's diagnostics in batch and exits
//! non-zero on errors").

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// A JSON-RPC message, as raw text (the root package has no JSON
/// dependency; the server's output is compact serde_json).
type Value = String;

const TABLE: &str = r#"{
  "version": 1,
  "keys": {
    "Player.Hurt": { "kind": "event", "origin": "declared",
      "params": [ { "name": "dmg", "type": "float" }, { "name": "causer", "type": "object" } ] },
    "Player.Healed": { "kind": "event", "origin": "observed", "params": [ { "name": "amount", "type": "int" } ] }
  }
}
"#;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs `gantry check ARGS` in `cwd`: (exit code, stdout, stderr).
fn check(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gantry"))
        .arg("check")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_of_a_clean_mod_in_both_languages_exits_0_and_prints_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "mod/.gantry/signatures.json", TABLE);
    write(
        dir.path(),
        "mod/a.lua",
        "NotifyMessage(\"Player.Hurt\", 1.0, self)\n",
    );
    write(
        dir.path(),
        "mod/sub/b.rhai",
        "ListenMessage(\"Player.Hurt\", this, |dmg| {});\n",
    );
    assert_eq!(
        check(dir.path(), &["mod"]),
        (0, String::new(), String::new())
    );
}

/// "`file:line:col: severity code: message`" for Lua and Rhai, 1-based
/// line and column, "exits 1 when any is an error".
#[test]
fn check_prints_one_line_per_finding_in_both_languages_and_exits_1_on_an_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "mod/.gantry/signatures.json", TABLE);
    write(
        dir.path(),
        "mod/a.lua",
        "local x = 1\nNotifyMessage(\"Player.Hurt\", \"ouch\")\n",
    );
    write(
        dir.path(),
        "mod/b.rhai",
        "let y = 2;\n\nNotifyMessage(\"Player.Hrut\", 1.0);\n",
    );
    let (code, stdout, stderr) = check(dir.path(), &["mod"]);
    assert_eq!(
        stdout,
        "mod/a.lua:2:30: error arg-type: argument 1 of `Player.Hurt` (dmg) expects float, got string\n\
         mod/b.rhai:3:15: warning unknown-key: unknown key `Player.Hrut`: it is not in the signature table; did you mean `Player.Hurt`?\n"
    );
    assert_eq!(code, 1, "{stderr}");
}

/// Warnings and hints alone do not fail the check.
#[test]
fn check_exits_0_when_there_are_only_warnings_and_hints() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "mod/.gantry/signatures.json", TABLE);
    write(
        dir.path(),
        "mod/a.rhai",
        "NotifyMessage(\"Player.Jump\");\nNotifyMessage(key);\nNotifyMessage(\"Player.Healed\", 1.5);\n",
    );
    let (code, stdout, _) = check(dir.path(), &["mod"]);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert!(stdout.contains(": warning unknown-key: "), "{stdout}");
    assert!(stdout.contains(": hint non-literal-key: "), "{stdout}");
    assert!(stdout.contains(": warning arg-type: "), "{stdout}");
    assert_eq!(code, 0);
}

/// `--format json`: one JSON document with each finding's file, line,
/// column, severity, code and message; the exit code is the same.
#[test]
fn check_json_format_is_one_document_with_the_same_findings_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "mod/.gantry/signatures.json", TABLE);
    write(
        dir.path(),
        "mod/a.lua",
        "NotifyMessage(\"Player.Hurt\", 1.0, self, 3)\n",
    );
    let (code, stdout, _) = check(dir.path(), &["mod", "--format", "json"]);
    assert_eq!(code, 1);
    let text = stdout.trim();
    assert!(text.starts_with('[') && text.ends_with(']'), "{text}");
    assert!(text.contains("\"too-many-args\""), "{text}");
    assert!(text.contains("\"error\""), "{text}");
    assert!(text.contains("a.lua"), "{text}");
}

/// A directory that does not exist is not a passing check.
#[test]
fn check_of_a_missing_directory_fails_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = check(dir.path(), &["nope"]);
    assert_ne!(code, 0);
    assert_eq!(stdout, "");
    assert!(stderr.contains("nope"), "{stderr}");
}

/// "The table is found by walking up from the document": two mods in one
/// checked directory, each script held to its own mod's table.
#[test]
fn check_holds_each_script_to_the_nearest_table_above_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "mods/a/.gantry/signatures.json", TABLE);
    write(
        dir.path(),
        "mods/b/.gantry/signatures.json",
        &TABLE.replace("Player.Hurt", "Enemy.Hurt"),
    );
    write(
        dir.path(),
        "mods/a/deep/x.lua",
        "NotifyMessage(\"Enemy.Hurt\", 1.0)\n",
    );
    write(
        dir.path(),
        "mods/b/y.rhai",
        "NotifyMessage(\"Enemy.Hurt\", 1.0);\n",
    );
    let (code, stdout, _) = check(dir.path(), &["mods"]);
    assert_eq!(
        stdout,
        "mods/a/deep/x.lua:1:15: warning unknown-key: unknown key `Enemy.Hurt`: it is not in the signature table\n"
    );
    assert_eq!(code, 0);
}

/// Columns after non-ASCII text (here: characters, 1-based — the unit is
/// not fixed by the issue; the server's own ranges are UTF-16).
#[test]
fn check_columns_after_non_ascii_text_count_characters() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m/.gantry/signatures.json", TABLE);
    write(
        dir.path(),
        "m/a.rhai",
        "let s = \"é\"; NotifyMessage(\"Player.Hurt\", true);\n",
    );
    let (_, stdout, _) = check(dir.path(), &["m"]);
    assert!(
        stdout.starts_with("m/a.rhai:1:43: error arg-type"),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------
// `gantry lsp` over stdio.

struct Lsp {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<Value>,
}

impl Lsp {
    fn start() -> Lsp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gantry"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        length = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.unwrap()];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                if tx
                    .send(String::from_utf8_lossy(&body).into_owned())
                    .is_err()
                {
                    return;
                }
            }
        });
        let lsp = Lsp {
            child,
            stdin,
            out: rx,
        };
        lsp.send_json(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
        );
        lsp.response("1").expect("initialize answered");
        lsp.send_json(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
        lsp
    }

    fn send_raw(&self, body: &[u8]) {
        let mut stdin = self.stdin.as_ref().unwrap();
        let _ = write!(stdin, "Content-Length: {}\r\n\r\n", body.len());
        let _ = stdin.write_all(body);
        let _ = stdin.flush();
    }

    fn send_json(&self, message: &str) {
        self.send_raw(message.as_bytes());
    }

    /// The response whose `id` is written `id` (`null` for a parse error).
    fn response(&self, id: &str) -> Option<Value> {
        let wanted = format!("\"id\":{id}");
        loop {
            match self.out.recv_timeout(Duration::from_secs(10)) {
                Ok(m) if !m.contains("\"method\"") && m.contains(&wanted) => return Some(m),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// The exit code, waiting at most 10 s.
    fn exit_code(mut self) -> Option<i32> {
        drop(self.stdin.take());
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status.code().unwrap_or(-1));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

/// LSP: after `shutdown`, `exit` ends the server with code 0.
#[test]
fn lsp_exits_0_after_shutdown_and_exit() {
    let lsp = Lsp::start();
    lsp.send_json(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#);
    assert!(lsp.response("2").is_some());
    lsp.send_json(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    assert_eq!(lsp.exit_code(), Some(0));
}

/// LSP (exit notification): "The server should exit with success code 0 if
/// the shutdown request has been received before; otherwise with error
/// code 1."
#[test]
fn lsp_exits_1_on_exit_without_shutdown() {
    let lsp = Lsp::start();
    lsp.send_json(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    assert_eq!(lsp.exit_code(), Some(1));
}

/// Issue #8: "Never crashes". A message whose body is not JSON (framed
/// correctly) is answered with JSON-RPC's Parse error (-32700, id null) and
/// the server keeps serving the next request; so is a JSON value that is
/// not a JSON-RPC message (JSON-RPC: Invalid Request, -32600).
#[test]
fn lsp_survives_malformed_messages_and_answers_parse_error() {
    let lsp = Lsp::start();
    lsp.send_json(r#"{"jsonrpc":"2.0","id":9,"method":12}"#);
    lsp.send_json(r#"{"jsonrpc":"2.0","id":4,"method":"workspace/symbol","params":{"query":""}}"#);
    assert!(
        lsp.response("4").is_some(),
        "no answer after a JSON value that is not JSON-RPC"
    );
    lsp.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": ");
    let parse_error = lsp.response("null");
    lsp.send_json(r#"{"jsonrpc":"2.0","id":3,"method":"workspace/symbol","params":{"query":""}}"#);
    let answered = lsp.response("3");
    let code = lsp.exit_code();
    assert!(
        answered.is_some(),
        "no answer after a malformed body; the server ended with {code:?}"
    );
    assert!(
        parse_error
            .as_ref()
            .is_some_and(|e| e.contains("\"code\":-32700")),
        "{parse_error:?}"
    );
}
