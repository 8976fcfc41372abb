"""The stale-selection check of `rocm-sdk test` (selection.rs).

Run as `python -I -B -c <this file> SITE_PACKAGES`; prints one JSON line:
{"installed": false} when the `rocm` wheel has no selection check, else
{"installed": true, "record": {...} | null, "warning": text | null,
"detected": [gfx...] | null}.
The check module is loaded by path, so importing `rocm_sdk` (and its own
import-time warning) stays out of it.
"""

import importlib.util
import json
import os
import sys

package = os.path.join(sys.argv[1], "rocm_sdk")
path = os.path.join(package, "_selection_record.py")
if not os.path.isfile(path):
    print(json.dumps({"installed": False}))
    sys.exit(0)
spec = importlib.util.spec_from_file_location("_rocm_sdk_selftest_selection", path)
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
record = module.read_record(package)
warning = module.check(package, full=True) if record is not None else None
# The kernel's list of GPUs, for the report's header (no subprocess).
detected = None if sys.platform == "win32" else module._sibling("_detect").kfd_gpu_archs()
print(json.dumps({"installed": True, "record": record, "warning": warning, "detected": detected}))
