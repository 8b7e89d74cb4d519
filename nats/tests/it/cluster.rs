//! A real NATS server for a test, and hubs bridged through it.

use std::cell::RefCell;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use gantry_host::{Hub, ListenOptions, Source, Value};
use gantry_nats::{Bridge, BridgeConfig};

/// What a test waits at most for anything on the network.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// A `nats-server -js` in a temporary folder, killed when dropped.
pub struct Server {
    binary: PathBuf,
    pub port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

fn find_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/local/sbin".into()])
        .map(|dir| dir.join("nats-server"))
        .find(|candidate| candidate.is_file())
}

impl Server {
    /// A fresh server, or `None` (after one `skipped:` line) when the
    /// binary is absent. Under `CI` its absence fails the test.
    pub fn start() -> Option<Server> {
        let Some(binary) = find_binary() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "nats-server not found, and CI is set: install nats-server"
            );
            // Once per run, past the test harness's capture (as the
            // editor test says its own skip), so a reader sees why.
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                use std::io::Write;
                let _ = std::io::stderr()
                    .write_all(b"skipped: nats-server not found (install nats-server to run it)\n");
            });
            return None;
        };
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let mut server = Server {
            binary,
            port,
            dir: tempfile::tempdir().expect("a temporary folder"),
            child: None,
        };
        server.restart();
        Some(server)
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again, on the same port and store) and waits
    /// until it takes connections.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "the server is running already");
        let log = std::fs::File::create(self.dir.path().join("server.log")).unwrap();
        let child = Command::new(&self.binary)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-sd",
            ])
            .arg(self.dir.path().join("store"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("nats-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + PATIENCE;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not come up");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server at once (no goodbye to its clients).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts a server or skips the test.
macro_rules! server_or_skip {
    () => {
        match $crate::cluster::Server::start() {
            Some(server) => server,
            None => return,
        }
    };
}
pub(crate) use server_or_skip;

/// A hub and its bridge: one game server of the cluster.
pub struct Node {
    pub hub: Hub,
    pub bridge: Bridge,
}

impl Node {
    pub fn start(config: BridgeConfig) -> Node {
        let hub = Hub::new();
        let bridge = Bridge::start(&hub, config).expect("the bridge starts");
        Node { hub, bridge }
    }

    /// Records the values of every message heard on `key`'s subtree.
    pub fn record(&self, key: &str) -> Heard {
        let heard: Heard = Rc::default();
        let sink = heard.clone();
        self.hub
            .listen_message(
                key,
                Source::Global,
                ListenOptions::new().partial(),
                move |m| {
                    sink.borrow_mut()
                        .push((m.key_name().to_string(), m.args.to_vec()));
                },
            )
            .unwrap()
            .detach();
        heard
    }

    pub fn pump(&self) {
        self.bridge.pump(&self.hub);
    }
}

/// What a recording listener heard: (key, values) in order.
pub type Heard = Rc<RefCell<Vec<(String, Vec<Value>)>>>;

/// Pumps `nodes` (as a game loop would, each tick) until `done` or the
/// patience runs out; returns whether `done` came.
pub fn pump_until(nodes: &[&Node], mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    loop {
        for node in nodes {
            node.pump();
        }
        if done() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Pumps `nodes` for `time`, for checking that nothing (more) arrives.
pub fn pump_for(nodes: &[&Node], time: Duration) {
    let end = Instant::now() + time;
    while Instant::now() < end {
        for node in nodes {
            node.pump();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Starts nodes and waits until every one is subscribed.
pub fn ready(nodes: &[&Node]) {
    assert!(
        pump_until(nodes, || nodes.iter().all(|n| n.bridge.is_ready())),
        "the bridges did not connect"
    );
}

/// A bridge configuration sharing `subtrees` on cluster `test`.
pub fn sharing(server: &Server, subtrees: &[&str]) -> BridgeConfig {
    subtrees
        .iter()
        .fold(BridgeConfig::new(server.url()).cluster("test"), |c, s| {
            c.share(s)
        })
}

/// Runs `work` with a plain `async-nats` client of `server` (no bridge),
/// as a hostile or foreign peer would, on a runtime of its own.
pub fn with_plain_client<R>(server: &Server, work: impl AsyncFnOnce(async_nats::Client) -> R) -> R {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = async_nats::connect(server.url()).await.unwrap();
        work(client).await
    })
}

/// Publishes raw bytes on `subject` with a plain client, as a hostile or
/// foreign peer would.
pub fn raw_publish(server: &Server, subject: &str, payload: Vec<u8>) {
    with_plain_client(server, async |client| {
        client
            .publish(subject.to_owned(), payload.into())
            .await
            .unwrap();
        client.flush().await.unwrap();
    });
}

/// The strings a recording heard, in order.
pub fn strings(heard: &Heard) -> Vec<String> {
    heard
        .borrow()
        .iter()
        .map(|(_, values)| {
            values
                .iter()
                .map(|v| match v {
                    Value::Str(s) => s.to_string(),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}
