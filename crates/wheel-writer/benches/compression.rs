//! Compressed size and CPU time of deflate set-ups (level, chunk size) on real machine code, next to Python's `zipfile` at level 6 (the
//! reference's codec path) on the same members in the same run.
//!
//! The corpus: the Rust toolchain's `libLLVM*` (on every build host),
//! `/usr/lib/x86_64-linux-gnu/*.so.*` and the text of `/usr/include`,
//! hard links counted once. Each set-up is a child process writing one
//! wheel of the whole corpus with `wheel-writer` on all cores (so wall,
//! CPU and peak RSS are those of the real writer); its size is the sum of
//! the members' compressed sizes, like Python's.
//!
//! Run with `cargo bench -p wheel-writer --bench compression` (or `cargo
//! xtask bench`). `COMPRESSION_BENCH_MIB` caps the corpus;
//! `COMPRESSION_BENCH_SETUPS` picks set-ups, as space-separated
//! `level:chunk-MiB`.
#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use bench_support::{Sample, measure};
use wheel_writer::{Compression, CoreMetadata, FileSource, WheelBuilder, WheelTag, WriteOptions};

/// The set-ups of the table in `docs/wheel-writer.md`; 6:4 is the
/// default.
const SETUPS: &str = "4:4 5:4 6:1 6:4 6:16 6:64 7:4 8:4 9:4";

/// Names members by their index, so every set-up sees the same names.
const MEMBER_PREFIX: &str = "corpus/";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        println!("compression: bench");
        return;
    }
    if args.get(1).map(String::as_str) == Some("--child") {
        child(&args[2], Path::new(&args[3]), Path::new(&args[4]));
        return;
    }
    let cap_mib: u64 = std::env::var("COMPRESSION_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u64::MAX >> 20);
    let setups = std::env::var("COMPRESSION_BENCH_SETUPS").unwrap_or_else(|_| SETUPS.into());
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compression-bench");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    let files = corpus(cap_mib << 20);
    let input: u64 = files.iter().map(|(_, size)| size).sum();
    let list = work.join("corpus.txt");
    let lines: Vec<&str> = files.iter().map(|(p, _)| p.to_str().unwrap()).collect();
    fs::write(&list, lines.join("\n")).unwrap();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "compression bench: {} files, {:.1} MB ({:.1} MB in files over 4 MiB), {cores} cores",
        files.len(),
        input as f64 / 1e6,
        files
            .iter()
            .filter(|(_, s)| *s > 4 << 20)
            .map(|(_, s)| *s as f64)
            .sum::<f64>()
            / 1e6,
    );

    let result = work.join("result.txt");
    let python = measure(
        Command::new("python3")
            .args(["-c", PYTHON_ZIPFILE_6])
            .arg(&list)
            .arg(work.join("zipfile.zip"))
            .arg(&result),
    )
    .expect("python3 runs");
    let baseline = read_bytes(&result);
    println!();
    println!(
        "{:<24} {:>13} {:>10} {:>8} {:>8} {:>9}",
        "set-up (chunk MiB)", "bytes", "vs zipfile", "CPU s", "wall s", "RSS MiB"
    );
    let row = |name: &str, bytes: u64, sample: Sample| {
        println!(
            "{name:<24} {bytes:>13} {:>+9.2}% {:>8.2} {:>8.2} {:>9.0}",
            (bytes as f64 / baseline as f64 - 1.0) * 100.0,
            sample.cpu.as_secs_f64(),
            sample.wall.as_secs_f64(),
            sample.max_rss_kib as f64 / 1024.0
        );
    };
    row("python zipfile -6", baseline, python);
    let exe = std::env::current_exe().unwrap();
    let default = format!("{}:4", Compression::DEFAULT_LEVEL);
    for setup in setups.split_whitespace() {
        let sample = measure(
            Command::new(&exe)
                .arg("--child")
                .arg(setup)
                .arg(&list)
                .arg(&result),
        )
        .unwrap_or_else(|e| panic!("{setup}: {e}"));
        let name = if setup == default {
            format!("{setup} (default)")
        } else {
            setup.to_owned()
        };
        row(&name, read_bytes(&result), sample);
    }
    let _ = fs::remove_dir_all(&work);
}

/// Python's `zipfile` at level 6, one member per file in order; writes the
/// sum of the compressed sizes.
const PYTHON_ZIPFILE_6: &str = r#"
import sys, zipfile
paths = open(sys.argv[1]).read().split("\n")
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
    for i, path in enumerate(paths):
        z.write(path, "corpus/%06d" % i)
    total = sum(info.compress_size for info in z.infolist())
open(sys.argv[3], "w").write(str(total))
"#;

fn read_bytes(path: &Path) -> u64 {
    fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

/// The child: one wheel of the whole corpus with `setup`; writes the sum
/// of the corpus members' compressed sizes to `result`.
fn child(setup: &str, list: &Path, result: &Path) {
    let fields: Vec<&str> = setup.split(':').collect();
    let [level, chunk_mib] = fields[..] else {
        panic!("a set-up is level:chunk-MiB, not {setup}");
    };
    let options = WriteOptions::default()
        .with_compression(Compression::Deflate {
            level: level.parse().unwrap(),
        })
        .with_chunk_size(chunk_mib.parse::<u64>().unwrap() << 20);
    let mut wheel = WheelBuilder::new(
        CoreMetadata::new("compression-bench", "1.0"),
        WheelTag::py3_none("linux_x86_64").unwrap(),
    )
    .unwrap();
    let paths = fs::read_to_string(list).unwrap();
    for (i, path) in paths.split('\n').enumerate() {
        wheel
            .add_file(
                &format!("{MEMBER_PREFIX}{i:06}"),
                Arc::new(FileSource::new(Path::new(path)).unwrap()),
            )
            .unwrap();
    }
    let dir = list.with_file_name(format!("child-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let written = wheel.write(&dir, &options, None).unwrap();
    let archive = pypa_formats::zip_archive::ZipArchive::new(std::io::BufReader::new(
        fs::File::open(&written.path).unwrap(),
    ))
    .unwrap();
    let total: u64 = archive
        .entries()
        .iter()
        .filter(|member| member.name().starts_with(MEMBER_PREFIX))
        .map(pypa_formats::zip_archive::ZipEntry::compressed_size)
        .sum();
    fs::write(result, total.to_string()).unwrap();
    fs::remove_dir_all(&dir).unwrap();
}

/// The corpus files in a fixed order, up to `cap` bytes.
fn corpus(cap: u64) -> Vec<(PathBuf, u64)> {
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    let toolchain_lib =
        PathBuf::from(String::from_utf8(sysroot.stdout).unwrap().trim()).join("lib");
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut llvm = list_dir(&toolchain_lib, |name| name.starts_with("libLLVM"));
    assert!(!llvm.is_empty(), "the toolchain ships libLLVM");
    candidates.append(&mut llvm);
    candidates.extend(list_dir(Path::new("/usr/lib/x86_64-linux-gnu"), |name| {
        name.contains(".so.")
    }));
    let mut headers = Vec::new();
    walk(Path::new("/usr/include"), &mut headers);
    headers.sort();
    candidates.extend(headers);
    let mut seen = std::collections::HashSet::new();
    let mut files = Vec::new();
    let mut total = 0;
    for path in candidates {
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() || !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        if total + meta.len() > cap {
            continue;
        }
        total += meta.len();
        files.push((path, meta.len()));
    }
    files
}

fn list_dir(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| keep(&n.to_string_lossy())))
        .collect();
    paths.sort();
    paths
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(&path, out);
        } else if meta.is_file() {
            out.push(path);
        }
    }
}
