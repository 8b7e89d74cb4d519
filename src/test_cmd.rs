//! `gantry test DIR`: runs the mod's `tests/*.lua` and `tests/*.rhai`
//! ([`gantry_loader::testing`]), one line per case, then `N passed, N
//! failed`; `--junit FILE` writes the same as JUnit XML for CI. Exit 1 when
//! a case failed (or a test script was skipped), 0 otherwise.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use gantry_loader::Options;
use gantry_loader::testing::{self, CaseResult};
use gantry_lua::runtime::LuaOptions;
use gantry_rhai::RhaiOptions;

use crate::limits::LimitArgs;
use crate::out::{errln, outln};

pub fn run(dir: &Path, junit: Option<PathBuf>, limits: &LimitArgs) -> anyhow::Result<ExitCode> {
    crate::folder::mod_folder(dir)?;
    // Said before the tests run, not after.
    if let Some(path) = &junit {
        replaceable(path).with_context(|| format!("--junit {}", path.display()))?;
    }
    let (mut lua, mut rhai) = (LuaOptions::default(), RhaiOptions::default());
    limits.apply(&mut lua, &mut rhai);
    // Each case starts from the mod as shipped: not from the saved state
    // a developer's own runs left in `.gantry/saved/`.
    let options = Options {
        lua,
        rhai,
        fresh: true,
        ..Options::default()
    };
    let (files, skipped) = testing::test_files(dir);
    for text in &skipped {
        errln!("warning: {text}");
    }
    if files.is_empty() {
        errln!("error: no tests/*.lua or tests/*.rhai in {}", dir.display());
        return Ok(ExitCode::from(1));
    }
    let mut results = Vec::new();
    for file in &files {
        for case in testing::run_file(dir, &options, file) {
            match &case.outcome {
                Ok(()) => outln!("ok   {}: {}", case.file, one_line(&case.name)),
                Err(text) => {
                    outln!("FAIL {}: {}", case.file, one_line(&case.name));
                    for line in text.lines() {
                        outln!("     {line}");
                    }
                }
            }
            results.push(case);
        }
    }
    let failed = results.iter().filter(|c| c.outcome.is_err()).count();
    outln!("{} passed, {failed} failed", results.len() - failed);
    if let Some(path) = junit {
        std::fs::write(&path, junit_xml(&results))
            .with_context(|| format!("--junit {}", path.display()))?;
    }
    Ok(if failed > 0 || !skipped.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether the report may be written at `path`: nothing there, or an XML
/// file (an older report). A mistyped path never costs the user a script,
/// and a FIFO is never opened.
fn replaceable(path: &Path) -> anyhow::Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_file() {
        anyhow::bail!("not a regular file; no report written");
    }
    let mut start = Vec::new();
    std::fs::File::open(path)?.take(5).read_to_end(&mut start)?;
    if meta.len() > 0 && start != b"<?xml" {
        anyhow::bail!("exists and is not an XML report; not overwritten");
    }
    Ok(())
}

/// A case's name on one line: its control characters escaped.
fn one_line(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The results as JUnit XML: one `testsuite` per test script.
fn junit_xml(results: &[CaseResult]) -> String {
    let mut files: Vec<&str> = results.iter().map(|c| c.file.as_str()).collect();
    files.dedup();
    let failed = results.iter().filter(|c| c.outcome.is_err()).count();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gantry test\" tests=\"{}\" failures=\"{failed}\">\n",
        results.len()
    );
    for file in files {
        let cases: Vec<&CaseResult> = results.iter().filter(|c| c.file == file).collect();
        let failures = cases.iter().filter(|c| c.outcome.is_err()).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">\n",
            escape(file),
            cases.len()
        ));
        for case in cases {
            out.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                escape(file),
                escape(&case.name),
                case.seconds
            ));
            match &case.outcome {
                Ok(()) => out.push_str("/>\n"),
                Err(text) => {
                    let first = text.lines().next().unwrap_or_default();
                    out.push_str(&format!(
                        ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                        escape(first),
                        escape(text)
                    ));
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Text made safe for an XML attribute or element (control characters
/// XML cannot hold are dropped).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}
