//! The final tree as the install sees it, for following devel links with
//! `dist_info::devel_tree::resolve_link`: members of the archive for paths
//! under the tree's root (`_rocm_sdk_devel{N}/`), the real file system for
//! the rest of site-packages, looked at through its confined handle (each
//! entry itself, never through a link). Links are followed against this
//! final tree, so the answer does not depend on member order.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use dist_info::devel_tree::{Node, TreeView};
use fs_helpers::confined::{Cursor, Dir, EntryKind};

use crate::scan::{Kind, Model};

/// Site-packages after the unpack: the archive's tree and, around it, what
/// is on disk.
#[derive(Debug)]
pub(crate) struct FinalTree<'m> {
    model: &'m Model,
    disk: DiskView<'m>,
}

impl<'m> FinalTree<'m> {
    pub(crate) fn new(model: &'m Model, site_packages: &'m Dir) -> Self {
        Self {
            model,
            disk: DiskView::new(site_packages),
        }
    }

    /// The regular member a tree file resolves to: a tar hard link stands
    /// for the file its chain ends at (which the scan recorded).
    pub(crate) fn regular_file(&self, path: String) -> String {
        match self.model.members.get(&path) {
            Some(Kind::HardLink { target }) => target.clone(),
            _ => path,
        }
    }
}

impl TreeView for FinalTree<'_> {
    fn node(&self, path: &str) -> Node<'_> {
        if !self.model.names.contains(path) {
            return self.disk.node(path);
        }
        match self.model.members.get(path) {
            Some(Kind::Symlink { target }) => Node::Symlink(Cow::Borrowed(target)),
            Some(Kind::File { .. } | Kind::HardLink { .. }) => Node::File,
            _ if self.model.is_dir(path) => Node::Dir,
            _ => Node::Missing,
        }
    }
}

/// Site-packages outside the tree, each path looked at once: every devel
/// link into a runtime package crosses the same few directories.
#[derive(Debug)]
struct DiskView<'d> {
    cursor: RefCell<Cursor<'d>>,
    seen: RefCell<HashMap<String, Node<'static>>>,
}

impl<'d> DiskView<'d> {
    fn new(root: &'d Dir) -> Self {
        Self {
            cursor: RefCell::new(root.cursor()),
            seen: RefCell::new(HashMap::new()),
        }
    }

    fn node(&self, path: &str) -> Node<'static> {
        if let Some(known) = self.seen.borrow().get(path) {
            return known.clone();
        }
        let mut cursor = self.cursor.borrow_mut();
        // `resolve_link` asks for each prefix before what is below it, so
        // a link on the way has been answered (and followed) already; a
        // path the handle refuses is as good as missing.
        let found = match cursor.entry(path) {
            Ok(Some(entry)) => match entry.kind {
                EntryKind::Symlink => match cursor.read_link(path) {
                    Ok(text) => Node::Symlink(Cow::Owned(text)),
                    Err(_) => Node::Missing,
                },
                EntryKind::Dir => Node::Dir,
                EntryKind::File | EntryKind::Other => Node::File,
            },
            _ => Node::Missing,
        };
        self.seen
            .borrow_mut()
            .insert(path.to_owned(), found.clone());
        found
    }
}

#[cfg(test)]
mod tests {
    use dist_info::devel_tree::{LinkProblem, Resolved, TreeNames, resolve_link};
    use dist_info::nonce::Nonce;

    use super::*;

    fn model(members: &[(&str, Kind)]) -> Model {
        model_named(TreeNames::new(&Nonce::NONE), members)
    }

    fn model_named(names: TreeNames, members: &[(&str, Kind)]) -> Model {
        let mut m = Model::new(names);
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
    fn members_inside_the_tree_disk_outside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("_core/lib")).unwrap();
        std::fs::write(dir.path().join("_core/lib/x.so.1"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("_core/abs")).unwrap();
        // On disk, but the archive's view of the tree wins.
        std::fs::create_dir_all(dir.path().join("_rocm_sdk_devel/stale")).unwrap();
        let m = model(&[
            ("_rocm_sdk_devel/lib", Kind::Dir { mode: 0o755 }),
            ("_rocm_sdk_devel/lib/a", link("../../_core/lib/x.so.1")),
            (
                "_rocm_sdk_devel/lib/f",
                Kind::File {
                    mode: 0o644,
                    mtime: 0,
                    offset: 0,
                    size: 0,
                },
            ),
            (
                "_rocm_sdk_devel/lib/h",
                Kind::HardLink {
                    target: "_rocm_sdk_devel/lib/f".into(),
                },
            ),
        ]);
        let sp = Dir::open(dir.path()).unwrap();
        let tree = FinalTree::new(&m, &sp);
        let r = |link: &str, t: &str| resolve_link(&tree, link, t);
        assert_eq!(
            r("_rocm_sdk_devel/lib/b", "a"),
            Ok(Resolved::File("_core/lib/x.so.1".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/b", "h"),
            Ok(Resolved::File("_rocm_sdk_devel/lib/h".into()))
        );
        assert_eq!(
            tree.regular_file("_rocm_sdk_devel/lib/h".into()),
            "_rocm_sdk_devel/lib/f"
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/b", "../stale"),
            Ok(Resolved::Missing("_rocm_sdk_devel/stale".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/b", "../../_core/abs/passwd"),
            Err(LinkProblem::Absolute("/etc".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/b", "../../_core/lib"),
            Ok(Resolved::Dir("_core/lib".into()))
        );
    }

    #[test]
    fn the_tree_is_the_one_the_nonce_names() {
        let dir = tempfile::tempdir().unwrap();
        // Another release's (unsuffixed) tree is just another directory of
        // site-packages; a stale copy of this release's tree is not looked at.
        std::fs::create_dir_all(dir.path().join("_rocm_sdk_devel/lib")).unwrap();
        std::fs::write(dir.path().join("_rocm_sdk_devel/lib/other.so"), "o").unwrap();
        std::fs::create_dir_all(dir.path().join("_rocm_sdk_devel_n1/stale")).unwrap();
        let m = model_named(
            TreeNames::new(&"_n1".parse().unwrap()),
            &[
                ("_rocm_sdk_devel_n1/lib", Kind::Dir { mode: 0o755 }),
                ("_rocm_sdk_devel_n1/lib/loop", link("loop")),
            ],
        );
        let sp = Dir::open(dir.path()).unwrap();
        let tree = FinalTree::new(&m, &sp);
        let r = |link: &str, t: &str| resolve_link(&tree, link, t);
        assert_eq!(
            r("_rocm_sdk_devel_n1/lib/b", "../stale"),
            Ok(Resolved::Missing("_rocm_sdk_devel_n1/stale".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel_n1/lib/b", "loop"),
            Err(LinkProblem::TooManyLinks)
        );
        assert_eq!(
            r(
                "_rocm_sdk_devel_n1/lib/b",
                "../../_rocm_sdk_devel/lib/other.so"
            ),
            Ok(Resolved::File("_rocm_sdk_devel/lib/other.so".into()))
        );
    }
}
