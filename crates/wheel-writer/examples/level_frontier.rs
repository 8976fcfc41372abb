//! How much deflate CPU any choice of libdeflate levels could save at
//! the reference's bytes: the bound for a rule that gives each member, or
//! each chunk, its own level (`docs/performance.md`, "What levels could
//! buy").
//!
//! `cargo run --release -p wheel-writer --example level_frontier -- DIST`
//! reads every member of every wheel under `DIST` (a `dist/` a build
//! wrote), cuts it into the writer's 4 MiB chunks and compresses each chunk
//! at levels 3 to 7, measuring the thread's CPU time (the least of three
//! runs: the machine's noise only ever adds). It prints each level's bytes
//! and CPU, then the *oracle*: the levels, chunk by chunk, that spend the
//! least CPU while the whole stays within a byte budget, as if each
//! chunk's outcome at every level were known beforehand. The budget is the
//! members' compressed bytes of Python's `zipfile` at level 6 on the same
//! wheels (the reference's codec path), then a few steps above level 6.
//! No real rule can do better than the oracle.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use libdeflater::{CompressionLvl, Compressor};
use wheel_writer::timings::thread_cpu_time;
use wheel_writer::{Compression, DEFAULT_CHUNK_SIZE, WheelReader, dist_dir};

const LEVELS: [i32; 5] = [3, 4, 5, 6, 7];
/// The writer's chunk: each is compressed on its own.
const CHUNK: usize = DEFAULT_CHUNK_SIZE as usize;

/// One chunk's compressed bytes and CPU seconds at each of [`LEVELS`].
type Outcomes = [(u64, f64); LEVELS.len()];

fn main() {
    let Some(dist) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: level_frontier DIST");
        std::process::exit(2);
    };
    let reference: u64 = bench_support::zipfile_level_6_sizes(&dist)
        .expect("python3 re-zips the wheels")
        .iter()
        .map(|wheel| wheel.zipfile_data)
        .sum();
    let chunks = chunks(&dist);
    let input: usize = chunks.iter().map(Vec::len).sum();
    let outcomes = compress_all(&chunks);
    println!(
        "{} chunks, {:.1} MB of members; zipfile -6: {reference} B of member data",
        chunks.len(),
        input as f64 / 1e6
    );
    let total = |pick: &dyn Fn(&Outcomes) -> (u64, f64)| {
        outcomes
            .iter()
            .map(pick)
            .fold((0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    let base = LEVELS
        .iter()
        .position(|&level| level.cast_unsigned() == Compression::DEFAULT_LEVEL)
        .expect("the default level is measured");
    let (base_bytes, base_cpu) = total(&|o| o[base]);
    let row = |name: &str, (bytes, cpu): (u64, f64)| {
        println!(
            "{name:<30} {bytes:>12} B {:>+7.2} % vs zipfile  {cpu:>7.2} CPU s {:>+6.1} % vs level {}",
            (bytes as f64 / reference as f64 - 1.0) * 100.0,
            (cpu / base_cpu - 1.0) * 100.0,
            Compression::DEFAULT_LEVEL
        );
    };
    for (index, level) in LEVELS.iter().enumerate() {
        row(&format!("level {level}"), total(&|o| o[index]));
    }
    row("oracle within zipfile -6", oracle(&outcomes, reference));
    for above in [0.0, 0.5, 1.0, 2.0] {
        let budget = (base_bytes as f64 * (1.0 + above / 100.0)) as u64;
        row(
            &format!(
                "oracle within level {} {above:+.1} %",
                Compression::DEFAULT_LEVEL
            ),
            oracle(&outcomes, budget),
        );
    }
}

/// The chunks of every wheel member under `dist`, in a fixed order, held in
/// memory (as much as the wheels unpacked).
fn chunks(dist: &Path) -> Vec<Vec<u8>> {
    let listing = dist_dir::list_packages(dist).expect("DIST is readable");
    let mut chunks = Vec::new();
    for path in listing.packages {
        if path.extension().is_none_or(|e| e != "whl") {
            continue;
        }
        let mut wheel = WheelReader::open(&path).expect("a wheel");
        let names: Vec<String> = wheel.member_names().map(str::to_owned).collect();
        for name in names {
            let bytes = wheel.read_member(&name, u64::MAX).expect("a member");
            chunks.extend(bytes.chunks(CHUNK).map(<[u8]>::to_vec));
        }
    }
    chunks
}

/// Every chunk at every level, on every core (in no particular order).
fn compress_all(chunks: &[Vec<u8>]) -> Vec<Outcomes> {
    let results = Mutex::new(Vec::with_capacity(chunks.len()));
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut compressors = LEVELS.map(|level| {
                    Compressor::new(CompressionLvl::new(level).expect("a libdeflate level"))
                });
                let mut out = vec![0; CHUNK + CHUNK / 100 + 1024];
                while let Some(chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let mut outcomes = [(0, 0.0); LEVELS.len()];
                    for (outcome, compressor) in outcomes.iter_mut().zip(&mut compressors) {
                        let mut least = f64::MAX;
                        for _ in 0..3 {
                            let start = thread_cpu_time().expect("a thread CPU clock");
                            let len = compressor.deflate_compress(chunk, &mut out).expect("fits");
                            let cpu = thread_cpu_time()
                                .expect("a thread CPU clock")
                                .saturating_sub(start);
                            least = least.min(cpu.as_secs_f64());
                            outcome.0 = len as u64;
                        }
                        outcome.1 = least;
                    }
                    results.lock().expect("no thread panicked").push(outcomes);
                }
            });
        }
    });
    results.into_inner().expect("no thread panicked")
}

/// The least total CPU with total bytes within `budget`: each chunk takes
/// the level minimising CPU + λ × bytes, λ found by bisection (the
/// Lagrangian bound, exact at the points of the convex frontier).
fn oracle(outcomes: &[Outcomes], budget: u64) -> (u64, f64) {
    let pick = |lambda: f64| {
        outcomes.iter().fold((0, 0.0), |total, levels| {
            let best = levels
                .iter()
                .min_by(|a, b| (a.1 + lambda * a.0 as f64).total_cmp(&(b.1 + lambda * b.0 as f64)))
                .expect("levels");
            (total.0 + best.0, total.1 + best.1)
        })
    };
    let (mut cheap, mut small) = (0.0, 1.0);
    for _ in 0..200 {
        let mid = f64::midpoint(cheap, small);
        if pick(mid).0 <= budget {
            small = mid;
        } else {
            cheap = mid;
        }
    }
    pick(small)
}
