//! A checked manifest, declared into a signature table or a hub.

use super::Manifest;
use crate::hub::{Hub, HubError};
use crate::signature::{Language, Role, SignatureTable};

impl Manifest {
    /// Declares every struct and key of the manifest into `table`, with
    /// origin `declared`: a declaration replaces what runs observed (the
    /// kind, the parameters and their names, a request's response, a
    /// struct's fields), a doc replaces the one there unless the manifest
    /// has none, and each key's declaring site is its line in the
    /// manifest ([`Language::Manifest`], [`Role::Declare`]).
    ///
    /// Idempotent: declaring the same manifest twice leaves the table as
    /// once. A key's earlier declaring site in this same file (the
    /// manifest was edited since) is replaced, not kept beside the new
    /// one. A key or struct the manifest no longer declares is left as
    /// the table has it.
    ///
    /// A tool that also reads a table file merges that first and declares
    /// after: the manifest is the newer word.
    pub fn declare_into(&self, table: &mut SignatureTable) {
        for declared in &self.structs {
            table.declare_struct(&declared.name, declared.def());
        }
        for declared in &self.keys {
            if let Some(entry) = table.keys.get_mut(&declared.key) {
                entry.sites.retain(|site| {
                    !(site.role == Role::Declare
                        && site.language == Language::Manifest
                        && site.file == self.file)
                });
            }
            // Checked when read: a valid key.
            if let Err(e) = table.declare(
                &declared.key,
                declared.decl(),
                Some(declared.site(&self.file)),
            ) {
                tracing::warn!(key = %declared.key, error = %e, "manifest key refused by the table");
            }
        }
    }

    /// [`Manifest::declare_into`] on a hub's table, and each key declared
    /// as the host declares its own ([`Hub::declare_at`]): a table merged
    /// into the hub later ([`Hub::merge_table`]) does not retype it, and a
    /// send that contradicts it is refused.
    pub fn declare_on(&self, hub: &Hub) -> Result<(), HubError> {
        hub.edit_table(|table| self.declare_into(table));
        for declared in &self.keys {
            // The site is in the table already (declare_into).
            hub.declare_at(&declared.key, declared.decl(), None)?;
        }
        Ok(())
    }
}
