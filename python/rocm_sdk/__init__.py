"""The ROCm SDK Python API (docs/behaviour.md#python-api), used by PyTorch and others.

    import rocm_sdk
    rocm_sdk.initialize_process(preload_shortnames=["amdhip64"], check_version="7.1.*")
    rocm_sdk.find_libraries("hipblas")  # [Path(".../_rocm_sdk_libraries/lib/libhipblas.so.3")]

Everything is read from `rocm_sdk/_dist_info.json`; importing this package
does not read it yet (so `python -m rocm_sdk` works even on a broken
install, where the native `rocm-sdk test` can say what is wrong).
"""

from __future__ import annotations

import os
import sys

# Only `os` and `sys` up front: `import rocm_sdk` runs for every
# `rocm-sdk` command (the console script imports it to exec the native
# program), and `re`, `pathlib` and `typing` cost more than the rest of
# the shim (docs/python.md, "Import cost"). Functions import what they use.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

    from ._library_record import LibraryRecord

__all__ = [
    "LibraryNotFoundError",
    "MissingPackageError",
    "UnknownLibraryError",
    "__version__",
    "find_libraries",
    "find_library_path",
    "initialize_process",
    "library_directories",
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
    """The package is installed but holds no file for the library: its
    installation is incomplete, or the build did not produce the library."""


#: Handles of preloaded libraries by short name, so each loads once.
_ALL_CDLLS: dict[str, Any] = {}

#: Handles of the runtime aliases loaded after their libraries, by path
#: (docs/python.md, "Unversioned names").
_ALIAS_CDLLS: dict[Path, Any] = {}

#: Library records already read, by platform package directory (None:
#: the package has no record).
_RECORDS: dict[Path, LibraryRecord | None] = {}

#: Directories added to the DLL search path on Windows, with the handles
#: `os.add_dll_directory` returned: closing a handle would remove its
#: directory again, so they live as long as the process.
_DLL_DIRECTORIES: dict[Path, Any] = {}


def _add_dll_directory(directory: Path) -> None:
    """On Windows, adds `directory` to the process's DLL search path (once).

    A DLL's imports are found in its own directory, but not in another
    package's: `rocblas.dll` in the libraries package imports
    `amdhip64_7.dll` from core's `bin`, and a framework's own DLLs import
    both. Elsewhere the loader follows each library's RPATH instead.
    """
    if sys.platform != "win32":
        return
    if directory in _DLL_DIRECTORIES or not directory.is_dir():
        return
    _DLL_DIRECTORIES[directory] = os.add_dll_directory(str(directory))


def _add_package_dll_directories() -> None:
    """On Windows, adds the DLL directory of every installed package of
    this release that ships table libraries and is not target specific
    (core, and libraries in a kpack release); a target-specific package's
    directory is added when one of its libraries is located."""
    if sys.platform != "win32":
        return
    from . import _dist_info as di

    contents = set(di.DOCUMENT.get("contents", ())) | {"core"}
    for entry in di.ALL_LIBRARIES.values():
        package = entry.package
        if not entry.dll_pattern or package.is_target_specific:
            continue
        if package.logical_name not in contents:
            continue
        root = package.get_py_package_path()
        if root is not None:
            _add_dll_directory(root / entry.windows_relpath)


def _install_hint(extras: Iterable[str], version: str) -> str:
    return f'pip install "rocm[{",".join(sorted(set(extras)))}]=={version}"'


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def find_libraries(*shortnames: str) -> list[Path]:
    """Absolute paths of the named libraries, in the order asked.

    Raises `UnknownLibraryError` for a name not in the table,
    `MissingPackageError` (naming the `rocm[...]` extra to install) when the
    package that ships a library is absent, and `LibraryNotFoundError` when
    the package lacks the file (its `_libraries.json` says the build did not
    produce it, or the installation is incomplete). Messages start with the
    reference's words (docs/drop-in.md). On Windows, libraries that have no
    DLL are skipped, as are optional libraries (`rocdxg`) the build lacks,
    and the directory of each DLL found is added to the DLL search path
    (`os.add_dll_directory`), so that DLLs importing it load too.
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
        others = f" (also unknown: {_quoted(unknown[1:])})" if len(unknown) > 1 else ""
        raise UnknownLibraryError(
            f"Unknown rocm library '{unknown[0]}'{others}; " f"known libraries: {', '.join(known)}"
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
                f"{_MISSING_PREFIX} '{shortname}' belongs to the `{package.logical_name}` "
                f"package, which this ROCm release ({di.__version__}) does not include"
            )
        found = _package_root(di, package)
        if found is None:
            missing.setdefault(package.logical_name, []).append(shortname)
            continue
        root, target = found
        directory = root / (entry.windows_relpath if windows else entry.posix_relpath)
        path = _library_file(di, entry, shortname, root, target, directory, pattern)
        if path is not None:
            _add_dll_directory(path.parent)
            paths.append((shortname, path))
    if missing:
        names = [s for libs in missing.values() for s in libs]
        packages = ", ".join(f"`{m}`" for m in missing)
        raise MissingPackageError(
            f"{_MISSING_PREFIX} Please refer to Python setup instructions, reinstall your "
            f"virtual environment, or attempt to install manually via "
            f"`pip install rocm[{','.join(sorted(missing))}]`. "
            f"{_quoted(names)} need the {packages} package(s), which are not installed; "
            f"to match this ROCm release: {_install_hint(missing, di.__version__)}",
            extras=missing,
        )
    return paths


#: The first words of the reference's error for libraries whose package is
#: not installed (docs/drop-in.md).
_MISSING_PREFIX = "Missing required rocm libraries."


def _library_file(
    di: Any,
    entry: Any,
    shortname: str,
    root: Path,
    target: str | None,
    directory: Path,
    pattern: str,
) -> Path | None:
    """The file of `entry` inside the installed platform package at `root`,
    None for an optional library the build lacks; else `LibraryNotFoundError`.

    The package's library record, when it has one, says which file the
    build produced (or that it produced none); without one, the first
    sorted match of the table's glob (several are versioned names of one
    library).
    """
    if root not in _RECORDS:
        from ._library_record import read_record

        # The record sits in the distribution's pure package beside the
        # platform package (docs/formats.md), not in the mirrored tree.
        pure = entry.package.get_pure_py_package_name(target)
        _RECORDS[root] = read_record(root.parent / pure) if pure else None
    record = _RECORDS[root]
    # The reference's words, which callers match, come first.
    not_found = (
        f"Could not find rocm library '{shortname}' at path '{directory},' "
        f"no match for pattern '{pattern}'"
    )
    dist = record.distribution if record else entry.package.get_dist_package_name(target)
    reinstall = f'reinstall it: pip install --force-reinstall "{dist}=={di.RELEASE_VERSION}"'
    if record:
        recorded = record.file_of(shortname)
        if recorded is None:
            if entry.optional:
                return None
            raise LibraryNotFoundError(
                f"{not_found}: not part of this ROCm build (`{dist}` lists the "
                f"libraries it ships in {record.path})"
            )
        path = root.joinpath(*recorded.split("/"))
        if path.is_file():
            return path
        raise LibraryNotFoundError(
            f"{not_found}; `{dist}` was built with {path}, which is missing: the "
            f"installation is incomplete, {reinstall}"
        )
    matches = sorted(directory.glob(pattern))
    if matches:
        return matches[0]
    if entry.optional:
        return None
    raise LibraryNotFoundError(f"{not_found}; the `{dist}` installation is incomplete, {reinstall}")


def _package_root(di: Any, package: Any) -> tuple[Path, str | None] | None:
    """The installed platform directory of `package` and the target it is
    for, or None.

    A target-specific package (legacy libraries) is looked up for the
    determined family first, then for any other family of the release that
    is installed (a user may have installed one family explicitly).
    """
    if not package.is_target_specific:
        path = package.get_py_package_path()
        return None if path is None else (path, None)
    first = di.determine_target_family()
    for family in [first, *(f for f in di._SELECTOR.available_targets if f != first)]:
        path = package.get_py_package_path(family)
        if path is not None:
            return path, family
    return None


def preload_libraries(*shortnames: str, rtld_global: bool = True) -> None:
    """Loads the named libraries into this process (once each), so that
    native extensions linked against them resolve by name.

    `rtld_global=False` loads with `RTLD_LOCAL`. Paths come from
    `find_libraries`, with its errors; a library that does not load raises
    the loader's `OSError`, its message first.
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
            raise OSError(f"{e} (ROCm library {shortname!r}, {path})") from e
        _load_aliases(shortname, path, mode)


def _load_aliases(shortname: str, path: Path, mode: int) -> None:
    """Loads every runtime alias of the library at `path` (Linux).

    An alias `libX.so` is a tiny shared object whose SONAME is its own
    name and whose one `DT_NEEDED` is the library (docs/behaviour.md,
    "Runtime aliases"). Once it is loaded, the loader answers a later
    `dlopen("libX.so")` from anywhere in the process with it (a loaded
    object matches a bare name by its SONAME) and the real library comes
    along as its dependency: `ctypes.CDLL("libamdhip64.so")` reaches the
    one mapped copy. A failure only warns: the library itself is loaded.
    """
    if sys.platform == "win32":
        return
    import ctypes

    found = _core_record()
    if found is None:
        return
    core, record = found
    for relpath in record.aliases_of(path.name):
        alias = core.joinpath(*relpath.split("/"))
        if alias in _ALIAS_CDLLS:
            continue
        try:
            _ALIAS_CDLLS[alias] = ctypes.CDLL(str(alias), mode=mode)
        except OSError as e:
            import warnings

            warnings.warn(
                f"{e} (the runtime alias {alias.name} of ROCm library {shortname!r}: "
                f"dlopen({alias.name!r}) will not find it; reinstall rocm-sdk-core)",
                RuntimeWarning,
                stacklevel=4,
            )


def _core_record() -> tuple[Path, LibraryRecord] | None:
    """Core's platform directory and library record, when both exist."""
    from . import _dist_info as di

    core = di.ALL_PACKAGES["core"]
    root = core.get_py_package_path()
    if root is None:
        return None
    if root not in _RECORDS:
        from ._library_record import read_record

        pure = core.get_pure_py_package_name()
        _RECORDS[root] = read_record(root.parent / pure) if pure else None
    record = _RECORDS[root]
    return None if record is None else (root, record)


def library_directories() -> list[Path]:
    """The directories of this installation's shared libraries, in the order
    the loader should search them: what `rocm-sdk path --library-path`
    prints, for `LD_LIBRARY_PATH` (`PATH` on Windows) of programs built
    outside the wheels (docs/python.md, "The library path").

    Only directories of installed packages that exist are listed; a
    target-specific package (legacy libraries) gives one entry per
    installed family, in name order. Never unpacks the devel tree.
    """
    from pathlib import Path

    from . import _dist_info as di

    platform = "windows" if sys.platform == "win32" else "linux"
    directories: list[Path] = []
    for entry in di.DOCUMENT.get("library_path") or ():
        relpath = entry.get(platform)
        package = di.ALL_PACKAGES.get(entry.get("package"))
        if not relpath or package is None:
            continue
        template = package.platform_package_template
        if not template:
            continue
        prefix, placeholder, suffix = template.partition(di._TARGET_PLACEHOLDER)
        if placeholder:
            # Each installed one (legacy libraries), in name order: found on
            # disk, since with several families every package ships one
            # family's document.
            names = sorted(
                n
                for n in os.listdir(di.SITE_PACKAGES)
                if len(n) > len(prefix) + len(suffix)
                and n.startswith(prefix)
                and n.endswith(suffix)
            )
        else:
            names = [template]
        for name in names:
            directory = Path(di.SITE_PACKAGES, name, *relpath.split("/"))
            if directory.is_dir() and directory not in directories:
                directories.append(directory)
    return directories


def find_library_path(name: str) -> Path:
    """The shared library a program reaches by the unversioned `name`
    (`"libamdhip64.so"` → `.../_rocm_sdk_core/lib/libamdhip64.so.7`).

    Looked up in `library_directories()`, in order: the library a runtime
    alias of that name stands for (the build's answer for names code opens,
    docs/behaviour.md, "Runtime aliases"); else a file of exactly that name
    that is not an alias; else its versioned forms (`name.7`, `name.7.1`),
    the highest version of the first directory holding any. Raises
    `LibraryNotFoundError` (a `FileNotFoundError`) when the installation
    has none, `ValueError` for a name with a directory part.
    """
    if not name or os.path.basename(name) != name or name in (".", ".."):
        raise ValueError(
            f"find_library_path takes a file name such as 'libamdhip64.so', not {name!r}"
        )
    directories = library_directories()
    found = _core_record()
    aliases = {}
    if found is not None:
        core, record = found
        aliases = {core.joinpath(*a.split("/")): s for a, s in record.aliases.items()}
    for alias, soname in aliases.items():
        if alias.name == name:
            for directory in directories:
                if (directory / soname).is_file():
                    return directory / soname
    for directory in directories:
        candidate = directory / name
        if candidate.is_file() and candidate not in aliases:
            return candidate
    for directory in directories:
        versions = []
        for path in directory.iterdir():
            if not path.name.startswith(f"{name}."):
                continue
            key = _version_key(path.name[len(name) + 1 :])
            if key is not None and path.is_file():
                versions.append((key, path))
        if versions:
            return max(versions)[1]
    searched = ", ".join(str(d) for d in directories) or "no library directory is installed"
    raise LibraryNotFoundError(
        f"no shared library named '{name}' in this ROCm installation (searched: {searched}); "
        f"install the `rocm[...]` extra that ships it"
    )


def _version_key(suffix: str) -> tuple[int, ...] | None:
    """`7.1.0` → `(7, 1, 0)`; None unless dot-separated numbers."""
    parts = suffix.split(".")
    if not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _version_pattern(check_version: str | re.Pattern[str]) -> tuple[re.Pattern[str], str]:
    """The compiled pattern and its text as the reference's message shows it
    (a string's `*` becomes `.*`, everything else is escaped)."""
    import re

    if isinstance(check_version, re.Pattern):
        return check_version, check_version.pattern
    text = re.escape(check_version).replace(r"\*", ".*")
    return re.compile(text), text


def _version_matches(pattern: re.Pattern[str], from_string: bool, version: str) -> bool:
    # A string must match the whole version; a compiled pattern is matched
    # from the start (`re.match`), as the reference did, so callers decide
    # the anchoring.
    return bool(pattern.fullmatch(version) if from_string else pattern.match(version))


def _check_version(check_version: str | re.Pattern[str], fail: bool) -> None:
    import re

    from ._dist_info import RELEASE_VERSION
    from ._dist_info import __version__ as version

    pattern, shown = _version_pattern(check_version)
    from_string = not isinstance(check_version, re.Pattern)
    # A post-release `X.postN` of the selector is the release `X`: a program
    # built against either matches (docs/python.md).
    if any(_version_matches(pattern, from_string, v) for v in {version, RELEASE_VERSION}):
        return
    # The reference's sentence, which callers match with a regex, comes first.
    message = (
        f"The program was compiled against a ROCm version matching '{shown}' but the "
        f"installed ROCm version in this Python environment is {version}."
    )
    if fail:
        raise RuntimeError(
            f"{message} Install ROCm packages of a matching version into this "
            f"environment, or rebuild the program against ROCm {version}."
        )
    import warnings

    warnings.warn(
        f"{message} This incompatibility may result in unexpected behavior",
        UserWarning,
        stacklevel=3,
    )


def _check_argument_types(preload_shortnames: object, check_version: object) -> None:
    """`TypeError` for arguments of the wrong kind: a string would be read as
    its characters (unknown libraries `a`, `m`, `d`, ...) and a number
    fails deep inside `re` with a message about neither."""
    import re
    from collections.abc import Iterable

    if preload_shortnames is not None and (
        isinstance(preload_shortnames, (str, bytes)) or not isinstance(preload_shortnames, Iterable)
    ):
        raise TypeError(
            "preload_shortnames must be a list of library short names, such as "
            f"['amdhip64'], not {type(preload_shortnames).__name__} {preload_shortnames!r}"
        )
    if check_version is not None and not isinstance(check_version, (str, re.Pattern)):
        raise TypeError(
            "check_version must be a version string, such as '7.1.*', or a compiled "
            f"re.Pattern, not {type(check_version).__name__} {check_version!r}"
        )


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
      `fail_on_version_mismatch=True`, raises `RuntimeError`; both texts
      start with the reference's "The program was compiled against a ROCm
      version matching ...". Checked first, so a fatal mismatch loads nothing.
    - `preload_shortnames`: libraries to `preload_libraries`, with
      `rtld_global`.
    - `env_override`: also preload the names in `ROCM_SDK_PRELOAD_LIBRARIES`
      (separated by `,` or `;`); a failure there raises `RuntimeError`
      naming the variable.
    - Other keywords are accepted and ignored, so callers written for a
      newer `rocm_sdk` keep working.

    A `preload_shortnames` that is a single string (`"amdhip64"` instead of
    `["amdhip64"]`) or not iterable, and a `check_version` that is neither a
    string nor a compiled pattern (`7.0`), raise `TypeError` saying what is
    expected, before anything is loaded.

    On Windows it first adds the DLL directories of the installed packages
    to the DLL search path (`os.add_dll_directory`), so the caller's own
    DLLs find the ROCm DLLs they import.
    """
    del kwargs
    _check_argument_types(preload_shortnames, check_version)
    if check_version:
        _check_version(check_version, fail_on_version_mismatch)
    _add_package_dll_directories()
    if preload_shortnames:
        preload_libraries(*preload_shortnames, rtld_global=rtld_global)
    if env_override:
        value = os.environ.get(PRELOAD_ENV)
        names = [s.strip() for s in (value or "").replace(";", ",").split(",")]
        names = [s for s in names if s]
        if names:
            try:
                preload_libraries(*names, rtld_global=rtld_global)
            except Exception as e:
                raise RuntimeError(
                    f"Could not preload libraries from environment variable "
                    f"{PRELOAD_ENV}='{value}'. Check this environment variable and unset "
                    f"it if not correct/needed. The cause: {e}"
                ) from e


# One warning when the installer reused a `rocm` wheel selected for another
# machine (docs/python.md, "Stale selections"); cheap, never raises.
from ._selection_record import warn_if_stale as _warn_if_stale  # noqa: E402

_warn_if_stale()
