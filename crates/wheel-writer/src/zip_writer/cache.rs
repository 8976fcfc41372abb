//! Content-keyed reuse of compressed members across wheels.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

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

/// The cache's contents: blobs by key, and which sizes they have.
#[derive(Debug, Default)]
struct Blobs {
    by_key: HashMap<BlobKey, Blob>,
    /// `(size, codec)` of every key: a member of another size cannot be in
    /// the cache, so it need not be hashed before it is compressed.
    sizes: HashSet<(u64, Codec)>,
    /// The writes in progress, in the order they began, with the sizes of
    /// their members of at least [`AWAITED_SIZE`] bytes.
    writing: BTreeMap<u64, HashSet<(u64, Codec)>>,
    next_write: u64,
}

/// Members of at least this size are worth waiting for: a write that
/// began later and has a member of the same size waits for the earlier
/// one to finish (see [`CompressionCache::wait_for_earlier`]) rather than
/// compress it a second time. Smaller members are compressed again.
pub(crate) const AWAITED_SIZE: u64 = 1 << 20;

/// A write in progress, known to the cache until it is dropped.
#[derive(Debug)]
pub(crate) struct Ticket<'c> {
    cache: &'c CompressionCache,
    id: u64,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.cache.lock().writing.remove(&self.id);
        self.cache.finished.notify_all();
    }
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
    blobs: Mutex<Blobs>,
    /// Signalled when a write in progress ends.
    finished: Condvar,
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
            entries: self.lock().by_key.len(),
            hits: self.hits.load(Ordering::Relaxed),
            bytes_reused: self.bytes_reused.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn get(&self, key: &BlobKey) -> Option<Blob> {
        let blob = self.lock().by_key.get(key).cloned();
        if blob.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
            self.bytes_reused.fetch_add(key.size, Ordering::Relaxed);
        }
        blob
    }

    /// Whether a member of `size` bytes compressed by `codec` may be in the
    /// cache (one of that size is); `false` is certain.
    pub(crate) fn may_hold(&self, size: u64, codec: Codec) -> bool {
        self.lock().sizes.contains(&(size, codec))
    }

    pub(crate) fn insert_all(&self, blobs: impl IntoIterator<Item = (BlobKey, Blob)>) {
        let mut map = self.lock();
        for (key, blob) in blobs {
            map.sizes.insert((key.size, key.codec));
            map.by_key.entry(key).or_insert(blob);
        }
    }

    /// Notes a write that begins, with the sizes of its members; it is
    /// known until the ticket is dropped (once its members are in the
    /// cache, or it failed).
    pub(crate) fn begin(&self, sizes: impl IntoIterator<Item = (u64, Codec)>) -> Ticket<'_> {
        let sizes = sizes
            .into_iter()
            .filter(|(size, _)| *size >= AWAITED_SIZE)
            .collect();
        let mut map = self.lock();
        let id = map.next_write;
        map.next_write += 1;
        map.writing.insert(id, sizes);
        Ticket { cache: self, id }
    }

    /// Whether a write that began before `ticket`'s and is still going
    /// has a member of `size` bytes by `codec` (always `false` below
    /// [`AWAITED_SIZE`]).
    pub(crate) fn written_before(&self, ticket: &Ticket<'_>, size: u64, codec: Codec) -> bool {
        self.lock()
            .writing
            .range(..ticket.id)
            .any(|(_, sizes)| sizes.contains(&(size, codec)))
    }

    /// Waits until no write that began before `ticket`'s and has a member
    /// of one of `sizes` is still going, so its members are in the cache
    /// (or it failed). Writes only wait for earlier ones, so they never
    /// wait for each other in a circle.
    pub(crate) fn wait_for_earlier(&self, ticket: &Ticket<'_>, sizes: &HashSet<(u64, Codec)>) {
        if sizes.is_empty() {
            return;
        }
        let mut map = self.lock();
        while map
            .writing
            .range(..ticket.id)
            .any(|(_, theirs)| !theirs.is_disjoint(sizes))
        {
            map = self
                .finished
                .wait(map)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Blobs> {
        // The map is only inserted into whole; a panic elsewhere cannot tear it.
        self.blobs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
