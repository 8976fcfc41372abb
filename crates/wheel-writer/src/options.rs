//! How packages are written: codec, parallelism, timestamp.

/// The codec for wheel members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Raw deflate by libdeflate at a level of [`Compression::LEVELS`]:
    /// 1 (fast) to 12 (small); other levels are clamped to them.
    Deflate {
        /// libdeflate's compression level.
        level: u32,
    },
    /// No compression (the reference's `--no-wheel-compression`).
    Stored,
}

impl Compression {
    /// The default deflate level: libdeflate's 6, smaller than Python's
    /// `zipfile` at zlib level 6 on the same members and several times
    /// faster (`docs/wheel-writer.md` has the measurements).
    pub const DEFAULT_LEVEL: u32 = 6;
    /// The levels libdeflate offers.
    pub const LEVELS: std::ops::RangeInclusive<u32> = 1..=12;
}

impl Default for Compression {
    fn default() -> Self {
        Self::Deflate {
            level: Self::DEFAULT_LEVEL,
        }
    }
}

/// The default size of the pieces a large member is cut into.
pub const DEFAULT_CHUNK_SIZE: u64 = 4 << 20;
/// The chunk sizes [`WriteOptions::with_chunk_size`] accepts.
pub const CHUNK_SIZES: std::ops::RangeInclusive<u64> = (64 << 10)..=(64 << 20);

pub use pypa_formats::epoch::ZIP_EPOCH;

use crate::zip_writer::WorkerPool;

/// The most compression threads per core a run starts, whatever was asked.
pub const MAX_JOBS_PER_CORE: usize = 4;

/// Options shared by every package written in one run.
///
/// Build one with [`WriteOptions::default`] and the `with_*` methods:
///
/// ```
/// use wheel_writer::{Compression, WriteOptions};
/// let options = WriteOptions::default()
///     .with_jobs(4)
///     .with_source_date_epoch(Some(1_700_000_000))
///     .with_compression(Compression::Stored);
/// assert_eq!(options.jobs(), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    compression: Compression,
    chunk_size: u64,
    jobs: usize,
    source_date_epoch: Option<u64>,
    pool: Option<WorkerPool>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            compression: Compression::default(),
            chunk_size: DEFAULT_CHUNK_SIZE,
            jobs: 0,
            source_date_epoch: None,
            pool: None,
        }
    }
}

impl WriteOptions {
    /// Sets the codec (default: deflate level 6).
    #[must_use]
    pub fn with_compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Sets the size of the pieces a large member is cut into to compress
    /// them in parallel (default 4 MiB), clamped to [`CHUNK_SIZES`]. Larger
    /// chunks compress a little smaller with libdeflate and take more
    /// memory: up to `2 × jobs + 2` chunks are in flight, in and out.
    #[must_use]
    pub fn with_chunk_size(mut self, bytes: u64) -> Self {
        self.chunk_size = bytes.clamp(*CHUNK_SIZES.start(), *CHUNK_SIZES.end());
        self
    }

    /// Sets the number of compression threads; 0 (the default) means one
    /// per core. More than [`MAX_JOBS_PER_CORE`] per core is capped (see
    /// [`WriteOptions::effective_jobs`]).
    #[must_use]
    pub fn with_jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs;
        self
    }

    /// Sets the timestamp written into every header, in seconds since the
    /// Unix epoch (the caller reads `SOURCE_DATE_EPOCH`). `None` (the default)
    /// means 1980-01-01T00:00:00Z; earlier values are raised to it.
    #[must_use]
    pub fn with_source_date_epoch(mut self, epoch: Option<u64>) -> Self {
        self.source_date_epoch = epoch;
        self
    }

    /// Compresses on `pool`'s threads, shared with the other writes given
    /// it, instead of a pool of this write's own (see [`WorkerPool`]);
    /// `jobs` then only sizes pools made without one. The bytes written
    /// are the same either way.
    #[must_use]
    pub fn with_pool(mut self, pool: WorkerPool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// The shared pool, if any.
    pub fn pool(&self) -> Option<&WorkerPool> {
        self.pool.as_ref()
    }

    /// The codec.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The chunk size, in bytes.
    pub fn chunk_size(&self) -> u64 {
        self.chunk_size
    }

    /// The requested number of threads (0: one per core).
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// The number of threads actually used: one per core when none was
    /// asked for, else the request capped at [`MAX_JOBS_PER_CORE`] per core
    /// (compression is CPU-bound, so more threads only cost memory and
    /// start-up time: thousands of them made a 0.1 s build take minutes).
    pub fn effective_jobs(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        if self.jobs == 0 {
            cores
        } else {
            self.jobs.min(cores * MAX_JOBS_PER_CORE)
        }
    }

    /// The timestamp written into headers, in seconds since the Unix epoch.
    pub fn timestamp(&self) -> u64 {
        pypa_formats::epoch::member_mtime(self.source_date_epoch)
    }
}
