//! `cargo xtask scale`: a synthetic full release built at two sizes with
//! one and two jobs (docs/performance.md).
//!
//! The release is the built-in example grown to release shape: in kpack
//! mode its device artifacts are cloned to 16 GPU targets, in legacy mode
//! its family artifacts to 8 families, and the large host libraries and
//! every device code object are padded with real machine code (the
//! toolchain's own `libLLVM`, read from a different offset per file so no
//! two members are alike). Each size is built with `--jobs 1` and
//! `--jobs 2`, measured by `bench-support` (wall, CPU, peak RSS); the
//! largest two-job build is repeated with `--timings` for its phases.
//! Everything generated lives in one directory that is removed at the end,
//! also when a step fails.

// Sizes and times are shown as floating point; they are far below 2^52.
#![allow(clippy::cast_precision_loss, clippy::cast_sign_loss)]

use std::fmt::Write as _;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use fixtures::{ExampleMode, Layout};

use crate::cmd::{root, run};

const GB: u64 = 1_000_000_000;

/// Space left to others on the file system, whatever the run needs.
const KEEP_FREE: u64 = 25 * GB;
/// Wheels of padded machine code are about 45 % of their input; room for
/// the output of one build plus slack.
const OUTPUT_SHARE: f64 = 0.6;
/// The default (and largest) input size when the disk allows.
const DEFAULT_GB: f64 = 20.0;

/// The 16 targets of the kpack release (the example's gfx1100 artifacts
/// cloned to the ones it lacks).
const KPACK_TARGETS: [&str; 16] = [
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1030", "gfx1100",
    "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201", "gfx1250",
];

/// The 8 families of the legacy release with the two targets each clone
/// of `gfx110X-all` (gfx1100, gfx1101) is renamed to; no two share one.
const LEGACY_FAMILIES: [(&str, [&str; 2]); 8] = [
    ("gfx94X-dcgpu", ["gfx942", "gfx942"]),
    ("gfx110X-all", ["gfx1100", "gfx1101"]),
    ("gfx101X-dgpu", ["gfx1010", "gfx1011"]),
    ("gfx103X-dgpu", ["gfx1030", "gfx1031"]),
    ("gfx115X-all", ["gfx1150", "gfx1151"]),
    ("gfx120X-all", ["gfx1200", "gfx1201"]),
    ("dcgpu-all", ["gfx908", "gfx90a"]),
    ("igpu-all", ["gfx90c", "gfx1033"]),
];

/// Host files padded, with their share of the host half of the bytes.
const HOST_PADDED: &[(&str, u64)] = &[
    ("lib/librocblas.so.5.0", 30),
    ("lib/libamdhip64.so.7.1.0", 25),
    ("lib/libamd_comgr.so.3.0", 20),
    ("lib/llvm/bin/clang", 15),
    ("lib/libhipfft.so.0.1", 10),
];

/// Device files padded (by name ending); they share the device half.
const DEVICE_PADDED: &[&str] = &[".co", ".hsaco"];

struct Options {
    largest_gb: Option<f64>,
    modes: Vec<ExampleMode>,
    work: PathBuf,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        largest_gb: None,
        modes: vec![ExampleMode::Kpack],
        work: root().join("target/scale"),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--gb" => {
                let gb: f64 = value("--gb")?.parse().map_err(|e| format!("--gb: {e}"))?;
                if gb.is_nan() || gb <= 0.0 {
                    return Err("--gb must be positive".into());
                }
                options.largest_gb = Some(gb);
            }
            "--mode" => {
                options.modes = match value("--mode")?.as_str() {
                    "kpack" => vec![ExampleMode::Kpack],
                    "legacy" => vec![ExampleMode::Legacy],
                    "both" => ExampleMode::ALL.to_vec(),
                    other => return Err(format!("--mode {other}: kpack, legacy or both")),
                };
            }
            "--dir" => options.work = PathBuf::from(value("--dir")?),
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: cargo xtask scale [--gb N] \
                     [--mode kpack|legacy|both] [--dir DIR]"
                ));
            }
        }
    }
    Ok(options)
}

/// Removes the work directory when dropped, whatever happened.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if self.0.exists() {
            eprintln!("removing {}", self.0.display());
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

/// One measured build.
struct Run {
    input: u64,
    jobs: usize,
    sample: bench_support::Sample,
    output: u64,
}

pub(crate) fn scale(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    if options.work.exists() {
        return Err(format!(
            "{} exists; remove it or give another --dir",
            options.work.display()
        ));
    }
    run("cargo", &["build", "--release", "-p", "therock-package"])?;
    let binary = root().join("target/release/therock-package");
    fs::create_dir_all(&options.work)
        .map_err(|e| format!("cannot create {}: {e}", options.work.display()))?;
    let _cleanup = Cleanup(options.work.clone());
    let available = available_bytes(&options.work)?;
    let fits = fitting_gb(available);
    let largest = match options.largest_gb {
        Some(gb) if gb <= fits => gb,
        Some(gb) => {
            return Err(format!(
                "{gb} GB of input does not fit: {:.1} GB free, {} GB kept for others; at most {fits:.1} GB",
                available as f64 / GB as f64,
                KEEP_FREE / GB
            ));
        }
        None => DEFAULT_GB.min(fits),
    };
    if largest < 1.0 {
        return Err(format!(
            "only {:.1} GB free with {} GB kept for others: too little for a scale run",
            available as f64 / GB as f64,
            KEEP_FREE / GB
        ));
    }
    let mut report = format!(
        "scale run: {} cores, {:.1} GB free before the run ({} GB kept for others)\n",
        cores(),
        available as f64 / GB as f64,
        KEEP_FREE / GB
    );
    if options.largest_gb.is_none() && largest < DEFAULT_GB {
        let _ = writeln!(
            report,
            "the disk holds at most {largest:.1} GB of input (+ output), not {DEFAULT_GB} GB: running at {largest:.1} GB"
        );
    }
    eprint!("{report}");
    let sizes = [largest / 4.0, largest];
    for mode in &options.modes {
        let text = scale_mode(*mode, &sizes, &binary, &options.work)?;
        eprint!("{text}");
        report.push_str(&text);
    }
    println!("\n{report}");
    Ok(())
}

/// Free bytes on the file system of `dir` (`df`, which every host has).
fn available_bytes(dir: &Path) -> Result<u64, String> {
    let out = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run df: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("cannot read df's answer for {}", dir.display()))
}

/// The largest input (GB) whose input and one build's output fit in
/// `available` bytes with [`KEEP_FREE`] left and a gigabyte for the
/// example and slack (modes run one after the other, each removed after).
fn fitting_gb(available: u64) -> f64 {
    let usable = available.saturating_sub(KEEP_FREE + GB) as f64 / GB as f64;
    (usable / (1.0 + OUTPUT_SHARE) * 10.0).floor() / 10.0
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn scale_mode(
    mode: ExampleMode,
    sizes: &[f64],
    binary: &Path,
    work: &Path,
) -> Result<String, String> {
    let dir = work.join(mode.dir_name());
    let example = fixtures::generate(&dir.join("example"))
        .map_err(|e| format!("cannot generate the example: {e}"))?;
    let artifacts = example.artifact_dir(mode, Layout::Tree);
    // Only the tree layout is built; the packed copies are not needed.
    for layout in [Layout::TarZst, Layout::TarXz] {
        let _ = fs::remove_dir_all(example.artifact_dir(mode, layout));
    }
    let shape = match mode {
        ExampleMode::Kpack => clone_targets(&artifacts)?,
        ExampleMode::Legacy => clone_families(&artifacts)?,
    };
    let mut runs = Vec::new();
    let mut timings = String::new();
    for (index, &gb) in sizes.iter().enumerate() {
        let input = grow(&artifacts, (gb * GB as f64) as u64)?;
        eprintln!("{mode:?}: {:.2} GB of input", input as f64 / GB as f64);
        for jobs in [1, 2] {
            let dest = dir.join(format!("out-{index}-{jobs}"));
            let mut command = Command::new(binary);
            command
                .args(["build", "-q", "--jobs", &jobs.to_string(), "--artifact-dir"])
                .arg(&artifacts)
                .arg("--dest-dir")
                .arg(&dest);
            let sample = bench_support::measure(&mut command)
                .map_err(|e| format!("{mode:?} build, {gb:.1} GB, --jobs {jobs}: {e}"))?;
            let output = dir_size(&dest.join("dist"));
            let _ = fs::remove_dir_all(&dest);
            runs.push(Run {
                input,
                jobs,
                sample,
                output,
            });
        }
        if index + 1 == sizes.len() {
            timings = phase_table(binary, &artifacts, &dir.join("out-timings"))?;
        }
    }
    let _ = fs::remove_dir_all(&dir);
    Ok(render(mode, &shape, &runs, &timings))
}

/// One more build (two jobs) with `--timings`: its table.
fn phase_table(binary: &Path, artifacts: &Path, dest: &Path) -> Result<String, String> {
    let out = Command::new(binary)
        .args(["build", "--jobs", "2", "--timings", "--artifact-dir"])
        .arg(artifacts)
        .arg("--dest-dir")
        .arg(dest)
        .output()
        .map_err(|e| format!("cannot run therock-package: {e}"))?;
    let _ = fs::remove_dir_all(dest);
    if !out.status.success() {
        return Err(format!(
            "build --timings failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut table = String::new();
    for line in text.lines().skip_while(|l| !l.starts_with("timings (")) {
        let _ = writeln!(table, "  {line}");
    }
    Ok(table)
}

fn render(mode: ExampleMode, shape: &str, runs: &[Run], timings: &str) -> String {
    let mut out = format!("\n{mode:?} release: {shape}\n");
    let _ = writeln!(
        out,
        "  {:>9} {:>5} {:>9} {:>9} {:>9} {:>10} {:>10}",
        "input GB", "jobs", "wall s", "CPU s", "RSS MiB", "GB/s wall", "output GB"
    );
    for run in runs {
        let gb = run.input as f64 / GB as f64;
        let wall = run.sample.wall.as_secs_f64();
        let _ = writeln!(
            out,
            "  {:>9.2} {:>5} {:>9.2} {:>9.2} {:>9.0} {:>10.3} {:>10.2}",
            gb,
            run.jobs,
            wall,
            run.sample.cpu.as_secs_f64(),
            run.sample.max_rss_kib as f64 / 1024.0,
            gb / wall,
            run.output as f64 / GB as f64
        );
    }
    let by = |index: usize, jobs: usize| {
        runs.iter()
            .filter(|r| r.jobs == jobs)
            .nth(index)
            .expect("two sizes, two job counts")
    };
    for jobs in [1, 2] {
        let (small, large) = (by(0, jobs), by(1, jobs));
        let per_gb = |r: &Run| r.sample.wall.as_secs_f64() / (r.input as f64 / GB as f64);
        let _ = writeln!(
            out,
            "  --jobs {jobs}: {:.2} s/GB at the small size, {:.2} s/GB at the large ({:.2}x input: \
             {:.2}x time); peak RSS {:.0} → {:.0} MiB",
            per_gb(small),
            per_gb(large),
            large.input as f64 / small.input as f64,
            large.sample.wall.as_secs_f64() / small.sample.wall.as_secs_f64(),
            small.sample.max_rss_kib as f64 / 1024.0,
            large.sample.max_rss_kib as f64 / 1024.0
        );
    }
    for index in 0..2 {
        let (one, two) = (by(index, 1), by(index, 2));
        let _ = writeln!(
            out,
            "  {:.2} GB: --jobs 2 is {:.2}x --jobs 1 (wall)",
            one.input as f64 / GB as f64,
            one.sample.wall.as_secs_f64() / two.sample.wall.as_secs_f64()
        );
    }
    out.push_str(timings);
    out
}

/// Clones the example's gfx1100 device artifacts to every target of
/// [`KPACK_TARGETS`] it lacks; returns a description.
fn clone_targets(artifacts: &Path) -> Result<String, String> {
    let sources = artifact_dirs(artifacts, "_gfx1100")?;
    for target in KPACK_TARGETS {
        for source in &sources {
            clone_artifact(source, &[("gfx1100", target)])?;
        }
    }
    Ok(format!(
        "{} device targets (+ the example's gfx942:xnack+)",
        KPACK_TARGETS.len()
    ))
}

/// Clones the example's `gfx110X-all` artifacts to every family of
/// [`LEGACY_FAMILIES`] it lacks; returns a description.
fn clone_families(artifacts: &Path) -> Result<String, String> {
    let sources = artifact_dirs(artifacts, "_gfx110X-all")?;
    for (family, [first, second]) in LEGACY_FAMILIES {
        for source in &sources {
            clone_artifact(
                source,
                &[
                    ("gfx110X-all", family),
                    ("gfx1100", first),
                    ("gfx1101", second),
                ],
            )?;
        }
    }
    Ok(format!("{} families", LEGACY_FAMILIES.len()))
}

fn artifact_dirs(artifacts: &Path, suffix: &str) -> Result<Vec<PathBuf>, String> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(artifacts)
        .map_err(|e| format!("cannot list {}: {e}", artifacts.display()))?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(format!("no *{suffix} artifact in {}", artifacts.display()));
    }
    Ok(dirs)
}

/// Copies the artifact directory `source` beside itself with every name
/// (and the manifest's text) renamed by `renames`; an existing clone is
/// left alone.
fn clone_artifact(source: &Path, renames: &[(&str, &str)]) -> Result<(), String> {
    let rename = |text: &str| {
        // Markers around each replacement keep it from being renamed again
        // by a later pair.
        let mut out = text.to_owned();
        for (from, to) in renames {
            out = out.replace(from, &format!("\u{0}{to}\u{0}"));
        }
        out.replace('\u{0}', "")
    };
    let name = source.file_name().unwrap().to_string_lossy().into_owned();
    let dest = source.with_file_name(rename(&name));
    if dest.exists() {
        return Ok(());
    }
    copy_renamed(source, &dest, &rename)
}

fn copy_renamed(from: &Path, to: &Path, rename: &dyn Fn(&str) -> String) -> Result<(), String> {
    let io = |e: std::io::Error, p: &Path| format!("{}: {e}", p.display());
    fs::create_dir(to).map_err(|e| io(e, to))?;
    for entry in fs::read_dir(from).map_err(|e| io(e, from))? {
        let entry = entry.map_err(|e| io(e, from))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let target = to.join(rename(&name));
        let kind = entry.file_type().map_err(|e| io(e, &path))?;
        if kind.is_dir() {
            copy_renamed(&path, &target, rename)?;
        } else if kind.is_symlink() {
            let link = fs::read_link(&path).map_err(|e| io(e, &path))?;
            symlink(&rename(&link.to_string_lossy()), &target).map_err(|e| io(e, &target))?;
        } else if name == "artifact_manifest.txt" {
            let text = fs::read_to_string(&path).map_err(|e| io(e, &path))?;
            fs::write(&target, rename(&text)).map_err(|e| io(e, &target))?;
        } else {
            fs::copy(&path, &target).map_err(|e| io(e, &path))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(text: &str, path: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(text, path)
}

/// The example's artifacts hold symlinks; other hosts cannot clone them.
#[cfg(not(unix))]
fn symlink(_: &str, _: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Pads the artifacts until they hold `bytes` (half in host libraries,
/// half in device code objects); returns the input size reached.
fn grow(artifacts: &Path, bytes: u64) -> Result<u64, String> {
    let mut files = Vec::new();
    walk(artifacts, &mut files);
    let current: u64 = files.iter().map(|(_, size)| size).sum();
    let missing = bytes.saturating_sub(current);
    let host: Vec<(&PathBuf, u64)> = files
        .iter()
        .filter_map(|(path, _)| {
            let rel = path.to_string_lossy();
            HOST_PADDED
                .iter()
                .find(|(suffix, _)| rel.ends_with(suffix))
                .map(|(_, share)| (path, *share))
        })
        .collect();
    let device: Vec<&PathBuf> = files
        .iter()
        .map(|(path, _)| path)
        .filter(|p| {
            let rel = p.to_string_lossy();
            DEVICE_PADDED.iter().any(|end| rel.ends_with(end))
        })
        .collect();
    if host.is_empty() || device.is_empty() {
        return Err("the example has no files to pad".into());
    }
    let host_total: u64 = host.iter().map(|(_, share)| share).sum();
    let pool = filler_pool()?;
    let mut seed = current;
    for (path, share) in &host {
        seed += 1;
        append_filler(path, missing / 2 * share / host_total, &pool, seed)?;
    }
    for path in &device {
        seed += 1;
        append_filler(path, missing / 2 / device.len() as u64, &pool, seed)?;
    }
    let mut after = Vec::new();
    walk(artifacts, &mut after);
    Ok(after.iter().map(|(_, size)| size).sum())
}

/// Real machine code: the Rust toolchain's own `libLLVM`.
fn filler_pool() -> Result<Vec<u8>, String> {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let lib = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim()).join("lib");
    let llvm = fs::read_dir(&lib)
        .map_err(|e| format!("cannot list {}: {e}", lib.display()))?
        .filter_map(|e| Some(e.ok()?.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libLLVM"))
        })
        .ok_or_else(|| format!("no libLLVM in {}", lib.display()))?;
    fs::read(&llvm).map_err(|e| format!("cannot read {}: {e}", llvm.display()))
}

/// Appends `bytes` of the pool, from an offset chosen by `seed`.
fn append_filler(path: &Path, bytes: u64, pool: &[u8], seed: u64) -> Result<(), String> {
    let io = |e: std::io::Error| format!("cannot pad {}: {e}", path.display());
    let file = fs::OpenOptions::new().append(true).open(path).map_err(io)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut at = (seed as usize).wrapping_mul(7_919_993) % pool.len();
    let mut left = usize::try_from(bytes).unwrap_or(usize::MAX);
    while left > 0 {
        let n = left.min(pool.len() - at);
        out.write_all(&pool[at..at + n]).map_err(io)?;
        left -= n;
        at = (at + n) % pool.len();
    }
    out.flush().map_err(io)
}

/// Every regular file below `dir` with its size.
fn walk(dir: &Path, out: &mut Vec<(PathBuf, u64)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(&path, out);
        } else if meta.is_file() {
            out.push((path, meta.len()));
        }
    }
}

fn dir_size(dir: &Path) -> u64 {
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.iter().map(|(_, size)| size).sum()
}
