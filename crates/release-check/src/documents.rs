//! What a wheel ships that the install side acts on, checked against the
//! files the release ships (docs/verify.md, the `documents` check):
//!
//! - a device wheel's `_rocm_sdk_libraries{N}/.devel_links/{T}.json`,
//!   from which `rocm-sdk init` hard-links device files into the devel
//!   tree (replacing what is at each link's place): it parses with the
//!   install side's reader, gives the wheel's version, and each link names
//!   a file this wheel ships, at a path of the devel tree that is not one
//!   of its directories (nor of the other links);
//! - a distribution's `{pure}/_libraries.json`, from which
//!   `find_libraries` and `preload_libraries` open files: each names a
//!   file the wheel ships in its platform package;
//! - the devel tarball's runtime links (symlinks the unpack turns into
//!   hard links to runtime files): each leads to a file a runtime wheel of
//!   the platform ships, not a directory and not nothing;
//! - the core wheel's `share/therock/dist_info.json` is the `dist-targets`
//!   check's (`dist_targets.rs`).

use std::collections::BTreeSet;
use std::io;

use dist_info::devel_links::DevelLinks;
use dist_info::devel_tree::{TreeNames, device_link_source};
use dist_info::libraries_record::{self, LibrariesRecord};
use dist_info::nonce::Nonce;
use fs_helpers::error_chain::Chain;
use link_check::installed_path;
use wheel_writer::{WheelReader, limits};

use super::release::{DistFile, Kind, Wheel};
use super::{Release, devel_tarball};

/// The libraries package's name without its nonce.
const LIBRARIES: &str = "_rocm_sdk_libraries";
/// The devel tree's name without its nonce.
const DEVEL: &str = "_rocm_sdk_devel";

/// Every problem with the documents of the release's readable wheels.
pub(crate) fn check(release: &Release) -> Vec<String> {
    let mut problems = Vec::new();
    for platform in release.platforms() {
        let wheels: Vec<(&DistFile, &Wheel)> = release
            .unique()
            .filter(|f| f.installs_on(platform))
            .filter_map(|f| match &f.kind {
                Kind::Wheel(w) if w.readable => Some((f, w)),
                _ => None,
            })
            .collect();
        let runtime = RuntimeFiles::of(wheels.iter().map(|(_, w)| *w));
        let devel = DevelTrees::read(&wheels, &mut problems);
        for (file, wheel) in &wheels {
            for member in wheel.members.iter().filter(|m| is_devel_links(m)) {
                problems.extend(
                    devel_links_problems(file, wheel, member, &devel)
                        .into_iter()
                        .map(|p| {
                            format!("{}: member {member}: {p}; rebuild the wheel", file.display)
                        }),
                );
            }
            for member in wheel.members.iter().filter(|m| {
                m.rsplit_once('/')
                    .is_some_and(|(_, n)| n == libraries_record::FILE_NAME)
            }) {
                problems.extend(
                    library_record_problems(file, wheel, member)
                        .into_iter()
                        .map(|p| {
                            format!("{}: member {member}: {p}; rebuild the wheel", file.display)
                        }),
                );
            }
        }
        for tree in &devel.trees {
            for (link, target) in &tree.links {
                let Some(source) = device_link_source(link, target, &tree.names) else {
                    continue;
                };
                if !runtime.files.contains(&source) {
                    let what = if runtime.dirs.contains(&source) {
                        "a directory"
                    } else {
                        "a path"
                    };
                    problems.push(format!(
                        "{}: link {link} -> {target}: it leads to {source}, {what} no runtime \
                         wheel for {platform:?} ships as a file, so the devel tree would be \
                         incomplete; rebuild the release",
                        tree.origin
                    ));
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

/// Whether a member is a `.devel_links/{T}.json` document, as the
/// install side finds them (the extension in any case).
fn is_devel_links(member: &str) -> bool {
    let mut parts = member.split('/');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some(top), Some(".devel_links"), Some(name), None)
            if top.starts_with(LIBRARIES)
                && std::path::Path::new(name)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    )
}

/// The installed paths of the runtime wheels (all but the devel wheel's
/// own files) and their directories.
struct RuntimeFiles {
    files: BTreeSet<String>,
    dirs: BTreeSet<String>,
}

impl RuntimeFiles {
    fn of<'a>(wheels: impl Iterator<Item = &'a Wheel>) -> Self {
        let mut files = BTreeSet::new();
        let mut dirs = BTreeSet::new();
        for wheel in wheels {
            for path in wheel.members.iter().filter_map(|m| installed_path(m)) {
                let mut at = path.as_str();
                while let Some((parent, _)) = at.rsplit_once('/') {
                    dirs.insert(parent.to_owned());
                    at = parent;
                }
                files.insert(path);
            }
        }
        Self { files, dirs }
    }
}

/// One devel tarball: its tree's names, its directories (tree-relative)
/// and its symlinks (site-packages paths and texts).
struct DevelTree {
    origin: String,
    names: TreeNames,
    dirs: BTreeSet<String>,
    links: Vec<(String, String)>,
}

/// The devel tarballs of a platform's wheels.
struct DevelTrees {
    trees: Vec<DevelTree>,
}

impl DevelTrees {
    fn read(wheels: &[(&DistFile, &Wheel)], problems: &mut Vec<String>) -> Self {
        let mut trees = Vec::new();
        for (file, wheel) in wheels {
            for member in wheel
                .members
                .iter()
                .filter(|m| devel_tarball::is_devel_tarball(m))
            {
                let origin = format!("{} ({member})", file.display);
                match read_tree(file, member, origin.clone()) {
                    Ok(Some(tree)) => trees.push(tree),
                    Ok(None) => {}
                    Err(e) => problems.push(format!(
                        "{origin}: cannot read the devel tarball's links: {e}; rebuild the wheel"
                    )),
                }
            }
        }
        Self { trees }
    }

    /// Whether `relpath` is a directory of a devel tree.
    fn is_dir(&self, relpath: &str) -> bool {
        self.trees.iter().any(|t| t.dirs.contains(relpath))
    }
}

fn read_tree(file: &DistFile, member: &str, origin: String) -> io::Result<Option<DevelTree>> {
    devel_tarball::with_archive(&file.path, member, |archive| {
        let mut names: Option<TreeNames> = None;
        let mut dirs = BTreeSet::new();
        let mut links = Vec::new();
        for entry in archive.entries()? {
            let entry = entry?;
            let path = devel_tarball::clean_path(&entry.path_bytes());
            let (top, rel) = path.split_once('/').unwrap_or((path.as_str(), ""));
            if names.is_none() {
                let Some(nonce) = top
                    .strip_prefix(DEVEL)
                    .and_then(|n| n.parse::<Nonce>().ok())
                else {
                    return Ok(None);
                };
                names = Some(TreeNames::new(&nonce));
            }
            let mut at = rel;
            while let Some((parent, _)) = at.rsplit_once('/') {
                dirs.insert(parent.to_owned());
                at = parent;
            }
            let kind = entry.header().entry_type();
            if kind.is_dir() && !rel.is_empty() {
                dirs.insert(rel.to_owned());
            }
            if kind.is_symlink()
                && let Some(target) = entry.link_name_bytes()
            {
                links.push((path.clone(), String::from_utf8_lossy(&target).into_owned()));
            }
        }
        Ok(names.map(|names| DevelTree {
            origin,
            names,
            dirs,
            links,
        }))
    })
}

/// What is wrong with the `.devel_links/{T}.json` document `member`.
fn devel_links_problems(
    file: &DistFile,
    wheel: &Wheel,
    member: &str,
    devel: &DevelTrees,
) -> Vec<String> {
    let platform = member.split('/').next().unwrap_or_default();
    let Some(nonce) = platform
        .strip_prefix(LIBRARIES)
        .and_then(|n| n.parse::<Nonce>().ok())
    else {
        return vec![format!("{platform} is not a libraries package name")];
    };
    let names = TreeNames::new(&nonce);
    let doc = match read_document(file, member)
        .and_then(|bytes| String::from_utf8(bytes).map_err(|e| e.to_string()))
        .and_then(|text| DevelLinks::from_json(&text).map_err(|e| e.to_string()))
    {
        Ok(doc) => doc,
        Err(e) => return vec![format!("rocm-sdk init cannot read it: {e}")],
    };
    let mut problems = Vec::new();
    if doc.version != wheel.version {
        problems.push(format!(
            "it gives version {}, the wheel is {}",
            doc.version, wheel.version
        ));
    }
    let files: BTreeSet<&str> = wheel
        .members
        .iter()
        .map(String::as_str)
        .filter(|m| !m.ends_with('/'))
        .collect();
    let relpaths: BTreeSet<&str> = doc.links.iter().map(|l| l.relpath.as_str()).collect();
    for link in &doc.links {
        let relpath = &link.relpath;
        if devel.is_dir(relpath)
            || relpaths.iter().any(|other| {
                other
                    .strip_prefix(relpath.as_str())
                    .is_some_and(|r| r.starts_with('/'))
            })
        {
            problems.push(format!(
                "link {relpath:?} names a directory of the devel tree, which rocm-sdk init would \
                 delete to put the link there"
            ));
            continue;
        }
        match device_link_source(&names.in_tree(relpath), &link.target, &names) {
            Some(source) if files.contains(source.as_str()) => {}
            Some(source) => problems.push(format!(
                "link {relpath:?} leads to {source}, which is not a file this wheel ships"
            )),
            None => problems.push(format!(
                "link {relpath:?}: its target {:?} leaves the package directories or points \
                 into the devel tree",
                link.target
            )),
        }
    }
    problems
}

/// What is wrong with the library record `member`.
fn library_record_problems(file: &DistFile, wheel: &Wheel, member: &str) -> Vec<String> {
    let record = match read_document(file, member)
        .and_then(|bytes| LibrariesRecord::from_json(&bytes).map_err(|e| Chain(&e).to_string()))
    {
        Ok(record) => record,
        Err(e) => return vec![format!("find_libraries cannot read it: {e}")],
    };
    // The platform package: `_{pure}` with the release's nonce, a
    // top-level directory of the wheel.
    let pure = member.split('/').next().unwrap_or_default();
    let platforms: BTreeSet<&str> = wheel
        .members
        .iter()
        .filter_map(|m| m.split_once('/').map(|(top, _)| top))
        .filter(|top| top.strip_prefix('_').is_some_and(|t| t.starts_with(pure)))
        .collect();
    let mut problems = Vec::new();
    for (short, path) in &record.libraries {
        let shipped = pypa_formats::member::check_relpath(path).is_ok()
            && platforms
                .iter()
                .any(|p| wheel.members.iter().any(|m| *m == format!("{p}/{path}")));
        if !shipped {
            problems.push(format!(
                "library {short} is {path:?}, which is not a file of this wheel's platform package"
            ));
        }
    }
    problems
}

/// A document member's bytes, at most [`limits::DOCUMENT`].
fn read_document(file: &DistFile, member: &str) -> Result<Vec<u8>, String> {
    WheelReader::open(&file.path)
        .and_then(|mut reader| reader.read_member(member, limits::DOCUMENT))
        .map_err(|e| Chain(&e).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devel_links_documents_are_found() {
        assert!(is_devel_links(
            "_rocm_sdk_libraries/.devel_links/gfx942.json"
        ));
        assert!(is_devel_links(
            "_rocm_sdk_libraries_n1/.devel_links/gfx942.json"
        ));
        assert!(!is_devel_links(
            "_rocm_sdk_libraries/lib/.devel_links/gfx942.json"
        ));
        assert!(!is_devel_links("_rocm_sdk_core/.devel_links/gfx942.json"));
    }
}
