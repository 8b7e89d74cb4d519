//! Structured reports: what went wrong during dispatch, for hosts to read.
//!
//! Everything the hub reports is also logged with `tracing`, but a host (the
//! `gantry` CLI, an editor, a test) wants data, not log lines: the key, the
//! parameter position, what was expected and what arrived, and where.

use std::fmt;

use crate::signature::Site;

/// One thing the hub noticed.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// Arguments contradicted the signature, or a listener wanted more than
    /// was sent; the dispatch was aborted and no listener was called.
    Mismatch {
        key: String,
        /// 0-based parameter position.
        position: usize,
        expected: String,
        got: String,
        /// Where the send happened, when known.
        site: Option<Site>,
        /// The listener that could not take the arguments, when one is to blame.
        listener_site: Option<Site>,
    },
    /// A listener registered with parameters the message does not carry.
    ListenRejected {
        key: String,
        position: usize,
        expected: String,
        got: String,
        site: Option<Site>,
    },
    /// A listener returned an error (a script error, usually).
    ListenerFailed {
        key: String,
        message: String,
        site: Option<Site>,
    },
    /// A request's responder answered a second time; the answer was ignored.
    AnsweredTwice { key: String, seq: u64 },
    /// Every responder of a request was dropped without an answer.
    Unanswered {
        key: String,
        seq: u64,
        site: Option<Site>,
    },
    /// A hook payload was not of the struct a hook listener expects.
    HookPayloadSkipped {
        key: String,
        expected: String,
        got: String,
        site: Option<Site>,
    },
}

impl Report {
    pub fn key(&self) -> &str {
        match self {
            Report::Mismatch { key, .. }
            | Report::ListenRejected { key, .. }
            | Report::ListenerFailed { key, .. }
            | Report::AnsweredTwice { key, .. }
            | Report::Unanswered { key, .. }
            | Report::HookPayloadSkipped { key, .. } => key,
        }
    }
}

fn at(site: &Option<Site>) -> String {
    site.as_ref().map(|s| format!("{s}: ")).unwrap_or_default()
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Report::Mismatch {
                key,
                position,
                expected,
                got,
                site,
                listener_site,
            } => {
                write!(
                    f,
                    "{}`{key}` argument {}: expected {expected}, got {got}; dispatch aborted",
                    at(site),
                    position + 1
                )?;
                // A script's refused send raises in the script too: the
                // code after it does not run, and the report says so in the
                // words the script's own error ends with (one fault, one
                // text, printed once).
                if site.as_ref().is_some_and(|s| s.language.is_script()) {
                    f.write_str(", and the script stopped at this line")?;
                }
                if let Some(l) = listener_site {
                    write!(f, " (listener at {l})")?;
                }
                Ok(())
            }
            Report::ListenRejected {
                key,
                position,
                expected,
                got,
                site,
            } => write!(
                f,
                "{}listener on `{key}` rejected: its parameter {} expects {expected}, the message carries {got}",
                at(site),
                position + 1
            ),
            Report::ListenerFailed { key, message, site } => {
                write!(f, "{}listener of `{key}` failed: {message}", at(site))
            }
            Report::AnsweredTwice { key, seq } => {
                write!(
                    f,
                    "request #{seq} on `{key}` answered twice; the second answer was ignored"
                )
            }
            Report::Unanswered { key, seq, site } => {
                write!(
                    f,
                    "{}request #{seq} on `{key}` was not answered by any listener",
                    at(site)
                )
            }
            Report::HookPayloadSkipped {
                key,
                expected,
                got,
                site,
            } => write!(
                f,
                "{}hook listener on `{key}` expects {expected}, the payload is {got}; not delivered",
                at(site)
            ),
        }
    }
}
