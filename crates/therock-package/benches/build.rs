//! `therock-package build` on a scaled example (≥ 3 GB, ≥ 1 000 files, two
//! families sharing a 1 GiB library; the bulk is real machine code), both modes, next to a floor measured
//! in the same run: the same input bytes deflated at level 6 on all cores
//! (`tar -cf - … | pigz -6`). Prints wall, CPU, peak RSS and output sizes,
//! and each wheel's size next to its members zipped by Python's `zipfile`
//! at level 6 (the reference's codec). Then the same set as 2 and 4 shards
//! (`build --shard K/N`, one after the other): the slowest shard's wall
//! next to the one-machine build's, the most a matrix of that many runners
//! can gain (docs/releasing.md).
//!
//! The same scaled artifacts are then packed as `.tar.zst` (and `.tar.xz`)
//! archives and built again: the archive build is measured against the
//! directory build of the same run, and its `dist/` must be the same bytes.
//!
//! Run with `cargo bench -p therock-package --bench build` (or `cargo xtask
//! bench`); installs `pigz`, `zstd`, `xz` and GNU `time` when missing. `BENCH_SCALE_MIB`
//! shrinks the large files for a quick look (default 1024).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss
)]

use std::fmt::Write as _;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use fixtures::{ExampleMode, Layout};

/// Large files appended to real ELF files of the example: (relpath suffix,
/// MiB at scale 1024). The rocblas library is the same bytes in both legacy
/// families' libraries packages.
const PADDED: &[(&str, u64)] = &[
    ("lib/librocblas.so.5.0", 1024),
    ("lib/libamdhip64.so.7.1.0", 700),
    ("lib/libamd_comgr.so.3.0", 500),
    ("lib/llvm/bin/clang", 500),
    ("lib/libhipfft.so.0.1", 200),
];

/// Devel-only headers added to `core-hip_dev_generic`.
const HEADERS: usize = 1200;

#[derive(Debug, Default)]
struct Measured {
    wall: f64,
    cpu: f64,
    rss_mib: f64,
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("build: bench");
        return;
    }
    ensure_tools();
    let scale: u64 = std::env::var("BENCH_SCALE_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("build-bench");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    let example = fixtures::generate(&work.join("example")).unwrap();
    println!(
        "therock-package build benchmark (scale {scale} MiB), {} cores",
        cores()
    );
    for mode in ExampleMode::ALL {
        let artifacts = example.artifact_dir(mode, Layout::Tree);
        let (bytes, files) = scale_up(&artifacts, scale);
        let floor = floor(&artifacts);
        let dest = work.join(format!("out-{}", mode.dir_name()));
        let ours = measure(
            Command::new(env!("CARGO_BIN_EXE_therock-package"))
                .args(["build", "-q", "--artifact-dir"])
                .arg(&artifacts)
                .arg("--dest-dir")
                .arg(&dest),
        );
        let out_bytes = dir_size(&dest.join("dist"));
        let archives: Vec<(&str, Measured)> = [("tar.zst", "zstd -T0 -3"), ("tar.xz", "xz -T0 -3")]
            .into_iter()
            .map(|(extension, codec)| {
                let packed = work.join(format!("{}-{extension}", mode.dir_name()));
                pack(&artifacts, &packed, extension, codec);
                let out = work.join(format!("out-{}-{extension}", mode.dir_name()));
                let measured = measure(
                    Command::new(env!("CARGO_BIN_EXE_therock-package"))
                        .args(["build", "-q", "--artifact-dir"])
                        .arg(&packed)
                        .arg("--dest-dir")
                        .arg(&out),
                );
                assert!(
                    same_files(&dest.join("dist"), &out.join("dist")),
                    "{mode:?} {extension}: dist/ differs from the directory build"
                );
                let _ = fs::remove_dir_all(&packed);
                let _ = fs::remove_dir_all(&out);
                (extension, measured)
            })
            .collect();
        println!(
            "\n{mode:?}: input {:.2} GB in {files} files",
            bytes as f64 / 1e9
        );
        // The reference's packaging cost: the same members zipped by
        // Python's zipfile at level 6 (the run also inflates ours to read
        // them, so it is an upper bound of the reference's cost).
        let (model, sizes) = measure_model(&dest.join("dist"));
        println!(
            "  {:<28} {:>8} {:>8} {:>10} {:>6}",
            "", "wall s", "CPU s", "RSS MiB", "util"
        );
        print_measured("floor: tar | pigz -6", &floor);
        print_measured("reference: zipfile -6", &model);
        print_measured("therock-package build", &ours);
        for (extension, measured) in &archives {
            print_measured(&format!("  from .{extension} artifacts"), measured);
        }
        println!(
            "  build CPU to zipfile -6 CPU: {:.2}x (util: CPU / (wall x {} cores))",
            ours.cpu / model.cpu,
            cores()
        );
        println!(
            "  ratio to floor (wall): {:.2}x; output {:.2} GB",
            ours.wall / floor.wall,
            out_bytes as f64 / 1e9
        );
        for (extension, measured) in &archives {
            println!(
                "  .{extension} build to directory build (wall): {:.2}x, same dist/ bytes",
                measured.wall / ours.wall
            );
        }
        println!("  wheels next to the same members zipped by Python's zipfile at level 6:");
        bench_support::print_zipfile_comparison(&sizes);
        let _ = fs::remove_dir_all(&dest);
        print_shards(&artifacts, &work, &ours);
    }
    let _ = fs::remove_dir_all(&work);
}

/// Builds every shard of a 2- and a 4-way split and prints the slowest
/// shard's wall time next to the one-machine build's.
fn print_shards(artifacts: &Path, work: &Path, whole: &Measured) {
    println!("  sharded (each shard alone on this machine):");
    println!(
        "  {:<28} {:>8} {:>8} {:>10} {:>6} {:>14}",
        "", "wall s", "CPU s", "RSS MiB", "util", "wall / whole"
    );
    for count in [2, 4] {
        let plan = Command::new(env!("CARGO_BIN_EXE_therock-package"))
            .args(["plan", "--artifact-dir"])
            .arg(artifacts)
            .args(["--shards", &count.to_string(), "--json"])
            .output()
            .unwrap();
        assert!(plan.status.success(), "plan --shards {count} failed");
        let matrix: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
        let mut slowest = Measured::default();
        for entry in matrix["include"].as_array().unwrap() {
            let shard = entry["shard"].as_str().unwrap();
            let dest = work.join(format!("shard-{}", shard.replace('/', "-of-")));
            let run = measure(
                Command::new(env!("CARGO_BIN_EXE_therock-package"))
                    .args(["build", "-q", "--artifact-dir"])
                    .arg(artifacts)
                    .arg("--dest-dir")
                    .arg(&dest)
                    .args(["--shard", shard]),
            );
            let _ = fs::remove_dir_all(&dest);
            if run.wall > slowest.wall {
                slowest = run;
            }
        }
        println!(
            "  {:<28} {:>8.2} {:>8.2} {:>10.0} {:>5.0}% {:>13.2}x",
            format!("slowest of {count} shards"),
            slowest.wall,
            slowest.cpu,
            slowest.rss_mib,
            slowest.utilisation() * 100.0,
            slowest.wall / whole.wall
        );
    }
}

impl Measured {
    /// How busy the cores were: CPU / (wall x cores).
    fn utilisation(&self) -> f64 {
        self.cpu / (self.wall * cores() as f64)
    }
}

fn print_measured(name: &str, measured: &Measured) {
    let rss = if measured.rss_mib.is_nan() {
        "-".to_owned()
    } else {
        format!("{:.0}", measured.rss_mib)
    };
    println!(
        "  {:<28} {:>8.2} {:>8.2} {:>10} {:>5.0}%",
        name,
        measured.wall,
        measured.cpu,
        rss,
        measured.utilisation() * 100.0
    );
}

/// Python's zipfile at level 6 on the members of every wheel in `dist`:
/// its cost and the sizes.
fn measure_model(dist: &Path) -> (Measured, Vec<bench_support::WheelSize>) {
    let (sample, sizes) =
        bench_support::measure_in_process(|| bench_support::zipfile_level_6_sizes(dist).unwrap());
    let measured = Measured {
        wall: sample.wall.as_secs_f64(),
        cpu: sample.cpu.as_secs_f64(),
        // The child's own peak is not reported in-process.
        rss_mib: f64::NAN,
    };
    (measured, sizes)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn ensure_tools() {
    let missing: Vec<&str> = [
        ("pigz", "/usr/bin/pigz"),
        ("time", "/usr/bin/time"),
        ("zstd", "/usr/bin/zstd"),
        ("xz-utils", "/usr/bin/xz"),
    ]
    .into_iter()
    .filter(|(_, path)| !Path::new(path).exists())
    .map(|(package, _)| package)
    .collect();
    if missing.is_empty() {
        return;
    }
    let _ = Command::new("apt-get").args(["update", "-qq"]).status();
    let status = Command::new("apt-get")
        .args(["install", "-y", "-qq"])
        .args(&missing)
        .status()
        .expect("apt-get runs");
    assert!(status.success(), "cannot install {missing:?}");
}

/// Appends deterministic, somewhat compressible bytes to the example's big
/// files (ELF files stay valid: the loader ignores bytes past the headers'
/// reach) and adds many small headers; returns the input bytes and files.
fn scale_up(artifacts: &Path, scale: u64) -> (u64, usize) {
    let mut files = Vec::new();
    walk(artifacts, &mut files);
    for path in &files {
        let rel = path.to_string_lossy();
        if let Some((_, mib)) = PADDED.iter().find(|(suffix, _)| rel.ends_with(suffix)) {
            let seed = PADDED.iter().position(|(s, _)| rel.ends_with(s)).unwrap() as u64;
            append_filler(path, mib * scale / 1024 * 1024 * 1024, seed);
        }
    }
    let include =
        find_dir(&artifacts.join("core-hip_dev_generic"), "include").join("hip/generated");
    fs::create_dir_all(&include).unwrap();
    for i in 0..HEADERS {
        let mut text = format!("#pragma once\n// generated header {i}\n");
        for j in 0..400 {
            let _ = writeln!(text, "int hip_generated_{i}_{j}(int x); // {}", i * j % 97);
        }
        fs::write(include.join(format!("gen_{i:04}.h")), text).unwrap();
    }
    let mut all = Vec::new();
    walk(artifacts, &mut all);
    let bytes = all
        .iter()
        .map(|p| fs::symlink_metadata(p).unwrap().len())
        .sum();
    (bytes, all.len())
}

fn find_dir(root: &Path, name: &str) -> PathBuf {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                if path.file_name().is_some_and(|n| n == name) {
                    return path;
                }
                stack.push(path);
            }
        }
    }
    panic!("no {name} under {}", root.display());
}

/// Real machine code as filler: the Rust toolchain's own `libLLVM` (on
/// every build host), read from a per-file offset and repeated, so the
/// codecs see what they see in ROCm libraries.
fn append_filler(path: &Path, bytes: u64, seed: u64) {
    let pool = filler_pool();
    let file = fs::OpenOptions::new().append(true).open(path).unwrap();
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut at = (seed as usize * 7_919_993) % pool.len();
    let mut left = bytes as usize;
    while left > 0 {
        let n = left.min(pool.len() - at);
        out.write_all(&pool[at..at + n]).unwrap();
        left -= n;
        at = (at + n) % pool.len();
    }
    out.flush().unwrap();
}

fn filler_pool() -> &'static [u8] {
    static POOL: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let sysroot = Command::new("rustc")
            .args(["--print", "sysroot"])
            .output()
            .unwrap();
        let lib = PathBuf::from(String::from_utf8(sysroot.stdout).unwrap().trim()).join("lib");
        let llvm = fixtures::files::entry_starting_with(&lib, "libLLVM");
        fs::read(llvm).unwrap()
    })
}

/// Appends every regular file under `dir` (links left out) to `out`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    out.extend(
        fixtures::files::relative_files(dir)
            .into_iter()
            .map(|rel| dir.join(rel)),
    );
}

fn dir_size(dir: &Path) -> u64 {
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.iter().map(|p| fs::metadata(p).unwrap().len()).sum()
}

/// Packs every artifact directory of `tree` as `{name}.{extension}` in
/// `out`, manifest first (as TheRock writes them), with `codec` (a
/// command reading the tar on stdin).
fn pack(tree: &Path, out: &Path, extension: &str, codec: &str) {
    fs::create_dir_all(out).unwrap();
    for entry in fs::read_dir(tree).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let script = format!(
            "cd '{}' && tar --sort=name -cf - artifact_manifest.txt \
             $(ls -A | grep -vx artifact_manifest.txt) | {codec} > '{}'",
            dir.display(),
            out.join(format!("{name}.{extension}")).display()
        );
        let status = Command::new("sh").arg("-c").arg(script).status().unwrap();
        assert!(status.success(), "cannot pack {}", dir.display());
    }
}

/// Whether two trees hold the same files with the same bytes.
fn same_files(a: &Path, b: &Path) -> bool {
    let (mut left, mut right) = (Vec::new(), Vec::new());
    walk(a, &mut left);
    walk(b, &mut right);
    let relative = |root: &Path, files: Vec<PathBuf>| -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = files
            .into_iter()
            .map(|p| p.strip_prefix(root).unwrap().to_path_buf())
            .collect();
        out.sort();
        out
    };
    let (left, right) = (relative(a, left), relative(b, right));
    left == right
        && left
            .iter()
            .all(|rel| fs::read(a.join(rel)).unwrap() == fs::read(b.join(rel)).unwrap())
}

/// The floor: every input byte deflated at level 6 on all cores.
fn floor(artifacts: &Path) -> Measured {
    measure(Command::new("sh").arg("-c").arg(format!(
        "tar -C '{}' -cf - . | pigz -6 -p {} > /dev/null",
        artifacts.display(),
        cores()
    )))
}

/// Runs under GNU time: wall, user+system CPU and peak RSS of the run.
fn measure(command: &mut Command) -> Measured {
    let report = tempfile::NamedTempFile::new().unwrap();
    let program = command.get_program().to_owned();
    let args: Vec<_> = command.get_args().map(ToOwned::to_owned).collect();
    let status = Command::new("/usr/bin/time")
        .arg("-o")
        .arg(report.path())
        .args(["-f", "%e %U %S %M"])
        .arg(program)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "{command:?} failed");
    let text = fs::read_to_string(report.path()).unwrap();
    let v: Vec<f64> = text
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    Measured {
        wall: v[0],
        cpu: v[1] + v[2],
        rss_mib: v[3] / 1024.0,
    }
}
