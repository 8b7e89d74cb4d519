//! `gantry lsp` as the binary: exit codes after shutdown and exit, malformed
//! messages survived; and a real editor on it: Neovim (0.7 from Debian,
//! `apt-get install neovim`) runs headless with its built-in client, opens
//! a script of a mod with a signature table, and writes down the
//! diagnostics and completion items it received; then the document
//! symbols, inlay hints and code lenses it is shown, and a rename it
//! applies to the script and the table.
//!
//! Without `nvim` on `PATH` the Neovim test is skipped with one line
//! (`skipped: nvim not found`, which `.ci/run` looks for), except under CI,
//! where it fails (`support::program_on_path`).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// A JSON-RPC message, as raw text (the root package has no JSON
/// dependency; the server's output is compact serde_json).
type Value = String;

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

/// "Never crashes". A message whose body is not JSON (framed
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

const NEOVIM_TABLE: &str = r#"{
  "version": 1,
  "keys": {
    "Player.Hurt": { "kind": "event", "origin": "declared",
      "params": [ { "name": "dmg", "type": "float" }, { "name": "causer", "type": "object" } ] },
    "Player.Healed": { "params": [ { "name": "amount", "type": "int" } ] }
  }
}
"#;

const SCRIPT: &str = r#"NotifyMessage("Player.Hrut", 1.0)
NotifyMessage("Player.", 1.0)
"#;

const CLIENT: &str = r#"
local bin, root, file, out = os.getenv("GANTRY_BIN"), os.getenv("MOD_DIR"), os.getenv("SCRIPT"), os.getenv("OUT")
local lines = {}
local client_id = vim.lsp.start_client({ cmd = { bin, "lsp" }, root_dir = root, name = "gantry" })
vim.cmd("edit " .. file)
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)
vim.wait(15000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(buf)) do
  local lsp = d.user_data and d.user_data.lsp or {}
  table.insert(lines, string.format("diagnostic %d:%d %s: %s", d.lnum, d.col, d.code or lsp.code or "?", d.message))
end
local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 1, character = 22 } }
local results = vim.lsp.buf_request_sync(buf, "textDocument/completion", params, 10000)
for _, res in pairs(results or {}) do
  local items = res.result and (res.result.items or res.result) or {}
  for _, item in ipairs(items) do
    table.insert(lines, "completion " .. item.label .. " " .. (item.detail or ""))
  end
end
local f = io.open(out, "w")
f:write(table.concat(lines, "\n") .. "\n")
f:close()
vim.lsp.stop_client(client_id)
vim.cmd("qa!")
"#;

fn write_file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn neovim_receives_diagnostics_and_completions_from_gantry_lsp() {
    let Some(nvim) = crate::support::program_on_path("nvim", "install neovim") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mod_dir = dir.path().join("mod");
    write_file(&mod_dir.join(".gantry/signatures.json"), NEOVIM_TABLE);
    let script = mod_dir.join("main.lua");
    write_file(&script, SCRIPT);
    let client = dir.path().join("client.lua");
    write_file(&client, CLIENT);
    let out = dir.path().join("out.txt");

    let status = Command::new(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", client.display()))
        .env("GANTRY_BIN", env!("CARGO_BIN_EXE_gantry"))
        .env("MOD_DIR", &mod_dir)
        .env("SCRIPT", &script)
        .env("OUT", &out)
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path())
        .status()
        .expect("nvim starts");
    assert!(status.success(), "nvim exited with {status}");
    let received = std::fs::read_to_string(&out).expect("the client wrote what it received");
    assert_eq!(
        received,
        "diagnostic 0:14 unknown-key: `Player.Hrut` is sent but listened to nowhere and declared nowhere; did you mean `Player.Hurt`?\n\
         diagnostic 1:14 malformed-key: message key `Player.` has an empty segment at byte 7\n\
         completion Healed Player.Healed(amount: int)\n\
         completion Hurt Player.Hurt(dmg: float, causer: object)\n"
    );
}

const EDITING_SCRIPT: &str = r#"NotifyMessage("Player.Hurt", 1.5, nil)
ListenMessage("Player.Hurt", nil, function(dmg)
  print(dmg)
end)
"#;

/// Asks for document symbols, inlay hints and code lenses, then renames
/// `Player.Hurt` and applies the edit as Neovim does, writing down what it
/// got and the edited lines of the script and the table.
const EDITING_CLIENT: &str = r#"
local bin, root, file, out = os.getenv("GANTRY_BIN"), os.getenv("MOD_DIR"), os.getenv("SCRIPT"), os.getenv("OUT")
local lines = {}
local client_id = vim.lsp.start_client({ cmd = { bin, "lsp" }, root_dir = root, name = "gantry",
  workspace_folders = { { uri = vim.uri_from_fname(root), name = "mod" } } })
vim.cmd("edit " .. file)
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)
vim.wait(15000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
local doc = { uri = vim.uri_from_bufnr(buf) }
local function ask(method, params)
  local results = vim.lsp.buf_request_sync(buf, method, params, 10000) or {}
  for _, res in pairs(results) do
    if res.error then
      table.insert(lines, method .. " error " .. res.error.message)
    end
    return res.result
  end
end
for _, group in ipairs(ask("textDocument/documentSymbol", { textDocument = doc }) or {}) do
  for _, child in ipairs(group.children or {}) do
    table.insert(lines, "symbol " .. group.name .. " " .. child.name)
  end
end
local hints = ask("textDocument/inlayHint", { textDocument = doc,
  range = { start = { line = 0, character = 0 }, ["end"] = { line = 4, character = 0 } } })
for _, hint in ipairs(hints or {}) do
  table.insert(lines, string.format("hint %d:%d %s", hint.position.line, hint.position.character, hint.label))
end
for _, lens in ipairs(ask("textDocument/codeLens", { textDocument = doc }) or {}) do
  table.insert(lines, string.format("lens %d %s %s", lens.range.start.line, lens.command.title, lens.command.command))
end
local edit = ask("textDocument/rename", { textDocument = doc,
  position = { line = 0, character = 17 }, newName = "Player.Harmed" })
if edit then
  vim.lsp.util.apply_workspace_edit(edit, "utf-16")
  table.insert(lines, "renamed " .. vim.api.nvim_buf_get_lines(buf, 0, 2, false)[1])
  table.insert(lines, "renamed " .. vim.api.nvim_buf_get_lines(buf, 0, 2, false)[2])
  local table_buf = vim.fn.bufnr(root .. "/.gantry/signatures.json")
  local text = table.concat(vim.api.nvim_buf_get_lines(table_buf, 0, -1, false), "\n")
  table.insert(lines, "table has Player.Harmed: " .. tostring(text:find('"Player.Harmed"', 1, true) ~= nil))
end
local f = io.open(out, "w")
f:write(table.concat(lines, "\n") .. "\n")
f:close()
vim.lsp.stop_client(client_id)
vim.cmd("qa!")
"#;

#[test]
fn neovim_renames_a_key_and_shows_symbols_inlay_hints_and_code_lenses() {
    let Some(nvim) = crate::support::program_on_path("nvim", "install neovim") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mod_dir = dir.path().join("mod");
    write_file(&mod_dir.join(".gantry/signatures.json"), NEOVIM_TABLE);
    let script = mod_dir.join("main.lua");
    write_file(&script, EDITING_SCRIPT);
    let client = dir.path().join("client.lua");
    write_file(&client, EDITING_CLIENT);
    let out = dir.path().join("out.txt");

    let status = Command::new(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", client.display()))
        .env("GANTRY_BIN", env!("CARGO_BIN_EXE_gantry"))
        .env("MOD_DIR", &mod_dir)
        .env("SCRIPT", &script)
        .env("OUT", &out)
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path())
        .status()
        .expect("nvim starts");
    assert!(status.success(), "nvim exited with {status}");
    let received = std::fs::read_to_string(&out).expect("the client wrote what it received");
    assert_eq!(
        received,
        "symbol sends Player.Hurt\n\
         symbol listens Player.Hurt\n\
         hint 0:29 dmg:\n\
         hint 0:34 causer:\n\
         lens 0 1 sender · 1 listener gantry.showReferences\n\
         lens 1 1 sender · 1 listener gantry.showReferences\n\
         renamed NotifyMessage(\"Player.Harmed\", 1.5, nil)\n\
         renamed ListenMessage(\"Player.Harmed\", nil, function(dmg)\n\
         table has Player.Harmed: true\n"
    );
}
