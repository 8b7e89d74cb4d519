//! Inlay hints: the parameter names of a message at its send sites, read
//! from the table (`NotifyMessage("Quest.Start", id: "wolves", reward: 5)`),
//! and a non-event key's kind after it where the function does not say it.

use std::ops::Range;

use gantry_host::{Kind, SignatureTable};
use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel};

use super::SourceFile;

/// The hints of the calls that touch bytes `range`.
pub fn inlay_hints(
    file: &SourceFile<'_>,
    table: &SignatureTable,
    range: Range<usize>,
) -> Vec<InlayHint> {
    let mut out = Vec::new();
    for call in file.calls {
        if call.call.end < range.start || call.call.start > range.end {
            continue;
        }
        let Some(entry) = call.literal_key().and_then(|k| table.get(k)) else {
            continue;
        };
        for (arg, param) in call.message_args().iter().zip(&entry.params) {
            let written = file.text.get(arg.span.start..arg.span.end).unwrap_or("");
            // `reward` passed as `reward` says its name already.
            if written == param.name || written.ends_with(&format!(".{}", param.name)) {
                continue;
            }
            out.push(InlayHint {
                position: file.lines.position(file.text, arg.span.start),
                label: InlayHintLabel::String(format!("{}:", param.name)),
                kind: Some(InlayHintKind::PARAMETER),
                text_edits: None,
                tooltip: None,
                padding_left: None,
                padding_right: Some(true),
                data: None,
            });
        }
        // A listen or an unbind does not say what the key is; a send of a
        // store or a table should know it is one.
        if entry.kind != Kind::Event
            && let Some(key) = call.key_arg()
            && !matches!(
                call.function,
                gantry_host::ApiFunction::StoreObjectMessage
                    | gantry_host::ApiFunction::OnceObjectMessage
                    | gantry_host::ApiFunction::RemoveStoredObjectMessage
                    | gantry_host::ApiFunction::StoredArray
                    | gantry_host::ApiFunction::ListenHook
                    | gantry_host::ApiFunction::RunHook
            )
        {
            out.push(InlayHint {
                position: file.lines.position(file.text, key.span.end),
                label: InlayHintLabel::String(format!("{}", entry.kind)),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: None,
                padding_left: Some(true),
                padding_right: None,
                data: None,
            });
        }
    }
    out
}
