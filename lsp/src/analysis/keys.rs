//! The keys a script writes as literals: where each one's text is, and what
//! the call around it does with it. Rename, highlights, symbols, semantic
//! tokens and code lenses all start here.

use std::ops::Range;

use gantry_host::{ApiFunction, Role, ScannedCall};

use super::SourceFile;

/// What a call does with its key, as an outline groups it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Sends,
    Listens,
    Stores,
    Hooks,
}

impl Group {
    pub fn of(function: ApiFunction) -> Option<Group> {
        use ApiFunction::*;
        Some(match function {
            NotifyMessage | NotifyWorldMessage | NotifyObjectMessage | SendObjectMessage
            | Request => Group::Sends,
            ListenMessage | ListenWorldMessage | ListenObjectMessage | ListenRowMessage => {
                Group::Listens
            }
            StoreObjectMessage | OnceObjectMessage | RemoveStoredObjectMessage | StoredArray => {
                Group::Stores
            }
            ListenHook | RunHook => Group::Hooks,
            UnbindMessage => return None,
        })
    }

    pub fn title(self) -> &'static str {
        match self {
            Group::Sends => "sends",
            Group::Listens => "listens",
            Group::Stores => "stores",
            Group::Hooks => "hooks",
        }
    }
}

/// One literal key in a script.
#[derive(Debug, Clone)]
pub struct LiteralKey<'a> {
    pub call: &'a ScannedCall,
    pub key: &'a str,
    /// The whole literal, quotes included.
    pub literal: Range<usize>,
    /// The key's own text, without its delimiters; `None` when the literal
    /// does not hold the key verbatim (an escape inside it), where no edit
    /// of the key's text is safe.
    pub content: Option<Range<usize>>,
}

impl LiteralKey<'_> {
    pub fn role(&self) -> Option<Role> {
        self.call.function.role()
    }
}

/// The key's text inside a literal spanning `literal`: the delimiters are
/// as wide on both sides (`"…"`, `'…'`, `[[…]]`, `[==[…]==]`), and the
/// text between them must be the key itself.
pub fn key_content(text: &str, literal: Range<usize>, key: &str) -> Option<Range<usize>> {
    let extra = literal.len().checked_sub(key.len())?;
    if extra == 0 || extra % 2 != 0 {
        return None;
    }
    let content = literal.start + extra / 2..literal.end - extra / 2;
    (text.get(content.clone()) == Some(key)).then_some(content)
}

/// Every call of `file` whose key is a literal, in source order.
pub fn literal_keys<'a>(file: &SourceFile<'a>) -> Vec<LiteralKey<'a>> {
    let text = file.text;
    file.calls
        .iter()
        .filter_map(|call| {
            let key = call.literal_key()?;
            let span = call.key_arg()?.span;
            let literal = span.start..span.end;
            Some(LiteralKey {
                call,
                key,
                content: key_content(text, literal.clone(), key),
                literal,
            })
        })
        .collect()
}

/// The literal key holding byte `offset` (its quotes count).
pub fn literal_key_at<'a>(file: &SourceFile<'a>, offset: usize) -> Option<LiteralKey<'a>> {
    literal_keys(file)
        .into_iter()
        .find(|k| k.literal.start <= offset && offset <= k.literal.end)
}
