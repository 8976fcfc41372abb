//! `rocm-sdk init` and `rocm-sdk test` on the built-in example (kpack mode,
//! installed with pip) and on a scaled copy of it, each against a Python
//! baseline this benchmark carries and measures in the same run; then the
//! warm launch of a devel tool through its console script vs a bare
//! `python -c pass`.
//!
//! - init baseline: the reference's approach, `tarfile` extraction plus the
//!   same link rewriting (file links → hard links), RECORD appends, tar
//!   removal.
//! - test baseline: RECORD hashes with `hashlib`, then one `python -c
//!   "ctypes.CDLL(...)"` process per shared library (what the reference
//!   does); ours does that and more (imports, DT_NEEDED, scripts, devel).
//!
//! Every run is a child process; wall, CPU and peak RSS come from `wait4`.
//! Needs gcc, python3 with venv; the `therock-package` binary is taken from
//! the target directory (built with `cargo build -p therock-package` when
//! missing). Run: `cargo bench -p rocm-sdk` (or `cargo xtask bench`).

#![allow(clippy::print_stdout, clippy::print_stderr)]
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use bench_support::{Sample, median, print_row};
use devel_tar::{DIGEST_FILE, DevelTarWriter, TarCodec, TarDigest, TarOptions};
use fs_helpers::file_hash::{sha256_bytes, sha256_file};

const RUNS: usize = 3;
/// First argument of the measuring child (see [`measure`]).
const MEASURE_FLAG: &str = "--measure-child";
const LAUNCHES: usize = 20;
/// Scaled tree: extra devel-only headers and extra core libraries (each
/// linked from devel).
const SCALED_HEADERS: usize = 20_000;
const SCALED_LIBRARIES: usize = 100;

const PYTHON_TEST: &str = r#"
import base64, csv, hashlib, os, subprocess, sys
sp = sys.argv[1]
bad = 0
for d in sorted(os.listdir(sp)):
    if not (d.startswith("rocm") and d.endswith(".dist-info")):
        continue
    with open(os.path.join(sp, d, "RECORD"), newline="") as f:
        for row in csv.reader(f):
            if len(row) < 2 or not row[1].startswith("sha256="):
                continue
            path = os.path.join(sp, row[0])
            if not os.path.exists(path):
                continue  # the consumed devel tar
            with open(path, "rb") as g:
                digest = base64.urlsafe_b64encode(hashlib.sha256(g.read()).digest()).rstrip(b"=").decode()
            bad += digest != row[1][7:]
libraries = []
for top in ("_rocm_sdk_core", "_rocm_sdk_libraries", "_rocm_profiler"):
    for root, dirs, files in os.walk(os.path.join(sp, top)):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as g:
                head = g.read(20)
            # The reference's rule: shared objects by name (PIE executables are ET_DYN too).
            if ".so" in name and head[:4] == b"\x7fELF" and head[16] == 3 and head[18] == 62:
                libraries.append(path)
for path in sorted(libraries):
    r = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", path])
    bad += r.returncode != 0
sys.exit(1 if bad else 0)
"#;

/// Runs `cmd` through a fresh copy of this (still small) benchmark binary
/// that spawns it and reports `wait4`'s numbers: the peak RSS of a child
/// includes the memory of the process that forked it, so the big
/// benchmark process must not be that parent.
fn measure(cmd: &mut Command) -> Sample {
    let exe = std::env::current_exe().unwrap();
    let out = run_ok(
        Command::new(exe)
            .arg(MEASURE_FLAG)
            .arg(cmd.get_program())
            .args(cmd.get_args()),
    );
    let numbers: Vec<u64> = out.split_whitespace().map(|n| n.parse().unwrap()).collect();
    Sample {
        wall: Duration::from_nanos(numbers[0]),
        cpu: Duration::from_nanos(numbers[1]),
        max_rss_kib: numbers[2] as i64,
    }
}

/// The measuring child: runs `argv` and prints `wall_ns cpu_ns
/// peak_rss_kib`; fails when the command fails.
fn measure_child(argv: &[String]) {
    let sample = bench_support::measure(
        Command::new(&argv[0])
            .args(&argv[1..])
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    )
    .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    println!(
        "{} {} {}",
        sample.wall.as_nanos(),
        sample.cpu.as_nanos(),
        sample.max_rss_kib
    );
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `therock-package` from the workspace's target directory.
fn therock_package() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), PathBuf::from);
    let debug = target.join("debug").join("therock-package");
    for candidate in [
        target.join("release").join("therock-package"),
        debug.clone(),
    ] {
        if candidate.is_file() {
            return candidate;
        }
    }
    run_ok(Command::new(env!("CARGO")).current_dir(&workspace).args([
        "build",
        "-p",
        "therock-package",
    ]));
    debug
}

/// A devel tar member while the scaled tar is assembled.
enum Member {
    Dir,
    File(u32, Vec<u8>),
    Link(String),
}

/// An installed example: a venv with `rocm[libraries,devel,device-gfx942]`.
struct Install {
    /// Holds the venv and, moved aside by [`Install::reset`], every
    /// unpacked tree until the end.
    dir: tempfile::TempDir,
    /// Trees moved aside so far.
    resets: std::cell::Cell<usize>,
    venv: PathBuf,
    sp: PathBuf,
    saved_tar: Vec<u8>,
    saved_records: Vec<(PathBuf, Vec<u8>)>,
}

impl Install {
    fn new(dist: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        run_ok(Command::new("python3").args(["-m", "venv"]).arg(&venv));
        run_ok(
            Command::new(venv.join("bin/python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "--no-index",
                    "--find-links",
                ])
                .arg(dist)
                .arg("rocm[libraries,devel,device-gfx942]"),
        );
        let lib = venv.join("lib");
        let python = fs::read_dir(&lib).unwrap().next().unwrap().unwrap().path();
        let sp = python.join("site-packages");
        let mut install = Self {
            dir,
            resets: std::cell::Cell::new(0),
            venv,
            sp,
            saved_tar: Vec::new(),
            saved_records: Vec::new(),
        };
        install.save();
        install
    }

    fn tar(&self) -> PathBuf {
        self.sp.join("rocm_sdk_devel/_devel.tar")
    }

    fn native(&self) -> PathBuf {
        self.sp.join("rocm_sdk_core/_bin/rocm-sdk")
    }

    /// Remembers the packed state: the tar and every RECORD init touches.
    fn save(&mut self) {
        self.saved_tar = fs::read(self.tar()).unwrap();
        self.saved_records = fs::read_dir(&self.sp)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.starts_with("rocm_sdk_devel-") || name.starts_with("rocm_sdk_device_")
            })
            .map(|p| {
                let record = p.join("RECORD");
                let bytes = fs::read(&record).unwrap();
                (record, bytes)
            })
            .collect();
    }

    /// Back to "installed, not unpacked", as after a fresh install.
    ///
    /// The unpacked tree is moved aside, not deleted: right after 20 000
    /// files are freed, ext4 skips their recently used inodes when
    /// allocating new ones, and the next unpack (either side) spent most of
    /// its time (3.4 s of system time instead of 0.35 s) searching inode
    /// tables. The writeback is flushed for the same reason: the timed run
    /// should not pay for the reset's.
    fn reset(&self) {
        let tree = self.sp.join("_rocm_sdk_devel");
        if tree.exists() {
            let aside = self
                .dir
                .path()
                .join(format!("unpacked-{}", self.resets.get()));
            self.resets.set(self.resets.get() + 1);
            fs::rename(&tree, aside).unwrap();
        }
        fs::write(self.tar(), &self.saved_tar).unwrap();
        for (record, bytes) in &self.saved_records {
            fs::write(record, bytes).unwrap();
        }
        run_ok(&mut Command::new("sync"));
    }

    /// Grows the installation: `SCALED_LIBRARIES` more core libraries (with
    /// RECORD rows, linked from devel) and `SCALED_HEADERS` devel-only files.
    fn scale(&mut self) {
        let core = self.sp.join("_rocm_sdk_core/lib");
        let template = fs::read(core.join("libamd_comgr.so.3")).unwrap();
        let core_record =
            fixtures::files::entry_starting_with(&self.sp, "rocm_sdk_core-").join("RECORD");
        let mut rows = fs::read_to_string(&core_record).unwrap();
        let mut links = Vec::new();
        for i in 0..SCALED_LIBRARIES {
            let name = format!("libscaled{i:03}.so.1");
            fs::write(core.join(&name), &template).unwrap();
            let file = sha256_file(&core.join(&name)).unwrap();
            let (digest, size) = (file.record(), file.size);
            let _ = writeln!(rows, "_rocm_sdk_core/lib/{name},sha256={digest},{size}");
            links.push(format!("lib/{name}"));
        }
        fs::write(&core_record, rows).unwrap();

        // The example's members plus the new ones, sorted, rewritten.
        let mut members: Vec<(String, Member)> = Vec::new();
        let mut archive = tar::Archive::new(fs::File::open(self.tar()).unwrap());
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().to_string_lossy().into_owned();
            let rel = path
                .strip_prefix("_rocm_sdk_devel/")
                .unwrap()
                .trim_end_matches('/')
                .to_owned();
            let kind = entry.header().entry_type();
            let member = if kind.is_dir() {
                Member::Dir
            } else if kind.is_symlink() {
                Member::Link(
                    entry
                        .link_name()
                        .unwrap()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                )
            } else {
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).unwrap();
                Member::File(entry.header().mode().unwrap(), bytes)
            };
            members.push((rel, member));
        }
        for link in &links {
            members.push((
                link.clone(),
                Member::Link(devel_tar::devel_link_target(link, "_rocm_sdk_core")),
            ));
        }
        members.push(("include/scaled".to_owned(), Member::Dir));
        for d in 0..SCALED_HEADERS / 100 {
            members.push((format!("include/scaled/d{d:03}"), Member::Dir));
        }
        for i in 0..SCALED_HEADERS {
            let text = format!("// scaled header {i}\n{}", "#define X 1\n".repeat(150));
            members.push((
                format!("include/scaled/d{:03}/h{i:05}.h", i / 100),
                Member::File(0o644, text.into_bytes()),
            ));
        }
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let tar = self.tar();
        fs::remove_file(&tar).unwrap();
        let options = TarOptions {
            compression: TarCodec::None,
            ..TarOptions::default()
        };
        let mut writer = DevelTarWriter::new(fs::File::create(&tar).unwrap(), &options).unwrap();
        for (rel, member) in members {
            match member {
                Member::Dir => writer.add_directory(&rel).unwrap(),
                Member::Link(text) => writer.add_symlink(&rel, &text).unwrap(),
                Member::File(mode, bytes) => {
                    writer
                        .add_file(&rel, mode, bytes.len() as u64, &mut bytes.as_slice())
                        .unwrap();
                }
            }
        }
        writer.finish().unwrap();
        // The new tar's digest file, as the build writes it.
        let digest_file = TarDigest::of_reader("_devel.tar", fs::File::open(&tar).unwrap())
            .unwrap()
            .to_bytes();
        fs::write(tar.with_file_name(DIGEST_FILE), &digest_file).unwrap();
        let digest_row = format!(
            "rocm_sdk_devel/{DIGEST_FILE},sha256={},{}\n",
            sha256_bytes(&digest_file).record(),
            digest_file.len()
        );
        // The devel RECORD vouches for both, as pip's would.
        let file = sha256_file(&tar).unwrap();
        let (digest, size) = (file.record(), file.size);
        for (record, bytes) in &self.saved_records {
            let text = String::from_utf8_lossy(bytes);
            if !text.contains("rocm_sdk_devel/_devel.tar,") {
                continue;
            }
            let rows: String = text
                .lines()
                .map(|row| {
                    if row.starts_with("rocm_sdk_devel/_devel.tar,") {
                        format!("rocm_sdk_devel/_devel.tar,sha256={digest},{size}\n")
                    } else if row.starts_with(&format!("rocm_sdk_devel/{DIGEST_FILE},")) {
                        digest_row.clone()
                    } else {
                        format!("{row}\n")
                    }
                })
                .collect();
            fs::write(record, rows).unwrap();
        }
        self.save();
    }
}

fn compare(
    label: &str,
    ours_cmd: &dyn Fn() -> Command,
    base_cmd: &dyn Fn() -> Command,
    reset: &dyn Fn(),
) {
    let mut ours = Vec::new();
    let mut base = Vec::new();
    for _ in 0..RUNS {
        reset();
        ours.push(measure(&mut ours_cmd()));
        reset();
        base.push(measure(&mut base_cmd()));
    }
    let (o, b) = (median(&ours), median(&base));
    println!("{label}");
    print_row("rocm-sdk", o);
    print_row("python baseline", b);
    println!(
        "  ratio (baseline / ours): wall {:.1}x, cpu {:.1}x",
        b.wall.as_secs_f64() / o.wall.as_secs_f64(),
        b.cpu.as_secs_f64() / o.cpu.as_secs_f64()
    );
}

fn bench_install(label: &str, install: &Install) {
    let python = install.venv.join("bin/python");
    compare(
        &format!("init, {label}"),
        &|| {
            let mut c = Command::new(install.native());
            c.args(["init", "--quiet"]);
            c
        },
        &|| {
            let mut c = Command::new(&python);
            c.args(["-c", bench_support::PYTHON_DEVEL_UNPACK])
                .arg(&install.sp);
            c
        },
        &|| install.reset(),
    );
    // `test` on the unpacked tree (its unpack step is then a no-op).
    install.reset();
    run_ok(Command::new(install.native()).args(["init", "--quiet"]));
    compare(
        &format!("test, {label}"),
        &|| {
            let mut c = Command::new(install.native());
            c.arg("test").arg("--python").arg(&python);
            c
        },
        &|| {
            let mut c = Command::new(&python);
            c.args(["-c", PYTHON_TEST]).arg(&install.sp);
            c
        },
        &|| {},
    );
}

fn warm_launch(install: &Install) {
    run_ok(Command::new(install.native()).args(["init", "--quiet"]));
    let hipconfig = install.venv.join("bin/hipconfig");
    let python = install.venv.join("bin/python");
    let mut tool = Vec::new();
    let mut bare = Vec::new();
    for _ in 0..LAUNCHES {
        tool.push(measure(Command::new(&hipconfig).arg("--rocmpath")));
        bare.push(measure(Command::new(&python).args(["-c", "pass"])));
    }
    let (t, b) = (median(&tool), median(&bare));
    println!("warm launch (median of {LAUNCHES})");
    print_row("hipconfig --rocmpath (script)", t);
    print_row("python -c pass", b);
    println!(
        "  added cost: {:+.1} ms wall ({:.2}x)",
        (t.wall.as_secs_f64() - b.wall.as_secs_f64()) * 1000.0,
        t.wall.as_secs_f64() / b.wall.as_secs_f64()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(MEASURE_FLAG) {
        measure_child(&args[2..]);
        return;
    }
    // `cargo bench` passes `--bench`; a filter argument selects nothing else.
    let work = tempfile::tempdir().unwrap();
    let example = fixtures::generate(&work.path().join("example")).expect("generate the example");
    let dest = work.path().join("out");
    run_ok(
        Command::new(therock_package())
            .arg("build")
            .arg("--artifact-dir")
            .arg(example.artifact_dir(fixtures::ExampleMode::Kpack, fixtures::Layout::Tree))
            .arg("--dest-dir")
            .arg(&dest),
    );
    let dist = dest.join("dist");
    let mut install = Install::new(&dist);
    bench_install("example (kpack)", &install);
    warm_launch(&install);
    install.reset();
    install.scale();
    bench_install(
        &format!("scaled (+{SCALED_HEADERS} devel files, +{SCALED_LIBRARIES} core libraries)"),
        &install,
    );
}
