"""The `rocm` sdist's in-tree PEP 517 build backend (docs/behaviour.md#selector-backend).

Standard library only and `requires = []`, so `pip install --no-index`
and offline `uv` work: nothing is downloaded at install time. The wheel's
`Requires-Dist` and `Provides-Extra` are computed on the installing
machine from `rocm_sdk/_dist_info.json`:

- target: `ROCM_SDK_TARGET_FAMILY`, else the GPUs this machine reports
  (`rocm_sdk/_detect.py`: the kernel's list, or a non-ROCm `offload-arch`;
  never our own console scripts, so no devel unpack), else the default;
  an unavailable request fails with the list of available targets;
- requirements and extras: `rocm_sdk/_selector.py`, the same file the
  installed `rocm_sdk` uses, loaded here by path (so there is one copy).

Layout of the sdist this file lives in (`backend-path = ["build_backend"]`):

    rocm-V/PKG-INFO                          written by therock-package
    rocm-V/pyproject.toml                    python/pyproject.toml
    rocm-V/build_backend/rocm_sdk_build_backend.py
    rocm-V/rocm_sdk/*.py, rocm_sdk/_dist_info.json

The wheel is `rocm-V-py3-none-{platform}.whl` (`linux_x86_64`,
`win_amd64`: the choice depends on the machine, so an installer's cache
never hands it to another platform): `rocm_sdk/` plus
`rocm_sdk/_selection.json` (the target chosen and every input the choice
read: read by `rocm_sdk._dist_info.determine_target_family`, and compared
with the installing machine by `rocm_sdk/_selection_record.py`, since
installers cache this wheel by the sdist alone), and a `.dist-info` with
METADATA 2.4 (the static fields of PKG-INFO plus the computed ones),
WHEEL, entry_points.txt (`rocm-sdk`) and RECORD (sha256).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import io
import json
import os
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

#: The `config_settings` of PEP 517 hooks (this backend reads none).
ConfigSettings = Optional[dict[str, Any]]

__all__ = [
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_wheel",
]

#: The root of the unpacked sdist (the parent of `build_backend/`).
SOURCE_ROOT = Path(os.path.abspath(__file__)).parent.parent

DIST_NAME = "rocm"
PURE_PACKAGE = "rocm_sdk"
DOCUMENT_NAME = "_dist_info.json"
SELECTION_NAME = "_selection.json"
#: The selection as chosen by `prepare_metadata_for_build_wheel`, kept in
#: the metadata directory so `build_wheel` writes the same answer.
METADATA_SELECTION_NAME = "rocm_sdk_selection.json"
CONSOLE_SCRIPTS = (("rocm-sdk", "rocm_sdk.__main__:main"),)
GENERATOR = "rocm-sdk-build-backend"
#: PKG-INFO headers this backend computes (and the sdist marks `Dynamic`).
COMPUTED_FIELDS = ("requires-dist", "provides-extra")
#: The oldest time a zip entry can carry.
ZIP_EPOCH = 315532800


#: The latest time a zip entry can carry: 2107-12-31 23:59:58 UTC.
ZIP_LATEST = 4354819198


class BuildError(SystemExit):
    """The sdist cannot produce a wheel on this machine; the message says why.

    A `SystemExit`: raised out of a hook, the frontend's hook runner exits
    with this one line as its error output, never with a traceback (pip
    and uv show a hook's output as it is)."""

    def __str__(self) -> str:
        return str(self.code)


def _one_line_errors(hook: Any) -> Any:
    """`hook`, with a failure the environment causes (an unreadable file, a
    full disk) turned into one line naming the file, like every
    `BuildError`."""

    @functools.wraps(hook)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return hook(*args, **kwargs)
        except OSError as e:
            where = f"{e.filename}: " if e.filename else ""
            raise BuildError(f"{where}{e.strerror or e}") from None

    return run


def _source_date_epoch() -> int | None:
    """`SOURCE_DATE_EPOCH` as `therock-package` reads it: unset or blank
    means unset; otherwise a whole number of seconds, or a one-line error."""
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value is None or not value.strip():
        return None
    digits = value.strip()
    if not (digits.isascii() and digits.isdigit()):
        raise BuildError(f"SOURCE_DATE_EPOCH={value} is not a number of seconds")
    return int(digits)


def _member_mtime() -> int:
    """Every member's time: `SOURCE_DATE_EPOCH`, never before the zip epoch
    (`pypa_formats::epoch::member_mtime` in therock-package)."""
    epoch = _source_date_epoch()
    return ZIP_EPOCH if epoch is None else max(epoch, ZIP_EPOCH)


def _load_sibling(name: str) -> ModuleType:
    """`rocm_sdk/{name}.py` of this sdist, imported under a private name so
    an installed `rocm_sdk` can neither shadow nor be shadowed by it."""
    path = SOURCE_ROOT / PURE_PACKAGE / f"{name}.py"
    module_name = f"_rocm_sdk_build_backend_{name.lstrip('_')}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise BuildError(f"{path} is missing; the `rocm` sdist is incomplete, download it again")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _document() -> dict[str, Any]:
    path = SOURCE_ROOT / PURE_PACKAGE / DOCUMENT_NAME
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BuildError(f"cannot read {path}: {e}; the `rocm` sdist is incomplete") from e
    if not isinstance(doc, dict) or doc.get("schema") != 1:
        raise BuildError(
            f"{path} has schema {doc.get('schema') if isinstance(doc, dict) else None}; "
            f"this backend reads schema 1"
        )
    return doc


def _select(doc: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The selector and the selection record (`rocm_sdk/_selection_record.py`):
    the chosen target (None when the release offers none), its source, and
    every input the choice read."""
    selector_mod = _load_sibling("_selector")
    record_mod = _load_sibling("_selection_record")
    selector = selector_mod.Selector.from_document(doc)
    requested = os.environ.get(selector_mod.TARGET_ENV)
    detected = None
    if not (requested and requested.strip()) and selector.available_targets:
        detect_mod = _load_sibling("_detect")
        detected = detect_mod.detect_gpu_archs(
            path_value=os.environ.get("PATH"), windows=sys.platform == "win32"
        )
    try:
        selection = selector.select_target(requested, detected)
    except selector_mod.TargetNotAvailableError as e:
        raise BuildError(str(e)) from None
    if selection is not None:
        sys.stderr.write(f"rocm: target {selection.target} ({selection.source})\n")
    record = record_mod.make_record(
        target=selection.target if selection else None,
        source=selection.source if selection else None,
        requested=requested,
        gpu_output=detected,
        available_targets=selector.available_targets,
        default_target=selector.default_target,
        sys_platform=sys.platform,
        machine_name=record_mod.machine(),
    )
    return selector, record


def _metadata_for(selector: Any, record: dict[str, Any]) -> Any:
    selector_mod = _load_sibling("_selector")
    selection = (
        selector_mod.Selection(record["target"], record["source"])
        if record.get("target") is not None
        else None
    )
    return selector.metadata(selection)


def _split_pkg_info(text: str) -> tuple[list[tuple[str, str]], str]:
    """Headers (continuation lines folded in) and body of a core-metadata file."""
    headers: list[tuple[str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) and lines[i]:
        line = lines[i]
        if line[0] in " \t" and headers:
            name, value = headers[-1]
            headers[-1] = (name, f"{value}\n{line}")
        else:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        i += 1
    body = "\n".join(lines[i + 1 :])
    return headers, body


def _own_version(doc: dict[str, Any]) -> str:
    """The selector's own version: `selector_version` for a post-release of
    the selector (its requirements keep pinning `version`), else `version`."""
    return str(doc.get("selector_version") or doc["version"])


def _static_headers(version: str) -> tuple[list[tuple[str, str]], str]:
    """The sdist's static PKG-INFO fields (PEP 643: the wheel keeps them),
    or Name and Version alone when building from a source tree."""
    path = SOURCE_ROOT / "PKG-INFO"
    if not path.is_file():
        return [("Name", DIST_NAME), ("Version", version)], ""
    headers, body = _split_pkg_info(path.read_text(encoding="utf-8"))
    fields = {n.lower(): v for n, v in headers}
    if fields.get("version") != version:
        raise BuildError(
            f"{path} says version {fields.get('version')} but {DOCUMENT_NAME} says {version}; "
            f"the `rocm` sdist is inconsistent, rebuild it"
        )
    kept = [
        (n, v)
        for n, v in headers
        if n.lower() not in ("metadata-version", "dynamic", *COMPUTED_FIELDS)
    ]
    return kept, body


def _metadata_text(doc: dict[str, Any], metadata: Any) -> str:
    headers, body = _static_headers(_own_version(doc))
    out = ["Metadata-Version: 2.4"]
    out += [f"{n}: {v}" for n, v in headers]
    out += [f"Requires-Dist: {r}" for r in metadata.requires_dist]
    out += [f"Provides-Extra: {e}" for e in metadata.provides_extra]
    text = "\n".join(out) + "\n"
    if body:
        text += "\n" + body + ("\n" if not body.endswith("\n") else "")
    return text


def _platform_tag() -> str:
    """This machine's generic platform tag (`linux_x86_64`, `win_amd64`),
    the one every installer accepts for it: the wheel is pure Python, but
    what it selected holds for this platform only."""
    import sysconfig

    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _wheel_tag() -> str:
    return f"py3-none-{_platform_tag()}"


def _wheel_text() -> str:
    return (
        "Wheel-Version: 1.0\n"
        f"Generator: {GENERATOR}\n"
        "Root-Is-Purelib: true\n"
        f"Tag: {_wheel_tag()}\n"
    )


def _entry_points_text() -> str:
    lines = ["[console_scripts]", *(f"{n} = {t}" for n, t in CONSOLE_SCRIPTS)]
    return "\n".join(lines) + "\n"


def _json_bytes(value: object) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def _dist_info_name(version: str) -> str:
    return f"{DIST_NAME}-{version}.dist-info"


def _metadata_files(doc: dict[str, Any]) -> dict[str, bytes]:
    """The `.dist-info` files (RECORD aside) for an install on this machine."""
    selector, record = _select(doc)
    metadata = _metadata_for(selector, record)
    return {
        "METADATA": _metadata_text(doc, metadata).encode(),
        "WHEEL": _wheel_text().encode(),
        "entry_points.txt": _entry_points_text().encode(),
        METADATA_SELECTION_NAME: _json_bytes(record),
    }


@_one_line_errors
def get_requires_for_build_wheel(config_settings: ConfigSettings = None) -> list[str]:
    """PEP 517: nothing beyond the standard library."""
    return []


@_one_line_errors
def get_requires_for_build_sdist(config_settings: ConfigSettings = None) -> list[str]:
    """PEP 517: nothing beyond the standard library."""
    return []


@_one_line_errors
def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: ConfigSettings = None
) -> str:
    """PEP 517: writes `rocm-V.dist-info/` (target chosen now) and returns its name."""
    doc = _document()
    name = _dist_info_name(_own_version(doc))
    target = Path(metadata_directory) / name
    target.mkdir(parents=True, exist_ok=True)
    for file_name, data in _metadata_files(doc).items():
        (target / file_name).write_bytes(data)
    return name


def _source_files() -> list[tuple[str, bytes]]:
    """`rocm_sdk/**` of the sdist, sorted, without bytecode caches."""
    root = SOURCE_ROOT / PURE_PACKAGE
    files = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(SOURCE_ROOT).as_posix()
        if "__pycache__" in path.parts or path.suffix == ".pyc" or not path.is_file():
            continue
        if path.name == SELECTION_NAME:
            continue  # written per install below
        files.append((rel, path.read_bytes()))
    return files


def _zip_date_time() -> tuple[int, int, int, int, int, int]:
    """The member time as a zip header holds it: clamped to 1980–2107."""
    date_time = time.gmtime(min(_member_mtime(), ZIP_LATEST))[:6]
    return (date_time[0], date_time[1], date_time[2], date_time[3], date_time[4], date_time[5])


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@_one_line_errors
def build_wheel(
    wheel_directory: str,
    config_settings: ConfigSettings = None,
    metadata_directory: str | None = None,
) -> str:
    """PEP 517: writes `rocm-V-py3-none-{platform}.whl` and returns its file name.

    With `metadata_directory` (from `prepare_metadata_for_build_wheel`), its
    files and its target are reused, so the wheel matches what the frontend
    already resolved.
    """
    doc = _document()
    version = _own_version(doc)
    dist_info = _dist_info_name(version)
    if metadata_directory is not None:
        meta_dir = Path(metadata_directory)
        if meta_dir.name != dist_info:
            meta_dir = meta_dir / dist_info
        meta_files = {
            p.name: p.read_bytes()
            for p in sorted(meta_dir.iterdir())
            if p.is_file() and p.name != "RECORD"
        }
    else:
        meta_files = _metadata_files(doc)
    record = json.loads(meta_files.get(METADATA_SELECTION_NAME, b"null"))
    entries = _source_files()
    entries.append((f"{PURE_PACKAGE}/{SELECTION_NAME}", _json_bytes(record)))
    entries.sort()
    entries += [(f"{dist_info}/{n}", data) for n, data in sorted(meta_files.items())]

    file_name = f"{DIST_NAME}-{version.replace('-', '_')}-{_wheel_tag()}.whl"
    out_dir = Path(wheel_directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / file_name
    partial = out_dir / f".{file_name}.partial"
    date_time = _zip_date_time()
    record_lines = []
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=date_time)
            info.external_attr = 0o100644 << 16  # regular file, rw-r--r--
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
            record_lines.append(f"{arcname},{_record_hash(data)},{len(data)}")
        record_name = f"{dist_info}/RECORD"
        record_lines.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time=date_time)
        info.external_attr = 0o100644 << 16  # regular file, rw-r--r--
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, "\n".join(record_lines) + "\n")
    os.replace(partial, final)
    return file_name


def _pkg_info_for_source_tree(version: str) -> str:
    """A PKG-INFO for an sdist made from a source tree that has none; the
    pipeline normally writes it (and this text is what it should contain)."""
    return (
        "Metadata-Version: 2.4\n"
        f"Name: {DIST_NAME}\n"
        f"Version: {version}\n"
        "Summary: ROCm SDK: selects the packages this machine needs at install time\n"
        "Requires-Python: >=3.9\n"
        "Dynamic: Requires-Dist\n"
        "Dynamic: Provides-Extra\n"
    )


@_one_line_errors
def build_sdist(sdist_directory: str, config_settings: ConfigSettings = None) -> str:
    """PEP 517: re-packs this source tree as `rocm-V.tar.gz`, reproducibly
    (sorted members, fixed times, uid/gid 0)."""
    doc = _document()
    version = _own_version(doc)
    base = f"{DIST_NAME}-{version}"
    mtime = _member_mtime()
    members: list[tuple[str, bytes]] = []
    pkg_info = SOURCE_ROOT / "PKG-INFO"
    members.append(
        (
            "PKG-INFO",
            pkg_info.read_bytes()
            if pkg_info.is_file()
            else _pkg_info_for_source_tree(version).encode(),
        )
    )
    members.append(("pyproject.toml", (SOURCE_ROOT / "pyproject.toml").read_bytes()))
    for directory in ("build_backend", PURE_PACKAGE):
        for path in sorted((SOURCE_ROOT / directory).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                if path.name == SELECTION_NAME:
                    continue
                members.append((path.relative_to(SOURCE_ROOT).as_posix(), path.read_bytes()))
    members.sort()
    file_name = f"{base}.tar.gz"
    out_dir = Path(sdist_directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = out_dir / f".{file_name}.partial"
    import gzip

    with open(partial, "wb") as raw:
        # No time in the gzip header (as therock-package writes it): its
        # field cannot hold a time after 2106.
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for rel, data in members:
                    info = tarfile.TarInfo(f"{base}/{rel}")
                    info.size = len(data)
                    info.mtime = mtime
                    info.mode = 0o644
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    tar.addfile(info, io.BytesIO(data))
    os.replace(partial, out_dir / file_name)
    return file_name
