"""Distribution information: the facade old code imports.

`rocm_sdk._dist_info` was a generated module in the reference; code such as
PyTorch's build reads `ALL_PACKAGES[...]`, `.get_py_package_name(target)`,
`.has_py_package(target)`, `ALL_LIBRARIES`, `determine_target_family()` and
`__version__` from it. Here every value comes from the `_dist_info.json`
shipped next to this file; nothing is pasted into Python source.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from . import _detect, _selector
from ._document import FILE_NAME, DistInfoError, load_document

__all__ = [
    "ALL_LIBRARIES",
    "ALL_PACKAGES",
    "AVAILABLE_TARGET_FAMILIES",
    "DEFAULT_TARGET_FAMILY",
    "DOCUMENT",
    "MODE",
    "PY_PACKAGE_SUFFIX_NONCE",
    "SELECTION_FILE_NAME",
    "SITE_PACKAGES",
    "DistInfoError",
    "LibraryEntry",
    "PackageEntry",
    "__version__",
    "determine_target_family",
    "discover_current_target_family",
]

#: The file the sdist's build backend writes next to this module: the
#: target chosen when `rocm` was installed and what the choice read (the
#: selection record, docs/formats.md; `_selection_record.py` reads it too).
SELECTION_FILE_NAME = "_selection.json"

_PACKAGE_DIR = Path(os.path.abspath(__file__)).parent

#: The site-packages directory this installation lives in.
SITE_PACKAGES = _PACKAGE_DIR.parent

#: The parsed `_dist_info.json`.
DOCUMENT: dict[str, Any] = load_document(_PACKAGE_DIR / FILE_NAME)

_SELECTOR = _selector.Selector.from_document(DOCUMENT)

#: The ROCm version of every package of this installation.
__version__: str = DOCUMENT["version"]

#: `legacy` or `kpack`.
MODE: str = DOCUMENT["mode"]

#: The nonce suffix of the platform packages (usually empty).
PY_PACKAGE_SUFFIX_NONCE: str = DOCUMENT["nonce"]

#: The fallback target when none is requested or detected.
DEFAULT_TARGET_FAMILY: str | None = DOCUMENT.get("default_target")

#: Units this release offers: families (legacy) or base targets (kpack).
AVAILABLE_TARGET_FAMILIES: list[str] = list(DOCUMENT["available_targets"])

#: The target chosen by `determine_target_family`, once known.
CACHED_TARGET_FAMILY: str | None = None

_TARGET_PLACEHOLDER = _selector.TARGET_PLACEHOLDER


def _fill(template: str, target: str | None, *, separator: str) -> str:
    if _TARGET_PLACEHOLDER not in template:
        return template
    if target is None:
        raise ValueError(f"`{template}` is target specific, but no target was given")
    return template.replace(_TARGET_PLACEHOLDER, target.replace("-", separator))


class PackageEntry:
    """One logical package of the release (a record of `packages`)."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.logical_name: str = record["logical"]
        self.dist_template: str = record["dist_template"]
        self.pure_package_template: str | None = record.get("pure_package_template")
        self.platform_package_template: str | None = record.get("platform_package_template")
        self.required: bool = bool(record["required"])
        self.is_target_specific: bool = bool(record["target_specific"])

    @property
    def dist_package_template(self) -> str:
        """The dist-name template in the reference's spelling (`{target_family}`)."""
        return self.dist_template.replace(_TARGET_PLACEHOLDER, "{target_family}")

    @property
    def pure_py_package_name(self) -> str | None:
        """The pure Python package (`rocm_sdk_core`; legacy libraries keep
        the `{target}` placeholder, as the reference's did not vary)."""
        return self.pure_package_template

    def get_dist_package_name(self, target_family: str | None = None) -> str:
        """The distribution name, e.g. `rocm-sdk-libraries-gfx94X-dcgpu`."""
        if self.logical_name == "device" and target_family is not None:
            target_family = _selector.base_target(target_family)
        return _fill(self.dist_template, target_family, separator="-")

    def get_dist_package_require(self, target_family: str | None = None) -> str:
        """The exact pin `name==version`."""
        return f"{self.get_dist_package_name(target_family)}=={__version__}"

    def get_pure_py_package_name(self, target_family: str | None = None) -> str | None:
        """The pure Python package for `target_family` (None for device)."""
        if self.pure_package_template is None:
            return None
        return _fill(self.pure_package_template, target_family, separator="_")

    def get_py_package_name(self, target_family: str | None = None) -> str:
        """The platform package in site-packages (`_rocm_sdk_core`, nonce
        included); for the meta package, which has none, its pure package."""
        template = self.platform_package_template or self.pure_package_template
        assert template is not None, "every package has a pure or a platform package"
        return _fill(template, target_family, separator="_")

    def get_py_package_path(self, target_family: str | None = None) -> Path | None:
        """The installed directory of the platform package, or None.

        Looks beside this installation first (all ROCm packages install into
        one site-packages), then wherever the import system finds it.
        """
        name = self.get_py_package_name(target_family)
        sibling = SITE_PACKAGES / name
        if sibling.is_dir():
            return sibling
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        if spec.submodule_search_locations:
            return Path(list(spec.submodule_search_locations)[0])
        return Path(spec.origin).parent if spec.origin else None

    def get_py_package(self, target_family: str | None = None):
        """The import spec of the platform package, or None."""
        try:
            return importlib.util.find_spec(self.get_py_package_name(target_family))
        except (ImportError, ValueError):
            return None

    def has_py_package(self, target_family: str | None = None) -> bool:
        """Whether the platform package is installed."""
        return self.get_py_package_path(target_family) is not None

    def __repr__(self) -> str:
        return self.dist_template


class LibraryEntry:
    """One public library (a record of `libraries`)."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.shortname: str = record["shortname"]
        self.package: PackageEntry = ALL_PACKAGES[record["package"]]
        self.so_pattern: str = record.get("linux_glob") or ""
        self.dll_pattern: str = record.get("windows_glob") or ""
        self.posix_relpath: str = record["posix_relpath"]
        self.windows_relpath: str = record["windows_relpath"]
        self.optional: bool = bool(record.get("optional", False))
        #: Load-order dependencies; none needed, RPATHs resolve them.
        self.deps: list[str] = []

    def __repr__(self) -> str:
        return (
            f"{self.shortname}(so_pattern={self.so_pattern}, "
            f"dll_pattern={self.dll_pattern}, package={self.package})"
        )


#: Every logical package of this release, by logical name, in SPEC order.
ALL_PACKAGES: dict[str, PackageEntry] = {
    r["logical"]: PackageEntry(r) for r in DOCUMENT["packages"]
}

#: Every public library, by short name, in SPEC order.
ALL_LIBRARIES: dict[str, LibraryEntry] = {
    r["shortname"]: LibraryEntry(r) for r in DOCUMENT["libraries"]
}


def _recorded_selection() -> str | None:
    """The target the build backend chose at install time, if still offered."""
    import json

    try:
        recorded = json.loads((_PACKAGE_DIR / SELECTION_FILE_NAME).read_text())
    except (OSError, ValueError):
        return None
    target = recorded.get("target") if isinstance(recorded, dict) else None
    return target if target in AVAILABLE_TARGET_FAMILIES else None


def discover_current_target_family() -> str | None:
    """The available unit matching this machine's GPUs, or None.

    Reads the kernel's GPU list (or a non-ROCm `offload-arch` on `PATH`);
    never starts a ROCm console script, so it never unpacks devel.
    """
    output = _detect.detect_gpu_archs(
        path_value=os.environ.get("PATH"), windows=sys.platform == "win32"
    )
    if output is None:
        return None
    return _selector.detect_target(output, AVAILABLE_TARGET_FAMILIES)


def determine_target_family() -> str:
    """The target this process uses: `ROCM_SDK_TARGET_FAMILY` if set (it
    must be available), else the one chosen when `rocm` was installed, else
    the detected GPU, else the release default. Cached.

    Raises `ValueError` (`TargetNotAvailableError`) for an unavailable
    override, and `LookupError` when the release offers no target at all.
    """
    global CACHED_TARGET_FAMILY
    if CACHED_TARGET_FAMILY is not None:
        return CACHED_TARGET_FAMILY
    requested = os.environ.get(_selector.TARGET_ENV)
    if requested is not None and requested.strip():
        selection = _SELECTOR.select_target(requested, None)
    else:
        recorded = _recorded_selection()
        if recorded is not None:
            selection = _selector.Selection(recorded, "recorded")
        else:
            selection = _SELECTOR.select_target(None, None)
            detected = discover_current_target_family()
            if detected is not None:
                selection = _selector.Selection(detected, "detected")
    if selection is None:
        raise LookupError(
            f"this ROCm release offers no GPU target; set {_selector.TARGET_ENV} "
            f"only when the release lists targets"
        )
    CACHED_TARGET_FAMILY = selection.target
    return selection.target
