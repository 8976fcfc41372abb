//! Benchmark: in-process edits against Debian's patchelf on the same files.
//!
//! For each ELF shared object in the system library directory plus the Rust
//! toolchain's `libLLVM` and `librustc_driver` (lld-linked, program headers
//! moved by BOLT), both sides produce an edited copy that appends
//! `$ORIGIN/../x/lib:$ORIGIN/../../y/lib` and forces DT_RPATH:
//! - ours: parse, plan, verify, stream the output to a new file;
//! - baseline: copy the file, `patchelf --add-rpath`, then
//!   `patchelf --set-rpath … --force-rpath` (as the reference does).
//!
//! Both sides run three rounds, alternating; the ratio is the median round's.
//!
//! Then the ~200 MB libLLVM: edit vs plain copy. Prints ratios, wall, CPU and
//! peak RSS (`bench_support`: this process for ours, each patchelf child
//! for the baseline). Run with `cargo bench -p elf-surgery` (or `cargo xtask bench`);
//! installs patchelf with apt-get when it is missing.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss
)]

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_support::{Sample, measure, measure_in_process, median, print_row};
use elf_surgery::{ElfFile, ElfKind, SearchPathEdit};

const APPENDED: [&str; 2] = ["$ORIGIN/../x/lib", "$ORIGIN/../../y/lib"];
const LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu";
/// Rounds of both sides; the first is also measured for CPU and memory.
const ROUNDS: usize = 3;

fn ensure_patchelf() -> Result<(), String> {
    let have = || {
        Command::new("patchelf")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if have() {
        return Ok(());
    }
    eprintln!("installing patchelf with apt-get for the baseline");
    let install = || {
        Command::new("apt-get")
            .args([
                "install",
                "-y",
                "-qq",
                "--no-install-recommends",
                "patchelf",
            ])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !install() {
        let _ = Command::new("apt-get").args(["update", "-qq"]).status();
        install();
    }
    if have() {
        Ok(())
    } else {
        Err("patchelf is missing and could not be installed".into())
    }
}

fn sysroot() -> PathBuf {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Shared objects to edit: the system library directory (top level) and the
/// toolchain's hard files, sorted; each with the RPATH both sides must reach.
fn corpus() -> Vec<(PathBuf, String)> {
    let mut paths: Vec<PathBuf> = fs::read_dir(LIB_DIR)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .collect();
    paths.extend(
        fs::read_dir(sysroot().join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| fs::metadata(p).is_ok_and(|m| m.len() > 1 << 20)),
    );
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let elf = ElfFile::open(&p).ok()?;
            let native = elf.machine() == Some(object_em_x86_64());
            (elf.kind() == ElfKind::SharedObject && native && elf.has_dynamic()).then(|| {
                let mut parts: Vec<String> = elf
                    .runpath()
                    .or(elf.rpath())
                    .filter(|r| !r.is_empty())
                    .map(|r| vec![r.to_string()])
                    .unwrap_or_default();
                let existing: Vec<String> = parts
                    .first()
                    .map(|r| r.split(':').map(String::from).collect())
                    .unwrap_or_default();
                parts.extend(
                    APPENDED
                        .iter()
                        .filter(|a| !existing.iter().any(|e| e == *a))
                        .map(|a| (*a).to_string()),
                );
                (p, parts.join(":"))
            })
        })
        .collect()
}

fn object_em_x86_64() -> u16 {
    62
}

/// Our edit, in this process: it runs no child.
fn ours(src: &Path, dest: &Path) -> Result<Vec<Sample>, String> {
    let request = SearchPathEdit::append(APPENDED).force_rpath();
    let mut source = fs::File::open(src).map_err(|e| e.to_string())?;
    let elf = ElfFile::parse(&mut source).map_err(|e| e.to_string())?;
    let edit = elf
        .plan_edit(&mut source, &request)
        .map_err(|e| e.to_string())?;
    let perms = source.metadata().map_err(|e| e.to_string())?.permissions();
    edit.write_atomically(&mut source, dest, perms)
        .map_err(|e| e.to_string())?;
    Ok(Vec::new())
}

/// The reference's edit: a copy, then two patchelf children, each measured.
fn baseline(src: &Path, dest: &Path, rpath: &str) -> Result<Vec<Sample>, String> {
    fs::copy(src, dest).map_err(|e| e.to_string())?;
    let run = |args: &[&str]| {
        measure(
            Command::new("patchelf")
                .args(args)
                .arg(dest)
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
        )
    };
    Ok(vec![
        run(&["--add-rpath", &APPENDED.join(":")])?,
        run(&["--set-rpath", rpath, "--force-rpath"])?,
    ])
}

struct Side {
    wall: Duration,
    slowest: (Duration, PathBuf),
    failures: Vec<String>,
    /// The children the side ran, each measured.
    children: Vec<Sample>,
}

fn run_side(
    files: &[(PathBuf, String)],
    dir: &Path,
    f: impl Fn(&Path, &Path, &str) -> Result<Vec<Sample>, String>,
) -> Side {
    let mut side = Side {
        wall: Duration::ZERO,
        slowest: (Duration::ZERO, PathBuf::new()),
        failures: Vec::new(),
        children: Vec::new(),
    };
    for (i, (path, rpath)) in files.iter().enumerate() {
        let dest = dir.join(format!("{i}.so"));
        let start = Instant::now();
        let result = f(path, &dest, rpath);
        let took = start.elapsed();
        side.wall += took;
        if took > side.slowest.0 {
            side.slowest = (took, path.clone());
        }
        match result {
            Ok(children) => side.children.extend(children),
            Err(e) => side
                .failures
                .push(format!("{}: {}", path.display(), e.trim())),
        }
        let _ = fs::remove_file(&dest);
    }
    side
}

fn stream_to_sink(mut r: impl Read) -> u64 {
    io::copy(&mut r, &mut io::sink()).unwrap()
}

fn main() -> Result<(), String> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    ensure_patchelf()?;
    let files = corpus();
    let bytes: u64 = files
        .iter()
        .map(|(p, _)| fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    println!(
        "elf-surgery vs patchelf: {} shared objects, {:.1} MiB",
        files.len(),
        bytes as f64 / 1_048_576.0
    );

    // Warm the page cache so neither side pays for the first read from disk.
    for (p, _) in &files {
        if let Ok(f) = fs::File::open(p) {
            stream_to_sink(f);
        }
    }
    // Ours first, so this process's peak RSS is ours alone where it
    // cannot be reset. Then alternating rounds: the ratio reported is the
    // median of the rounds' ratios, as one round swings with the load.
    let (our_sample, our) =
        measure_in_process(|| run_side(&files, tmp.path(), |s, d, _| ours(s, d)));
    let (here, theirs) = measure_in_process(|| run_side(&files, tmp.path(), baseline));
    let mut ratios = vec![theirs.wall.as_secs_f64() / our.wall.as_secs_f64()];
    for _ in 1..ROUNDS {
        let ours_wall = run_side(&files, tmp.path(), |s, d, _| ours(s, d)).wall;
        let theirs_wall = run_side(&files, tmp.path(), baseline).wall;
        ratios.push(theirs_wall.as_secs_f64() / ours_wall.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    let their_cpu: Duration = theirs.children.iter().map(|c| c.cpu).sum();
    let their_rss = theirs
        .children
        .iter()
        .map(|c| c.max_rss_kib)
        .max()
        .unwrap_or(0);

    println!(
        "  ours:     wall {:>8.3} s  cpu {:>8.3} s  peak RSS {:>7} KiB  failures {}",
        our.wall.as_secs_f64(),
        our_sample.cpu.as_secs_f64(),
        our_sample.max_rss_kib,
        our.failures.len()
    );
    println!(
        "            slowest {:.3} s  {}",
        our.slowest.0.as_secs_f64(),
        our.slowest.1.display()
    );
    println!(
        "  patchelf: wall {:>8.3} s  cpu {:>8.3} s  peak RSS {:>7} KiB  failures {} (plus {:.3} s cpu here for copies)",
        theirs.wall.as_secs_f64(),
        their_cpu.as_secs_f64(),
        their_rss,
        theirs.failures.len(),
        here.cpu.saturating_sub(their_cpu).as_secs_f64()
    );
    println!(
        "            slowest {:.3} s  {}",
        theirs.slowest.0.as_secs_f64(),
        theirs.slowest.1.display()
    );
    println!(
        "  ratio (patchelf wall / ours wall), median of {ROUNDS} rounds: {:.1}x (rounds: {})",
        ratios[ratios.len() / 2],
        ratios
            .iter()
            .map(|r| format!("{r:.1}x"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for f in our.failures.iter().chain(&theirs.failures).take(10) {
        println!("  failure: {f}");
    }

    // The biggest file: edit vs copy, to a file and streamed.
    let Some((big, _)) = files
        .iter()
        .max_by_key(|(p, _)| fs::metadata(p).map_or(0, |m| m.len()))
    else {
        return Ok(());
    };
    let size = fs::metadata(big).map_err(|e| e.to_string())?.len();
    let dest = tmp.path().join("big.so");
    let time = |f: &dyn Fn()| {
        let runs: Vec<Sample> = (0..3)
            .map(|_| {
                let (sample, ()) = measure_in_process(f);
                let _ = fs::remove_file(&dest);
                sample
            })
            .collect();
        median(&runs)
    };
    let copy = time(&|| {
        fs::copy(big, &dest).unwrap();
    });
    let edit = time(&|| {
        ours(big, &dest).unwrap();
    });
    let read_plain = time(&|| {
        stream_to_sink(fs::File::open(big).unwrap());
    });
    let read_edit = time(&|| {
        let mut source = fs::File::open(big).unwrap();
        let elf = ElfFile::parse(&mut source).unwrap();
        let e = elf
            .plan_edit(&mut source, &SearchPathEdit::append(APPENDED).force_rpath())
            .unwrap();
        stream_to_sink(e.reader(source).unwrap());
    });
    println!("{} ({:.0} MiB):", big.display(), size as f64 / 1_048_576.0);
    let ratio = |a: Sample, b: Sample| a.wall.as_secs_f64() / b.wall.as_secs_f64();
    print_row("write: fs::copy", copy);
    print_row("write: edit", edit);
    println!("  write ratio (edit / copy): {:.2}", ratio(edit, copy));
    print_row("stream: plain file read", read_plain);
    print_row("stream: edited reader", read_edit);
    println!(
        "  stream ratio (edited / plain): {:.2}",
        ratio(read_edit, read_plain)
    );
    Ok(())
}
