//! Content-keyed reuse of compressed members across wheels.

use std::collections::HashMap;
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::deflate::Codec;

/// Identifies compressed bytes: the content and the codec that made them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BlobKey {
    pub(crate) sha256: [u8; 32],
    pub(crate) size: u64,
    pub(crate) codec: Codec,
}

/// Where compressed bytes already sit: a byte range of a written wheel.
///
/// The file handle stays open, so the bytes remain readable even after the
/// wheel was renamed into place (or removed by someone else).
#[derive(Debug, Clone)]
pub(crate) struct Blob {
    pub(crate) file: Arc<File>,
    pub(crate) offset: u64,
    pub(crate) compressed_size: u64,
    pub(crate) crc32: u32,
}

/// Compressed members shared between wheel writes, keyed by content hash.
///
/// Pass the same cache to every [`crate::WheelBuilder::write`] of a run:
/// a member whose content (SHA-256 and size) and codec match one already
/// written is copied from that wheel instead of compressed again. The
/// output is byte-identical to writing without a cache. The cache holds
/// one open file handle per wheel and a few dozen bytes per member; the
/// compressed bytes stay in the wheels themselves.
#[derive(Debug, Default)]
pub struct CompressionCache {
    blobs: Mutex<HashMap<BlobKey, Blob>>,
    hits: AtomicU64,
    bytes_reused: AtomicU64,
}

/// Counters of a [`CompressionCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Distinct compressed members held.
    pub entries: usize,
    /// Members copied instead of compressed.
    pub hits: u64,
    /// Uncompressed bytes whose compression was skipped.
    pub bytes_reused: u64,
}

impl CompressionCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Current counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            entries: self.lock().len(),
            hits: self.hits.load(Ordering::Relaxed),
            bytes_reused: self.bytes_reused.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn get(&self, key: &BlobKey) -> Option<Blob> {
        let blob = self.lock().get(key).cloned();
        if blob.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
            self.bytes_reused.fetch_add(key.size, Ordering::Relaxed);
        }
        blob
    }

    pub(crate) fn insert_all(&self, blobs: impl IntoIterator<Item = (BlobKey, Blob)>) {
        let mut map = self.lock();
        for (key, blob) in blobs {
            map.entry(key).or_insert(blob);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<BlobKey, Blob>> {
        // The map is only inserted into whole; a panic elsewhere cannot tear it.
        self.blobs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
