//! Creating the devel tree relative to open directories.
//!
//! On Unix every directory, file and link is made with `mkdirat`, `openat`,
//! `linkat` or `symlinkat` against the descriptor of its parent, taken from
//! a stack of open directories along the last path used: members arrive in
//! path order, so each directory is opened once per thread rather than its
//! whole path walked again for every file in it. Elsewhere the same calls
//! take paths joined to the site-packages root.
//!
//! File data from an uncompressed tar is copied with `copy_file_range` on
//! Linux (within the kernel, or shared extents where the file system can),
//! with positioned reads elsewhere.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use fs_helpers::positioned::read_exact_at;

/// One thread's handle on site-packages for writing the tree.
#[derive(Debug)]
pub(crate) struct TreeWriter {
    root: PathBuf,
    #[cfg(unix)]
    dirs: unix::DirStack,
    /// The process's umask when the tree was opened; all bits when unknown.
    #[cfg(unix)]
    umask: u32,
}

impl TreeWriter {
    /// Opens site-packages `root`.
    pub(crate) fn open(root: &Path) -> io::Result<Self> {
        Ok(Self {
            root: root.to_owned(),
            #[cfg(unix)]
            dirs: unix::DirStack::open(root)?,
            #[cfg(unix)]
            umask: unix::umask().unwrap_or(0o7777),
        })
    }

    /// Another handle on the same root, for another thread.
    pub(crate) fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            root: self.root.clone(),
            #[cfg(unix)]
            dirs: self.dirs.try_clone()?,
            #[cfg(unix)]
            umask: self.umask,
        })
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
        self.root.join(rel)
    }

    /// Creates the directory `rel` with `mode` (less the umask).
    pub(crate) fn create_dir(&mut self, rel: &str, mode: u32) -> io::Result<()> {
        #[cfg(unix)]
        {
            self.dirs.create_dir(rel, mode)
        }
        #[cfg(not(unix))]
        {
            let _ = mode;
            std::fs::create_dir(self.path(rel))
        }
    }

    /// Creates the new file `rel` for writing; it must not exist.
    pub(crate) fn create_file(&mut self, rel: &str, mode: u32) -> io::Result<File> {
        #[cfg(unix)]
        {
            self.dirs.create_file(rel, mode)
        }
        #[cfg(not(unix))]
        {
            let _ = mode;
            File::create_new(self.path(rel))
        }
    }

    /// Makes `link` a hard link to the existing file `source` (both
    /// site-packages-relative).
    #[cfg(unix)]
    pub(crate) fn hard_link(&mut self, source: &str, link: &str) -> io::Result<()> {
        self.dirs.hard_link(source, link)
    }

    /// Makes `link` a symbolic link whose text is `text`.
    #[cfg(unix)]
    pub(crate) fn symlink(&mut self, text: &str, link: &str) -> io::Result<()> {
        self.dirs.symlink(text, link)
    }
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
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::path::Path;

    use rustix::fs::{AtFlags, Mode, OFlags};

    const DIR_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    /// The umask, read from `/proc/self/status` (Linux 4.7 and later):
    /// `umask(2)` can only read it by changing it, which would race with
    /// other threads of the process creating files.
    pub(super) fn umask() -> Option<u32> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let value = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
        u32::from_str_radix(value.trim(), 8).ok()
    }

    /// The root and the open directories along the last path used.
    #[derive(Debug)]
    pub(super) struct DirStack {
        root: OwnedFd,
        /// (site-packages-relative path, descriptor), each the parent of
        /// the next.
        open: Vec<(String, OwnedFd)>,
    }

    impl DirStack {
        pub(super) fn open(root: &Path) -> io::Result<Self> {
            Ok(Self {
                root: rustix::fs::open(root, DIR_FLAGS, Mode::empty())?,
                open: Vec::new(),
            })
        }

        pub(super) fn try_clone(&self) -> io::Result<Self> {
            Ok(Self {
                root: self.root.try_clone()?,
                open: Vec::new(),
            })
        }

        /// The directory holding `rel` and `rel`'s last component.
        fn parent<'p>(&mut self, rel: &'p str) -> io::Result<(BorrowedFd<'_>, &'p str)> {
            let dir = descend(&self.root, &mut self.open, rel)?;
            Ok((dir, rel.rsplit_once('/').map_or(rel, |(_, name)| name)))
        }

        pub(super) fn create_dir(&mut self, rel: &str, mode: u32) -> io::Result<()> {
            let (dir, name) = self.parent(rel)?;
            rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(mode))?;
            Ok(())
        }

        pub(super) fn create_file(&mut self, rel: &str, mode: u32) -> io::Result<File> {
            let (dir, name) = self.parent(rel)?;
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(mode))?;
            Ok(File::from(fd))
        }

        pub(super) fn hard_link(&mut self, source: &str, link: &str) -> io::Result<()> {
            let dir = descend(&self.root, &mut self.open, link)?;
            let name = link.rsplit_once('/').map_or(link, |(_, name)| name);
            rustix::fs::linkat(&self.root, source, dir, name, AtFlags::empty())?;
            Ok(())
        }

        pub(super) fn symlink(&mut self, text: &str, link: &str) -> io::Result<()> {
            let (dir, name) = self.parent(link)?;
            rustix::fs::symlinkat(text, dir, name)?;
            Ok(())
        }
    }

    /// Makes `open` the directories from `root` down to the parent of
    /// `rel`, keeping those it already holds, and returns that parent.
    fn descend<'s>(
        root: &'s OwnedFd,
        open: &'s mut Vec<(String, OwnedFd)>,
        rel: &str,
    ) -> io::Result<BorrowedFd<'s>> {
        let parent = rel.rsplit_once('/').map_or("", |(parent, _)| parent);
        // Keep the open directories that are `parent` or above it.
        while let Some((top, _)) = open.last() {
            let above = parent
                .strip_prefix(top.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
            if above {
                break;
            }
            open.pop();
        }
        let mut start = open.last().map_or(0, |(top, _)| top.len() + 1);
        while start < parent.len() {
            let end = parent[start..]
                .find('/')
                .map_or(parent.len(), |i| start + i);
            let fd = {
                let dir = open.last().map_or(root.as_fd(), |(_, fd)| fd.as_fd());
                rustix::fs::openat(dir, &parent[start..end], DIR_FLAGS, Mode::empty())?
            };
            open.push((parent[..end].to_owned(), fd));
            start = end + 1;
        }
        Ok(open.last().map_or(root.as_fd(), |(_, fd)| fd.as_fd()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_files_and_directories_in_any_order() {
        let site = tempfile::tempdir().unwrap();
        let mut tree = TreeWriter::open(site.path()).unwrap();
        for dir in ["t", "t/a", "t/a-b", "t/a/b", "t/a/b/c", "t/z"] {
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
        // A file that exists is never replaced.
        assert_eq!(
            tree.create_file("t/a/x", 0o644).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
    }

    #[test]
    #[cfg(unix)]
    fn links_are_made_relative_to_the_root() {
        let site = tempfile::tempdir().unwrap();
        let mut tree = TreeWriter::open(site.path()).unwrap();
        tree.create_dir("t", 0o755).unwrap();
        tree.create_dir("t/lib", 0o755).unwrap();
        tree.create_dir("t/bin", 0o755).unwrap();
        drop(tree.create_file("t/lib/f", 0o644).unwrap());
        tree.hard_link("t/lib/f", "t/bin/g").unwrap();
        tree.symlink("../lib/f", "t/bin/h").unwrap();
        let meta = std::fs::metadata(site.path().join("t/lib/f")).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&meta), 2);
        assert_eq!(
            std::fs::read_link(site.path().join("t/bin/h")).unwrap(),
            Path::new("../lib/f")
        );
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
