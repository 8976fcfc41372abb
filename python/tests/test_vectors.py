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

    def test_per_target_extras_are_the_vectors_device_extras(self) -> None:
        """`build_per_target_extras` (docs/drop-in.md) is the `device-{T}` and
        `device-all` part of what each vector's selector declares, with the
        `extra` clause dropped."""
        checked = 0
        for path in sorted(VECTORS_DIR.glob("*.json")):
            vector = json.loads(path.read_text())
            expected = vector["expected"]
            if "selector" not in expected or "error" in expected:
                continue
            with self.subTest(vector=path.name):
                want: dict[str, list[str]] = {}
                for line in expected["requires_dist"]:
                    name, _, markers = line.partition("; ")
                    clauses = markers.split(" and ") if markers else []
                    extra = [c for c in clauses if c.startswith("extra == ")]
                    if not extra:
                        continue
                    extra_name = extra[0].split('"')[1]
                    if not extra_name.startswith("device-"):
                        continue
                    rest = [c for c in clauses if not c.startswith("extra == ")]
                    line = "; ".join([name, *rest]) if rest else name
                    want.setdefault(extra_name, []).append(line)
                got = _selector_of(expected["selector"]).per_target_extras()
                self.assertEqual(got, want)
                checked += bool(want)
        self.assertGreaterEqual(checked, 5)


if __name__ == "__main__":
    unittest.main()
