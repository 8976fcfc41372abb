//! Creating the devel tree through the tree's confined handle
//! (docs/devel-tar.md#confinement).
//!
//! Every directory, file and link is made relative to an open directory of
//! the tree (`fs_helpers::confined`: no link followed, no `..`), through a
//! cursor that keeps the directories of the last path used open: members
//! arrive in path order, so each directory is opened once per thread. A
//! hard link's file is reached the same way, inside the tree or inside a
//! runtime package opened from site-packages before anything was written
//! ([`Sources`]), and must be a regular file there.
//!
//! File data from an uncompressed tar is copied with `copy_file_range` on
//! Linux (within the kernel, or shared extents where the file system can),
//! with positioned reads elsewhere.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use fs_helpers::confined::{Cursor, Dir, Refusal, Refused};
use fs_helpers::positioned::read_exact_at;

/// The runtime packages hard links of the tree may come from, opened from
/// site-packages (never through a link) before the tree is written.
#[derive(Debug, Default)]
pub(crate) struct Sources {
    roots: HashMap<String, Dir>,
}

impl Sources {
    /// Adds the package directory `name` of site-packages `sp`.
    pub(crate) fn open(&mut self, sp: &Dir, name: &str) -> io::Result<()> {
        if !self.roots.contains_key(name) {
            self.roots.insert(name.to_owned(), sp.open_dir(name)?);
        }
        Ok(())
    }
}

/// One thread's handle on the tree for writing it. Paths are
/// site-packages-relative (`_rocm_sdk_devel{N}/...`), as the model has them.
#[derive(Debug)]
pub(crate) struct TreeWriter<'d> {
    site_root: &'d Path,
    /// The tree's directory name in site-packages.
    root: &'d str,
    tree: &'d Dir,
    sources: &'d Sources,
    dest: Cursor<'d>,
    in_tree: Cursor<'d>,
    runtime: HashMap<String, Cursor<'d>>,
    /// The process's umask when the tree was opened; all bits when unknown.
    #[cfg(unix)]
    umask: u32,
}

impl<'d> TreeWriter<'d> {
    /// A writer into `tree`, the directory `root` of site-packages
    /// `site_root`, taking hard links' files from `sources`.
    pub(crate) fn new(
        site_root: &'d Path,
        root: &'d str,
        tree: &'d Dir,
        sources: &'d Sources,
    ) -> Self {
        Self {
            site_root,
            root,
            tree,
            sources,
            dest: tree.cursor(),
            in_tree: tree.cursor(),
            runtime: HashMap::new(),
            #[cfg(unix)]
            umask: unix::umask().unwrap_or(0o7777),
        }
    }

    /// Another writer on the same tree, for another thread (each keeps
    /// its own open directories).
    pub(crate) fn for_thread(&self) -> Self {
        Self {
            site_root: self.site_root,
            root: self.root,
            tree: self.tree,
            sources: self.sources,
            dest: self.tree.cursor(),
            in_tree: self.tree.cursor(),
            runtime: HashMap::new(),
            #[cfg(unix)]
            umask: self.umask,
        }
    }

    /// Whether a file made by [`create_file`](Self::create_file) with
    /// `mode` already has exactly those bits: the umask takes none of
    /// them, and there are no set-id or sticky bits (writing clears those,
    /// so they are set after the data). Saves a `fchmod` per file.
    pub(crate) fn creates_exact_mode(&self, mode: u32) -> bool {
        #[cfg(unix)]
        {
            mode & !0o777 == 0 && mode & self.umask == 0
        }
        #[cfg(not(unix))]
        {
            let _ = mode;
            false
        }
    }

    /// The full path of `rel` (site-packages-relative), for messages.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.site_root.join(rel)
    }

    /// `rel` relative to the tree; refused when it is not below it.
    fn in_tree<'r>(&self, rel: &'r str) -> io::Result<&'r str> {
        rel.strip_prefix(self.root)
            .and_then(|rest| rest.strip_prefix('/'))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    Refused {
                        path: rel.to_owned(),
                        reason: Refusal::NotClean,
                    },
                )
            })
    }

    /// Creates the directory `rel` with `mode` (less the umask).
    pub(crate) fn create_dir(&mut self, rel: &str, mode: u32) -> io::Result<()> {
        let rel = self.in_tree(rel)?;
        self.dest.create_dir(rel, mode)
    }

    /// Creates the new file `rel` for writing; nothing may be there.
    pub(crate) fn create_file(&mut self, rel: &str, mode: u32) -> io::Result<File> {
        let rel = self.in_tree(rel)?;
        self.dest.create_new(rel, mode)
    }

    /// The cursor that reaches `source` (site-packages-relative), and
    /// `source` relative to its directory.
    fn source<'r>(
        in_tree: &'r mut Cursor<'d>,
        runtime: &'r mut HashMap<String, Cursor<'d>>,
        sources: &'d Sources,
        root: &str,
        source: &'r str,
    ) -> io::Result<(&'r mut Cursor<'d>, &'r str)> {
        if let Some(rest) = source.strip_prefix(root).and_then(|r| r.strip_prefix('/')) {
            return Ok((in_tree, rest));
        }
        let (package, rest) = source.split_once('/').unwrap_or((source, ""));
        let Some(dir) = sources.roots.get(package) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                Refused {
                    path: source.to_owned(),
                    reason: Refusal::NotClean,
                },
            ));
        };
        let cursor = runtime
            .entry(package.to_owned())
            .or_insert_with(|| dir.cursor());
        Ok((cursor, rest))
    }

    /// Makes `link` a hard link to the existing regular file `source`
    /// (both site-packages-relative; `source` in the tree or in one of the
    /// [`Sources`]).
    pub(crate) fn hard_link(&mut self, source: &str, link: &str) -> io::Result<()> {
        let link = self.in_tree(link)?;
        let (from, source) = Self::source(
            &mut self.in_tree,
            &mut self.runtime,
            self.sources,
            self.root,
            source,
        )?;
        self.dest.hard_link_from(from, source, link)
    }

    /// Makes `link` a copy of the regular file `source` (where a hard link
    /// cannot be made), with its permissions.
    pub(crate) fn copy(&mut self, source: &str, link: &str) -> io::Result<()> {
        let link = self.in_tree(link)?;
        let (from, source) = Self::source(
            &mut self.in_tree,
            &mut self.runtime,
            self.sources,
            self.root,
            source,
        )?;
        copy_between(from, source, &mut self.dest, link)
    }

    /// Makes `link` a symbolic link whose text is `text`.
    #[cfg(unix)]
    pub(crate) fn symlink(&mut self, text: &str, link: &str) -> io::Result<()> {
        let link = self.in_tree(link)?;
        self.dest.symlink(text, link)
    }

    /// Whether `source` (site-packages-relative) is a directory, and the
    /// names in it when it is.
    #[cfg(windows)]
    pub(crate) fn list_source(&mut self, source: &str) -> io::Result<Option<Vec<String>>> {
        let (from, rel) = Self::source(
            &mut self.in_tree,
            &mut self.runtime,
            self.sources,
            self.root,
            source,
        )?;
        match from.entry(rel)? {
            Some(entry) if entry.kind == fs_helpers::confined::EntryKind::Dir => Ok(Some(
                from.list(rel)?
                    .into_iter()
                    .filter_map(|n| n.into_string().ok())
                    .collect(),
            )),
            _ => Ok(None),
        }
    }
}

/// Copies the regular file `source` below `from` to the new file `dest`
/// below `to`, with the source's permissions (as `std::fs::copy`).
pub(crate) fn copy_between(
    from: &mut Cursor<'_>,
    source: &str,
    to: &mut Cursor<'_>,
    dest: &str,
) -> io::Result<()> {
    let mut input = from.open_file(source)?;
    let mut output = to.create_new(dest, 0o600)?;
    io::copy(&mut input, &mut output)?;
    output.set_permissions(input.metadata()?.permissions())
}

/// Copies `len` bytes of `from` at `offset` to the end of `to` (a new file,
/// written from its start).
pub(crate) fn copy_range(from: &File, offset: u64, len: u64, to: &File) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let mut at = offset;
        let mut left = len;
        while left > 0 {
            let chunk = usize::try_from(left.min(1 << 30)).unwrap_or(1 << 30);
            match rustix::fs::copy_file_range(from, Some(&mut at), to, None, chunk) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => left -= n as u64,
                Err(rustix::io::Errno::INTR) => {}
                // Kernels or file systems without it: copy in user space
                // from where it stopped.
                Err(
                    rustix::io::Errno::NOSYS
                    | rustix::io::Errno::XDEV
                    | rustix::io::Errno::OPNOTSUPP
                    | rustix::io::Errno::INVAL,
                ) if left == len => return copy_by_reads(from, at, left, to),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        copy_by_reads(from, offset, len, to)
    }
}

/// [`copy_range`] through a buffer, with positioned reads.
fn copy_by_reads(from: &File, offset: u64, len: u64, mut to: &File) -> io::Result<()> {
    use std::io::Write as _;
    let mut buffer = vec![0u8; usize::try_from(len.min(1 << 20)).unwrap_or(1 << 20)];
    let mut done = 0;
    while done < len {
        let want = buffer
            .len()
            .min(usize::try_from(len - done).unwrap_or(usize::MAX));
        read_exact_at(from, &mut buffer[..want], offset + done)?;
        to.write_all(&buffer[..want])?;
        done += want as u64;
    }
    Ok(())
}

#[cfg(unix)]
mod unix {
    /// The umask, read from `/proc/self/status` (Linux 4.7 and later):
    /// `umask(2)` can only read it by changing it, which would race with
    /// other threads of the process creating files.
    pub(super) fn umask() -> Option<u32> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let value = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
        u32::from_str_radix(value.trim(), 8).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A site-packages with the tree `t/` and the runtime package `_p/`
    /// holding `lib/x`.
    fn site() -> (tempfile::TempDir, Dir, Dir, Sources) {
        let site = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(site.path().join("t")).unwrap();
        std::fs::create_dir_all(site.path().join("_p/lib")).unwrap();
        std::fs::write(site.path().join("_p/lib/x"), "x").unwrap();
        let sp = Dir::open(site.path()).unwrap();
        let tree = sp.open_dir("t").unwrap();
        let mut sources = Sources::default();
        sources.open(&sp, "_p").unwrap();
        (site, sp, tree, sources)
    }

    #[test]
    fn creates_files_and_directories_in_any_order() {
        let (site, _sp, dir, sources) = site();
        let mut tree = TreeWriter::new(site.path(), "t", &dir, &sources);
        for dir in ["t/a", "t/a-b", "t/a/b", "t/a/b/c", "t/z"] {
            tree.create_dir(dir, 0o755).unwrap();
        }
        for (file, text) in [
            ("t/a/b/c/one", "1"),
            ("t/a/x", "2"),
            ("t/a-b/y", "3"),
            ("t/a/b/z", "4"),
            ("t/top", "5"),
            ("t/z/last", "6"),
        ] {
            let mut f = tree.create_file(file, 0o644).unwrap();
            std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(site.path().join("t/a/b/c/one")).unwrap(),
            "1"
        );
        assert_eq!(
            std::fs::read_to_string(site.path().join("t/a-b/y")).unwrap(),
            "3"
        );
        assert_eq!(
            std::fs::read_to_string(site.path().join("t/z/last")).unwrap(),
            "6"
        );
        // A file that exists is never replaced, and nothing is written
        // outside the tree.
        assert_eq!(
            tree.create_file("t/a/x", 0o644).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert!(tree.create_file("_p/lib/y", 0o644).is_err());
        assert!(tree.create_file("t/../_p/y", 0o644).is_err());
    }

    #[test]
    #[cfg(unix)]
    fn links_come_from_the_tree_or_a_source_package_only() {
        let (site, _sp, dir, sources) = site();
        let mut tree = TreeWriter::new(site.path(), "t", &dir, &sources);
        tree.create_dir("t/lib", 0o755).unwrap();
        tree.create_dir("t/bin", 0o755).unwrap();
        drop(tree.create_file("t/lib/f", 0o644).unwrap());
        tree.hard_link("t/lib/f", "t/bin/g").unwrap();
        tree.hard_link("_p/lib/x", "t/lib/x").unwrap();
        tree.symlink("../lib/f", "t/bin/h").unwrap();
        let meta = std::fs::metadata(site.path().join("t/lib/f")).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&meta), 2);
        let meta = std::fs::metadata(site.path().join("_p/lib/x")).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&meta), 2);
        assert_eq!(
            std::fs::read_link(site.path().join("t/bin/h")).unwrap(),
            Path::new("../lib/f")
        );
        // A package not opened as a source, and a link as a source.
        std::fs::create_dir(site.path().join("other")).unwrap();
        std::fs::write(site.path().join("other/secret"), "s").unwrap();
        assert!(tree.hard_link("other/secret", "t/lib/s").is_err());
        assert!(tree.hard_link("t/bin/h", "t/lib/h").is_err());
        tree.copy("_p/lib/x", "t/lib/copy").unwrap();
        assert_eq!(std::fs::read(site.path().join("t/lib/copy")).unwrap(), b"x");
    }

    #[test]
    fn copies_a_range_of_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("source");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&source, &data).unwrap();
        let from = File::open(&source).unwrap();
        for (offset, len) in [(0, 0), (1, 10), (512, 2_000_000), (0, 3_000_000)] {
            let out = dir.path().join(format!("out-{offset}-{len}"));
            copy_range(&from, offset, len, &File::create_new(&out).unwrap()).unwrap();
            let start = usize::try_from(offset).unwrap();
            let end = start + usize::try_from(len).unwrap();
            assert_eq!(std::fs::read(&out).unwrap(), &data[start..end]);
        }
        let out = File::create_new(dir.path().join("short")).unwrap();
        assert_eq!(
            copy_range(&from, 2_999_000, 2_000, &out)
                .unwrap_err()
                .kind(),
            io::ErrorKind::UnexpectedEof
        );
    }
}
