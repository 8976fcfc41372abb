//! Symlink resolution inside the merged tree, without touching the file system.

use std::collections::{HashMap, VecDeque};
use std::fmt;

/// Links followed before a chain counts as a loop (Linux's `MAXSYMLINKS`).
const MAX_HOPS: usize = 40;

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
    /// More than 40 links in the chain: a loop.
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

/// Resolves the link at `link` (a relpath) with link text `target`.
pub(crate) fn resolve(tree: &HashMap<&str, Node<'_>>, link: &str, target: &str) -> Resolution {
    let mut owned: Vec<String> = link.split('/').map(str::to_owned).collect();
    owned.pop(); // a link is relative to its directory
    let mut pending: VecDeque<String> = VecDeque::new();
    if let Err(d) = push_target(&mut pending, target) {
        return Resolution::Dangling(d);
    }
    let mut hops = 0;
    while let Some(segment) = pending.pop_front() {
        match segment.as_str() {
            "" | "." => {}
            ".." => {
                if owned.pop().is_none() {
                    return Resolution::Dangling(Dangling::LeavesTree);
                }
            }
            name => {
                owned.push(name.to_owned());
                let here = owned.join("/");
                match tree.get(here.as_str()) {
                    None => return Resolution::Dangling(Dangling::Missing),
                    Some(Node::Dir) => {}
                    Some(Node::File) => {
                        if pending.iter().any(|s| !s.is_empty() && s != ".") {
                            return Resolution::Dangling(Dangling::NotADirectory);
                        }
                        return Resolution::File(here);
                    }
                    Some(Node::Symlink(next)) => {
                        hops += 1;
                        if hops > MAX_HOPS {
                            return Resolution::Dangling(Dangling::Loop);
                        }
                        owned.pop();
                        if let Err(d) = push_target(&mut pending, next) {
                            return Resolution::Dangling(d);
                        }
                    }
                }
            }
        }
    }
    Resolution::Dir(owned.join("/"))
}

/// Queues the segments of a link text in front of what is still pending.
fn push_target(pending: &mut VecDeque<String>, target: &str) -> Result<(), Dangling> {
    if target.starts_with('/') {
        return Err(Dangling::Absolute);
    }
    if target.is_empty() {
        return Err(Dangling::Missing);
    }
    for segment in target.split('/').rev() {
        pending.push_front(segment.to_owned());
    }
    Ok(())
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
