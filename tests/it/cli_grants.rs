//! `[grants]` in a mod's `mod.toml`, as `gantry run` and `gantry check`
//! hold the mod to them: a call outside them, from Lua or Rhai, baked or
//! generic, is an error naming the mod, the key and the grant it lacks and
//! reaches no listener; `check` reports it at its file and line before
//! any run; a mod without `[grants]` may use everything; a malformed
//! `[grants]` stops the run naming the field.

use std::path::Path;
use std::process::{Command, Output};

const GRANTED: &str = r#"[mod]
name = "ui"

[grants]
send = ["Ui"]
listen = ["Quest", "Ui", "Game"]
"#;

const LISTENER: &str = "ListenMessage(\"Quest\", nil, function(n) print(\"heard\", n) end, { match = \"partial\" })\n\
                        ListenMessage(\"Ui.Open\", nil, function(n) print(\"opened\", n) end)\n";

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// `gantry run DIR` (no table, no tick) or `gantry check DIR`.
fn gantry(command: &str, dir: &Path) -> Output {
    let mut gantry = Command::new(env!("CARGO_BIN_EXE_gantry"));
    gantry.arg(command).arg(dir).env("GANTRY_LOG", "off");
    if command == "run" {
        gantry.args(["--no-table", "--ticks", "0"]);
    }
    gantry.output().expect("gantry runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A mod folder with the listener script and `scripts` beside it.
fn mod_folder(manifest: Option<&str>, scripts: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if let Some(manifest) = manifest {
        write(dir.path(), "mod.toml", manifest);
    }
    write(dir.path(), "a_listener.lua", LISTENER);
    for (name, source) in scripts {
        write(dir.path(), name, source);
    }
    dir
}

#[test]
fn a_lua_send_outside_the_grants_is_an_error_naming_mod_key_and_grant_and_reaches_no_listener() {
    let dir = mod_folder(
        Some(GRANTED),
        &[(
            "b.lua",
            "NotifyMessage(\"Ui.Open\", 1)\nNotifyMessage(\"Quest.Start\", 2)\nprint(\"not here\")\n",
        )],
    );
    let out = gantry("run", dir.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("opened\t1"), "{stdout}");
    assert!(!stdout.contains("heard"), "{stdout}");
    assert!(!stdout.contains("not here"), "{stdout}");
    assert!(
        stderr.contains(
            "b.lua:2: mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only"
        ),
        "{stderr}"
    );
}

#[test]
fn a_generic_lua_send_outside_the_grants_is_refused_as_the_baked_one_is() {
    let dir = mod_folder(
        Some(GRANTED),
        &[(
            "b.lua",
            "local key = \"Quest\" .. \".Start\"\nNotifyObjectMessage(self, key, 2)\n",
        )],
    );
    let out = gantry("run", dir.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!stdout.contains("heard"), "{stdout}");
    assert!(
        stderr.contains(
            "b.lua:2: mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only"
        ),
        "{stderr}"
    );
}

#[test]
fn a_rhai_send_outside_the_grants_is_refused_baked_and_generic() {
    let dir = mod_folder(
        Some(GRANTED),
        &[
            ("b.rhai", "NotifyMessage(\"Quest.Start\", 1);\n"),
            (
                "c.rhai",
                "let key = \"Quest\" + \".End\";\n\nNotifyMessage(key, 2);\n",
            ),
        ],
    );
    let out = gantry("run", dir.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!stdout.contains("heard"), "{stdout}");
    assert!(
        stderr.contains("mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only"),
        "{stderr}"
    );
    assert!(
        stderr.contains("mod \"ui\" may not send \"Quest.End\": its grants send to Ui only"),
        "{stderr}"
    );
    assert!(
        stderr.contains("b.rhai") && stderr.contains("c.rhai"),
        "{stderr}"
    );
}

#[test]
fn a_mod_without_grants_may_use_everything() {
    let manifest = "[mod]\nname = \"free\"\n";
    let dir = mod_folder(
        Some(manifest),
        &[("b.lua", "NotifyMessage(\"Quest.Start\", 2)\n")],
    );
    let out = gantry("run", dir.path());
    assert!(
        text(&out.stdout).contains("heard\t2"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn check_reports_calls_outside_the_grants_at_their_file_and_line() {
    let dir = mod_folder(
        Some(GRANTED),
        &[
            (
                "b.lua",
                "NotifyMessage(\"Ui.Open\", 1)\nNotifyMessage(\"Quest.Start\", 2)\n",
            ),
            ("c.rhai", "\nRunHook(\"Ui.Draw\", 1);\n"),
        ],
    );
    let out = gantry("check", dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let grants: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("not-granted"))
        .collect();
    assert_eq!(
        grants,
        [
            format!(
                "{}: error not-granted: mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only",
                dir.path().join("b.lua:2:15").display()
            ),
            format!(
                "{}: error not-granted: mod \"ui\" may not hook \"Ui.Draw\": its grants hook no key (no `hook` grant)",
                dir.path().join("c.rhai:2:9").display()
            ),
        ],
        "{stdout}"
    );
}

#[test]
fn a_malformed_grants_table_stops_the_run_naming_the_field() {
    let manifest = "[mod]\nname = \"ui\"\n\n[grants]\nsend = \"Ui\"\nlisen = []\n";
    let dir = mod_folder(Some(manifest), &[]);
    let out = gantry("run", dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("mod.toml:5:8: expected an array of keys, found a string in grants.send"),
        "{stderr}"
    );
    assert!(
        stderr.contains("mod.toml:6:1: unknown field `lisen`")
            && stderr.contains("(did you mean `listen`?)"),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("opened"));
}

#[test]
fn check_holds_each_mod_of_a_game_to_its_own_grants() {
    let game = tempfile::tempdir().unwrap();
    for (folder, manifest, script, source) in [
        (
            "ui",
            GRANTED,
            "ui.lua",
            "NotifyMessage(\"Quest.Start\", 1)\n",
        ),
        (
            "core",
            "[mod]\nname = \"core\"\n",
            "core.lua",
            "NotifyMessage(\"Quest.Start\", 1)\nListenMessage(\"Quest.Start\", nil, function(n) end)\n",
        ),
    ] {
        let dir = game.path().join("mods").join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        write(&dir, "mod.toml", manifest);
        write(&dir, script, source);
    }
    let out = gantry("check", game.path());
    let stdout = text(&out.stdout);
    let grants: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("not-granted"))
        .collect();
    assert_eq!(
        grants,
        [format!(
            "{}: error not-granted: mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only",
            game.path().join("mods/ui/ui.lua:1:15").display()
        )],
        "{stdout}"
    );
}
