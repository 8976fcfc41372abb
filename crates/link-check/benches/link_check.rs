//! Link check of a real corpus (the host's `/usr/lib/x86_64-linux-gnu`
//! shared objects, copied into one platform directory and also packed into
//! four wheels), against the baseline a shell script would use: one
//! `readelf -d` process per file (parsing only, no resolution).
//!
//! Each variant runs in a child process (this binary re-executed), three
//! times; the median's wall, CPU (user+system, children included) and peak
//! RSS come from `wait4`. Run with `cargo bench -p link-check`.
#![allow(
    clippy::print_stdout,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use bench_support::{Sample, measure, median, print_row};

use link_check::{Arch, DirTree, LinkChecker, Policies, WheelSetTree, audit_wheel};
use wheel_writer::{BytesSource, CoreMetadata, WheelBuilder, WheelTag, WriteOptions};

const SOURCE: &str = "/usr/lib/x86_64-linux-gnu";
const WHEELS: usize = 4;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], Path::new(&args[i + 2]));
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--corpus") {
        let (_, _, files, bytes) = corpus(Path::new(&args[i + 1]));
        println!("{files} {bytes}");
        return;
    }
    if !Path::new(SOURCE).is_dir() {
        println!("link-check bench: {SOURCE} not found; skipped");
        return;
    }
    // The corpus is made in a child so this process stays small: a forked
    // child's peak RSS starts from its parent's resident size.
    let exe = std::env::current_exe().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let made = Command::new(&exe)
        .arg("--corpus")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let made = String::from_utf8(made.stdout).unwrap();
    let (files, bytes) = made.trim().split_once(' ').unwrap();
    let (files, bytes): (usize, u64) = (files.parse().unwrap(), bytes.parse().unwrap());
    let (tree, wheels) = (tmp.path().join("tree"), tmp.path().join("wheels"));
    let tree_report = LinkChecker::new()
        .check(&DirTree::open(&tree).unwrap())
        .unwrap();
    println!(
        "link-check bench: {files} ELF files, {:.1} MiB, {} NEEDED entries ({} unresolved inside the corpus), {WHEELS} wheels",
        bytes as f64 / 1_048_576.0,
        tree_report.needed_count(),
        tree_report.unresolved().count()
    );
    let run = |mode: &str, dir: &Path| {
        let samples: Vec<Sample> = (0..3)
            .map(|_| {
                measure(
                    Command::new(&exe)
                        .args(["--child", mode])
                        .arg(dir)
                        .stdout(Stdio::null()),
                )
                .expect("the measured run succeeds")
            })
            .collect();
        median(&samples)
    };
    let baseline = run("readelf", &tree);
    let dir = run("dir", &tree);
    let zipped = run("wheels", &wheels);
    let dir_imports = run("dir-imports", &tree);
    let audited = run("wheels-audit", &wheels);
    print_row("readelf -d per file", baseline);
    print_row("DirTree + check", dir);
    print_row("WheelSetTree + check", zipped);
    print_row("DirTree + check + imports", dir_imports);
    print_row("WheelSetTree + check + imports + audit", audited);
    println!(
        "  ratio wall vs baseline: DirTree {:.2}x, WheelSetTree {:.2}x (lower is faster)",
        dir.wall.as_secs_f64() / baseline.wall.as_secs_f64(),
        zipped.wall.as_secs_f64() / baseline.wall.as_secs_f64()
    );
}

/// Copies the regular ELF shared objects into `root/tree/pkg/lib` and packs
/// them round-robin into wheels under `root/wheels`.
fn corpus(root: &Path) -> (PathBuf, PathBuf, usize, u64) {
    let tree = root.join("tree");
    let lib = tree.join("pkg/lib");
    let wheels = root.join("wheels");
    fs::create_dir_all(&lib).unwrap();
    fs::create_dir_all(&wheels).unwrap();
    let mut names: Vec<PathBuf> = fs::read_dir(SOURCE)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let meta = fs::symlink_metadata(p).unwrap();
            meta.is_file()
                && meta.len() < 64 << 20
                && p.file_name().unwrap().to_string_lossy().contains(".so")
                && fs::read(p).is_ok_and(|b| b.starts_with(b"\x7fELF"))
        })
        .collect();
    names.sort();
    let mut builders: Vec<WheelBuilder> = (0..WHEELS)
        .map(|i| {
            WheelBuilder::new(
                CoreMetadata::new(format!("corpus-{i}"), "1.0"),
                WheelTag::py3_none("linux_x86_64").unwrap(),
            )
            .unwrap()
        })
        .collect();
    let mut bytes = 0;
    for (i, path) in names.iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = fs::read(path).unwrap();
        bytes += data.len() as u64;
        fs::write(lib.join(&name), &data).unwrap();
        builders[i % WHEELS]
            .add_file(
                &format!("pkg/lib/{name}"),
                Arc::new(BytesSource::new(data, true, name)),
            )
            .unwrap();
    }
    for b in &builders {
        b.write(&wheels, &WriteOptions::default(), None).unwrap();
    }
    (tree, wheels, names.len(), bytes)
}

fn child(mode: &str, dir: &Path) {
    match mode {
        "readelf" => {
            let lib = dir.join("pkg/lib");
            let mut files: Vec<PathBuf> = fs::read_dir(&lib)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            for f in files {
                let out = Command::new("readelf").arg("-d").arg(&f).output().unwrap();
                assert!(out.status.success());
            }
        }
        "dir" | "dir-imports" => {
            let mut checker = LinkChecker::new();
            if mode == "dir-imports" {
                checker = checker.with_imports();
            }
            let report = checker.check(&DirTree::open(dir).unwrap()).unwrap();
            assert!(!report.files.is_empty());
        }
        "wheels" | "wheels-audit" => {
            let mut wheels: Vec<PathBuf> = fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            wheels.sort();
            let tree = WheelSetTree::open(&wheels).unwrap();
            if mode == "wheels" {
                let report = LinkChecker::new().check(&tree).unwrap();
                assert!(!report.files.is_empty());
                return;
            }
            let report = LinkChecker::new().with_imports().check(&tree).unwrap();
            let policy = Policies::auditwheel().get("manylinux_2_28");
            for wheel in &wheels {
                let name = wheel.file_name().unwrap().to_string_lossy();
                let audit = audit_wheel(&report, &tree, &name, Arch::X86_64, policy);
                assert!(audit.tightest_tag.is_some());
            }
        }
        other => panic!("unknown mode {other}"),
    }
}
