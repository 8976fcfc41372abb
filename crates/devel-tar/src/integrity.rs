//! The devel tar is checked against the RECORD row pip wrote for it, so a
//! tar changed after install (modified, truncated, replaced) is refused
//! before anything is unpacked. The digest is computed while the scan reads
//! the file anyway: no extra pass over it.

use std::io::{self, Read};
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use pypa_formats::installer::InstallCommand;
use sha2::{Digest as _, Sha256};

use crate::error::Error;
use crate::record;

/// What RECORD vouches for: the tar's sha256 and, when listed, its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recorded {
    sha256: [u8; 32],
    size: Option<u64>,
}

impl Recorded {
    /// Reads the row of `relpath` (the tar, relative to site-packages) from
    /// the RECORD at `record_path`. A missing row, a row without a sha256
    /// or with a malformed one is [`Error::TarUnrecorded`]: pip and uv
    /// always list a digest for every file of a wheel, so the tar cannot be
    /// trusted without one.
    pub(crate) fn read(record_path: &Path, tar: &Path, relpath: &str) -> Result<Self, Error> {
        let unrecorded = |reason: &str| Error::TarUnrecorded {
            install: InstallCommand::default(),
            tar: tar.to_path_buf(),
            record: record_path.to_path_buf(),
            reason: reason.to_owned(),
        };
        let rows = record::rows(record_path)?;
        let row = rows
            .iter()
            .find(|row| row.path == relpath)
            .ok_or_else(|| unrecorded("does not list it"))?;
        let encoded = row
            .sha256()
            .ok_or_else(|| unrecorded("lists it without a sha256"))?;
        let sha256 = URL_SAFE_NO_PAD
            .decode(encoded)
            .ok()
            .and_then(|digest| <[u8; 32]>::try_from(digest).ok())
            .ok_or_else(|| unrecorded("lists a malformed sha256 for it"))?;
        Ok(Self {
            sha256,
            size: row.size,
        })
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

    /// Compares what [`HashingReader`] saw with RECORD's digest.
    pub(crate) fn check(&self, tar: &Path, seen: &HashingReader<impl Read>) -> Result<(), Error> {
        self.check_size(tar, seen.count)?;
        if seen.hasher.clone().finalize().as_slice() == self.sha256 {
            Ok(())
        } else {
            Err(Error::TarModified {
                install: InstallCommand::default(),
                tar: tar.to_path_buf(),
                reason: "its sha256 differs from its RECORD row".to_owned(),
            })
        }
    }
}

/// Hashes the bytes of the file as they are read.
#[derive(Debug)]
pub(crate) struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    count: u64,
}

impl<R: Read> HashingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
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
        let recorded = Recorded::read(&record, &tar, "p/_devel.tar").unwrap();
        let mut seen = HashingReader::new(&b"hello"[..]);
        seen.drain().unwrap();
        recorded.check(&tar, &seen).unwrap();
        let mut other = HashingReader::new(&b"hellp"[..]);
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
            let err = Recorded::read(&record, &tar, path).unwrap_err();
            assert!(matches!(err, Error::TarUnrecorded { .. }), "{err}");
            assert!(err.to_string().contains(reason), "{err}");
        }
    }
}
