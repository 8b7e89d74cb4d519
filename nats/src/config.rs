//! What a bridge connects to and which keys it carries: from Rust, from a
//! `game.toml` `[bridge]` table, or from a URL alone (`--bridge URL`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use gantry_host::key::validate_key;
use serde::Deserialize;
use thiserror::Error;

use crate::subject::check_name;

/// The default bound on messages waiting to go out (and to come in).
pub const DEFAULT_BUFFER: usize = 1024;
/// The default largest payload a node sends or accepts, in bytes.
pub const DEFAULT_MAX_PAYLOAD: usize = 64 * 1024;
/// The default bound on distinct keys one node puts in the cluster's store.
pub const DEFAULT_MAX_STORED_KEYS: usize = 4096;
/// The default bound on the cluster's store (its KV bucket), in bytes.
pub const DEFAULT_STORE_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The default cluster name.
pub const DEFAULT_CLUSTER: &str = "gantry";

/// Why a bridge configuration was refused. Names the field and its text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error("bridge {what} `{name}` must be 1 to 64 letters, digits or `_`")]
    BadName { what: &'static str, name: String },
    #[error("bridge {list} entry `{key}` is not a key: {reason}")]
    BadSubtree {
        list: &'static str,
        key: String,
        reason: String,
    },
    #[error("bridge url `{0}` must start with nats://, tls:// or ws://")]
    BadUrl(String),
    #[error("bridge `{field}` must be at least 1")]
    Zero { field: &'static str },
    #[error("[bridge]: {0}")]
    Toml(String),
}

/// TLS passed through to the NATS client.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// Refuse a server that does not speak TLS.
    #[serde(default)]
    pub required: bool,
    /// A PEM file of root certificates to trust.
    pub root_certificates: Option<PathBuf>,
    /// A client certificate and its key (PEM), for mutual TLS.
    pub client_certificate: Option<PathBuf>,
    pub client_key: Option<PathBuf>,
}

/// A bridge's configuration. The `[bridge]` table of `game.toml` reads
/// into it field by field:
///
/// ```toml
/// [bridge]
/// url = "nats://127.0.0.1:4222"
/// cluster = "mygame"
/// export = ["Chat", "World.Event"]
/// import = ["Chat", "World.Event"]
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// The NATS server (`nats://host:port`); NATS's own default, a
    /// server on this machine, when left out (`gantry run --bridge URL`
    /// names another).
    #[serde(default = "default_url")]
    pub url: String,
    /// Names the cluster's subject space: nodes of one game share it,
    /// several games can share one server.
    #[serde(default = "default_cluster")]
    pub cluster: String,
    /// Key subtrees whose sends on this node go out to the cluster.
    #[serde(default)]
    pub export: Vec<String>,
    /// Key subtrees whose sends on other nodes come in. Nothing else does:
    /// a peer cannot inject a key outside them.
    #[serde(default)]
    pub import: Vec<String>,
    /// How many messages may wait to go out (and to come in) before more
    /// are counted as dropped. Also what is buffered while disconnected.
    #[serde(default = "default_buffer")]
    pub buffer: usize,
    /// The largest payload sent or accepted, in bytes: a bigger one from
    /// a peer is dropped and reported before it is decoded.
    #[serde(default = "default_max_payload")]
    pub max_payload: usize,
    /// The most distinct keys (per world and object name) this node puts
    /// in the cluster's store: a stored message on a new key past it is
    /// kept here but not put there, reported the first time and counted
    /// ([`crate::BridgeStats::stores_refused`]). A script storing on keys
    /// it makes up cannot fill the cluster's store.
    #[serde(default = "default_max_stored_keys")]
    pub max_stored_keys: usize,
    /// The most bytes the cluster's store (the KV bucket, one value per
    /// key) holds, when this node is the one that makes it: past it the
    /// server refuses new puts, from any peer, rather than drop old ones.
    #[serde(default = "default_store_max_bytes")]
    pub store_max_bytes: u64,
    /// How long a request waits for an answer from another node.
    #[serde(default = "default_request_timeout_ms")]
    pub request_timeout_ms: u64,
    /// The name the game's run world has in the cluster (see
    /// [`crate::Bridge::name_world`]): a host that runs its scripts in one
    /// world names it with this, so that world sends and world stores
    /// (a shard's events) cross to the same world on every node.
    pub world: Option<String>,
    /// This node's name, shown by the server (`nats server report`).
    pub name: Option<String>,
    /// A NATS credentials file (`.creds`: JWT and nkey seed).
    pub credentials: Option<PathBuf>,
    /// A token, or a user and password.
    pub token: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    #[serde(default)]
    pub tls: TlsConfig,
}

/// The URL a `[bridge]` table without one connects to.
pub const DEFAULT_URL: &str = "nats://127.0.0.1:4222";

fn default_url() -> String {
    DEFAULT_URL.to_owned()
}
fn default_cluster() -> String {
    DEFAULT_CLUSTER.to_owned()
}
fn default_buffer() -> usize {
    DEFAULT_BUFFER
}
fn default_max_payload() -> usize {
    DEFAULT_MAX_PAYLOAD
}
fn default_max_stored_keys() -> usize {
    DEFAULT_MAX_STORED_KEYS
}
fn default_store_max_bytes() -> u64 {
    DEFAULT_STORE_MAX_BYTES
}
fn default_request_timeout_ms() -> u64 {
    2000
}

impl BridgeConfig {
    /// A configuration for `url` with every default: the default cluster,
    /// nothing exported or imported yet.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            cluster: default_cluster(),
            export: Vec::new(),
            import: Vec::new(),
            buffer: DEFAULT_BUFFER,
            max_payload: DEFAULT_MAX_PAYLOAD,
            max_stored_keys: DEFAULT_MAX_STORED_KEYS,
            store_max_bytes: DEFAULT_STORE_MAX_BYTES,
            request_timeout_ms: default_request_timeout_ms(),
            world: None,
            name: None,
            credentials: None,
            token: None,
            user: None,
            password: None,
            tls: TlsConfig::default(),
        }
    }

    /// Another server (`gantry run --bridge URL` over a `[bridge]` table).
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = url.into();
        self
    }

    pub fn cluster(mut self, cluster: impl Into<String>) -> Self {
        self.cluster = cluster.into();
        self
    }

    pub fn export(mut self, subtree: impl Into<String>) -> Self {
        self.export.push(subtree.into());
        self
    }

    pub fn import(mut self, subtree: impl Into<String>) -> Self {
        self.import.push(subtree.into());
        self
    }

    /// Exports and imports the same subtree: the usual shared key.
    pub fn share(self, subtree: &str) -> Self {
        self.export(subtree).import(subtree)
    }

    pub fn world(mut self, name: impl Into<String>) -> Self {
        self.world = Some(name.into());
        self
    }

    pub fn buffer(mut self, buffer: usize) -> Self {
        self.buffer = buffer;
        self
    }

    pub fn max_payload(mut self, bytes: usize) -> Self {
        self.max_payload = bytes;
        self
    }

    pub fn max_stored_keys(mut self, keys: usize) -> Self {
        self.max_stored_keys = keys;
        self
    }

    pub fn store_max_bytes(mut self, bytes: u64) -> Self {
        self.store_max_bytes = bytes;
        self
    }

    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout_ms = timeout.as_millis() as u64;
        self
    }

    pub fn request_timeout_duration(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms)
    }

    /// Reads the body of a `[bridge]` table (the text inside it, or a
    /// whole document whose top level is the table).
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text).map_err(|e| ConfigError::Toml(e.to_string()))?;
        config.checked()
    }

    /// Reads an already parsed `[bridge]` table (the loader's `game.toml`).
    pub fn from_toml_table(table: toml::Table) -> Result<Self, ConfigError> {
        let config: Self = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Toml(e.to_string()))?;
        config.checked()
    }

    /// Files named relative to `base` (the game's folder) made absolute,
    /// so that credentials sit beside `game.toml`.
    pub fn resolve_paths(mut self, base: &Path) -> Self {
        let fix = |p: &mut Option<PathBuf>| {
            if let Some(path) = p
                && path.is_relative()
            {
                *path = base.join(&*path);
            }
        };
        fix(&mut self.credentials);
        fix(&mut self.tls.root_certificates);
        fix(&mut self.tls.client_certificate);
        fix(&mut self.tls.client_key);
        self
    }

    /// Checks every field; what [`crate::Bridge::start`] does first.
    pub fn checked(self) -> Result<Self, ConfigError> {
        check_name("cluster", &self.cluster)?;
        if let Some(world) = &self.world {
            check_name("world", world)?;
        }
        if !["nats://", "tls://", "ws://", "wss://"]
            .iter()
            .any(|scheme| self.url.starts_with(scheme))
        {
            return Err(ConfigError::BadUrl(self.url));
        }
        for (list, keys) in [("export", &self.export), ("import", &self.import)] {
            for key in keys {
                validate_key(key).map_err(|e| ConfigError::BadSubtree {
                    list,
                    key: key.clone(),
                    reason: e.to_string(),
                })?;
            }
        }
        if self.buffer == 0 {
            return Err(ConfigError::Zero { field: "buffer" });
        }
        if self.max_payload == 0 {
            return Err(ConfigError::Zero {
                field: "max_payload",
            });
        }
        if self.store_max_bytes == 0 {
            return Err(ConfigError::Zero {
                field: "store_max_bytes",
            });
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bridge_table_reads_with_defaults() {
        let config = BridgeConfig::from_toml_str(
            "url = \"nats://127.0.0.1:4222\"\ncluster = \"mygame\"\nexport = [\"Chat\", \"World.Event\"]\n",
        )
        .unwrap();
        assert_eq!(config.cluster, "mygame");
        assert_eq!(config.export, ["Chat", "World.Event"]);
        assert_eq!(config.buffer, DEFAULT_BUFFER);
    }

    #[test]
    fn a_table_without_a_url_connects_to_this_machine_unless_told() {
        let mut table = toml::Table::new();
        table.insert("export".into(), toml::Value::Array(vec!["Chat".into()]));
        let config = BridgeConfig::from_toml_table(table).unwrap();
        assert_eq!(config.url, DEFAULT_URL);
        let config = config.with_url("nats://10.0.0.2:4222").checked().unwrap();
        assert_eq!(config.url, "nats://10.0.0.2:4222");
    }

    #[test]
    fn a_bad_subtree_is_named() {
        let err = BridgeConfig::new("nats://x:1")
            .export("Chat.>")
            .checked()
            .unwrap_err();
        assert!(err.to_string().contains("`Chat.>`"), "{err}");
        let err = BridgeConfig::from_toml_str("exprot = []").unwrap_err();
        assert!(err.to_string().contains("exprot"), "{err}");
    }
}
