//! The shape of one script as an editor shows it: the keys it sends,
//! listens to, stores and hooks (document symbols), every use of the key
//! under the cursor (document highlight), and the calls that span lines
//! (folding ranges).

use std::collections::BTreeMap;

use gantry_host::Role;
use lsp_types::{
    DocumentHighlight, DocumentHighlightKind, DocumentSymbol, FoldingRange, FoldingRangeKind,
    SymbolKind,
};

use super::SourceFile;
use super::keys::{Group, literal_key_at, literal_keys};

/// The script's keys grouped by what its calls do with them: one symbol
/// per group ("sends", "listens", "stores", "hooks"), one child per call,
/// named by its key, detailed by its function.
#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be written.
pub fn document_symbols(file: &SourceFile<'_>) -> Vec<DocumentSymbol> {
    let mut groups: BTreeMap<Group, Vec<DocumentSymbol>> = BTreeMap::new();
    for key in literal_keys(file) {
        let Some(group) = Group::of(key.call.function) else {
            continue;
        };
        let call = key.call.call;
        groups.entry(group).or_default().push(DocumentSymbol {
            name: key.key.to_owned(),
            detail: Some(key.call.function.name().to_owned()),
            kind: SymbolKind::EVENT,
            tags: None,
            deprecated: None,
            range: file.range(call.start..call.end),
            selection_range: file.range(key.literal.clone()),
            children: None,
        });
    }
    groups
        .into_iter()
        .filter_map(|(group, children)| {
            let first = children.first()?;
            let last = children.last()?;
            let range = lsp_types::Range::new(first.range.start, last.range.end);
            Some(DocumentSymbol {
                name: group.title().to_owned(),
                detail: Some(format!("{} call(s)", children.len())),
                kind: SymbolKind::NAMESPACE,
                tags: None,
                deprecated: None,
                range,
                selection_range: first.selection_range,
                children: Some(children),
            })
        })
        .collect()
}

/// Every use in this script of the key under the cursor: sends and stores
/// write it, listens read it.
pub fn highlights(file: &SourceFile<'_>, offset: usize) -> Vec<DocumentHighlight> {
    let Some(at) = literal_key_at(file, offset) else {
        return Vec::new();
    };
    literal_keys(file)
        .into_iter()
        .filter(|k| k.key == at.key)
        .map(|k| DocumentHighlight {
            range: file.range(k.content.clone().unwrap_or(k.literal.clone())),
            kind: Some(match k.role() {
                Some(Role::Send) => DocumentHighlightKind::WRITE,
                Some(Role::Listen) => DocumentHighlightKind::READ,
                _ => DocumentHighlightKind::TEXT,
            }),
        })
        .collect()
}

/// A fold for every API call and every function literal passed to one
/// that spans lines (an eight-line listener folds to its first line).
pub fn folding_ranges(file: &SourceFile<'_>) -> Vec<FoldingRange> {
    // Lines from the byte offsets: they follow edits, the scanner's
    // positions only a full scan.
    let line = |offset: usize| file.lines.line_of(offset) as u32;
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for call in file.calls {
        spans.push((line(call.call.start), line(call.call.end)));
        for arg in call.args.iter().filter(|a| a.function_params.is_some()) {
            spans.push((line(arg.span.start), line(arg.span.end)));
        }
    }
    spans.retain(|(start, end)| end > start);
    spans.sort_unstable();
    spans.dedup();
    spans
        .into_iter()
        .map(|(start_line, end_line)| FoldingRange {
            start_line,
            end_line,
            kind: Some(FoldingRangeKind::Region),
            ..Default::default()
        })
        .collect()
}
