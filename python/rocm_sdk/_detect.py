"""GPU detection for target selection (docs/behaviour.md#detection), without unpacking devel.

The reference ran `offload-arch`, which in an environment with
`rocm[devel]` is our own console script: detecting a GPU then unpacked the
whole devel tree. Ours reads the kernel's view first and only falls back to
an `offload-arch` found on `PATH` that is not one of our trampolines:

1. Linux: `/sys/class/kfd/kfd/topology/nodes/*/properties`, the
   `gfx_target_version` line of each GPU node (CPU nodes report 0), in node
   order. No process is started and nothing from ROCm needs to be installed.
2. Elsewhere, or when the kernel reports no GPU: the first `offload-arch`
   on the caller's `PATH` whose file does not mention `rocm_sdk_core._cli`
   (pip writes that module name into our console scripts, as text on Linux
   and inside the `.exe` launcher on Windows), run with a timeout.

Both produce `offload-arch`-style text: one arch per line.

Nothing here may fail on the machine it probes (it runs inside every
`pip install rocm`): a `PATH` directory this user cannot search, a file
that cannot be read, a program that cannot start, hangs, or floods its
output all mean "no answer from there". A candidate is read only when it
is a regular file, at most `_SNIFF_LIMIT` bytes of it; of a program's
output at most `OUTPUT_LIMIT` bytes are kept, and a program that writes
more is killed (with everything it started).

Only `os` is imported up front: `import rocm_sdk` and every devel tool's
launch read the kernel's list (`_selection_record.py`), and neither may
pay for `subprocess`, `logging` or `pathlib` there.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Sequence
    from pathlib import Path

__all__ = [
    "KFD_TOPOLOGY_NODES",
    "OUTPUT_LIMIT",
    "arch_from_gfx_target_version",
    "detect_gpu_archs",
    "find_foreign_offload_arch",
    "kfd_gpu_archs",
    "run_offload_arch",
]

#: Where the amdgpu kernel driver describes each agent.
KFD_TOPOLOGY_NODES = "/sys/class/kfd/kfd/topology/nodes"

#: Bytes of a candidate `offload-arch` read to recognise our trampolines
#: (pip's Windows launcher carries the script at the end of a small `.exe`).
_SNIFF_LIMIT = 4 * 1024 * 1024

#: The most output of an `offload-arch` kept: one arch per line, a few
#: lines per machine. A program that writes more is killed.
OUTPUT_LIMIT = 64 * 1024

#: The most bytes of a kernel topology node's `properties` read.
_PROPERTIES_LIMIT = 64 * 1024

#: The marker pip writes into our console scripts.
_OUR_SCRIPT_MARKER = b"rocm_sdk_core._cli"


def arch_from_gfx_target_version(value: int) -> str | None:
    """`gfx_target_version` (major·10000 + minor·100 + stepping) as an arch.

    Minor and stepping are hexadecimal digits in the arch name:
    90402 → `gfx942`, 90010 → `gfx90a`, 110501 → `gfx1151`; 0 (a CPU) → None.
    """
    if value <= 0:
        return None
    major, minor, stepping = value // 10000, (value // 100) % 100, value % 100
    if minor > 15 or stepping > 15:
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


def _debug(message: str, *args: object) -> None:
    import logging

    logging.getLogger(__name__).debug(message, *args)


def kfd_gpu_archs(nodes_dir: str | os.PathLike[str] = KFD_TOPOLOGY_NODES) -> list[str]:
    """The archs of the GPU nodes under `nodes_dir`, in node order, each once."""
    try:
        nodes = [n for n in os.listdir(nodes_dir) if n.isdigit()]
    except OSError:
        return []
    archs: list[str] = []
    for node in sorted(nodes, key=int):
        try:
            with open(os.path.join(nodes_dir, node, "properties"), encoding="utf-8") as f:
                text = f.read(_PROPERTIES_LIMIT)
        except (OSError, ValueError):
            continue
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "gfx_target_version":
                try:
                    arch = arch_from_gfx_target_version(int(value.strip()))
                except ValueError:
                    arch = None
                if arch and arch not in archs:
                    archs.append(arch)
                break
    return archs


def _is_our_trampoline(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(_SNIFF_LIMIT)
    except (OSError, ValueError):
        return True  # unreadable: do not run it
    return _OUR_SCRIPT_MARKER in head


def _is_executable_file(path: Path) -> bool:
    """A regular file this user may execute; False for anything that
    cannot be looked at (a directory on `PATH` this user cannot search)."""
    import stat

    try:
        mode = os.stat(path).st_mode
        return stat.S_ISREG(mode) and os.access(path, os.X_OK)
    except (OSError, ValueError):
        return False


def find_foreign_offload_arch(path_value: str | None, *, windows: bool = False) -> Path | None:
    """The first `offload-arch` on `path_value` (a `PATH` string) that is a
    real program rather than one of our console scripts."""
    if not path_value:
        return None
    from pathlib import Path

    name = "offload-arch.exe" if windows else "offload-arch"
    for entry in path_value.split(os.pathsep):
        if not entry:
            continue
        candidate = Path(entry) / name
        if not _is_executable_file(candidate):
            continue
        if _is_our_trampoline(candidate):
            _debug("skipping %s: it is a rocm-sdk-core console script", candidate)
            continue
        return candidate
    return None


def run_offload_arch(program: Path, timeout: float = 10.0) -> str | None:
    """`program`'s standard output, or None when it fails, times out, or
    writes more than `OUTPUT_LIMIT` bytes (it is then killed)."""
    import subprocess
    import threading
    import time

    posix = os.name == "posix"
    try:
        child = subprocess.Popen(
            [str(program)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            # Its own process group, so a kill reaches what it started too.
            start_new_session=posix,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        _debug("%s did not run: %s", program, e)
        return None
    deadline = time.monotonic() + timeout
    read: list[bytes] = []

    def read_output() -> None:
        try:
            assert child.stdout is not None
            read.append(child.stdout.read(OUTPUT_LIMIT + 1))
        except (OSError, ValueError):
            pass

    reader = threading.Thread(target=read_output, daemon=True)
    reader.start()
    reader.join(timeout)
    output = read[0] if read else None
    problem = None
    if reader.is_alive():
        problem = f"gave no answer within {timeout:g} s"
    elif output is None:
        problem = "could not be read"
    elif len(output) > OUTPUT_LIMIT:
        problem = f"wrote more than {OUTPUT_LIMIT} bytes"
    if problem is None:
        try:
            status = child.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            problem = f"did not exit within {timeout:g} s"
    if problem is not None:
        _debug("%s %s; it was stopped", program, problem)
        _kill(child, posix)
        reader.join(2)
        _close(child)
        return None
    _close(child)
    if status != 0 or output is None:
        _debug("%s exited with %s", program, status)
        return None
    return output.decode("utf-8", "replace")


def _kill(child: subprocess.Popen[bytes], posix: bool) -> None:
    """Kills `child` (a `subprocess.Popen`) and its process group."""
    import signal

    try:
        if posix:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.kill()
    except OSError:
        pass


def _close(child: subprocess.Popen[bytes]) -> None:
    """Closes `child`'s output and reaps it."""
    try:
        if child.stdout is not None:
            child.stdout.close()
        child.wait(5)
    except Exception:  # noqa: BLE001 - a child that will not go away is left to the OS
        pass


def detect_gpu_archs(
    *,
    path_value: str | None,
    windows: bool,
    nodes_dir: str | os.PathLike[str] = KFD_TOPOLOGY_NODES,
) -> str | None:
    """`offload-arch`-style text for this machine's GPUs, or None when none
    can be found. Never runs one of our console scripts."""
    archs: Sequence[str] = [] if windows else kfd_gpu_archs(nodes_dir)
    if archs:
        _debug("the amdgpu driver reports %s", ", ".join(archs))
        return "".join(f"{a}\n" for a in archs)
    program = find_foreign_offload_arch(path_value, windows=windows)
    if program is None:
        _debug("no GPU in %s and no offload-arch on PATH", nodes_dir)
        return None
    return run_offload_arch(program)
