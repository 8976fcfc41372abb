//! The catalog: the selected artifacts merged into one sorted tree of entries.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;
use std::sync::Arc;

use crate::artifact::{Artifact, EntrySource, Member, MemberKind, Stats};
use crate::resolve::{Node, resolve};
use crate::{ArtifactName, Dangling, Error, PathFilter, Resolution, Result};

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link: its raw text and where it leads in the merged tree.
    Symlink {
        /// The link text exactly as stored.
        target: String,
        /// The end of the whole chain inside the merged tree.
        resolution: Resolution,
    },
}

/// One relpath of the merged tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    relpath: String,
    kind: EntryKind,
    mode: u32,
    size: u64,
    artifact: Arc<ArtifactName>,
    source: Option<EntrySource>,
}

impl Entry {
    /// The path relative to the install prefix, `/`-separated.
    pub fn relpath(&self) -> &str {
        &self.relpath
    }

    /// File, directory or symlink.
    pub fn kind(&self) -> &EntryKind {
        &self.kind
    }

    /// Permission bits (`0o7777`); `0o777` for symlinks.
    pub fn mode(&self) -> u32 {
        self.mode
    }

    /// Size in bytes of a file; 0 otherwise.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The artifact this entry comes from (the later one for duplicates).
    pub fn artifact(&self) -> &ArtifactName {
        &self.artifact
    }

    /// Where the bytes of a file come from; `None` for directories and symlinks.
    pub fn source(&self) -> Option<&EntrySource> {
        self.source.as_ref()
    }

    /// Whether this is a regular file.
    pub fn is_file(&self) -> bool {
        self.kind == EntryKind::File
    }

    /// Opens the bytes of a file (see [`EntrySource::open`] for the cost in archives).
    pub fn open(&self) -> Result<Box<dyn Read + Send>> {
        match &self.source {
            Some(s) => s.open(),
            None => Ok(Box::new(std::io::empty())),
        }
    }
}

/// Where a duplicate came from: the artifact and its base directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    /// The artifact.
    pub artifact: ArtifactName,
    /// The manifest line (base directory) inside it.
    pub base_dir: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.artifact, self.base_dir)
    }
}

/// How two duplicates differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Difference {
    /// One is a file, the other a directory or symlink (or similar).
    Kind,
    /// Both files, different sizes.
    Size,
    /// Both files, different permission bits.
    Mode,
    /// Both files, same size, different bytes.
    Content,
    /// Both symlinks, different link texts.
    LinkTarget,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Kind => "different kinds",
            Self::Size => "different sizes",
            Self::Mode => "different modes",
            Self::Content => "different contents",
            Self::LinkTarget => "different link targets",
        })
    }
}

/// Something the user should know about a catalog; never fatal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum CatalogWarning {
    /// Two artifacts provide the same relpath with different data; the later one is kept.
    DuplicateDiffers {
        /// The relpath.
        relpath: String,
        /// The one dropped (earlier in sorted order).
        dropped: Origin,
        /// The one kept.
        kept: Origin,
        /// What differs.
        difference: Difference,
    },
    /// A symlink points out of the artifact tree, or loops; it is treated as dangling.
    LinkNotFollowed {
        /// The link's relpath.
        relpath: String,
        /// Its artifact.
        artifact: ArtifactName,
        /// The link text.
        target: String,
        /// Why it is not followed.
        reason: Dangling,
    },
    /// A path lies below something that is not a directory in the merged
    /// tree (a later artifact replaced its directory); it is dropped.
    Shadowed {
        /// The dropped relpath.
        relpath: String,
        /// Its artifact.
        artifact: ArtifactName,
    },
}

impl fmt::Display for CatalogWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuplicateDiffers {
                relpath,
                dropped,
                kept,
                difference,
            } => write!(
                f,
                "duplicate {relpath} with {difference} in {dropped} and {kept}; keeping {kept}"
            ),
            Self::LinkNotFollowed {
                relpath,
                artifact,
                target,
                reason,
            } => write!(
                f,
                "symlink {relpath} -> {target} in {artifact} not followed ({reason}); treated as dangling"
            ),
            Self::Shadowed { relpath, artifact } => write!(
                f,
                "{relpath} in {artifact} lies below a non-directory in the merged tree; dropped"
            ),
        }
    }
}

/// The selected artifacts merged into one tree, sorted by relpath.
///
/// Artifacts are merged in sorted name order and members in sorted relpath
/// order, so the result never depends on the file system; for a duplicate
/// relpath the later artifact's entry is kept (as in the reference), and a
/// [`CatalogWarning::DuplicateDiffers`] is recorded when the two differ.
#[derive(Debug, Clone)]
pub struct Catalog {
    artifacts: Vec<Arc<ArtifactName>>,
    tree: Vec<Entry>,
    selected: Vec<usize>,
    warnings: Vec<CatalogWarning>,
}

impl Catalog {
    /// The merged artifacts, sorted.
    pub fn artifacts(&self) -> impl ExactSizeIterator<Item = &ArtifactName> {
        self.artifacts.iter().map(AsRef::as_ref)
    }

    /// The entries that pass the path filter, sorted by relpath.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = &Entry> + DoubleEndedIterator {
        self.selected.iter().map(|&i| &self.tree[i])
    }

    /// How many entries pass the path filter.
    pub fn len(&self) -> usize {
        self.selected.len()
    }

    /// Whether no entry passes the path filter.
    pub fn is_empty(&self) -> bool {
        self.selected.is_empty()
    }

    /// The selected entry at `relpath`.
    pub fn get(&self, relpath: &str) -> Option<&Entry> {
        self.tree_get_index(relpath)
            .filter(|i| self.selected.binary_search(i).is_ok())
            .map(|i| &self.tree[i])
    }

    /// The entry at `relpath` in the whole merged tree, before the path
    /// filter: where a symlink's [`Resolution`] points.
    pub fn tree_get(&self, relpath: &str) -> Option<&Entry> {
        self.tree_get_index(relpath).map(|i| &self.tree[i])
    }

    fn tree_get_index(&self, relpath: &str) -> Option<usize> {
        self.tree
            .binary_search_by(|e| e.relpath.as_str().cmp(relpath))
            .ok()
    }

    /// Warnings found while merging, sorted.
    pub fn warnings(&self) -> &[CatalogWarning] {
        &self.warnings
    }

    /// Counts and bytes of the selected entries.
    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for e in self.entries() {
            let kind = match e.kind {
                EntryKind::File => MemberKind::File,
                EntryKind::Dir => MemberKind::Dir,
                EntryKind::Symlink { .. } => MemberKind::Symlink(String::new()),
            };
            s.add(&kind, e.size);
        }
        s
    }

    /// Calls `f(entry, reader)` for every selected regular file, reading
    /// each archive once; see [`crate::read_sources`].
    pub fn for_each_file<E, F>(&self, f: F) -> Result<(), E>
    where
        E: From<Error> + Send,
        F: Fn(&Entry, &mut dyn Read) -> Result<(), E> + Sync,
    {
        let items: Vec<(&Entry, &EntrySource)> = self
            .entries()
            .filter_map(|e| e.source.as_ref().map(|s| (e, s)))
            .collect();
        crate::read_sources(&items, |e, r| f(e, r))
    }
}

#[derive(Clone, Copy)]
struct Candidate<'a> {
    artifact: &'a Artifact,
    member: &'a Member,
}

impl Candidate<'_> {
    fn origin(&self) -> Origin {
        Origin {
            artifact: self.artifact.name().clone(),
            base_dir: self.artifact.prefixes()[self.member.prefix].clone(),
        }
    }
}

enum Compared {
    Same,
    Differs(Difference),
    NeedsContent,
}

fn compare(a: &Member, b: &Member) -> Compared {
    match (&a.kind, &b.kind) {
        (MemberKind::Dir, MemberKind::Dir) => Compared::Same,
        (MemberKind::Symlink(x), MemberKind::Symlink(y)) => {
            if x == y {
                Compared::Same
            } else {
                Compared::Differs(Difference::LinkTarget)
            }
        }
        (MemberKind::File, MemberKind::File) => {
            if a.size != b.size {
                Compared::Differs(Difference::Size)
            } else if a.mode != b.mode {
                Compared::Differs(Difference::Mode)
            } else if a.source == b.source {
                Compared::Same
            } else {
                Compared::NeedsContent
            }
        }
        _ => Compared::Differs(Difference::Kind),
    }
}

/// Merges the artifacts (already sorted by name) and applies the path filter.
pub(crate) fn build(artifacts: &[&Artifact], paths: &PathFilter) -> Result<Catalog> {
    let mut merged: BTreeMap<&str, Candidate> = BTreeMap::new();
    let mut warnings = Vec::new();
    let mut undecided: Vec<(Candidate, Candidate)> = Vec::new();
    for &artifact in artifacts {
        for member in &artifact.members {
            let candidate = Candidate { artifact, member };
            if let Some(earlier) = merged.insert(&member.relpath, candidate) {
                match compare(earlier.member, member) {
                    Compared::Same => {}
                    Compared::Differs(difference) => {
                        warnings.push(duplicate(&earlier, &candidate, difference));
                    }
                    Compared::NeedsContent => undecided.push((earlier, candidate)),
                }
            }
        }
    }
    compare_contents(&undecided, &mut warnings)?;

    // Drop whatever a later artifact put a non-directory above.
    let mut kept: Vec<(&str, Candidate)> = Vec::with_capacity(merged.len());
    let mut kinds: HashMap<&str, Node> = HashMap::with_capacity(merged.len() + 1);
    kinds.insert("", Node::Dir);
    for (relpath, c) in merged {
        let parent = relpath.rsplit_once('/').map_or("", |(p, _)| p);
        match kinds.get(parent) {
            Some(Node::Dir) => {}
            Some(_) => {
                warnings.push(CatalogWarning::Shadowed {
                    relpath: relpath.to_owned(),
                    artifact: c.artifact.name().clone(),
                });
                continue;
            }
            None => continue, // below something already dropped
        }
        kinds.insert(
            relpath,
            match &c.member.kind {
                MemberKind::File => Node::File,
                MemberKind::Dir => Node::Dir,
                MemberKind::Symlink(t) => Node::Symlink(t),
            },
        );
        kept.push((relpath, c));
    }

    let mut tree = Vec::with_capacity(kept.len());
    let mut selected = Vec::new();
    for (relpath, c) in kept {
        let kind = match &c.member.kind {
            MemberKind::File => EntryKind::File,
            MemberKind::Dir => EntryKind::Dir,
            MemberKind::Symlink(target) => {
                let resolution = resolve(&kinds, relpath, target);
                if let Resolution::Dangling(reason) = resolution {
                    log_dangling(relpath, c.artifact.name(), target, reason, &mut warnings);
                }
                EntryKind::Symlink {
                    target: target.clone(),
                    resolution,
                }
            }
        };
        if paths.matches(relpath) {
            selected.push(tree.len());
        }
        tree.push(Entry {
            relpath: relpath.to_owned(),
            kind,
            mode: c.member.mode,
            size: c.member.size,
            artifact: Arc::clone(&c.artifact.name),
            source: c.member.source.clone(),
        });
    }
    warnings.sort();
    // The caller reports the warnings (a build merges the same artifacts
    // into several catalogs and says each once).
    for w in &warnings {
        tracing::debug!("{w}");
    }
    Ok(Catalog {
        artifacts: artifacts.iter().map(|a| Arc::clone(&a.name)).collect(),
        tree,
        selected,
        warnings,
    })
}

fn duplicate(earlier: &Candidate, later: &Candidate, difference: Difference) -> CatalogWarning {
    CatalogWarning::DuplicateDiffers {
        relpath: later.member.relpath.clone(),
        dropped: earlier.origin(),
        kept: later.origin(),
        difference,
    }
}

/// Same-size file duplicates: compare digests, reading each archive once.
fn compare_contents(
    pairs: &[(Candidate, Candidate)],
    warnings: &mut Vec<CatalogWarning>,
) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    let mut sources: Vec<&EntrySource> = Vec::new();
    let mut positions: HashMap<*const EntrySource, usize> = HashMap::new();
    let mut indexed = Vec::with_capacity(pairs.len());
    for (a, b) in pairs {
        let (Some(sa), Some(sb)) = (&a.member.source, &b.member.source) else {
            continue;
        };
        let ia = intern(sa, &mut sources, &mut positions);
        let ib = intern(sb, &mut sources, &mut positions);
        indexed.push((ia, ib, a, b));
    }
    let digests = crate::content::digests(&sources)?;
    for (ia, ib, a, b) in indexed {
        if digests[ia] != digests[ib] {
            warnings.push(duplicate(a, b, Difference::Content));
        }
    }
    Ok(())
}

/// The index of `s` in `sources`, adding it on first sight.
fn intern<'a>(
    s: &'a EntrySource,
    sources: &mut Vec<&'a EntrySource>,
    positions: &mut HashMap<*const EntrySource, usize>,
) -> usize {
    *positions.entry(std::ptr::from_ref(s)).or_insert_with(|| {
        sources.push(s);
        sources.len() - 1
    })
}

fn log_dangling(
    relpath: &str,
    artifact: &ArtifactName,
    target: &str,
    reason: Dangling,
    warnings: &mut Vec<CatalogWarning>,
) {
    if reason.is_escape() || reason == Dangling::Loop {
        warnings.push(CatalogWarning::LinkNotFollowed {
            relpath: relpath.to_owned(),
            artifact: artifact.clone(),
            target: target.to_owned(),
            reason,
        });
    } else {
        // Debug, not info: every catalog of the build meets the link, and
        // the plan's `dropped:` line names it once at `-v`.
        tracing::debug!(%artifact, relpath, target, "dangling symlink ({reason})");
    }
}
