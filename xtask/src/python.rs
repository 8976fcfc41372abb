//! The Python shipped in the packages (`python/`): lint, format and type
//! checks with pinned tools, and its unit tests on the oldest and newest
//! Python it supports (`docs/python.md`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd::{root, run};

/// The tools, pinned: a new release never changes what CI accepts.
const TOOLS: &[&str] = &["ruff==0.8.4", "mypy==1.13.0", "uv==0.13.9"];

/// The oldest Python the packages claim (`Requires-Python: >=3.9`) and the
/// newest released one: the unit tests run on both.
const PYTHONS: &[&str] = &["3.9", "3.13"];

/// `cargo xtask pylint`: `ruff check`, `ruff format --check` and
/// `mypy --strict` over `python/` (settings in `python/ruff.toml` and
/// `python/mypy.ini`).
pub(crate) fn pylint(_args: &[String]) -> Result<(), String> {
    let tools = tools_venv()?;
    let python_dir = root().join("python");
    run_in(&python_dir, &tools.join("ruff"), &["check", "."])?;
    run_in(
        &python_dir,
        &tools.join("ruff"),
        &["format", "--check", "."],
    )?;
    run_in(
        &python_dir,
        &tools.join("mypy"),
        &["--config-file", "mypy.ini"],
    )
}

/// `cargo xtask pytest`: the unit tests of `python/tests` on each of
/// [`PYTHONS`]: installed by `uv python install`, or, where that cannot
/// download, the interpreters this machine already has (pyenv's, the
/// system's).
pub(crate) fn pytest(_args: &[String]) -> Result<(), String> {
    let uv = tools_venv()?.join("uv");
    let mut install = vec!["python", "install"];
    install.extend(PYTHONS);
    if let Err(e) = run_in(&root(), &uv, &install) {
        eprintln!("xtask pytest: {e}; looking for installed interpreters instead");
    }
    let interpreters = PYTHONS
        .iter()
        .map(|version| {
            find_python(&uv, version).ok_or_else(|| {
                format!(
                    "no Python {version} on this machine and `uv python install {version}` \
                     failed; install Python {version} (pyenv, the distribution's package) and \
                     run again"
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // One interpreter per core at a time: each run is one process, and the
    // two are independent. Their output is printed whole, one after the
    // other.
    let runs: Vec<Result<std::process::Output, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = interpreters
            .iter()
            .map(|interpreter| {
                let mut command = Command::new(interpreter);
                command.args(UNITTEST).current_dir(root());
                eprintln!("+ {} {}", interpreter.display(), UNITTEST.join(" "));
                scope.spawn(move || {
                    command
                        .output()
                        .map_err(|e| format!("cannot start {}: {e}", interpreter.display()))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("the thread only waits"))
            .collect()
    });
    let mut failed = Vec::new();
    for (interpreter, run) in interpreters.iter().zip(runs) {
        let out = run?;
        eprintln!("== {} ==", interpreter.display());
        eprint!("{}", String::from_utf8_lossy(&out.stdout));
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            failed.push(format!("{}: {}", interpreter.display(), out.status));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("the Python tests failed on {}", failed.join(", ")))
    }
}

/// The unit tests of `python/tests`, run from the repository root.
const UNITTEST: &[&str] = &[
    "-m",
    "unittest",
    "discover",
    "-s",
    "python/tests",
    "-t",
    "python",
];

/// An interpreter of `version` (`3.9`) that runs: uv's managed one, else
/// pyenv's newest `version.*`, else the system's `pythonX.Y`.
fn find_python(uv: &Path, version: &str) -> Option<PathBuf> {
    let managed = Command::new(uv)
        .args([
            "python",
            "find",
            "--no-project",
            "--managed-python",
            version,
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let program = format!("python{version}");
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")));
    let mut pyenv: Vec<PathBuf> = pyenv_root
        .and_then(|root| std::fs::read_dir(root.join("versions")).ok())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&format!("{version}.")))
        })
        .map(|e| e.path().join("bin").join(&program))
        .collect();
    pyenv.sort();
    let system = ["/usr/local/bin", "/usr/bin"].map(|d| Path::new(d).join(&program));
    managed
        .into_iter()
        .chain(pyenv.into_iter().rev())
        .chain(system)
        .find(|candidate| runs_as(candidate, version))
}

/// Whether `python --version` runs and says `Python {version}.`.
fn runs_as(python: &Path, version: &str) -> bool {
    Command::new(python)
        .arg("--version")
        .output()
        .is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout).starts_with(&format!("Python {version}."))
        })
}

/// `target/xtask-python-tools/bin`: a venv holding [`TOOLS`], made or updated
/// when the pins change.
fn tools_venv() -> Result<PathBuf, String> {
    let venv = root().join("target").join("xtask-python-tools");
    let bin = venv.join("bin");
    let stamp = venv.join("pins.txt");
    let pins = TOOLS.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == pins) {
        return Ok(bin);
    }
    run(
        "python3",
        &[
            "-m",
            "venv",
            "--clear",
            venv.to_str().ok_or("non-UTF-8 path")?,
        ],
    )?;
    let mut install = vec!["install", "-q", "--disable-pip-version-check"];
    install.extend(TOOLS);
    run_in(&root(), &bin.join("pip"), &install)?;
    std::fs::write(&stamp, pins).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(bin)
}

fn run_in(dir: &Path, program: &Path, args: &[&str]) -> Result<(), String> {
    crate::cmd::traced(Command::new(program).args(args).current_dir(dir))
}
