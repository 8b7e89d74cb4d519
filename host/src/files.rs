//! Reading and writing a mod's files without trusting them.
//!
//! A mod folder is hostile: a script, a module, the signature table or a
//! generated stub can be a symbolic link out of its folder, a FIFO whose
//! first read blocks forever, a device that never ends (`/dev/zero`), a
//! file too large to hold, or text with a byte-order mark or invalid UTF-8.
//! Every file Gantry reads on a mod's behalf goes through [`read_text_in`]
//! (or [`read_text`] for a path the user named on the command line), and
//! every file it writes or deletes through [`write_in`] / [`remove_in`],
//! which never pass through a symbolic link below the folder they manage.
//!
//! Errors name the file relative to its folder, as the user wrote it.

use std::fs::{self, File, Metadata};
use std::io::{self, Read as _, Write as _};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

/// One mebibyte, the unit sizes are given in.
pub const MIB: u64 = 1 << 20;

/// The largest script or module a runtime loads (16 MiB): far above any
/// hand-written script, far below what would exhaust memory.
pub const MAX_SCRIPT_BYTES: u64 = 16 * MIB;

/// The largest signature table file read (64 MiB), checked before parsing:
/// parsing takes a multiple of the file's size in memory.
pub const MAX_TABLE_BYTES: u64 = 64 * MIB;

/// Why a file could not be read or written. `path` is the file as the user
/// knows it: relative to its folder where it is inside one.
#[derive(Debug, Error)]
pub enum FileError {
    #[error("{path}: no such file")]
    NotFound { path: String },
    #[error(
        "{path}: the file name is not valid UTF-8 (shown with \u{FFFD} in place of the bytes that are not); rename the file"
    )]
    NonUtf8Name { path: String },
    #[error(
        "{path} leads outside {folder} (through a symbolic link); only files inside it are used"
    )]
    Outside { path: String, folder: String },
    #[error("{path} is not a name inside {folder} (no `..`, no absolute path)")]
    NotInside { path: String, folder: String },
    #[error("{path} is {what}, not a regular file")]
    NotAFile { path: String, what: &'static str },
    #[error("{path} is larger than {}", Size(*limit))]
    TooLarge { path: String, limit: u64 },
    #[error("{path} is not valid UTF-8 text (line {line})")]
    NotUtf8 { path: String, line: usize },
    #[error("{path} is a symbolic link; Gantry writes nothing through it (remove the link)")]
    Symlink { path: String },
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: io::Error },
    #[error("cannot remove {path}: {source}")]
    Remove { path: String, source: io::Error },
}

impl FileError {
    /// The file the error is about, as shown in the message.
    pub fn path(&self) -> &str {
        match self {
            FileError::NotFound { path }
            | FileError::NonUtf8Name { path }
            | FileError::Outside { path, .. }
            | FileError::NotInside { path, .. }
            | FileError::NotAFile { path, .. }
            | FileError::TooLarge { path, .. }
            | FileError::NotUtf8 { path, .. }
            | FileError::Symlink { path }
            | FileError::Read { path, .. }
            | FileError::Write { path, .. }
            | FileError::Remove { path, .. } => path,
        }
    }

    /// Is this "the file is not there" (a missing file is often an empty
    /// default rather than an error)?
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::NotFound { .. })
    }
}

/// A size limit as a user reads it: whole mebibytes, else bytes.
struct Size(u64);

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 >= MIB && self.0.is_multiple_of(MIB) {
            write!(f, "{} MiB", self.0 / MIB)
        } else {
            write!(f, "{} bytes", self.0)
        }
    }
}

/// `path` as the user knows it: relative to `folder` when inside it (with
/// `/` separators), else as given; bytes that are not UTF-8 shown as `�`.
pub fn shown(folder: &Path, path: &Path) -> String {
    let relative = match path.strip_prefix(folder) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative,
        _ => path,
    };
    let text = relative.to_string_lossy();
    if cfg!(windows) {
        text.replace('\\', "/")
    } else {
        text.into_owned()
    }
}

/// Reads the text file `path` of `folder` (`path` relative to it,
/// absolute, or already beginning with `folder`: see `place_in`): the
/// file must resolve, symbolic links followed, to a regular
/// file inside `folder`, of at most `limit` bytes, in UTF-8 (a leading
/// byte-order mark is dropped). Never blocks on a FIFO or reads a device.
pub fn read_text_in(folder: &Path, path: &Path, limit: u64) -> Result<String, FileError> {
    let full = place_in(folder, path);
    let name = shown(folder, &full);
    check_name(folder, &full, &name)?;
    decode(read_checked(&full, &name, Some(folder), limit)?, &name)
}

/// Where `path` of `folder` is: `path` itself when it already names the
/// file through `folder` (callers often build `folder.join(name)`; joined
/// again, a relative `folder` such as `examples/arena` would be named
/// twice), else `folder` joined with it (an absolute `path` stays as it is).
fn place_in(folder: &Path, path: &Path) -> std::path::PathBuf {
    if path.starts_with(folder) {
        path.to_owned()
    } else {
        folder.join(path)
    }
}

/// A script or module of the mod folder `folder`: [`read_text_in`] bounded
/// by [`MAX_SCRIPT_BYTES`]. What every runtime and tool reads a mod's
/// script with.
pub fn read_script(folder: &Path, path: &Path) -> Result<String, FileError> {
    read_text_in(folder, path, MAX_SCRIPT_BYTES)
}

/// [`read_text_in`] for bytes: the same checks, no decoding.
pub fn read_bytes_in(folder: &Path, path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let full = place_in(folder, path);
    let name = shown(folder, &full);
    check_name(folder, &full, &name)?;
    read_checked(&full, &name, Some(folder), limit)
}

/// Reads a text file the user named (a `--table` path): symbolic links are
/// followed anywhere, but a FIFO, device, socket or folder is refused, the
/// size is bounded by `limit` and the text must be UTF-8 (a leading
/// byte-order mark is dropped).
pub fn read_text(path: &Path, limit: u64) -> Result<String, FileError> {
    let name = path.to_string_lossy().into_owned();
    if path.file_name().is_some_and(|n| n.to_str().is_none()) {
        return Err(FileError::NonUtf8Name { path: name });
    }
    decode(read_checked(path, &name, None, limit)?, &name)
}

/// A file name that is not UTF-8 could not be named in a message, a call
/// site or the table; say so rather than fail later as "no such file".
fn check_name(folder: &Path, full: &Path, name: &str) -> Result<(), FileError> {
    let relative = full.strip_prefix(folder).unwrap_or(full);
    if relative.to_str().is_none() {
        return Err(FileError::NonUtf8Name {
            path: name.to_owned(),
        });
    }
    Ok(())
}

fn read_checked(
    full: &Path,
    name: &str,
    folder: Option<&Path>,
    limit: u64,
) -> Result<Vec<u8>, FileError> {
    let read_err = |source: io::Error| match source.kind() {
        io::ErrorKind::NotFound => FileError::NotFound {
            path: name.to_owned(),
        },
        _ => FileError::Read {
            path: name.to_owned(),
            source,
        },
    };
    // The type first, links followed (a link to a FIFO is a FIFO), before
    // anything opens it: opening a FIFO for reading blocks.
    let meta = fs::metadata(full).map_err(read_err)?;
    regular(&meta, name)?;
    let real = match folder {
        Some(folder) => {
            let real = fs::canonicalize(full).map_err(read_err)?;
            let root = fs::canonicalize(folder).map_err(read_err)?;
            if !real.starts_with(&root) {
                return Err(FileError::Outside {
                    path: name.to_owned(),
                    folder: folder.to_string_lossy().into_owned(),
                });
            }
            real
        }
        None => full.to_owned(),
    };
    if meta.len() > limit {
        return Err(FileError::TooLarge {
            path: name.to_owned(),
            limit,
        });
    }
    let file = open_nonblocking(&real, folder.is_some()).map_err(read_err)?;
    // What was opened may not be what was checked (a file swapped in
    // between): check the opened file itself.
    let meta = file.metadata().map_err(read_err)?;
    regular(&meta, name)?;
    let expected = meta.len().min(limit) as usize;
    let mut bytes = Vec::with_capacity(expected + 1);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge {
            path: name.to_owned(),
            limit,
        });
    }
    Ok(bytes)
}

/// Opens for reading without blocking on a FIFO swapped in after the type
/// check (its open would wait for a writer), and, for a path already
/// resolved, without following a link swapped in at its end.
fn open_nonblocking(path: &Path, resolved: bool) -> io::Result<File> {
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
        if resolved {
            flags |= libc::O_NOFOLLOW;
        }
        options.custom_flags(flags);
    }
    #[cfg(not(unix))]
    let _ = resolved;
    options.open(path)
}

/// Refuses anything but a regular file, naming what it is.
fn regular(meta: &Metadata, name: &str) -> Result<(), FileError> {
    if meta.is_file() {
        return Ok(());
    }
    Err(FileError::NotAFile {
        path: name.to_owned(),
        what: describe(meta),
    })
}

fn describe(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a folder";
    }
    if kind.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// Drops a leading byte-order mark and checks UTF-8, naming the first bad
/// line.
fn decode(mut bytes: Vec<u8>, name: &str) -> Result<String, FileError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..valid]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        FileError::NotUtf8 {
            path: name.to_owned(),
            line,
        }
    })
}

/// The components of `path` below `folder`, refusing `..`, absolute parts
/// and a path not below `folder`.
fn below<'p>(folder: &Path, path: &'p Path) -> Result<&'p Path, FileError> {
    let relative = path
        .strip_prefix(folder)
        .map_err(|_| FileError::NotInside {
            path: shown(folder, path),
            folder: folder.to_string_lossy().into_owned(),
        })?;
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(FileError::NotInside {
            path: shown(folder, path),
            folder: folder.to_string_lossy().into_owned(),
        });
    }
    Ok(relative)
}

/// Makes `dir` (`folder` or below it) a folder that is reached through
/// real folders only: each part below `folder` that exists must be a folder
/// and not a symbolic link (a link is refused, never followed); missing
/// parts are created. `folder` itself is trusted: it is the one the user
/// named.
pub fn create_dirs_in(folder: &Path, dir: &Path) -> Result<(), FileError> {
    let relative = below(folder, dir)?;
    let write_err = |at: &Path, source| FileError::Write {
        path: shown(folder, at),
        source,
    };
    fs::create_dir_all(folder).map_err(|e| write_err(folder, e))?;
    let mut at = folder.to_path_buf();
    for part in relative.components() {
        at.push(part);
        match part_at(&at) {
            Part::Folder => {}
            Part::Link => return Err(link_in(folder, &at)),
            Part::Other => {
                return Err(write_err(
                    &at,
                    io::Error::other("a file is where a folder should be"),
                ));
            }
            Part::Unreadable(e) => return Err(write_err(&at, e)),
            Part::Missing => match fs::create_dir(&at) {
                Ok(()) => {}
                // Created meanwhile (another run): only a real folder will do.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match part_at(&at) {
                    Part::Folder => {}
                    Part::Link => return Err(link_in(folder, &at)),
                    _ => return Err(write_err(&at, e)),
                },
                Err(e) => return Err(write_err(&at, e)),
            },
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` (below `folder`) as a whole: a temporary file
/// beside it, then a rename, so a reader never sees half a file and a
/// failed write leaves the old one. The folders on the way are real ones
/// ([`create_dirs_in`]); a symbolic link at `path` is replaced, never
/// written through.
pub fn write_in(folder: &Path, path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    below(folder, path)?;
    let parent = path.parent().unwrap_or(folder);
    create_dirs_in(folder, parent)?;
    let name = shown(folder, path);
    let write_err = |source| FileError::Write {
        path: name.clone(),
        source,
    };
    if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(FileError::NotAFile {
            path: name,
            what: "a folder",
        });
    }
    let tmp = temp_path(path);
    let result = (|| {
        // `create_new` never follows a link at the temporary name.
        let mut file = File::options().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        // A rename replaces the name itself: a link there is replaced, its
        // target untouched.
        fs::rename(&tmp, path)
    })();
    if let Err(source) = result {
        let _ = fs::remove_file(&tmp);
        return Err(write_err(source));
    }
    Ok(())
}

/// A temporary name beside `path`, unique per process and write (two
/// writers of one file never share one).
fn temp_path(path: &Path) -> PathBuf {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{file_name}.{}.{}.gantry-tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Checks the folders between `folder` and `path` (not `path` itself):
/// each that exists must be a real folder, never a symbolic link (named
/// in the error). Returns whether they all exist (when one does not,
/// neither does `path`).
pub fn check_parents_in(folder: &Path, path: &Path) -> Result<bool, FileError> {
    let relative = below(folder, path)?;
    let mut at = folder.to_path_buf();
    let parts: Vec<_> = relative.components().collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        at.push(part);
        match part_at(&at) {
            Part::Folder => {}
            Part::Link => return Err(link_in(folder, &at)),
            Part::Other | Part::Missing => return Ok(false),
            Part::Unreadable(source) => {
                return Err(FileError::Read {
                    path: shown(folder, &at),
                    source,
                });
            }
        }
    }
    Ok(true)
}

/// What one part of a path below a managed folder is, looked at without
/// following a link.
enum Part {
    Folder,
    Link,
    /// A file, FIFO, device: not a folder.
    Other,
    Missing,
    Unreadable(io::Error),
}

fn part_at(at: &Path) -> Part {
    match fs::symlink_metadata(at) {
        Ok(meta) if meta.file_type().is_symlink() => Part::Link,
        Ok(meta) if meta.is_dir() => Part::Folder,
        Ok(_) => Part::Other,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Part::Missing,
        Err(e) => Part::Unreadable(e),
    }
}

/// The error for a symbolic link met at `at` on the way below `folder`.
fn link_in(folder: &Path, at: &Path) -> FileError {
    FileError::Symlink {
        path: shown(folder, at),
    }
}

/// Removes the file `path` below `folder` when every folder on the way is
/// a real folder ([`check_parents_in`]); a symbolic link at `path` is
/// removed itself (its target is untouched). Returns whether something
/// was removed (`false` when it was not there).
pub fn remove_in(folder: &Path, path: &Path) -> Result<bool, FileError> {
    if !check_parents_in(folder, path)? {
        return Ok(false);
    }
    let remove_err = |source| FileError::Remove {
        path: shown(folder, path),
        source,
    };
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => Err(FileError::NotAFile {
            path: shown(folder, path),
            what: "a folder",
        }),
        Ok(_) => match fs::remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(remove_err(source)),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(remove_err(source)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn a_file_name_that_is_not_utf8_is_named_as_such_not_as_missing() {
        use std::os::unix::ffi::OsStrExt as _;
        let dir = folder();
        let name = std::ffi::OsStr::from_bytes(b"caf\xE9.lua");
        fs::write(dir.path().join(name), "print(1)").unwrap();
        let err = read_script(dir.path(), Path::new(name)).unwrap_err();
        assert!(matches!(err, FileError::NonUtf8Name { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("caf\u{FFFD}.lua: the file name is not valid UTF-8"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_script_is_named_relative_to_its_folder() {
        let dir = folder();
        let err = read_script(dir.path(), Path::new("lib/none.lua")).unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(err.to_string(), "lib/none.lua: no such file");
    }

    #[test]
    fn a_byte_order_mark_is_dropped_and_the_text_kept() {
        let dir = folder();
        fs::write(dir.path().join("a.lua"), "\u{FEFF}print(1)\n").unwrap();
        assert_eq!(
            read_script(dir.path(), Path::new("a.lua")).unwrap(),
            "print(1)\n"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read_and_one_byte_more_is_refused() {
        let dir = folder();
        fs::write(dir.path().join("a.lua"), "x".repeat(100)).unwrap();
        assert_eq!(
            read_text_in(dir.path(), Path::new("a.lua"), 100)
                .unwrap()
                .len(),
            100
        );
        let err = read_text_in(dir.path(), Path::new("a.lua"), 99).unwrap_err();
        assert_eq!(err.to_string(), "a.lua is larger than 99 bytes");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_inside_the_folder_is_read_and_one_out_of_it_is_refused() {
        let root = folder();
        let dir = root.path().join("mod");
        fs::create_dir_all(dir.join("real")).unwrap();
        fs::write(dir.join("real/a.lua"), "inside").unwrap();
        fs::write(root.path().join("secret.lua"), "outside").unwrap();
        std::os::unix::fs::symlink("real/a.lua", dir.join("in.lua")).unwrap();
        std::os::unix::fs::symlink("../secret.lua", dir.join("out.lua")).unwrap();
        assert_eq!(read_script(&dir, Path::new("in.lua")).unwrap(), "inside");
        let err = read_script(&dir, Path::new("out.lua")).unwrap_err();
        assert!(matches!(err, FileError::Outside { .. }), "{err}");
        assert!(
            err.to_string().starts_with("out.lua leads outside"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn nothing_is_written_or_removed_through_a_linked_folder() {
        let root = folder();
        let dir = root.path().join("mod");
        let victim = root.path().join("victim");
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir_all(&victim).unwrap();
        fs::write(victim.join("keep.txt"), "keep").unwrap();
        std::os::unix::fs::symlink("../victim", dir.join("link")).unwrap();
        let err = write_in(&dir, &dir.join("link/keep.txt"), b"overwritten").unwrap_err();
        assert!(matches!(err, FileError::Symlink { .. }), "{err}");
        let err = remove_in(&dir, &dir.join("link/keep.txt")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "link is a symbolic link; Gantry writes nothing through it (remove the link)"
        );
        assert_eq!(fs::read_to_string(victim.join("keep.txt")).unwrap(), "keep");
        // A link as the file itself is removed, its target kept.
        std::os::unix::fs::symlink("../victim/keep.txt", dir.join("file")).unwrap();
        assert!(remove_in(&dir, &dir.join("file")).unwrap());
        assert_eq!(fs::read_to_string(victim.join("keep.txt")).unwrap(), "keep");
        // `..` is not a name inside the folder.
        let err = write_in(&dir, &dir.join("../victim/keep.txt"), b"x").unwrap_err();
        assert!(matches!(err, FileError::NotInside { .. }), "{err}");
    }
}
