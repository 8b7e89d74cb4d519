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

/// A `gantry run --watch` child whose stdout lines arrive on a channel;
/// killed when dropped.
pub struct Watching {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Watching {
    pub fn start(dir: &Path) -> Self {
        let mut child = gantry()
            .args(["run", dir.to_str().unwrap(), "--watch", "--tick-ms", "20"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// Waits (at most 20 s) for a line equal to `want`; returns the lines
    /// seen before it.
    pub fn wait_for(&self, want: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(50)) {
                if line == want {
                    return seen;
                }
                seen.push(line);
            }
        }
        panic!("no line {want:?} within 20 s; saw {seen:?}");
    }

    /// Ctrl-C, then the exit status and stderr.
    pub fn interrupt(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(killed.success());
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        (status, stderr)
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
