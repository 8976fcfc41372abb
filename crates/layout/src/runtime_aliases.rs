//! Runtime aliases (docs/behaviour.md#runtime-aliases): which unversioned
//! names get one, and where they go.
//!
//! A name qualifies when a file of a runtime package holds it as a string
//! literal, the model's table knows it, or `--runtime-alias` asks for it,
//! and a runtime package ships a shared object whose SONAME is a versioned
//! form of it. Every alias goes into the core package's `lib/`: every ROCm
//! library's search path reaches it, and the devel tree, which mirrors the
//! libraries platform tree file for file and keeps the real `libX.so`
//! links for `-lX`, is left alone.

use std::collections::{BTreeMap, BTreeSet};

use dist_info::package::PackageKind;
use dist_info::runtime_aliases::KNOWN_NAMES;
use elf_surgery::{RuntimeAlias as AliasBytes, is_unversioned_name, is_versioned_form};

use crate::error::{CheckError, Error};
use crate::plan::{Action, AliasReason, PackagePlan, PlannedFile, RuntimeAlias};
use crate::survey::SourceSurvey;

/// A library an alias may stand for: a shared object shipped under its SONAME.
struct Library<'p> {
    /// The wheel path's directory (`_rocm_sdk_libraries/lib`).
    dir: &'p str,
    soname: &'p str,
    shape: elf_surgery::LibraryShape,
}

/// Adds the aliases to the core package (the first of `packages`) and
/// records them in its plan; `asked` are the `--runtime-alias` names.
pub(crate) fn add(
    packages: &mut [PackagePlan],
    survey: &SourceSurvey,
    asked: &[String],
    core_platform: &str,
) -> Result<(), Error> {
    for name in asked {
        if !is_unversioned_name(name) {
            return Err(CheckError::AliasNotUnversioned { name: name.clone() }.into());
        }
    }
    let runtime = |p: &&PackagePlan| p.kind != PackageKind::Devel;
    let mut reasons: BTreeMap<String, BTreeSet<AliasReason>> = BTreeMap::new();
    for name in asked {
        reasons
            .entry(name.clone())
            .or_default()
            .insert(AliasReason::Asked);
    }
    for known in KNOWN_NAMES {
        reasons
            .entry(known.name.to_owned())
            .or_default()
            .insert(AliasReason::Known {
                opened_by: known.opened_by.to_owned(),
            });
    }
    let mut shipped_names = BTreeSet::new();
    let mut libraries: Vec<Library<'_>> = Vec::new();
    for p in packages.iter().filter(runtime) {
        for file in &p.files {
            let (dir, base) = file.dest.rsplit_once('/').unwrap_or(("", &file.dest));
            shipped_names.insert(base.to_owned());
            let (Action::Copy { source } | Action::PatchSearchPath { source, .. }) = &file.action
            else {
                continue;
            };
            for name in survey.library_names_of(&source.source) {
                reasons
                    .entry(name.clone())
                    .or_default()
                    .insert(AliasReason::Found {
                        file: source.relpath.clone(),
                        artifact: source.artifact.clone(),
                    });
            }
            let soname = survey
                .class_of(&source.source)
                .and_then(crate::FileClass::soname);
            if let (Some(soname), Some(shape)) = (soname, survey.library_shape_of(&source.source))
                && soname == base
                && p.kind != PackageKind::Device
            {
                libraries.push(Library { dir, soname, shape });
            }
        }
    }
    // Core first, then the order of the packages and their files.
    let core_lib = format!("{core_platform}/lib");
    libraries.sort_by_key(|l| !l.dir.starts_with(&format!("{core_platform}/")));

    let mut made = Vec::new();
    for (name, why) in reasons {
        let asked_for = why.contains(&AliasReason::Asked);
        let Some(first) = libraries
            .iter()
            .find(|l| is_versioned_form(l.soname, &name))
        else {
            if asked_for {
                return Err(CheckError::AliasWithoutLibrary { name }.into());
            }
            continue;
        };
        if shipped_names.contains(&name) {
            // A real file of the set has the name: an alias would shadow it.
            tracing::info!("{name}: no runtime alias: a runtime package ships a file so named");
            continue;
        }
        let mut runpath = Vec::new();
        for library in libraries.iter().filter(|l| l.soname == first.soname) {
            let entry = origin_relative(&core_lib, library.dir);
            if !runpath.contains(&entry) {
                runpath.push(entry);
            }
        }
        let runpath = runpath.join(":");
        let bytes = AliasBytes::new(&name, first.soname, first.shape, &runpath)
            .and_then(|a| a.bytes())
            .map_err(|reason| CheckError::AliasBytes {
                name: name.clone(),
                reason,
            })?;
        made.push((
            RuntimeAlias {
                relpath: format!("{core_lib}/{name}"),
                target: first.soname.to_owned(),
                runpath,
                why: why.into_iter().collect(),
                size: bytes.len() as u64,
            },
            bytes,
        ));
    }
    let core = packages
        .iter_mut()
        .find(|p| p.kind == PackageKind::Core)
        .expect("every plan has a core package");
    for (alias, bytes) in made {
        tracing::info!("{}: runtime alias of {}", alias.relpath, alias.target);
        core.files.push(PlannedFile {
            dest: alias.relpath.clone(),
            executable: false,
            action: Action::Generated {
                what: format!("runtime alias of {}", alias.target),
                bytes,
            },
        });
        core.runtime_aliases.push(alias);
    }
    Ok(())
}

/// `dir` as a search-path entry from `from`, both wheel paths of
/// directories (`$ORIGIN`, `$ORIGIN/../../_rocm_sdk_libraries/lib`).
fn origin_relative(from: &str, dir: &str) -> String {
    let (from, dir): (Vec<&str>, Vec<&str>) = (from.split('/').collect(), dir.split('/').collect());
    let common = from.iter().zip(&dir).take_while(|(a, b)| a == b).count();
    let mut parts = vec!["$ORIGIN".to_owned()];
    parts.extend(std::iter::repeat_n("..".to_owned(), from.len() - common));
    parts.extend(dir[common..].iter().map(|s| (*s).to_owned()));
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::origin_relative;

    #[test]
    fn entries_are_relative_to_the_alias() {
        let core = "_rocm_sdk_core/lib";
        assert_eq!(origin_relative(core, core), "$ORIGIN");
        assert_eq!(
            origin_relative(core, "_rocm_sdk_libraries/lib"),
            "$ORIGIN/../../_rocm_sdk_libraries/lib"
        );
        assert_eq!(
            origin_relative(core, "_rocm_sdk_core/lib/llvm/lib"),
            "$ORIGIN/llvm/lib"
        );
    }
}
