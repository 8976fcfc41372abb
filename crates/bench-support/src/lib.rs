//! What the benchmarks share: running a child to completion and reading its
//! own wall time, CPU time and peak RSS (`wait4`), the same three for work
//! done inside the benchmark process ([`measure_in_process`], [`per_call`]),
//! summarising runs, and the reference's baselines written in Python (a
//! devel unpack with `tarfile`, wheels zipped by `zipfile` at level 6).
//!
//! A child's peak RSS counts what it inherited at `fork`, so a benchmark
//! process holding much memory should measure through a small helper
//! process (see the `rocm-sdk` benchmark).
//!
//! Measuring a program, and work done in process, from a benchmark:
//!
//! ```
//! use std::process::Command;
//! use bench_support::{measure, median, print_row};
//!
//! # #[cfg(unix)] {
//! let runs: Vec<_> = (0..3)
//!     .map(|_| measure(&mut Command::new("true")))
//!     .collect::<Result<_, String>>()?;
//! print_row("true", median(&runs));
//! # }
//! let (sample, sum) = bench_support::measure_in_process(|| (0..1000_u64).sum::<u64>());
//! print_row("sum in process", sample);
//! # assert_eq!(sum, 499_500);
//! # Ok::<(), String>(())
//! ```
#![allow(
    clippy::print_stdout,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
#![allow(
    unsafe_code,
    reason = "wait4 (GetProcessTimes on Windows) is the only way to read one child's usage"
)]

use std::io::Read;
use std::process::Command;
use std::time::{Duration, Instant};

/// The Python baseline of a devel unpack, the way the reference does it:
/// `tarfile` extracts directories and files, then links are rewritten (file
/// links become hard links to the final file, except the compiler links and
/// directory links), RECORD is appended and the tar removed. Run it as
/// `python3 -c PYTHON_DEVEL_UNPACK SITE_PACKAGES`.
pub const PYTHON_DEVEL_UNPACK: &str = include_str!("devel_unpack.py");

/// Re-zips every wheel of a directory with Python's `zipfile` at zlib level
/// 6 (same members, names and order) and prints one tab-separated line per
/// wheel: name, our bytes, zipfile's bytes, and the same over the members'
/// compressed data. Run it as `python3 -c REZIP_ZIPFILE_6 DIST`; use
/// [`zipfile_level_6_sizes`].
pub const REZIP_ZIPFILE_6: &str = include_str!("rezip_zipfile6.py");

/// A wheel's size next to the same members zipped by Python's `zipfile` at
/// level 6.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelSize {
    /// The wheel's file name.
    pub name: String,
    /// Our wheel, in bytes.
    pub ours: u64,
    /// The same members zipped by `zipfile` at level 6, in bytes.
    pub zipfile: u64,
    /// Our members' compressed data alone.
    pub ours_data: u64,
    /// `zipfile`'s members' compressed data alone.
    pub zipfile_data: u64,
}

/// Every wheel of `dist` next to the same members zipped by Python's
/// `zipfile` at level 6 (the reference's codec path).
pub fn zipfile_level_6_sizes(dist: &std::path::Path) -> Result<Vec<WheelSize>, String> {
    let out = Command::new("python3")
        .args(["-c", REZIP_ZIPFILE_6])
        .arg(dist)
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "re-zipping {} failed: {}",
            dist.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let number = |i: usize| {
                fields
                    .get(i)
                    .and_then(|f| f.parse().ok())
                    .ok_or_else(|| format!("unexpected line from the re-zip script: {line}"))
            };
            Ok(WheelSize {
                name: fields[0].to_owned(),
                ours: number(1)?,
                zipfile: number(2)?,
                ours_data: number(3)?,
                zipfile_data: number(4)?,
            })
        })
        .collect()
}

/// Prints [`zipfile_level_6_sizes`] as a table with a total line.
pub fn print_zipfile_comparison(sizes: &[WheelSize]) {
    let percent = |ours: u64, theirs: u64| (ours as f64 / theirs as f64 - 1.0) * 100.0;
    println!(
        "  {:<64} {:>13} {:>13} {:>8}",
        "wheel", "ours", "zipfile -6", "size"
    );
    for size in sizes {
        println!(
            "  {:<64} {:>13} {:>13} {:>+7.2}%",
            size.name,
            size.ours,
            size.zipfile,
            percent(size.ours, size.zipfile)
        );
    }
    let ours: u64 = sizes.iter().map(|s| s.ours).sum();
    let theirs: u64 = sizes.iter().map(|s| s.zipfile).sum();
    println!(
        "  {:<64} {:>13} {:>13} {:>+7.2}%",
        "all wheels",
        ours,
        theirs,
        percent(ours, theirs)
    );
}

/// One measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Spawn to exit.
    pub wall: Duration,
    /// User plus system CPU of the child.
    pub cpu: Duration,
    /// The child's peak resident set, in KiB.
    pub max_rss_kib: i64,
}

/// Runs `command` to completion and measures it; a failed run (non-zero
/// exit, signal) is an error carrying its stderr when that was piped.
pub fn measure(command: &mut Command) -> Result<Sample, String> {
    // On Linux a child's peak RSS starts at its parent's high-water mark
    // (exec records the mm it replaces); reset ours so a large buffer the
    // caller once held is not reported as the child's.
    reset_peak_rss();
    let start = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    // Drain a piped stderr first so the child cannot block on a full pipe.
    let mut errors = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut errors);
    }
    let (cpu, max_rss_kib) =
        reap(&mut child).map_err(|failure| format!("{command:?} failed ({failure}): {errors}"))?;
    Ok(Sample {
        wall: start.elapsed(),
        cpu,
        max_rss_kib,
    })
}

/// Waits for `child` and reads its CPU time and peak RSS (KiB); `Err` says
/// how it failed.
#[cfg(unix)]
fn reap(child: &mut std::process::Child) -> Result<(Duration, i64), String> {
    let pid = child.id().cast_signed();
    let mut status = 0;
    // SAFETY: `rusage` is plain data; `pid` is our own child, which `Child`
    // never waits for (it is dropped unwaited).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    if reaped != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(format!("status {status}"));
    }
    Ok((cpu_time(&usage), usage.ru_maxrss))
}

/// Windows keeps an exited process's times and counters while a handle to
/// it is open: `Child` holds one until it is dropped.
#[cfg(windows)]
fn reap(child: &mut std::process::Child) -> Result<(Duration, i64), String> {
    use std::os::windows::io::AsRawHandle;
    let status = child.wait().map_err(|e| format!("wait: {e}"))?;
    if !status.success() {
        return Err(status.to_string());
    }
    handle_usage(child.as_raw_handle())
}

/// The CPU time and peak working set (KiB) of the process `handle` names.
#[cfg(windows)]
fn handle_usage(handle: windows_sys::Win32::Foundation::HANDLE) -> Result<(Duration, i64), String> {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::ProcessStatus::{
        K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    use windows_sys::Win32::System::Threading::GetProcessTimes;
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the handle is open (a child's until it is dropped, or this
    // process's); the out-pointers are four distinct FILETIMEs.
    let ok = unsafe {
        GetProcessTimes(
            handle,
            &raw mut created,
            &raw mut exited,
            &raw mut kernel,
            &raw mut user,
        )
    };
    if ok == 0 {
        return Err(format!(
            "GetProcessTimes: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: an all-zero PROCESS_MEMORY_COUNTERS is valid plain data.
    let mut memory: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
    let size = size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
    memory.cb = size;
    // SAFETY: as above; `memory` is `size` writable bytes.
    if unsafe { K32GetProcessMemoryInfo(handle, &raw mut memory, size) } == 0 {
        return Err(format!(
            "GetProcessMemoryInfo: {}",
            std::io::Error::last_os_error()
        ));
    }
    // FILETIME counts 100 ns ticks.
    let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    Ok((
        Duration::from_nanos((ticks(kernel) + ticks(user)) * 100),
        i64::try_from(memory.PeakWorkingSetSize / 1024).unwrap_or(i64::MAX),
    ))
}

/// Measures `work` run inside this process: its wall time, the CPU time
/// this process and the children it waited for spent meanwhile, and the
/// peak resident set while it ran. On Linux the peak is reset before
/// `work` starts; elsewhere it is the process's peak so far, so measure the
/// smallest work first. Windows counts no children's CPU.
pub fn measure_in_process<T>(work: impl FnOnce() -> T) -> (Sample, T) {
    reset_peak_rss();
    let before = process_usage();
    let start = Instant::now();
    let value = work();
    let wall = start.elapsed();
    let after = process_usage();
    let sample = Sample {
        wall,
        cpu: after.cpu.saturating_sub(before.cpu),
        max_rss_kib: after.peak_rss_kib,
    };
    (sample, value)
}

/// The median time of one call of `call`, over `rounds` rounds of
/// `iterations` calls each: for work too short to time one call at a time.
///
/// # Panics
/// When `rounds` or `iterations` is zero.
pub fn per_call(rounds: usize, iterations: u32, mut call: impl FnMut()) -> Duration {
    assert!(rounds > 0 && iterations > 0, "per_call needs work to time");
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                call();
            }
            start.elapsed() / iterations
        })
        .collect();
    times.sort();
    times[rounds / 2]
}

/// What this process has used so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// User plus system CPU of this process and of the children it waited
    /// for (its own only, on Windows).
    pub cpu: Duration,
    /// The peak resident set, in KiB (since the last reset, on Linux).
    pub peak_rss_kib: i64,
}

/// This process's CPU time and peak RSS so far.
///
/// # Panics
/// When the operating system refuses to report them (it does not for the
/// calling process).
pub fn process_usage() -> Usage {
    let (cpu, peak_rss_kib) = self_usage().expect("a process can read its own usage");
    Usage {
        cpu,
        peak_rss_kib: linux_peak_rss_kib().unwrap_or(peak_rss_kib),
    }
}

/// Linux lets a process reset its high-water mark (`clear_refs`), read
/// back from `VmHWM`.
fn reset_peak_rss() {
    if cfg!(target_os = "linux") {
        // Best effort: without it the peak is the process's peak so far.
        let _ = std::fs::write("/proc/self/clear_refs", "5");
    }
}

/// `VmHWM` of `/proc/self/status`: unlike `getrusage`, it follows a reset.
fn linux_peak_rss_kib() -> Option<i64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// CPU of this process and its waited-for children, and its own peak RSS.
#[cfg(unix)]
fn self_usage() -> Result<(Duration, i64), String> {
    let get = |who| {
        // SAFETY: `rusage` is plain data that getrusage fills.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &raw mut usage) } == 0 {
            Ok(usage)
        } else {
            Err(format!("getrusage: {}", std::io::Error::last_os_error()))
        }
    };
    let (own, children) = (get(libc::RUSAGE_SELF)?, get(libc::RUSAGE_CHILDREN)?);
    Ok((cpu_time(&own) + cpu_time(&children), own.ru_maxrss))
}

#[cfg(unix)]
fn cpu_time(usage: &libc::rusage) -> Duration {
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

#[cfg(windows)]
fn self_usage() -> Result<(Duration, i64), String> {
    // SAFETY: the pseudo-handle of the calling process needs no closing.
    let handle = unsafe { windows_sys::Win32::System::Threading::GetCurrentProcess() };
    handle_usage(handle)
}

/// The run with the median wall time.
///
/// # Panics
/// On an empty slice.
pub fn median(samples: &[Sample]) -> Sample {
    let mut sorted = samples.to_vec();
    sorted.sort_by_key(|s| s.wall);
    sorted[sorted.len() / 2]
}

/// Prints one aligned result line.
pub fn print_row(name: &str, sample: Sample) {
    println!(
        "  {name:<28} wall {:8.4} s  cpu {:8.4} s  peak RSS {:7} KiB",
        sample.wall.as_secs_f64(),
        sample.cpu.as_secs_f64(),
        sample.max_rss_kib
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_child_and_reports_failures() {
        let ok = measure(Command::new("true").arg("x")).unwrap();
        assert!(ok.max_rss_kib > 0 && ok.wall > Duration::ZERO);
        let err = measure(
            Command::new("sh")
                .args(["-c", "echo boom >&2; exit 3"])
                .stderr(std::process::Stdio::piped()),
        )
        .unwrap_err();
        assert!(err.contains("boom"), "{err}");
    }

    #[test]
    fn zipfile_rezips_each_wheel_at_level_6() {
        let dist = std::env::temp_dir().join(format!("bench-support-{}", std::process::id()));
        std::fs::create_dir_all(&dist).unwrap();
        // A stored wheel: zipfile at level 6 makes it smaller.
        let made = Command::new("python3")
            .args([
                "-c",
                "import sys, zipfile\n\
                 with zipfile.ZipFile(sys.argv[1], 'w') as z:\n    \
                     z.writestr('pkg/a.txt', 'hello ' * 1000)\n    \
                     z.writestr('pkg/b.txt', '')",
            ])
            .arg(dist.join("pkg-1.0-py3-none-any.whl"))
            .status()
            .unwrap();
        assert!(made.success());
        let sizes = zipfile_level_6_sizes(&dist).unwrap();
        std::fs::remove_dir_all(&dist).unwrap();
        assert_eq!(sizes.len(), 1);
        let size = &sizes[0];
        assert_eq!(size.name, "pkg-1.0-py3-none-any.whl");
        assert_eq!(size.ours_data, 6000);
        assert!(size.zipfile_data < 100, "{size:?}");
        assert!(size.zipfile < size.ours, "{size:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_is_not_charged_with_its_parents_peak() {
        // Touch 256 MiB, then give it back: this process's high-water mark
        // stays, and a child used to report it as its own peak.
        let block = vec![1_u8; 256 << 20];
        assert_eq!(block.iter().map(|&b| u64::from(b)).sum::<u64>(), 256 << 20);
        drop(block);
        let sample = measure(&mut Command::new("true")).unwrap();
        assert!(sample.max_rss_kib < 128 << 10, "{sample:?}");
    }

    #[test]
    fn measures_work_in_process() {
        let (sample, bytes) = measure_in_process(|| {
            // Touch 32 MiB so the peak resident set must hold it.
            let block = vec![1_u8; 32 << 20];
            block.iter().map(|&b| u64::from(b)).sum::<u64>()
        });
        assert_eq!(bytes, 32 << 20);
        assert!(sample.max_rss_kib >= 32 << 10, "{sample:?}");
        assert!(sample.wall > Duration::ZERO && sample.cpu <= process_usage().cpu);
        let mut calls = 0;
        per_call(3, 10, || calls += 1);
        assert_eq!(calls, 30);
    }

    #[test]
    fn median_takes_the_middle_wall_time() {
        let s = |ms| Sample {
            wall: Duration::from_millis(ms),
            cpu: Duration::ZERO,
            max_rss_kib: 0,
        };
        assert_eq!(median(&[s(30), s(10), s(20)]), s(20));
    }
}
