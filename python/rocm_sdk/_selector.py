"""Target selection and the `rocm` selector's requirements (docs/behaviour.md#selector).

The Python twin of the Rust `dist-info` crate's `selection.rs`,
`selector.rs` and `requirement.rs`: pure functions over the data of
`_dist_info.json`, standard library only, no I/O and no environment reads
(callers pass values). The sdist's build backend loads this file by path
and `rocm_sdk._dist_info` imports it, so there is one copy. The JSON test
vectors in `crates/dist-info/tests/vectors/` hold both languages to the
same answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# Names for the type checker only (nothing more is imported at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "TARGET_ENV",
    "Extra",
    "Metadata",
    "Selection",
    "Selector",
    "TargetNotAvailableError",
    "base_target",
    "detect_target",
    "normalize_extra",
    "platform_marker",
    "render_requirement",
    "select_target",
]

#: The environment override callers read and pass to `select_target`.
TARGET_ENV = "ROCM_SDK_TARGET_FAMILY"

#: Family suffixes tried, in order, after `arch[:-1] + "X"`.
_FAMILY_SUFFIXES = ("-all", "-dgpu", "-igpu", "-dcgpu")

#: The placeholder target-specific templates of `_dist_info.json` use.
TARGET_PLACEHOLDER = "{target}"

#: `sys_platform` values a requirement may be limited to.
_PLATFORMS = ("linux", "win32")


class TargetNotAvailableError(ValueError):
    """A requested target the release does not offer.

    The message is the same text the Rust crate writes, word for word; it
    starts with the reference's words (docs/drop-in.md).
    """

    def __init__(self, requested: str, available: Sequence[str]) -> None:
        self.requested = requested
        self.available = list(available)
        super().__init__(
            f"Requested {TARGET_ENV}={requested} is not available in the distribution "
            f"(available: {', '.join(self.available)}); "
            f"set {TARGET_ENV} to one of them or unset it"
        )


@dataclass(frozen=True)
class Selection:
    """A chosen target: a base target (kpack) or a family (legacy).

    `source` is `"environment"`, `"detected"` or `"default"`.
    """

    target: str
    source: str


@dataclass(frozen=True)
class Extra:
    """One extra (normalised name) and its rendered requirements."""

    name: str
    requirements: tuple[str, ...]


@dataclass(frozen=True)
class Metadata:
    """What pip reads as `Requires-Dist` and `Provides-Extra`."""

    install_requires: tuple[str, ...]
    extras: tuple[Extra, ...]

    @property
    def provides_extra(self) -> list[str]:
        """The `Provides-Extra` values, in order."""
        return [e.name for e in self.extras]

    @property
    def requires_dist(self) -> list[str]:
        """The `Requires-Dist` values: install requirements, then each extra's."""
        out = list(self.install_requires)
        for extra in self.extras:
            out.extend(extra.requirements)
        return out


def base_target(target: str) -> str:
    """The part of a target before the first `:` (`gfx942:xnack+` → `gfx942`)."""
    return target.split(":", 1)[0]


def normalize_extra(name: str) -> str:
    """PEP 685: lower case, each run of `-`, `_`, `.` becomes one `-`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def platform_marker(platform: str) -> str:
    """The PEP 508 marker limiting a requirement to `platform` (`linux`, `win32`)."""
    if platform not in _PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}; expected one of {_PLATFORMS}")
    return f'sys_platform == "{platform}"'


def render_requirement(
    name: str, version: str, *, extra: str | None = None, platform: str | None = None
) -> str:
    """The PEP 508 line `name==version; extra == "x" and sys_platform == "p"`.

    The extra clause comes first, as in the Rust crate, so both write the
    same bytes.
    """
    clauses = []
    if extra is not None:
        clauses.append(f'extra == "{normalize_extra(extra)}"')
    if platform is not None:
        clauses.append(platform_marker(platform))
    line = f"{name}=={version}"
    return f"{line}; {' and '.join(clauses)}" if clauses else line


def detect_target(offload_arch_output: str, available: Sequence[str]) -> str | None:
    """The first available unit matching `offload-arch`-style output.

    One arch per line, in order; feature suffixes (`:xnack-`) dropped. For
    each line tries `arch[:-1] + "X"` with `-all`, `-dgpu`, `-igpu`,
    `-dcgpu`, then the arch itself.
    """
    have = set(available)
    for line in offload_arch_output.splitlines():
        arch = base_target(line.strip())
        if not arch:
            continue
        stem = arch[:-1]
        for suffix in _FAMILY_SUFFIXES:
            family = f"{stem}X{suffix}"
            if family in have:
                return family
        if arch in have:
            return arch
    return None


def select_target(
    available: Sequence[str],
    default: str | None,
    requested: str | None,
    offload_arch_output: str | None,
) -> Selection | None:
    """Chooses among `available`: `requested` (the override value; blank
    counts as unset; a `:xnack±` suffix is dropped when the raw value is not
    itself available), else the first match in `offload_arch_output`, else
    `default`. `None` only when nothing is available or requested.

    Raises `TargetNotAvailableError` for a request the release lacks.
    """
    raw = requested.strip() if requested is not None else ""
    if raw:
        for candidate in (raw, base_target(raw)):
            if candidate in available:
                return Selection(candidate, "environment")
        raise TargetNotAvailableError(raw, available)
    if offload_arch_output is not None:
        found = detect_target(offload_arch_output, available)
        if found is not None:
            return Selection(found, "detected")
    if default is not None:
        return Selection(default, "default")
    return None


class Selector:
    """The selector data of `_dist_info.json` and the metadata it implies.

    `dist_templates` maps a logical package (`core`, `libraries`, ...) to its
    dist-name template (`{target}` where the target goes), as the document's
    `packages[].dist_template` give them.
    """

    def __init__(
        self,
        *,
        mode: str,
        version: str,
        contents: Iterable[str],
        available_targets: Sequence[str],
        default_target: str | None,
        target_platforms: Mapping[str, str],
        package_platforms: Mapping[str, str],
        dist_templates: Mapping[str, str],
    ) -> None:
        if mode not in ("legacy", "kpack"):
            raise ValueError(f"unknown packaging mode {mode!r}; expected 'legacy' or 'kpack'")
        self.mode = mode
        self.version = version
        self.contents = list(contents)
        self.available_targets = list(available_targets)
        self.default_target = default_target
        self.target_platforms = dict(target_platforms)
        self.package_platforms = dict(package_platforms)
        self.dist_templates = dict(dist_templates)

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> Selector:
        """The selector of a parsed `_dist_info.json` (schema 1)."""
        return cls(
            mode=doc["mode"],
            version=doc["version"],
            contents=doc["contents"],
            available_targets=doc["available_targets"],
            default_target=doc.get("default_target"),
            target_platforms=doc.get("target_platforms") or {},
            package_platforms=doc.get("package_platforms") or {},
            dist_templates={p["logical"]: p["dist_template"] for p in doc["packages"]},
        )

    def select_target(
        self, requested: str | None, offload_arch_output: str | None
    ) -> Selection | None:
        """`select_target` over this release's targets and default."""
        return select_target(
            self.available_targets, self.default_target, requested, offload_arch_output
        )

    def is_target_specific(self, kind: str) -> bool:
        """Whether `kind`'s dist name depends on a target."""
        return TARGET_PLACEHOLDER in self._template(kind)

    def dist_name(self, kind: str, target: str | None = None) -> str:
        """The dist name of `kind` (device targets reduced to their base)."""
        template = self._template(kind)
        if TARGET_PLACEHOLDER not in template:
            return template
        if target is None:
            raise ValueError(f"package `{kind}` is target specific ({template}); pass a target")
        if kind == "device":
            target = base_target(target)
        return template.replace(TARGET_PLACEHOLDER, target)

    def _template(self, kind: str) -> str:
        try:
            return self.dist_templates[kind]
        except KeyError:
            raise ValueError(
                f"package `{kind}` is not part of this ROCm release "
                f"(packages: {', '.join(self.dist_templates)})"
            ) from None

    def _pin(self, kind: str, target: str | None, extra: str | None) -> str:
        if target is not None and self.is_target_specific(kind):
            platform = self.target_platforms.get(target)
        else:
            platform = self.package_platforms.get(kind)
        return render_requirement(
            self.dist_name(kind, target), self.version, extra=extra, platform=platform
        )

    def target_platform_marker(self, target: str) -> str:
        """`sys_platform == "..."` when `target` (or its base target) is offered
        on one platform only, else `""`."""
        platform = self.target_platforms.get(base_target(target))
        return platform_marker(platform) if platform is not None else ""

    def metadata(self, selection: Selection | None) -> Metadata:
        """The requirements and extras for an install where `selection` was
        chosen (`None`: no target available).

        Never names a package the release lacks: the generic `device` extra
        exists only for a requested or detected target, legacy builds have
        no device extras, and an extra with no requirement is not written.
        """
        extras = tuple(
            Extra(normalize_extra(name), tuple(self._pin(k, t, name) for k, t in pins))
            for name, pins, _ in self._extras(selection)
        )
        return Metadata(tuple(self.install_requires()), extras)

    def install_requires(self) -> list[str]:
        """The requirements of every install: core, pinned (never `rocm` itself)."""
        return [self._pin("core", None, None)]

    def per_target_extras(self) -> dict[str, list[str]]:
        """The extras that name one target each (`device-{T}`) and their
        aggregate (`device-all`), as `metadata` declares them, with the
        requirements rendered without the `extra` clause (what a setuptools
        `extras_require` holds). Empty when the release has none (legacy)."""
        return {
            normalize_extra(name): [self._pin(kind, target, None) for kind, target in pins]
            for name, pins, per_target in self._extras(None)
            if per_target
        }

    def _extras(
        self, selection: Selection | None
    ) -> list[tuple[str, list[tuple[str, str | None]], bool]]:
        """Each extra in order: its name, its `(package, target)` pins and
        whether it is one of the per-target extras."""
        extras: list[tuple[str, list[tuple[str, str | None]], bool]] = []

        def add(name: str, pins: list[tuple[str, str | None]], per_target: bool = False) -> None:
            if pins:
                extras.append((name, pins, per_target))

        if "libraries" in self.contents:
            if self.mode == "kpack":
                add("libraries", [("libraries", None)])
            elif selection is not None:
                add("libraries", [("libraries", selection.target)])
        if "devel" in self.contents:
            add("devel", [("devel", None)])
        if "profiler" in self.contents:
            add("profiler", [("profiler", None)])
        if self.mode == "kpack" and "device" in self.contents:
            if selection is not None and selection.source != "default":
                add("device", [("device", selection.target)])
            for t in self.available_targets:
                add(f"device-{t}", [("device", t)], per_target=True)
            add("device-all", [("device", t) for t in self.available_targets], per_target=True)
        return extras
