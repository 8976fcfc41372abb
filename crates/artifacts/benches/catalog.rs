//! Reading archive artifacts in place vs. the reference's way (extract with
//! `tar`, then walk the tree), on a synthetic artifact set, in one run.
//!
//! Run: `cargo bench -p artifacts --bench catalog` (or `cargo xtask bench`).
//! Prints wall time, CPU time (self + children) and peak RSS per phase
//! (`bench_support::measure_in_process`), and the ratios against the
//! baseline. Needs `tar` and `zstd` on PATH.
#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use artifacts::{ArtifactDir, ArtifactFilter, PathFilter};
use bench_support::{measure_in_process, print_row};

const ARTIFACTS: usize = 16;
const FILES_PER_ARTIFACT: usize = 400;

/// Deterministic, partly compressible content.
fn content(seed: usize, len: usize) -> Vec<u8> {
    let mut x = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|i| {
            if i % 4 == 0 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
            }
            if i % 16 < 8 {
                (x >> (i % 4 * 8)) as u8
            } else {
                b'a' + (i % 7) as u8
            }
        })
        .collect()
}

fn make_archives(dir: &Path) -> u64 {
    let mut total = 0;
    for a in 0..ARTIFACTS {
        let mut b = tar::Builder::new(Vec::new());
        let mut add = |name: &str, data: &[u8], kind: tar::EntryType| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(kind);
            h.set_mode(if kind == tar::EntryType::Directory {
                0o755
            } else {
                0o644
            });
            h.set_size(data.len() as u64);
            h.set_mtime(0);
            b.append_data(&mut h, name, data).unwrap();
        };
        add("artifact_manifest.txt", b"stage\n", tar::EntryType::Regular);
        add("stage/lib", b"", tar::EntryType::Directory);
        for f in 0..FILES_PER_ARTIFACT {
            let len = 1024 + (a * 7919 + f * 104_729) % (96 * 1024);
            let data = content(a * 100_000 + f, len);
            total += data.len() as u64;
            add(
                &format!("stage/lib/a{a}/f{f:04}.bin"),
                &data,
                tar::EntryType::Regular,
            );
        }
        let tar = b.into_inner().unwrap();
        let zst = zstd::encode_all(tar.as_slice(), 3).unwrap();
        fs::write(dir.join(format!("art{a:02}_lib_generic.tar.zst")), zst).unwrap();
    }
    total
}

/// Reads every file of the merged catalog once; returns the bytes read.
fn read_all(dir: &Path) -> u64 {
    let d = ArtifactDir::open(dir).unwrap();
    let c = d
        .catalog(&ArtifactFilter::new(), &PathFilter::new())
        .unwrap();
    let n = AtomicU64::new(0);
    c.for_each_file(|_, r| {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let k = r.read(&mut buf).map_err(|e| artifacts::Error::Io {
                path: "x".into(),
                source: e,
            })?;
            if k == 0 {
                break;
            }
            n.fetch_add(k as u64, Ordering::Relaxed);
        }
        Ok::<(), artifacts::Error>(())
    })
    .unwrap();
    n.into_inner()
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let archives = tmp.path().join("archives");
    fs::create_dir_all(&archives).unwrap();
    let total = make_archives(&archives);
    println!(
        "artifacts catalog bench: {ARTIFACTS} .tar.zst artifacts, {} files, {:.1} MiB uncompressed",
        ARTIFACTS * FILES_PER_ARTIFACT,
        total as f64 / 1_048_576.0
    );

    // Baseline: the reference extracts every archive with tar, then walks the tree.
    let extracted = tmp.path().join("extracted");
    let (base, base_bytes) = measure_in_process(|| {
        for e in fs::read_dir(&archives).unwrap() {
            let p = e.unwrap().path();
            let name = p
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .trim_end_matches(".tar.zst")
                .to_owned();
            let out = extracted.join(name);
            fs::create_dir_all(&out).unwrap();
            let ok = Command::new("tar")
                .arg("--zstd")
                .arg("-xf")
                .arg(&p)
                .arg("-C")
                .arg(&out)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        read_all(&extracted)
    });
    let (ours, ours_bytes) = measure_in_process(|| read_all(&archives));
    let (tree, tree_bytes) = measure_in_process(|| read_all(&extracted));
    assert_eq!(base_bytes, total);
    assert_eq!(ours_bytes, total);
    assert_eq!(tree_bytes, total);

    print_row("baseline: tar -x, read tree", base);
    print_row("ours: archives in place", ours);
    print_row("ours: the extracted tree", tree);
    println!(
        "ratio in-place/baseline: wall {:.2}x, cpu {:.2}x; no {:.1} MiB written to disk",
        ours.wall.as_secs_f64() / base.wall.as_secs_f64(),
        ours.cpu.as_secs_f64() / base.cpu.as_secs_f64(),
        total as f64 / 1_048_576.0
    );
}
