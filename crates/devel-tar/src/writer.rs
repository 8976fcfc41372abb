//! Build side: the devel tree streamed into a deterministic tar.

use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use dist_info::devel_links::devel_link_target;
use dist_info::devel_tree::check_link_text;
use dist_info::nonce::Nonce;
use fs_helpers::atomic_write::AtomicFile;
use pypa_formats::member::check_relpath;

use crate::compression::{Encoder, TarCodec};
use crate::counting::CountingReader;
use crate::error::Error;
use crate::tree_names::TreeNames;

/// Options of [`DevelTarWriter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TarOptions {
    /// Codec of the tar (and so its file name).
    pub compression: TarCodec,
    /// Modification time of every member, in seconds since the epoch (the
    /// caller passes `SOURCE_DATE_EPOCH` when set).
    pub mtime: u64,
    /// The tree's names; members start with its root (`_rocm_sdk_devel{N}`).
    pub names: TreeNames,
}

impl Default for TarOptions {
    /// Uncompressed, mtime 1980-01-01 (the earliest time a wheel's zip can
    /// hold, so tar and wheel agree), no nonce.
    fn default() -> Self {
        Self {
            compression: TarCodec::None,
            mtime: pypa_formats::epoch::ZIP_EPOCH,
            names: TreeNames::new(&Nonce::NONE),
        }
    }
}

/// Streams the devel tree into a tar: members `{root}/{relpath}`
/// (`_rocm_sdk_devel{N}/lib/...`),
/// added in sorted (byte-wise) relpath order, with fixed mtime, uid/gid 0,
/// empty owner names and normalised modes (0o755/0o644), so the same tree
/// gives the same bytes on every run. Memory use does not depend on the size
/// of the tree: file contents are copied straight from their readers.
///
/// ```
/// use devel_tar::{DevelTarWriter, TarOptions};
/// let mut w = DevelTarWriter::new(Vec::new(), &TarOptions::default())?;
/// w.add_directory("lib")?;
/// w.add_file("lib/libfoo.a", 0o644, 3, &mut &b"abc"[..])?;
/// w.add_symlink("lib/libfoo.so", "libfoo.so.1")?;
/// w.add_runtime_link("lib/libfoo.so.1", "_rocm_sdk_core")?;
/// let tar_bytes: Vec<u8> = w.finish()?;
/// # assert!(!tar_bytes.is_empty());
/// # Ok::<(), devel_tar::Error>(())
/// ```
pub struct DevelTarWriter<W: Write> {
    builder: tar::Builder<Encoder<W>>,
    mtime: u64,
    root: String,
    previous: Option<String>,
    /// Set when a failed append left the stream unusable.
    poisoned: bool,
}

impl<W: Write> std::fmt::Debug for DevelTarWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevelTarWriter")
            .field("mtime", &self.mtime)
            .field("previous", &self.previous)
            .finish_non_exhaustive()
    }
}

impl DevelTarWriter<PendingFile> {
    /// Writes to `path` atomically: the tar goes to a temporary file in the
    /// same directory, which [`PendingFile::persist`] renames into place
    /// (dropping it instead removes the temporary file).
    pub fn create(path: &Path, options: &TarOptions) -> Result<Self, Error> {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new("."));
        let temp = AtomicFile::create(path)
            .map_err(|e| Error::io("create a temporary file in", dir, e))?;
        // The tar is an intermediate file that only its owner reads.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            temp.file()
                .set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| Error::io("create a temporary file in", dir, e))?;
        }
        let pending = PendingFile {
            out: BufWriter::with_capacity(1 << 20, temp),
            dest: path.to_path_buf(),
        };
        Self::new(pending, options)
    }
}

impl<W: Write> DevelTarWriter<W> {
    /// Starts a tar written to `out`.
    pub fn new(out: W, options: &TarOptions) -> Result<Self, Error> {
        let encoder = options
            .compression
            .encoder(out)
            .map_err(|e| Error::io("start the encoder for", "<devel tar>", e))?;
        Ok(Self {
            builder: tar::Builder::new(encoder),
            mtime: options.mtime,
            root: options.names.root().to_owned(),
            previous: None,
            poisoned: false,
        })
    }

    /// Adds a directory `{root}/{relpath}` (mode 0o755).
    pub fn add_directory(&mut self, relpath: &str) -> Result<(), Error> {
        let name = self.next_name(relpath)?;
        let mut header = self.header(tar::EntryType::Directory, 0o755);
        self.append(&mut header, &name, io::empty())
    }

    /// Adds a regular file of `size` bytes read from `source`. `mode` is
    /// normalised: 0o755 when any execute bit is set, else 0o644.
    pub fn add_file(
        &mut self,
        relpath: &str,
        mode: u32,
        size: u64,
        source: &mut dyn Read,
    ) -> Result<(), Error> {
        let name = self.next_name(relpath)?;
        let mode = if mode & 0o111 == 0 { 0o644 } else { 0o755 };
        let mut header = self.header(tar::EntryType::Regular, mode);
        header.set_size(size);
        let mut counted = CountingReader::new(source.take(size));
        self.append(&mut header, &name, &mut counted)?;
        if counted.count() != size {
            self.poisoned = true;
            return Err(Error::SizeMismatch {
                path: relpath.to_owned(),
                expected: size,
                actual: counted.count(),
            });
        }
        Ok(())
    }

    /// Adds a symlink whose text is `target`, verbatim (a soname alias or a
    /// symlink of the source tree). The text must pass
    /// `dist_info::devel_tree::check_link_text`; where the link leads is the
    /// caller's plan to check (`resolve_link`), since it needs the whole tree.
    pub fn add_symlink(&mut self, relpath: &str, target: &str) -> Result<(), Error> {
        check_link_text(target).map_err(|problem| Error::InvalidRelpath {
            path: format!("{relpath} -> {target}"),
            reason: problem.to_string(),
        })?;
        let name = self.next_name(relpath)?;
        let mut header = self.header(tar::EntryType::Symlink, 0o777);
        if self.poisoned {
            return Err(poisoned());
        }
        let result = self.builder.append_link(&mut header, &name, target);
        self.check(result, &name)
    }

    /// Adds the link for a file that the runtime package `owner_platform_pkg`
    /// (e.g. `_rocm_sdk_core`) already ships: a symlink to
    /// [`devel_link_target`]`(relpath, owner_platform_pkg)`.
    pub fn add_runtime_link(
        &mut self,
        relpath: &str,
        owner_platform_pkg: &str,
    ) -> Result<(), Error> {
        check_relpath(owner_platform_pkg).map_err(|problem| Error::InvalidRelpath {
            path: owner_platform_pkg.to_owned(),
            reason: problem.to_string(),
        })?;
        self.add_symlink(relpath, &devel_link_target(relpath, owner_platform_pkg))
    }

    /// Writes the end-of-archive blocks and the codec trailer and returns the
    /// output.
    pub fn finish(self) -> Result<W, Error> {
        if self.poisoned {
            return Err(poisoned());
        }
        let encoder = self
            .builder
            .into_inner()
            .map_err(|e| Error::io("finish", "<devel tar>", e))?;
        encoder
            .finish()
            .map_err(|e| Error::io("finish", "<devel tar>", e))
    }

    /// Validates ordering and returns the member name.
    fn next_name(&mut self, relpath: &str) -> Result<String, Error> {
        check_relpath(relpath).map_err(|problem| Error::InvalidRelpath {
            path: relpath.to_owned(),
            reason: problem.to_string(),
        })?;
        if let Some(previous) = self.previous.as_deref()
            && previous >= relpath
        {
            return Err(Error::Unsorted {
                path: relpath.to_owned(),
                previous: previous.to_owned(),
            });
        }
        self.previous = Some(relpath.to_owned());
        Ok(format!("{}/{relpath}", self.root))
    }

    fn header(&self, kind: tar::EntryType, mode: u32) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(self.mtime);
        header.set_size(0);
        header
    }

    fn append(
        &mut self,
        header: &mut tar::Header,
        name: &str,
        data: impl Read,
    ) -> Result<(), Error> {
        if self.poisoned {
            return Err(poisoned());
        }
        let result = self.builder.append_data(header, name, data);
        self.check(result, name)
    }

    fn check(&mut self, result: io::Result<()>, name: &str) -> Result<(), Error> {
        result.map_err(|e| {
            self.poisoned = true;
            Error::io("write devel member", name, e)
        })
    }
}

fn poisoned() -> Error {
    Error::io(
        "continue writing",
        "<devel tar>",
        io::Error::other("an earlier member failed; the tar is unusable"),
    )
}

/// A tar being written under a temporary name next to its destination.
#[derive(Debug)]
pub struct PendingFile {
    out: BufWriter<AtomicFile>,
    dest: PathBuf,
}

impl PendingFile {
    /// Flushes, syncs and renames the file to its destination; returns that
    /// path.
    pub fn persist(self) -> Result<PathBuf, Error> {
        let dest = self.dest;
        let temp = self
            .out
            .into_inner()
            .map_err(|e| Error::io("write", &dest, e.into_error()))?;
        temp.commit()
            .map_err(|e| Error::io("sync and rename the finished tar to", &dest, e))
    }
}

impl Write for PendingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
