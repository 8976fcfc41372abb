"""`python -m rocm_sdk` and the `rocm-sdk` console script: exec the native
`rocm-sdk` program shipped in the core package (`rocm_sdk_core/_bin/`).

The native program finds site-packages from its own location, so `--user`,
`--target` and `--prefix` installs work; this shim only has to find it.
It also tells the program which interpreter runs this installation
(`ROCM_SDK_PYTHON`, unless already set): `rocm-sdk test` imports the
packages and loads every shared library with it, since the static native
program cannot load libraries itself.
"""

from __future__ import annotations

import os
import sys

# No `pathlib` here: every `rocm-sdk` command runs this before the native
# program, and the import costs more than the rest of the shim.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["PYTHON_ENV", "main", "native_program"]

#: The interpreter `rocm-sdk test` uses (crates/rocm-sdk, `main.rs`).
PYTHON_ENV = "ROCM_SDK_PYTHON"


def native_program() -> Path | None:
    """The native `rocm-sdk` beside this installation (or wherever the
    import system finds `rocm_sdk_core`), or None."""
    from pathlib import Path

    program = _find_program()
    return None if program is None else Path(program)


def _find_program() -> str | None:
    name = "rocm-sdk.exe" if sys.platform == "win32" else "rocm-sdk"
    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    beside = os.path.join(site, "rocm_sdk_core", "_bin", name)
    if os.path.isfile(beside):
        return beside
    try:
        import importlib.util

        spec = importlib.util.find_spec("rocm_sdk_core")
    except (ImportError, ValueError):
        spec = None
    for location in (spec and spec.submodule_search_locations) or ():
        candidate = os.path.join(location, "_bin", name)
        if os.path.isfile(candidate):
            return candidate
    return None


def _pin(package_dir: str) -> str:
    """`==V` from this installation's document, or "" when it is unreadable
    (this shim must work on a broken install)."""
    try:
        import json

        with open(os.path.join(package_dir, "_dist_info.json"), encoding="utf-8") as f:
            version = json.load(f)["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return f"=={version}" if isinstance(version, str) else ""


def main() -> int:
    """Runs the native program with this process's arguments; returns only
    on failure (or, on Windows, with the program's exit status)."""
    program = _find_program()
    if program is None:
        here = os.path.dirname(os.path.abspath(__file__))
        looked = os.path.join(os.path.dirname(here), "rocm_sdk_core", "_bin")
        sys.stderr.write(
            f"rocm-sdk: error: the native rocm-sdk program is missing (looked in {looked}); "
            "install the `rocm-sdk-core` package that matches `rocm`: "
            f'pip install "rocm-sdk-core{_pin(here)}"\n'
        )
        return 1
    argv = [program, *sys.argv[1:]]
    if sys.executable and not os.environ.get(PYTHON_ENV):
        os.environ[PYTHON_ENV] = sys.executable
    if sys.platform == "win32":
        # os.execv on Windows returns to the shell early; wait instead.
        import subprocess

        return subprocess.call(argv)
    try:
        os.execv(argv[0], argv)
    except OSError as e:
        sys.stderr.write(f"rocm-sdk: error: cannot run {program}: {e.strerror or e}\n")
        return 126
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
