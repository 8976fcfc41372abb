//! `cargo xtask compare`: two `therock-package` binaries on real artifact
//! trees, runs interleaved (A, B, A, B, ...) so a machine's changing load
//! falls on both alike. Per run it prints the load average, wall and CPU
//! time, the utilisation (CPU ÷ (wall × cores)), peak RSS and the bytes of
//! `dist/`; then, per tree, the median of each binary and the bytes of the
//! reference's model (Python's `zipfile` at level 6 on the same members).
//! The table of docs/performance.md ("A real tree, by hand") is this
//! command's output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use bench_support::{Sample, measure};

const USAGE: &str = "usage: cargo xtask compare --baseline BIN [--new BIN] [--runs N] \
    [--cold] [--version V] TREE...\n\
    BIN: therock-package binaries (--new: target/release/therock-package); \
    --cold drops the page cache before each run (root)";

pub(crate) fn compare(args: &[String]) -> Result<(), String> {
    let mut baseline = None;
    let mut new = crate::cmd::root().join("target/release/therock-package");
    let mut runs = 3usize;
    let mut cold = false;
    let mut version = "5.2.3".to_owned();
    let mut trees = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().cloned().ok_or_else(|| USAGE.to_owned());
        match arg.as_str() {
            "--baseline" => baseline = Some(PathBuf::from(value()?)),
            "--new" => new = PathBuf::from(value()?),
            "--runs" => runs = value()?.parse().map_err(|_| USAGE.to_owned())?,
            "--version" => version = value()?,
            "--cold" => cold = true,
            tree if !tree.starts_with('-') => trees.push(PathBuf::from(tree)),
            _ => return Err(USAGE.to_owned()),
        }
    }
    let baseline = baseline.ok_or_else(|| USAGE.to_owned())?;
    if trees.is_empty() {
        return Err(USAGE.to_owned());
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let work = crate::cmd::root().join("target/compare");
    for tree in &trees {
        let name = tree
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let mut results: [Vec<(Sample, u64)>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..runs {
            for (which, binary) in [&baseline, &new].into_iter().enumerate() {
                let dest = work.join(&name);
                let _ = std::fs::remove_dir_all(&dest);
                if cold {
                    drop_caches();
                }
                let load = load_average();
                let sample = measure(
                    Command::new(binary)
                        .args(["build", "-q", "--version", &version, "--artifact-dir"])
                        .arg(tree)
                        .arg("--dest-dir")
                        .arg(&dest)
                        .stdout(Stdio::null())
                        .stderr(Stdio::piped()),
                )?;
                let bytes = dir_bytes(&dest.join("dist"));
                println!(
                    "{name} {:<8} load {load:>5} wall {:7.2} s  cpu {:7.2} s  util {:5.1} %  \
                     rss {:7} KiB  dist {bytes} B",
                    ["baseline", "new"][which],
                    sample.wall.as_secs_f64(),
                    sample.cpu.as_secs_f64(),
                    utilisation(sample, cores),
                    sample.max_rss_kib
                );
                results[which].push((sample, bytes));
            }
        }
        let dist = work.join(&name).join("dist");
        let model: u64 = bench_support::zipfile_level_6_sizes(&dist)?
            .iter()
            .map(|w| w.zipfile)
            .sum();
        for (which, rows) in results.iter().enumerate() {
            let median = |key: &dyn Fn(&Sample) -> f64| {
                let mut values: Vec<f64> = rows.iter().map(|(s, _)| key(s)).collect();
                values.sort_by(f64::total_cmp);
                values[values.len() / 2]
            };
            println!(
                "{name} {:<8} median: wall {:.2} s, cpu {:.2} s, util {:.1} %, dist {} B",
                ["baseline", "new"][which],
                median(&|s| s.wall.as_secs_f64()),
                median(&|s| s.cpu.as_secs_f64()),
                median(&|s| utilisation(*s, cores)),
                rows.last().map_or(0, |(_, b)| *b),
            );
        }
        println!("{name} zipfile -6 model of the new dist/: {model} B (wheels)");
    }
    Ok(())
}

#[allow(clippy::cast_precision_loss)]
fn utilisation(sample: Sample, cores: usize) -> f64 {
    sample.cpu.as_secs_f64() / (sample.wall.as_secs_f64() * cores as f64) * 100.0
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_default()
}

fn drop_caches() {
    let _ = Command::new("sync").status();
    let _ = std::fs::write("/proc/sys/vm/drop_caches", "3\n");
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}
