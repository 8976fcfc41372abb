"""Shared helpers: paths and sample documents."""

from __future__ import annotations

import json
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = PYTHON_DIR.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
VECTORS_DIR = REPO_ROOT / "crates" / "dist-info" / "tests" / "vectors"


def load_fixture(mode: str) -> dict:
    """The sample `_dist_info.json` of `mode` (`kpack` or `legacy`)."""
    return json.loads((FIXTURES / f"dist_info_{mode}.json").read_text())
