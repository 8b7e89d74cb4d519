//! What the CLI's end-to-end tests share: the binary, one-step file writes,
//! and a `gantry run --watch` child to talk to.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The `gantry` binary, its own logging off (stderr is the tests' to read).
pub fn gantry() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gantry"));
    cmd.env("GANTRY_LOG", "off");
    cmd
}

/// A run's standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A run's standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Copies a mod folder (an example) into a test's own, leaving out what
/// `gantry stubs` generates (`.gantry/`).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != ".gantry" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Writes `file` in one step (a temporary name, then a rename), so a
/// watching run never sees it truncated and empty: on a loaded machine the
/// two syscalls of a plain write can straddle two polls. Saving in several
/// steps is tested on purpose, with half-written content, where it matters.
pub fn write(dir: &Path, file: &str, text: &str) {
    let temporary = dir.join(format!("{file}.partial"));
    std::fs::write(&temporary, text).unwrap();
    std::fs::rename(&temporary, dir.join(file)).unwrap();
}

/// A `gantry run --watch` child whose stdout and stderr lines arrive on
/// channels; killed when dropped.
pub struct Watching {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    errors: mpsc::Receiver<String>,
}

/// Sends each line `from` gives until it ends or nobody listens.
fn forward(from: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Watching {
    pub fn start(dir: &Path) -> Self {
        Self::start_with(dir, &[])
    }

    /// [`Watching::start`] with more flags for `gantry run`.
    pub fn start_with(dir: &Path, flags: &[&str]) -> Self {
        let mut child = gantry()
            .args(["run", dir.to_str().unwrap(), "--watch", "--tick-ms", "20"])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = forward(child.stdout.take().unwrap());
        let errors = forward(child.stderr.take().unwrap());
        Self {
            child,
            lines,
            errors,
        }
    }

    /// Waits (at most 20 s) for a line equal to `want`; returns the lines
    /// seen before it.
    pub fn wait_for(&self, want: &str) -> Vec<String> {
        wait_on(&self.lines, |line| line == want, want)
    }

    /// Waits (at most 20 s) for a stderr line containing `want`; returns
    /// the lines seen before it.
    pub fn wait_for_error(&self, want: &str) -> Vec<String> {
        wait_on(&self.errors, |line| line.contains(want), want)
    }

    /// The process id, to signal.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Ctrl-C, then the exit status and the rest of stderr.
    pub fn interrupt(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(killed.success());
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        // The forwarding thread ends with the child's stderr.
        while let Ok(line) = self.errors.recv_timeout(Duration::from_secs(10)) {
            stderr.push_str(&line);
            stderr.push('\n');
        }
        (status, stderr)
    }
}

fn wait_on(lines: &mpsc::Receiver<String>, want: impl Fn(&str) -> bool, what: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(50)) {
            if want(&line) {
                return seen;
            }
            seen.push(line);
        }
    }
    panic!("no line {what:?} within 20 s; saw {seen:?}");
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `name` (a program an end-to-end test drives, found on `PATH`), or `None`
/// when it is missing: the test then passes, after one `skipped:` line that
/// says how to run it, written to stderr directly so that `cargo test`
/// shows it (the harness hides what passing tests print). Under CI (`CI`
/// set and not empty) a missing program fails the test instead: CI installs
/// it, so a green CI run is one in which the test ran.
pub fn program_on_path(name: &str, install: &str) -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|path| is_executable(path));
    if found.is_none() {
        if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) {
            panic!("{name} not found on PATH, and CI is set: CI must run this test ({install})");
        }
        use std::io::Write;
        let line = format!("skipped: {name} not found ({install} to run it)\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    found
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}
