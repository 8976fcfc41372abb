//! What a devel tree may hold (docs/behaviour.md#devel-install,
//! docs/behaviour.md#integrity): the one safety predicate that
//! the build (planning and writing `_devel.tar`) and the install (scanning
//! and unpacking it into site-packages) both apply, so the build never
//! writes a member or a link that the install would refuse.
//!
//! The rules, in one place:
//! - a member path is a clean relative path ([`check_relpath`], the rule of
//!   every package member: [`pypa_formats::member`]) at or under
//!   the tree's root, `_rocm_sdk_devel{nonce}` ([`TreeNames`],
//!   [`member_path`]);
//! - a link text is non-empty, relative and free of control characters
//!   ([`check_link_text`]);
//! - a symlink is followed the way the kernel would, through the final tree
//!   ([`resolve_link`]): never above site-packages, never to an absolute
//!   path, never through more than [`MAX_LINKS`] links (a loop), and never to
//!   a path the tree cannot vouch for ([`Node::Unknown`]);
//! - a tar hard link ends at a regular member within [`MAX_LINKS`] links and
//!   never loops ([`hard_link_source`]);
//! - a device link names a file of another package of site-packages, never
//!   one of the devel tree ([`device_link_source`]);
//! - links to files become hard links when unpacked, except the compiler
//!   drivers directly in `bin/` ([`is_compiler_symlink`]).
//!
//! Pure: paths are `/`-separated and relative to site-packages, the tree's
//! directory names come from the release's nonce ([`TreeNames`]; there is
//! no fixed root to fall back on), and the tree a link is followed through
//! is described by the caller ([`TreeView`]): the install looks at the
//! archive and the disk, the build at its plan and the runtime files its
//! links point at.
//!
//! ```
//! use dist_info::devel_tree::{Node, Resolved, TreeView, resolve_link};
//!
//! struct Tiny;
//! impl TreeView for Tiny {
//!     fn node(&self, path: &str) -> Node<'_> {
//!         match path {
//!             "_rocm_sdk_devel/lib" => Node::Dir,
//!             "_rocm_sdk_devel/lib/libx.so.1" => Node::File,
//!             "_rocm_sdk_devel/lib/a" => Node::Symlink("b".into()),
//!             "_rocm_sdk_devel/lib/b" => Node::Symlink("a".into()),
//!             _ => Node::Missing,
//!         }
//!     }
//! }
//! assert_eq!(
//!     resolve_link(&Tiny, "_rocm_sdk_devel/lib/libx.so", "libx.so.1"),
//!     Ok(Resolved::File("_rocm_sdk_devel/lib/libx.so.1".into()))
//! );
//! assert!(resolve_link(&Tiny, "_rocm_sdk_devel/lib/up", "../../../etc").is_err());
//! assert!(resolve_link(&Tiny, "_rocm_sdk_devel/lib/a", "b").is_err()); // a loop
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::nonce::Nonce;
use crate::package::{Mode, Package, PackageKind};
use pypa_formats::member::{PathProblem, check_file_name, check_relpath};

/// The directory names of one release's devel tree in site-packages: the
/// tree itself (`_rocm_sdk_devel{N}`, every member of the devel tar starts
/// with it) and the libraries package that device wheels overlay
/// (`_rocm_sdk_libraries{N}`), both carrying the release's nonce `N`. The
/// build names its tarball's members with it, the install reads the nonce
/// from the installed devel package; there is deliberately no default.
///
/// ```
/// use dist_info::devel_tree::TreeNames;
/// use dist_info::nonce::Nonce;
/// let names = TreeNames::new(&"_n1".parse().unwrap());
/// assert_eq!(names.root(), "_rocm_sdk_devel_n1");
/// assert_eq!(names.devel_links_dir(), "_rocm_sdk_libraries_n1/.devel_links");
/// assert_eq!(names.relpath("_rocm_sdk_devel_n1/lib/x"), Some("lib/x"));
/// assert_eq!(names.relpath("_rocm_sdk_devel/lib/x"), None);
/// assert_eq!(TreeNames::new(&Nonce::NONE).root(), "_rocm_sdk_devel");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNames {
    root: String,
    libraries: String,
    /// The runtime packages' directories other than `libraries`: core and
    /// the profiler.
    runtime: [String; 2],
    nonce: String,
}

impl TreeNames {
    /// The names of a release whose platform packages carry `nonce`.
    pub fn new(nonce: &Nonce) -> Self {
        let name = |kind| {
            Package::new(kind, Mode::Kpack, nonce)
                .platform_package(None)
                .expect("devel and kpack libraries are not target specific")
                .expect("devel and libraries have platform packages")
        };
        Self {
            root: name(PackageKind::Devel),
            libraries: name(PackageKind::Libraries),
            runtime: [name(PackageKind::Core), name(PackageKind::Profiler)],
            nonce: nonce.as_str().to_owned(),
        }
    }

    /// Whether the site-packages directory `name` is a runtime package of
    /// this release, one whose files the devel tree may hard-link: core,
    /// the profiler, the libraries package device wheels overlay, or a
    /// legacy family's libraries package (`_rocm_sdk_libraries_{F}{N}`).
    ///
    /// ```
    /// use dist_info::devel_tree::TreeNames;
    /// let names = TreeNames::new(&"_n1".parse().unwrap());
    /// assert!(names.is_runtime_package("_rocm_sdk_core_n1"));
    /// assert!(names.is_runtime_package("_rocm_sdk_libraries_gfx94X_dcgpu_n1"));
    /// assert!(!names.is_runtime_package("_rocm_sdk_core"));
    /// assert!(!names.is_runtime_package("_rocm_sdk_devel_n1"));
    /// assert!(!names.is_runtime_package("numpy"));
    /// ```
    pub fn is_runtime_package(&self, name: &str) -> bool {
        if name == self.libraries || self.runtime.iter().any(|r| r == name) {
            return true;
        }
        // A family: letters, digits and `_` between the prefix and the nonce.
        name.strip_prefix("_rocm_sdk_libraries_")
            .and_then(|rest| rest.strip_suffix(self.nonce.as_str()))
            .is_some_and(|family| {
                !family.is_empty()
                    && family
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && !family.ends_with('_')
            })
    }

    /// The devel tree's directory in site-packages.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The libraries platform package that device wheels overlay.
    pub fn libraries(&self) -> &str {
        &self.libraries
    }

    /// Where device wheels keep their links documents, relative to
    /// site-packages.
    pub fn devel_links_dir(&self) -> String {
        format!("{}/.devel_links", self.libraries)
    }

    /// `relpath` inside the tree, relative to site-packages.
    pub fn in_tree(&self, relpath: &str) -> String {
        format!("{}/{relpath}", self.root)
    }

    /// Whether the site-packages path `path` is the tree's root or below it.
    pub fn contains(&self, path: &str) -> bool {
        path.strip_prefix(self.root.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    /// The site-packages path `path` relative to the tree, when it lies
    /// below the root.
    pub fn relpath<'p>(&self, path: &'p str) -> Option<&'p str> {
        path.strip_prefix(self.root.as_str())?.strip_prefix('/')
    }
}

/// Links followed before a chain counts as a loop (Linux's `MAXSYMLINKS`);
/// also the longest chain of tar hard links accepted.
pub const MAX_LINKS: usize = 40;

/// Links directly in the tree's `bin/` that stay symlinks when unpacked
/// (the compiler drivers find their resources through their own path).
pub const COMPILER_SYMLINKS: &[&str] = &[
    "amdclang",
    "amdclang++",
    "amdclang-cl",
    "amdclang-cpp",
    "amdflang",
    "amdlld",
    "amdllvm",
];

/// True when `relpath` (inside the devel tree, e.g. `bin/amdclang`) names one
/// of the [`COMPILER_SYMLINKS`], which stay symlinks on unpack.
///
/// ```
/// assert!(dist_info::devel_tree::is_compiler_symlink("bin/amdclang++"));
/// assert!(!dist_info::devel_tree::is_compiler_symlink("lib/llvm/bin/amdclang"));
/// ```
pub fn is_compiler_symlink(relpath: &str) -> bool {
    relpath
        .strip_prefix("bin/")
        .is_some_and(|name| COMPILER_SYMLINKS.contains(&name))
}

/// A tar member name as its clean site-packages-relative path: a leading
/// `./` and a trailing `/` are dropped, and what remains must be a clean
/// relative path at or under the root `names` gives (`_rocm_sdk_devel{N}`).
///
/// ```
/// use dist_info::devel_tree::{TreeNames, member_path};
/// let names = TreeNames::new(&"_n1".parse().unwrap());
/// assert_eq!(member_path("./_rocm_sdk_devel_n1/lib/", &names), Ok("_rocm_sdk_devel_n1/lib"));
/// assert!(member_path("_rocm_sdk_devel/lib", &names).is_err());
/// ```
pub fn member_path<'r>(raw: &'r str, names: &TreeNames) -> Result<&'r str, PathProblem> {
    let trimmed = raw.strip_prefix("./").unwrap_or(raw);
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    check_relpath(trimmed)?;
    if names.contains(trimmed) {
        Ok(trimmed)
    } else {
        Err(PathProblem::OutsideDevelRoot(names.root().to_owned()))
    }
}

/// Why a link of the devel tree is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkProblem {
    /// The link text is empty or holds a control character.
    #[error("the link text {0:?} is empty or holds a control character")]
    InvalidText(String),
    /// The link, or a link it leads through, is absolute.
    #[error("it reaches the absolute path {0:?}")]
    Absolute(String),
    /// The chain climbs above site-packages.
    #[error("it leads outside site-packages")]
    LeavesSitePackages,
    /// The chain reaches a path the tree cannot vouch for (the build's view
    /// knows only the devel tree and the runtime files it links to).
    #[error("it leads to {0}, outside the devel tree and the runtime files it links to")]
    LeavesPackages(String),
    /// More than [`MAX_LINKS`] symlinks in the chain.
    #[error("it follows more than {MAX_LINKS} links (a loop)")]
    TooManyLinks,
    /// Tar hard links that lead back to themselves, in order
    /// (`a -> b -> a`).
    #[error("hard links form a cycle: {}", .0.join(" -> "))]
    HardLinkCycle(Vec<String>),
    /// More than [`MAX_LINKS`] tar hard links in a row.
    #[error("the chain of hard links is longer than {MAX_LINKS}")]
    HardLinkChainTooLong,
    /// A tar hard link chain reaches something that is not a regular member.
    #[error("hard link to {0}, which is not a regular file of the devel tree")]
    HardLinkTarget(String),
}

/// Checks a symlink text: non-empty, relative, no control characters.
///
/// ```
/// use dist_info::devel_tree::{LinkProblem, check_link_text};
/// assert_eq!(check_link_text("libfoo.so.1"), Ok(()));
/// assert_eq!(
///     check_link_text("/etc/passwd"),
///     Err(LinkProblem::Absolute("/etc/passwd".into()))
/// );
/// ```
pub fn check_link_text(text: &str) -> Result<(), LinkProblem> {
    if text.is_empty() || check_file_name(text).is_err() {
        Err(LinkProblem::InvalidText(text.to_owned()))
    } else if text.starts_with('/') {
        Err(LinkProblem::Absolute(text.to_owned()))
    } else {
        Ok(())
    }
}

/// What a path of site-packages is, as a [`TreeView`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node<'a> {
    /// Nothing there.
    Missing,
    /// A directory.
    Dir,
    /// A regular file (or a tar hard link to one).
    File,
    /// A symlink with this text.
    Symlink(Cow<'a, str>),
    /// A path the view cannot vouch for: a link that leads there is refused
    /// ([`LinkProblem::LeavesPackages`]).
    Unknown,
}

/// Site-packages as one side sees it, path by path (relative, `/`-separated,
/// never empty).
pub trait TreeView {
    /// What `path` is.
    fn node(&self, path: &str) -> Node<'_>;
}

/// Where a link finally leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A regular file at this path.
    File(String),
    /// A directory at this path (`""` is site-packages itself).
    Dir(String),
    /// Nothing at this path (or a file used as a directory): the link
    /// dangles there.
    Missing(String),
}

/// Follows the link at `link` whose text is `text` through `tree`, segment
/// by segment as the kernel would (a link's text is taken relative to the
/// link's directory and spliced in front of what remains), so the answer
/// never depends on the order members were seen in.
///
/// Refused: any text of the chain that [`check_link_text`] refuses, a `..`
/// above site-packages, more than [`MAX_LINKS`] links, and a path the view
/// answers [`Node::Unknown`] for. A missing path ends the walk as
/// [`Resolved::Missing`], naming the first path of the walk that is not
/// there.
pub fn resolve_link(tree: &impl TreeView, link: &str, text: &str) -> Result<Resolved, LinkProblem> {
    check_link_text(text)?;
    let mut dir: Vec<String> = link.split('/').map(str::to_owned).collect();
    dir.pop();
    let mut pending = segments(text);
    let mut followed = 0;
    while let Some(segment) = pending.pop_front() {
        match segment.as_str() {
            "." => continue,
            ".." => {
                dir.pop().ok_or(LinkProblem::LeavesSitePackages)?;
                continue;
            }
            _ => {}
        }
        dir.push(segment);
        let path = dir.join("/");
        let next = match tree.node(&path) {
            Node::Unknown => return Err(LinkProblem::LeavesPackages(path)),
            Node::Dir => continue,
            // A file is only the end of the walk when nothing follows it.
            Node::File if pending.iter().all(|s| s == ".") => return Ok(Resolved::File(path)),
            Node::Missing | Node::File => return Ok(Resolved::Missing(path)),
            Node::Symlink(next) => next.into_owned(),
        };
        followed += 1;
        if followed > MAX_LINKS {
            return Err(LinkProblem::TooManyLinks);
        }
        check_link_text(&next)?;
        dir.pop();
        let mut spliced = segments(&next);
        spliced.append(&mut pending);
        pending = spliced;
    }
    Ok(Resolved::Dir(dir.join("/")))
}

fn segments(text: &str) -> VecDeque<String> {
    text.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// What a tar member is, for following hard links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HardLinkNode<'a> {
    /// A regular file.
    File,
    /// A hard link to this member.
    HardLink(&'a str),
    /// Anything else (directory, symlink) or nothing.
    Other,
}

/// The regular member that the tar hard link `link` (to `target`) finally
/// names, following further hard links through `member`. Refused: a chain
/// that reaches anything but a regular member, one longer than
/// [`MAX_LINKS`], and a cycle (named member by member).
///
/// ```
/// use dist_info::devel_tree::{HardLinkNode, LinkProblem, hard_link_source};
/// let member = |p: &str| match p {
///     "f" => HardLinkNode::File,
///     "a" => HardLinkNode::HardLink("b"),
///     "b" => HardLinkNode::HardLink("a"),
///     _ => HardLinkNode::Other,
/// };
/// assert_eq!(hard_link_source("h", "f", member), Ok("f"));
/// assert_eq!(
///     hard_link_source("a", "b", member),
///     Err(LinkProblem::HardLinkCycle(vec!["a".into(), "b".into(), "a".into()]))
/// );
/// ```
pub fn hard_link_source<'a>(
    link: &'a str,
    target: &'a str,
    member: impl Fn(&str) -> HardLinkNode<'a>,
) -> Result<&'a str, LinkProblem> {
    let mut chain = vec![link];
    let mut current = target;
    loop {
        if let Some(start) = chain.iter().position(|p| *p == current) {
            let mut cycle: Vec<String> = chain[start..].iter().map(|p| (*p).to_owned()).collect();
            cycle.push(current.to_owned());
            return Err(LinkProblem::HardLinkCycle(cycle));
        }
        match member(current) {
            HardLinkNode::File => return Ok(current),
            HardLinkNode::HardLink(next) => {
                if chain.len() == MAX_LINKS {
                    return Err(LinkProblem::HardLinkChainTooLong);
                }
                chain.push(current);
                current = next;
            }
            HardLinkNode::Other => return Err(LinkProblem::HardLinkTarget(current.to_owned())),
        }
    }
}

/// The site-packages path of the file a device link names: `target` taken
/// relative to the directory of `link` (a path in the devel tree `names`
/// gives) and normalised. `None` when it is absolute, climbs out of
/// site-packages, names no file of a package directory, or lands in the
/// devel tree.
///
/// ```
/// use dist_info::devel_tree::{TreeNames, device_link_source};
/// let names = TreeNames::new(&"_n1".parse().unwrap());
/// assert_eq!(
///     device_link_source("_rocm_sdk_devel_n1/lib/k.co", "../../_rocm_sdk_libraries_n1/lib/k.co", &names).as_deref(),
///     Some("_rocm_sdk_libraries_n1/lib/k.co")
/// );
/// assert_eq!(device_link_source("_rocm_sdk_devel_n1/k", "other", &names), None);
/// ```
pub fn device_link_source(link: &str, target: &str, names: &TreeNames) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for segment in target.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    (parts.len() > 1 && parts[0] != names.root()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A tree given as a table of paths.
    struct Table(BTreeMap<String, Node<'static>>);

    impl TreeView for Table {
        fn node(&self, path: &str) -> Node<'_> {
            self.0.get(path).cloned().unwrap_or(Node::Missing)
        }
    }

    fn table(nodes: &[(&str, Node<'static>)]) -> Table {
        Table(
            nodes
                .iter()
                .map(|(p, n)| ((*p).to_owned(), n.clone()))
                .collect(),
        )
    }

    fn link(text: &str) -> Node<'static> {
        Node::Symlink(Cow::Owned(text.to_owned()))
    }

    #[test]
    fn chains_escapes_and_loops() {
        let t = table(&[
            ("_core", Node::Dir),
            ("_core/lib", Node::Dir),
            ("_core/lib/x.so.1", Node::File),
            ("_rocm_sdk_devel", Node::Dir),
            ("_rocm_sdk_devel/lib", Node::Dir),
            ("_rocm_sdk_devel/lib/a", link("b")),
            ("_rocm_sdk_devel/lib/b", link("../../_core/lib/x.so.1")),
            ("_rocm_sdk_devel/lib/f", Node::File),
            ("_rocm_sdk_devel/lib/d", link("../../_core")),
            ("_rocm_sdk_devel/lib/loop", link("loop")),
            ("_rocm_sdk_devel/lib/abs", link("/etc")),
            ("foreign", Node::Unknown),
        ]);
        let r = |link: &str, text: &str| resolve_link(&t, link, text);
        let file = |p: &str| Ok(Resolved::File(p.to_owned()));
        assert_eq!(r("_rocm_sdk_devel/lib/a", "b"), file("_core/lib/x.so.1"));
        assert_eq!(
            r("_rocm_sdk_devel/lib/g", "f"),
            file("_rocm_sdk_devel/lib/f")
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/g", "./f/."),
            file("_rocm_sdk_devel/lib/f")
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/d", "../../_core"),
            Ok(Resolved::Dir("_core".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "d/lib/x.so.1"),
            file("_core/lib/x.so.1")
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "d/../../x"),
            Err(LinkProblem::LeavesSitePackages)
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "../../../etc"),
            Err(LinkProblem::LeavesSitePackages)
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "nothing"),
            Ok(Resolved::Missing("_rocm_sdk_devel/lib/nothing".into()))
        );
        // A file used as a directory: the walk stops at the file.
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "f/x"),
            Ok(Resolved::Missing("_rocm_sdk_devel/lib/f".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "../../_core/lib/gone.so"),
            Ok(Resolved::Missing("_core/lib/gone.so".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/loop", "loop"),
            Err(LinkProblem::TooManyLinks)
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "abs/x"),
            Err(LinkProblem::Absolute("/etc".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "/etc"),
            Err(LinkProblem::Absolute("/etc".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "../../foreign/x"),
            Err(LinkProblem::LeavesPackages("foreign".into()))
        );
        assert_eq!(
            r("_rocm_sdk_devel/lib/e", "a\nb"),
            Err(LinkProblem::InvalidText("a\nb".into()))
        );
        assert!(matches!(
            r("_rocm_sdk_devel/lib/e", ""),
            Err(LinkProblem::InvalidText(_))
        ));
    }

    #[test]
    fn forty_links_are_followed_forty_one_are_a_loop() {
        // d/l0 -> l1 -> ... -> l40 -> end: 41 links.
        let mut nodes = vec![
            ("d".to_owned(), Node::Dir),
            ("d/end".to_owned(), Node::File),
        ];
        for i in 0..=MAX_LINKS {
            let next = if i == MAX_LINKS {
                "end".to_owned()
            } else {
                format!("l{}", i + 1)
            };
            nodes.push((format!("d/l{i}"), Node::Symlink(Cow::Owned(next))));
        }
        let t = Table(nodes.into_iter().collect());
        assert_eq!(
            resolve_link(&t, "d/x", "l1"),
            Ok(Resolved::File("d/end".into()))
        );
        assert_eq!(
            resolve_link(&t, "d/x", "l0"),
            Err(LinkProblem::TooManyLinks)
        );
    }

    #[test]
    fn hard_link_chains_are_bounded_and_cycles_named() {
        // h0 -> f, h1 -> h0, ...: `h{n}` starts a chain of n + 1 hard links.
        let chain: Vec<String> = (0..=MAX_LINKS).map(|n| format!("h{n}")).collect();
        let member = |p: &str| match p {
            "f" => HardLinkNode::File,
            "dir" => HardLinkNode::Other,
            "a" => HardLinkNode::HardLink("b"),
            "b" => HardLinkNode::HardLink("c"),
            "c" => HardLinkNode::HardLink("a"),
            "self" => HardLinkNode::HardLink("self"),
            "to_dir" => HardLinkNode::HardLink("dir"),
            _ => match chain.iter().position(|h| h == p) {
                Some(0) => HardLinkNode::HardLink("f"),
                Some(n) => HardLinkNode::HardLink(&chain[n - 1]),
                None => HardLinkNode::Other,
            },
        };
        assert_eq!(hard_link_source("x", "f", member), Ok("f"));
        assert_eq!(
            hard_link_source("a", "b", member),
            Err(LinkProblem::HardLinkCycle(
                ["a", "b", "c", "a"].map(String::from).to_vec()
            ))
        );
        assert_eq!(
            hard_link_source("self", "self", member),
            Err(LinkProblem::HardLinkCycle(vec![
                "self".into(),
                "self".into()
            ]))
        );
        assert_eq!(
            hard_link_source("x", "to_dir", member),
            Err(LinkProblem::HardLinkTarget("dir".into()))
        );
        assert_eq!(
            hard_link_source("x", "missing", member),
            Err(LinkProblem::HardLinkTarget("missing".into()))
        );
        assert_eq!(hard_link_source(&chain[39], &chain[38], member), Ok("f"));
        assert_eq!(
            hard_link_source(&chain[40], &chain[39], member),
            Err(LinkProblem::HardLinkChainTooLong)
        );
        let cycle = LinkProblem::HardLinkCycle(["a", "b", "a"].map(String::from).to_vec());
        assert_eq!(cycle.to_string(), "hard links form a cycle: a -> b -> a");
    }

    #[test]
    fn relpaths_and_member_names() {
        assert!(check_relpath("lib/x.so").is_ok());
        for bad in ["", "/a", "a/../b", "a//b", "a/", "./a", "a\nb", "a\\b"] {
            assert!(check_relpath(bad).is_err(), "{bad:?}");
        }
        let plain = TreeNames::new(&Nonce::NONE);
        let outside = |root: &str| Err(PathProblem::OutsideDevelRoot(root.to_owned()));
        assert_eq!(
            member_path("_rocm_sdk_devel/", &plain),
            Ok("_rocm_sdk_devel")
        );
        assert_eq!(
            member_path("_rocm_sdk_develx/a", &plain),
            outside("_rocm_sdk_devel")
        );
        assert_eq!(
            member_path("_rocm_sdk_devel/../x", &plain),
            Err(PathProblem::DotSegment)
        );
        assert_eq!(
            member_path("/_rocm_sdk_devel", &plain),
            Err(PathProblem::Absolute)
        );
        assert_eq!(
            outside("_rocm_sdk_devel_n1").unwrap_err().to_string(),
            "outside _rocm_sdk_devel_n1/"
        );
    }

    #[test]
    fn the_root_carries_the_nonce() {
        let plain = TreeNames::new(&Nonce::NONE);
        let n1 = TreeNames::new(&"_n1".parse().unwrap());
        assert_eq!(n1.root(), "_rocm_sdk_devel_n1");
        assert_eq!(n1.libraries(), "_rocm_sdk_libraries_n1");
        assert_eq!(n1.in_tree("lib/x"), "_rocm_sdk_devel_n1/lib/x");
        assert_eq!(
            member_path("_rocm_sdk_devel_n1/lib/x", &n1),
            Ok("_rocm_sdk_devel_n1/lib/x")
        );
        // Each release accepts only its own tree: neither root is a prefix
        // the other may borrow.
        assert_eq!(
            member_path("_rocm_sdk_devel/lib/x", &n1),
            Err(PathProblem::OutsideDevelRoot("_rocm_sdk_devel_n1".into()))
        );
        assert_eq!(
            member_path("_rocm_sdk_devel_n1/lib/x", &plain),
            Err(PathProblem::OutsideDevelRoot("_rocm_sdk_devel".into()))
        );
        assert!(n1.contains("_rocm_sdk_devel_n1"));
        assert!(!n1.contains("_rocm_sdk_devel_n12/x"));
        assert_eq!(n1.relpath("_rocm_sdk_devel_n1"), None);
        // A device link may not land in its own (suffixed) tree.
        assert_eq!(
            device_link_source(
                "_rocm_sdk_devel_n1/lib/k.co",
                "../../_rocm_sdk_devel_n1/k.co",
                &n1
            ),
            None
        );
        assert_eq!(
            device_link_source(
                "_rocm_sdk_devel_n1/lib/k.co",
                "../../_rocm_sdk_libraries_n1/lib/k.co",
                &n1
            ),
            Some("_rocm_sdk_libraries_n1/lib/k.co".into())
        );
    }

    #[test]
    fn device_links_stay_in_site_packages_and_out_of_the_devel_tree() {
        let names = TreeNames::new(&Nonce::NONE);
        let source = |link: &str, target: &str| device_link_source(link, target, &names);
        assert_eq!(
            source(
                "_rocm_sdk_devel/lib/k.co",
                "../../_rocm_sdk_libraries/lib/k.co"
            ),
            Some("_rocm_sdk_libraries/lib/k.co".into())
        );
        assert_eq!(source("_rocm_sdk_devel/k", "../../x"), None);
        assert_eq!(source("_rocm_sdk_devel/k", "/x"), None);
        assert_eq!(source("_rocm_sdk_devel/k", "other"), None);
        assert_eq!(source("_rocm_sdk_devel/k", "../top"), None);
        assert_eq!(source("_rocm_sdk_devel/k", "../_rocm_sdk_devel/x"), None);
    }
}
