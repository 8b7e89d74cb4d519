//! `gantry run --bridge URL` and game.toml's `[bridge]`: two runs share keys
//! through a real `nats-server -js` on a loopback port (skipped with one
//! line when it is not installed, failing under `CI`); a table the bridge
//! cannot use stops the run; an absent server never holds a run up.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Watching, copy_dir, gantry, program_on_path, stderr, stdout};

/// What a test waits at most for a server or a run.
const PATIENCE: Duration = Duration::from_secs(15);

/// A `nats-server -js` on a free loopback port, its store in a temporary
/// folder; killed when dropped.
struct Server {
    port: u16,
    child: Child,
    _store: tempfile::TempDir,
}

/// A loopback port nobody listens on (for now).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

impl Server {
    /// A running server, or `None` after one `skipped:` line when the
    /// binary is absent (a failure under `CI`).
    fn start() -> Option<Server> {
        let binary = Some(PathBuf::from("/usr/sbin/nats-server"))
            .filter(|p| p.is_file())
            .or_else(|| program_on_path("nats-server", "install nats-server"))?;
        let store = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = std::fs::File::create(store.path().join("server.log")).unwrap();
        let child = Command::new(binary)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(store.path().join("js"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("nats-server starts");
        let server = Server {
            port,
            child,
            _store: store,
        };
        let deadline = Instant::now() + PATIENCE;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not come up");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cmd` to its end, killing it (and failing) past [`PATIENCE`].
fn run_bounded(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not end within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
    Output {
        status,
        stdout: out,
        stderr: err,
    }
}

/// The shards example's two game folders, copied into `dir`.
fn shards(dir: &Path) -> (PathBuf, PathBuf) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shards");
    let (a, b) = (dir.join("shard-a"), dir.join("shard-b"));
    copy_dir(&example.join("shard-a"), &a);
    copy_dir(&example.join("shard-b"), &b);
    (a, b)
}

/// A game folder of one mod, `chat`, whose script is `main_lua`.
fn one_mod_game(game: &Path, main_lua: &str) {
    let chat = game.join("mods/chat");
    std::fs::create_dir_all(&chat).unwrap();
    std::fs::write(
        chat.join("mod.toml"),
        "[mod]\nname = \"chat\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(chat.join("main.lua"), main_lua).unwrap();
}

/// Waits for every line of `want` on `run`'s stdout, in any order.
fn wait_for_all(run: &Watching, want: &[&str]) {
    let mut missing: Vec<&str> = want.to_vec();
    while let Some(next) = missing.first().copied() {
        let before = run.wait_for(next);
        missing.retain(|w| *w != next && !before.iter().any(|line| line == w));
    }
}

#[test]
fn two_shards_hear_each_others_chat_and_a_later_shard_hears_the_stored_event() {
    let Some(server) = Server::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = shards(dir.path());
    let url = server.url();
    let north = Watching::start_with(&a, &["--bridge", &url, "--trace-key", "Chat"]);
    north.wait_for("[north] in the realm: the dragon wakes");
    // The south shard starts after the dragon woke: the cluster's stored
    // value reaches its world's listener, whose reply crosses back.
    let south = Watching::start_with(&b, &["--bridge", &url]);
    wait_for_all(
        &south,
        &[
            "[south] in the realm: the dragon wakes",
            "[south] south says: hello from the south",
        ],
    );
    wait_for_all(
        &north,
        &[
            "[north] south says: hello from the south",
            "[north] south says: we saw it too: the dragon wakes",
        ],
    );
    north.wait_for_error("note: bridge connected");
    north.wait_for_error("bridge delivered");
}

#[test]
fn a_bridge_table_with_an_unknown_field_stops_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path();
    one_mod_game(game, "print('ran')\n");
    std::fs::write(
        game.join("game.toml"),
        "[bridge]\ncluster = \"mygame\"\nexprot = [\"Chat\"]\n",
    )
    .unwrap();
    let o = run_bounded(gantry().args(["run", game.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("exprot"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("ran"), "nothing runs: {}", stdout(&o));
}

#[test]
fn a_bridge_url_that_is_not_nats_stops_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.lua"), "print('ran')\n").unwrap();
    let o = run_bounded(gantry().args([
        "run",
        dir.path().to_str().unwrap(),
        "--bridge",
        "http://127.0.0.1:4222",
    ]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--bridge http://127.0.0.1:4222"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("ran"), "nothing runs: {}", stdout(&o));
}

#[test]
fn a_run_bridged_to_an_absent_server_keeps_ticking_and_says_so_at_exit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("main.lua"),
        "ListenMessage(\"Game.Tick\", nil, function(n) print(\"tick \" .. n) end)\n",
    )
    .unwrap();
    let url = format!("nats://127.0.0.1:{}", free_port());
    let o = run_bounded(gantry().args([
        "run",
        dir.path().to_str().unwrap(),
        "--bridge",
        &url,
        "--watch",
        "--tick-ms",
        "20",
        "--ticks",
        "10",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("tick 10"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: bridge: a single mod has no game.toml [bridge] table"),
        "{err}"
    );
    assert!(
        err.contains(&format!("warning: bridge: not connected to {url} at exit")),
        "{err}"
    );
}

#[test]
fn a_bridge_table_edited_while_watching_is_said_to_wait_for_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path();
    one_mod_game(
        game,
        "ListenMessage(\"Game.Tick\", nil, function(n) if n == 1 then print(\"ticking\") end end)\n",
    );
    let table = |export: &str| format!("[bridge]\ncluster = \"mygame\"\nexport = [{export}]\n");
    std::fs::write(game.join("game.toml"), table("\"Chat\"")).unwrap();
    let url = format!("nats://127.0.0.1:{}", free_port());
    let run = Watching::start_with(game, &["--bridge", &url]);
    run.wait_for("ticking");
    crate::support::write(game, "game.toml", &table("\"Chat\", \"Trade\""));
    run.wait_for_error("warning: bridge: game.toml [bridge] changed");
}

/// A one-mod game whose `[bridge]` table has `lists` (export, import).
fn bridged_game(game: &Path, lists: &str, main_lua: &str) {
    one_mod_game(game, main_lua);
    std::fs::write(
        game.join("game.toml"),
        format!("[bridge]\ncluster = \"loot\"\nworld = \"realm\"\n{lists}\n"),
    )
    .unwrap();
}

#[test]
fn a_scripts_once_nobody_on_its_node_takes_is_taken_by_one_other_node_only() {
    let Some(server) = Server::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();
    let taker = "for _, key in ipairs({\"Loot.Sword\", \"Loot.Shield\"}) do\n\
           ListenWorldMessage(self:World(), key, nil, function(item) print(\"took \" .. item) end)\n\
         end\n";
    let takers: Vec<PathBuf> = (0..2)
        .map(|i| dir.path().join(format!("taker{i}")))
        .collect();
    for game in &takers {
        bridged_game(game, "import = [\"Loot\"]", taker);
    }
    // On the realm every node names, the maker hands out a sword nobody
    // there listens for, and a shield its own listener takes.
    let maker = dir.path().join("maker");
    bridged_game(
        &maker,
        "export = [\"Loot\"]",
        "local world = self:World()\n\
         ListenWorldMessage(world, \"Loot.Shield\", nil, function(item) print(\"maker kept \" .. item) end)\n\
         ListenMessage(\"Game.Tick\", nil, function(n)\n\
           if n == 2 then\n\
             OnceObjectMessage(world, \"Loot.Sword\", \"sword\")\n\
             OnceObjectMessage(world, \"Loot.Shield\", \"shield\")\n\
           end\n\
         end)\n",
    );
    let run = |game: &Path, ticks: &str| {
        run_bounded(gantry().args([
            "run",
            game.to_str().unwrap(),
            "--bridge",
            &url,
            "--watch",
            "--tick-ms",
            "20",
            "--ticks",
            ticks,
        ]))
    };
    let outputs = std::thread::scope(|s| {
        let running: Vec<_> = takers.iter().map(|g| s.spawn(|| run(g, "200"))).collect();
        let made = run(&maker, "20");
        assert!(made.status.success(), "{}", stderr(&made));
        assert!(
            stdout(&made).contains("maker kept shield"),
            "{}",
            stdout(&made)
        );
        assert!(!stdout(&made).contains("took"), "{}", stdout(&made));
        running
            .into_iter()
            .map(|r| r.join().unwrap())
            .collect::<Vec<_>>()
    });
    let all: String = outputs.iter().map(stdout).collect();
    assert_eq!(all.matches("took sword").count(), 1, "{all}");
    assert!(
        !all.contains("shield"),
        "the shield stayed with its maker: {all}"
    );
}
