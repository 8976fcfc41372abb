//! Shared support for the end-to-end tests: the built-in example, builds of
//! it, and fresh virtual environments that install the packages.
#![allow(dead_code, unreachable_pub)] // each test binary uses a part of it

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use fixtures::files::{entry_starting_with, relative_entries, relative_files};
use fixtures::{Example, ExampleMode, Layout};

pub mod wine;

/// The example, generated once per test binary.
pub fn example() -> &'static Example {
    fixtures::shared()
}

/// The artifact directory of `mode` in tree layout.
pub fn artifacts(mode: ExampleMode) -> PathBuf {
    example().artifact_dir(mode, Layout::Tree)
}

/// Runs `therock-package args…`.
pub fn therock_package(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_therock-package"))
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("ROCM_SDK_WHEEL_PLATFORM_TAG")
        .env_remove("THEROCK_PACKAGE_ROCM_SDK_LINUX")
        .env_remove("THEROCK_PACKAGE_ROCM_SDK_WINDOWS")
        .output()
        .expect("therock-package runs")
}

/// `therock-package build --artifact-dir ARTIFACT_DIR --dest-dir DEST
/// extra…`, whatever its outcome.
pub fn build_into(artifact_dir: &Path, dest: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "build",
        "--artifact-dir",
        artifact_dir.to_str().unwrap(),
        "--dest-dir",
        dest.to_str().unwrap(),
    ];
    args.extend(extra);
    therock_package(&args)
}

/// Asserts success and returns stdout.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A build of the example into a temporary directory.
#[derive(Debug)]
pub struct Build {
    dir: tempfile::TempDir,
}

impl Build {
    /// Builds `mode` with extra flags.
    pub fn new(mode: ExampleMode, extra: &[&str]) -> Self {
        Self::from_artifacts(&artifacts(mode), extra)
    }

    /// Builds an artifact directory with extra flags.
    pub fn from_artifacts(artifact_dir: &Path, extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        ok(&build_into(artifact_dir, dir.path(), extra));
        Self { dir }
    }

    /// The example's `mode` built once per test binary with no flags, for
    /// tests that only read it.
    pub fn shared(mode: ExampleMode) -> &'static Self {
        static LEGACY: OnceLock<Build> = OnceLock::new();
        static KPACK: OnceLock<Build> = OnceLock::new();
        let cell = match mode {
            ExampleMode::Legacy => &LEGACY,
            ExampleMode::Kpack => &KPACK,
        };
        cell.get_or_init(|| Self::new(mode, &[]))
    }

    /// `dest-dir/dist`.
    pub fn dist(&self) -> PathBuf {
        self.dir.path().join("dist")
    }

    /// Every file under `dist/` (relative, sorted) with its sha256.
    pub fn digests(&self) -> Vec<(String, String)> {
        relative_files(&self.dist())
            .into_iter()
            .map(|rel| {
                let out = Command::new("sha256sum")
                    .arg(self.dist().join(&rel))
                    .output()
                    .unwrap();
                let text = String::from_utf8(out.stdout).unwrap();
                (rel, text.split_whitespace().next().unwrap().to_owned())
            })
            .collect()
    }
}

/// A fresh virtual environment.
#[derive(Debug)]
pub struct Venv {
    dir: tempfile::TempDir,
}

impl Venv {
    /// `python3 -m venv --without-pip` in a temporary directory: pip runs
    /// from [`pip_python`] into it ([`Venv::pip`]).
    pub fn new() -> Self {
        Self::create(&[])
    }

    /// A venv that also sees the interpreter's site-packages and the user
    /// site (where a `pip install --user` goes).
    pub fn with_system_site_packages() -> Self {
        Self::create(&["--system-site-packages"])
    }

    fn create(flags: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        ok(&Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .args(flags)
            .arg(dir.path().join("venv"))
            .output()
            .unwrap());
        Self { dir }
    }

    /// The temporary directory holding the venv: room for a `--prefix`,
    /// `--target` or user base beside it.
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    /// The venv directory.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("venv")
    }

    /// `venv/bin/NAME`.
    pub fn bin(&self, name: &str) -> PathBuf {
        self.root().join("bin").join(name)
    }

    /// Its site-packages.
    pub fn site_packages(&self) -> PathBuf {
        site_packages_of(&self.root())
    }

    /// Runs a program of the venv with `PATH` starting at its `bin/`.
    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        self.in_env(Command::new(self.bin(program)))
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"))
    }

    /// `pip ARGS` into this venv ([`pip_into`] its interpreter), run as
    /// [`Venv::run`] runs programs.
    pub fn pip(&self, args: &[&str]) -> Output {
        self.in_env(pip_into(&self.bin("python")))
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("pip: {e}"))
    }

    /// `command` in this venv's environment: `PATH` starting at its
    /// `bin/`, no `PYTHONPATH` or `LD_LIBRARY_PATH`.
    fn in_env(&self, mut command: Command) -> Command {
        let path = format!(
            "{}:{}",
            self.root().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        command
            .env("PATH", path)
            .env("VIRTUAL_ENV", self.root())
            .env_remove("PYTHONPATH")
            .env_remove("LD_LIBRARY_PATH");
        command
    }

    /// `pip install --no-index --find-links DIST requirements…`.
    pub fn pip_install(&self, dist: &Path, requirements: &[&str]) -> Output {
        self.pip_install_from(&[dist.to_path_buf()], requirements)
    }

    /// `uv pip install --offline --no-index --find-links DIST requirements…`
    /// into this venv.
    pub fn uv_install(&self, dist: &Path, requirements: &[&str]) -> Output {
        self.uv_install_from(&[dist.to_path_buf()], requirements)
    }

    /// Every file and link under site-packages (relative, sorted).
    pub fn site_files(&self) -> Vec<String> {
        relative_entries(&self.site_packages())
    }
}

/// `prefix/lib/pythonX.Y/site-packages` of a venv or an installation
/// prefix.
pub fn site_packages_of(prefix: &Path) -> PathBuf {
    entry_starting_with(&prefix.join("lib"), "python").join("site-packages")
}

/// The uv release the tests install with (and the oracle compares with,
/// tests/it/oracle.rs): pinned, so a test's verdict does not change with the
/// day it runs.
pub const UV: &str = "uv==0.13.9";

/// The `uv` binary of [`UV`] (the test setup's only download).
pub fn uv() -> PathBuf {
    static UV_BIN: OnceLock<PathBuf> = OnceLock::new();
    UV_BIN
        .get_or_init(|| pinned_tools(UV).join("bin").join("uv"))
        .clone()
}

/// The auditwheel release whose policies `link-check` carries
/// (`crates/link-check/data/manylinux-policy.json`).
pub const AUDITWHEEL: &str = "auditwheel==6.8.2";

/// The `auditwheel` program of [`AUDITWHEEL`].
pub fn auditwheel() -> PathBuf {
    static AUDITWHEEL_BIN: OnceLock<PathBuf> = OnceLock::new();
    AUDITWHEEL_BIN
        .get_or_init(|| pinned_tools(AUDITWHEEL).join("bin").join("auditwheel"))
        .clone()
}

/// A recent pip, pinned: pip 23 (the interpreter's bundled copy) still
/// downloads every wheel after a `--dry-run` resolution and `pip show`
/// does not print `License-Expression`; this one does neither wrong.
pub const PIP: &str = "pip==25.3";

/// The `python` of a venv holding [`PIP`].
pub fn pinned_pip_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| pinned_tools(PIP).join("bin").join("python"))
        .clone()
}

/// A tools venv under the cargo target directory holding `requirement`
/// (pinned, from PyPI), made by the first run that needs it: its `done`
/// file is written last, so an interrupted install is made again. Callers
/// keep the path in a `OnceLock`, so one test process installs it once.
fn pinned_tools(requirement: &str) -> PathBuf {
    let tools = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("tools-{}", requirement.replace("==", "-")));
    if !tools.join("done").exists() {
        ok(&Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&tools)
            .output()
            .unwrap());
        ok(&Command::new(tools.join("bin").join("python"))
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .arg(requirement)
            .output()
            .unwrap());
        fs::write(tools.join("done"), requirement).unwrap();
    }
    tools
}

/// The `python` of a venv with the interpreter's bundled pip, made once
/// under the cargo target directory (no network). Test venvs are made
/// without pip and this pip installs into them (`pip --python`): the same
/// pip, without ensurepip's several seconds per venv.
pub fn pip_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let tools = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tools-bundled-pip");
            let python = tools.join("bin").join("python");
            if !tools.exists() {
                // Made aside and renamed into place: another test binary
                // never sees half a venv.
                let staging = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
                let venv = staging.path().join("venv");
                ok(&Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(&venv)
                    .output()
                    .unwrap());
                // Lost to another process: theirs is as good.
                let _ = fs::rename(&venv, &tools);
            }
            python
        })
        .clone()
}

/// `pip` of [`pip_python`] installing into the environment of the
/// interpreter `python` (`pip --python`), without its version check.
pub fn pip_into(python: &Path) -> Command {
    let mut command = Command::new(pip_python());
    command
        .args(["-m", "pip", "--python"])
        .arg(python)
        .arg("--disable-pip-version-check");
    command
}

impl Venv {
    /// `pip install --no-index` with several `--find-links` directories.
    pub fn pip_install_from(&self, dists: &[PathBuf], requirements: &[&str]) -> Output {
        let mut args: Vec<String> = vec!["install".into(), "-q".into(), "--no-index".into()];
        for dist in dists {
            args.push("--find-links".into());
            args.push(dist.display().to_string());
        }
        args.extend(requirements.iter().map(|r| (*r).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.pip(&args)
    }

    /// `uv pip install --offline` with several `--find-links` directories.
    pub fn uv_install_from(&self, dists: &[PathBuf], requirements: &[&str]) -> Output {
        let mut command = Command::new(uv());
        command
            .args([
                "pip",
                "install",
                "--offline",
                "--no-index",
                "--no-cache",
                "--python",
            ])
            .arg(self.bin("python"));
        for dist in dists {
            command.arg("--find-links").arg(dist);
        }
        command.args(requirements).output().unwrap()
    }
}

/// The family lists of the two-platform release the verify and index tests
/// build: Linux offers gfx942 and gfx1100, Windows gfx1100 only.
pub const RELEASE_FAMILY_FLAGS: [&str; 2] = [
    "--linux-amdgpu-families=gfx94X-dcgpu;gfx1100",
    "--windows-amdgpu-families=gfx1100",
];

/// One release built for two platforms with different target lists (the
/// seed bug report's setup): Linux from the kpack example, "Windows"
/// (`--platform-tag win_amd64`) from a copy without the gfx942 device
/// artifacts. With `family_flags`, both builds get [`RELEASE_FAMILY_FLAGS`].
pub fn two_platform_release(family_flags: bool) -> (Build, Build) {
    let flags: &[&str] = if family_flags {
        &RELEASE_FAMILY_FLAGS
    } else {
        &[]
    };
    let linux = Build::new(ExampleMode::Kpack, flags);
    let windows_artifacts = tempfile::tempdir().unwrap();
    let copy = kpack_without_gfx942(windows_artifacts.path());
    let mut windows_flags = vec!["--platform-tag", "win_amd64"];
    windows_flags.extend(flags);
    let windows = Build::from_artifacts(&copy, &windows_flags);
    (linux, windows)
}

/// A copy of the kpack example without the gfx942 device artifacts, made
/// as `root/windows-artifacts`: the "Windows" half of a two-platform
/// release.
pub fn kpack_without_gfx942(root: &Path) -> PathBuf {
    let copy = root.join("windows-artifacts");
    ok(&Command::new("cp")
        .arg("-a")
        .arg(artifacts(ExampleMode::Kpack))
        .arg(&copy)
        .output()
        .unwrap());
    for entry in fs::read_dir(&copy).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .contains("_gfx942")
        {
            fs::remove_dir_all(&path).unwrap();
        }
    }
    copy
}

/// Copies every file of `dists` (flat) into `dest`: what a publish job
/// uploads into one index directory (the last copy of a name wins).
pub fn publish(dists: &[PathBuf], dest: &Path) {
    fs::create_dir_all(dest).unwrap();
    for dist in dists {
        for entry in fs::read_dir(dist).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                fs::copy(&path, dest.join(path.file_name().unwrap())).unwrap();
            }
        }
    }
}

/// `therock-package verify DIRS... EXTRA...`.
pub fn verify(dirs: &[&Path], extra: &[&str]) -> Output {
    let mut args = vec!["verify".to_owned()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    therock_package(&args)
}

/// A command's standard output as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts a verification failed with exit 1 (a report, not an error)
/// and returns the report.
pub fn fails(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected a failed verification:\nstdout:\n{}\nstderr:\n{}",
        stdout(out),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(out)
}

/// A private copy of the example's kpack artifacts in `layout`.
pub fn copy_of_artifacts(layout: Layout) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!(
            "{}/.",
            example().artifact_dir(ExampleMode::Kpack, layout).display()
        ))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success());
    copy
}

/// `therock-package plan --shards N --json` for `artifact_dir`.
pub fn shard_plan(artifact_dir: &Path, count: usize, extra: &[&str]) -> serde_json::Value {
    let count = count.to_string();
    let mut args = vec![
        "plan",
        "--artifact-dir",
        artifact_dir.to_str().unwrap(),
        "--shards",
        &count,
        "--json",
    ];
    args.extend(extra);
    serde_json::from_str(&ok(&therock_package(&args))).unwrap()
}

/// The shard ids of a matrix (`["1/3", "2/3", "3/3"]`).
pub fn shard_ids(matrix: &serde_json::Value) -> Vec<String> {
    matrix["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["shard"].as_str().unwrap().to_owned())
        .collect()
}

/// The kpack example split into two shards, built once per test process
/// and shared by the tests of shards; tests change copies of it
/// ([`copy_kpack_shards`]).
pub fn kpack_shards() -> &'static [PathBuf] {
    static SHARDS: OnceLock<(tempfile::TempDir, Vec<PathBuf>)> = OnceLock::new();
    &SHARDS
        .get_or_init(|| {
            let work = tempfile::tempdir().unwrap();
            let dirs = build_shards(work.path(), &artifacts(ExampleMode::Kpack), 2, &[]);
            (work, dirs)
        })
        .1
}

/// A private copy of [`kpack_shards`] under `work`.
pub fn copy_kpack_shards(work: &Path) -> Vec<PathBuf> {
    kpack_shards()
        .iter()
        .map(|dir| {
            let copy = work.join(dir.file_name().unwrap());
            ok(&Command::new("cp")
                .arg("-a")
                .arg(dir)
                .arg(&copy)
                .output()
                .unwrap());
            copy
        })
        .collect()
}

/// Builds every shard of `artifact_dir` split `count` ways, each by its
/// own process into its own directory under `root`.
pub fn build_shards(
    root: &Path,
    artifact_dir: &Path,
    count: usize,
    extra: &[&str],
) -> Vec<PathBuf> {
    let matrix = shard_plan(artifact_dir, count, extra);
    let ids = shard_ids(&matrix);
    assert_eq!(ids.len(), count);
    ids.iter()
        .map(|id| {
            let dir = root.join(format!("shard-{}", id.replace('/', "-of-")));
            let mut flags = vec!["--shard", id.as_str()];
            flags.extend(extra);
            ok(&build_into(artifact_dir, &dir, &flags));
            dir
        })
        .collect()
}
