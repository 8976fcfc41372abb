"""Shared helpers: paths and sample documents."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = PYTHON_DIR.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
VECTORS_DIR = REPO_ROOT / "crates" / "dist-info" / "tests" / "vectors"


def load_fixture(mode: str) -> dict:
    """The sample `_dist_info.json` of `mode` (`kpack` or `legacy`)."""
    return json.loads((FIXTURES / f"dist_info_{mode}.json").read_text())


def copy_package(name: str, site: Path) -> Path:
    """Copies `python/{name}` into `site` (no bytecode caches)."""
    dest = site / name
    shutil.copytree(PYTHON_DIR / name, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def write_document(package_dir: Path, doc: dict) -> None:
    """Writes `doc` as `package_dir/_dist_info.json`, sorted like the Rust writer."""
    text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    (package_dir / "_dist_info.json").write_text(text)


def write_executable(path: Path, text: str) -> Path:
    """Writes an executable script."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def run_python(site: Path, code: str, *args: str, env: dict | None = None, flags: tuple = (), **kw):
    """Runs `python [flags] -c code args...` with only `site` added to the
    import path."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ROCM_SDK_")}
    full_env.pop("PYTHONPATH", None)
    full_env["PYTHONPATH"] = str(site)
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, *flags, "-c", code, *args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
        **kw,
    )


def compiler() -> str | None:
    """A C compiler, or None."""
    return shutil.which("cc") or shutil.which("gcc")


def compile_shared_library(path: Path, soname: str, symbol: str) -> None:
    """Compiles a real shared object at `path` exporting `int symbol(void)`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "lib.c"
        source.write_text(f"int {symbol}(void) {{ return 42; }}\n")
        subprocess.run(
            [compiler(), "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(path), str(source)],
            check=True,
            capture_output=True,
        )


class TempDirTest(unittest.TestCase):
    """A test with a fresh temporary directory `self.tmp`."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="rocm-sdk-py-")
        self.tmp = Path(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()


class SiteTest(TempDirTest):
    """A fake site-packages `self.site` holding a copy of `python/rocm_sdk`
    with the sample document of `mode`; code runs in fresh interpreters."""

    mode = "kpack"

    def setUp(self) -> None:
        super().setUp()
        self.site = self.tmp / "site-packages"
        self.site.mkdir()
        self.doc = load_fixture(self.mode)
        self.pkg = copy_package("rocm_sdk", self.site)
        write_document(self.pkg, self.doc)

    def py(self, code: str, *args: str, env: dict | None = None):
        return run_python(self.site, code, *args, env=env)

    def ok(self, code: str, env: dict | None = None) -> str:
        p = self.py(code, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def touch(self, relpath: str) -> None:
        path = self.site / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")


def tool_from_pypi(package: str, program: str) -> Path:
    """`program` from PyPI's `package`, installed once into a venv under the
    workspace's `target/` (git-ignored), so tests run the real tool.

    The suites of two interpreters run side by side (`cargo xtask pytest`):
    one installs under a lock while the other waits, and a marker written
    last says the install finished, so neither runs a half-installed tool.
    """
    venv = REPO_ROOT / "target" / "python-tools" / package
    path = venv / "bin" / program
    installed = venv.with_name(f"{package}.installed")
    if installed.exists():
        return path
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(f"{package}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            subprocess.run(
                [
                    str(venv / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    package,
                ],
                check=True,
                timeout=600,
            )
            installed.touch()
    return path
