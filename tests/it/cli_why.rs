//! `--why` and `gantry explain`: why a listener fired or not — unbound, owner
//! collected, wrong scope, times used up, a near-miss key, an arity
//! mismatch, an aborted send, a hook cancelled above it, a slot whose row
//! never changed — and who sends and listens on a key.

use std::path::Path;
use std::process::Output;

use crate::support::{gantry, stderr as err, stdout as out, write};

fn run(dir: &Path, extra: &[&str]) -> Output {
    gantry()
        .arg("run")
        .arg(dir)
        .args(extra)
        .output()
        .expect("gantry runs")
}

fn why(dir: &Path, extra: &[&str]) -> (Output, String) {
    let mut args = vec!["--ticks", "2", "--no-table"];
    args.extend_from_slice(extra);
    let o = run(dir, &args);
    let text = err(&o)
        .lines()
        .filter(|l| l.starts_with("why: ") || l.starts_with("  "))
        .map(|l| format!("{l}\n"))
        .collect();
    (o, text)
}

#[test]
fn why_tells_unbound_and_owner_collected() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"local id = ListenMessage("Player.Hurt", nil, function(dmg) end)
UnbindMessage("Player.Hurt", id)
do
  local owner = {}
  ListenMessage("Player.Hurt", owner, function(dmg) end)
end
collectgarbage()
collectgarbage()
ListenMessage("Player", nil, function(dmg) end, { match = "partial" })
ListenMessage("Game.Tick", nil, function(n) NotifyMessage("Player.Hurt", 1.5) end)
"#,
    );
    let (_, text) = why(dir.path(), &["--why", "Player.Hurt"]);
    assert!(
        text.contains(
            "a.lua:1 (listener on global): never fired: it was unbound before anything reached it"
        ),
        "{text}"
    );
    assert!(
        text.contains("a.lua:5 (listener on global): never fired: its owner was collected before anything reached it"),
        "{text}"
    );
    assert!(
        text.contains("a.lua:9 (partial listener on global): fired 2 times"),
        "{text}"
    );
}

#[test]
fn why_tells_an_arity_mismatch_against_a_declared_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    std::fs::write(
        dir.path().join(".gantry/signatures.json"),
        r#"{
  "version": 1,
  "keys": {
    "Shop.Buy": {
      "kind": "event",
      "origin": "declared",
      "params": [ { "name": "item", "type": "string" } ]
    }
  }
}
"#,
    )
    .unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage('Shop.Buy', nil, function(item) end)\nListenMessage('Game.Tick', nil, function(n) NotifyMessage('Shop.Buy', 'potion', 3) end)\n",
    );
    let o = run(dir.path(), &["--ticks", "2", "--why", "Shop.Buy"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = err(&o);
    assert!(
        stderr.contains(
            "a.lua:1 (listener on global): never fired: every send of Shop.Buy was aborted"
        ),
        "{stderr}"
    );
}

/// "A bad key is a clear error, never a panic." `--why` and
/// `--trace-key` take a KEY.
#[test]
fn why_and_trace_key_refuse_a_malformed_key() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('Player.Hurt', 1.5)");
    for flag in ["--why", "--trace-key"] {
        let o = run(dir.path(), &["--no-table", flag, "Player Hurt"]);
        assert!(
            !o.status.success() && err(&o).contains("Player Hurt"),
            "{flag} \"Player Hurt\" was accepted silently: {:?} {}",
            o.status,
            err(&o)
        );
    }
}

/// `gantry explain DIR KEY` "says who sends and who listens": an
/// `UnbindMessage` neither sends nor listens.
#[test]
fn explain_does_not_count_unbind_message_as_a_sender() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "local id = ListenMessage('Player.Hurt', nil, function(dmg) end)\nUnbindMessage('Player.Hurt', id)\n",
    );
    let o = run(dir.path(), &[]);
    assert!(o.status.success(), "{}", err(&o));
    let o = gantry()
        .args(["explain", dir.path().to_str().unwrap(), "Player.Hurt"])
        .output()
        .unwrap();
    let text = out(&o);
    assert!(
        text.contains("sent from: nowhere"),
        "an UnbindMessage line is listed as a sender:\n{text}"
    );
    let table =
        gantry_host::SignatureTable::load(&dir.path().join(".gantry/signatures.json")).unwrap();
    let sites = &table.get("Player.Hurt").unwrap().sites;
    assert!(
        sites
            .iter()
            .all(|site| site.role != gantry_host::Role::Send),
        "the table records the unbind as a send site: {sites:?}"
    );
}

#[test]
fn explain_names_senders_listeners_a_near_miss_and_a_listener_wanting_too_much() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"
ListenMessage("Player.Hrut", nil, function(dmg) end)
ListenMessage("Player.Hurt", nil, function(dmg, causer, extra) end)
NotifyMessage("Player.Hurt", 1.5)
"#,
    );
    // The listener wanting too much fails at its first call, in the
    // arity rule's words; the run still records the table explain reads.
    let run = gantry()
        .args(["run", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("a.lua:3: listener of `Player.Hurt` failed: the listener takes 3 parameters but `Player.Hurt` carries 1"),
        "{stderr}"
    );
    let out = gantry()
        .args(["explain", dir.path().to_str().unwrap(), "Player.Hrut"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sent from: nowhere"), "{text}");
    assert!(text.contains("a.lua:2 (ListenMessage)"), "{text}");
    assert!(text.contains("did you mean Player.Hurt (sent)?"), "{text}");
    let out = gantry()
        .args(["explain", dir.path().to_str().unwrap(), "Player.Hurt"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("a.lua:4 (NotifyMessage)"), "{text}");
    assert!(
        text.contains("a.lua:3: the listener takes 3 parameters but Player.Hurt carries 1"),
        "{text}"
    );
}

/// `--why KEY`: after the run, each listener of KEY with whether it fired
/// and, if not, the first reason that applies.
fn why_of_keys(dir: &Path, keys: &[&str]) -> String {
    let mut cmd = gantry();
    cmd.args(["run", dir.to_str().unwrap(), "--ticks", "2", "--no-table"]);
    for key in keys {
        cmd.args(["--why", key]);
    }
    let out = cmd.output().unwrap();
    String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("why: ") || l.starts_with("  "))
        .filter(|l| !l.starts_with("  ") || !l.trim_start().starts_with('['))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn why_tells_wrong_scope_and_times_used_up() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"ListenMessage("Player.Hurt", nil, function(dmg) end, { times = 1 })
local other = GMP.Spawn()
ListenObjectMessage(other, "Player.Hurt", nil, function(dmg) end)
ListenWorldMessage(self:World(), "Player.Hurt", nil, function(dmg) end)
ListenMessage("Game.Tick", nil, function(n) NotifyMessage("Player.Hurt", 1.5) end)
"#,
    );
    let text = why_of_keys(dir.path(), &["Player.Hurt"]);
    assert!(
        text.contains("why: Player.Hurt: dispatched 2 times during the run (from global ×2)"),
        "{text}"
    );
    assert!(
        text.contains(
            "a.lua:1 (listener on global): fired 1 time, then left: its `times` were used up"
        ),
        "{text}"
    );
    assert!(
        text.contains("a.lua:3 (listener on object#2): never fired: Player.Hurt was sent only from global ×2, and a listener on object#2 hears only sends at that object"),
        "{text}"
    );
    assert!(
        text.contains("a.lua:4 (listener on world#1): never fired: Player.Hurt was sent only from global ×2, and a listener on world#1 hears only sends at that world or its objects"),
        "{text}"
    );
}

#[test]
fn why_tells_a_near_miss_key_and_an_aborted_send() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"ListenMessage("Player.Hrut", nil, function(dmg) end)
ListenMessage("Shop.Buy", nil, function(n) end)
ListenMessage("Game.Tick", nil, function(n)
  NotifyMessage("Player.Hurt", 1.5)
end)
"#,
    );
    write(
        dir.path(),
        "b.lua",
        r#"ListenMessage("Game.Tick", nil, function(n)
  if n == 1 then NotifyMessage("Shop.Buy", 3) else NotifyMessage("Shop.Buy", "lots") end
end)
ListenMessage("Shop.Sell", nil, function(n) end)
ListenMessage("Shop.Sell", nil, function(n) end)
"#,
    );
    let text = why_of_keys(dir.path(), &["Player.Hrut", "Shop.Buy"]);
    assert!(
        text.contains("a.lua:1 (listener on global): never fired: nothing sent Player.Hrut, but Player.Hurt was sent 2 times — a typo?"),
        "{text}"
    );
    assert!(
        text.contains("why: Shop.Buy: dispatched 1 time during the run (from global ×1); aborted: argument 1: expected int, got string (×1)"),
        "{text}"
    );
}

#[test]
fn why_tells_a_hook_cancelled_by_a_higher_priority_one_and_an_owner_gone() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"ListenHook("Combat.Damage", nil, function(hit, ctx) ctx:Cancel() end, { priority = 5 })
ListenHook("Combat.Damage", nil, function(hit, ctx) end, { priority = 1 })
local owner = GMP.Spawn()
ListenMessage("Game.Tick", owner, function(n) end)
GMP.Destroy(owner)
ListenMessage("Game.Tick", nil, function(n)
  RunHook("Combat.Damage", { __struct = "Hit", amount = 1 })
end)
"#,
    );
    let text = why_of_keys(dir.path(), &["Combat.Damage", "Game.Tick"]);
    assert!(
        text.contains("a.lua:2 (hook listener, priority 1 on global): never fired: a higher-priority hook listener (a.lua:1) cancelled the run before its turn 2 times"),
        "{text}"
    );
    assert!(
        text.contains("a.lua:4 (listener on global): never fired: its object was destroyed before anything reached it"),
        "{text}"
    );
    assert!(
        text.contains("a.lua:6 (listener on global): fired 2 times"),
        "{text}"
    );
}

#[test]
fn why_tells_a_slot_whose_row_never_changed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"local world = self:World()
do
  local items <close> = GMP.StoredArray(world, "Inv.Items")
  items:Add({ __struct = "Item", name = "sword", count = 1 })
  items:Add({ __struct = "Item", name = "bow", count = 1 })
end
ListenRowMessage(world, "Inv.Items", nil, 3, function() end)
ListenMessage("Game.Tick", nil, function(n)
  local items <close> = GMP.StoredArray(world, "Inv.Items")
  items:GetMutable(1).count = n + 1
end)
"#,
    );
    let text = why_of_keys(dir.path(), &["Inv.Items"]);
    assert!(
        text.contains("a.lua:7 (slot listener on world#1): never fired: Inv.Items changed 2 times since it joined, but never at row 3"),
        "{text}"
    );
}

#[test]
fn explain_with_ticks_runs_the_mod_and_says_why_each_listener_fired_or_not() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"local other = GMP.Spawn()
ListenObjectMessage(other, "Player.Hurt", nil, function(dmg) end)
ListenMessage("Player.Hurt", nil, function(dmg) print("hurt", dmg) end)
ListenMessage("Game.Tick", nil, function(n) NotifyMessage("Player.Hurt", 1.5) end)
"#,
    );
    let out = gantry()
        .args([
            "explain",
            dir.path().to_str().unwrap(),
            "Player.Hurt",
            "--ticks",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("hurt\t1.5"), "the run's output: {text}");
    assert!(
        text.contains("a.lua:3 (listener on global): fired 2 times"),
        "{text}"
    );
    assert!(
        text.contains(
            "a.lua:2 (listener on object#2): never fired: Player.Hurt was sent only from global ×2"
        ),
        "{text}"
    );
    assert!(
        text.contains("listened to at:"),
        "the static part follows: {text}"
    );
    // The tick is the host's: no line of gantry's own source, nor a file
    // that does not exist, is recorded as where it is sent.
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(!table.contains("(gantry run)"), "{table}");
    assert!(!table.contains("src/run.rs"), "{table}");
}
