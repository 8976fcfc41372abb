//! The `RECORD` file: one CSV row per member with its hash and size (the
//! codec is `pypa_formats::record`, shared with the install side).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use pypa_formats::record::RecordEntry;

/// What a sink learned about a member while writing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemberDigest {
    /// SHA-256 of the uncompressed bytes.
    pub sha256: [u8; 32],
    /// Uncompressed size in bytes.
    pub size: u64,
}

impl MemberDigest {
    /// The `RECORD` hash field: `sha256=` and URL-safe base64 without padding.
    pub fn record_hash(&self) -> String {
        format!("sha256={}", URL_SAFE_NO_PAD.encode(self.sha256))
    }
}

impl MemberDigest {
    /// The `RECORD` row for the member written at `path`.
    pub fn record_entry(&self, path: &str) -> RecordEntry {
        RecordEntry {
            path: path.to_owned(),
            hash: Some(self.record_hash()),
            size: Some(self.size),
        }
    }
}
