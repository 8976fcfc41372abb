//! Symlink resolution inside the merged tree, without touching the file
//! system: the walk of the install side too
//! ([`dist_info::devel_tree::resolve_link`]), so build and install follow a
//! link the same way; this module only names the outcome for the catalog.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use dist_info::devel_tree::{self, LinkProblem, Resolved, TreeView, resolve_link};
/// Where a symlink leads in the merged tree of a catalog.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resolution {
    /// A regular file at this relpath (after following the whole chain).
    File(String),
    /// A directory at this relpath (`""` is the root of the tree).
    Dir(String),
    /// Nothing usable: the link is never followed.
    Dangling(Dangling),
}

/// Why a symlink resolves to nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dangling {
    /// The target does not exist in the tree.
    Missing,
    /// The target path is absolute: it names a host file.
    Absolute,
    /// The target climbs above the root of the tree with `..`.
    LeavesTree,
    /// More than [`devel_tree::MAX_LINKS`] links in the chain: a loop.
    Loop,
    /// A path component of the target is a file, not a directory.
    NotADirectory,
}

impl Dangling {
    /// Whether the link points out of the tree (never followed, logged as a warning).
    pub fn is_escape(self) -> bool {
        matches!(self, Self::Absolute | Self::LeavesTree)
    }
}

impl fmt::Display for Dangling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Missing => "target missing",
            Self::Absolute => "absolute target outside the artifact tree",
            Self::LeavesTree => "target climbs out of the artifact tree",
            Self::Loop => "symlink loop",
            Self::NotADirectory => "a path component is not a directory",
        })
    }
}

/// A node of the merged tree, as the resolver sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Node<'a> {
    File,
    Dir,
    Symlink(&'a str),
}

/// The merged tree as the shared walker sees it.
struct MergedTree<'t, 'a>(&'t HashMap<&'a str, Node<'a>>);

impl TreeView for MergedTree<'_, '_> {
    fn node(&self, path: &str) -> devel_tree::Node<'_> {
        match self.0.get(path) {
            None => devel_tree::Node::Missing,
            Some(Node::File) => devel_tree::Node::File,
            Some(Node::Dir) => devel_tree::Node::Dir,
            Some(Node::Symlink(text)) => devel_tree::Node::Symlink(Cow::Borrowed(text)),
        }
    }
}

/// Resolves the link at `link` (a relpath) with link text `target`.
pub(crate) fn resolve(tree: &HashMap<&str, Node<'_>>, link: &str, target: &str) -> Resolution {
    match resolve_link(&MergedTree(tree), link, target) {
        Ok(Resolved::File(path)) => Resolution::File(path),
        Ok(Resolved::Dir(path)) => Resolution::Dir(path),
        // The walk stops at a file that is used as a directory, or at the
        // first missing path.
        Ok(Resolved::Missing(path)) => Resolution::Dangling(match tree.get(path.as_str()) {
            Some(Node::File) => Dangling::NotADirectory,
            _ => Dangling::Missing,
        }),
        Err(LinkProblem::Absolute(_)) => Resolution::Dangling(Dangling::Absolute),
        Err(LinkProblem::LeavesSitePackages) => Resolution::Dangling(Dangling::LeavesTree),
        Err(LinkProblem::TooManyLinks) => Resolution::Dangling(Dangling::Loop),
        // Link texts with control characters are refused when the tree is
        // read, so only the empty text is left: it names nothing.
        Err(_) => Resolution::Dangling(Dangling::Missing),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> HashMap<&'static str, Node<'static>> {
        HashMap::from([
            ("", Node::Dir),
            ("lib", Node::Dir),
            ("lib/libx.so.1.0", Node::File),
            ("lib/libx.so.1", Node::Symlink("libx.so.1.0")),
            ("lib/libx.so", Node::Symlink("libx.so.1")),
            ("bin", Node::Dir),
            ("bin/tool", Node::Symlink("../lib/libx.so")),
            ("bin/up", Node::Symlink("../../x")),
            ("bin/abs", Node::Symlink("/etc/passwd")),
            ("bin/a", Node::Symlink("b")),
            ("bin/b", Node::Symlink("a")),
            ("bin/self", Node::Symlink("self")),
            ("bin/libdir", Node::Symlink("../lib")),
            ("bin/through", Node::Symlink("libdir/libx.so")),
            ("bin/notdir", Node::Symlink("../lib/libx.so.1.0/x")),
            ("bin/root", Node::Symlink("..")),
            ("bin/gone", Node::Symlink("nothing")),
        ])
    }

    fn r(link: &str) -> Resolution {
        let t = tree();
        let Some(Node::Symlink(target)) = t.get(link) else {
            panic!()
        };
        resolve(&t, link, target)
    }

    #[test]
    fn follows_chains_and_directory_links() {
        assert_eq!(r("lib/libx.so"), Resolution::File("lib/libx.so.1.0".into()));
        assert_eq!(r("bin/tool"), Resolution::File("lib/libx.so.1.0".into()));
        assert_eq!(r("bin/through"), Resolution::File("lib/libx.so.1.0".into()));
        assert_eq!(r("bin/libdir"), Resolution::Dir("lib".into()));
        assert_eq!(r("bin/root"), Resolution::Dir(String::new()));
    }

    #[test]
    fn never_leaves_the_tree_and_terminates_on_loops() {
        assert_eq!(r("bin/up"), Resolution::Dangling(Dangling::LeavesTree));
        assert_eq!(r("bin/abs"), Resolution::Dangling(Dangling::Absolute));
        assert_eq!(r("bin/a"), Resolution::Dangling(Dangling::Loop));
        assert_eq!(r("bin/self"), Resolution::Dangling(Dangling::Loop));
        assert_eq!(r("bin/gone"), Resolution::Dangling(Dangling::Missing));
        assert_eq!(
            r("bin/notdir"),
            Resolution::Dangling(Dangling::NotADirectory)
        );
    }
}
