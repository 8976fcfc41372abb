//! `rocm_sdk_devel/_devel.digest`: the BLAKE3 digest of the devel tar,
//! shipped next to it in the devel wheel (docs/devel-tar.md#the-digest-file).
//!
//! RECORD vouches for the tar with a SHA-256, which on one core is a third
//! of a first `rocm-sdk init`; BLAKE3 is about three times faster. The
//! digest file is itself listed in RECORD with a SHA-256, so checking the
//! tar against it is as strong as checking it against RECORD: RECORD
//! vouches for the file, the file for the tar.
//!
//! The file holds one row in RECORD's own format, naming the tar by its
//! file name: `_devel.tar,blake3=<URL-safe base64, no padding>,<size>`.

use std::io::{self, Read};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use pypa_formats::record::{RecordEntry, parse_record, render_record};

/// The digest file's name, in the devel wheel's pure package next to the
/// tar.
pub const DIGEST_FILE: &str = "_devel.digest";

/// The most bytes a digest file may hold: one row is under 200.
pub(crate) const DIGEST_FILE_LIMIT: u64 = 4096;

const ALGORITHM: &str = "blake3=";

/// What a digest file says about the tar next to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TarDigest {
    /// The tar's file name (`_devel.tar`, `_devel.tar.zst`, ...).
    pub tar_name: String,
    /// The BLAKE3 digest of the tar file's bytes.
    pub blake3: [u8; 32],
    /// The tar file's size in bytes.
    pub size: u64,
}

impl TarDigest {
    /// The digest of the tar named `tar_name` whose bytes `reader` yields.
    pub fn of_reader(tar_name: &str, mut reader: impl Read) -> io::Result<Self> {
        let mut hasher = blake3::Hasher::new();
        let size = io::copy(&mut reader, &mut hasher)?;
        Ok(Self {
            tar_name: tar_name.to_owned(),
            blake3: *hasher.finalize().as_bytes(),
            size,
        })
    }

    /// The BLAKE3 digest in hexadecimal, as `b3sum` prints it.
    pub fn blake3_hex(&self) -> String {
        blake3::Hash::from(self.blake3).to_hex().to_string()
    }

    /// The digest file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        render_record(&[RecordEntry {
            path: self.tar_name.clone(),
            hash: Some(format!(
                "{ALGORITHM}{}",
                URL_SAFE_NO_PAD.encode(self.blake3)
            )),
            size: Some(self.size),
        }])
        .into_bytes()
    }

    /// Reads a digest file's bytes; the error says what is wrong with them.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_owned())?;
        let rows = parse_record(text).map_err(|e| e.to_string())?;
        let [row] = rows.as_slice() else {
            return Err(format!("it holds {} rows, not one", rows.len()));
        };
        let blake3 = row
            .hash
            .as_deref()
            .and_then(|hash| hash.strip_prefix(ALGORITHM))
            .and_then(|encoded| URL_SAFE_NO_PAD.decode(encoded).ok())
            .and_then(|digest| <[u8; 32]>::try_from(digest).ok())
            .ok_or_else(|| format!("its row has no {ALGORITHM} digest of 32 bytes"))?;
        let size = row.size.ok_or_else(|| "its row has no size".to_owned())?;
        Ok(Self {
            tar_name: row.path.clone(),
            blake3,
            size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_file_round_trips_and_bad_ones_say_why() {
        let digest = TarDigest::of_reader("_devel.tar", &b"hello"[..]).unwrap();
        assert_eq!(digest.size, 5);
        // BLAKE3 of "hello", from the reference implementation's `b3sum`.
        assert_eq!(
            digest.blake3_hex(),
            "ea8f163db38682925e4491c5e58d4bb3506ef8c14eb78a86e908c5624a67200f"
        );
        let bytes = digest.to_bytes();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "_devel.tar,blake3=6o8WPbOGgpJeRJHF5Y1Ls1Bu-MFOt4qG6QjFYkpnIA8,5\n"
        );
        assert_eq!(TarDigest::parse(&bytes).unwrap(), digest);
        for (bytes, reason) in [
            (&b"\xff"[..], "not UTF-8"),
            (b"", "0 rows"),
            (b"a,,1\nb,,2\n", "2 rows"),
            (
                b"_devel.tar,sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ,5\n",
                "blake3=",
            ),
            (b"_devel.tar,blake3=AAAA,5\n", "32 bytes"),
            (
                b"_devel.tar,blake3=6o8WPbOGgpJeRJHF5Y1Ls1Bu-MFOt4qG6QjFYkpnIA8,\n",
                "no size",
            ),
        ] {
            let err = TarDigest::parse(bytes).unwrap_err();
            assert!(err.contains(reason), "{bytes:?}: {err}");
        }
    }
}
