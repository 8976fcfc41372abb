//! How packages are written: codec, parallelism, timestamp.

/// The codec for wheel members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Raw deflate at a zlib level (1–9); 6 is zlib's and Python's default.
    Deflate {
        /// zlib compression level, 1 (fast) to 9 (small).
        level: u32,
    },
    /// No compression (the reference's `--no-wheel-compression`).
    Stored,
}

impl Default for Compression {
    fn default() -> Self {
        Self::Deflate { level: 6 }
    }
}

/// The earliest time a zip header can hold: 1980-01-01T00:00:00Z.
pub const ZIP_EPOCH: u64 = 315_532_800;

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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    compression: Compression,
    jobs: usize,
    source_date_epoch: Option<u64>,
}

impl WriteOptions {
    /// Sets the codec (default: deflate level 6).
    #[must_use]
    pub fn with_compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
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

    /// The codec.
    pub fn compression(&self) -> Compression {
        self.compression
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
        self.source_date_epoch.unwrap_or(ZIP_EPOCH).max(ZIP_EPOCH)
    }
}
