//! The devel tree (SPEC §9, build side).

use std::collections::{BTreeMap, BTreeSet};

use artifacts::{Catalog, EntryKind};
use devel_tar::devel_link_target;

use crate::facts::{Facts, FileClass};
use crate::plan::{DevelEntry, LinkReason, SonameAlias, SourceRef};
use crate::runtime::split;

/// The devel tree's package marker. The tree is the platform package
/// `_rocm_sdk_devel`, a regular package like its runtime siblings, so
/// `import _rocm_sdk_devel` has a `__file__` whose parent is the tree
/// (docs/drop-in.md).
pub(crate) const PACKAGE_MARKER: &str = "__init__.py";

/// What the runtime packages a devel tree sits beside provide.
#[derive(Debug, Clone, Default)]
pub(crate) struct RuntimeIndex {
    /// relpath → the platform package that ships it (the first one).
    owners: BTreeMap<String, String>,
    /// relpath → its SONAME (a soname alias in some runtime package).
    aliases: BTreeMap<String, String>,
}

impl RuntimeIndex {
    /// Adds a runtime package; earlier packages keep their files.
    pub(crate) fn add<'a>(
        &mut self,
        platform: &str,
        shipped: impl IntoIterator<Item = &'a String>,
        aliases: &[SonameAlias],
    ) {
        for relpath in shipped {
            self.owners
                .entry(relpath.clone())
                .or_insert_with(|| platform.to_owned());
        }
        for alias in aliases {
            self.aliases
                .entry(alias.relpath.clone())
                .or_insert_with(|| alias.soname.clone());
        }
    }
}

/// The devel tree of `catalog` beside the runtime packages of `index`.
pub(crate) fn plan_devel(
    catalog: &Catalog,
    facts: &Facts,
    index: &RuntimeIndex,
) -> Vec<DevelEntry> {
    let mut tree: BTreeMap<String, DevelEntry> = BTreeMap::new();
    let link = |relpath: &str, target: String, why| DevelEntry::Symlink {
        relpath: relpath.to_owned(),
        target,
        why,
    };
    let mut soname_paths = BTreeSet::new();
    for entry in catalog.entries() {
        let relpath = entry.relpath();
        let planned = if let EntryKind::Dir = entry.kind() {
            DevelEntry::Dir {
                relpath: relpath.to_owned(),
            }
        } else if let Some(soname) = index.aliases.get(relpath) {
            let dir = split(relpath).0;
            soname_paths.insert(if dir.is_empty() {
                soname.clone()
            } else {
                format!("{dir}/{soname}")
            });
            link(relpath, soname.clone(), LinkReason::SonameAlias)
        } else if let Some(owner) = index.owners.get(relpath) {
            link(
                relpath,
                devel_link_target(relpath, owner),
                LinkReason::RuntimeFile,
            )
        } else if let EntryKind::Symlink { target, .. } = entry.kind() {
            link(relpath, target.clone(), LinkReason::Verbatim)
        } else {
            let Some(source) = SourceRef::of(entry) else {
                continue;
            };
            DevelEntry::File {
                relpath: relpath.to_owned(),
                force_rpath: facts.of(entry).is_some_and(FileClass::takes_search_path),
                source,
            }
        };
        tree.insert(relpath.to_owned(), planned);
    }
    // An alias whose SONAME file exists only in a runtime package (shipped
    // under the SONAME though the tree had no such name) still resolves.
    for path in soname_paths {
        if let (false, Some(owner)) = (tree.contains_key(&path), index.owners.get(&path)) {
            let target = devel_link_target(&path, owner);
            tree.insert(path.clone(), link(&path, target, LinkReason::RuntimeFile));
        }
    }
    tree.entry(PACKAGE_MARKER.to_owned())
        .or_insert_with(|| DevelEntry::Generated {
            relpath: PACKAGE_MARKER.to_owned(),
            what: "platform package marker".to_owned(),
            bytes: Vec::new(),
        });
    tree.into_values().collect()
}
