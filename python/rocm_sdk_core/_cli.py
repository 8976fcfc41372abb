"""Console-script trampolines of `rocm-sdk-core` (docs/behaviour.md#console-scripts).

pip writes each script as `from rocm_sdk_core._cli import FUNCTION`; the
functions are not written out here but resolved (PEP 562 `__getattr__`)
from the `console_scripts` list of `_dist_info.json` beside this file:
`{"name", "function", "package", "relpath", "system_info", "platforms"}`.

What a script runs (`relpath` inside the tree):
- devel installed (`SP/rocm_sdk_devel/` exists) and not a
  system-information tool: `SP/_rocm_sdk_devel{nonce}/{relpath}` (the
  devel platform package the document names). On the warm
  path (tar gone, tree present, links stamp equal to the installed
  runtime and device dist-info names and their RECORDs' inodes) that is
  one `os.execv` after a directory listing and a few `stat`s, nothing
  else. Otherwise `rocm-sdk init --quiet` (the native program in `_bin/`)
  runs first, as a subprocess, then the exec.
- otherwise (no devel, or `amd-smi`, `rocminfo`, ... which never unpack):
  `SP/_rocm_sdk_core{nonce}/{relpath}`.
- a tool absent from the tree: one line naming the path, exit status 127.

Before a devel tool runs, the `rocm` wheel's selection record is compared
with this machine (`rocm_sdk/_selection_record.py`; a non-ROCm
`offload-arch` only when devel is unpacked first): a mismatch is one
warning line on stderr, and the tool still runs.

Only `os`, `sys` and `json` are imported on the warm path (plus
`importlib.util`, to load the selection check by path, when `rocm` is
installed).
"""

import os
import sys

from rocm_sdk_core._console import EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, ScriptTable, fail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from rocm_sdk_core._console import Script

#: The pure package of the devel wheel; its presence means "devel installed".
DEVEL_PACKAGE = "rocm_sdk_devel"
#: The devel tarball names; one still present means "not (fully) unpacked".
DEVEL_TAR_NAMES = ("_devel.tar", "_devel.tar.zst", "_devel.tar.xz")
#: The device-links stamp inside the devel tree (devel-tar `stamp.rs`).
DEVICE_LINKS_STAMP = ".device-links-stamp"
#: Set (to anything non-empty), console scripts never run `rocm-sdk init`
#: first: what `rocm-sdk test` sets for every tool it runs, so that its
#: report shows separated links instead of a launch mending them.
NO_INIT_VARIABLE = "ROCM_SDK_NO_INIT"
#: The distributions whose files the devel tree links to (their dist-info
#: prefixes); each is one line of the stamp.
LINKED_DIST_PREFIXES = (
    "rocm_sdk_core-",
    "rocm_sdk_libraries",
    "rocm_sdk_device_",
    "rocm_profiler-",
)
DIST_INFO_SUFFIX = ".dist-info"

_WINDOWS = sys.platform == "win32"
_table = ScriptTable(__file__, "core", "rocm-sdk-core", lambda script: launch(script))
_PACKAGE_DIR = _table.package_dir
_SITE = _table.site
_scripts = _table.scripts
_platform_dir = _table.platform_dir
_fail = fail
# PEP 562: `from rocm_sdk_core._cli import amdclang_pp` lands here.
__getattr__ = _table.function


def __dir__() -> "list[str]":
    return _table.names(globals())


def native_program() -> str:
    """The native `rocm-sdk` shipped in this package."""
    return os.path.join(_PACKAGE_DIR, "_bin", "rocm-sdk.exe" if _WINDOWS else "rocm-sdk")


def device_links_stamp(site_packages: str) -> str:
    """The stamp text for the distributions installed now (the same text
    devel-tar writes once every link is in place, `stamp.rs`): per core,
    libraries, device and profiler dist-info, its name and its RECORD's
    inode, so a reinstall or a copy of site-packages (a new RECORD) is seen
    as well as a device wheel that came or went."""
    lines = []
    for name in sorted(os.listdir(site_packages)):
        if name.startswith(LINKED_DIST_PREFIXES) and name.endswith(DIST_INFO_SUFFIX):
            identity = "-"
            if not _WINDOWS:
                try:
                    # The RECORD itself, a regular file (devel-tar `stamp.rs`).
                    st = os.lstat(os.path.join(site_packages, name, "RECORD"))
                    if st.st_mode & 0o170000 == 0o100000:
                        identity = str(st.st_ino)
                except OSError:
                    pass
            lines.append(f"{name} {identity}\n")
    return "".join(lines)


def devel_needs_init(site_packages: str) -> bool:
    """Whether `rocm-sdk init` must run before a devel tool: the tar is
    still there, the tree is missing, a device wheel came or went, or a
    runtime wheel was reinstalled or copied since the links were made."""
    package = os.path.join(site_packages, DEVEL_PACKAGE)
    if any(os.path.exists(os.path.join(package, t)) for t in DEVEL_TAR_NAMES):
        return True
    tree = os.path.basename(_platform_dir("devel"))
    stamp = os.path.join(site_packages, tree, DEVICE_LINKS_STAMP)
    recorded = _read_stamp(stamp)
    return recorded is None or recorded != device_links_stamp(site_packages)


#: The most bytes of a stamp read: one line per installed distribution.
STAMP_LIMIT = 1 << 20


def _read_stamp(path: str) -> "Optional[str]":
    """The stamp's text; None unless it is a regular file (not a link, a
    pipe or a device: anyone who can write the tree could plant one) of at
    most `STAMP_LIMIT` bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        if _WINDOWS and os.path.islink(path):
            return None
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o170000 != 0o100000 or st.st_size > STAMP_LIMIT:
            return None
        data = os.read(fd, STAMP_LIMIT + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > STAMP_LIMIT:
        return None
    return data.decode("utf-8", "replace")


def _run_init() -> None:
    program = native_program()
    if not os.path.isfile(program):
        _fail(
            f"rocm-sdk: error: the native rocm-sdk program is missing ({program}); "
            f"reinstall rocm-sdk-core",
            1,
        )
    import subprocess

    status = subprocess.call([program, "init", "--quiet"])
    if status != 0:
        _fail(
            f"rocm-sdk: error: unpacking rocm-sdk-devel failed (`rocm-sdk init` exited with {status}); "
            f"run `rocm-sdk init` to see why",
            status if 0 < status < 126 else 1,
        )


#: The selection check of the `rocm` wheel, loaded by path so that the
#: `rocm_sdk` package (and what it imports) stays out of the warm path.
SELECTION_CHECK = os.path.join("rocm_sdk", "_selection_record.py")


def warn_if_stale_selection(name: str, full: bool) -> None:
    """One line on stderr when the installed `rocm` wheel was selected for
    another machine; never fails the launch."""
    path = os.path.join(_SITE, SELECTION_CHECK)
    if not os.path.isfile(path):
        return
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location("_rocm_sdk_core_selection_check", path)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        message = module.check(os.path.dirname(path), full=full)
    except Exception:  # noqa: BLE001 - a broken record must not stop the tool
        return
    if message:
        sys.stderr.write(f"{name}: warning: {message}\n")


def _existing(root: str, relpath: str) -> "Optional[str]":
    path = os.path.join(root, *relpath.split("/"))
    for candidate in (path, path + ".exe") if _WINDOWS else (path,):
        if os.path.isfile(candidate):
            return candidate
    return None


def resolve(script: "Script") -> "Optional[str]":
    """The tool a console script runs, unpacking devel first when needed;
    None when the tool is absent from the tree."""
    relpath = str(script["relpath"])
    if not script.get("system_info") and os.path.isdir(os.path.join(_SITE, DEVEL_PACKAGE)):
        cold = devel_needs_init(_SITE)
        warn_if_stale_selection(script["name"], full=cold)
        if cold and not os.environ.get(NO_INIT_VARIABLE):
            _run_init()
        tool = _existing(_platform_dir("devel"), relpath)
        if tool is not None:
            return tool
    return _existing(_platform_dir("core"), relpath)


def exec_tool(tool: str, name: str) -> None:
    """Replaces this process with `tool` (argv[0] = its path, then our
    arguments); on Windows, runs it and exits with its status."""
    argv = [tool, *sys.argv[1:]]
    if _WINDOWS:
        import subprocess

        sys.exit(subprocess.call(argv))
    try:
        os.execv(tool, argv)
    except OSError as e:
        _fail(f"{name}: cannot run {tool}: {e.strerror or e}", EXIT_NOT_EXECUTABLE)


def launch(script: "Script") -> None:
    """Runs one console script (a `console_scripts` record)."""
    name = str(script["name"])
    if sys.platform not in script.get("platforms", (sys.platform,)):
        _fail(f"{name}: this ROCm tool is not available on {sys.platform}", EXIT_NOT_FOUND)
    tool = resolve(script)
    if tool is None:
        looked = os.path.join(_platform_dir("core"), *script["relpath"].split("/"))
        _fail(
            f"{name}: this tool is not part of this ROCm installation (no {looked})",
            EXIT_NOT_FOUND,
        )
    exec_tool(tool, name)
