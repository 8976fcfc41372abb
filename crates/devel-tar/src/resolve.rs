//! Resolving a devel link against the *final* tree: members of the archive
//! for paths under `_rocm_sdk_devel/`, the real file system for the rest of
//! site-packages. Chains are followed the way the kernel would follow them,
//! so the answer does not depend on member order, and any path that climbs
//! out of site-packages is refused.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

use crate::scan::{Kind, Model};

/// Where a link finally leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A regular file of the archive (site-packages-relative path).
    TreeFile(String),
    /// A regular file elsewhere in site-packages (relative path).
    DiskFile(String),
    /// A directory, in the tree or on disk.
    Directory,
    /// Nothing there (or a file used as a directory).
    Missing,
}

/// Why a link cannot be followed safely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unsafe {
    Escapes,
    Absolute(String),
    Loop,
}

impl Unsafe {
    pub(crate) fn describe(&self) -> String {
        match self {
            Unsafe::Escapes => "the link leads outside site-packages".to_owned(),
            Unsafe::Absolute(t) => format!("the link chain reaches the absolute path {t:?}"),
            Unsafe::Loop => "the link chain loops (more than 40 links)".to_owned(),
        }
    }
}

const MAX_LINKS: usize = 40;

/// What a path outside the tree is on disk.
#[derive(Debug, Clone)]
enum OnDisk {
    Missing,
    Symlink(String),
    Dir,
    File,
}

/// Site-packages outside the tree, each path looked at once: every devel
/// link into a runtime package crosses the same few directories.
#[derive(Debug)]
pub(crate) struct DiskView {
    root: PathBuf,
    seen: RefCell<HashMap<String, OnDisk>>,
}

impl DiskView {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            seen: RefCell::new(HashMap::new()),
        }
    }

    fn lookup(&self, path: &str) -> OnDisk {
        if let Some(known) = self.seen.borrow().get(path) {
            return known.clone();
        }
        let full = self.root.join(path);
        let found = match std::fs::symlink_metadata(&full) {
            Err(_) => OnDisk::Missing,
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&full) {
                Ok(t) => OnDisk::Symlink(t.to_string_lossy().into_owned()),
                Err(_) => OnDisk::Missing,
            },
            Ok(m) if m.is_dir() => OnDisk::Dir,
            Ok(_) => OnDisk::File,
        };
        self.seen
            .borrow_mut()
            .insert(path.to_owned(), found.clone());
        found
    }
}

/// Resolves `target`, the text of the link at `link` (site-packages-relative),
/// against `model` and site-packages as `disk` sees it.
pub(crate) fn resolve(
    model: &Model,
    disk: &DiskView,
    link: &str,
    target: &str,
) -> Result<Resolved, Unsafe> {
    let mut cur: Vec<String> = link.split('/').map(str::to_owned).collect();
    cur.pop();
    let mut pending: VecDeque<String> = split(target)?;
    let mut followed = 0;
    while let Some(segment) = pending.pop_front() {
        match segment.as_str() {
            "." => continue,
            ".." => {
                if cur.pop().is_none() {
                    return Err(Unsafe::Escapes);
                }
                continue;
            }
            _ => {}
        }
        cur.push(segment);
        let path = cur.join("/");
        let in_tree = cur[0] == model.root;
        let next_link = if in_tree {
            match model.members.get(&path) {
                Some(Kind::Symlink { target }) => Some(target.clone()),
                Some(Kind::File { .. } | Kind::HardLink { .. }) => {
                    return Ok(file_or_missing(&pending, || {
                        Resolved::TreeFile(final_file(model, &path))
                    }));
                }
                _ if model.is_dir(&path) => None,
                _ => return Ok(Resolved::Missing),
            }
        } else {
            match disk.lookup(&path) {
                OnDisk::Missing => return Ok(Resolved::Missing),
                OnDisk::Symlink(text) => Some(text),
                OnDisk::Dir => None,
                OnDisk::File => {
                    return Ok(file_or_missing(&pending, || {
                        Resolved::DiskFile(path.clone())
                    }));
                }
            }
        };
        if let Some(text) = next_link {
            followed += 1;
            if followed > MAX_LINKS {
                return Err(Unsafe::Loop);
            }
            cur.pop();
            let mut spliced = split(&text)?;
            spliced.extend(pending.drain(..));
            pending = spliced;
        }
    }
    Ok(Resolved::Directory)
}

fn split(target: &str) -> Result<VecDeque<String>, Unsafe> {
    if target.starts_with('/') {
        return Err(Unsafe::Absolute(target.to_owned()));
    }
    Ok(target
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect())
}

/// A file is only a valid end of the walk when nothing follows it.
fn file_or_missing(pending: &VecDeque<String>, file: impl FnOnce() -> Resolved) -> Resolved {
    if pending.iter().all(|s| s == ".") {
        file()
    } else {
        Resolved::Missing
    }
}

/// The regular file a tar hard-link chain ends at (checked by the scan).
pub(crate) fn final_file(model: &Model, path: &str) -> String {
    let mut current = path;
    while let Some(Kind::HardLink { target }) = model.members.get(current) {
        current = target;
    }
    current.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(members: &[(&str, Kind)]) -> Model {
        let mut m = Model {
            root: "_rocm_sdk_devel".into(),
            ..Model::default()
        };
        for (p, k) in members {
            m.members.insert((*p).to_owned(), k.clone());
        }
        m
    }

    fn link(t: &str) -> Kind {
        Kind::Symlink {
            target: t.to_owned(),
        }
    }

    #[test]
    fn chains_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("_core/lib")).unwrap();
        std::fs::write(dir.path().join("_core/lib/x.so.1"), "x").unwrap();
        let m = model(&[
            ("_rocm_sdk_devel/lib", Kind::Dir { mode: 0o755 }),
            ("_rocm_sdk_devel/lib/a", link("b")),
            ("_rocm_sdk_devel/lib/b", link("../../_core/lib/x.so.1")),
            (
                "_rocm_sdk_devel/lib/f",
                Kind::File {
                    mode: 0o644,
                    mtime: 0,
                },
            ),
            ("_rocm_sdk_devel/lib/g", link("f")),
            ("_rocm_sdk_devel/lib/d", link("../../_core")),
            ("_rocm_sdk_devel/lib/loop", link("loop")),
        ]);
        let disk = DiskView::new(dir.path());
        let r = |link: &str, t: &str| resolve(&m, &disk, link, t);
        assert_eq!(
            r("_rocm_sdk_devel/lib/a", "b"),
            Ok(Resolved::DiskFile("_core/lib/x.so.1".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/g", "f"),
            Ok(Resolved::TreeFile("_rocm_sdk_devel/lib/f".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/d", "../../_core"),
            Ok(Resolved::Directory)
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "d/lib/x.so.1"),
            Ok(Resolved::DiskFile("_core/lib/x.so.1".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "d/../../x"),
            Err(Unsafe::Escapes)
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "../../../etc"),
            Err(Unsafe::Escapes)
        );
        assert_eq!(r("_rocm_sdk_devel/lib/e", "nothing"), Ok(Resolved::Missing));
        assert_eq!(r("_rocm_sdk_devel/lib/e", "f/x"), Ok(Resolved::Missing));
        assert_eq!(r("_rocm_sdk_devel/lib/loop", "loop"), Err(Unsafe::Loop));
        assert!(matches!(
            r("_rocm_sdk_devel/lib/e", "/etc"),
            Err(Unsafe::Absolute(_))
        ));
    }
}
