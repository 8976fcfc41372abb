"""Reading a platform package's library record, `_libraries.json`.

The build writes one per runtime distribution that owns library-table
entries (core, libraries; docs/python.md) into its pure package
(`rocm_sdk_core/_libraries.json`): which short names the distribution
really contains and the file `find_libraries` returns for each, relative
to the platform package directory. Packages built before the record
existed have none; callers then search with the table's globs.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._document import DistInfoError

__all__ = ["FILE_NAME", "SCHEMA", "LibraryRecord", "read_record"]

#: The record's file name inside a pure package directory.
FILE_NAME = "_libraries.json"

#: The schema this code reads.
SCHEMA = 1


class LibraryRecord:
    """The libraries one distribution ships: short name → relative path."""

    def __init__(
        self,
        path: Path,
        distribution: str,
        libraries: dict[str, str],
        aliases: dict[str, str] | None = None,
    ) -> None:
        #: The `_libraries.json` this came from.
        self.path = path
        #: The distribution that wrote it (METADATA `Name`).
        self.distribution = distribution
        self._libraries = libraries
        #: The runtime aliases it ships: `/`-separated path relative to the
        #: platform package directory → the SONAME the alias stands for.
        self.aliases: dict[str, str] = dict(aliases or {})

    def aliases_of(self, soname: str) -> list[str]:
        """The recorded paths of the runtime aliases standing for `soname`."""
        return sorted(a for a, s in self.aliases.items() if s == soname)

    def file_of(self, shortname: str) -> str | None:
        """The recorded `/`-separated path of `shortname`, or None when the
        build did not produce that library."""
        return self._libraries.get(shortname)


def read_record(package_dir: Path) -> LibraryRecord | None:
    """The record in the pure package at `package_dir`, or None when the
    package has none. A record that cannot be read, or of another schema,
    raises `DistInfoError` naming the file."""
    path = package_dir / FILE_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DistInfoError(
            f"cannot read {path}: {e.strerror or e}; reinstall the package that owns "
            f"{package_dir.name} (pip install --force-reinstall ...)"
        ) from e
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise DistInfoError(
            f"{path} is not a valid library record: {e}; reinstall the package that owns "
            f"{package_dir.name}"
        ) from e
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema != SCHEMA:
        raise DistInfoError(
            f"{path} has schema {schema}, this code reads schema {SCHEMA}; "
            f"install matching versions of `rocm` and the ROCm packages"
        )
    libraries = doc.get("libraries")
    distribution = doc.get("distribution")
    if (
        not isinstance(libraries, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in libraries.items())
        or not isinstance(distribution, str)
    ):
        raise DistInfoError(
            f"{path} is not a valid library record (expected `distribution` and a "
            f"`libraries` map of names to paths); reinstall the package that owns "
            f"{package_dir.name}"
        )
    aliases = doc.get("aliases", {})
    if not isinstance(aliases, dict) or not all(
        isinstance(k, str) and _is_clean_relpath(k) and isinstance(v, str) and "/" not in v
        for k, v in aliases.items()
    ):
        raise DistInfoError(
            f"{path} is not a valid library record (`aliases` must map relative paths "
            f"inside the package to SONAMEs); reinstall the package that owns "
            f"{package_dir.name}"
        )
    return LibraryRecord(path, distribution, libraries, aliases)


def _is_clean_relpath(relpath: str) -> bool:
    """A `/`-separated path that stays inside its directory."""
    parts = relpath.split("/")
    return "\\" not in relpath and all(p not in ("", ".", "..") for p in parts)
