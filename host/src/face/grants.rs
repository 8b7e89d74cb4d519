//! Grants enforced: every API call a script makes is checked against its
//! mod's grants before it reaches the hub.
//!
//! A host that loads a script of mod M hands the runtime M's
//! [`ModGrants`] (the runtimes' `load_granted`); every call that script
//! makes, generic or baked, in any form, runs [`super::call_api`], which
//! asks [`ModGrants::check`] first. The mod is the one the host said, never
//! one a script names: no API form takes a mod.
//!
//! A decision is made once per key and grant, when the key is first used
//! (or when a call is baked) and kept in a per-key bit set: a send with
//! grants pays one indexed load and a bit test, not a walk of the
//! subtrees.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use thiserror::Error;

use crate::ApiFunction;
use crate::Key;
use crate::manifest::{Grant, Grants, KeyTrees};

/// The grant an API function needs.
pub fn grant_of(function: ApiFunction) -> Grant {
    match function {
        ApiFunction::NotifyMessage
        | ApiFunction::NotifyWorldMessage
        | ApiFunction::NotifyObjectMessage
        | ApiFunction::SendObjectMessage
        | ApiFunction::Request => Grant::Send,
        ApiFunction::StoreObjectMessage
        | ApiFunction::OnceObjectMessage
        | ApiFunction::RemoveStoredObjectMessage
        | ApiFunction::StoredArray => Grant::Store,
        ApiFunction::ListenMessage
        | ApiFunction::ListenWorldMessage
        | ApiFunction::ListenObjectMessage
        | ApiFunction::ListenRowMessage
        | ApiFunction::UnbindMessage => Grant::Listen,
        ApiFunction::ListenHook | ApiFunction::RunHook => Grant::Hook,
    }
}

/// A call outside its mod's grants: the mod, the key, the grant it lacks
/// and what that grant covers.
///
/// `mod "ui" may not send "Quest.Start": its grants send to Ui only`
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct GrantError {
    pub module: Rc<str>,
    pub grant: Grant,
    pub key: String,
    /// What the mod's grant of this kind covers.
    pub granted: KeyTrees,
}

impl fmt::Display for GrantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = self.grant.verb();
        write!(
            f,
            "mod \"{}\" may not {verb} \"{}\": ",
            self.module, self.key
        )?;
        if self.granted.is_empty() {
            write!(f, "its grants {verb} no key (no `{}` grant)", self.grant)
        } else {
            let verb = match self.grant {
                Grant::Send => "send to",
                _ => verb,
            };
            write!(f, "its grants {verb} {} only", self.granted)
        }
    }
}

/// Bits per key in the decision cache: one "decided" and one "allowed"
/// bit per grant.
const DECIDED: u8 = 1;
const ALLOWED: u8 = 1 << 4;

/// One mod's grants as its scripts' calls are checked against them:
/// shared (`Rc`) by every script of the mod.
#[derive(Debug)]
pub struct ModGrants {
    module: Rc<str>,
    grants: Grants,
    /// Per key index: for each grant, whether it was decided and whether
    /// it allows the key.
    decided: RefCell<Vec<u8>>,
}

impl ModGrants {
    /// Mod `module` may use what `grants` cover (already narrowed by the
    /// game; see [`Grants::effective`]).
    pub fn new(module: &str, grants: Grants) -> Self {
        Self {
            module: Rc::from(module),
            grants,
            decided: RefCell::new(Vec::new()),
        }
    }

    /// The grants of `module` when it has any: `None` (everything allowed)
    /// stays `None`, so a host can write `ModGrants::of(name, effective)`.
    pub fn of(module: &str, grants: Option<Grants>) -> Option<Rc<Self>> {
        grants.map(|grants| Rc::new(Self::new(module, grants)))
    }

    /// The mod's name.
    pub fn module(&self) -> &str {
        &self.module
    }

    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// May the mod call `function` on `key` (`text`, as interned)? Decided
    /// on the first call of a grant on a key, read back afterwards.
    #[inline]
    pub fn check(&self, function: ApiFunction, key: Key, text: &str) -> Result<(), GrantError> {
        let grant = grant_of(function);
        let bit = grant.index() as u8;
        let cached = self.decided.borrow().get(key.index()).copied();
        if let Some(bits) = cached
            && bits & (DECIDED << bit) != 0
        {
            return if bits & (ALLOWED << bit) != 0 {
                Ok(())
            } else {
                Err(self.refusal(grant, text))
            };
        }
        self.decide(grant, key, text)
    }

    #[cold]
    fn decide(&self, grant: Grant, key: Key, text: &str) -> Result<(), GrantError> {
        let allowed = self.grants.allows(grant, text);
        let bit = grant.index() as u8;
        let mut decided = self.decided.borrow_mut();
        if decided.len() <= key.index() {
            decided.resize(key.index() + 1, 0);
        }
        decided[key.index()] |= (DECIDED << bit) | if allowed { ALLOWED << bit } else { 0 };
        drop(decided);
        if allowed {
            Ok(())
        } else {
            Err(self.refusal(grant, text))
        }
    }

    #[cold]
    fn refusal(&self, grant: Grant, key: &str) -> GrantError {
        GrantError {
            module: self.module.clone(),
            grant,
            key: key.to_owned(),
            granted: self.grants.get(grant).clone(),
        }
    }
}
