"""Console-script trampolines of `rocm-profiler` (docs/behaviour.md#profiler-scripts; Linux only).

pip writes each script as `from rocm_profiler._cli import FUNCTION`; the
functions are resolved (PEP 562 `__getattr__`) from the `console_scripts`
records with `"package": "profiler"` in the `_dist_info.json` beside this
file. Each runs `SP/_rocm_profiler{nonce}/{relpath}` with
`_rocm_profiler/lib` and core's `lib/rocm_sysdeps/lib` prepended to
`LD_LIBRARY_PATH` and, when it exists, `_rocm_profiler/libexec/rocprofiler-compute`
prepended to `PYTHONPATH`. A tool absent from the tree: one line, exit 127.
"""

import os
import sys

try:
    from rocm_sdk_core._console import EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, ScriptTable, fail
except ImportError:
    sys.stderr.write(
        "rocm-profiler needs rocm-sdk-core, which is not installed here; "
        'install both with: pip install "rocm[profiler]"\n'
    )
    sys.exit(1)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Optional

    from rocm_sdk_core._console import Script

_table = ScriptTable(__file__, "profiler", "rocm-profiler", lambda script: launch(script))
_platform_dir = _table.platform_dir
_fail = fail
# PEP 562: `from rocm_profiler._cli import rocprof_compute` lands here.
__getattr__ = _table.function


def __dir__() -> "list[str]":
    return _table.names(globals())


def prepend_path(value: "Optional[str]", entries: "Iterable[str]") -> str:
    """`entries` then the parts of the `os.pathsep` list `value`, each once,
    empty parts dropped."""
    out: list[str] = []
    for part in [*entries, *(value or "").split(os.pathsep)]:
        if part and part not in out:
            out.append(part)
    return os.pathsep.join(out)


def tool_environment(environ: "Mapping[str, str]") -> "dict[str, str]":
    """`environ` with the profiler's library and Python paths prepended."""
    profiler = _platform_dir("profiler")
    core = _platform_dir("core")
    env = dict(environ)
    env["LD_LIBRARY_PATH"] = prepend_path(
        environ.get("LD_LIBRARY_PATH"),
        [os.path.join(profiler, "lib"), os.path.join(core, "lib", "rocm_sysdeps", "lib")],
    )
    compute = os.path.join(profiler, "libexec", "rocprofiler-compute")
    if os.path.isdir(compute):
        env["PYTHONPATH"] = prepend_path(environ.get("PYTHONPATH"), [compute])
    return env


def launch(script: "Script") -> None:
    """Runs one profiler console script (a `console_scripts` record)."""
    name = str(script["name"])
    if not sys.platform.startswith("linux") or sys.platform not in script.get(
        "platforms", ("linux",)
    ):
        _fail(f"{name}: the ROCm profiler tools run on Linux only", EXIT_NOT_FOUND)
    tool = os.path.join(_platform_dir("profiler"), *script["relpath"].split("/"))
    if not os.path.isfile(tool):
        _fail(
            f"{name}: this tool is not part of this ROCm installation (no {tool}); "
            f'install it with: pip install "rocm[profiler]"',
            EXIT_NOT_FOUND,
        )
    argv = [tool, *sys.argv[1:]]
    try:
        os.execve(tool, argv, tool_environment(os.environ))
    except OSError as e:
        _fail(f"{name}: cannot run {tool}: {e.strerror or e}", EXIT_NOT_EXECUTABLE)
