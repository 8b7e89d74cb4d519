//! Which generic API functions a key can be used with, and the argument list
//! of each such call — the one place both the Lua and the Rhai generators
//! learn the script API from, so the two stay in step.
//!
//! Argument positions follow [`ApiFunction`] (`key_index`,
//! `message_args_start`, `listener_index`, ...); this module only adds what
//! the positions cannot say: what the listener receives and what a call
//! returns.

use gantry_host::{ApiFunction, KeyEntry, Kind, Origin, Param};

/// One argument of a generic API call, language-neutral.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot<'a> {
    /// The world a world-scoped call sends on or listens to.
    World,
    /// The object (or named composite) a call sends on or listens to.
    Object,
    /// The message key: the literal the checker narrows by.
    Key,
    /// One message parameter, as the table records it.
    Message(&'a Param),
    /// Who owns the listener (`nil` means the calling script's object).
    Owner,
    /// The listener function; what it receives is [`Listener`].
    Listener(Listener),
    /// The row number of `ListenRowMessage` (or `GMP.AllRows`, ...).
    RowIndex,
    /// `{times=, order=, match=}`, optional.
    ListenOptions,
    /// `{priority=, match=}`, optional.
    HookOptions,
    /// The reply function of `SendObjectMessage`, optional: it receives the response.
    Reply,
    /// A listener id or an owner, for `UnbindMessage`.
    IdOrOwner,
}

impl Slot<'_> {
    /// May a script leave this argument out?
    pub fn optional(self) -> bool {
        matches!(self, Slot::ListenOptions | Slot::HookOptions | Slot::Reply)
    }
}

/// What a listener function receives, after the message parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The message parameters; for a collection, the update table may follow;
    /// for a request, a responder follows.
    Message,
    /// `fn(row, item)`.
    Row,
    /// `fn(payload, ctx)`.
    Hook,
}

/// What a call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returns {
    Nothing,
    /// Whether a stored message was there to remove.
    Removed,
    /// How many listeners an unbind removed.
    Unbound,
    /// A listener id.
    ListenerId,
    /// The response values of a request (`GMP.Request`).
    Response,
    /// The hook result and the (changed) payload.
    HookResult,
    /// The in-place writer of a collection.
    StoredArray,
}

/// The full shape of one (function, key) call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape<'a> {
    pub function: ApiFunction,
    pub slots: Vec<Slot<'a>>,
    pub returns: Returns,
}

/// Does this key take a reply (is it a request)?
pub fn is_request(entry: &KeyEntry) -> bool {
    entry.response.is_some()
}

/// The element struct of a collection key, if the table says it is one.
pub fn collection_element(entry: &KeyEntry) -> Option<&str> {
    match entry.params.as_slice() {
        [only] if entry.kind == Kind::Collection => only.ty.struct_array_element(),
        _ => None,
    }
}

/// Which generic functions a key can be called with. Hooks are their own
/// channel (`ListenHook`/`RunHook`); everything else is a message, stored
/// keys add the store family, collections the row family, and requests
/// `GMP.Request`. A key outside a function's list is a typo to the checker.
/// A key only observed as a plain event may be stored too: the table has
/// seen one use of it, and storing it makes it a store (the hub accepts
/// that, and `gantry check` with it); a declared event may not.
pub fn functions_for(entry: &KeyEntry) -> Vec<ApiFunction> {
    use ApiFunction::*;
    if entry.kind == Kind::Hook {
        return vec![ListenHook, RunHook, UnbindMessage];
    }
    let mut functions = vec![
        NotifyMessage,
        NotifyWorldMessage,
        NotifyObjectMessage,
        SendObjectMessage,
    ];
    if is_request(entry) {
        functions.push(Request);
    }
    let observed_event = entry.kind == Kind::Event && entry.origin == Origin::Observed;
    if matches!(entry.kind, Kind::Store | Kind::Collection) || observed_event {
        functions.extend([
            StoreObjectMessage,
            OnceObjectMessage,
            RemoveStoredObjectMessage,
        ]);
    }
    functions.extend([ListenMessage, ListenWorldMessage, ListenObjectMessage]);
    if collection_element(entry).is_some() {
        functions.extend([ListenRowMessage, StoredArray]);
    }
    functions.push(UnbindMessage);
    functions.sort();
    functions
}

/// A key's [`functions_for`] as bits: tested once per (function, key) while
/// a generator walks thousands of keys, so it is kept inline and small
/// rather than behind a `Vec` pointer per key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FunctionSet(u32);

impl FunctionSet {
    /// The functions a key can be called with.
    pub fn of(entry: &KeyEntry) -> FunctionSet {
        functions_for(entry).into_iter().collect()
    }

    pub fn contains(self, function: ApiFunction) -> bool {
        self.0 & Self::bit(function) != 0
    }

    pub fn remove(&mut self, function: ApiFunction) {
        self.0 &= !Self::bit(function);
    }

    /// The members, in [`ApiFunction::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = ApiFunction> {
        ApiFunction::ALL
            .into_iter()
            .filter(move |f| self.contains(*f))
    }

    fn bit(function: ApiFunction) -> u32 {
        const { assert!(ApiFunction::ALL.len() <= 32) };
        1 << function as u32
    }
}

impl FromIterator<ApiFunction> for FunctionSet {
    fn from_iter<I: IntoIterator<Item = ApiFunction>>(functions: I) -> FunctionSet {
        FunctionSet(
            functions
                .into_iter()
                .fold(0, |bits, f| bits | FunctionSet::bit(f)),
        )
    }
}

/// The argument list of `function` called with this key.
pub fn shape(function: ApiFunction, entry: &KeyEntry) -> Shape<'_> {
    let mut slots = Vec::with_capacity(entry.params.len() + 4);
    let returns = shape_into(function, entry, &mut slots);
    Shape {
        function,
        slots,
        returns,
    }
}

/// [`shape`] into a caller's buffer (cleared first): the generators ask
/// for about ten shapes per key, so they reuse one buffer.
pub fn shape_into<'a>(
    function: ApiFunction,
    entry: &'a KeyEntry,
    slots: &mut Vec<Slot<'a>>,
) -> Returns {
    use ApiFunction::*;
    slots.clear();
    match function {
        NotifyWorldMessage | ListenWorldMessage => slots.push(Slot::World),
        _ if function.source_index().is_some() => slots.push(Slot::Object),
        _ => {}
    }
    debug_assert_eq!(slots.len(), function.key_index());
    slots.push(Slot::Key);
    match function {
        NotifyMessage | NotifyWorldMessage | NotifyObjectMessage | StoreObjectMessage
        | OnceObjectMessage => {
            slots.extend(entry.params.iter().map(Slot::Message));
            Returns::Nothing
        }
        SendObjectMessage => {
            slots.extend(entry.params.iter().map(Slot::Message));
            if is_request(entry) {
                slots.push(Slot::Reply);
            }
            Returns::Nothing
        }
        Request => {
            slots.extend(entry.params.iter().map(Slot::Message));
            Returns::Response
        }
        RunHook => {
            slots.extend(entry.params.iter().map(Slot::Message));
            Returns::HookResult
        }
        RemoveStoredObjectMessage => Returns::Removed,
        StoredArray => Returns::StoredArray,
        UnbindMessage => {
            slots.push(Slot::IdOrOwner);
            Returns::Unbound
        }
        ListenMessage | ListenWorldMessage | ListenObjectMessage => {
            slots.extend([
                Slot::Owner,
                Slot::Listener(Listener::Message),
                Slot::ListenOptions,
            ]);
            Returns::ListenerId
        }
        ListenRowMessage => {
            slots.extend([
                Slot::Owner,
                Slot::RowIndex,
                Slot::Listener(Listener::Row),
                Slot::ListenOptions,
            ]);
            Returns::ListenerId
        }
        ListenHook => {
            slots.extend([
                Slot::Owner,
                Slot::Listener(Listener::Hook),
                Slot::HookOptions,
            ]);
            Returns::ListenerId
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gantry_host::Type;

    fn entry(kind: Kind, params: Vec<Param>) -> KeyEntry {
        KeyEntry {
            kind,
            params,
            ..Default::default()
        }
    }

    /// The slots must sit exactly where `ApiFunction` says the scanners find
    /// them, or the stubs would type a different argument than the loader bakes.
    #[test]
    fn slots_sit_at_the_positions_of_the_api_vocabulary() {
        let item = Param::new("items", Type::Array(Box::new(Type::Struct("Item".into()))));
        let mut e = entry(Kind::Collection, vec![item]);
        e.response = Some(vec![Param::new("ok", Type::Bool)]);
        for function in ApiFunction::ALL {
            let s = shape(function, &e);
            assert_eq!(s.slots[function.key_index()], Slot::Key, "{function}");
            if let Some(i) = function.message_args_start() {
                assert!(matches!(s.slots[i], Slot::Message(_)), "{function}");
            }
            if let Some(i) = function.listener_index() {
                assert!(matches!(s.slots[i], Slot::Listener(_)), "{function}");
            }
            if let Some(i) = function.owner_index() {
                assert_eq!(s.slots[i], Slot::Owner, "{function}");
            }
            if let Some(i) = function.row_index_index() {
                assert_eq!(s.slots[i], Slot::RowIndex, "{function}");
            }
        }
    }

    #[test]
    fn hooks_are_their_own_channel() {
        let f = functions_for(&entry(Kind::Hook, vec![]));
        assert!(f.contains(&ApiFunction::RunHook));
        assert!(!f.contains(&ApiFunction::NotifyMessage));
        let mut event = entry(Kind::Event, vec![]);
        event.origin = Origin::Declared;
        let f = functions_for(&event);
        assert!(!f.contains(&ApiFunction::RunHook));
        assert!(!f.contains(&ApiFunction::StoreObjectMessage));
        assert!(!f.contains(&ApiFunction::Request));
    }

    #[test]
    fn a_function_set_holds_exactly_the_functions_for_the_key() {
        let item = Param::new("items", Type::Array(Box::new(Type::Struct("Item".into()))));
        let mut request = entry(Kind::Event, vec![]);
        request.response = Some(vec![]);
        for e in [
            entry(Kind::Collection, vec![item]),
            entry(Kind::Hook, vec![]),
            entry(Kind::Store, vec![]),
            request,
        ] {
            let set = FunctionSet::of(&e);
            let listed = functions_for(&e);
            for function in ApiFunction::ALL {
                assert_eq!(
                    set.contains(function),
                    listed.contains(&function),
                    "{function}"
                );
            }
        }
    }

    #[test]
    fn an_observed_event_may_be_stored_and_a_declared_one_may_not() {
        let mut event = entry(Kind::Event, vec![Param::new("n", Type::Int)]);
        event.origin = Origin::Declared;
        assert!(!functions_for(&event).contains(&ApiFunction::StoreObjectMessage));
        event.origin = Origin::Observed;
        assert!(functions_for(&event).contains(&ApiFunction::StoreObjectMessage));
        assert!(functions_for(&event).contains(&ApiFunction::OnceObjectMessage));
    }

    #[test]
    fn only_collections_get_row_listeners_and_the_writer() {
        let store = entry(Kind::Store, vec![Param::new("n", Type::Int)]);
        assert!(functions_for(&store).contains(&ApiFunction::StoreObjectMessage));
        assert!(!functions_for(&store).contains(&ApiFunction::ListenRowMessage));
        let items = Param::new("items", Type::Array(Box::new(Type::Struct("Item".into()))));
        let coll = entry(Kind::Collection, vec![items]);
        assert!(functions_for(&coll).contains(&ApiFunction::ListenRowMessage));
        assert!(functions_for(&coll).contains(&ApiFunction::StoredArray));
    }
}
