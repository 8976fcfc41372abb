"""Reading `_dist_info.json`, the data every ROCm package ships (schema 1,
written by the Rust `dist-info` crate; keys are its serde field names)."""

from __future__ import annotations

import json
from pathlib import Path

# Names for the type checker only (nothing more is imported at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FILE_NAME", "SCHEMA", "DistInfoError", "load_document"]

#: The file name packages ship the document under.
FILE_NAME = "_dist_info.json"

#: The schema this code reads.
SCHEMA = 1


class DistInfoError(RuntimeError):
    """The document is missing, unreadable, or of another schema."""


def load_document(path: Path) -> dict[str, Any]:
    """The parsed document at `path`, refusing other schemas."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise DistInfoError(
            f"cannot read {path}: {e.strerror or e}; reinstall the `rocm` packages "
            f"(pip install --force-reinstall rocm)"
        ) from e
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise DistInfoError(
            f"{path} is not a valid dist-info document: {e}; reinstall the `rocm` packages"
        ) from e
    found = doc.get("schema") if isinstance(doc, dict) else None
    if found != SCHEMA:
        raise DistInfoError(
            f"{path} has schema {found}, this code reads schema {SCHEMA}; "
            f"install matching versions of `rocm` and `rocm-sdk-core`"
        )
    assert isinstance(doc, dict)  # the schema check above read it as one
    return doc
