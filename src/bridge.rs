//! `gantry run`'s bridge to other game servers (`gantry-nats`): game.toml's
//! `[bridge]` table, `--bridge URL` over it, and what the bridge reports
//! said as the run's warnings.
//!
//! The bridge starts before the scripts load, so its export listeners come
//! first and a top level's sends wait in its buffer until it connects. Each
//! tick pumps what peers sent into the hub before `Game.Tick`; nothing on
//! the run's thread waits for the network, whether or not the server is up.

use std::cell::RefCell;
use std::time::Duration;

use anyhow::Context;
use gantry_loader::Game;
use gantry_loader::layout::GAME_FILE;
use gantry_nats::{Bridge, BridgeConfig, BridgeEvent};

use crate::out::errln;

/// How long a run's last sends may take to reach the server at exit.
const CLOSE_WITHIN: Duration = Duration::from_secs(1);

/// The run's bridge configuration: game.toml's `[bridge]` (its files
/// relative to the game folder), its URL replaced by `--bridge URL`; `None`
/// when neither asks for one. A mistake names the field, before anything
/// runs.
pub fn config(game: &Game, url: Option<&str>) -> anyhow::Result<Option<BridgeConfig>> {
    let table = game.policy().bridge.clone();
    let config = match (table, url) {
        (None, None) => return Ok(None),
        // The TOML reader's message ends in a newline; the run's line does not.
        (Some(table), _) => BridgeConfig::from_toml_table(table)
            .map_err(|e| anyhow::anyhow!("{GAME_FILE}: {}", e.to_string().trim_end()))?
            .resolve_paths(game.root()),
        (None, Some(url)) => BridgeConfig::new(url),
    };
    let config = match url {
        Some(url) => config
            .with_url(url)
            .checked()
            .with_context(|| format!("--bridge {url}"))?,
        None => config.checked().context(GAME_FILE)?,
    };
    Ok(Some(config))
}

/// A running bridge and how the run reports it.
pub struct RunBridge {
    bridge: Bridge,
    url: String,
    trace: bool,
    /// What it started with, and `--bridge`: a game.toml edited while
    /// watching is compared with it.
    config: BridgeConfig,
    flag: Option<String>,
    /// Whether the edit was said (once a run).
    said_changed: bool,
}

impl RunBridge {
    /// Starts the bridge on the game's hub and names the game's world for
    /// the cluster when the configuration does. Returns at once: the
    /// client connects in the background.
    pub fn start(
        game: &Game,
        config: BridgeConfig,
        flag: Option<&str>,
        trace: bool,
    ) -> anyhow::Result<Self> {
        if config.export.is_empty() && config.import.is_empty() {
            let why = if game.is_game() {
                format!("{GAME_FILE} [bridge] lists no `export` or `import`")
            } else {
                format!("a single mod has no {GAME_FILE} [bridge] table")
            };
            errln!("warning: bridge: {why}: nothing is exported or imported");
        }
        let url = config.url.clone();
        let world = config.world.clone();
        let started = config.clone();
        let bridge = Bridge::start(game.hub(), config).context("--bridge")?;
        if let Some(name) = &world {
            bridge.name_world(game.world(), name)?;
        }
        // The client retries a lost server with backoff and reports each
        // failed try alike: one line says it until something else happens.
        let last = RefCell::new(String::new());
        bridge.on_event(move |event| {
            let text = event.to_string();
            if *last.borrow() == text {
                return;
            }
            match event {
                BridgeEvent::Connected => errln!("note: {text}"),
                _ => errln!("warning: {text}"),
            }
            *last.borrow_mut() = text;
        });
        // Reported before `on_event` was set (none yet, but cheap to keep
        // true if start ever files one).
        for event in bridge.take_events() {
            errln!("warning: {event}");
        }
        Ok(Self {
            bridge,
            url,
            trace,
            config: started,
            flag: flag.map(str::to_owned),
            said_changed: false,
        })
    }

    /// After a watching run re-read game.toml: a `[bridge]` that changed
    /// is said once, since the bridge keeps what it started with (its
    /// subscriptions and the peers' view of this node do not change
    /// mid-run).
    pub fn notice_policy(&mut self, game: &Game) {
        if self.said_changed {
            return;
        }
        let now = config(game, self.flag.as_deref()).ok().flatten();
        if now.as_ref() != Some(&self.config) {
            self.said_changed = true;
            errln!(
                "warning: bridge: {GAME_FILE} [bridge] changed; the bridge keeps what it started with until the run restarts"
            );
        }
    }

    /// Hands what peers sent since the last tick to the hub (bounded, never
    /// waits); with `--trace`, says how many came.
    pub fn pump(&self, game: &Game, tick: u32) {
        let pumped = self.bridge.pump(game.hub());
        // Already said by `on_event`; the kept copies are not needed.
        drop(self.bridge.take_events());
        // Only what reached the hub: a real drop is a warning already, and
        // the pump also counts this node's own sends heard back, unsaid.
        if self.trace && pumped.delivered > 0 {
            errln!(
                "trace: [tick {tick}] bridge delivered {} message(s) from the cluster",
                pumped.delivered
            );
        }
    }

    /// Stops the bridge, giving its last sends a second to leave; says
    /// when the server was not there to take them.
    pub fn close(self) {
        let connected = self.bridge.is_connected();
        let waiting = self.bridge.waiting();
        let stats = self.bridge.stats();
        let gone = self.bridge.close(CLOSE_WITHIN);
        if !connected {
            errln!(
                "warning: bridge: not connected to {} at exit; {waiting} send(s) waiting for it are lost",
                self.url
            );
        } else if !gone {
            errln!("warning: bridge: the last sends did not reach the server within a second");
        }
        if stats.dropped_sends > 0 {
            errln!(
                "warning: bridge: {} send(s) dropped in this run: its buffer was full",
                stats.dropped_sends
            );
        }
        if stats.stores_refused > 0 {
            errln!(
                "warning: bridge: {} stored message(s) kept on this node only: \
                 past max_stored_keys distinct keys in the cluster's store",
                stats.stores_refused
            );
        }
    }
}
