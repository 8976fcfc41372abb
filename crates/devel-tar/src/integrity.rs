//! The devel tar is checked against the RECORD row pip wrote for it (or
//! against the digest file that row's neighbour vouches for), so a tar
//! changed after install (modified, truncated, replaced) is never
//! unpacked. A compressed tar is hashed while the scan decodes it; an
//! uncompressed one (the default) on a thread of its own while the tree is
//! written (both with BLAKE3 when the digest file is there, else SHA-256), and the tree counts as unpacked only once the digest matched
//! (docs/devel-tar.md#integrity-the-tar-against-its-record-row).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use fs_helpers::positioned::read_at;
use pypa_formats::installer::InstallCommand;
use sha2::{Digest as _, Sha256};

use crate::compression::READ_BUFFER;
use crate::digest_file::{DIGEST_FILE, DIGEST_FILE_LIMIT, TarDigest};
use crate::error::Error;
use crate::record::RecordFile;
use fs_helpers::confined::Dir;

/// What RECORD vouches for: the tar's sha256 and, when listed, its size;
/// and the tar's BLAKE3 when the devel wheel ships a digest file RECORD
/// vouches for ([`crate::TarDigest`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recorded {
    sha256: [u8; 32],
    size: Option<u64>,
    blake3: Option<[u8; 32]>,
}

impl Recorded {
    /// Reads the row of `relpath` (the tar, relative to site-packages) from
    /// `record`. A missing row, a row without a sha256
    /// or with a malformed one is [`Error::TarUnrecorded`]: pip and uv
    /// always list a digest for every file of a wheel, so the tar cannot be
    /// trusted without one. When RECORD lists the digest file next to the
    /// tar with a sha256, that file is read and checked too.
    pub(crate) fn read(
        record: &RecordFile,
        package: &Dir,
        tar: &Path,
        relpath: &str,
    ) -> Result<Self, Error> {
        let unrecorded = |reason: &str| Error::TarUnrecorded {
            install: InstallCommand::default(),
            tar: tar.to_path_buf(),
            record: record.path(),
            reason: reason.to_owned(),
        };
        let rows = record.rows()?;
        let row = rows
            .iter()
            .find(|row| row.path == relpath)
            .ok_or_else(|| unrecorded("does not list it"))?;
        let sha256 = row
            .sha256()
            .ok_or_else(|| unrecorded("lists it without a sha256"))
            .and_then(|encoded| {
                decode_sha256(encoded).ok_or_else(|| unrecorded("lists a malformed sha256 for it"))
            })?;
        let mut recorded = Self {
            sha256,
            size: row.size,
            blake3: None,
        };
        let digest_relpath = match relpath.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{DIGEST_FILE}"),
            None => DIGEST_FILE.to_owned(),
        };
        // A digest file RECORD does not vouch for is not trusted, and not
        // needed: the tar's own row still is.
        if let Some(vouched) = rows
            .iter()
            .find(|row| row.path == digest_relpath)
            .and_then(|row| Some((row.sha256().and_then(decode_sha256)?, row.size)))
        {
            recorded.blake3 = Some(recorded.read_digest_file(package, tar, vouched)?);
        }
        Ok(recorded)
    }

    /// The tar's BLAKE3 from the digest file next to `tar` (in the devel
    /// package directory `package`), whose sha256 and size RECORD lists as
    /// `vouched`.
    fn read_digest_file(
        &self,
        package: &Dir,
        tar: &Path,
        (sha256, size): ([u8; 32], Option<u64>),
    ) -> Result<[u8; 32], Error> {
        let path = tar.with_file_name(DIGEST_FILE);
        let modified = |problem: String| Error::TarModified {
            install: InstallCommand::default(),
            tar: tar.to_path_buf(),
            reason: format!("its digest file {} {problem}", path.display()),
        };
        let mut bytes = Vec::new();
        match package.open_file(DIGEST_FILE) {
            Ok(file) => file
                .take(DIGEST_FILE_LIMIT + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| Error::read("read", &path, e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(modified("is missing".into()));
            }
            Err(e) => return Err(Error::read("open", &path, e)),
        };
        let digest: [u8; 32] = Sha256::digest(&bytes).into();
        if digest != sha256 || size.is_some_and(|size| size != bytes.len() as u64) {
            return Err(modified("differs from its RECORD row".into()));
        }
        let described = TarDigest::parse(&bytes)
            .map_err(|problem| modified(format!("is unreadable: {problem}")))?;
        let tar_name = tar.file_name().map(|n| n.to_string_lossy());
        if tar_name.as_deref() != Some(described.tar_name.as_str())
            || self.size.is_some_and(|size| size != described.size)
        {
            return Err(modified(format!(
                "describes another tar ({}, {} bytes)",
                described.tar_name, described.size
            )));
        }
        Ok(described.blake3)
    }

    /// Compares the size of the file on disk with RECORD's before a byte
    /// is read: a truncated or grown tar is refused at once.
    pub(crate) fn check_size(&self, tar: &Path, actual: u64) -> Result<(), Error> {
        match self.size {
            Some(size) if size != actual => Err(Error::TarModified {
                install: InstallCommand::default(),
                tar: tar.to_path_buf(),
                reason: format!("it is {actual} bytes, RECORD lists {size}"),
            }),
            _ => Ok(()),
        }
    }

    /// Compares what [`HashingReader`] saw with the recorded digest.
    pub(crate) fn check(&self, tar: &Path, seen: &HashingReader<impl Read>) -> Result<(), Error> {
        let algorithm = seen.hasher.algorithm();
        self.check_digest(tar, seen.count, algorithm, seen.hasher.clone().finalize())
    }

    /// Compares a file of `size` bytes whose `algorithm` digest is `digest`
    /// with the row, or with the digest file.
    fn check_digest(
        &self,
        tar: &Path,
        size: u64,
        algorithm: Algorithm,
        digest: [u8; 32],
    ) -> Result<(), Error> {
        self.check_size(tar, size)?;
        let (expected, reason) = match algorithm {
            Algorithm::Sha256 => (Some(self.sha256), "its sha256 differs from its RECORD row"),
            Algorithm::Blake3 => (self.blake3, "its blake3 differs from its digest file"),
        };
        if Some(digest) == expected {
            Ok(())
        } else {
            Err(Error::TarModified {
                install: InstallCommand::default(),
                tar: tar.to_path_buf(),
                reason: reason.to_owned(),
            })
        }
    }

    /// The hash [`DigestCheck`] computes: BLAKE3 when a digest file lists
    /// one, else SHA-256.
    fn algorithm(&self) -> Algorithm {
        if self.blake3.is_some() {
            Algorithm::Blake3
        } else {
            Algorithm::Sha256
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Algorithm {
    Sha256,
    Blake3,
}

/// A RECORD `sha256=` value's 32 bytes.
fn decode_sha256(encoded: &str) -> Option<[u8; 32]> {
    URL_SAFE_NO_PAD
        .decode(encoded)
        .ok()
        .and_then(|digest| <[u8; 32]>::try_from(digest).ok())
}

/// The check of the tar against its RECORD row or digest file, possibly
/// still running. Dropping it stops the thread.
#[derive(Debug)]
pub(crate) struct DigestCheck {
    running: Option<Running>,
}

#[derive(Debug)]
struct Running {
    tar: PathBuf,
    recorded: Recorded,
    /// The tar, and its size and mtime when the check started: any write
    /// to it meanwhile, before or after the digest thread read the bytes,
    /// changes them.
    file: File,
    opened: Stamp,
    stop: Arc<AtomicBool>,
    /// The size and digest of the file; `None` when stopped early.
    hashing: JoinHandle<io::Result<Option<Hashed>>>,
}

impl DigestCheck {
    /// A check already passed: the scan hashed the tar as it read it.
    pub(crate) fn passed() -> Self {
        Self { running: None }
    }

    /// Starts hashing the whole of `file` (the tar at `tar`, open) on a
    /// thread of its own, with positioned reads, so the scan and the
    /// writers can read the same file meanwhile.
    pub(crate) fn start(file: &File, tar: &Path, recorded: &Recorded) -> Result<Self, Error> {
        let clone = || file.try_clone().map_err(|e| Error::read("open", tar, e));
        let (file, hashed) = (clone()?, clone()?);
        let opened = stamp(&file).map_err(|e| Error::read("inspect", tar, e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let hashing = std::thread::Builder::new()
            .name("devel-tar digest".into())
            .spawn({
                let algorithm = recorded.algorithm();
                move || hash_file(&hashed, algorithm, &stopped)
            })
            .map_err(|e| Error::read("start hashing", tar, e))?;
        Ok(Self {
            running: Some(Running {
                tar: tar.to_path_buf(),
                recorded: recorded.clone(),
                file,
                opened,
                stop,
                hashing,
            }),
        })
    }

    /// Waits for the digest and compares it with the recorded one:
    /// [`Error::TarModified`] when they differ or the tar was written to
    /// since the check started.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        let Some(running) = self.running.take() else {
            return Ok(());
        };
        let hashed = running
            .hashing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            .map_err(|e| Error::read("read", &running.tar, e))?;
        let (size, digest) = hashed.expect("only a dropped check stops hashing");
        let algorithm = running.recorded.algorithm();
        running
            .recorded
            .check_digest(&running.tar, size, algorithm, digest)?;
        let now = stamp(&running.file).map_err(|e| Error::read("inspect", &running.tar, e))?;
        if now != running.opened {
            return Err(Error::TarModified {
                install: InstallCommand::default(),
                tar: running.tar,
                reason: "it was written to while it was unpacked".to_owned(),
            });
        }
        Ok(())
    }

    /// `error`, unless the tar changed: a changed file explains any other
    /// finding, so that is reported instead.
    pub(crate) fn explain(self, error: Error) -> Error {
        match self.finish() {
            Err(modified @ Error::TarModified { .. }) => modified,
            _ => error,
        }
    }
}

impl Drop for DigestCheck {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop.store(true, Ordering::Relaxed);
            let _ = running.hashing.join();
        }
    }
}

/// A file's size and digest.
type Hashed = (u64, [u8; 32]);

/// A file's size and modification time.
type Stamp = (u64, Option<std::time::SystemTime>);

fn stamp(file: &File) -> io::Result<Stamp> {
    file.metadata().map(|m| (m.len(), m.modified().ok()))
}

/// The size and digest of `file`, read to its end; `None` once `stop` is
/// raised.
fn hash_file(file: &File, algorithm: Algorithm, stop: &AtomicBool) -> io::Result<Option<Hashed>> {
    let mut hasher = Hasher::new(algorithm);
    let mut buffer = vec![0u8; READ_BUFFER];
    let mut size = 0u64;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let n = read_at(file, &mut buffer, size)?;
        if n == 0 {
            return Ok(Some((size, hasher.finalize())));
        }
        hasher.update(&buffer[..n]);
        size += n as u64;
    }
}

/// A running digest by one [`Algorithm`].
#[derive(Debug, Clone)]
enum Hasher {
    Sha256(Sha256),
    Blake3(Box<blake3::Hasher>),
}

impl Hasher {
    fn new(algorithm: Algorithm) -> Self {
        match algorithm {
            Algorithm::Sha256 => Self::Sha256(Sha256::new()),
            Algorithm::Blake3 => Self::Blake3(Box::new(blake3::Hasher::new())),
        }
    }

    fn algorithm(&self) -> Algorithm {
        match self {
            Self::Sha256(_) => Algorithm::Sha256,
            Self::Blake3(_) => Algorithm::Blake3,
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Sha256(hasher) => hasher.update(bytes),
            Self::Blake3(hasher) => {
                hasher.update(bytes);
            }
        }
    }

    fn finalize(self) -> [u8; 32] {
        match self {
            Self::Sha256(hasher) => hasher.finalize().into(),
            Self::Blake3(hasher) => *hasher.finalize().as_bytes(),
        }
    }
}

/// Hashes the bytes of the file as they are read.
#[derive(Debug)]
pub(crate) struct HashingReader<R> {
    inner: R,
    hasher: Hasher,
    count: u64,
}

impl<R: Read> HashingReader<R> {
    /// `inner`, hashed as [`Recorded::check`] needs it for `recorded`.
    pub(crate) fn new(inner: R, recorded: &Recorded) -> Self {
        Self {
            inner,
            hasher: Hasher::new(recorded.algorithm()),
            count: 0,
        }
    }

    /// Reads (and hashes) whatever is left, so the digest covers the whole
    /// file however far the tar reader went.
    pub(crate) fn drain(&mut self) -> io::Result<()> {
        io::copy(self, &mut io::sink()).map(drop)
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tar `tar`'s row of the RECORD in `dir` (tar at `p/_devel.tar`).
    fn read_recorded(dir: &Path, tar: &Path) -> Result<Recorded, Error> {
        let record = RecordFile::new(Dir::open(dir).unwrap());
        let package = Dir::open(tar.parent().unwrap()).unwrap();
        Recorded::read(&record, &package, tar, "p/_devel.tar")
    }

    #[test]
    fn digest_size_and_rows() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        let tar = dir.path().join("_devel.tar");
        // sha256("hello"), as pip writes it.
        let hello = "sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ";
        std::fs::write(
            &record,
            format!("p/_devel.tar,{hello},5\np/nohash,,5\np/bad,sha256=AAA,5\n"),
        )
        .unwrap();
        let recorded = read_recorded(dir.path(), &tar).unwrap();
        let mut seen = HashingReader::new(&b"hello"[..], &recorded);
        seen.drain().unwrap();
        recorded.check(&tar, &seen).unwrap();
        let mut other = HashingReader::new(&b"hellp"[..], &recorded);
        other.drain().unwrap();
        let err = recorded.check(&tar, &other).unwrap_err();
        assert!(err.to_string().contains("sha256 differs"), "{err}");
        let err = recorded.check_size(&tar, 4).unwrap_err();
        assert!(err.to_string().contains("4 bytes, RECORD lists 5"), "{err}");
        for (path, reason) in [
            ("p/missing", "does not list it"),
            ("p/nohash", "without a sha256"),
            ("p/bad", "malformed sha256"),
        ] {
            let err = Recorded::read(
                &RecordFile::new(Dir::open(dir.path()).unwrap()),
                &Dir::open(dir.path()).unwrap(),
                &tar,
                path,
            )
            .unwrap_err();
            assert!(matches!(err, Error::TarUnrecorded { .. }), "{err}");
            assert!(err.to_string().contains(reason), "{err}");
        }
    }

    #[test]
    fn the_background_check_reads_the_whole_file_and_sees_later_writes() {
        let dir = tempfile::tempdir().unwrap();
        let tar = dir.path().join("_devel.tar");
        let bytes: Vec<u8> = (0..3 * READ_BUFFER + 5).map(|i| i as u8).collect();
        std::fs::write(&tar, &bytes).unwrap();
        let recorded = Recorded {
            sha256: Sha256::digest(&bytes).into(),
            size: Some(bytes.len() as u64),
            blake3: None,
        };
        let file = File::open(&tar).unwrap();
        DigestCheck::start(&file, &tar, &recorded)
            .unwrap()
            .finish()
            .unwrap();

        let other = Recorded {
            sha256: [0; 32],
            ..recorded.clone()
        };
        let err = DigestCheck::start(&file, &tar, &other)
            .unwrap()
            .explain(Error::ReadOnly {
                path: tar.clone(),
                source: io::ErrorKind::PermissionDenied.into(),
            });
        assert!(err.to_string().contains("sha256 differs"), "{err}");

        // Same bytes, but the file was written to after the check started.
        let check = DigestCheck::start(&file, &tar, &recorded).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&tar)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH)
            .unwrap();
        let err = check.finish().unwrap_err();
        assert!(
            err.to_string().contains("written to while it was unpacked"),
            "{err}"
        );

        // A check dropped unfinished stops its thread.
        drop(DigestCheck::start(&file, &tar, &recorded).unwrap());
        assert!(DigestCheck::passed().finish().is_ok());
    }

    /// What, the digest file's bytes, its RECORD row, the problem said.
    type DigestCase<'a> = (&'a str, Option<&'a [u8]>, Option<String>, Option<&'a str>);

    /// A RECORD listing the tar `bytes` and, with `digest_row`, the digest
    /// file: `(site, tar path)`.
    fn site_with(
        bytes: &[u8],
        digest: Option<&[u8]>,
        digest_row: Option<String>,
    ) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let pure = dir.path().join("p");
        std::fs::create_dir(&pure).unwrap();
        let tar = pure.join("_devel.tar");
        std::fs::write(&tar, bytes).unwrap();
        let row = |path: &str, bytes: &[u8]| {
            let hash = URL_SAFE_NO_PAD.encode(Sha256::digest(bytes));
            format!("{path},sha256={hash},{}\n", bytes.len())
        };
        let mut record = row("p/_devel.tar", bytes);
        if let Some(digest) = digest {
            std::fs::write(pure.join(DIGEST_FILE), digest).unwrap();
            record.push_str(&digest_row.unwrap_or_else(|| row("p/_devel.digest", digest)));
        }
        std::fs::write(dir.path().join("RECORD"), record).unwrap();
        (dir, tar)
    }

    fn check(dir: &Path, tar: &Path) -> Result<(), Error> {
        let recorded = read_recorded(dir, tar)?;
        DigestCheck::start(&File::open(tar).unwrap(), tar, &recorded)?.finish()
    }

    #[test]
    fn a_digest_file_record_vouches_for_is_used_and_checked() {
        let tar: Vec<u8> = (0..READ_BUFFER + 7).map(|i| (i % 251) as u8).collect();
        let digest = TarDigest::of_reader("_devel.tar", tar.as_slice())
            .unwrap()
            .to_bytes();
        let (dir, path) = site_with(&tar, Some(&digest), None);
        let recorded = read_recorded(dir.path(), &path).unwrap();
        assert!(matches!(recorded.algorithm(), Algorithm::Blake3));
        check(dir.path(), &path).unwrap();

        // The tar changed: named against the digest file.
        let mut changed = tar.clone();
        changed[READ_BUFFER + 3] ^= 1;
        std::fs::write(&path, &changed).unwrap();
        let err = check(dir.path(), &path).unwrap_err().to_string();
        assert!(
            err.contains("its blake3 differs from its digest file"),
            "{err}"
        );

        let other = TarDigest::of_reader("_devel.tar.zst", tar.as_slice())
            .unwrap()
            .to_bytes();
        let cases: Vec<DigestCase<'_>> = vec![
            // Changed after install: RECORD's row no longer matches.
            (
                "changed",
                Some(b"_devel.tar,blake3=AAAA,1\n"),
                Some(format!(
                    "p/_devel.digest,sha256={},{}\n",
                    URL_SAFE_NO_PAD.encode(Sha256::digest(&digest)),
                    digest.len()
                )),
                Some("differs from its RECORD row"),
            ),
            (
                "another tar",
                Some(&other),
                None,
                Some("describes another tar"),
            ),
            ("unreadable", Some(b"x"), None, Some("is unreadable")),
            // Not vouched for: ignored, the tar's own row is checked.
            (
                "unhashed row",
                Some(b"junk"),
                Some("p/_devel.digest,,4\n".to_owned()),
                None,
            ),
        ];
        for (what, bytes, row, problem) in cases {
            let (dir, path) = site_with(&tar, bytes, row);
            match problem {
                Some(problem) => {
                    let err = check(dir.path(), &path).unwrap_err().to_string();
                    assert!(err.contains("its digest file"), "{what}: {err}");
                    assert!(err.contains(problem), "{what}: {err}");
                }
                None => check(dir.path(), &path).unwrap(),
            }
        }
        // Listed, and gone.
        let (dir, path) = site_with(&tar, Some(&digest), None);
        std::fs::remove_file(path.with_file_name(DIGEST_FILE)).unwrap();
        let err = check(dir.path(), &path).unwrap_err().to_string();
        assert!(err.contains("is missing"), "{err}");
    }
}
