//! The devel tree (docs/behaviour.md#devel-build).
//!
//! Every link of the planned tree is followed with the predicate the
//! install applies (`dist_info::devel_tree::resolve_link`), through
//! site-packages as the build knows it: the planned tree and the runtime
//! files its links point at. A link the install would refuse (out of
//! site-packages, to an absolute path, a loop, or anywhere outside what the
//! packages install) is left out with a warning naming it, so the build
//! never writes a tarball `rocm-sdk init` refuses (docs/devel-tar.md). The
//! tree is judged where it will be unpacked, under the root the release's
//! nonce names (`_rocm_sdk_devel{N}`), as the install judges it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use artifacts::{Catalog, EntryKind};
use dist_info::devel_links::devel_link_target;
use dist_info::devel_tree::{Node, TreeNames, TreeView, device_link_source, resolve_link};

use crate::plan::{DevelEntry, Dropped, LinkReason, SonameAlias, SourceRef};
use crate::runtime::{removed_entries, split};
use crate::search_path;
use crate::survey::{FileClass, SourceSurvey};

/// The devel tree's package marker. The tree is the platform package
/// `_rocm_sdk_devel{N}`, a regular package like its runtime siblings, so
/// `import _rocm_sdk_devel{N}` has a `__file__` whose parent is the tree
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

/// The devel tree of `catalog` beside the runtime packages of `index`,
/// sorted by relpath, and the links left out because the install would
/// refuse them once unpacked into the tree `names` gives (warned about
/// unless `said` holds the warning already).
pub(crate) fn plan_devel(
    catalog: &Catalog,
    survey: &SourceSurvey,
    index: &RuntimeIndex,
    names: &TreeNames,
    keep_absolute: bool,
    said: &mut BTreeSet<String>,
) -> (Vec<DevelEntry>, Vec<Dropped>) {
    let mut tree: BTreeMap<String, DevelEntry> = BTreeMap::new();
    // Where each entry came from, for warnings.
    let mut artifacts: BTreeMap<&str, String> = BTreeMap::new();
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
            let patch = survey
                .of(entry)
                .is_some_and(FileClass::takes_search_path)
                .then(|| {
                    search_path::patch(Vec::new(), removed_entries(survey, entry, keep_absolute))
                });
            DevelEntry::File {
                relpath: relpath.to_owned(),
                patch,
                source,
            }
        };
        artifacts.insert(relpath, entry.artifact().to_string());
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
    let refused = refused_links(&tree, names);
    let mut dropped = Vec::with_capacity(refused.len());
    for (relpath, reason) in refused {
        let origin = artifacts.get(relpath.as_str()).map_or("", String::as_str);
        // Legacy builds plan one devel tree per family from the same
        // generic artifacts: each warning once.
        let warning = format!("{relpath} in {origin}: left out of the devel tarball: {reason}");
        if said.insert(warning.clone()) {
            tracing::warn!("{warning}");
        }
        tree.remove(&relpath);
        dropped.push(Dropped { relpath, reason });
    }
    (tree.into_values().collect(), dropped)
}

/// The links of `tree` (unpacked into the tree `names` gives) the install
/// would refuse, with the reason. Each is judged against the whole planned
/// tree; a link whose chain passes through a refused one is refused itself,
/// so leaving them all out changes nothing for the links that stay.
fn refused_links(tree: &BTreeMap<String, DevelEntry>, names: &TreeNames) -> Vec<(String, String)> {
    let site = PlannedSite::new(tree, names);
    tree.values()
        .filter_map(|entry| {
            let DevelEntry::Symlink {
                relpath, target, ..
            } = entry
            else {
                return None;
            };
            let problem = resolve_link(&site, &names.in_tree(relpath), target).err()?;
            Some((relpath.clone(), format!("symlink to {target:?}: {problem}")))
        })
        .collect()
}

/// Site-packages as the build knows it: the planned devel tree, and the
/// runtime files its runtime links point at (with their directories).
/// Anything else in site-packages is [`Node::Unknown`]: a link that leads
/// there would depend on what happens to be installed.
struct PlannedSite<'t> {
    tree: &'t BTreeMap<String, DevelEntry>,
    /// Where the tree is unpacked.
    names: &'t TreeNames,
    /// Directories of the tree without an entry of their own (relpaths).
    implicit_dirs: BTreeSet<String>,
    /// Site-packages paths of the runtime files linked to.
    runtime_files: BTreeSet<String>,
    /// Their directories.
    runtime_dirs: BTreeSet<String>,
}

impl<'t> PlannedSite<'t> {
    fn new(tree: &'t BTreeMap<String, DevelEntry>, names: &'t TreeNames) -> Self {
        let mut site = Self {
            tree,
            names,
            implicit_dirs: BTreeSet::new(),
            runtime_files: BTreeSet::new(),
            runtime_dirs: BTreeSet::new(),
        };
        for (relpath, entry) in tree {
            site.implicit_dirs
                .extend(parents(relpath).map(str::to_owned));
            if let DevelEntry::Symlink {
                target,
                why: LinkReason::RuntimeFile,
                ..
            } = entry
                && let Some(file) = device_link_source(&names.in_tree(relpath), target, names)
            {
                site.runtime_dirs.extend(parents(&file).map(str::to_owned));
                site.runtime_files.insert(file);
            }
        }
        site
    }
}

impl TreeView for PlannedSite<'_> {
    fn node(&self, path: &str) -> Node<'_> {
        if path == self.names.root() {
            return Node::Dir;
        }
        if let Some(relpath) = self.names.relpath(path) {
            return match self.tree.get(relpath) {
                Some(DevelEntry::Dir { .. }) => Node::Dir,
                Some(DevelEntry::File { .. } | DevelEntry::Generated { .. }) => Node::File,
                Some(DevelEntry::Symlink { target, .. }) => Node::Symlink(Cow::Borrowed(target)),
                None if self.implicit_dirs.contains(relpath) => Node::Dir,
                None => Node::Missing,
            };
        }
        if self.runtime_files.contains(path) {
            Node::File
        } else if self.runtime_dirs.contains(path) {
            Node::Dir
        } else {
            Node::Unknown
        }
    }
}

/// The proper ancestors of a `/`-separated path, deepest last.
fn parents(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}
