//! The producer side of parallel compression: cut members into work, run it
//! on the pool, and hand numbered pieces to the writer.
//!
//! Memory stays bounded by a window of permits: a chunk takes a permit
//! before it is read and gives it back once the writer has written it, so
//! at most `window` chunks (≤ one chunk in, about as much out each) exist
//! at once whatever the size of the members or of the wheel.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use sha2::{Digest as _, Sha256};

use super::deflate::Codec;
use crate::sink::{check_size, read_member};
use crate::timings::{WritePhase, WriteTimings, span};
use crate::{Error, Member, MemberDigest};

/// How each member is obtained.
#[derive(Debug, Clone)]
pub(crate) enum MemberPlan {
    /// Read and compress it.
    Compress,
    /// Copy already-compressed bytes (from the cache or an earlier member).
    Reuse,
}

impl Codec {
    /// [`Codec::encode`] with the member named in errors.
    fn encode_member(self, member: &Member, input: &[u8], last: bool) -> Result<Vec<u8>, Error> {
        self.encode(input, last)
            .map_err(|message| Error::Compression {
                member: member.path().to_owned(),
                message,
            })
    }
}

/// The CRC-32 of a member or chunk and the bytes it covers.
///
/// libdeflate's CRC-32 (it picks PCLMULQDQ or VPCLMULQDQ where the CPU
/// has them: several times faster than flate2's, which zlib-rs computes
/// without them); chunks are combined by `crc32fast`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Crc {
    pub(crate) value: u32,
    pub(crate) len: u64,
}

impl Crc {
    pub(crate) fn of(bytes: &[u8]) -> Self {
        Self {
            value: libdeflater::crc32(bytes),
            len: bytes.len() as u64,
        }
    }
}

/// A unit of output, numbered by the producer in archive order.
#[derive(Debug)]
pub(crate) enum Piece<'w> {
    /// A whole small member.
    Whole {
        member: usize,
        data: Vec<u8>,
        crc32: Crc,
        digest: MemberDigest,
        /// Given back once the piece is written (or dropped unwritten).
        _permit: Permit<'w>,
    },
    /// One chunk of a large member.
    Chunk {
        member: usize,
        index: u64,
        data: Vec<u8>,
        crc32: Crc,
        _permit: Permit<'w>,
    },
    /// The end of a large member: its hash and size.
    End { member: usize, digest: MemberDigest },
    /// A member copied from earlier compressed bytes.
    Reuse { member: usize },
}

pub(crate) type Numbered<'w> = (usize, Result<Piece<'w>, Error>);

/// The chunks in flight on one pool: a counting semaphore shared by every
/// write on the pool (packages written at once share one memory bound),
/// and the input buffers of compressed chunks kept for the next chunks (a
/// fresh 4 MiB buffer per chunk cost a page fault and zeroing per 4 KiB,
/// a third of the CPU of reading).
///
/// A free place goes to the write that began first among those waiting:
/// the package started first (the largest) finishes first, and the others
/// take what it leaves (while it reads and hashes, for one). Shared
/// equally, a package that is cheap to compress but slow to hash would
/// wait behind the others' chunks and end last, alone on one core.
#[derive(Debug)]
pub(crate) struct Window {
    state: Mutex<WindowState>,
    changed: Condvar,
    spare: Mutex<Vec<Vec<u8>>>,
    /// Numbers the writes in the order they began.
    next_write: AtomicU64,
}

#[derive(Debug)]
struct WindowState {
    free: usize,
    /// How many producers of each write wait for a place.
    waiting: BTreeMap<u64, usize>,
}

impl Window {
    pub(crate) fn new(count: usize) -> Self {
        Self {
            state: Mutex::new(WindowState {
                free: count,
                waiting: BTreeMap::new(),
            }),
            changed: Condvar::new(),
            spare: Mutex::new(Vec::new()),
            next_write: AtomicU64::new(0),
        }
    }

    /// Numbers a write that begins now: its place among the writes.
    pub(crate) fn begin(&self) -> u64 {
        self.next_write.fetch_add(1, Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WindowState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn release(&self) {
        self.lock().free += 1;
        self.changed.notify_all();
    }
}

/// A chunk's place in a [`Window`], given back when dropped: once its
/// piece is written, or with the piece when a write stops early, so a
/// failed write leaves the window whole for the others.
#[derive(Debug)]
pub(crate) struct Permit<'w>(&'w Window);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// One write's permits from a [`Window`]; closing them stops this write's
/// producer only.
#[derive(Debug)]
pub(crate) struct Permits<'w> {
    window: &'w Window,
    /// The write's place in the order writes began.
    write: u64,
    closed: AtomicBool,
}

impl<'w> Permits<'w> {
    /// The permits of the write numbered `write` by [`Window::begin`].
    pub(crate) fn new(window: &'w Window, write: u64) -> Self {
        Self {
            window,
            write,
            closed: AtomicBool::new(false),
        }
    }

    /// A buffer of `len` bytes, reused when one is spare. Its bytes are
    /// whatever it held (they are read over): zeroing 4 MiB per chunk
    /// (what `read_to_end` does to spare capacity) was 1 % of a build.
    fn buffer(&self, len: usize) -> Vec<u8> {
        let spare = self
            .window
            .spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut buf = spare.unwrap_or_default();
        buf.resize(len, 0);
        buf
    }

    /// Gives a chunk's input buffer back once it is compressed and
    /// hashed. A buffer is taken after a permit; the hasher may still hold
    /// it after the permit was given back, at most `HASH_QUEUE` of them per
    /// write.
    fn give_back(&self, buf: Vec<u8>) {
        self.window
            .spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(buf);
    }

    /// Takes a permit, once no write that began earlier waits for one;
    /// `None` once closed.
    fn acquire(&self) -> Option<Permit<'w>> {
        let mut state = self.window.lock();
        *state.waiting.entry(self.write).or_default() += 1;
        let permit = loop {
            if self.closed.load(Ordering::Acquire) {
                break None;
            }
            if state.free > 0 && state.waiting.range(..self.write).next().is_none() {
                state.free -= 1;
                break Some(Permit(self.window));
            }
            state = self
                .window
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        };
        if let Some(count) = state.waiting.get_mut(&self.write) {
            *count -= 1;
            if *count == 0 {
                state.waiting.remove(&self.write);
            }
        }
        drop(state);
        // A later write may be next now.
        self.window.changed.notify_all();
        permit
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        // Under the lock, so a producer between its check and its wait
        // cannot miss the wake-up.
        let _state = self.window.lock();
        self.window.changed.notify_all();
    }
}

/// Walks the members in order, sending numbered pieces to the writer;
/// small members are read and compressed on the pool, large ones are read
/// here (hashing must be sequential) and their chunks compressed on the pool.
pub(crate) fn produce<'s>(
    scope: &rayon::Scope<'s>,
    members: &'s [Member],
    plan: &[MemberPlan],
    codec: Codec,
    permits: &'s Permits<'s>,
    tx: &Sender<Numbered<'s>>,
    timings: Option<&'s WriteTimings>,
) {
    let mut seq = 0;
    for (index, (member, plan)) in members.iter().zip(plan).enumerate() {
        if matches!(plan, MemberPlan::Reuse) {
            let _ = tx.send((seq, Ok(Piece::Reuse { member: index })));
            seq += 1;
            continue;
        }
        if member.source().size() <= codec.chunk {
            let Some(permit) = permits.acquire() else {
                return;
            };
            let tx = tx.clone();
            let number = seq;
            scope.spawn(move |_| {
                let _ = tx.send((
                    number,
                    compress_whole(index, member, codec, permit, timings),
                ));
            });
            seq += 1;
        } else if !produce_chunks(scope, index, member, codec, permits, tx, &mut seq, timings) {
            return;
        }
    }
}

fn compress_whole<'w>(
    index: usize,
    member: &Member,
    codec: Codec,
    permit: Permit<'w>,
    timings: Option<&WriteTimings>,
) -> Result<Piece<'w>, Error> {
    let mut read = span(timings, WritePhase::Read);
    let bytes = read_member(member)?;
    let size = bytes.len() as u64;
    if let Some(read) = read.as_mut() {
        read.add_bytes(size);
    }
    drop(read);
    let mut hash = span(timings, WritePhase::Hash);
    let crc32 = Crc::of(&bytes);
    let digest = MemberDigest {
        sha256: Sha256::digest(&bytes).into(),
        size,
    };
    if let Some(hash) = hash.as_mut() {
        hash.add_bytes(size);
    }
    drop(hash);
    let mut compress = span(timings, WritePhase::Compress);
    let data = codec.encode_member(member, &bytes, true)?;
    if let Some(compress) = compress.as_mut() {
        compress.add_bytes(size);
    }
    drop(compress);
    Ok(Piece::Whole {
        member: index,
        data,
        crc32,
        digest,
        _permit: permit,
    })
}

/// Chunks read but not yet hashed, at most: the memory bound of the
/// permits grows by as many chunks.
const HASH_QUEUE: usize = 4;

/// Streams one large member in chunks; `false` when the write must stop.
#[allow(clippy::too_many_arguments)]
fn produce_chunks<'s>(
    scope: &rayon::Scope<'s>,
    index: usize,
    member: &'s Member,
    codec: Codec,
    permits: &'s Permits<'s>,
    tx: &Sender<Numbered<'s>>,
    seq: &mut usize,
    timings: Option<&'s WriteTimings>,
) -> bool {
    let fail = |seq: &mut usize, error: Error| {
        let _ = tx.send((*seq, Err(error)));
        *seq += 1;
        false
    };
    let source = member.source();
    let io_error = |e| Error::Source {
        origin: source.origin(),
        member: member.path().to_owned(),
        source: e,
    };
    let mut reader = match source.open() {
        Ok(reader) => reader,
        Err(e) => return fail(seq, io_error(e)),
    };
    let size = source.size();
    // SHA-256 must see the chunks in order; a thread of its own does it
    // while this one reads the next chunk, so reading and hashing a large
    // member take two cores, not one after the other on one.
    let (ended, sha) = std::thread::scope(|threads| {
        // Bounded: when hashing is slower than compressing (long runs), the
        // reader waits instead of holding ever more chunks.
        let (to_hash, chunks_to_hash) = std::sync::mpsc::sync_channel::<Arc<Vec<u8>>>(HASH_QUEUE);
        let hasher = threads.spawn(move || {
            let mut sha = Sha256::new();
            for buf in chunks_to_hash {
                let mut hash = span(timings, WritePhase::Hash);
                sha.update(&buf[..]);
                if let Some(hash) = hash.as_mut() {
                    hash.add_bytes(buf.len() as u64);
                }
                drop(hash);
                if let Some(buf) = Arc::into_inner(buf) {
                    permits.give_back(buf);
                }
            }
            sha
        });
        let ended = read_chunks(
            scope,
            index,
            member,
            &mut *reader,
            codec,
            permits,
            tx,
            seq,
            timings,
            &to_hash,
        );
        drop(to_hash);
        (ended, hasher.join().expect("the hasher thread panicked"))
    });
    let read_total = match ended {
        Ok(read_total) => read_total,
        Err(None) => return false,
        Err(Some(error)) => return fail(seq, error),
    };
    // The source must end where it said it would.
    match reader.read(&mut [0u8; 1]) {
        Ok(0) => {}
        Ok(_) => return fail(seq, size_error(member, read_total + 1)),
        Err(e) => return fail(seq, io_error(e)),
    }
    let digest = MemberDigest {
        sha256: sha.finalize().into(),
        size,
    };
    let _ = tx.send((
        *seq,
        Ok(Piece::End {
            member: index,
            digest,
        }),
    ));
    *seq += 1;
    true
}

/// Reads the chunks of a large member, sends each to `to_hash` and
/// spawns its compression; the bytes read, or why it stopped (`None`: the
/// write is being stopped).
#[allow(clippy::too_many_arguments)]
fn read_chunks<'s>(
    scope: &rayon::Scope<'s>,
    index: usize,
    member: &'s Member,
    reader: &mut (dyn Read + Send + '_),
    codec: Codec,
    permits: &'s Permits<'s>,
    tx: &Sender<Numbered<'s>>,
    seq: &mut usize,
    timings: Option<&'s WriteTimings>,
    to_hash: &std::sync::mpsc::SyncSender<Arc<Vec<u8>>>,
) -> Result<u64, Option<Error>> {
    let source = member.source();
    let io_error = |e| Error::Source {
        origin: source.origin(),
        member: member.path().to_owned(),
        source: e,
    };
    let size = source.size();
    let chunks = size.div_ceil(codec.chunk);
    let mut read_total = 0;
    for chunk in 0..chunks {
        let Some(permit) = permits.acquire() else {
            return Err(None);
        };
        let want = codec.chunk.min(size - read_total);
        let mut buf = permits.buffer(want as usize);
        let mut read = span(timings, WritePhase::Read);
        let got = match read_full(&mut *reader, &mut buf) {
            Ok(got) => got,
            Err(e) => return Err(Some(io_error(e))),
        };
        if let Some(read) = read.as_mut() {
            read.add_bytes(got as u64);
        }
        drop(read);
        read_total += got as u64;
        if got != buf.len() {
            return Err(Some(size_error(member, read_total)));
        }
        let buf = Arc::new(buf);
        let _ = to_hash.send(Arc::clone(&buf));
        let job = ChunkJob {
            member_index: index,
            member,
            chunk,
            last: chunk + 1 == chunks,
            buf,
            permit,
        };
        let number = *seq;
        *seq += 1;
        // Mostly runs (a kpack library's zeroed device code): encoded
        // here, so the member goes at the speed of reading and hashing
        // rather than waiting for the pool behind other packages' chunks.
        if codec.is_cheap(&job.buf) {
            let _ = tx.send((number, job.run(codec, permits, timings)));
        } else {
            let tx = tx.clone();
            scope.spawn(move |_| {
                let _ = tx.send((number, job.run(codec, permits, timings)));
            });
        }
    }
    Ok(read_total)
}

/// One chunk of a large member, read and waiting to be encoded.
struct ChunkJob<'s, 'w> {
    member_index: usize,
    member: &'s Member,
    chunk: u64,
    last: bool,
    buf: Arc<Vec<u8>>,
    permit: Permit<'w>,
}

impl<'w> ChunkJob<'_, 'w> {
    /// CRC-32 and deflate of the chunk; its input buffer goes back to
    /// `permits` if the hasher is done with it.
    fn run(
        self,
        codec: Codec,
        permits: &Permits<'w>,
        timings: Option<&WriteTimings>,
    ) -> Result<Piece<'w>, Error> {
        let Self {
            member_index,
            member,
            chunk,
            last,
            buf,
            permit,
        } = self;
        let hash = span(timings, WritePhase::Hash);
        let crc32 = Crc::of(&buf);
        drop(hash);
        let mut compress = span(timings, WritePhase::Compress);
        let piece = codec
            .encode_member(member, &buf, last)
            .inspect(|_| {
                if let Some(compress) = compress.as_mut() {
                    compress.add_bytes(buf.len() as u64);
                }
            })
            .map(|data| Piece::Chunk {
                member: member_index,
                index: chunk,
                data,
                crc32,
                _permit: permit,
            });
        drop(compress);
        // Whichever of this job and the hasher is done last keeps the
        // buffer for the next chunk.
        if let Some(buf) = Arc::into_inner(buf) {
            permits.give_back(buf);
        }
        piece
    }
}

/// Reads until `buf` is full or the reader ends; the bytes read.
fn read_full(reader: &mut (dyn Read + Send + '_), buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn size_error(member: &Member, actual: u64) -> Error {
    check_size(member, actual).expect_err("sizes differ")
}

/// Hashes a member without compressing it (for cache look-ups).
pub(crate) fn hash_member(
    member: &Member,
    timings: Option<&WriteTimings>,
) -> Result<MemberDigest, Error> {
    let mut lookup = span(timings, WritePhase::Lookup);
    let source = member.source();
    let io_error = |e| Error::Source {
        origin: source.origin(),
        member: member.path().to_owned(),
        source: e,
    };
    let mut reader = source.open().map_err(io_error)?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(e)),
        };
        sha.update(&buf[..n]);
        total += n as u64;
        if total > source.size() {
            break;
        }
    }
    check_size(member, total)?;
    if let Some(lookup) = lookup.as_mut() {
        lookup.add_bytes(total);
    }
    Ok(MemberDigest {
        sha256: sha.finalize().into(),
        size: total,
    })
}
