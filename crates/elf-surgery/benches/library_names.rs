//! Benchmark: what finding runtime-alias names costs a build
//! (docs/elf-surgery.md, "Runtime aliases"). The build reads every file
//! of the set once to compress it; discovery adds the `.rodata` sections
//! of each host ELF file, read in the pass that classifies the file.
//!
//! For every ELF shared object and executable under `BENCH_ELF_DIR`
//! (default: the system library directory), medians of three rounds:
//! - discovery: parse, then `library_name_literals` (the `.rodata` scan);
//! - baseline: read the same files whole, as the build's compression does.
//!
//! Prints both rows, the ratio, the bytes of the files and of their
//! `.rodata`, and the names found. Run with
//! `cargo bench -p elf-surgery --bench library_names` (or `cargo xtask bench`).
#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use bench_support::{Sample, measure_in_process, median, print_row};
use elf_surgery::{ElfFile, ElfKind};

const DEFAULT_DIR: &str = "/usr/lib/x86_64-linux-gnu";
const ROUNDS: usize = 3;

/// Host ELF shared objects and executables under `dir`, links not followed.
fn elf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            elf_files(&path, out);
        } else if kind.is_file()
            && ElfFile::open(&path).is_ok_and(|f| {
                matches!(
                    f.kind(),
                    ElfKind::SharedObject | ElfKind::DynamicExecutable | ElfKind::StaticExecutable
                )
            })
        {
            out.push(path);
        }
    }
}

fn discover(files: &[PathBuf]) -> usize {
    let mut names = 0;
    for path in files {
        let mut file = File::open(path).expect("the file opens");
        if let Ok(elf) = ElfFile::parse(&mut file) {
            names += elf.library_name_literals(&mut file).map_or(0, |n| n.len());
        }
    }
    names
}

fn read_whole(files: &[PathBuf]) -> u64 {
    let mut buf = vec![0; 1 << 20];
    let mut total = 0;
    for path in files {
        let mut file = File::open(path).expect("the file opens");
        while let Ok(n) = file.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n as u64;
        }
    }
    total
}

fn main() {
    let dir =
        std::env::var_os("BENCH_ELF_DIR").map_or_else(|| PathBuf::from(DEFAULT_DIR), PathBuf::from);
    let mut files = Vec::new();
    elf_files(&dir, &mut files);
    files.sort();
    println!(
        "runtime-alias discovery over {} ELF files under {}",
        files.len(),
        dir.display()
    );
    // Warm the page cache, as the build's own pass has it.
    let bytes = read_whole(&files);
    let mut ours: Vec<Sample> = Vec::new();
    let mut base: Vec<Sample> = Vec::new();
    let mut names = 0;
    for _ in 0..ROUNDS {
        let (sample, found) = measure_in_process(|| discover(&files));
        names = found;
        ours.push(sample);
        base.push(measure_in_process(|| read_whole(&files)).0);
    }
    let (ours, base) = (median(&ours), median(&base));
    print_row("discovery (.rodata scan)", ours);
    print_row("baseline: read whole", base);
    println!(
        "  {} MiB of files, {names} names found; discovery costs {:.2}x reading them once",
        bytes >> 20,
        ours.cpu.as_secs_f64() / base.cpu.as_secs_f64().max(1e-9)
    );
}
