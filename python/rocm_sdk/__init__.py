"""The ROCm SDK Python API (SPEC §11), used by PyTorch and others.

    import rocm_sdk
    rocm_sdk.initialize_process(preload_shortnames=["amdhip64"], check_version="7.1.*")
    rocm_sdk.find_libraries("hipblas")  # [Path(".../_rocm_sdk_libraries/lib/libhipblas.so.3")]

Everything is read from `rocm_sdk/_dist_info.json`; importing this package
does not read it yet (so `python -m rocm_sdk` works even on a broken
install, where the native `rocm-sdk test` can say what is wrong).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable

__all__ = [
    "LibraryNotFoundError",
    "MissingPackageError",
    "UnknownLibraryError",
    "__version__",
    "find_libraries",
    "initialize_process",
    "preload_libraries",
]

#: The environment variable `initialize_process` reads extra preloads from.
PRELOAD_ENV = "ROCM_SDK_PRELOAD_LIBRARIES"


def __getattr__(name: str) -> Any:
    # PEP 562: `__version__` reads the document on first use only.
    if name == "__version__":
        from ._dist_info import __version__

        return __version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class UnknownLibraryError(ModuleNotFoundError):
    """A short name that is not in the library table."""


class MissingPackageError(ModuleNotFoundError):
    """The package that ships a library is not installed (or not in this release)."""

    def __init__(self, message: str, *, extras: Iterable[str] = ()) -> None:
        super().__init__(message)
        #: The `rocm[...]` extras that would install what is missing.
        self.extras = sorted(set(extras))


class LibraryNotFoundError(FileNotFoundError):
    """The package is installed but holds no file matching the library's pattern."""


#: Handles of preloaded libraries by short name, so each loads once.
_ALL_CDLLS: dict[str, Any] = {}


def _install_hint(extras: Iterable[str], version: str) -> str:
    return f'pip install "rocm[{",".join(sorted(set(extras)))}]=={version}"'


def find_libraries(*shortnames: str) -> list[Path]:
    """Absolute paths of the named libraries, in the order asked.

    Raises `UnknownLibraryError` for a name not in the table,
    `MissingPackageError` (naming the `rocm[...]` extra to install) when the
    package that ships a library is absent, and `LibraryNotFoundError` when
    the package lacks the file. On Windows, libraries that have no DLL are
    skipped, as are optional libraries (`rocdxg`) the build lacks.
    """
    return [path for _, path in _locate(shortnames)]


def _locate(shortnames: Iterable[str]) -> list[tuple[str, Path]]:
    """`(shortname, path)` for each library found (see `find_libraries`)."""
    from . import _dist_info as di

    shortnames = list(shortnames)

    windows = sys.platform == "win32"
    known = di.ALL_LIBRARIES
    unknown = [s for s in shortnames if s not in known]
    if unknown:
        raise UnknownLibraryError(
            f"unknown ROCm library {', '.join(repr(u) for u in unknown)}; "
            f"known libraries: {', '.join(known)}"
        )
    contents = set(di.DOCUMENT.get("contents", ())) | {"core", "meta"}
    paths: list[tuple[str, Path]] = []
    missing: dict[str, list[str]] = {}
    for shortname in shortnames:
        entry = known[shortname]
        pattern = entry.dll_pattern if windows else entry.so_pattern
        if not pattern:
            continue
        package = entry.package
        if package.logical_name not in contents:
            raise MissingPackageError(
                f"ROCm library {shortname!r} belongs to the `{package.logical_name}` package, "
                f"which this ROCm release ({di.__version__}) does not include"
            )
        root = _package_root(di, package)
        if root is None:
            missing.setdefault(package.logical_name, []).append(shortname)
            continue
        directory = root / (entry.windows_relpath if windows else entry.posix_relpath)
        matches = sorted(directory.glob(pattern))
        if not matches:
            if entry.optional:
                continue
            raise LibraryNotFoundError(
                f"ROCm library {shortname!r}: no file matching {pattern!r} in {directory}; "
                f"the `{package.get_dist_package_name(_target_or_none(di, package))}` "
                f"installation is incomplete, reinstall it"
            )
        # Several matches are versioned names of one library; take the first.
        paths.append((shortname, matches[0]))
    if missing:
        names = ", ".join(repr(s) for libs in missing.values() for s in libs)
        raise MissingPackageError(
            f"ROCm libraries {names} need the "
            f"{', '.join(f'`{m}`' for m in missing)} package(s), which are not installed; "
            f"install them with: {_install_hint(missing, di.__version__)}",
            extras=missing,
        )
    return paths


def _target_or_none(di: Any, package: Any) -> str | None:
    return di.determine_target_family() if package.is_target_specific else None


def _package_root(di: Any, package: Any) -> Path | None:
    """The installed platform directory of `package`, or None.

    A target-specific package (legacy libraries) is looked up for the
    determined family first, then for any other family of the release that
    is installed (a user may have installed one family explicitly).
    """
    if not package.is_target_specific:
        return package.get_py_package_path()
    first = di.determine_target_family()
    for family in [first, *(f for f in di.AVAILABLE_TARGET_FAMILIES if f != first)]:
        path = package.get_py_package_path(family)
        if path is not None:
            return path
    return None


def preload_libraries(*shortnames: str, rtld_global: bool = True) -> None:
    """Loads the named libraries into this process (once each), so that
    native extensions linked against them resolve by name.

    `rtld_global=False` loads with `RTLD_LOCAL`. Paths come from
    `find_libraries`, with its errors.
    """
    import ctypes

    wanted = [s for s in dict.fromkeys(shortnames) if s not in _ALL_CDLLS]
    if not wanted:
        return
    mode = ctypes.RTLD_GLOBAL if rtld_global else ctypes.RTLD_LOCAL
    # Locate everything first, so a missing package fails before any load.
    for shortname, path in _locate(wanted):
        try:
            _ALL_CDLLS[shortname] = ctypes.CDLL(str(path), mode=mode)
        except OSError as e:
            raise OSError(f"cannot load ROCm library {shortname!r} from {path}: {e}") from e


def _version_pattern(check_version: str | re.Pattern[str]) -> re.Pattern[str]:
    if isinstance(check_version, re.Pattern):
        return check_version
    return re.compile(re.escape(check_version).replace(r"\*", ".*"))


def _version_matches(pattern: re.Pattern[str], from_string: bool, version: str) -> bool:
    # A string must match the whole version; a compiled pattern is matched
    # from the start (`re.match`), as the reference did, so callers decide
    # the anchoring.
    return bool(pattern.fullmatch(version) if from_string else pattern.match(version))


def initialize_process(
    *,
    preload_shortnames: Iterable[str] | None = None,
    rtld_global: bool = True,
    env_override: bool = True,
    check_version: str | re.Pattern[str] | None = None,
    fail_on_version_mismatch: bool = False,
    **kwargs: Any,
) -> None:
    """Process-wide initialisation for code that uses ROCm native libraries.

    - `check_version`: the ROCm version the caller was built against; a
      string where `*` matches any run of characters (`"7.1.*"`), or a
      compiled pattern. A mismatch warns (`UserWarning`) or, with
      `fail_on_version_mismatch=True`, raises `RuntimeError`. Checked first,
      so a fatal mismatch loads nothing.
    - `preload_shortnames`: libraries to `preload_libraries`, with
      `rtld_global`.
    - `env_override`: also preload the names in `ROCM_SDK_PRELOAD_LIBRARIES`
      (separated by `,` or `;`); a failure there raises `RuntimeError`
      naming the variable.
    - Other keywords are accepted and ignored, so callers written for a
      newer `rocm_sdk` keep working.
    """
    del kwargs
    if check_version:
        from ._dist_info import __version__ as version

        from_string = not isinstance(check_version, re.Pattern)
        pattern = _version_pattern(check_version)
        if not _version_matches(pattern, from_string, version):
            expected = check_version if from_string else pattern.pattern
            message = (
                f"the program was built against a ROCm version matching {expected!r}, "
                f"but this Python environment has ROCm {version}"
            )
            if fail_on_version_mismatch:
                raise RuntimeError(message)
            import warnings

            warnings.warn(
                f"{message}; this may cause unexpected behaviour", UserWarning, stacklevel=2
            )
    if preload_shortnames:
        preload_libraries(*preload_shortnames, rtld_global=rtld_global)
    if env_override:
        value = os.environ.get(PRELOAD_ENV)
        names = [s.strip() for s in re.split("[,;]", value or "")]
        names = [s for s in names if s]
        if names:
            try:
                preload_libraries(*names, rtld_global=rtld_global)
            except Exception as e:
                raise RuntimeError(
                    f"could not preload the libraries of {PRELOAD_ENV}={value!r}: {e}; "
                    f"correct or unset that environment variable"
                ) from e


# One warning when the installer reused a `rocm` wheel selected for another
# machine (docs/python.md, "Stale selections"); cheap, never raises.
from ._selection_record import warn_if_stale as _warn_if_stale  # noqa: E402

_warn_if_stale()
