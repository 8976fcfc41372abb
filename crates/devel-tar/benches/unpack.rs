//! Benchmarks, each against a baseline measured in the same run:
//!
//! 1. Unpack of a generated devel tree of 20 452 members (files, links to
//!    runtime files, soname aliases, directory links) by `devel_tar::unpack`
//!    vs Python's `tarfile` unpacking the same tar with the same link
//!    rewriting (script below). Goal: at least 5x.
//! 2. The reconcile fast path (1 000 device links, nothing to do) vs the
//!    same check in Python.
//!
//! Each unpack runs in a child process (this binary re-invoked, or
//! `python3`) on a fresh copy of site-packages; wall time, CPU time and peak
//! RSS come from `wait4`. Run with `cargo bench -p devel-tar`.

#![allow(clippy::print_stdout, clippy::print_stderr)]
// Measurement arithmetic on small counts and kernel time values.
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use base64::Engine as _;
use bench_support::{measure, median, print_row};

use devel_tar::{DevelLinks, DevelTarWriter, TarCodec, TarOptions};

const RUNS: usize = 3;
const FAST_PATH_CALLS: usize = 200;

/// The same check as the Rust fast path: list site-packages, compare the
/// stamp, load the state, lstat every recorded link.
const PYTHON_FAST_PATH: &str = r#"
import json, os, sys, time
sp, calls = sys.argv[1], int(sys.argv[2])
def check():
    names = sorted(n for n in os.listdir(sp) if n.startswith("rocm_sdk_device_") and n.endswith(".dist-info"))
    with open(os.path.join(sp, "_rocm_sdk_devel", ".device-links-stamp")) as f:
        if f.read() != "".join(n + "\n" for n in names):
            return False
    with open(os.path.join(sp, "_rocm_sdk_devel", ".device-links-state.json")) as f:
        state = json.load(f)
    for dev in state["devices"].values():
        for link in dev["links"]:
            os.lstat(os.path.join(sp, link))
    return True
start = time.perf_counter()
for _ in range(calls):
    assert check()
print(time.perf_counter() - start)
"#;

fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("--child-unpack") => {
            let sp = PathBuf::from(args.next().expect("site-packages"));
            devel_tar::unpack(&sp, &devel_tar::UnpackOptions::default()).expect("unpack");
            return;
        }
        // For profiling by hand: `--make-site DIR` writes the benchmark's
        // site-packages and exits.
        Some("--make-site") => {
            make_site(Path::new(&args.next().expect("directory")));
            return;
        }
        _ => {}
    }
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: python3 is needed for the baselines");
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    unpack_bench(work.path());
    fast_path_bench(work.path());
}

fn unpack_bench(work: &Path) {
    let template = work.join("template");
    let members = make_site(&template);
    println!("devel-tar unpack: {members} members, {RUNS} runs each (median)");
    let me = std::env::current_exe().expect("own path");
    let python = work.join("unpack.py");
    fs::write(&python, bench_support::PYTHON_DEVEL_UNPACK).expect("write script");

    let mut rust = Vec::new();
    let mut py = Vec::new();
    for run in 0..RUNS {
        let sp = fresh_copy(&template, &work.join(format!("rust{run}")));
        rust.push(
            measure(Command::new(&me).arg("--child-unpack").arg(&sp))
                .expect("the Rust unpack runs"),
        );
        let rust_tree = snapshot_counts(&sp);
        let sp = fresh_copy(&template, &work.join(format!("py{run}")));
        py.push(
            measure(Command::new("python3").arg(&python).arg(&sp))
                .expect("the Python baseline runs"),
        );
        assert_eq!(rust_tree, snapshot_counts(&sp), "the two unpacks differ");
    }
    let (r, p) = (median(&rust), median(&py));
    print_row("rust devel_tar::unpack", r);
    print_row("python tarfile baseline", p);
    println!(
        "  ratio: {:.1}x faster wall, {:.1}x less CPU, {:.1}x less peak RSS (goal: 5x wall)",
        p.wall.as_secs_f64() / r.wall.as_secs_f64(),
        p.cpu.as_secs_f64() / r.cpu.as_secs_f64(),
        p.max_rss_kib as f64 / r.max_rss_kib as f64,
    );
}

fn fast_path_bench(work: &Path) {
    let sp = work.join("fast/site-packages");
    make_site(&sp);
    devel_tar::unpack(&sp, &devel_tar::UnpackOptions::default()).expect("unpack");
    let files: Vec<(String, Vec<u8>)> = (0..1000)
        .map(|i| {
            (
                format!("lib/rocblas/library/k{i:04}_gfx942.co"),
                vec![b'k'; 64],
            )
        })
        .collect();
    install_device(&sp, &files);
    let first = devel_tar::reconcile_device_links(&sp).expect("reconcile");
    assert_eq!(first.linked, 1000);

    let start = Instant::now();
    for _ in 0..FAST_PATH_CALLS {
        let r = devel_tar::reconcile_device_links(&sp).expect("reconcile");
        assert!(r.fast_path);
    }
    let rust = start.elapsed().as_secs_f64() / FAST_PATH_CALLS as f64;

    let script = work.join("fast.py");
    fs::write(&script, PYTHON_FAST_PATH).expect("write script");
    let out = Command::new("python3")
        .arg(&script)
        .arg(&sp)
        .arg(FAST_PATH_CALLS.to_string())
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let py: f64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("seconds");
    let py = py / FAST_PATH_CALLS as f64;
    println!("devel-tar reconcile fast path: 1000 links, nothing to do, {FAST_PATH_CALLS} calls");
    println!("  rust   {:8.1} µs per call", rust * 1e6);
    println!(
        "  python {:8.1} µs per call (same check, interpreter start excluded)",
        py * 1e6
    );
    println!("  ratio: {:.1}x faster", py / rust);
}

/// A site-packages with core (5 000 shared objects) and devel whose tar holds
/// 20 452 members.
fn make_site(sp: &Path) -> usize {
    fs::create_dir_all(sp).expect("site-packages");
    let mut core_record = String::new();
    let mut entries: Vec<(String, Member)> = vec![
        ("bin".into(), Member::Dir),
        ("include".into(), Member::Dir),
        ("lib".into(), Member::Dir),
    ];
    for p in 0..200 {
        entries.push((format!("include/pkg{p:03}"), Member::Dir));
        entries.push((format!("lib/pkg{p:03}"), Member::Dir));
    }
    for j in 0..10_000 {
        let size = (j * 37) % 4096;
        entries.push((
            format!("include/pkg{:03}/h{j:05}.h", j % 200),
            Member::File(size),
        ));
    }
    for j in 0..5_000 {
        let rel = format!("lib/pkg{:03}/libf{j:04}.so.1", j % 200);
        let core = sp.join("_rocm_sdk_core").join(&rel);
        fs::create_dir_all(core.parent().expect("parent")).expect("core dir");
        fs::write(&core, vec![b'e'; 512 + j % 1024]).expect("core file");
        let _ = writeln!(core_record, "_rocm_sdk_core/{rel},,");
        entries.push((
            format!("lib/pkg{:03}/libf{j:04}.so", j % 200),
            Member::Symlink(format!("libf{j:04}.so.1")),
        ));
        entries.push((rel, Member::Runtime));
    }
    for k in 0..50 {
        entries.push((
            format!("lib/dirlink{k:02}"),
            Member::Symlink(format!("../include/pkg{k:03}")),
        ));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));

    let tar = sp.join("rocm_sdk_devel/_devel.tar");
    fs::create_dir_all(tar.parent().expect("parent")).expect("package dir");
    let options = TarOptions {
        compression: TarCodec::None,
        ..TarOptions::default()
    };
    let mut w = DevelTarWriter::create(&tar, &options).expect("create tar");
    for (rel, member) in &entries {
        match member {
            Member::Dir => w.add_directory(rel),
            Member::File(size) => {
                let data = vec![b'h'; *size];
                w.add_file(rel, 0o644, data.len() as u64, &mut &data[..])
            }
            Member::Symlink(target) => w.add_symlink(rel, target),
            Member::Runtime => w.add_runtime_link(rel, "_rocm_sdk_core"),
        }
        .expect("add member");
    }
    w.finish().expect("finish").persist().expect("persist");
    fs::set_permissions(&tar, fs::Permissions::from_mode(0o644)).expect("chmod");
    write_dist(sp, "rocm_sdk_core-7.1.0.dist-info", &core_record);
    // The row pip writes for the tar: the unpack checks the tar against it.
    let bytes = fs::read(&tar).expect("read tar");
    let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    write_dist(
        sp,
        "rocm_sdk_devel-7.1.0.dist-info",
        &format!(
            "rocm_sdk_devel/_devel.tar,sha256={digest},{}\n",
            bytes.len()
        ),
    );
    entries.len()
}

enum Member {
    Dir,
    File(usize),
    Symlink(String),
    Runtime,
}

fn write_dist(sp: &Path, dist_info: &str, record: &str) {
    fs::create_dir_all(sp.join(dist_info)).expect("dist-info");
    fs::write(
        sp.join(dist_info).join("RECORD"),
        format!("{record}{dist_info}/RECORD,,\n"),
    )
    .expect("RECORD");
}

fn install_device(sp: &Path, files: &[(String, Vec<u8>)]) {
    let mut record = String::new();
    for (rel, data) in files {
        let path = sp.join("_rocm_sdk_libraries").join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        fs::write(&path, data).expect("device file");
        let _ = writeln!(record, "_rocm_sdk_libraries/{rel},,");
    }
    let doc = DevelLinks::new(
        "7.1.0",
        "_rocm_sdk_libraries",
        files.iter().map(|(r, _)| r.clone()),
    );
    let doc_rel = "_rocm_sdk_libraries/.devel_links/gfx942.json";
    fs::create_dir_all(sp.join(doc_rel).parent().expect("parent")).expect("dir");
    fs::write(sp.join(doc_rel), doc.to_json()).expect("doc");
    let _ = writeln!(record, "{doc_rel},,");
    write_dist(sp, "rocm_sdk_device_gfx942-7.1.0.dist-info", &record);
}

fn fresh_copy(template: &Path, dest: &Path) -> PathBuf {
    let status = Command::new("cp")
        .arg("-a")
        .arg(template)
        .arg(dest)
        .status()
        .expect("cp");
    assert!(status.success());
    // Flush the copy so the timed run does not pay for its writeback.
    let _ = Command::new("sync").status();
    dest.to_path_buf()
}

/// (files, symlinks, directories, total hard-link count) of the tree.
fn snapshot_counts(sp: &Path) -> (usize, usize, usize, u64) {
    use std::os::unix::fs::MetadataExt;
    fn walk(dir: &Path, acc: &mut (usize, usize, usize, u64)) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.ends_with(".rocm-sdk-devel-version") {
                continue;
            }
            let m = fs::symlink_metadata(&path).expect("stat");
            if m.file_type().is_symlink() {
                acc.1 += 1;
            } else if m.is_dir() {
                acc.2 += 1;
                walk(&path, acc);
            } else {
                acc.0 += 1;
                acc.3 += m.nlink();
            }
        }
    }
    let mut acc = (0, 0, 0, 0);
    walk(&sp.join("_rocm_sdk_devel"), &mut acc);
    acc
}
