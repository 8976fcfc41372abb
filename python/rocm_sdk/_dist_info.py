"""Distribution information: the facade old code imports.

`rocm_sdk._dist_info` was a generated module in the reference; code such as
PyTorch's build reads `ALL_PACKAGES[...]`, `.get_py_package_name(target)`,
`.has_py_package(target)`, `ALL_LIBRARIES`, `determine_target_family()` and
`__version__` from it. Here every value comes from the `_dist_info.json`
shipped next to this file; nothing is pasted into Python source. The
names kept from the reference are listed in docs/drop-in.md.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path
from typing import Any

from . import _detect, _selector
from ._document import FILE_NAME, DistInfoError, load_document

# Names for the type checker only (nothing more is imported at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

__all__ = [
    "ALL_LIBRARIES",
    "ALL_PACKAGES",
    "AVAILABLE_TARGET_FAMILIES",
    "DEFAULT_TARGET_FAMILY",
    "DOCUMENT",
    "MODE",
    "PY_PACKAGE_SUFFIX_NONCE",
    "RELEASE_VERSION",
    "SELECTION_FILE_NAME",
    "SITE_PACKAGES",
    "THIS_PACKAGE_ENTRY",
    "THIS_TARGET_FAMILY",
    "DistInfoError",
    "LINUX_TARGET_FAMILIES",
    "LibraryEntry",
    "PackageEntry",
    "VERBOSE_ENV",
    "WINDOWS_TARGET_FAMILIES",
    "__version__",
    "build_install_requires",
    "build_per_target_extras",
    "determine_target_family",
    "discover_current_target_family",
    "get_target_family_platform_marker",
]

#: `ROCM_SDK_VERBOSE=1` reports on stderr, each line starting `[rocm_sdk]`,
#: how the GPU target is chosen. Off by default, as in the reference:
#: programs that call this module do not expect it to print.
VERBOSE_ENV = "ROCM_SDK_VERBOSE"
_VERBOSE = os.getenv(VERBOSE_ENV, "0") == "1"


def _note(message: str) -> None:
    if _VERBOSE:
        print(f"[rocm_sdk] {message}", file=sys.stderr)


if _VERBOSE:
    # Detection explains itself through its logger; show it in the same form.
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("[rocm_sdk] %(message)s"))
    _detect_log = logging.getLogger(_detect.__name__)
    _detect_log.addHandler(_handler)
    _detect_log.setLevel(logging.DEBUG)

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

#: The version of this `rocm` package: the release's, or for a
#: post-release of the selector `X.postN` (docs/python.md).
__version__: str = DOCUMENT.get("selector_version") or DOCUMENT["version"]

#: The version of the ROCm packages every requirement pins (`X` under a
#: post-release `X.postN` of the selector).
RELEASE_VERSION: str = DOCUMENT["version"]

#: `legacy` or `kpack`.
MODE: str = DOCUMENT["mode"]

#: The nonce suffix of the platform packages (usually empty).
PY_PACKAGE_SUFFIX_NONCE: str = DOCUMENT["nonce"]

#: The reference's target values, as the build computed them the way the
#: reference does (`target_families` of the document; docs/drop-in.md).
#: Documents written before it existed fall back to the selector's units.
_REFERENCE: dict[str, Any] = DOCUMENT.get("target_families") or {}


def _platform_units(excluded: str) -> list[str]:
    # Without `target_families`: `target_platforms` lists the units offered
    # on one platform only and is non-empty only when both platforms' lists
    # were given; without it the per-platform lists are unknown, which the
    # reference spells `[]`.
    exclusive = DOCUMENT.get("target_platforms") or {}
    if not exclusive:
        return []
    return [t for t in DOCUMENT["available_targets"] if exclusive.get(t) != excluded]


#: The fallback target when none is requested or detected: the reference's
#: value (the first target as built, `gfx90a:xnack+` included).
DEFAULT_TARGET_FAMILY: str | None = (
    _REFERENCE["default"] if _REFERENCE else DOCUMENT.get("default_target")
)

#: The targets (kpack: as built, `:xnack±` kept) or families (legacy) of
#: this release, as the reference lists them. Target choice works on the
#: selector's units (`_SELECTOR.available_targets`: base targets in kpack
#: mode), one device package each.
AVAILABLE_TARGET_FAMILIES: list[str] = list(
    _REFERENCE["available"] if _REFERENCE else DOCUMENT["available_targets"]
)

#: The target chosen by `determine_target_family`, once known.
CACHED_TARGET_FAMILY: str | None = None

#: The units (targets or families) published for Linux, as the release's
#: Linux list gave them; else `[]`.
LINUX_TARGET_FAMILIES: list[str] = (
    list(_REFERENCE["linux"]) if _REFERENCE else _platform_units("win32")
)

#: The units published for Windows, as the release's Windows list gave
#: them; else `[]`.
WINDOWS_TARGET_FAMILIES: list[str] = (
    list(_REFERENCE["windows"]) if _REFERENCE else _platform_units("linux")
)

#: The family a per-family `rocm` selector (legacy, several families) is
#: restricted to; else None.
THIS_TARGET_FAMILY: str | None = _REFERENCE.get("this")

_TARGET_PLACEHOLDER = _selector.TARGET_PLACEHOLDER


def _fill(template: str, target: str | None, *, separator: str, logical: str) -> str:
    if _TARGET_PLACEHOLDER not in template:
        return template
    if target is None:
        # The reference's words first (docs/drop-in.md).
        raise ValueError(
            f"Package {logical} is target specific, but no target specified; pass one of: "
            f"{', '.join(AVAILABLE_TARGET_FAMILIES)}"
        )
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
    def template_directory(self) -> str:
        """The reference's build-template name: the dist name without its
        target part (`rocm-sdk-libraries`, `rocm-sdk-device`, `rocm`)."""
        return self.dist_template.replace(f"-{_TARGET_PLACEHOLDER}", "").replace(
            _TARGET_PLACEHOLDER, ""
        )

    @property
    def pure_py_package_name(self) -> str:
        """The pure Python package as the reference names it, one per logical
        package: `rocm_sdk_core`, `rocm_sdk_libraries` (legacy wheels each
        carry their family's, `get_pure_py_package_name(target)`), and
        `rocm_sdk_device` for device wheels, which ship none."""
        template = self.pure_package_template
        if template is None:
            return self.template_directory.replace("-", "_")
        return template.replace(f"_{_TARGET_PLACEHOLDER}", "").replace(_TARGET_PLACEHOLDER, "")

    def get_dist_package_name(self, target_family: str | None = None) -> str:
        """The distribution name, e.g. `rocm-sdk-libraries-gfx94X-dcgpu`."""
        if self.logical_name == "device" and target_family is not None:
            target_family = _selector.base_target(target_family)
        return _fill(self.dist_template, target_family, separator="-", logical=self.logical_name)

    def get_dist_package_require(self, target_family: str | None = None) -> str:
        """The exact pin `name==version` (the release's version, also under a
        post-release of the selector)."""
        return f"{self.get_dist_package_name(target_family)}=={RELEASE_VERSION}"

    def get_pure_py_package_name(self, target_family: str | None = None) -> str | None:
        """The pure Python package for `target_family` (None for device)."""
        if self.pure_package_template is None:
            return None
        return _fill(
            self.pure_package_template, target_family, separator="_", logical=self.logical_name
        )

    def get_py_package_name(self, target_family: str | None = None) -> str:
        """The platform package in site-packages, named as the reference
        names it: `_` + the dist name with `-` → `_` + the nonce
        (`_rocm_sdk_core`, `_rocm_sdk_libraries_gfx94X_dcgpu_n1`). The meta
        package has none and device wheels overlay `_rocm_sdk_libraries`:
        for them it is a name nothing installs (`_rocm`,
        `_rocm_sdk_device_gfx942`), as in the reference, so
        `has_py_package` says False."""
        dist = self.get_dist_package_name(target_family)
        return "_" + dist.replace("-", "_") + PY_PACKAGE_SUFFIX_NONCE

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

    def get_py_package(self, target_family: str | None = None) -> ModuleSpec | None:
        """The import spec of the platform package, or None."""
        try:
            return importlib.util.find_spec(self.get_py_package_name(target_family))
        except (ImportError, ValueError):
            return None

    def has_py_package(self, target_family: str | None = None) -> bool:
        """Whether the platform package is installed."""
        return self.get_py_package_path(target_family) is not None

    def __repr__(self) -> str:
        return self.dist_package_template


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


#: Every logical package of this release, by logical name (docs/behaviour.md#package-names order).
ALL_PACKAGES: dict[str, PackageEntry] = {
    r["logical"]: PackageEntry(r) for r in DOCUMENT["packages"]
}

#: Every public library, by short name, in the order of docs/behaviour.md#library-table.
ALL_LIBRARIES: dict[str, LibraryEntry] = {
    r["shortname"]: LibraryEntry(r) for r in DOCUMENT["libraries"]
}

#: The package this module belongs to: the `rocm` selector's (`meta`).
THIS_PACKAGE_ENTRY: PackageEntry = ALL_PACKAGES["meta"]


def _recorded_selection() -> str | None:
    """The target the build backend chose at install time, if still offered."""
    import json

    try:
        recorded = json.loads((_PACKAGE_DIR / SELECTION_FILE_NAME).read_text())
    except (OSError, ValueError):
        return None
    target = recorded.get("target") if isinstance(recorded, dict) else None
    return target if target in _SELECTOR.available_targets else None


def discover_current_target_family() -> str | None:
    """The available unit matching this machine's GPUs, or None.

    Reads the kernel's GPU list (or a non-ROCm `offload-arch` on `PATH`);
    never starts a ROCm console script, so it never unpacks devel.
    """
    output = _detect.detect_gpu_archs(
        path_value=os.environ.get("PATH"), windows=sys.platform == "win32"
    )
    if output is None:
        _note("no GPU detected")
        return None
    units = _SELECTOR.available_targets
    found = _selector.detect_target(output, units)
    if found is None:
        _note(
            f"detected {', '.join(output.split())}, which this release does not offer "
            f"(available: {', '.join(units)})"
        )
    return found


def determine_target_family() -> str:
    """The target this process uses: `ROCM_SDK_TARGET_FAMILY` if set (it
    must be available), else the one chosen when `rocm` was installed, else
    the detected GPU, else the release default. Cached.

    Raises `ValueError` (`TargetNotAvailableError`, "Requested
    ROCM_SDK_TARGET_FAMILY=... is not available in the distribution ...")
    for an unavailable override, an empty one included (it is set, as in the
    reference; only the `rocm` sdist's install-time choice reads a blank
    value as unset, see docs/drop-in.md), and `LookupError` when the release
    offers no target at all.
    """
    global CACHED_TARGET_FAMILY
    if CACHED_TARGET_FAMILY is not None:
        return CACHED_TARGET_FAMILY
    requested = os.environ.get(_selector.TARGET_ENV)
    selection: _selector.Selection | None
    if requested is not None:
        if not requested.strip():
            raise _selector.TargetNotAvailableError(requested, AVAILABLE_TARGET_FAMILIES)
        if requested in AVAILABLE_TARGET_FAMILIES:
            # The reference's answer for a target it lists (`gfx90a:xnack+`).
            selection = _selector.Selection(requested, "environment")
        else:
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
    _note(f"target {selection.target} ({selection.source})")
    CACHED_TARGET_FAMILY = selection.target
    return selection.target


def get_target_family_platform_marker(target_family: str) -> str:
    """`sys_platform == "linux"` (or `"win32"`) when `target_family` (or its
    base target) is published for one platform only, else `""`."""
    return _SELECTOR.target_platform_marker(target_family)


def build_per_target_extras() -> dict[str, list[str]]:
    """The `rocm` extras that name one target each (`device-gfx942`) and
    `device-all`, mapped to their requirements without the `extra` clause
    (platform markers kept), as the `rocm` sdist of this release declares
    them; `{}` when it declares none (legacy releases)."""
    return _SELECTOR.per_target_extras()


def build_install_requires(target_family: str | None = None) -> list[str]:
    """The requirements every `rocm` install has: `rocm-sdk-core==V` (never
    `rocm` itself). `target_family` is accepted for the reference's
    signature; no required package depends on it."""
    del target_family
    return _SELECTOR.install_requires()
