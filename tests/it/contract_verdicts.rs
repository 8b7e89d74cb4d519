//! One verdict on a mod's contract: `examples/quest` (a newcomer's mod,
//! plain tables, two keys declared in `mod.toml`, Lua and Rhai) checks and
//! runs cleanly; a copy with a typo'd key and a wrong-type send gets both
//! as errors at their lines from `gantry check`, the same findings at the
//! same lines from the language server in Neovim, both flagged by EmmyLua
//! reading `gantry stubs`, and the wrong send aborted by `gantry run`.
//!
//! Without `nvim` on `PATH` the Neovim part is skipped with one line
//! (`support::program_on_path`); the other three verdicts still hold.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{copy_dir, gantry, stderr as err, stdout as out};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quest")
}

fn run(args: &[&str], dir: &Path) -> Output {
    gantry()
        .arg(args[0])
        .arg(dir)
        .args(&args[1..])
        .output()
        .expect("gantry runs")
}

/// The example's mistakes, made as a newcomer makes them: the listener of
/// `Quest.Done` typo'd as `Quest.Don`, and `Quest.Done` sent an int where
/// `mod.toml` declares a string. Returns the copy and the two lines
/// (1-based): the typo's, the wrong send's.
fn broken_copy() -> (tempfile::TempDir, u32, u32) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example(), dir.path());
    let script = dir.path().join("giver.lua");
    let text = std::fs::read_to_string(&script).unwrap();
    let listener = "ListenMessage(\"Quest.Done\"";
    assert!(text.contains(listener), "giver.lua listens to Quest.Done");
    let typo = text.replacen(listener, "ListenMessage(\"Quest.Don\"", 1)
        + "NotifyMessage(\"Quest.Done\", 7)\n";
    std::fs::write(&script, &typo).unwrap();
    let line_of = |needle: &str| {
        typo.lines()
            .position(|l| l.contains(needle))
            .map(|i| i as u32 + 1)
            .unwrap_or_else(|| panic!("{needle} in giver.lua"))
    };
    (
        dir,
        line_of("\"Quest.Don\""),
        line_of("NotifyMessage(\"Quest.Done\", 7)"),
    )
}

#[test]
fn the_quest_example_checks_clean_and_runs_three_ticks() {
    let dir = example();
    let check = run(&["check"], &dir);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        out(&check),
        err(&check)
    );
    assert_eq!(out(&check), "", "no finding");

    let ran = run(&["run", "--ticks", "3", "--no-table"], &dir);
    assert_eq!(ran.status.code(), Some(0), "{}", err(&ran));
    assert_eq!(
        out(&ran),
        "log: quest wolves pays 50 gold and a sword\n\
         giver: quest wolves is done\n",
        "the plain-table reward reaches Rhai and the quest is finished"
    );
    assert_eq!(err(&ran), "");
}

#[test]
fn a_typo_and_a_wrong_type_get_one_verdict_from_check_the_server_the_stubs_and_run() {
    let (dir, typo, wrong) = broken_copy();
    let expected: BTreeSet<u32> = [typo, wrong].into();

    // `gantry check`: both are errors, at their lines, exit 1.
    let check = run(&["check"], dir.path());
    assert_eq!(check.status.code(), Some(1), "{}", err(&check));
    let found = out(&check);
    let error_lines: BTreeSet<u32> = found
        .lines()
        .filter(|l| l.contains(": error "))
        .filter_map(|l| l.split(':').nth(1)?.parse().ok())
        .collect();
    assert_eq!(error_lines, expected, "{found}");
    assert!(
        found.contains("`Quest.Don`") && found.contains("did you mean `Quest.Done`?"),
        "{found}"
    );
    assert!(
        found.contains("`Quest.Done` (id) expects string, got int"),
        "{found}"
    );

    // EmmyLua's analysis reading `gantry stubs`' output flags the same lines.
    let stubs = run(&["stubs"], dir.path());
    assert!(stubs.status.success(), "{}", err(&stubs));
    let config = dir.path().join(".emmyrc.json");
    std::fs::copy(dir.path().join(".gantry/stubs/emmyrc.json"), &config).unwrap();
    let flagged: BTreeSet<u32> = gantry_test_support::emmylua::check(dir.path(), &config)
        .into_iter()
        .filter(|(file, _)| file.ends_with("giver.lua"))
        .flat_map(|(_, diags)| diags)
        .filter(|d| d.code != "unused")
        .map(|d| d.line)
        .collect();
    assert_eq!(flagged, expected, "EmmyLua on the stubs");

    // `gantry run` aborts the wrong send at its line, naming the key.
    let ran = run(&["run", "--ticks", "1", "--no-table"], dir.path());
    assert_eq!(ran.status.code(), Some(1), "{}", err(&ran));
    let e = err(&ran);
    assert!(
        e.contains(&format!(
            "giver.lua:{wrong}: `Quest.Done` argument 1: expected string, got int"
        )),
        "{e}"
    );

    // The language server, in Neovim: the same findings at the same lines.
    if let Some(nvim) = crate::support::program_on_path("nvim", "install neovim") {
        let lines: BTreeSet<u32> = neovim_diagnostics(&nvim, dir.path(), "giver.lua")
            .into_iter()
            .filter(|(_, severity)| *severity == 1)
            .map(|(line, _)| line)
            .collect();
        assert_eq!(lines, expected, "errors the server sent to Neovim");
    }
}

/// Neovim's built-in client on `gantry lsp`: it opens `script` and writes
/// down each diagnostic as `line severity` (0-based line from Neovim, 1 =
/// error), once two have arrived or 15 s have passed.
const CLIENT: &str = r#"
local bin, root, file, out = os.getenv("GANTRY_BIN"), os.getenv("MOD_DIR"), os.getenv("SCRIPT"), os.getenv("OUT")
local client_id = vim.lsp.start_client({ cmd = { bin, "lsp" }, root_dir = root, name = "gantry" })
vim.cmd("edit " .. file)
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)
vim.wait(15000, function() return #vim.diagnostic.get(buf) >= 2 end, 50)
local lines = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(lines, string.format("%d %d", d.lnum, d.severity))
end
local f = io.open(out, "w")
f:write(table.concat(lines, "\n") .. "\n")
f:close()
vim.lsp.stop_client(client_id)
vim.cmd("qa!")
"#;

/// (1-based line, severity) of each diagnostic Neovim received for
/// `script` of `mod_dir`.
fn neovim_diagnostics(nvim: &Path, mod_dir: &Path, script: &str) -> Vec<(u32, u32)> {
    let scratch = tempfile::tempdir().unwrap();
    let client = scratch.path().join("client.lua");
    std::fs::write(&client, CLIENT).unwrap();
    let received = scratch.path().join("out.txt");
    let status = Command::new(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", client.display()))
        .env("GANTRY_BIN", env!("CARGO_BIN_EXE_gantry"))
        .env("MOD_DIR", mod_dir)
        .env("SCRIPT", mod_dir.join(script))
        .env("OUT", &received)
        .env("XDG_STATE_HOME", scratch.path())
        .env("XDG_CACHE_HOME", scratch.path())
        .status()
        .expect("nvim starts");
    assert!(status.success(), "nvim exited with {status}");
    std::fs::read_to_string(&received)
        .expect("the client wrote what it received")
        .lines()
        .filter_map(|l| {
            let (line, severity) = l.split_once(' ')?;
            Some((line.parse::<u32>().ok()? + 1, severity.parse().ok()?))
        })
        .collect()
}
