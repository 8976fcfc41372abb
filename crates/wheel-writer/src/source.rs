//! Sources: where a member's bytes come from.
//!
//! The seam between producers (plain files, ELF edits streamed as patches,
//! launchers built in memory) and the writer is plain [`std::io::Read`] plus
//! a declared size and an executable bit, so no producer type is needed here.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bytes of one member, readable any number of times.
///
/// `open` may be called more than once (for example once to hash, once to
/// compress) and must yield the same bytes each time; the writer checks both
/// the size and, where it reads twice, the content.
pub trait MemberSource: Send + Sync + fmt::Debug {
    /// The exact number of bytes `open` yields.
    fn size(&self) -> u64;
    /// Whether the member is stored as executable (0o755) rather than 0o644.
    fn executable(&self) -> bool;
    /// A fresh reader positioned at the first byte.
    fn open(&self) -> io::Result<Box<dyn Read + Send + '_>>;
    /// Where the bytes come from, for error messages (usually a path).
    fn origin(&self) -> String;
}

/// A regular file on disk, read as it is.
///
/// Size and executable bit are taken when the source is created; only the
/// executable bits of the mode matter (any `x` bit gives 0o755), so umask
/// and ownership never reach the package.
#[derive(Debug, Clone)]
pub struct FileSource {
    path: PathBuf,
    size: u64,
    executable: bool,
}

impl FileSource {
    /// Stats `path` (following symlinks) and remembers its size and mode.
    pub fn new(path: impl Into<PathBuf>) -> io::Result<Self> {
        let path = path.into();
        let meta = std::fs::metadata(&path)?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", path.display()),
            ));
        }
        Ok(Self {
            size: meta.len(),
            executable: is_executable(&meta),
            path,
        })
    }

    /// A file whose size and mode the caller already knows (no `stat`).
    pub fn with_metadata(path: impl Into<PathBuf>, size: u64, executable: bool) -> Self {
        Self {
            path: path.into(),
            size,
            executable,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}

impl MemberSource for FileSource {
    fn size(&self) -> u64 {
        self.size
    }
    fn executable(&self) -> bool {
        self.executable
    }
    fn open(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        Ok(Box::new(File::open(&self.path)?))
    }
    fn origin(&self) -> String {
        self.path.display().to_string()
    }
}

/// Bytes held in memory (generated text, a launcher image).
#[derive(Clone)]
pub struct BytesSource {
    bytes: Arc<[u8]>,
    executable: bool,
    origin: String,
}

impl BytesSource {
    /// Wraps `bytes`; `origin` names them in error messages.
    pub fn new(bytes: impl Into<Arc<[u8]>>, executable: bool, origin: impl Into<String>) -> Self {
        Self {
            bytes: bytes.into(),
            executable,
            origin: origin.into(),
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for BytesSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BytesSource")
            .field("len", &self.bytes.len())
            .field("executable", &self.executable)
            .field("origin", &self.origin)
            .finish()
    }
}

impl MemberSource for BytesSource {
    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn executable(&self) -> bool {
        self.executable
    }
    fn open(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        Ok(Box::new(&self.bytes[..]))
    }
    fn origin(&self) -> String {
        self.origin.clone()
    }
}

/// Any reader the caller can open repeatedly, such as a file with ELF
/// patches applied while streaming.
pub struct ReaderSource<F> {
    open: F,
    size: u64,
    executable: bool,
    origin: String,
}

impl<F, R> ReaderSource<F>
where
    F: Fn() -> io::Result<R> + Send + Sync,
    R: Read + Send,
{
    /// `open` must yield exactly `size` bytes, the same ones on every call.
    pub fn new(open: F, size: u64, executable: bool, origin: impl Into<String>) -> Self {
        Self {
            open,
            size,
            executable,
            origin: origin.into(),
        }
    }
}

impl<F> fmt::Debug for ReaderSource<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReaderSource")
            .field("size", &self.size)
            .field("executable", &self.executable)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl<F, R> MemberSource for ReaderSource<F>
where
    F: Fn() -> io::Result<R> + Send + Sync,
    R: Read + Send + 'static,
{
    fn size(&self) -> u64 {
        self.size
    }
    fn executable(&self) -> bool {
        self.executable
    }
    fn open(&self) -> io::Result<Box<dyn Read + Send + '_>> {
        Ok(Box::new((self.open)()?))
    }
    fn origin(&self) -> String {
        self.origin.clone()
    }
}

/// One archive member: its path inside the package and its bytes.
#[derive(Debug, Clone)]
pub struct Member {
    path: String,
    source: Arc<dyn MemberSource>,
}

impl Member {
    /// A member at `path` (already validated by the caller of a sink).
    pub fn new(path: impl Into<String>, source: Arc<dyn MemberSource>) -> Self {
        Self {
            path: path.into(),
            source,
        }
    }
    /// The member's path inside the archive (`/`-separated).
    pub fn path(&self) -> &str {
        &self.path
    }
    /// The member's bytes.
    pub fn source(&self) -> &dyn MemberSource {
        &*self.source
    }
    /// Unix permission bits stored for the member.
    pub fn mode(&self) -> u32 {
        if self.source.executable() {
            0o755
        } else {
            0o644
        }
    }
}
