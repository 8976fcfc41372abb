//! The SHA-256 of a file or a stream, read in blocks (a file of any size
//! takes one buffer of memory), with its size and the two spellings the
//! workspace needs: lowercase hex (index pages, shard manifests) and the
//! URL-safe base64 without padding that RECORD rows use (PEP 376).
//!
//! ```
//! use fs_helpers::file_hash::{FileDigest, sha256_file};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("a.txt");
//! std::fs::write(&path, "abc")?;
//! let digest: FileDigest = sha256_file(&path)?;
//! assert_eq!(digest.size, 3);
//! assert_eq!(digest.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
//! assert_eq!(digest.record(), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// The block size of a read.
const BLOCK: usize = 1 << 20;

/// The SHA-256 and the length of some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileDigest {
    /// The raw digest.
    pub sha256: [u8; 32],
    /// How many bytes were hashed.
    pub size: u64,
}

impl FileDigest {
    /// The digest as 64 lowercase hex digits.
    #[must_use]
    pub fn hex(&self) -> String {
        self.sha256
            .iter()
            .fold(String::with_capacity(64), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            })
    }

    /// The digest as RECORD writes it after `sha256=`: URL-safe base64
    /// without padding.
    #[must_use]
    pub fn record(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.sha256)
    }
}

/// Hashes everything `reader` yields.
pub fn sha256_reader(mut reader: impl Read) -> io::Result<FileDigest> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; BLOCK];
    let mut size = 0u64;
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..n]);
        size += n as u64;
    }
    Ok(FileDigest {
        sha256: hasher.finalize().into(),
        size,
    })
}

/// Hashes the file at `path`.
pub fn sha256_file(path: &Path) -> io::Result<FileDigest> {
    sha256_reader(File::open(path)?)
}

/// Hashes bytes already in memory.
#[must_use]
pub fn sha256_bytes(bytes: &[u8]) -> FileDigest {
    FileDigest {
        sha256: Sha256::digest(bytes).into(),
        size: bytes.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_input() {
        let digest = sha256_reader(io::empty()).unwrap();
        assert_eq!(digest.size, 0);
        assert_eq!(
            digest.hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            digest.record(),
            "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
        );
    }

    #[test]
    fn input_longer_than_a_block_hashes_as_one() {
        let bytes = vec![7u8; BLOCK * 2 + 5];
        let streamed = sha256_reader(&bytes[..]).unwrap();
        assert_eq!(streamed, sha256_bytes(&bytes));
        assert_eq!(streamed.size, bytes.len() as u64);
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = sha256_file(&dir.path().join("none")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
