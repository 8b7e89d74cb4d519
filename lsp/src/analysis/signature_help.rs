//! Signature help for the arguments after the key: the whole call's
//! positions, with the message parameters spelled out from the table.

use gantry_host::{ApiFunction, KeyEntry, SignatureTable};
use lsp_types::{
    Documentation, ParameterInformation, ParameterLabel, SignatureHelp, SignatureInformation,
};

use super::SourceFile;
use super::completion::listener_param_names;

/// Signature help at byte `offset`, from the call's `(` on: the key's
/// own signature once the key is a known literal, else the function's
/// (its parameters from the API table). The active parameter is the
/// argument under the cursor, none past the last one.
pub fn signature_help(
    file: &SourceFile<'_>,
    table: &SignatureTable,
    offset: usize,
) -> Option<SignatureHelp> {
    let at = file.call_at(offset)?;
    let known = at
        .key
        .as_deref()
        .and_then(|key| Some((key, table.get(key)?)));
    let Some((key, entry)) = known else {
        return Some(super::api::signature_help(
            at.function,
            file.language,
            at.arg_index,
        ));
    };
    let positions = positions(at.function, key, entry);
    let mut label = format!("{}(", at.function);
    let mut parameters = Vec::with_capacity(positions.len());
    for (i, position) in positions.iter().enumerate() {
        if i > 0 {
            label.push_str(", ");
        }
        let start = utf16_len(&label);
        label.push_str(position);
        parameters.push(ParameterInformation {
            label: ParameterLabel::LabelOffsets([start, utf16_len(&label)]),
            documentation: None,
        });
    }
    label.push(')');
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label,
            documentation: (!entry.doc.is_empty())
                .then(|| Documentation::String(entry.doc.clone())),
            parameters: Some(parameters),
            active_parameter: None,
        }],
        active_signature: Some(0),
        active_parameter: Some(at.arg_index as u32),
    })
}

/// The label of every argument position of `function` on `key`.
fn positions(function: ApiFunction, key: &str, entry: &KeyEntry) -> Vec<String> {
    let mut out = Vec::new();
    if function.source_index().is_some() {
        out.push(
            if function == ApiFunction::NotifyWorldMessage
                || function == ApiFunction::ListenWorldMessage
            {
                "world"
            } else {
                "obj"
            }
            .to_owned(),
        );
    }
    out.push(format!("\"{key}\""));
    if function.message_args_start().is_some() {
        out.extend(entry.params.iter().map(|p| format!("{}: {}", p.name, p.ty)));
        if function == ApiFunction::SendObjectMessage {
            let reply: Vec<String> = entry
                .response
                .iter()
                .flatten()
                .map(|p| format!("{}: {}", p.name, p.ty))
                .collect();
            out.push(format!("reply: function({})", reply.join(", ")));
        }
    }
    if let Some(listener) = function.listener_index() {
        while out.len() < listener {
            out.push(
                if Some(out.len()) == function.row_index_index() {
                    "index"
                } else {
                    "owner"
                }
                .to_owned(),
            );
        }
        let params = if function == ApiFunction::ListenRowMessage {
            listener_param_names(function, entry).join(", ")
        } else {
            entry
                .params
                .iter()
                .map(|p| format!("{}: {}", p.name, p.ty))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push(format!("listener: function({params})"));
        if function != ApiFunction::ListenRowMessage {
            out.push("opts".to_owned());
        }
    }
    if function == ApiFunction::UnbindMessage {
        out.push("id_or_owner".to_owned());
    }
    out
}

fn utf16_len(text: &str) -> u32 {
    text.chars().map(char::len_utf16).sum::<usize>() as u32
}
