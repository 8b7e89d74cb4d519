//! End to end: a real editor on `gantry lsp`. Neovim (0.7 from Debian,
//! `apt-get install neovim`) runs headless with its built-in client
//! (`vim.lsp.start_client`), opens a script of a mod with a signature table,
//! and writes down the diagnostics and the completion items it received.
//!
//! Without `nvim` on `PATH` the test is skipped with one line, except under
//! CI, where it fails (`support::program_on_path`).

mod support;

use std::path::Path;
use std::process::Command;

const TABLE: &str = r#"{
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

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn neovim_receives_diagnostics_and_completions_from_gantry_lsp() {
    let Some(nvim) = support::program_on_path("nvim", "install neovim") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mod_dir = dir.path().join("mod");
    write(&mod_dir.join(".gantry/signatures.json"), TABLE);
    let script = mod_dir.join("main.lua");
    write(&script, SCRIPT);
    let client = dir.path().join("client.lua");
    write(&client, CLIENT);
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
        "diagnostic 0:14 unknown-key: unknown key `Player.Hrut`: it is not in the signature table; did you mean `Player.Hurt`?\n\
         diagnostic 1:14 malformed-key: message key `Player.` has an empty segment at byte 7\n\
         completion Healed Player.Healed(amount: int)\n\
         completion Hurt Player.Hurt(dmg: float, causer: object)\n"
    );
}
