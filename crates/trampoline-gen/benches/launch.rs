//! Launch overhead: `launcher → /bin/true` against a direct exec of
//! `/bin/true` and against a C stub built with `cc` the way the reference
//! does it, measured in the same run, interleaved in blocks so drift hits
//! all three alike. Each child is measured by `bench_support::measure`
//! (reaped with `wait4`: its own wall time, CPU time and peak RSS). Goal (issue 4): within 1.2x of direct.
//!
//! `cargo bench -p trampoline-gen` (or `cargo xtask bench`); set
//! `TRAMPOLINE_BENCH_RUNS` to change the number of runs per variant.

#![allow(
    unsafe_code,
    reason = "getrusage is the only way to read this process's peak RSS"
)]
#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    reason = "microsecond statistics"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use bench_support::{Sample, measure};
use trampoline_gen::{Launcher, Platform};

const BLOCK: usize = 100;
const WARMUP: usize = 50;

struct Variant {
    name: &'static str,
    path: PathBuf,
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
    max_rss_kib: i64,
}

fn main() {
    let runs: usize = std::env::var("TRAMPOLINE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let started = Instant::now();
    let tree = tempfile::tempdir().expect("temporary directory");
    let true_path = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .expect("the benchmark execs /bin/true");

    let libexec = tree.path().join("libexec");
    let bin = tree.path().join("bin");
    std::fs::create_dir_all(&libexec).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(true_path, libexec.join("true")).unwrap();

    let launcher = Launcher::for_target(Platform::LinuxX86_64, "../libexec/true").unwrap();
    launcher.write_to(&bin.join("launcher")).unwrap();
    let stub = bin.join("c-stub");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/reference_stub.c");
    let status = Command::new("cc")
        .args(["-fPIE", "-DEXEC_RELPATH=\"../libexec/true\"", "-o"])
        .arg(&stub)
        .arg(&source)
        .arg("-ldl")
        .status()
        .expect("the benchmark needs a C compiler (cc) for the reference stub");
    assert!(status.success(), "cc failed on {}", source.display());
    let stub_size = std::fs::metadata(&stub).unwrap().len();

    let mut variants = [
        variant("direct exec /bin/true", true_path.to_owned()),
        variant("launcher -> /bin/true", bin.join("launcher")),
        variant("C stub (cc) -> /bin/true", stub),
    ];
    for v in &mut variants {
        for _ in 0..WARMUP {
            launch(&v.path);
        }
    }
    let mut done = 0;
    while done < runs {
        let block = BLOCK.min(runs - done);
        for v in &mut variants {
            for _ in 0..block {
                let sample = launch(&v.path);
                v.wall.push(sample.wall);
                v.cpu.push(sample.cpu);
                v.max_rss_kib = v.max_rss_kib.max(sample.max_rss_kib);
            }
        }
        done += block;
    }

    println!(
        "launch overhead: {runs} runs per variant, interleaved in blocks of {BLOCK}, after {WARMUP} warm-up runs"
    );
    println!(
        "launcher image {} bytes; reference C stub {stub_size} bytes",
        launcher.bytes().len()
    );
    println!(
        "{:<26} {:>9} {:>10} {:>8} {:>11} {:>12} {:>11} {:>13}",
        "variant",
        "mean µs",
        "median µs",
        "p90 µs",
        "cpu/run µs",
        "max RSS KiB",
        "mean ratio",
        "median ratio"
    );
    let base_mean = mean(&variants[0].wall);
    let base_median = percentile(&variants[0].wall, 50);
    for v in &variants {
        let m = mean(&v.wall);
        let med = percentile(&v.wall, 50);
        println!(
            "{:<26} {:>9.1} {:>10.1} {:>8.1} {:>11.1} {:>12} {:>10.3}x {:>12.3}x",
            v.name,
            micros(m),
            micros(med),
            micros(percentile(&v.wall, 90)),
            micros(mean(&v.cpu)),
            v.max_rss_kib,
            micros(m) / micros(base_mean),
            micros(med) / micros(base_median),
        );
    }
    let launcher_ratio = micros(percentile(&variants[1].wall, 50)) / micros(base_median);
    println!(
        "launcher vs direct exec (median): {launcher_ratio:.3}x (goal <= 1.2x: {})",
        if launcher_ratio <= 1.2 {
            "met"
        } else {
            "NOT met"
        }
    );
    println!(
        "benchmark wall {:.1} s, benchmark process peak RSS {} KiB",
        started.elapsed().as_secs_f64(),
        self_max_rss_kib()
    );
}

fn variant(name: &'static str, path: PathBuf) -> Variant {
    Variant {
        name,
        path,
        wall: Vec::new(),
        cpu: Vec::new(),
        max_rss_kib: 0,
    }
}

/// Runs `path` to completion: spawn-to-exit wall time, the child's
/// user+system CPU and its peak RSS (`bench_support::measure`, `wait4`).
fn launch(path: &Path) -> Sample {
    measure(&mut Command::new(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn self_max_rss_kib() -> i64 {
    // SAFETY: all-zero is a valid rusage; the pointer is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &raw mut usage) };
    usage.ru_maxrss
}

fn mean(samples: &[Duration]) -> Duration {
    samples.iter().sum::<Duration>() / u32::try_from(samples.len()).unwrap()
}

fn percentile(samples: &[Duration], p: usize) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    sorted[(sorted.len() - 1) * p / 100]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
