//! Where a write spends its time: wall time, CPU time and bytes per phase,
//! summed over every thread that worked on it (`therock-package build
//! --timings`, docs/performance.md).
//!
//! A phase's spans may run on several threads at once, so its wall time is
//! the sum of the spans' wall times ("busy time") and can exceed the
//! elapsed time of the write; its CPU time is the calling threads' own CPU
//! time over the same spans (`CLOCK_THREAD_CPUTIME_ID`, `GetThreadTimes` on
//! Windows), which is at most its busy time. Measuring costs two clock
//! reads per span (a chunk or a small member), and nothing when no
//! [`WriteTimings`] is given.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The phases of a wheel write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WritePhase {
    /// The cache look-up pass: every member read and hashed before any is
    /// compressed, to find members already compressed.
    Lookup,
    /// Reading member bytes for compression (including ELF patches applied
    /// while streaming).
    Read,
    /// SHA-256 and CRC-32 of the bytes written (RECORD and zip headers).
    Hash,
    /// Deflating.
    Compress,
    /// Writing the zip file: headers, compressed data, reused members,
    /// the central directory.
    Write,
}

impl WritePhase {
    /// Every phase, in pipeline order.
    pub const ALL: [Self; 5] = [
        Self::Lookup,
        Self::Read,
        Self::Hash,
        Self::Compress,
        Self::Write,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Lookup => "lookup",
            Self::Read => "read",
            Self::Hash => "hash",
            Self::Compress => "compress",
            Self::Write => "write",
        }
    }
}

/// Wall time, CPU time and bytes of one phase, added to from any thread.
#[derive(Debug, Default)]
pub struct PhaseTimes {
    wall_ns: AtomicU64,
    cpu_ns: AtomicU64,
    bytes: AtomicU64,
}

/// A snapshot of [`PhaseTimes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PhaseTotal {
    /// Summed wall time of the phase's spans.
    pub wall: Duration,
    /// Summed CPU time of the threads over those spans (zero where the
    /// platform has no per-thread clock).
    pub cpu: Duration,
    /// Bytes the phase handled (read, hashed, compressed or written).
    pub bytes: u64,
}

impl PhaseTimes {
    /// Starts a span on the calling thread; it counts when dropped.
    pub fn span(&self) -> Span<'_> {
        Span {
            times: self,
            wall: Instant::now(),
            cpu: thread_cpu_time(),
            bytes: 0,
        }
    }

    /// Adds a measured span.
    pub fn add(&self, wall: Duration, cpu: Duration, bytes: u64) {
        let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.wall_ns.fetch_add(ns(wall), Ordering::Relaxed);
        self.cpu_ns.fetch_add(ns(cpu), Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// What was measured so far.
    pub fn total(&self) -> PhaseTotal {
        PhaseTotal {
            wall: Duration::from_nanos(self.wall_ns.load(Ordering::Relaxed)),
            cpu: Duration::from_nanos(self.cpu_ns.load(Ordering::Relaxed)),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

/// A running measurement of one thread's work on a phase.
#[derive(Debug)]
pub struct Span<'t> {
    times: &'t PhaseTimes,
    wall: Instant,
    cpu: Option<Duration>,
    bytes: u64,
}

impl Span<'_> {
    /// Counts `bytes` handled in this span.
    pub fn add_bytes(&mut self, bytes: u64) {
        self.bytes += bytes;
    }
}

impl Drop for Span<'_> {
    fn drop(&mut self) {
        // CPU first: the CPU interval lies inside the wall interval.
        let cpu = match (self.cpu, thread_cpu_time()) {
            (Some(start), Some(end)) => end.saturating_sub(start),
            _ => Duration::ZERO,
        };
        self.times.add(self.wall.elapsed(), cpu, self.bytes);
    }
}

/// Starts a span of `phase` when timings are being taken.
pub(crate) fn span(timings: Option<&WriteTimings>, phase: WritePhase) -> Option<Span<'_>> {
    timings.map(|t| t.phase(phase).span())
}

/// The phases of wheel writes, shared by every thread of the writes.
#[derive(Debug, Default)]
pub struct WriteTimings {
    phases: [PhaseTimes; WritePhase::ALL.len()],
}

impl WriteTimings {
    /// Nothing measured yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The accumulator of `phase`.
    pub fn phase(&self, phase: WritePhase) -> &PhaseTimes {
        let index = WritePhase::ALL
            .iter()
            .position(|p| *p == phase)
            .expect("every phase is listed");
        &self.phases[index]
    }

    /// Every phase with what was measured, in pipeline order.
    pub fn totals(&self) -> Vec<(WritePhase, PhaseTotal)> {
        WritePhase::ALL
            .iter()
            .map(|p| (*p, self.phase(*p).total()))
            .collect()
    }
}

/// The CPU time the calling thread has used, where the platform can tell.
pub fn thread_cpu_time() -> Option<Duration> {
    clock::thread()
}

/// The CPU time the whole process has used (every thread, user and system).
pub fn process_cpu_time() -> Option<Duration> {
    clock::process()
}

#[cfg(unix)]
#[allow(unsafe_code)]
mod clock {
    use std::time::Duration;

    fn read(id: libc::clockid_t) -> Option<Duration> {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid, writable timespec for the call.
        if unsafe { libc::clock_gettime(id, &raw mut now) } != 0 {
            return None;
        }
        Some(Duration::new(
            u64::try_from(now.tv_sec).ok()?,
            u32::try_from(now.tv_nsec).ok()?,
        ))
    }

    pub(super) fn thread() -> Option<Duration> {
        read(libc::CLOCK_THREAD_CPUTIME_ID)
    }

    pub(super) fn process() -> Option<Duration> {
        read(libc::CLOCK_PROCESS_CPUTIME_ID)
    }
}

#[cfg(windows)]
#[allow(unsafe_code)]
mod clock {
    use std::time::Duration;

    use windows_sys::Win32::Foundation::{FILETIME, HANDLE};
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcess, GetCurrentThread, GetProcessTimes, GetThreadTimes,
    };

    type Times = unsafe extern "system" fn(
        HANDLE,
        *mut FILETIME,
        *mut FILETIME,
        *mut FILETIME,
        *mut FILETIME,
    ) -> windows_sys::core::BOOL;

    fn read(handle: HANDLE, times: Times) -> Option<Duration> {
        let zero = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
        // SAFETY: the pseudo-handle names the caller; the out-pointers are
        // four distinct FILETIMEs.
        let ok = unsafe {
            times(
                handle,
                &raw mut created,
                &raw mut exited,
                &raw mut kernel,
                &raw mut user,
            )
        };
        // FILETIME counts 100 ns ticks.
        let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
        (ok != 0).then(|| Duration::from_nanos((ticks(kernel) + ticks(user)) * 100))
    }

    pub(super) fn thread() -> Option<Duration> {
        // SAFETY: returns the calling thread's pseudo-handle; nothing to free.
        read(unsafe { GetCurrentThread() }, GetThreadTimes)
    }

    pub(super) fn process() -> Option<Duration> {
        // SAFETY: returns the calling process's pseudo-handle; nothing to free.
        read(unsafe { GetCurrentProcess() }, GetProcessTimes)
    }
}

#[cfg(not(any(unix, windows)))]
mod clock {
    use std::time::Duration;

    pub(super) fn thread() -> Option<Duration> {
        None
    }

    pub(super) fn process() -> Option<Duration> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_add_up_per_phase() {
        let timings = WriteTimings::new();
        for _ in 0..3 {
            let mut span = timings.phase(WritePhase::Compress).span();
            span.add_bytes(10);
        }
        let totals = timings.totals();
        let compress = totals
            .iter()
            .find(|(p, _)| *p == WritePhase::Compress)
            .unwrap()
            .1;
        assert_eq!(compress.bytes, 30);
        assert_eq!(
            totals
                .iter()
                .filter(|(p, _)| *p != WritePhase::Compress)
                .map(|(_, t)| t.bytes)
                .sum::<u64>(),
            0
        );
    }

    #[test]
    #[cfg(any(unix, windows))]
    fn the_clocks_read() {
        let before = thread_cpu_time().expect("a thread clock");
        // Burn a little CPU so the clock moves on coarse Windows ticks too.
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_time().unwrap() >= before);
        assert!(process_cpu_time().is_some());
    }
}
