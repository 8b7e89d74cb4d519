//! Keys to NATS subjects and back.
//!
//! A key's segments (`[A-Za-z0-9_]`) are valid subject tokens, so a key
//! maps to a subject by a prefix alone: `Chat.Say` on cluster `mygame` is
//! `mygame.Chat.Say`, and a subtree `Chat` is subscribed as `mygame.Chat`
//! plus `mygame.Chat.>` (NATS's `>` is the hub's partial match). Sends on
//! a world the game names for the cluster go on `mygame-w.<world>.<key>`,
//! once messages on `mygame-once.<key>` (live, to a queue group) and
//! `mygame-queue.<key>` (stored, in a work-queue stream): `-` is in no
//! key, so these can never meet a key's subject.

use gantry_host::key::validate_key;

use crate::config::ConfigError;

/// Which way a subject carries a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lane {
    /// A global send (or a stored message).
    Global,
    /// A send on the world the cluster knows by this name.
    World(String),
    /// A send on the object the cluster knows by this name.
    Object(String),
    /// A once message, consumed by one node.
    Once,
    /// A stored once message, kept by the cluster's work-queue stream
    /// until one node takes it.
    Queued,
}

/// A cluster's subject space.
#[derive(Debug, Clone)]
pub struct Subjects {
    cluster: String,
    world_prefix: String,
    object_prefix: String,
    once_prefix: String,
    queue_prefix: String,
}

/// The most global subjects [`lasting`] keeps for the process.
const MAX_LASTING: usize = 4096;

/// A global subject for the client that is never freed: kept once per
/// process (and per cluster and key), so its clones are copies of a
/// pointer. A subject made from a `String` shares one count between the
/// game thread, which clones it for every send, and the network thread,
/// which drops the copy it wrote: two threads writing one cache line per
/// message, and the client clones it once more inside. Only keys this
/// hub sends on come here, at most [`MAX_LASTING`] of them; past that a
/// subject is made as before.
pub(crate) fn lasting(subject: String) -> async_nats::Subject {
    use std::collections::HashSet;
    use std::sync::{LazyLock, Mutex};
    static KEPT: LazyLock<Mutex<HashSet<&'static str>>> = LazyLock::new(Mutex::default);
    let Ok(mut kept) = KEPT.lock() else {
        return subject.into();
    };
    if let Some(known) = kept.get(subject.as_str()) {
        return async_nats::Subject::from_static(known);
    }
    if kept.len() >= MAX_LASTING {
        return subject.into();
    }
    let leaked: &'static str = Box::leak(subject.into_boxed_str());
    kept.insert(leaked);
    async_nats::Subject::from_static(leaked)
}

/// A cluster or world name is one subject token of `[A-Za-z0-9_]`.
pub fn check_name(what: &'static str, name: &str) -> Result<(), ConfigError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(ConfigError::BadName {
            what,
            name: name.to_owned(),
        })
    }
}

impl Subjects {
    pub fn new(cluster: &str) -> Result<Self, ConfigError> {
        check_name("cluster", cluster)?;
        Ok(Self {
            cluster: cluster.to_owned(),
            world_prefix: format!("{cluster}-w."),
            object_prefix: format!("{cluster}-o."),
            once_prefix: format!("{cluster}-once."),
            queue_prefix: format!("{cluster}-queue."),
        })
    }

    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    /// Every stored once subject: what the work-queue stream keeps.
    pub fn queued_all(&self) -> String {
        format!("{}>", self.queue_prefix)
    }

    /// The subject a key's message goes out on.
    pub fn of(&self, lane: &Lane, key: &str) -> String {
        match lane {
            Lane::Global => format!("{}.{key}", self.cluster),
            Lane::World(world) => format!("{}{world}.{key}", self.world_prefix),
            Lane::Object(object) => format!("{}{object}.{key}", self.object_prefix),
            Lane::Once => format!("{}{key}", self.once_prefix),
            Lane::Queued => format!("{}{key}", self.queue_prefix),
        }
    }

    /// The subject a stored once goes on: `<cluster>-queue.` and where it
    /// would be kept ([`stored_key`]: its key, and a named world's or
    /// object's name after it).
    pub fn queued(&self, at: &Lane, key: &str) -> String {
        format!("{}{}", self.queue_prefix, stored_key(at, key))
    }

    /// Where a stored once's subject places it (global, a named world or
    /// object) and its key.
    pub fn parse_queued<'s>(&self, subject: &'s str) -> Option<(Lane, &'s str)> {
        parse_stored_key(subject.strip_prefix(&self.queue_prefix)?)
    }

    /// The subscriptions that hear a subtree on a lane: the key itself
    /// and every key under it.
    pub fn filters(&self, lane: &Lane, subtree: &str) -> [String; 2] {
        let exact = match lane {
            Lane::World(_) => format!("{}*.{subtree}", self.world_prefix),
            Lane::Object(_) => format!("{}*.{subtree}", self.object_prefix),
            _ => self.of(lane, subtree),
        };
        let under = format!("{exact}.>");
        [exact, under]
    }

    /// The lane and key of a subject, if it is one of this cluster's and
    /// names a valid key.
    pub fn parse<'s>(&self, subject: &'s str) -> Option<(Lane, &'s str)> {
        let (lane, key) = if let Some(rest) = subject.strip_prefix(&self.world_prefix) {
            let (world, key) = rest.split_once('.')?;
            check_name("world", world).ok()?;
            (Lane::World(world.to_owned()), key)
        } else if let Some(rest) = subject.strip_prefix(&self.object_prefix) {
            let (object, key) = rest.split_once('.')?;
            check_name("object", object).ok()?;
            (Lane::Object(object.to_owned()), key)
        } else if let Some(key) = subject.strip_prefix(&self.once_prefix) {
            (Lane::Once, key)
        } else if let Some(key) = subject.strip_prefix(&self.queue_prefix) {
            (Lane::Queued, key)
        } else {
            let key = subject
                .strip_prefix(self.cluster.as_str())?
                .strip_prefix('.')?;
            (Lane::Global, key)
        };
        validate_key(key).ok()?;
        Some((lane, key))
    }
}

/// Where a stored message is kept in the cluster's KV bucket: a global
/// one under its key, a named world's under `<key>.w-<world>`, a named
/// object's under `<key>.o-<object>` (`-` is in no key or name, so these
/// never meet, and the subtree's `<root>.>` watch hears them all). A once
/// is never kept there.
pub fn stored_key(lane: &Lane, key: &str) -> String {
    match lane {
        Lane::World(world) => format!("{key}.w-{world}"),
        Lane::Object(object) => format!("{key}.o-{object}"),
        _ => key.to_owned(),
    }
}

/// The lane and key of a KV entry's key, if it names a valid key.
pub fn parse_stored_key(at: &str) -> Option<(Lane, &str)> {
    let (lane, key) = if let Some((key, world)) = at.rsplit_once(".w-") {
        check_name("world", world).ok()?;
        (Lane::World(world.to_owned()), key)
    } else if let Some((key, object)) = at.rsplit_once(".o-") {
        check_name("object", object).ok()?;
        (Lane::Object(object.to_owned()), key)
    } else {
        (Lane::Global, at)
    };
    validate_key(key).ok()?;
    Some((lane, key))
}

/// Is `key` in the subtree `root` (the key itself or under it)?
pub fn in_subtree(key: &str, root: &str) -> bool {
    key == root
        || key
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Subtrees with those under another one dropped: each key is then heard
/// by exactly one of them.
pub fn outermost(subtrees: &[String]) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for s in subtrees {
        if subtrees
            .iter()
            .any(|other| other != s && in_subtree(s, other))
            || kept.contains(s)
        {
            continue;
        }
        kept.push(s.clone());
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_cluster_subjects_and_back() {
        let s = Subjects::new("mygame").unwrap();
        assert_eq!(s.of(&Lane::Global, "Chat.Say"), "mygame.Chat.Say");
        assert_eq!(
            s.filters(&Lane::Global, "Chat"),
            ["mygame.Chat", "mygame.Chat.>"]
        );
        assert_eq!(s.parse("mygame.Chat.Say"), Some((Lane::Global, "Chat.Say")));
        assert_eq!(
            s.parse("mygame-w.arena.Chat.Say"),
            Some((Lane::World("arena".into()), "Chat.Say"))
        );
        assert_eq!(
            s.parse("mygame-o.sword.Item.Glow"),
            Some((Lane::Object("sword".into()), "Item.Glow"))
        );
        assert_eq!(s.parse("mygame-o.bad-name.Item"), None);
        assert_eq!(s.parse("mygame-o.sword"), None);
        assert_eq!(s.parse("mygame-once.Loot"), Some((Lane::Once, "Loot")));
        assert_eq!(s.parse("mygame-queue.Loot"), Some((Lane::Queued, "Loot")));
        let realm = Lane::World("realm".into());
        assert_eq!(
            s.queued(&realm, "Loot.Drop"),
            "mygame-queue.Loot.Drop.w-realm"
        );
        assert_eq!(
            s.parse_queued("mygame-queue.Loot.Drop.w-realm"),
            Some((realm, "Loot.Drop"))
        );
        assert_eq!(
            s.parse_queued("mygame-queue.Loot"),
            Some((Lane::Global, "Loot"))
        );
        assert_eq!(s.queued_all(), "mygame-queue.>");
        assert_eq!(s.parse("other.Chat"), None);
        assert_eq!(s.parse("mygame.Chat-x"), None);
        assert_eq!(s.parse("mygamex.Chat"), None);
        let world = Lane::World("arena".into());
        assert_eq!(stored_key(&world, "World.Event"), "World.Event.w-arena");
        assert_eq!(
            parse_stored_key("World.Event.w-arena"),
            Some((world, "World.Event"))
        );
        assert_eq!(parse_stored_key("X.w-"), None);
        let object = Lane::Object("sword".into());
        assert_eq!(stored_key(&object, "Item.Glow"), "Item.Glow.o-sword");
        assert_eq!(
            parse_stored_key("Item.Glow.o-sword"),
            Some((object, "Item.Glow"))
        );
        assert_eq!(parse_stored_key("Item.o-a.b"), None);
    }

    #[test]
    fn nested_subtrees_are_heard_once() {
        let kept = outermost(&["Chat.Say".into(), "Chat".into(), "World".into()]);
        assert_eq!(kept, ["Chat", "World"]);
        assert!(in_subtree("Chat.Say", "Chat"));
        assert!(!in_subtree("Chatter", "Chat"));
    }
}
