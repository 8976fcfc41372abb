"""The Python half of `rocm-sdk test` (crates/rocm-sdk/src/probe.rs).

Run as `python -I -B -c <this file> SITE_PACKAGES` with one JSON request on
stdin; writes one JSON answer on stdout. Standard library only.

Requests:
- {"imports": [module, ...]} -> {"imports": {module: {"file": path|null} | {"error": text}}}
- {"attributes": [[module, name], ...]} -> {"attributes": [null | error text, ...]}
- {"load": [path, ...], "jobs": N, "timeout": seconds}
  -> {"load": [null | {"loader": text} | {"stopped": text}, ...]}: each
  library is loaded with dlopen(RTLD_NOW | RTLD_LOCAL) in its own forked
  child of this process, which has loaded nothing but Python itself, so a
  library's dependencies, constructors and symbol bindings are checked in
  isolation. `loader` is dlopen's own error (dlerror); `stopped` means the
  process ended before dlopen returned (a constructor exited or crashed),
  with the last line the child printed, or its fate.
- {"preload": [shortname, ...], "jobs": N, "timeout": seconds}
  -> {"preload": [{"paths": [path, ...]} | {"error": text}, ...]}: each
  short name goes through the public API in its own forked child, which
  imports `rocm_sdk` itself: `rocm_sdk.find_libraries(name)`, then
  `rocm_sdk.preload_libraries(name)`.
- {"open_by_name": [[directory, name, symbol], ...], "jobs": N, "timeout": seconds}
  -> {"open_by_name": [null | error text, ...]}: each name is opened by
  name (dlopen(RTLD_NOW | RTLD_LOCAL)) in a fresh interpreter whose loader
  searches `directory` first, as a library of that directory with
  `$ORIGIN` in its search path would open it, and `symbol` is looked up
  through the handle (runtime aliases, docs/behaviour.md#runtime-aliases).
- {"bare_names": [[shortname, name, symbol], ...], "jobs": N, "timeout": seconds}
  -> {"bare_names": [null | error text, ...]}: in a fresh interpreter
  (no LD_LIBRARY_PATH), `rocm_sdk.initialize_process(preload_shortnames=
  [shortname])`, then `ctypes.CDLL(name)` by the bare name: `symbol` must
  resolve to the address the preloaded library gives it (one mapped copy),
  and `rocm_sdk.find_library_path(name)` must be the file
  `find_libraries(shortname)` names.
- {"library_directories": true}
  -> {"library_directories": [path, ...] | {"error": text}}:
  `rocm_sdk.library_directories()`.
"""

import importlib
import json
import os
import signal
import sys


def imports(names):
    out = {}
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            out[name] = {"error": f"{type(e).__name__}: {e}"}
        else:
            out[name] = {"file": getattr(module, "__file__", None)}
    return out


def attributes(pairs):
    out = []
    for module_name, name in pairs:
        try:
            value = getattr(importlib.import_module(module_name), name)
            out.append(None if callable(value) else f"{module_name}.{name} is not callable")
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    return out


def _load(path):
    import ctypes

    ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    return None


def _preload(shortname):
    import rocm_sdk

    paths = [str(p) for p in rocm_sdk.find_libraries(shortname)]
    rocm_sdk.preload_libraries(shortname)
    return {"paths": paths}


_OPEN_BY_NAME = (
    "import ctypes, os, sys\n"
    "library = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW | os.RTLD_LOCAL)\n"
    "getattr(library, sys.argv[2])\n"
)


def _open_by_name(item):
    import subprocess

    directory, name, symbol = item
    # The loader reads LD_LIBRARY_PATH once, at start: a new process.
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    env["LD_LIBRARY_PATH"] = directory
    done = subprocess.run(
        [sys.executable, "-I", "-B", "-c", _OPEN_BY_NAME, name, symbol],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
    )
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise RuntimeError(lines[-1] if lines else f"exited with status {done.returncode}")
    return None


_BARE_NAME = (
    "import ctypes, sys\n"
    "site, shortname, name, symbol = sys.argv[1:5]\n"
    "sys.path.insert(0, site)\n"
    "import rocm_sdk\n"
    "rocm_sdk.initialize_process(preload_shortnames=[shortname])\n"
    "try:\n"
    "    library = ctypes.CDLL(name)\n"
    "except OSError as e:\n"
    "    raise SystemExit(f'ctypes.CDLL({name!r}) after initialize_process failed: {e}')\n"
    "address = lambda handle: ctypes.cast(getattr(handle, symbol), ctypes.c_void_p).value\n"
    "if address(library) != address(rocm_sdk._ALL_CDLLS[shortname]):\n"
    "    raise SystemExit(f'ctypes.CDLL({name!r}) reached another copy of the library: '\n"
    "                     f'{symbol} is at another address')\n"
    "path = rocm_sdk.find_library_path(name)\n"
    "expected = rocm_sdk.find_libraries(shortname)[0]\n"
    "if path != expected:\n"
    "    raise SystemExit(f'rocm_sdk.find_library_path({name!r}) is {path}, not {expected}')\n"
)


def _bare_name(item):
    import subprocess

    shortname, name, symbol = item
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    done = subprocess.run(
        [sys.executable, "-I", "-B", "-c", _BARE_NAME, sys.path[0], shortname, name, symbol],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
    )
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise RuntimeError(lines[-1] if lines else f"exited with status {done.returncode}")
    return None


def library_directories():
    try:
        import rocm_sdk

        return [str(p) for p in rocm_sdk.library_directories()]
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}


def _child(work, item, write_end, timeout, output):
    """Runs `work(item)` and writes its JSON result, or the error text, to
    `write_end`; exit status 0 for a result, 1 for an error. What the child
    prints goes to `output` (a constructor's output must not mix with the
    answer, and says why a process it ended stopped)."""
    code = 0
    try:
        os.dup2(output, 1)
        os.dup2(output, 2)
        signal.alarm(timeout)
        message = json.dumps(work(item)).encode("utf-8")
    except BaseException as e:  # noqa: BLE001
        message = f"{type(e).__name__}: {e}" if work is _preload else str(e)
        message = message.encode("utf-8", "replace")[:4000]
        code = 1
    try:
        os.write(write_end, message)
    finally:
        os._exit(code)


def _last_line(output):
    """The last non-empty line a child printed (at most 1000 characters)."""
    os.lseek(output, 0, os.SEEK_SET)
    size = os.fstat(output).st_size
    os.lseek(output, max(0, size - 8192), os.SEEK_SET)
    text = os.read(output, 8192).decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:1000] if lines else ""


def _failure(status, message, timeout, output):
    """`(stopped, text)` of a child that did not end with status 0:
    `stopped` when the process ended before the work returned (it did not
    report an exception), with its fate and the last line it printed."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGALRM:
            return True, f"loading did not finish within {timeout} s"
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = str(number)
        fate = f"the loading process was killed by {name}"
    elif message:
        return False, message
    else:
        fate = f"the loading process exited with status {os.WEXITSTATUS(status)}"
    said = _last_line(output)
    return True, f"{fate}: {said}" if said else fate


def in_children(work, items, jobs, timeout):
    """`work(item)` for each item, each in its own forked child, `jobs` at
    a time: a list of `(True, result)`, `(False, error text)` (the work
    raised) or `(None, text)` (the process stopped before it returned)."""
    import ctypes  # noqa: F401 - imported before forking, so children share it
    import tempfile

    sys.stdout.flush()
    sys.stderr.flush()
    results = [None] * len(items)
    running = {}
    pending = list(enumerate(items))
    pending.reverse()
    while pending or running:
        while pending and len(running) < max(1, jobs):
            index, item = pending.pop()
            read_end, write_end = os.pipe()
            output = tempfile.TemporaryFile()
            pid = os.fork()
            if pid == 0:
                os.close(read_end)
                _child(work, item, write_end, timeout, output.fileno())
            os.close(write_end)
            running[pid] = (index, read_end, output)
        pid, status = os.wait()
        index, read_end, output = running.pop(pid)
        chunks = []
        while True:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(read_end)
        message = b"".join(chunks).decode("utf-8", "replace")
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            results[index] = (True, json.loads(message))
        else:
            stopped, text = _failure(status, message, timeout, output.fileno())
            results[index] = (None if stopped else False, text)
        output.close()
    return results


def load(paths, jobs, timeout):
    out = []
    for ok, value in in_children(_load, paths, jobs, timeout):
        if ok:
            out.append(None)
        elif ok is None:
            out.append({"stopped": value})
        else:
            out.append({"loader": value})
    return out


def preload(shortnames, jobs, timeout):
    return [
        value if ok else {"error": value}
        for ok, value in in_children(_preload, shortnames, jobs, timeout)
    ]


def main():
    sys.path.insert(0, sys.argv[1])
    request = json.load(sys.stdin)
    answer = {}
    if "imports" in request:
        answer["imports"] = imports(request["imports"])
    if "attributes" in request:
        answer["attributes"] = attributes(request["attributes"])
    jobs = request.get("jobs", 1)
    timeout = request.get("timeout", 60)
    if "load" in request:
        answer["load"] = load(request["load"], jobs, timeout)
    if "preload" in request:
        answer["preload"] = preload(request["preload"], jobs, timeout)
    if "open_by_name" in request:
        answer["open_by_name"] = [
            None if ok else value
            for ok, value in in_children(_open_by_name, request["open_by_name"], jobs, timeout)
        ]
    if "bare_names" in request:
        answer["bare_names"] = [
            None if ok else value
            for ok, value in in_children(_bare_name, request["bare_names"], jobs, timeout)
        ]
    if request.get("library_directories"):
        answer["library_directories"] = library_directories()
    # The last line of stdout is the answer (an imported module may print).
    sys.stdout.write("\n" + json.dumps(answer) + "\n")


main()
