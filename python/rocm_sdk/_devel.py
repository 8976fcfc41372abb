"""The devel tree from Python: `get_devel_root()`.

`rocm-sdk-devel` ships its tree as a tarball that is unpacked into
site-packages on first use (docs/devel-tar.md). The native `rocm-sdk`
program in `rocm-sdk-core` does that (and links the files of installed
device wheels), so this module only asks it: `rocm-sdk path --root`
unpacks when needed and prints the root. The reference's names, exception
types and message prefixes are kept (docs/drop-in.md).
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

from .__main__ import native_program

# Names for the type checker only (nothing more is imported at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

__all__ = ["DEVEL_PACKAGE", "get_devel_root"]

#: The pure package of `rocm-sdk-devel`; importable means "devel installed".
DEVEL_PACKAGE = "rocm_sdk_devel"


def get_devel_root(force_initialize: bool = False) -> Path:
    """The root of the unpacked devel tree (`site-packages/_rocm_sdk_devel`),
    unpacking it first when needed.

    Every call brings the tree up to date, device-wheel links included, so
    `force_initialize` (the reference's keyword) changes nothing here.

    Raises `ModuleNotFoundError` when `rocm-sdk-devel` (or the core package
    with the native program) is not installed, and `ImportError` when the
    tree cannot be unpacked (the message says why and what to do).
    """
    del force_initialize
    from . import _dist_info as di

    spec = _find_spec(DEVEL_PACKAGE)
    if spec is None:
        raise ModuleNotFoundError(
            f"{DEVEL_PACKAGE} module for the ROCm SDK development package is not installed. "
            f"This can typically be obtained by installing `rocm[devel]` from your package "
            f'manager: pip install "rocm[devel]=={di.__version__}"',
            name=DEVEL_PACKAGE,
        )
    if spec.origin is None or Path(spec.origin).name != "__init__.py":
        raise ModuleNotFoundError(
            f"{DEVEL_PACKAGE} expected to be defined by an __init__.py file; found a "
            f"namespace package at {', '.join(spec.submodule_search_locations or [])}: "
            f'reinstall it: pip install --force-reinstall "rocm-sdk-devel=={di.__version__}"',
            name=DEVEL_PACKAGE,
        )
    program = native_program()
    if program is None:
        raise ModuleNotFoundError(
            f"the native rocm-sdk program of `rocm-sdk-core` is missing, so the devel tree "
            f'cannot be unpacked; install it: pip install "rocm-sdk-core=={di.__version__}"',
            name="rocm_sdk_core",
        )
    done = subprocess.run(
        [str(program), "path", "--root"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        detail = done.stderr.strip() or f"`{program} path --root` exited with {done.returncode}"
        raise ImportError(f"Expanding the ROCm devel package failed: {detail}")
    root = Path(lines[-1])
    if not (root / "__init__.py").is_file():
        raise ImportError(
            f"Expanding {root.name} did not produce a valid Python package (no __init__.py "
            f'in {root}); reinstall it: pip install --force-reinstall "rocm-sdk-devel=='
            f'{di.__version__}", then run `rocm-sdk init`'
        )
    return root


def _find_spec(name: str) -> ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
