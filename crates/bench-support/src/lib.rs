//! What the benchmarks share: running a child to completion and reading its
//! own wall time, CPU time and peak RSS (`wait4`), summarising runs, and
//! the reference's baselines written in Python (a devel unpack with
//! `tarfile`, wheels zipped by `zipfile` at level 6).
//!
//! A child's peak RSS counts what it inherited at `fork`, so a benchmark
//! process holding much memory should measure through a small helper
//! process (see the `rocm-sdk` benchmark).
//!
//! Measuring a program from a benchmark:
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
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Ok((time(usage.ru_utime) + time(usage.ru_stime), usage.ru_maxrss))
}

/// Windows keeps an exited process's times and counters while a handle to
/// it is open: `Child` holds one until it is dropped.
#[cfg(windows)]
fn reap(child: &mut std::process::Child) -> Result<(Duration, i64), String> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::ProcessStatus::{
        K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    use windows_sys::Win32::System::Threading::GetProcessTimes;
    let status = child.wait().map_err(|e| format!("wait: {e}"))?;
    if !status.success() {
        return Err(status.to_string());
    }
    let handle = child.as_raw_handle();
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the handle is the child's, open until `child` is dropped; the
    // out-pointers are four distinct FILETIMEs.
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
