//! Semantic tokens: each literal key coloured by what the table knows of
//! it (declared, only observed, unknown), and each API function's name as
//! a library function, so a theme can tell a typo'd key at a glance.

use gantry_host::{Origin, SignatureTable};
use lsp_types::{
    SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokens, SemanticTokensLegend,
};

use super::SourceFile;
use super::keys::literal_keys;

/// Token types, by index: a key is an `event`, an API name a `function`.
const KEY: u32 = 0;
const FUNCTION: u32 = 1;

/// Modifier bits: `declared` (in `mod.toml`, by the host or by hand),
/// `observed` (recorded from traffic only), `unknown` (not in the table),
/// and `defaultLibrary` on the API's own functions.
const DECLARED: u32 = 1 << 0;
const OBSERVED: u32 = 1 << 1;
const UNKNOWN: u32 = 1 << 2;
const LIBRARY: u32 = 1 << 3;

/// The legend the server advertises; the indices above point into it.
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: vec![SemanticTokenType::EVENT, SemanticTokenType::FUNCTION],
        token_modifiers: vec![
            SemanticTokenModifier::new("declared"),
            SemanticTokenModifier::new("observed"),
            SemanticTokenModifier::new("unknown"),
            SemanticTokenModifier::DEFAULT_LIBRARY,
        ],
    }
}

/// Every token of the script, in order, relative-encoded.
pub fn semantic_tokens(file: &SourceFile<'_>, table: Option<&SignatureTable>) -> SemanticTokens {
    // (start byte, end byte, type, modifiers), one line each.
    let mut tokens: Vec<(usize, usize, u32, u32)> = Vec::new();
    for call in file.calls {
        // The function's own name: past the `GMP.` or `GMP::` before it.
        let name = call.function.name();
        let callee_end = call.callee.end;
        if let Some(start) = callee_end.checked_sub(name.len())
            && file.text.get(start..callee_end) == Some(name)
        {
            tokens.push((start, callee_end, FUNCTION, LIBRARY));
        }
    }
    for key in literal_keys(file) {
        let Some(content) = key.content.clone() else {
            continue;
        };
        let modifiers = match table.and_then(|t| t.get(key.key)) {
            Some(entry) if entry.origin == Origin::Declared => DECLARED,
            Some(_) => OBSERVED,
            None => UNKNOWN,
        };
        tokens.push((content.start, content.end, KEY, modifiers));
    }
    tokens.sort_unstable_by_key(|t| t.0);
    let mut data = Vec::with_capacity(tokens.len());
    let (mut last_line, mut last_start) = (0u32, 0u32);
    let mut last_end = 0usize;
    for (start, end, token_type, modifiers) in tokens {
        if start < last_end {
            continue; // overlapping tokens are not allowed
        }
        let range = file.range(start..end);
        if range.start.line != range.end.line {
            continue; // one line per token
        }
        let delta_line = range.start.line - last_line;
        let delta_start = if delta_line == 0 {
            range.start.character - last_start
        } else {
            range.start.character
        };
        data.push(SemanticToken {
            delta_line,
            delta_start,
            length: range.end.character - range.start.character,
            token_type,
            token_modifiers_bitset: modifiers,
        });
        last_line = range.start.line;
        last_start = range.start.character;
        last_end = end;
    }
    SemanticTokens {
        result_id: None,
        data,
    }
}
