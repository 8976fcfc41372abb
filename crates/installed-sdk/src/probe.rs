//! Questions only the installation's Python can answer: where imports land,
//! whether console-script entry points resolve, whether each shared
//! library loads in a fresh process, and what the public `rocm_sdk` API
//! finds and preloads.
//!
//! The native `rocm-sdk` is a static executable, which cannot `dlopen`
//! safely, so library loading runs in Python: one interpreter (`probe.py`)
//! forks a child per library that calls `dlopen(RTLD_NOW | RTLD_LOCAL)`
//! through ctypes. A child of an interpreter that loaded nothing else is a
//! fresh process for the loader, and forking costs far less than starting
//! an interpreter per library (what the reference does).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::Error;

/// The probe's source, run with `python -I -B -c`.
const PROBE_SOURCE: &str = include_str!("probe.py");

/// A Python interpreter to ask, and the site-packages it should import from.
#[derive(Debug, Clone)]
pub struct PythonProbe {
    python: PathBuf,
    site_packages: PathBuf,
}

/// Where an import landed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ImportOutcome {
    /// `module.__file__` (None for a namespace package).
    #[serde(default)]
    pub file: Option<String>,
    /// The exception, when the import failed.
    #[serde(default)]
    pub error: Option<String>,
}

/// Why a library did not load in its fresh process.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadFailure {
    /// `dlopen` returned an error: the loader's own words (`dlerror`).
    Loader(String),
    /// The process ended before `dlopen` returned: the loader had mapped
    /// and bound the library, and its initialisation (a constructor)
    /// exited or crashed, or loading ran out of time. The child's fate and
    /// the last line it printed.
    Stopped(String),
}

impl LoadFailure {
    /// The text, whichever way it failed.
    pub fn text(&self) -> &str {
        match self {
            Self::Loader(text) | Self::Stopped(text) => text,
        }
    }
}

/// What the public API did with one short name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PreloadOutcome {
    /// What `find_libraries` returned, when both calls succeeded.
    #[serde(default)]
    pub paths: Vec<String>,
    /// The exception (`Type: message`) or the child's fate, when a call
    /// failed.
    #[serde(default)]
    pub error: Option<String>,
}

impl PythonProbe {
    /// A probe running `python` with `site_packages` first on `sys.path`.
    pub fn new(python: impl Into<PathBuf>, site_packages: impl Into<PathBuf>) -> Self {
        Self {
            python: python.into(),
            site_packages: site_packages.into(),
        }
    }

    /// The interpreter.
    pub fn python(&self) -> &Path {
        &self.python
    }

    /// Imports each module; where it landed or why it failed.
    pub fn imports(&self, modules: &[String]) -> Result<BTreeMap<String, ImportOutcome>, Error> {
        let answer = self.ask(&json!({ "imports": modules }))?;
        self.field(answer, "imports")
    }

    /// Resolves `module.name` for each pair (console-script entry points);
    /// `None` when it resolves to a callable, else the error.
    pub fn attributes(&self, pairs: &[(String, String)]) -> Result<Vec<Option<String>>, Error> {
        let answer = self.ask(&json!({ "attributes": pairs }))?;
        self.field(answer, "attributes")
    }

    /// Loads each library in its own forked process (`jobs` at a time, each
    /// within `timeout_secs`); `None` when it loaded, else how it failed.
    /// `LD_LIBRARY_PATH` and `LD_PRELOAD` are cleared so only the
    /// libraries' own search paths count.
    pub fn load(
        &self,
        libraries: &[PathBuf],
        jobs: usize,
        timeout_secs: u32,
    ) -> Result<Vec<Option<LoadFailure>>, Error> {
        let paths: Vec<String> = libraries.iter().map(|p| p.display().to_string()).collect();
        let answer = self.ask(&json!({ "load": paths, "jobs": jobs, "timeout": timeout_secs }))?;
        self.field(answer, "load")
    }

    /// For each library-table short name, in its own forked child that
    /// imports `rocm_sdk` itself: `rocm_sdk.find_libraries(name)` then
    /// `rocm_sdk.preload_libraries(name)` (`jobs` at a time, each within
    /// `timeout_secs`).
    pub fn preload(
        &self,
        shortnames: &[String],
        jobs: usize,
        timeout_secs: u32,
    ) -> Result<Vec<PreloadOutcome>, Error> {
        let answer =
            self.ask(&json!({ "preload": shortnames, "jobs": jobs, "timeout": timeout_secs }))?;
        self.field(answer, "preload")
    }

    /// Opens each `(directory, name, symbol)`: `name` by name in a fresh
    /// process whose loader searches `directory` first, then `symbol`
    /// through the handle (`jobs` at a time, each within `timeout_secs`);
    /// `None` when both worked, else the loader's words.
    pub fn open_by_name(
        &self,
        items: &[(PathBuf, String, String)],
        jobs: usize,
        timeout_secs: u32,
    ) -> Result<Vec<Option<String>>, Error> {
        let items: Vec<(String, &str, &str)> = items
            .iter()
            .map(|(d, n, s)| (d.display().to_string(), n.as_str(), s.as_str()))
            .collect();
        let answer =
            self.ask(&json!({ "open_by_name": items, "jobs": jobs, "timeout": timeout_secs }))?;
        self.field(answer, "open_by_name")
    }

    /// For each `(shortname, name, symbol)`, in a fresh interpreter:
    /// `rocm_sdk.initialize_process(preload_shortnames=[shortname])`, then
    /// `ctypes.CDLL(name)` by the bare name, which must give `symbol` the
    /// preloaded library's address, and `rocm_sdk.find_library_path(name)`
    /// must name the file `find_libraries(shortname)` does (`jobs` at a
    /// time, each within `timeout_secs`); `None` when all held, else what
    /// failed.
    pub fn bare_names(
        &self,
        items: &[(String, String, String)],
        jobs: usize,
        timeout_secs: u32,
    ) -> Result<Vec<Option<String>>, Error> {
        let answer =
            self.ask(&json!({ "bare_names": items, "jobs": jobs, "timeout": timeout_secs }))?;
        self.field(answer, "bare_names")
    }

    /// `rocm_sdk.library_directories()`, or the error it raised.
    pub fn library_directories(&self) -> Result<Result<Vec<PathBuf>, String>, Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Answer {
            Directories(Vec<PathBuf>),
            Error { error: String },
        }
        let answer = self.ask(&json!({ "library_directories": true }))?;
        Ok(match self.field(answer, "library_directories")? {
            Answer::Directories(d) => Ok(d),
            Answer::Error { error } => Err(error),
        })
    }

    fn field<T: serde::de::DeserializeOwned>(
        &self,
        mut answer: Value,
        key: &str,
    ) -> Result<T, Error> {
        serde_json::from_value(answer[key].take()).map_err(|e| Error::Probe {
            python: self.python.clone(),
            reason: format!("malformed `{key}` answer: {e}"),
        })
    }

    fn ask(&self, request: &Value) -> Result<Value, Error> {
        let mut child = Command::new(&self.python)
            .args(["-I", "-B", "-c", PROBE_SOURCE])
            .arg(&self.site_packages)
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("LD_PRELOAD")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| Error::Python {
                python: self.python.clone(),
                source,
            })?;
        let mut stdin = child.stdin.take().expect("piped");
        let body = request.to_string();
        // A probe that dies early closes its stdin; the exit status says why.
        let _ = stdin.write_all(body.as_bytes());
        drop(stdin);
        let output = child.wait_with_output().map_err(|source| Error::Python {
            python: self.python.clone(),
            source,
        })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let last = stdout.lines().rev().find(|l| !l.trim().is_empty());
        match (
            output.status.success(),
            last.map(serde_json::from_str::<Value>),
        ) {
            (true, Some(Ok(value))) => Ok(value),
            _ => Err(Error::Probe {
                python: self.python.clone(),
                reason: format!(
                    "{}: {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim()
                ),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python() -> Option<PathBuf> {
        let ok = Command::new("python3")
            .arg("-c")
            .arg("pass")
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| PathBuf::from("python3"))
    }

    #[test]
    fn imports_and_attributes_from_the_given_site_packages() {
        let Some(py) = python() else { return };
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("pkg_here")).unwrap();
        std::fs::write(
            dir.path().join("pkg_here/__init__.py"),
            "print('noise')\ndef tool():\n    pass\nvalue = 1\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("namespace_only")).unwrap();
        let probe = PythonProbe::new(py, dir.path());
        let names = ["pkg_here", "namespace_only", "no_such_module"].map(String::from);
        let got = probe.imports(&names).unwrap();
        let here = got["pkg_here"].file.as_deref().unwrap();
        assert!(here.ends_with("pkg_here/__init__.py"), "{here}");
        assert_eq!(got["namespace_only"].file, None);
        assert!(got["namespace_only"].error.is_none());
        assert!(
            got["no_such_module"]
                .error
                .as_deref()
                .unwrap()
                .contains("ModuleNotFoundError")
        );
        let pairs = [
            ("pkg_here", "tool"),
            ("pkg_here", "value"),
            ("pkg_here", "nope"),
        ]
        .map(|(m, a)| (m.to_owned(), a.to_owned()));
        let got = probe.attributes(&pairs).unwrap();
        assert_eq!(got[0], None);
        assert!(got[1].as_deref().unwrap().contains("not callable"));
        assert!(got[2].as_deref().unwrap().contains("AttributeError"));
        assert!(
            !dir.path().join("pkg_here/__pycache__").exists(),
            "-B: no bytecode written"
        );
    }

    #[test]
    fn loads_each_library_in_its_own_process() {
        let Some(py) = python() else { return };
        let dir = tempfile::tempdir().unwrap();
        let not_a_library = dir.path().join("libnot.so");
        std::fs::write(&not_a_library, b"plain text").unwrap();
        let libc = [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/lib64/libc.so.6",
            "/usr/lib/libc.so.6",
        ]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
        let mut libraries = vec![not_a_library, dir.path().join("libmissing.so")];
        libraries.extend(libc.clone());
        let got = PythonProbe::new(py, dir.path())
            .load(&libraries, 2, 30)
            .unwrap();
        assert_eq!(got.len(), libraries.len());
        assert!(
            matches!(&got[0], Some(LoadFailure::Loader(e)) if e.contains("libnot.so")),
            "{got:?}"
        );
        assert!(matches!(got[1], Some(LoadFailure::Loader(_))), "{got:?}");
        if libc.is_some() {
            assert_eq!(got[2], None);
        }
    }

    #[test]
    fn a_constructor_that_ends_the_process_is_told_from_a_loader_error() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("quits.c");
        std::fs::write(
            &src,
            "#include <stdio.h>\n#include <stdlib.h>\n\
             __attribute__((constructor)) static void quit(void) {\n\
             fprintf(stderr, \"noise\\nthis runtime must come first\\n\"); exit(7); }\n",
        )
        .unwrap();
        let library = dir.path().join("libquits.so");
        let status = Command::new("gcc") // a TEST_PACKAGES of xtask/src/ci.rs
            .args(["-shared", "-fPIC", "-o"])
            .arg(&library)
            .arg(&src)
            .status()
            .unwrap();
        assert!(status.success());
        let got = PythonProbe::new("python3", dir.path())
            .load(&[library], 1, 30)
            .unwrap();
        assert_eq!(
            got[0],
            Some(LoadFailure::Stopped(
                "the loading process exited with status 7: this runtime must come first".to_owned()
            ))
        );
    }

    #[test]
    fn preloads_go_through_the_rocm_sdk_of_the_site_packages() {
        let py = PathBuf::from("python3"); // a TEST_PACKAGES of xtask/src/ci.rs
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("rocm_sdk");
        std::fs::create_dir(&package).unwrap();
        // A stand-in API with the public signatures, answering from a table.
        std::fs::write(
            package.join("__init__.py"),
            "import ctypes\n\
             TABLE = {'c': 'libc.so.6', 'gone': '/nonexistent/libgone.so'}\n\
             def find_libraries(*names):\n\
             \x20   for n in names:\n\
             \x20       if n not in TABLE:\n\
             \x20           raise FileNotFoundError(f'Could not find rocm library {n!r}')\n\
             \x20   return [TABLE[n] for n in names]\n\
             def preload_libraries(*names, rtld_global=True):\n\
             \x20   for p in find_libraries(*names):\n\
             \x20       ctypes.CDLL(p)\n",
        )
        .unwrap();
        let names = ["c", "gone", "unknown"].map(String::from);
        let got = PythonProbe::new(py, dir.path())
            .preload(&names, 2, 30)
            .unwrap();
        assert_eq!(got[0].paths, ["libc.so.6"]);
        assert_eq!(got[0].error, None);
        assert!(
            got[1].error.as_deref().unwrap().starts_with("OSError: "),
            "{got:?}"
        );
        assert_eq!(
            got[2].error.as_deref(),
            Some("FileNotFoundError: Could not find rocm library 'unknown'")
        );
    }

    #[test]
    fn a_missing_interpreter_says_what_to_do() {
        let err = PythonProbe::new("/nonexistent/python3", "/")
            .imports(&[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("ROCM_SDK_PYTHON"), "{err}");
    }
}
