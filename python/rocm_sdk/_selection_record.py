"""What the `rocm` wheel selected and from what, and whether this machine
still agrees (docs/python.md, "Stale selections").

The sdist's build backend decides the GPU target on the machine that
builds the wheel, but pip and uv cache that wheel by the sdist alone: a
second environment (another venv, another node sharing a home directory)
can install a wheel whose target was chosen for somewhere else. So the
backend records its inputs in `rocm_sdk/_selection.json` (docs/formats.md)
and three places compare them with this machine:

- `import rocm_sdk`, once per process and cheaply: the environment
  variable, the platform, and the kernel's GPU list (a few file reads in
  `/sys`; never a subprocess);
- the devel tools' launch (`rocm_sdk_core._cli`): the same, plus a
  non-ROCm `offload-arch` when it unpacks devel;
- `rocm-sdk test`, a WARN check: everything, `offload-arch` included.

A mismatch is one warning naming what differs and the reinstall command.
Only `os`, `sys` and `json` are imported up front; the backend and
`rocm_sdk_core._cli` load this file by path, so it has no package imports.
"""

from __future__ import annotations

import json
import os
import sys

# Names for the type checker only (nothing more is imported at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

__all__ = [
    "FILE_NAME",
    "StaleSelectionWarning",
    "check",
    "machine",
    "make_record",
    "mismatches",
    "read_record",
    "stale_message",
    "warn_if_stale",
]

#: The record's file name inside `rocm_sdk/`.
FILE_NAME = "_selection.json"

#: The record layout this code writes and reads.
SCHEMA = 1

#: The environment override the backend reads (`_selector.TARGET_ENV`).
TARGET_ENV = "ROCM_SDK_TARGET_FAMILY"


class StaleSelectionWarning(UserWarning):
    """The installed `rocm` wheel was built for another machine or environment."""


def machine() -> str:
    """This machine's architecture as `platform.machine()` spells it
    (`x86_64`, `aarch64`, `AMD64`), without importing `platform` on POSIX."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform

    return platform.machine()


def _gpu_lines(output: str | None) -> list[str] | None:
    if output is None:
        return None
    return [line.strip() for line in output.splitlines() if line.strip()]


def make_record(
    *,
    target: str | None,
    source: str | None,
    requested: str | None,
    gpu_output: str | None,
    available_targets: list[str],
    default_target: str | None,
    sys_platform: str,
    machine_name: str,
) -> dict[str, Any]:
    """The record the backend writes. `gpu_output` is the detection text it
    read (`None`: detection did not run), `requested` the raw value of
    `ROCM_SDK_TARGET_FAMILY` (`None`: unset)."""
    return {
        "schema": SCHEMA,
        "target": target,
        "source": source,
        "requested": requested,
        "gpu_archs": _gpu_lines(gpu_output),
        "available_targets": list(available_targets),
        "default_target": default_target,
        "sys_platform": sys_platform,
        "machine": machine_name,
    }


def read_record(package_dir: str) -> dict[str, Any] | None:
    """The record in `package_dir`, or None when it is missing, unreadable
    or from before records held their inputs (nothing to compare then)."""
    try:
        with open(os.path.join(package_dir, FILE_NAME), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        return None
    fields = ("target", "source", "requested", "sys_platform", "machine", "default_target")
    texts = [record.get(k) for k in fields]
    if not all(t is None or isinstance(t, str) for t in texts) or not all(
        isinstance(record.get(k), str) for k in ("sys_platform", "machine")
    ):
        return None
    lists = (record.get("available_targets"), record.get("gpu_archs"))
    if not isinstance(lists[0], list) or not (lists[1] is None or isinstance(lists[1], list)):
        return None
    return record


def _sibling(name: str) -> ModuleType:
    """`rocm_sdk/{name}.py`, without importing the `rocm_sdk` package when
    this file was loaded by path (the backend, `rocm_sdk_core._cli`)."""
    if __package__:
        import importlib

        return importlib.import_module(f"{__package__}.{name}")
    module_name = f"_rocm_sdk_selection_record_{name.lstrip('_')}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _select(record: dict[str, Any], requested: str | None, gpu_lines: list[str] | None) -> Any:
    """The target the backend would choose now, or None when it cannot say
    (an unavailable request fails at install time, not here)."""
    selector = _sibling("_selector")
    output = None if gpu_lines is None else "".join(f"{a}\n" for a in gpu_lines)
    try:
        selection = selector.select_target(
            record.get("available_targets") or [],
            record.get("default_target"),
            requested,
            output,
        )
    except ValueError:
        return None
    return selection


def _describe(
    target: str | None, source: str | None, requested: str | None, gpus: list[str] | None
) -> str:
    if source == "environment":
        return f"{target} (from {TARGET_ENV}={requested})"
    if source == "detected":
        return f"{target} (detected GPU {', '.join(gpus or [])})"
    if source == "default":
        return f"{target} (the default: no GPU was found)"
    return str(target)


def mismatches(
    record: dict[str, Any],
    *,
    requested: str | None,
    sys_platform: str,
    machine_name: str,
    gpu_output: str | None,
) -> list[str]:
    """What differs between the record and this machine, as phrases; empty
    when it still agrees or cannot tell.

    `gpu_output` is this machine's detection text (None: not looked at or
    nothing found). Inputs equal to the recorded ones are not re-evaluated;
    different ones count only when they change the target. A target chosen
    through the environment variable is compared with GPUs only while the
    variable is set: unset, it was an explicit choice for this install.
    """
    out = []
    was = (record.get("sys_platform"), record.get("machine"))
    if was != (sys_platform, machine_name):
        out.append(f"it was built on {was[0]}/{was[1]} but this is {sys_platform}/{machine_name}")
    target = record.get("target")
    source = record.get("source")
    if target is None:
        return out
    recorded_request = (record.get("requested") or "").strip() or None
    now_request = (requested or "").strip() or None
    recorded_gpus = record.get("gpu_archs")
    now_gpus = _gpu_lines(gpu_output)
    if now_request is not None:
        if now_request == recorded_request:
            return out
        now = _select(record, now_request, None)
    elif source in ("detected", "default") and now_gpus:
        if now_gpus == recorded_gpus:
            return out
        now = _select(record, None, now_gpus)
    else:
        return out
    if now is not None and now.target != target:
        out.append(
            f"it selected {_describe(target, source, record.get('requested'), recorded_gpus)} "
            f"but this machine selects {_describe(now.target, now.source, now_request, now_gpus)}"
        )
    return out


def _installed_extras(site: str) -> list[str]:
    """The `rocm[...]` extras whose packages are installed beside us."""
    try:
        names = os.listdir(site)
    except OSError:
        return []
    extras = []
    for prefix, extra in (
        ("rocm_sdk_libraries", "libraries"),
        ("rocm_sdk_devel", "devel"),
        ("rocm_profiler", "profiler"),
        ("rocm_sdk_device_", "device"),
    ):
        if any(n.startswith(prefix) and n.endswith(".dist-info") for n in names):
            extras.append(extra)
    return extras


def stale_message(reasons: list[str], *, site: str, version: str | None) -> str:
    """The one warning: what differs, then how to reinstall without the cache."""
    extras = _installed_extras(site)
    spec = (
        "rocm" + (f"[{','.join(extras)}]" if extras else "") + (f"=={version}" if version else "")
    )
    return (
        f"the installed `rocm` package was selected for another machine or environment: "
        f"{'; '.join(reasons)}. The installer probably reused a wheel it had cached; "
        f'reinstall it without the cache: pip install --no-cache-dir --force-reinstall "{spec}" '
        f'(uv: uv pip install --reinstall --no-cache "{spec}")'
    )


def check(package_dir: str, *, full: bool) -> str | None:
    """The stale-selection warning for the `rocm_sdk` in `package_dir`, or
    None. `full` also runs a non-ROCm `offload-arch` when the kernel lists
    no GPU (a subprocess: not for `import rocm_sdk`)."""
    record = read_record(package_dir)
    if record is None:
        return None
    requested = os.environ.get(TARGET_ENV)
    gpu_output = None
    # The GPUs matter only when no request decides and detection did before.
    if not (requested or "").strip() and record.get("source") in ("detected", "default"):
        detect = _sibling("_detect")
        windows = sys.platform == "win32"
        archs = [] if windows else detect.kfd_gpu_archs()
        if archs:
            gpu_output = "".join(f"{a}\n" for a in archs)
        elif full:
            gpu_output = detect.detect_gpu_archs(path_value=os.environ.get("PATH"), windows=windows)
    reasons = mismatches(
        record,
        requested=requested,
        sys_platform=sys.platform,
        machine_name=machine(),
        gpu_output=gpu_output,
    )
    if not reasons:
        return None
    return stale_message(reasons, site=os.path.dirname(package_dir), version=_version(package_dir))


def _version(package_dir: str) -> str | None:
    """The `rocm` package's own version (a post-release's `X.postN`)."""
    try:
        with open(os.path.join(package_dir, "_dist_info.json"), encoding="utf-8") as f:
            doc = json.load(f)
        version = doc.get("selector_version") or doc.get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None


#: Whether this process already compared (`importlib.reload(rocm_sdk)`
#: runs the package's code again, not this module's).
_checked = False


def warn_if_stale(package_dir: str | None = None) -> None:
    """The `import rocm_sdk` hook: one `StaleSelectionWarning` per process
    on a mismatch. Never raises: a broken record must not break the import."""
    global _checked
    if _checked:
        return
    _checked = True
    try:
        message = check(package_dir or os.path.dirname(os.path.abspath(__file__)), full=False)
    except Exception:  # noqa: BLE001 - the import must succeed regardless
        return
    if message is not None:
        import warnings

        warnings.warn(f"rocm_sdk: {message}", StaleSelectionWarning, stacklevel=3)
