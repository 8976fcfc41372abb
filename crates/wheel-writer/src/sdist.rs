//! Sdists (PEP 625, PEP 643): `{name}-{version}.tar.gz` with one top
//! directory, `PKG-INFO` first, deterministic tar and gzip headers.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use flate2::GzBuilder;
use flate2::write::GzEncoder;
use pypa_formats::filename::SdistFilename;
use sha2::{Digest as _, Sha256};
use tar::{EntryType, Header};

use crate::member_path::validate_member_path;
use crate::output::AtomicOutput;
use crate::sink::{ArchiveSink, check_size};
use crate::wheel::WrittenPackage;
use crate::{
    BytesSource, Compression, CoreMetadata, Error, Member, MemberDigest, MemberSource, WriteOptions,
};

/// Largest member a plain ustar header can describe (8 GiB − 1).
const USTAR_MAX_SIZE: u64 = 0o77_777_777_777;

/// An sdist being assembled.
///
/// ```
/// use std::sync::Arc;
/// use wheel_writer::{BytesSource, CoreMetadata, MemorySink, SdistBuilder};
///
/// let mut metadata = CoreMetadata::new("rocm", "7.0.0");
/// metadata.dynamic = vec!["Requires-Dist".into(), "Provides-Extra".into()];
/// let mut sdist = SdistBuilder::new(metadata)?;
/// sdist.add_file("pyproject.toml", Arc::new(BytesSource::new(&b"[build-system]\n"[..], false, "pyproject")))?;
/// assert_eq!(sdist.file_name(), "rocm-7.0.0.tar.gz");
/// let mut sink = MemorySink::new();
/// sdist.write_into(&mut sink)?;
/// assert_eq!(sink.members()[0].path, "rocm-7.0.0/PKG-INFO");
/// # Ok::<(), wheel_writer::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SdistBuilder {
    metadata: CoreMetadata,
    filename: SdistFilename,
    files: BTreeMap<String, Arc<dyn MemberSource>>,
}

impl SdistBuilder {
    /// Starts an sdist after checking the metadata (written as `PKG-INFO`).
    pub fn new(metadata: CoreMetadata) -> Result<Self, Error> {
        metadata.validate()?;
        let (name, version) = metadata.name_and_version()?;
        Ok(Self {
            metadata,
            filename: SdistFilename { name, version },
            files: BTreeMap::new(),
        })
    }

    /// `{name}-{version}.tar.gz` (name escaped as in wheels).
    pub fn file_name(&self) -> String {
        self.filename.to_string()
    }

    /// The top directory, `{name}-{version}`.
    pub fn top_directory(&self) -> String {
        self.filename.top_directory()
    }

    /// Adds a file relative to the top directory (`pyproject.toml`,
    /// `_backend/backend.py`); `PKG-INFO` is generated.
    pub fn add_file(&mut self, path: &str, source: Arc<dyn MemberSource>) -> Result<(), Error> {
        validate_member_path(path)?;
        if path == "PKG-INFO" {
            return Err(Error::InvalidPath {
                path: path.to_owned(),
                reason: "PKG-INFO is generated from the metadata",
            });
        }
        if source.size() > USTAR_MAX_SIZE {
            return Err(Error::InvalidPath {
                path: path.to_owned(),
                reason: "sdist members are limited to 8 GiB",
            });
        }
        if self.files.insert(path.to_owned(), source).is_some() {
            return Err(Error::DuplicatePath {
                path: path.to_owned(),
            });
        }
        Ok(())
    }

    /// Every member in archive order: `PKG-INFO`, then the files sorted.
    pub fn members(&self) -> Result<Vec<Member>, Error> {
        let top = self.top_directory();
        let pkg_info = BytesSource::new(
            self.metadata.render()?.into_bytes(),
            false,
            "generated PKG-INFO",
        );
        let mut members = vec![Member::new(format!("{top}/PKG-INFO"), Arc::new(pkg_info))];
        members.extend(
            self.files
                .iter()
                .map(|(path, source)| Member::new(format!("{top}/{path}"), Arc::clone(source))),
        );
        Ok(members)
    }

    /// Writes every member into `sink`.
    pub fn write_into(&self, sink: &mut dyn ArchiveSink) -> Result<Vec<MemberDigest>, Error> {
        sink.write_members(&self.members()?)
    }

    /// Writes the sdist into `dir` atomically. The gzip level follows
    /// `options` (stored means level 0); the timestamp is every member's mtime.
    pub fn write(&self, dir: &Path, options: &WriteOptions) -> Result<WrittenPackage, Error> {
        let output = AtomicOutput::create(dir, &self.file_name())?;
        let mut sink = TarGzSink::new(output.file()?, output.destination().to_owned(), options);
        self.write_into(&mut sink)?;
        sink.finish()?;
        let path = output.commit()?;
        tracing::debug!(sdist = %path.display(), "wrote sdist");
        Ok(WrittenPackage {
            path,
            record: Vec::new(),
        })
    }
}

/// A deterministic `.tar.gz`: ustar headers (PAX only for long or non-ASCII
/// names), uid/gid 0, no user names, one mtime, modes 0o644/0o755, and a
/// gzip header without name and with mtime 0.
struct TarGzSink {
    tar: tar::Builder<GzEncoder<BufWriter<File>>>,
    path: PathBuf,
    mtime: u64,
}

impl TarGzSink {
    fn new(file: File, path: PathBuf, options: &WriteOptions) -> Self {
        let level = match options.compression() {
            Compression::Deflate { level } => level.clamp(1, 9),
            Compression::Stored => 0,
        };
        let gz = GzBuilder::new()
            .mtime(0)
            .operating_system(255)
            .write(BufWriter::new(file), flate2::Compression::new(level));
        let mut tar = tar::Builder::new(gz);
        tar.mode(tar::HeaderMode::Deterministic);
        Self {
            tar,
            path,
            mtime: options.timestamp(),
        }
    }

    fn io(&self, source: io::Error) -> Error {
        Error::Output {
            path: self.path.clone(),
            source,
        }
    }

    fn header(&self, size: u64, mode: u32, entry_type: EntryType) -> Header {
        let mut header = Header::new_ustar();
        header.set_entry_type(entry_type);
        header.set_size(size);
        header.set_mode(mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(self.mtime);
        header
    }

    /// Writes a PAX extended header carrying `path`.
    fn pax_path(&mut self, path: &str) -> Result<(), Error> {
        let record = pax_record("path", path);
        let mut header = self.header(record.len() as u64, 0o644, EntryType::XHeader);
        set_truncated_name(&mut header, "././@PaxHeader");
        header.set_cksum();
        self.tar
            .append(&header, record.as_slice())
            .map_err(|e| self.io(e))
    }

    fn finish(self) -> Result<(), Error> {
        let path = self.path.clone();
        let io = |source| Error::Output {
            path: path.clone(),
            source,
        };
        let gz = self.tar.into_inner().map_err(io)?;
        let mut file = gz.finish().map_err(io)?;
        file.flush().map_err(io)
    }
}

impl ArchiveSink for TarGzSink {
    fn write_members(&mut self, members: &[Member]) -> Result<Vec<MemberDigest>, Error> {
        let mut digests = Vec::with_capacity(members.len());
        for member in members {
            let source = member.source();
            let size = source.size();
            let mut header = self.header(size, member.mode(), EntryType::Regular);
            let path = member.path();
            if !path.is_ascii() || header.set_path(path).is_err() {
                self.pax_path(path)?;
                set_truncated_name(&mut header, path);
            }
            header.set_cksum();
            let source_error = |e| Error::Source {
                origin: source.origin(),
                member: path.to_owned(),
                source: e,
            };
            let reader = source.open().map_err(source_error)?;
            let mut hashing = HashingReader {
                inner: reader.take(size),
                sha: Sha256::new(),
                count: 0,
                read_failed: false,
            };
            if let Err(e) = self.tar.append(&header, &mut hashing) {
                // A read error surfaces through append; tell it apart from a write error.
                return Err(if hashing.read_failed {
                    source_error(e)
                } else {
                    self.io(e)
                });
            }
            check_size(member, hashing.count)?;
            let mut rest = hashing.inner.into_inner();
            let mut probe = [0u8; 1];
            if rest.read(&mut probe).map_err(source_error)? != 0 {
                check_size(member, size + 1)?;
            }
            digests.push(MemberDigest {
                sha256: hashing.sha.finalize().into(),
                size,
            });
        }
        Ok(digests)
    }
}

/// One PAX record: `"{len} {key}={value}\n"`, where `len` counts itself.
fn pax_record(key: &str, value: &str) -> Vec<u8> {
    let body = key.len() + value.len() + 3; // space, `=`, newline
    let mut len = body + 1;
    while len != body + len.to_string().len() {
        len = body + len.to_string().len();
    }
    format!("{len} {key}={value}\n").into_bytes()
}

/// Puts at most 100 bytes of `name` into the classic name field (readers
/// use the PAX path instead).
fn set_truncated_name(header: &mut Header, name: &str) {
    let field = &mut header.as_old_mut().name;
    field.fill(0);
    let bytes = name.as_bytes();
    let n = bytes.len().min(field.len());
    field[..n].copy_from_slice(&bytes[..n]);
}

struct HashingReader<R> {
    inner: io::Take<R>,
    sha: Sha256,
    count: u64,
    read_failed: bool,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self
            .inner
            .read(buf)
            .inspect_err(|_| self.read_failed = true)?;
        self.sha.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pax_records_count_their_own_length() {
        assert_eq!(pax_record("path", "a"), b"9 path=a\n");
        let long = "x".repeat(95);
        let record = pax_record("path", &long);
        let text = String::from_utf8(record.clone()).unwrap();
        let (len, _) = text.split_once(' ').unwrap();
        assert_eq!(len.parse::<usize>().unwrap(), record.len());
    }
}
