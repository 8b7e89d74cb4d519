//! Every command line the book shows with its output is run against the
//! built `gantry` and must print what the page says, so a transcript that
//! goes stale fails `cargo test`.
//!
//! How a page writes a transcript:
//! - A ```` ```text ```` block whose first line starts with `$ ` is a
//!   transcript. Each `$ ` line is a command, run by `sh -c` with the built
//!   `gantry` first on `PATH`; the lines up to the next `$ ` are what it
//!   prints, its standard output and standard error interleaved as a
//!   terminal shows them. The exit status is not compared.
//! - Every transcript of a page runs in the page's own folder, in page
//!   order, so a file one command writes is there for the next. The folder
//!   starts as a copy of the repository's `examples/` (without what runs
//!   write there: `.gantry/saved/`, `.gantry/stubs/`), so
//!   `gantry test examples/quest` works as it does in a checkout.
//! - A script or file block of the page with `path=PATH` (```` ```lua,file=ui.lua,path=mymod/ui.lua ````)
//!   is written to PATH in that folder when the page reaches it: the files
//!   the reader was told to make, so `gantry run mymod` runs them. A later
//!   block with the same path replaces the file, as the reader's edit does.
//! - A transcript inside an HTML comment is a step hidden from the reader
//!   (undoing an edit the page asked for); it runs and is checked the same.
//! - What must vary is written as a placeholder: `[..]` in an expected
//!   line stands for any text within that line; the page folder's own
//!   path prints as `/path/to`; in a block marked `text,timings`, every
//!   decimal number (`24.977`) stands for any decimal number and a run of
//!   spaces for any run of spaces (columns widen with the figures).
//! - A transcript that cannot run here (it needs a program the tests do
//!   not have) is marked `text,norun=REASON`; few are.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::book::{Fence, fences, pages};

/// One command of a transcript and what it must print.
#[derive(Debug)]
struct Step {
    command: String,
    expected: Vec<String>,
}

fn is_transcript(fence: &Fence) -> bool {
    fence.lang == "text" && fence.code.starts_with("$ ")
}

fn steps(code: &str) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for line in code.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => out.push(Step {
                command: command.to_owned(),
                expected: Vec::new(),
            }),
            None => out
                .last_mut()
                .expect("a transcript starts with a command")
                .expected
                .push(line.to_owned()),
        }
    }
    out
}

/// `line` with every decimal number as `#` and every run of spaces as one.
fn without_figures(line: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                out.push('#');
            } else {
                out.extend(&chars[start..i]);
            }
        } else if c == ' ' {
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
            out.push(' ');
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether `got` is what `expected` says, `[..]` standing for any text.
fn line_matches(expected: &str, got: &str, timings: bool) -> bool {
    let (expected, got) = if timings {
        (without_figures(expected), without_figures(got))
    } else {
        (expected.to_owned(), got.to_owned())
    };
    let pieces: Vec<&str> = expected.split("[..]").collect();
    if pieces.len() == 1 {
        return expected == got;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !got.starts_with(first) || !got[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &got[first.len()..got.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Copies `from` into `to`, leaving out what runs write (saved state,
/// generated stubs), so every test starts from the committed examples.
fn copy_examples(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            let name = entry.file_name();
            let generated = from.ends_with(".gantry") && (name == "saved" || name == "stubs");
            if !generated {
                copy_examples(&entry.path(), &target);
            }
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// One page's folder, where its transcripts run.
struct Folder {
    dir: tempfile::TempDir,
    path_var: String,
}

impl Folder {
    fn new() -> Folder {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        copy_examples(&root.join("examples"), &dir.path().join("examples"));
        let bin = Path::new(env!("CARGO_BIN_EXE_gantry")).parent().unwrap();
        let path_var = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap()
        .to_string_lossy()
        .into_owned();
        Folder { dir, path_var }
    }

    fn write(&self, path: &str, text: &str) {
        let target: PathBuf = self.dir.path().join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, text).unwrap();
    }

    /// Runs one command as a reader's shell would: what it printed, both
    /// streams in the order written, the folder's path as `/path/to`.
    fn run(&self, command: &str) -> Vec<String> {
        let log = self.dir.path().join(".transcript-output");
        let out = std::fs::File::create(&log).unwrap();
        let status = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(self.dir.path())
            .env("PATH", &self.path_var)
            .env_remove("GANTRY_LOG")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .status()
            .unwrap();
        let _ = status;
        let text = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_file(&log).unwrap();
        let mut text = text;
        for dir in [
            self.dir.path().to_path_buf(),
            self.dir.path().canonicalize().unwrap(),
        ] {
            text = text.replace(&*dir.to_string_lossy(), "/path/to");
        }
        text.lines().map(str::to_owned).collect()
    }
}

/// Runs a page's transcripts in order; each difference, naming its line.
fn check_page(name: &str, page: &str) -> Vec<String> {
    let fences = fences(page);
    if !fences.iter().any(is_transcript) {
        return Vec::new();
    }
    let folder = Folder::new();
    let mut failures = Vec::new();
    for fence in &fences {
        if let Some(path) = fence.attr("path") {
            folder.write(path, &fence.code);
            continue;
        }
        if !is_transcript(fence) || fence.attr("norun").is_some() {
            continue;
        }
        let timings = fence.attr("timings").is_some();
        for step in steps(&fence.code) {
            let got = folder.run(&step.command);
            let same = got.len() == step.expected.len()
                && got
                    .iter()
                    .zip(&step.expected)
                    .all(|(g, e)| line_matches(e, g, timings));
            if !same {
                failures.push(format!(
                    "{name}:{}: `$ {}` should print\n{}\nbut printed\n{}",
                    fence.line,
                    step.command,
                    step.expected.join("\n"),
                    got.join("\n")
                ));
            }
        }
    }
    failures
}

#[test]
fn every_command_the_book_shows_prints_what_the_page_says() {
    let mut failures = Vec::new();
    let mut commands = 0;
    let mut not_run = Vec::new();
    for (name, page) in pages() {
        for fence in fences(&page).iter().filter(|f| is_transcript(f)) {
            match fence.attr("norun") {
                Some(reason) => {
                    assert!(
                        !reason.trim().is_empty(),
                        "{name}:{}: say why the transcript cannot run: `text,norun=REASON`",
                        fence.line
                    );
                    not_run.push(format!("{name}:{}", fence.line));
                }
                None => commands += steps(&fence.code).len(),
            }
        }
        failures.extend(check_page(&name, &page));
    }
    assert!(commands > 15, "only {commands} commands found");
    assert!(
        not_run.len() <= 3,
        "too many transcripts are not run: {not_run:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_stale_transcript_is_caught_and_placeholders_match_what_varies() {
    let page = "```lua,ignore,path=mymod/a.lua\nprint(\"hi\")\n```\n\n\
                ```text\n$ gantry run mymod\nhello\n$ echo took 12.5 ms in $PWD\ntook [..] ms in /path/to\n```\n\n\
                ```text,timings\n$ echo 'a   1.25  b'\na 3.5 b\n```\n\n\
                ```text\n$ echo 1.25\n3.5\n```\n";
    let failures = check_page("probe.md", page);
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert!(
        failures[0].contains("`$ gantry run mymod` should print\nhello\nbut printed\nhi"),
        "{}",
        failures[0]
    );
    assert!(failures[1].contains("`$ echo 1.25`"), "{}", failures[1]);
}
