//! Indexing `.tar.zst` / `.tar.xz` artifacts in place, without extracting them.
//!
//! One sequential pass decompresses the archive and records, for every
//! member, its kind, mode, size and the offset of its data in the
//! decompressed stream. The pass reads the compressed stream to its end, so
//! the codec verifies its checksums and trailer, and requires the tar's
//! end-of-archive marker: an archive that is corrupt, cut short or cut at a
//! member boundary is refused before anything of it is packaged. Readers
//! later decompress again and skip to a member's offset
//! ([`crate::EntrySource::open`]), or stream every wanted member of an archive
//! in one pass ([`crate::read_sources`]); each reopening checks that the
//! file is still the one indexed (device, inode, size, mtime, ctime:
//! [`crate::FileIdentity`]), so the bytes read are the bytes verified.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::artifact::{ArchiveRef, Artifact, ArtifactLocation, EntrySource, Member, MemberKind};
use crate::extract::ExtractRoot;
use crate::identity::{FileIdentity, open_checked, open_regular};
use crate::manifest::{MANIFEST_FILE, parse_manifest};
use crate::{ArchiveFormat, ArtifactName, Error, Result};

/// The largest zstd window accepted: archives made with `zstd --long=31`
/// need it; memory is only used when an archive asks for it.
const ZSTD_WINDOW_LOG_MAX: u32 = 31;

/// The most memory an xz stream may ask for (its dictionary, declared in
/// its header): `xz -9` needs 65 MiB; a few bytes of header must not make
/// the reader allocate gigabytes.
pub(crate) const XZ_MEMORY_LIMIT: u64 = 512 << 20;

/// A tar block; the end-of-archive marker is (at least) one of zeros.
const BLOCK: u64 = 512;

/// A decompressing reader over the whole tar stream of an archive indexed
/// earlier; refuses a file that is no longer the one indexed.
pub(crate) fn decoder(archive: &ArchiveRef) -> Result<Box<dyn Read + Send>> {
    let file = open_checked(&archive.path, &archive.identity, true)?;
    decompress(file, archive)
}

fn decompress(file: File, archive: &ArchiveRef) -> Result<Box<dyn Read + Send>> {
    let file = FileReads(file);
    let inner: Box<dyn Read + Send> = match archive.format {
        ArchiveFormat::TarZst => {
            let mut d =
                zstd::stream::read::Decoder::new(file).map_err(|e| Error::io(&archive.path, e))?;
            d.window_log_max(ZSTD_WINDOW_LOG_MAX)
                .map_err(|e| Error::io(&archive.path, e))?;
            Box::new(d)
        }
        ArchiveFormat::TarXz => Box::new(
            XzStreams::new(BufReader::with_capacity(1 << 16, file))
                .map_err(|e| Error::io(&archive.path, e))?,
        ),
    };
    Ok(Box::new(Decompressed {
        inner,
        codec: codec(archive.format),
    }))
}

/// Memory above which liblzma's multithreaded decoder uses fewer threads
/// (each thread holds a block; `xz -T0 -6` blocks are 24 MiB).
const XZ_THREADING_MEMORY: u64 = 64 << 20;

/// The `.xz` format only (not the legacy `.lzma` one, whose header can ask
/// for a 4 GiB dictionary), every concatenated stream, within
/// [`XZ_MEMORY_LIMIT`], decoded by liblzma's multithreaded decoder: the
/// blocks of a stream whose block headers record their sizes (`xz -T`
/// writes them so) decode on all cores; other streams decode on one.
///
/// That decoder takes no flags, so it stops at the end of one stream;
/// this reader starts a new one for each stream that follows, after the
/// stream padding (null bytes, a multiple of four) the format allows.
struct XzStreams<R: BufRead> {
    current: Option<liblzma::bufread::XzDecoder<R>>,
}

impl<R: BufRead> XzStreams<R> {
    fn new(input: R) -> io::Result<Self> {
        Ok(Self {
            current: Some(liblzma::bufread::XzDecoder::new_stream(
                input,
                xz_decoder()?,
            )),
        })
    }
}

/// The decoder uses as many threads as the rayon pool the caller runs in
/// (a build's `--jobs`), not every core.
fn xz_decoder() -> io::Result<liblzma::stream::Stream> {
    let threads = rayon::current_num_threads();
    Ok(liblzma::stream::MtStreamBuilder::new()
        .threads(u32::try_from(threads).unwrap_or(1))
        .memlimit_threading(XZ_THREADING_MEMORY)
        .memlimit_stop(XZ_MEMORY_LIMIT)
        .decoder()?)
}

impl<R: BufRead> Read for XzStreams<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(decoder) = self.current.as_mut() else {
                return Ok(0);
            };
            let n = decoder.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // The decoder returns nothing only at the end of its stream.
            let mut input = self.current.take().expect("checked above").into_inner();
            if skip_stream_padding(&mut input)? {
                self.current = Some(liblzma::bufread::XzDecoder::new_stream(
                    input,
                    xz_decoder()?,
                ));
            }
        }
    }
}

/// Skips null bytes after an xz stream; whether another stream follows.
fn skip_stream_padding(input: &mut impl BufRead) -> io::Result<bool> {
    let mut zeros = 0usize;
    let more = loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            break false;
        }
        let n = buf.iter().take_while(|&&b| b == 0).count();
        let rest = n < buf.len();
        input.consume(n);
        zeros += n;
        if rest {
            break true;
        }
    };
    if zeros.is_multiple_of(4) {
        Ok(more)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "stream padding is not a multiple of four bytes",
        ))
    }
}

fn codec(format: ArchiveFormat) -> &'static str {
    match format {
        ArchiveFormat::TarZst => "zstd",
        ArchiveFormat::TarXz => "xz",
    }
}

/// An error of the file below a decoder (as opposed to one in its data).
#[derive(Debug)]
struct FileError(io::Error);

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for FileError {}

/// The archive file, its read errors marked as [`FileError`].
struct FileReads(File);

impl Read for FileReads {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| match e.kind() {
            io::ErrorKind::Interrupted => e,
            kind => io::Error::new(kind, FileError(e)),
        })
    }
}

/// A decoder whose errors say what they are: the file's own read errors
/// pass through; every other error is the codec refusing the data (a bad
/// block, a checksum mismatch, a stream that ends early, bytes after it).
struct Decompressed {
    inner: Box<dyn Read + Send>,
    codec: &'static str,
}

impl Read for Decompressed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                return e;
            }
            match e.downcast::<FileError>() {
                Ok(file) => file.0,
                Err(e) => io::Error::new(
                    io::ErrorKind::InvalidData,
                    CorruptData(format!(
                        "the {} data is corrupt or truncated ({e}); fetch the archive again",
                        self.codec
                    )),
                ),
            }
        })
    }
}

/// The codec refused an archive's data: the whole reason, in words.
#[derive(Debug)]
struct CorruptData(String);

impl fmt::Display for CorruptData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CorruptData {}

/// The error for a failed read of `archive`'s stream: corrupt data is a
/// [`Error::BadArchive`] saying so; anything else an I/O error of the file.
pub(crate) fn read_error(archive: &Path, e: io::Error) -> Error {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<CorruptData>())
    {
        Some(CorruptData(reason)) => Error::BadArchive {
            archive: archive.to_path_buf(),
            reason: reason.clone(),
        },
        None => Error::io(archive, e),
    }
}

/// Counts the decompressed bytes the tar reader consumed.
struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Logs when a zstd archive's first frame carries no content checksum:
/// the decoder still refuses malformed and truncated data, but changed
/// content bytes cannot be noticed.
fn note_missing_checksum(file: &File, archive: &ArchiveRef) {
    const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
    const CHECKSUM_FLAG: u8 = 0x04;
    let mut head = [0u8; 5];
    if archive.format == ArchiveFormat::TarZst
        && read_head(file, &mut head).is_ok()
        && head[..4] == MAGIC
        && head[4] & CHECKSUM_FLAG == 0
    {
        tracing::info!(
            archive = %archive.path.display(),
            "zstd frame without a content checksum: corrupted content cannot be detected"
        );
    }
}

/// Reads the first bytes without moving the position the decoder reads from.
#[cfg(unix)]
fn read_head(file: &File, head: &mut [u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, head, 0)
}

/// Windows' positioned read moves the file position: put it back.
#[cfg(windows)]
fn read_head(file: &File, head: &mut [u8]) -> io::Result<()> {
    use io::Seek;
    let mut file = file;
    file.read_exact(head)?;
    file.rewind()
}

/// What the pass remembers of each member, for hard links.
struct Seen {
    kind: MemberKind,
    mode: u32,
    size: u64,
    source: Option<EntrySource>,
}

/// Reads the manifest (the first member), indexes every other member and
/// reads the stream to its end.
///
/// With `extract`, every file member's data is written below it on the way
/// (`ArtifactDir::open_extracting`).
pub(crate) fn index_archive(
    name: ArtifactName,
    path: PathBuf,
    format: ArchiveFormat,
    extract: Option<&Path>,
) -> Result<Artifact> {
    let (file, meta) = open_regular(&path, true)?;
    let identity = FileIdentity::of(&path, &file, &meta)?;
    let archive = Arc::new(ArchiveRef {
        path,
        format,
        identity,
    });
    note_missing_checksum(&file, &archive);
    let mut stream = Counting {
        inner: decompress(file, &archive)?,
        count: 0,
    };
    let mut extract = extract
        .map(|into| ExtractRoot::create(into, &name, &archive.path))
        .transpose()?;
    let index = index_members(name, &archive, &mut stream, extract.as_mut())?;
    let path = &archive.path;
    // Without its marker, a tar cut at a member boundary looks complete.
    if stream.count < index.end_of_last + BLOCK {
        return Err(Error::BadArchive {
            archive: path.clone(),
            reason: "truncated archive: no end-of-archive marker; the archive was cut short, \
                     fetch it again"
                .into(),
        });
    }
    // The rest (the marker's padding) passes through the codec, which
    // checks the stream's checksums and trailer at its end.
    io::copy(&mut stream, &mut io::sink()).map_err(|e| read_error(path, e))?;
    Ok(index.artifact)
}

/// The indexed artifact and where the last member's data ends in the
/// decompressed stream.
struct Indexed {
    artifact: Artifact,
    end_of_last: u64,
}

fn index_members(
    name: ArtifactName,
    archive: &Arc<ArchiveRef>,
    stream: &mut Counting<Box<dyn Read + Send>>,
    extract: Option<&mut ExtractRoot>,
) -> Result<Indexed> {
    let path = archive.path.clone();
    let io = |e| read_error(&path, e);
    let mut tar = tar::Archive::new(stream);
    let mut entries = tar.entries().map_err(io)?;
    let (prefixes, mut end_of_last) = read_manifest(&name, &path, entries.next())?;
    let mut index = MemberIndex {
        archive,
        extract,
        present: vec![false; prefixes.len()],
        prefixes,
        seen: HashMap::new(),
        members: Vec::new(),
    };
    for entry in entries {
        let mut entry = entry.map_err(io)?;
        end_of_last = data_end(&entry);
        index.add(&mut entry)?;
    }
    Ok(Indexed {
        artifact: index.into_artifact(name),
        end_of_last,
    })
}

/// Reads the first member, which must be `artifact_manifest.txt`: the
/// artifact's prefixes, and where the member's data ends.
fn read_manifest<R: Read>(
    name: &ArtifactName,
    path: &Path,
    first: Option<io::Result<tar::Entry<'_, R>>>,
) -> Result<(Vec<String>, u64)> {
    let bad = |reason: &str| Error::BadArchive {
        archive: path.to_owned(),
        reason: reason.to_owned(),
    };
    let mut first = first
        .ok_or_else(|| bad("the archive is empty; its first member must be artifact_manifest.txt"))?
        .map_err(|e| read_error(path, e))?;
    let end = data_end(&first);
    if member_name(path, &first.path_bytes())? != MANIFEST_FILE
        || !first.header().entry_type().is_file()
    {
        return Err(bad(
            "the first member must be artifact_manifest.txt; rebuild the archive",
        ));
    }
    let mut text = String::new();
    first
        .read_to_string(&mut text)
        .map_err(|_| bad("artifact_manifest.txt is not UTF-8 text"))?;
    Ok((parse_manifest(&name.to_string(), &text)?, end))
}

/// The members of one archive, as its entries are read in order.
struct MemberIndex<'a> {
    archive: &'a Arc<ArchiveRef>,
    extract: Option<&'a mut ExtractRoot>,
    prefixes: Vec<String>,
    /// Whether each prefix has a member.
    present: Vec<bool>,
    /// Every member so far by full name, for hard links and symlinked parents.
    seen: HashMap<String, Seen>,
    members: Vec<Member>,
}

impl MemberIndex<'_> {
    fn path(&self) -> &Path {
        &self.archive.path
    }

    fn outside(&self, member: String) -> Error {
        Error::MemberOutsidePrefix {
            archive: self.path().to_owned(),
            member,
        }
    }

    /// Indexes one entry (after the manifest).
    fn add<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> Result<()> {
        let entry_type = entry.header().entry_type();
        if entry_type.is_pax_global_extensions() {
            return Ok(());
        }
        let full = member_name(self.path(), &entry.path_bytes())?;
        let under_symlink = ancestors(&full).any(|a| {
            matches!(
                self.seen.get(a),
                Some(Seen {
                    kind: MemberKind::Symlink(_),
                    ..
                })
            )
        });
        if under_symlink {
            // Writing through a symlinked parent is the classic tar-slip.
            return Err(self.outside(full));
        }
        if full.is_empty() {
            if entry_type.is_dir() {
                return Ok(());
            }
            return Err(self.outside(full));
        }
        let this = self.seen_of(&full, entry)?;
        self.place(&full, &this)?;
        self.seen.insert(full, this);
        Ok(())
    }

    /// What the entry named `full` is, its data extracted when asked.
    fn seen_of<R: Read>(&mut self, full: &str, entry: &mut tar::Entry<'_, R>) -> Result<Seen> {
        let path = self.archive.path.clone();
        let header = entry.header();
        let entry_type = header.entry_type();
        let mode = header.mode().map_err(|e| read_error(&path, e))? & 0o7777;
        if entry_type.is_file() || entry_type.is_contiguous() {
            let size = entry.size();
            let offset = entry.raw_file_position();
            let source = match self.extract.as_deref_mut() {
                Some(root) => {
                    let (path, identity) = root.write(full, offset, size, entry)?;
                    EntrySource::File {
                        path,
                        identity,
                        extracted_from: Some(Arc::clone(self.archive)),
                    }
                }
                None => EntrySource::ArchiveMember {
                    archive: Arc::clone(self.archive),
                    offset,
                    size,
                },
            };
            return Ok(Seen {
                kind: MemberKind::File,
                mode,
                size,
                source: Some(source),
            });
        }
        if entry_type.is_dir() {
            return Ok(Seen {
                kind: MemberKind::Dir,
                mode,
                size: 0,
                source: None,
            });
        }
        if entry_type.is_symlink() {
            let raw = entry.link_name_bytes().unwrap_or_default();
            let Ok(text) = std::str::from_utf8(&raw) else {
                return Err(Error::NonUtf8Name {
                    path: inside(&path, full),
                });
            };
            crate::error::check_name(text, "link text", || inside(&path, full))?;
            return Ok(Seen {
                kind: MemberKind::Symlink(text.to_owned()),
                mode: 0o777,
                size: 0,
                source: None,
            });
        }
        if entry_type.is_hard_link() {
            let raw = entry.link_name_bytes().unwrap_or_default();
            return self.hard_link(full, &raw);
        }
        Err(Error::UnsupportedFileType {
            path: inside(&path, full),
            kind: format!("{entry_type:?}"),
        })
    }

    /// A hard link: the earlier file it names, inside the artifact.
    fn hard_link(&self, full: &str, raw: &[u8]) -> Result<Seen> {
        let target = member_name(self.path(), raw)
            .map_err(|_| self.outside(format!("{full} -> {}", String::from_utf8_lossy(raw))))?;
        if !self
            .prefixes
            .iter()
            .any(|p| under_prefix(p, &target).is_some())
        {
            return Err(self.outside(format!("{full} -> {target}")));
        }
        match self.seen.get(&target) {
            Some(t) if t.kind != MemberKind::Dir => Ok(Seen {
                kind: t.kind.clone(),
                mode: t.mode,
                size: t.size,
                source: t.source.clone(),
            }),
            _ => Err(Error::BadArchive {
                archive: self.path().to_owned(),
                reason: format!(
                    "hard link {full} -> {target}: the target is not an earlier file in the archive"
                ),
            }),
        }
    }

    /// Files the entry under every prefix it lies below; a member below
    /// none must be a base directory or one of its parents.
    fn place(&mut self, full: &str, this: &Seen) -> Result<()> {
        let mut placed = false;
        for (index, prefix) in self.prefixes.iter().enumerate() {
            if let Some(relpath) = under_prefix(prefix, full) {
                self.present[index] = true;
                placed = true;
                self.members.push(Member {
                    prefix: index,
                    relpath: relpath.to_owned(),
                    kind: this.kind.clone(),
                    mode: this.mode,
                    size: this.size,
                    source: this.source.clone(),
                });
            }
        }
        if placed {
            return Ok(());
        }
        // `tar` run on a directory also stores the base directories and
        // their parents: harmless, so accepted when they are directories.
        let present = &mut self.present;
        let is_base_or_parent = self.prefixes.iter().enumerate().any(|(index, p)| {
            let hit = p == full || p.starts_with(&format!("{full}/"));
            if p == full {
                present[index] = true;
            }
            hit
        });
        if is_base_or_parent && this.kind == MemberKind::Dir {
            Ok(())
        } else {
            Err(self.outside(full.to_owned()))
        }
    }

    /// The artifact: the last member of each name, missing parents added.
    fn into_artifact(self, name: ArtifactName) -> Artifact {
        let mut members = self.members;
        // A later member with the same name replaces an earlier one, as when
        // extracting; sorting is stable, so keep the last of each run.
        members.sort_by(|a, b| (&a.relpath, a.prefix).cmp(&(&b.relpath, b.prefix)));
        members.reverse();
        members.dedup_by(|later, earlier| {
            later.relpath == earlier.relpath && later.prefix == earlier.prefix
        });
        members.reverse();
        add_missing_parents(&name, &mut members);
        let missing_prefixes = self
            .prefixes
            .iter()
            .zip(&self.present)
            .filter(|(_, present)| !**present)
            .map(|(p, _)| p.clone())
            .collect();
        Artifact {
            name: Arc::new(name),
            location: ArtifactLocation::Archive(Arc::clone(self.archive)),
            prefixes: self.prefixes,
            missing_prefixes,
            members,
        }
    }
}

/// Where an entry's data (padded to whole blocks) ends in the stream.
fn data_end<R: Read>(entry: &tar::Entry<'_, R>) -> u64 {
    entry.raw_file_position() + entry.size().div_ceil(BLOCK) * BLOCK
}

/// Archives may omit directory members; a directory tree never does.
/// Supplying them keeps a tree and its archive identical.
fn add_missing_parents(name: &ArtifactName, members: &mut Vec<Member>) {
    let have: BTreeSet<(usize, &str)> = members
        .iter()
        .filter(|m| m.kind == MemberKind::Dir)
        .map(|m| (m.prefix, m.relpath.as_str()))
        .collect();
    let mut missing: BTreeSet<(usize, String)> = BTreeSet::new();
    for m in members.iter() {
        for parent in ancestors(&m.relpath) {
            if !have.contains(&(m.prefix, parent)) {
                missing.insert((m.prefix, parent.to_owned()));
            }
        }
    }
    if missing.is_empty() {
        return;
    }
    tracing::debug!(artifact = %name, count = missing.len(), "archive lacks directory members; assuming mode 755");
    members.extend(missing.into_iter().map(|(prefix, relpath)| Member {
        prefix,
        relpath,
        kind: MemberKind::Dir,
        mode: 0o755,
        size: 0,
        source: None,
    }));
    members.sort_by(|a, b| (&a.relpath, a.prefix).cmp(&(&b.relpath, b.prefix)));
}

/// `a/b/c` → `a/b`, `a`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = path;
    std::iter::from_fn(move || {
        let cut = rest.rfind('/')?;
        rest = &rest[..cut];
        Some(rest)
    })
}

/// The part of `full` below `prefix`, if any (`""` prefix: everything).
fn under_prefix<'a>(prefix: &str, full: &'a str) -> Option<&'a str> {
    if prefix.is_empty() {
        return Some(full);
    }
    full.strip_prefix(prefix)?
        .strip_prefix('/')
        .filter(|r| !r.is_empty())
}

/// A member name, normalised: UTF-8, no leading `./`, no `.` or empty
/// segments, no trailing `/`. Absolute names and `..` are refused.
fn member_name(archive: &std::path::Path, raw: &[u8]) -> Result<String> {
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err(Error::NonUtf8Name {
            path: inside(archive, &String::from_utf8_lossy(raw)),
        });
    };
    crate::error::check_name(text, "name", || inside(archive, text))?;
    let outside = || Error::MemberOutsidePrefix {
        archive: archive.to_path_buf(),
        member: text.to_owned(),
    };
    if text.starts_with('/') {
        return Err(outside());
    }
    let mut segments = Vec::new();
    for s in text.split('/') {
        match s {
            "" | "." => {}
            ".." => return Err(outside()),
            s => segments.push(s),
        }
    }
    // Empty means the archive root (`./`), which only a directory may name.
    Ok(segments.join("/"))
}

fn inside(archive: &std::path::Path, member: &str) -> PathBuf {
    let mut s = archive.as_os_str().to_owned();
    s.push(format!("!/{member}"));
    PathBuf::from(s)
}
