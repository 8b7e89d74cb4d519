//! Grant findings: a literal-key call outside its mod's `[grants]`.
//!
//! The hub refuses such a call when it runs (see
//! `gantry_host::face::grants`); `gantry check` and the editor say so
//! before any run, in the hub's own words: the verdict is the host's
//! ([`Grants::allows`] on [`grant_of`] the function) and the message its
//! [`GrantError`]. A call whose key is not a literal is left to the run.

use std::rc::Rc;

use gantry_host::ScannedCall;
use gantry_host::face::GrantError;
use gantry_host::face::grants::grant_of;
use gantry_host::manifest::Grants;

use super::diagnostics::{Code, Diagnostic, Severity};

/// A mod's name and grants, as its manifest declares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModGrantsInfo {
    pub module: Rc<str>,
    pub grants: Grants,
}

/// The calls among `calls` outside `grants` (`None`: a mod without
/// `[grants]`, allowed everything), each an error at its key.
pub fn check_grants(calls: &[ScannedCall], grants: Option<&ModGrantsInfo>) -> Vec<Diagnostic> {
    let Some(info) = grants else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for call in calls {
        let (Some(key), Some(arg)) = (call.literal_key(), call.key_arg()) else {
            continue;
        };
        let grant = grant_of(call.function);
        if info.grants.allows(grant, key) {
            continue;
        }
        let error = GrantError {
            module: info.module.clone(),
            grant,
            key: key.to_owned(),
            granted: info.grants.get(grant).clone(),
        };
        out.push(Diagnostic {
            range: arg.span.start..arg.span.end,
            severity: Severity::Error,
            code: Code::NotGranted,
            message: error.to_string(),
            fix: None,
        });
    }
    out
}
