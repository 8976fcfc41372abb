"""Runs every shared JSON test vector through the Python selector.

The vectors live in `crates/dist-info/tests/vectors/` and are run by the
Rust crate too (`crates/dist-info/tests/vectors.rs`). The build stage
(`Selector::plan`) exists only in Rust, so this test takes the selector the
vector expects (what `_dist_info.json` would carry) and checks the install
stage: selected target and its source, `Provides-Extra`, `Requires-Dist`,
and the error message for an unavailable target.
"""

from __future__ import annotations

import json
import unittest

from rocm_sdk import _selector

from .support import VECTORS_DIR, load_fixture


def _selector_of(selector_json: dict) -> _selector.Selector:
    # Dist-name templates come from a document of the same mode; vectors
    # carry only the selector part.
    doc = dict(load_fixture(selector_json["mode"]))
    doc.update(selector_json)
    return _selector.Selector.from_document(doc)


def evaluate(vector: dict) -> dict:
    """The install-stage answer in the shape of `expected`."""
    expected = vector["expected"]
    selector_json = expected["selector"]
    selector = _selector_of(selector_json)
    install = vector["install"]
    try:
        selection = selector.select_target(install["target_env"], install["offload_arch"])
    except _selector.TargetNotAvailableError as e:
        return {
            "selector": selector_json,
            "error": {"stage": "install", "kind": "target-not-available", "message": str(e)},
        }
    metadata = selector.metadata(selection)
    return {
        "selector": selector_json,
        "selected_target": selection.target if selection else None,
        "target_source": selection.source if selection else None,
        "provides_extra": metadata.provides_extra,
        "requires_dist": metadata.requires_dist,
    }


class VectorTest(unittest.TestCase):
    def test_every_vector_agrees_with_rust(self) -> None:
        files = sorted(VECTORS_DIR.glob("*.json"))
        self.assertGreaterEqual(len(files), 20, f"vector set missing in {VECTORS_DIR}")
        install_stage = 0
        for path in files:
            vector = json.loads(path.read_text())
            with self.subTest(vector=path.name):
                expected = vector["expected"]
                if "selector" not in expected:
                    # A build-stage error: Rust only (no selector is written).
                    self.assertEqual(expected["error"]["stage"], "build")
                    continue
                install_stage += 1
                self.assertEqual(evaluate(vector), expected, vector["description"])
        self.assertGreaterEqual(install_stage, 15)


if __name__ == "__main__":
    unittest.main()
