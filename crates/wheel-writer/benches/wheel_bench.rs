//! Writes one wheel from a generated mixed tree of more than 2 GB and
//! compares it, in the same run, with Python's `zipfile` at level 6 (the
//! reference's codec path) and `zip -r -6`: wall time, CPU time, peak RSS
//! (from `wait4` of each child process) and output size.
//!
//! Run with `cargo bench -p wheel-writer` (or `cargo xtask bench`). The tree
//! is generated under `target/wheel-writer-bench/` and removed afterwards.
//! `WHEEL_BENCH_MIB` overrides the size of the large files (default 2200 MiB
//! in total).
#![allow(
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::zombie_processes
)]

use std::fmt::Write as _;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use bench_support::Sample as Measured;
use wheel_writer::{CoreMetadata, FileSource, WheelBuilder, WheelReader, WheelTag, WriteOptions};

const LARGE_FILES: u64 = 8;
const SMALL_FILES: usize = 20_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child-ours") {
        child_ours(Path::new(&args[2]), Path::new(&args[3]));
        return;
    }
    let total_mib: u64 = std::env::var("WHEEL_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2200);
    let root = target_dir().join("wheel-writer-bench");
    let _ = fs::remove_dir_all(&root);
    let tree = root.join("tree");
    let out = root.join("out");
    fs::create_dir_all(&out).unwrap();
    let started = Instant::now();
    let input_bytes = generate_tree(&tree, total_mib);
    println!(
        "wheel-writer bench: generated {} MB in {} large files + {SMALL_FILES} small files in {:.1} s",
        input_bytes / 1_000_000,
        LARGE_FILES,
        started.elapsed().as_secs_f64()
    );
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    println!("cores: {cores}");

    let exe = std::env::current_exe().unwrap();
    let ours_path = out.join("ours");
    fs::create_dir_all(&ours_path).unwrap();
    let ours = measure(
        Command::new(&exe)
            .arg("--child-ours")
            .arg(&tree)
            .arg(&ours_path),
    );
    let wheel = fs::read_dir(&ours_path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("the child wrote a wheel");
    let ours_size = fs::metadata(&wheel).unwrap().len();
    let verification = WheelReader::open(&wheel).unwrap().verify().unwrap();
    assert!(verification.is_valid(), "{:?}", verification.problems);

    let py_out = out.join("zipfile.zip");
    let script = r#"
import os, sys, zipfile
root, dest = sys.argv[1], sys.argv[2]
paths = []
for d, dirs, files in os.walk(root):
    for f in files:
        full = os.path.join(d, f)
        paths.append(os.path.relpath(full, root))
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
    for p in sorted(paths):
        z.write(os.path.join(root, p), p)
"#;
    let python = measure(
        Command::new("python3")
            .args(["-c", script])
            .arg(&tree)
            .arg(&py_out),
    );
    let py_size = fs::metadata(&py_out).unwrap().len();

    let zip_out = out.join("zip.zip");
    let info_zip = ensure_zip().then(|| {
        let run = measure(
            Command::new("zip")
                .args(["-r", "-6", "-q", "-X"])
                .arg(&zip_out)
                .arg(".")
                .current_dir(&tree),
        );
        (run, fs::metadata(&zip_out).unwrap().len())
    });

    println!();
    println!(
        "{:<22} {:>9} {:>9} {:>11} {:>14} {:>9} {:>9}",
        "writer", "wall s", "cpu s", "peak RSS", "output bytes", "speed-up", "size"
    );
    let row = |name: &str, m: &Measured, size: u64| {
        println!(
            "{:<22} {:>9.2} {:>9.2} {:>7.0} MiB {:>14} {:>8.2}x {:>8.2}%",
            name,
            m.wall.as_secs_f64(),
            m.cpu.as_secs_f64(),
            m.max_rss_kib as f64 / 1024.0,
            size,
            python.wall.as_secs_f64() / m.wall.as_secs_f64(),
            size as f64 / py_size as f64 * 100.0
        );
    };
    row("wheel-writer (ours)", &ours, ours_size);
    row("python zipfile -6", &python, py_size);
    if let Some((m, size)) = &info_zip {
        row("zip -r -6", m, *size);
    } else {
        println!("zip -r -6: `zip` is not installed and could not be installed; skipped");
    }
    println!();
    println!(
        "ours vs python zipfile: {:.2}x faster on {cores} cores, output {:+.2}% , peak RSS {:.0} MiB (goal < 512)",
        python.wall.as_secs_f64() / ours.wall.as_secs_f64(),
        (ours_size as f64 / py_size as f64 - 1.0) * 100.0,
        ours.max_rss_kib as f64 / 1024.0
    );
    fs::remove_dir_all(&root).unwrap();
}

/// The child: one wheel holding every file of the tree, on all cores.
fn child_ours(tree: &Path, out: &Path) {
    let mut wheel = WheelBuilder::new(
        CoreMetadata::new("bench-tree", "1.0"),
        WheelTag::py3_none("linux_x86_64").unwrap(),
    )
    .unwrap();
    let mut stack = vec![tree.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(tree)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                wheel
                    .add_file(&rel, Arc::new(FileSource::new(&path).unwrap()))
                    .unwrap();
            }
        }
    }
    wheel.write(out, &WriteOptions::default(), None).unwrap();
}

/// Runs a child to completion and reads its own rusage
/// (`bench_support::measure`, through `wait4`).
fn measure(cmd: &mut Command) -> Measured {
    bench_support::measure(cmd).unwrap_or_else(|e| panic!("{e}"))
}

fn ensure_zip() -> bool {
    let have = || {
        Command::new("zip")
            .arg("-v")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if have() {
        return true;
    }
    let _ = Command::new("apt-get")
        .args(["install", "-y", "-qq", "zip"])
        .status();
    have()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    )
}

/// Large files of structured pseudo-random data (compresses to roughly
/// 60 %, like machine code and tables), plus many small text files.
fn generate_tree(tree: &Path, total_mib: u64) -> u64 {
    let lib = tree.join("_bench/lib");
    fs::create_dir_all(&lib).unwrap();
    let per_file = total_mib * 1024 * 1024 / LARGE_FILES;
    let mut total = 0;
    for i in 0..LARGE_FILES {
        let mut file = BufWriter::with_capacity(
            1 << 20,
            fs::File::create(lib.join(format!("libbench{i}.so"))).unwrap(),
        );
        let mut state = 0x9E37_79B9_7F4A_7C15_u64 ^ (i + 1);
        let mut block = Vec::with_capacity(1 << 20);
        let mut written = 0;
        while written < per_file {
            block.clear();
            fill_structured(
                &mut block,
                &mut state,
                (1 << 20).min(per_file - written) as usize,
            );
            file.write_all(&block).unwrap();
            written += block.len() as u64;
        }
        file.flush().unwrap();
        total += written;
    }
    let words = [
        "hip", "rocm", "kernel", "device", "stream", "memory", "launch", "target", "gfx942",
        "include", "return", "const", "struct", "template", "void", "int",
    ];
    let mut state = 12345_u64;
    for i in 0..SMALL_FILES {
        let dir = tree.join(format!("_bench/include/d{:03}", i % 200));
        fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        let lines = 20 + (i % 80);
        for line in 0..lines {
            for _ in 0..8 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(words[(state % words.len() as u64) as usize]);
                text.push(' ');
            }
            let _ = writeln!(text, "// {line}");
        }
        fs::write(dir.join(format!("h{i:05}.h")), &text).unwrap();
        total += text.len() as u64;
    }
    total
}

fn fill_structured(out: &mut Vec<u8>, state: &mut u64, len: usize) {
    const PATTERNS: [&[u8]; 4] = [
        b"\x48\x89\xe5\x41\x57\x41\x56\x41\x55",
        b"\x0f\x1f\x44\x00\x00",
        b"\xe8\x00\x00\x00\x00\x48\x8b\x45\xf8",
        b"\x00\x00\x00\x00\x00\x00\x00\x00",
    ];
    while out.len() < len {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let s = *state;
        if s % 5 < 2 {
            out.extend_from_slice(PATTERNS[(s >> 8) as usize % PATTERNS.len()]);
        } else {
            out.extend_from_slice(&s.to_le_bytes()[..=((s >> 60) as usize % 6)]);
        }
    }
    out.truncate(len);
}
