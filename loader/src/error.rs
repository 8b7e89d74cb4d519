//! What can stop a game from opening at all (a single mod's mod.toml that
//! cannot be used, a game.toml with a mistake, a folder that is not one),
//! as opposed to a mod of a game that is refused while the others run
//! ([`crate::Refusal`]).

use std::path::PathBuf;

use gantry_host::TableError;
use gantry_host::files::FileError;
use gantry_host::hub::HubError;
use gantry_host::manifest::ManifestErrors;

/// Why a game could not be opened or its table saved.
#[derive(Debug, thiserror::Error)]
pub enum LoaderError {
    #[error("the mod folder {} does not exist", .0.display())]
    NoFolder(PathBuf),
    #[error("{} is not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("cannot open the mod folder {}: {error}", path.display())]
    Folder {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The single mod's `mod.toml` cannot be used: every finding.
    #[error("{} has {} error(s)", .0.file, .0.len())]
    Manifest(ManifestErrors),
    #[error("the signature table {} is {what}, not a file", path.display())]
    TableNotFile { path: PathBuf, what: &'static str },
    #[error("cannot open the signature table {}: {error}", path.display())]
    TableUnreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("loading the signature table {}: {error}", path.display())]
    Table { path: PathBuf, error: TableError },
    #[error("saving the signature table {}: {error}", path.display())]
    SaveTable { path: PathBuf, error: TableError },
    #[error("{0}")]
    GameToml(String),
    #[error("{0}")]
    GameFile(FileError),
    #[error("reading {}: {error}", path.display())]
    Mods {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{what}: {error}")]
    Hub { what: String, error: HubError },
    /// A name [`crate::Game::name_object`] cannot give.
    #[error("cannot name {object} `{name}`: {reason}")]
    StableName {
        object: gantry_host::ObjectId,
        name: String,
        reason: String,
    },
    #[error("starting {language}: {error}")]
    Engine {
        language: &'static str,
        error: String,
    },
}
