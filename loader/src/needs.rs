//! A mod's `depends` and `optional` as the resolver reads them: names
//! and semver requirements (`ui >= 0.2`, as Cargo writes them).

use gantry_host::manifest::{Dependency, Manifest};
use semver::{Version, VersionReq};

use crate::order::{Candidate, Need};

/// The resolver's view of `manifest`, and what in it cannot be read (a
/// version or requirement that is not semver), each at its line. A
/// requirement that cannot be read is no requirement the mod could meet:
/// it is kept as one nothing matches, so the mod is refused, not loaded
/// against a dependency it did not ask for.
pub(crate) fn candidate(manifest: &Manifest) -> (Candidate, Vec<String>) {
    let mut problems = Vec::new();
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
                let requirement = dependency.requirement.as_deref().map(|text| {
                    VersionReq::parse(text).unwrap_or_else(|e| {
                        problems.push(format!(
                            "{at}: mod.{field}: `{text}` is not a version requirement ({e})"
                        ));
                        // `<0.0.0-0` matches no version at all.
                        VersionReq::parse("<0.0.0-0").unwrap_or(VersionReq::STAR)
                    })
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
        },
        problems,
    )
}
