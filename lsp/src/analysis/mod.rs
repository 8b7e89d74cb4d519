//! The analysis: pure functions from (a script's text and scanned calls, the
//! signature table, the workspace index) to editor answers. No I/O, no
//! protocol state; the server and `gantry check` both call in here.

pub mod api;
pub mod completion;
pub mod context;
pub mod diagnostics;
pub mod grants;
pub mod inlay;
pub mod keys;
pub mod lens;
pub mod navigation;
pub mod options;
pub mod outline;
pub mod rename;
pub mod semantic;
pub mod signature_help;
pub mod typing;

use gantry_host::{Language, ScannedCall};

use crate::syntax::Parsed;
use crate::text::LineIndex;

/// One script as the analysis sees it.
#[derive(Debug, Clone, Copy)]
pub struct SourceFile<'a> {
    pub text: &'a str,
    pub lines: &'a LineIndex,
    pub language: Language,
    pub calls: &'a [ScannedCall],
    /// The document's parse state, which knows where a line begins inside
    /// a comment or string opened above it; `None` reads every line as
    /// beginning in code.
    pub parsed: Option<&'a Parsed>,
}

impl SourceFile<'_> {
    /// The API call around byte `offset`.
    pub fn call_at(&self, offset: usize) -> Option<context::CallAt> {
        let line = self
            .lines
            .line_range(self.text, self.lines.line_of(offset.min(self.text.len())));
        let code_start = self
            .parsed
            .map_or(line.start, |p| p.code_start(self.text, line.clone()));
        context::call_at(
            self.text,
            self.language,
            self.calls,
            line,
            code_start,
            offset,
        )
    }

    /// The call whose literal key holds byte `offset`.
    pub fn key_at(&self, offset: usize) -> Option<(&ScannedCall, &str)> {
        self.calls.iter().find_map(|call| {
            let key = call.literal_key()?;
            call.key_arg()?.span.contains(offset).then_some((call, key))
        })
    }

    pub fn range(&self, span: std::ops::Range<usize>) -> lsp_types::Range {
        self.lines.range(self.text, span)
    }
}
