//! What the benchmarks share: running a child to completion and reading its
//! own wall time, CPU time and peak RSS (`wait4`), and summarising runs.
//!
//! A child's peak RSS counts what it inherited at `fork`, so a benchmark
//! process holding much memory should measure through a small helper
//! process (see the `rocm-sdk` benchmark).
#![allow(clippy::print_stdout, clippy::cast_sign_loss)]
#![allow(
    unsafe_code,
    reason = "wait4 is the only way to read one child's rusage"
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
    let pid = child.id().cast_signed();
    let mut status = 0;
    // SAFETY: `rusage` is plain data; `pid` is our own child, which `Child`
    // never waits for (it is dropped unwaited).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    let wall = start.elapsed();
    drop(child);
    if reaped != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(format!("{command:?} failed (status {status}): {errors}"));
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Ok(Sample {
        wall,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss,
    })
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
    fn median_takes_the_middle_wall_time() {
        let s = |ms| Sample {
            wall: Duration::from_millis(ms),
            cpu: Duration::ZERO,
            max_rss_kib: 0,
        };
        assert_eq!(median(&[s(30), s(10), s(20)]), s(20));
    }
}
