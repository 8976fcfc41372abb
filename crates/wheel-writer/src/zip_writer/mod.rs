//! The wheel container: a zip file written in member order, with members
//! compressed on a thread pool and reused from a [`CompressionCache`].

mod cache;
mod deflate;
mod format;
mod producer;
mod writer;

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, mpsc};

use rayon::prelude::*;

use cache::{AWAITED_SIZE, Blob, BlobKey, Ticket};
pub use cache::{CacheStats, CompressionCache};
use deflate::Codec;
use format::DosDateTime;
use producer::{MemberPlan, Permits, Window, hash_member};
use writer::{Reuse, Reused, ZipOutput};

use crate::options::WriteOptions;
use crate::sink::ArchiveSink;
use crate::timings::{self, WritePhase, WriteTimings};
use crate::{Error, Member, MemberDigest};

/// Chunks in flight per thread; enough to keep every thread busy while the
/// writer drains, small enough to bound memory (see `producer`).
const WINDOW_PER_JOB: usize = 2;
/// Upper bound of chunk input in flight on very large machines (as much
/// again is held compressed).
const MAX_WINDOW_BYTES: u64 = 512 << 20;

/// The chunks in flight for `jobs` threads writing `writers` archives at
/// once, in chunks of `chunk` bytes.
fn window_chunks(jobs: usize, writers: usize, chunk: u64) -> usize {
    let most = usize::try_from(MAX_WINDOW_BYTES / chunk).unwrap_or(usize::MAX);
    (jobs * WINDOW_PER_JOB + 2 * writers.max(1)).min(most.max(2))
}

/// Compression threads and the window of chunks in flight on them.
#[derive(Debug)]
struct Workers {
    pool: rayon::ThreadPool,
    window: Window,
    jobs: usize,
}

impl Workers {
    fn new(jobs: usize, window: usize) -> Result<Self, Error> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .thread_name(|i| format!("wheel-deflate-{i}"))
            .build()
            .map_err(|e| Error::ThreadPool {
                jobs,
                message: e.to_string(),
            })?;
        Ok(Self {
            pool,
            window: Window::new(window),
            jobs,
        })
    }
}

/// Compression threads shared by wheel writes that run at the same time
/// (set with [`WriteOptions::with_pool`]): packages written at once
/// compress on the same cores, so one package's sequential part (reading
/// and hashing a large member, its last chunks) leaves no core idle while
/// another has work, and the chunks in flight of all of them stay within
/// one memory bound. Without one, each write makes a pool of its own.
///
/// Call the writes from threads outside the pool.
#[derive(Clone)]
pub struct WorkerPool(Arc<Workers>);

impl WorkerPool {
    /// A pool of `options`' threads ([`WriteOptions::effective_jobs`])
    /// for up to `writers` writes at once: the window of chunks in flight
    /// is `2 × threads + 2 × writers` chunks of `options`' chunk size (at
    /// most 512 MiB of input), shared by the writes.
    pub fn new(options: &WriteOptions, writers: usize) -> Result<Self, Error> {
        let jobs = options.effective_jobs();
        let window = window_chunks(jobs, writers, options.chunk_size());
        Ok(Self(Arc::new(Workers::new(jobs, window)?)))
    }

    /// Its threads.
    pub fn jobs(&self) -> usize {
        self.0.jobs
    }
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("jobs", &self.0.jobs)
            .finish_non_exhaustive()
    }
}

/// The same pool, not an equal one.
impl PartialEq for WorkerPool {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for WorkerPool {}

/// How the members of one `write_members` call are obtained, index by index.
#[derive(Debug)]
struct MemberPlans {
    /// Compress or reuse, per member.
    plans: Vec<MemberPlan>,
    /// Where a reused member's compressed bytes are.
    reused: Vec<Option<Reused>>,
    /// The digest of each member hashed before writing (see `plan`), which
    /// the written bytes must match.
    digests: Vec<Option<MemberDigest>>,
}

/// Members of a finished archive, for the cache once the file is in place.
#[derive(Debug)]
pub(crate) struct CacheOffer<'c> {
    cache: Option<&'c CompressionCache>,
    blobs: Vec<(BlobKey, Blob)>,
    /// Dropped once the blobs are in, so a write waiting for this one
    /// finds them (dropped without them when the archive was not kept).
    ticket: Option<Ticket<'c>>,
}

impl CacheOffer<'_> {
    /// Lets the cache reuse this archive's compressed members.
    pub(crate) fn accept(self) {
        if let Some(cache) = self.cache {
            cache.insert_all(self.blobs);
        }
        drop(self.ticket);
    }
}

/// A zip file being written; `finish` writes the central directory.
pub(crate) struct ZipSink<'c> {
    out: ZipOutput,
    workers: Arc<Workers>,
    /// This write's place among those on the same pool (earlier ones get
    /// chunk places first).
    write: u64,
    codec: Codec,
    cache: Option<&'c CompressionCache>,
    /// Members compressed by this sink, offered to the cache once the
    /// archive is complete.
    new_blobs: Vec<(BlobKey, Blob)>,
    /// This write, known to the cache from its first members on.
    ticket: Option<Ticket<'c>>,
    timings: Option<&'c WriteTimings>,
}

impl std::fmt::Debug for ZipSink<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZipSink")
            .field("path", &self.out.path())
            .field("jobs", &self.workers.jobs)
            .finish_non_exhaustive()
    }
}

impl<'c> ZipSink<'c> {
    /// Writes a zip into `file` (empty, opened for reading and writing);
    /// `path` names it in errors.
    pub(crate) fn new(
        file: File,
        path: PathBuf,
        options: &WriteOptions,
        cache: Option<&'c CompressionCache>,
    ) -> Result<Self, Error> {
        let workers = if let Some(pool) = options.pool() {
            Arc::clone(&pool.0)
        } else {
            let jobs = options.effective_jobs();
            Arc::new(Workers::new(
                jobs,
                window_chunks(jobs, 1, options.chunk_size()),
            )?)
        };
        let codec = Codec::new(options);
        let dos = DosDateTime::from_unix(options.timestamp());
        Ok(Self {
            out: ZipOutput::new(Arc::new(file), path, dos),
            write: workers.window.begin(),
            workers,
            codec,
            cache,
            new_blobs: Vec::new(),
            ticket: None,
            timings: None,
        })
    }

    /// Adds the time of each phase to `timings` when given.
    pub(crate) fn with_timings(mut self, timings: Option<&'c WriteTimings>) -> Self {
        self.timings = timings;
        self
    }

    /// Writes the central directory and end records and flushes. Returns
    /// what the cache may learn once the caller has committed the file.
    pub(crate) fn finish(self) -> Result<CacheOffer<'c>, Error> {
        let mut span = timings::span(self.timings, WritePhase::Write);
        let written = self.out.finish()?;
        if let Some(span) = span.as_mut() {
            span.add_bytes(written);
        }
        Ok(CacheOffer {
            cache: self.cache,
            blobs: self.new_blobs,
            ticket: self.ticket,
        })
    }

    fn key(&self, digest: &MemberDigest) -> BlobKey {
        BlobKey {
            sha256: digest.sha256,
            size: digest.size,
            codec: self.codec,
        }
    }

    /// With a cache: hash first (in parallel) every member that could be
    /// copied, and decide which ones are; identical members in one archive
    /// are compressed once. A member can only be copied if the cache holds
    /// one of its size, another member of the archive has its size, or a
    /// write that began earlier and is still going has a member of its
    /// size (of at least [`AWAITED_SIZE`] bytes: this write then waits for
    /// that one before deciding); every other member is compressed without
    /// the extra read. Without a cache: compress everything.
    fn plan(&mut self, members: &[Member]) -> Result<MemberPlans, Error> {
        let Some(cache) = self.cache else {
            return Ok(MemberPlans {
                plans: vec![MemberPlan::Compress; members.len()],
                reused: vec![None; members.len()],
                digests: vec![None; members.len()],
            });
        };
        let mut members_of_size = HashMap::<u64, usize>::new();
        for member in members {
            *members_of_size.entry(member.source().size()).or_default() += 1;
        }
        let codec = self.codec;
        let ticket = self
            .ticket
            .get_or_insert_with(|| cache.begin(members.iter().map(|m| (m.source().size(), codec))));
        let ticket = &*ticket;
        let awaited = |member: &Member| {
            let size = member.source().size();
            size >= AWAITED_SIZE && cache.written_before(ticket, size, codec)
        };
        let candidate = |member: &Member| {
            let size = member.source().size();
            members_of_size[&size] > 1 || cache.may_hold(size, codec) || awaited(member)
        };
        let timings = self.timings;
        let digests = self.workers.pool.install(|| {
            members
                .par_iter()
                .map(|member| {
                    candidate(member)
                        .then(|| hash_member(member, timings))
                        .transpose()
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        let sizes = members
            .iter()
            .filter(|member| awaited(member))
            .map(|member| (member.source().size(), codec))
            .collect();
        cache.wait_for_earlier(ticket, &sizes);
        let mut plans = Vec::with_capacity(members.len());
        let mut reused = Vec::with_capacity(members.len());
        let mut first_in_archive = HashMap::new();
        for (index, digest) in digests.iter().enumerate() {
            let Some(digest) = digest else {
                plans.push(MemberPlan::Compress);
                reused.push(None);
                continue;
            };
            let key = self.key(digest);
            let from = if let Some(blob) = cache.get(&key) {
                Some(Reuse::Blob(blob))
            } else if let Some(&earlier) = first_in_archive.get(&key) {
                Some(Reuse::Member(earlier))
            } else {
                first_in_archive.insert(key, index);
                None
            };
            plans.push(if from.is_some() {
                MemberPlan::Reuse
            } else {
                MemberPlan::Compress
            });
            reused.push(from.map(|from| Reused {
                from,
                digest: *digest,
            }));
        }
        Ok(MemberPlans {
            plans,
            reused,
            digests,
        })
    }
}

impl ArchiveSink for ZipSink<'_> {
    fn write_members(&mut self, members: &[Member]) -> Result<Vec<MemberDigest>, Error> {
        let MemberPlans {
            plans: plan,
            reused: reuse,
            digests: expected,
        } = self.plan(members)?;
        let workers = Arc::clone(&self.workers);
        let permits = &Permits::new(&workers.window, self.write);
        let (tx, rx) = mpsc::channel();
        let codec = self.codec;
        let timings = self.timings;
        let Self { out, .. } = self;
        let pool = &workers.pool;
        let first_member = out.entry_count();
        let reuse = &reuse;
        let result = std::thread::scope(|threads| {
            let writer = threads.spawn(move || {
                let result = out.consume(rx, members, reuse, codec, timings);
                if result.is_err() {
                    permits.close();
                }
                result
            });
            pool.in_place_scope(|scope| {
                producer::produce(scope, members, &plan, codec, permits, &tx, timings);
            });
            drop(tx);
            writer.join().expect("the zip writer thread panicked")
        });
        let digests = result?;
        for ((member, got), want) in members.iter().zip(&digests).zip(&expected) {
            if want.is_some_and(|want| want != *got) {
                return Err(Error::ContentChanged {
                    origin: member.source().origin(),
                    member: member.path().to_owned(),
                });
            }
        }
        if self.cache.is_some() {
            let file = self.out.file();
            for (index, digest) in digests.iter().enumerate() {
                if matches!(plan[index], MemberPlan::Compress) {
                    let entry = self.out.entry(first_member + index);
                    let blob = Blob {
                        file: Arc::clone(&file),
                        offset: entry.local_offset + entry.local_len(),
                        compressed_size: entry.compressed_size,
                        crc32: entry.crc32,
                    };
                    let key = self.key(digest);
                    self.new_blobs.push((key, blob));
                }
            }
        }
        Ok(digests)
    }
}
