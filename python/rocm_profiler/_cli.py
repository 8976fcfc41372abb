"""Console-script trampolines of `rocm-profiler` (SPEC §11; Linux only).

pip writes each script as `from rocm_profiler._cli import FUNCTION`; the
functions are resolved (PEP 562 `__getattr__`) from the `console_scripts`
records with `"package": "profiler"` in the `_dist_info.json` beside this
file. Each runs `SP/_rocm_profiler{nonce}/{relpath}` with
`_rocm_profiler/lib` and core's `lib/rocm_sysdeps/lib` prepended to
`LD_LIBRARY_PATH` and, when it exists, `_rocm_profiler/libexec/rocprofiler-compute`
prepended to `PYTHONPATH`. A tool absent from the tree: one line, exit 127.
"""

import json
import os
import sys

EXIT_NOT_FOUND = 127
EXIT_NOT_EXECUTABLE = 126

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SITE = os.path.dirname(_PACKAGE_DIR)
_document = None


def _doc():
    global _document
    if _document is None:
        path = os.path.join(_PACKAGE_DIR, "_dist_info.json")
        try:
            with open(path, encoding="utf-8") as f:
                _document = json.load(f)
        except (OSError, ValueError) as e:
            _fail(f"cannot read {path} ({e}); reinstall rocm-profiler", 1)
    return _document


def _scripts():
    return {
        s["function"]: s for s in _doc().get("console_scripts", ()) if s["package"] == "profiler"
    }


def __getattr__(name):
    # PEP 562: `from rocm_profiler._cli import rocprof_compute` lands here.
    if name.startswith("__"):
        raise AttributeError(name)
    script = _scripts().get(name)
    if script is None:
        raise AttributeError(f"module {__name__!r} has no console script function {name!r}")

    def run():
        return launch(script)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"Runs `{script['name']}` ({script['relpath']})."
    return run


def __dir__():
    return sorted([*globals(), *_scripts()])


def _fail(message, status):
    sys.stderr.write(f"{message}\n")
    sys.exit(status)


def _platform_dir(logical):
    for record in _doc()["packages"]:
        if record["logical"] == logical and record.get("platform_package_template"):
            return os.path.join(_SITE, record["platform_package_template"])
    _fail(f"{os.path.join(_PACKAGE_DIR, '_dist_info.json')} names no `{logical}` package", 1)
    return None  # not reached


def prepend_path(value, entries):
    """`entries` then the parts of the `os.pathsep` list `value`, each once,
    empty parts dropped."""
    out = []
    for part in [*entries, *(value or "").split(os.pathsep)]:
        if part and part not in out:
            out.append(part)
    return os.pathsep.join(out)


def tool_environment(environ):
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


def launch(script):
    """Runs one profiler console script (a `console_scripts` record)."""
    name = script["name"]
    if not sys.platform.startswith("linux") or sys.platform not in script.get(
        "platforms", ("linux",)
    ):
        _fail(f"{name}: the ROCm profiler tools run on Linux only", EXIT_NOT_FOUND)
    tool = os.path.join(_platform_dir("profiler"), *script["relpath"].split("/"))
    if not os.path.isfile(tool):
        _fail(
            f"{name}: this tool is not part of this ROCm installation (no {tool}); "
            f"install it with: pip install \"rocm[profiler]\"",
            EXIT_NOT_FOUND,
        )
    argv = [tool, *sys.argv[1:]]
    try:
        os.execve(tool, argv, tool_environment(os.environ))
    except OSError as e:
        _fail(f"{name}: cannot run {tool}: {e.strerror or e}", EXIT_NOT_EXECUTABLE)
