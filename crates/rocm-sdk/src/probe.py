"""The Python half of `rocm-sdk test` (crates/rocm-sdk/src/probe.rs).

Run as `python -I -B -c <this file> SITE_PACKAGES` with one JSON request on
stdin; writes one JSON answer on stdout. Standard library only.

Requests:
- {"imports": [module, ...]} -> {"imports": {module: {"file": path|null} | {"error": text}}}
- {"attributes": [[module, name], ...]} -> {"attributes": [null | error text, ...]}
- {"load": [path, ...], "jobs": N, "timeout": seconds}
  -> {"load": [null | error text, ...]}: each library is loaded with
  dlopen(RTLD_NOW | RTLD_LOCAL) in its own forked child of this process,
  which has loaded nothing but Python itself, so a library's dependencies,
  constructors and symbol bindings are checked in isolation.
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


def _child(path, write_end, timeout):
    message = b""
    code = 0
    try:
        os.dup2(2, 1)  # a constructor's output must not mix with the answer
        signal.alarm(timeout)
        import ctypes

        ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except BaseException as e:  # noqa: BLE001
        message = str(e).encode("utf-8", "replace")[:4000]
        code = 1
    try:
        os.write(write_end, message)
    finally:
        os._exit(code)


def _describe(status, message, timeout):
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return None
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGALRM:
            return f"loading did not finish within {timeout} s"
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = str(number)
        return f"the loading process was killed by {name}"
    return message or f"the loading process exited with status {os.WEXITSTATUS(status)}"


def load(paths, jobs, timeout):
    import ctypes  # noqa: F401 - imported before forking, so children share it

    sys.stdout.flush()
    sys.stderr.flush()
    results = [None] * len(paths)
    running = {}
    pending = list(enumerate(paths))
    pending.reverse()
    while pending or running:
        while pending and len(running) < max(1, jobs):
            index, path = pending.pop()
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read_end)
                _child(path, write_end, timeout)
            os.close(write_end)
            running[pid] = (index, read_end)
        pid, status = os.wait()
        index, read_end = running.pop(pid)
        chunks = []
        while True:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(read_end)
        message = b"".join(chunks).decode("utf-8", "replace")
        results[index] = _describe(status, message, timeout)
    return results


def main():
    sys.path.insert(0, sys.argv[1])
    request = json.load(sys.stdin)
    answer = {}
    if "imports" in request:
        answer["imports"] = imports(request["imports"])
    if "attributes" in request:
        answer["attributes"] = attributes(request["attributes"])
    if "load" in request:
        answer["load"] = load(request["load"], request.get("jobs", 1), request.get("timeout", 60))
    # The last line of stdout is the answer (an imported module may print).
    sys.stdout.write("\n" + json.dumps(answer) + "\n")


main()
