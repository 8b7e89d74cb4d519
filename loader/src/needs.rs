//! A mod's `depends` and `optional` as the resolver reads them: names
//! and semver requirements (`ui >= 0.2`, as Cargo writes them).

use gantry_host::manifest::{Dependency, Manifest};
use semver::{Version, VersionReq};

use crate::order::{Candidate, Need};

/// The resolver's view of `manifest`, and what in it cannot be read (a
/// version that is not semver), each at its line. A requirement that
/// cannot be read is no requirement the mod could meet: the mod is
/// refused (`broken`), not loaded against a dependency it did not ask for.
pub(crate) fn candidate(manifest: &Manifest) -> (Candidate, Vec<String>) {
    let mut problems = Vec::new();
    let mut broken = None;
    let version = manifest
        .module
        .version
        .as_deref()
        .and_then(|v| match Version::parse(v) {
            Ok(version) => Some(version),
            Err(e) => {
                problems.push(format!(
                    "{}: mod.version: `{v}` is not a semver version ({e}); requirements on {} never match it",
                    manifest.file, manifest.module.name
                ));
                None
            }
        });
    let mut needs = |list: &[Dependency], field: &str| -> Vec<Need> {
        list.iter()
            .map(|dependency| {
                let at = format!(
                    "{}:{}:{}",
                    manifest.file, dependency.line, dependency.column
                );
                let requirement = dependency.requirement.as_deref().and_then(|text| {
                    VersionReq::parse(text)
                        .map_err(|e| {
                            broken.get_or_insert(format!(
                                "{at}: mod.{field}: `{text}` is not a version requirement ({e})"
                            ));
                        })
                        .ok()
                });
                Need {
                    name: dependency.name.clone(),
                    requirement,
                    at,
                }
            })
            .collect()
    };
    let depends = needs(&manifest.module.depends, "depends");
    let optional = needs(&manifest.module.optional, "optional");
    (
        Candidate {
            name: manifest.module.name.clone(),
            version,
            file: manifest.file.clone(),
            depends,
            optional,
            broken,
        },
        problems,
    )
}
