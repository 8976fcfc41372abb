//! `cargo xtask fuzz`: the coverage-guided fuzz targets of `fuzz/` (see
//! `docs/fuzzing.md`), run with `cargo +nightly fuzz` for a time budget.
//!
//! Each target starts from its committed seeds (`fuzz/seeds/<target>/`,
//! read only) and the inputs earlier runs kept (`fuzz/corpus/<target>/`,
//! git-ignored). A crash, a leak, an out-of-memory or a timeout stops the
//! run: libFuzzer writes the input to `fuzz/artifacts/<target>/`, and
//! this task prints its path and fails.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::cmd::{have, root, run};

/// Every target, in the order they run.
pub(crate) const TARGETS: &[&str] = &[
    "elf_edit",
    "artifact_archive",
    "devel_unpack",
    "devel_digest",
    "devel_state",
    "wheel_reader",
    "zip_archive",
    "sdist_archive",
    "core_metadata",
    "entry_points",
    "package_record",
    "pep440_version",
    "requirement",
];

/// The cargo-fuzz release the task installs when none is present.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Seconds per target when `--seconds` is not given.
const DEFAULT_SECONDS: u64 = 60;

/// One input may take this long before libFuzzer reports a hang.
const TIMEOUT_SECONDS: u64 = 10;

/// How the targets are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Build {
    /// Optimised, with AddressSanitizer (also over the C codecs): for
    /// runs of minutes.
    Thorough,
    /// Unoptimised, no sanitizer: builds in a third of the time, for the
    /// short runs of CI (panics, overflow checks and hangs still count).
    Quick,
}

impl Build {
    fn flags(self) -> &'static [&'static str] {
        match self {
            Build::Thorough => &[],
            Build::Quick => &["--dev", "--sanitizer", "none"],
        }
    }
}

/// What one target's run reported.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    target: String,
    executions: u64,
    execs_per_sec: u64,
    cov: u64,
    ft: u64,
    corpus: u64,
}

/// `cargo xtask fuzz [--quick] [--seconds N] [target...]`.
pub(crate) fn fuzz(args: &[String]) -> Result<(), String> {
    let mut seconds = DEFAULT_SECONDS;
    let mut build = Build::Thorough;
    let mut targets = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--quick" {
            build = Build::Quick;
        } else if arg == "--seconds" {
            let value = args.next().ok_or("--seconds needs a value")?;
            seconds = value
                .parse()
                .map_err(|_| format!("--seconds {value}: expected a whole number of seconds"))?;
        } else if TARGETS.contains(&arg.as_str()) {
            targets.push(arg.as_str());
        } else {
            return Err(format!(
                "unknown fuzz target `{arg}`; targets: {}\nusage: cargo xtask fuzz [--quick] [--seconds N] [target...]",
                TARGETS.join(", ")
            ));
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    crate::ci::setup(&[])?;
    run_targets(&targets, seconds, build)
}

/// Builds the fuzz targets and runs each for `seconds`, as many at a time
/// as there are cores (libFuzzer runs one input at a time, and its time
/// budget is wall time, so each target still gets a core for `seconds`);
/// what CI runs too.
pub(crate) fn run_targets(targets: &[&str], seconds: u64, build: Build) -> Result<(), String> {
    install()?;
    let started = Instant::now();
    let mut args = vec!["+nightly", "fuzz", "build"];
    args.extend(build.flags());
    run("cargo", &args)?;
    eprintln!(
        "fuzz: built the targets in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let all = run_in_parallel(targets, seconds, build)?;
    eprintln!(
        "fuzz: {:<18} {:>12} {:>9} {:>6} {:>6} {:>7}",
        "target", "executions", "exec/s", "cov", "ft", "corpus"
    );
    for s in &all {
        eprintln!(
            "fuzz: {:<18} {:>12} {:>9} {:>6} {:>6} {:>7}",
            s.target, s.executions, s.execs_per_sec, s.cov, s.ft, s.corpus
        );
    }
    eprintln!(
        "fuzz: {} target(s) without a finding in {:.0} s",
        all.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs every target, one per core at a time; the first failure (in target
/// order) is the error.
fn run_in_parallel(targets: &[&str], seconds: u64, build: Build) -> Result<Vec<Stats>, String> {
    let jobs = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(targets.len());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Stats, String>>>> =
        Mutex::new(targets.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(target) = targets.get(i) else {
                        break;
                    };
                    let result = run_one(target, seconds, build);
                    results.lock().expect("no worker panics")[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panics")
        .into_iter()
        .map(|r| r.expect("every target ran"))
        .collect()
}

/// Installs cargo-fuzz from crates.io when `cargo +nightly fuzz` is missing.
fn install() -> Result<(), String> {
    if !toolchain_has_nightly() {
        return Err(
            "the fuzz targets need the nightly toolchain (`cargo +nightly`), which is not installed"
                .into(),
        );
    }
    if !have("cargo-fuzz") {
        run(
            "cargo",
            &[
                "install",
                "--locked",
                "--version",
                CARGO_FUZZ_VERSION,
                "cargo-fuzz",
            ],
        )?;
    }
    Ok(())
}

fn toolchain_has_nightly() -> bool {
    Command::new("cargo")
        .args(["+nightly", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn run_one(target: &str, seconds: u64, build: Build) -> Result<Stats, String> {
    let fuzz_dir = root().join("fuzz");
    let corpus = fuzz_dir.join("corpus").join(target);
    let seeds = fuzz_dir.join("seeds").join(target);
    let artifacts = fuzz_dir.join("artifacts").join(target);
    for dir in [&corpus, &artifacts] {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let before = listing(&artifacts);
    let log_path = fuzz_dir.join("artifacts").join(format!("{target}.log"));
    let log = fs::File::create(&log_path)
        .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    let mut args = vec!["+nightly".to_owned(), "fuzz".to_owned(), "run".to_owned()];
    args.extend(build.flags().iter().map(|f| (*f).to_owned()));
    args.extend([
        target.to_owned(),
        path_arg(&corpus),
        path_arg(&seeds),
        "--".to_owned(),
        format!("-max_total_time={seconds}"),
        format!("-timeout={TIMEOUT_SECONDS}"),
        "-rss_limit_mb=2048".to_owned(),
        // LeakSanitizer reports the thread-local destructor list of a worker
        // thread once per process; a leak is no memory-safety bug in Rust,
        // and unbounded growth still ends in the RSS limit.
        "-detect_leaks=0".to_owned(),
        "-print_final_stats=1".to_owned(),
        format!("-artifact_prefix={}/", artifacts.display()),
    ]);
    eprintln!("+ cargo {} (log: {})", args.join(" "), log_path.display());
    let mut command = Command::new("cargo");
    command
        .args(&args)
        .current_dir(root())
        // One thread per reader: libFuzzer measures one input at a time.
        .env("RAYON_NUM_THREADS", "1")
        .stdout(Stdio::null())
        .stderr(log);
    if Path::new("/dev/shm").is_dir() {
        // The file-based targets write a scratch tree per input.
        command.env("TMPDIR", "/dev/shm");
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot start `cargo fuzz run {target}`: {e}"))?;
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    if !status.success() {
        let found: Vec<PathBuf> = listing(&artifacts)
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        // A CI machine is gone with its files: the log carries the input.
        let dumps: String = found.iter().filter_map(|p| hex_dump(p)).collect();
        return Err(format!(
            "fuzz target `{target}` failed ({status}):\n{}\n{dumps}\nthe input that failed: {}\nreproduce with: cargo +nightly fuzz run {}{target} <that file>",
            tail.join("\n"),
            if found.is_empty() {
                format!("none written; see {}", log_path.display())
            } else {
                found
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            build
                .flags()
                .iter()
                .fold(String::new(), |text, flag| text + flag + " ")
        ));
    }
    Ok(stats(target, &text))
}

/// The bytes of a found input of at most 64 KiB as hex lines, with the
/// command that turns them back into the file.
fn hex_dump(path: &Path) -> Option<String> {
    let bytes = fs::read(path).ok().filter(|b| b.len() <= 64 << 10)?;
    let name = path.file_name()?.to_string_lossy();
    let mut out = format!(
        "\n{name} ({} bytes; `xxd -r -p` of these lines restores it):\n",
        bytes.len()
    );
    for line in bytes.chunks(32) {
        for byte in line {
            let _ = write!(out, "{byte:02x}");
        }
        out.push('\n');
    }
    Some(out)
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// The final statistics libFuzzer prints (`-print_final_stats=1`) and the
/// coverage of its last status line (`cov: N ft: M corp: K/...`).
fn stats(target: &str, log: &str) -> Stats {
    let mut s = Stats {
        target: target.to_owned(),
        ..Stats::default()
    };
    for line in log.lines() {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("stat::number_of_executed_units:"), Some(n)) => {
                s.executions = n.parse().unwrap_or(0);
            }
            (Some("stat::average_exec_per_sec:"), Some(n)) => {
                s.execs_per_sec = n.parse().unwrap_or(0);
            }
            _ => {}
        }
        if line.starts_with('#') {
            let fields: Vec<&str> = line.split_whitespace().collect();
            for pair in fields.windows(2) {
                let value = || pair[1].split('/').next().unwrap_or("").parse().ok();
                match pair[0] {
                    "cov:" => s.cov = value().unwrap_or(s.cov),
                    "ft:" => s.ft = value().unwrap_or(s.ft),
                    "corp:" => s.corpus = value().unwrap_or(s.corpus),
                    _ => {}
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `[[bin]]` of fuzz/Cargo.toml is a target CI runs, and no
    /// other: a new fuzz target is never left out of CI.
    #[test]
    fn the_targets_are_the_fuzz_crate_s_binaries() {
        let manifest = fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap();
        let mut binaries: Vec<&str> = manifest
            .split("[[bin]]")
            .skip(1)
            .filter_map(|table| {
                table.lines().find_map(|line| {
                    let value = line.trim().strip_prefix("name = ")?;
                    Some(value.trim_matches('"'))
                })
            })
            .collect();
        binaries.sort_unstable();
        let mut targets = TARGETS.to_vec();
        targets.sort_unstable();
        assert_eq!(binaries, targets);
    }

    #[test]
    fn reads_libfuzzer_final_stats() {
        let log = "INFO: Seed: 1\n\
                   #2\tINITED cov: 10 ft: 11 corp: 3/30b exec/s: 0 rss: 40Mb\n\
                   #4096\tpulse  cov: 120 ft: 300 corp: 40/2Kb lim: 43 exec/s: 2048 rss: 50Mb\n\
                   #8000\tDONE   cov: 125 ft: 310 corp: 42/2Kb lim: 43 exec/s: 4000 rss: 50Mb\n\
                   Done 8000 runs in 2 second(s)\n\
                   stat::number_of_executed_units: 8000\n\
                   stat::average_exec_per_sec:     4000\n";
        let s = stats("t", log);
        assert_eq!(
            (s.executions, s.execs_per_sec, s.cov, s.ft, s.corpus),
            (8000, 4000, 125, 310, 42)
        );
    }
}
