"""The reference surfaces `rocm_sdk` keeps (docs/drop-in.md): names,
exception types, warning categories, message prefixes and environment
variables, each checked against a fake site-packages in a fresh
interpreter. The table in docs/drop-in.md names the test of each surface.

Reference texts are spelled out here literally, on purpose: a change to
one of them must fail a test.
"""

from __future__ import annotations

import json

from .support import SiteTest, load_fixture, write_document, write_executable

# Prints `TypeName|message`, or `ok`, for an expression that may raise.
CATCH = """
import re, warnings, rocm_sdk
from rocm_sdk import _dist_info
warnings.simplefilter("error")
try:
    {expr}
    print("ok")
except BaseException as e:
    print(type(e).__name__ + "|" + ",".join(c.__name__ for c in type(e).__mro__) + "|" + str(e))
"""


class Raised:
    """What `CATCH` printed: the exception's type, its classes and message."""

    def __init__(self, line: str) -> None:
        self.name, classes, self.message = line.split("|", 2)
        self.classes = classes.split(",")


class DropInTest(SiteTest):
    def raised(self, expr: str, env: dict | None = None) -> Raised:
        out = self.ok(CATCH.format(expr=expr), env=env).strip()
        self.assertNotEqual(out, "ok", f"{expr} did not raise")
        return Raised(out.splitlines()[-1])

    def assert_starts(self, text: str, prefix: str) -> None:
        self.assertTrue(text.startswith(prefix), f"\n{text!r}\ndoes not start with\n{prefix!r}")


class FindLibrariesTest(DropInTest):
    def test_unknown_library(self) -> None:
        r = self.raised("rocm_sdk.find_libraries('amdhip64', 'cublas', 'cufft')")
        self.assertIn("ModuleNotFoundError", r.classes)
        self.assertEqual(r.name, "UnknownLibraryError")
        self.assert_starts(r.message, "Unknown rocm library 'cublas'")
        self.assertIn("'cufft'", r.message)
        self.assertIn("known libraries: amdhip64, hipfile", r.message)

    def test_missing_package(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        r = self.raised("rocm_sdk.find_libraries('amdhip64', 'hipblas', 'miopen')")
        self.assertIn("ModuleNotFoundError", r.classes)
        self.assert_starts(
            r.message,
            "Missing required rocm libraries. Please refer to Python setup instructions, "
            "reinstall your virtual environment, or attempt to install manually via "
            "`pip install rocm[libraries]`",
        )
        self.assertIn("'hipblas', 'miopen'", r.message)
        self.assertIn('pip install "rocm[libraries]==7.1.0"', r.message)

    def test_package_not_in_release(self) -> None:
        self.doc["contents"] = ["devel"]
        write_document(self.pkg, self.doc)
        r = self.raised("rocm_sdk.find_libraries('rccl')")
        self.assertIn("ModuleNotFoundError", r.classes)
        self.assert_starts(r.message, "Missing required rocm libraries. 'rccl' belongs to")
        self.assertIn("does not include", r.message)

    def test_missing_file(self) -> None:
        (self.site / "_rocm_sdk_core/lib").mkdir(parents=True)
        r = self.raised("rocm_sdk.find_libraries('hiprtc')")
        self.assertIn("FileNotFoundError", r.classes)
        self.assertEqual(r.name, "LibraryNotFoundError")
        self.assert_starts(
            r.message,
            f"Could not find rocm library 'hiprtc' at path '{self.site / '_rocm_sdk_core/lib'},' "
            f"no match for pattern 'libhiprtc.so*'",
        )
        self.assertIn('pip install --force-reinstall "rocm-sdk-core==7.1.0"', r.message)


class LibraryRecordTest(DropInTest):
    """`_libraries.json` (docs/formats.md): what the build produced."""

    def record(self, pure: str, libraries: dict, schema: int = 1) -> None:
        # In the pure package: the platform directory is mirrored into devel.
        path = self.site / pure / "_libraries.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"distribution": "rocm-sdk-core", "libraries": libraries, "schema": schema}
        path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")

    def test_entry_the_build_did_not_produce(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        # A file the glob would match, which the record says is not the library.
        self.touch("_rocm_sdk_core/lib/libhiprtc.so.stale")
        self.record("rocm_sdk_core", {"amdhip64": "lib/libamdhip64.so.7"})
        r = self.raised("rocm_sdk.find_libraries('hiprtc')")
        self.assertIn("FileNotFoundError", r.classes)
        self.assert_starts(r.message, "Could not find rocm library 'hiprtc' at path '")
        self.assertIn(": not part of this ROCm build", r.message)
        self.assertIn("_libraries.json", r.message)

    def test_recorded_file_is_returned(self) -> None:
        # The glob would pick `libamdhip64.so` (sorted first); the record names the SONAME file.
        self.touch("_rocm_sdk_core/lib/libamdhip64.so")
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        self.record("rocm_sdk_core", {"amdhip64": "lib/libamdhip64.so.7"})
        out = self.ok("import rocm_sdk\nprint(rocm_sdk.find_libraries('amdhip64')[0])")
        self.assertEqual(out.strip(), str(self.site / "_rocm_sdk_core/lib/libamdhip64.so.7"))

    def test_recorded_file_missing_on_disk(self) -> None:
        (self.site / "_rocm_sdk_core/lib").mkdir(parents=True)
        self.record("rocm_sdk_core", {"amdhip64": "lib/libamdhip64.so.7"})
        r = self.raised("rocm_sdk.find_libraries('amdhip64')")
        self.assertIn("FileNotFoundError", r.classes)
        self.assert_starts(r.message, "Could not find rocm library 'amdhip64' at path '")
        self.assertIn("libamdhip64.so.7, which is missing", r.message)

    def test_optional_entry_not_produced_is_skipped(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        self.record("rocm_sdk_core", {"amdhip64": "lib/libamdhip64.so.7"})
        out = self.ok("import rocm_sdk\nprint(len(rocm_sdk.find_libraries('rocdxg', 'amdhip64')))")
        self.assertEqual(out.strip(), "1")

    def test_without_a_record_the_glob_decides(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so")
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        out = self.ok("import rocm_sdk\nprint(rocm_sdk.find_libraries('amdhip64')[0].name)")
        self.assertEqual(out.strip(), "libamdhip64.so")

    def test_other_schema_is_refused(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        self.record("rocm_sdk_core", {"amdhip64": "lib/libamdhip64.so.7"}, schema=2)
        r = self.raised("rocm_sdk.find_libraries('amdhip64')")
        self.assertEqual(r.name, "DistInfoError")
        self.assertIn(f"{self.site / 'rocm_sdk_core/_libraries.json'} has schema 2", r.message)

    def test_a_record_in_the_platform_directory_is_not_read(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so")
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        path = self.site / "_rocm_sdk_core/_libraries.json"
        path.write_text('{"distribution": "rocm-sdk-core", "libraries": {}, "schema": 1}\n')
        out = self.ok("import rocm_sdk\nprint(rocm_sdk.find_libraries('amdhip64')[0].name)")
        self.assertEqual(out.strip(), "libamdhip64.so")


class VersionCheckTest(DropInTest):
    REFERENCE = (
        "The program was compiled against a ROCm version matching '{shown}' but the "
        "installed ROCm version in this Python environment is 7.1.0."
    )

    def test_mismatch_raises_runtime_error(self) -> None:
        for expr, shown in [
            ("'badversion'", "badversion"),
            ("'7.2.*'", r"7\.2\..*"),
            ("re.compile('8')", "8"),
        ]:
            r = self.raised(
                f"rocm_sdk.initialize_process(check_version={expr}, fail_on_version_mismatch=True)"
            )
            self.assertEqual(r.name, "RuntimeError")
            self.assert_starts(r.message, self.REFERENCE.format(shown=shown))

    def test_mismatch_warns_user_warning(self) -> None:
        r = self.raised("rocm_sdk.initialize_process(check_version='badversion')")
        self.assertEqual(r.name, "UserWarning")
        self.assert_starts(
            r.message,
            self.REFERENCE.format(shown="badversion")
            + " This incompatibility may result in unexpected behavior",
        )


class PreloadEnvTest(DropInTest):
    def test_bad_preload_variable(self) -> None:
        r = self.raised(
            "rocm_sdk.initialize_process()", env={"ROCM_SDK_PRELOAD_LIBRARIES": " nosuch;"}
        )
        self.assertEqual(r.name, "RuntimeError")
        self.assert_starts(
            r.message,
            "Could not preload libraries from environment variable "
            "ROCM_SDK_PRELOAD_LIBRARIES=' nosuch;'. Check this environment variable and unset "
            "it if not correct/needed.",
        )
        self.assertIn("Unknown rocm library 'nosuch'", r.message)


class PreloadLoaderErrorTest(DropInTest):
    def test_the_loader_message_comes_first(self) -> None:
        # An empty file: found by `find_libraries`, refused by the loader.
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        path = self.site / "_rocm_sdk_core/lib/libamdhip64.so.7"
        r = self.raised("rocm_sdk.preload_libraries('amdhip64')")
        self.assertEqual(r.name, "OSError")
        # What ctypes raises for it, as the reference let it through.
        loader = self.ok(CATCH.format(expr=f"import ctypes\n    ctypes.CDLL({str(path)!r})"))
        self.assert_starts(r.message, Raised(loader.strip().splitlines()[-1]).message)
        self.assertIn("'amdhip64'", r.message)


class TargetFamilyTest(DropInTest):
    mode = "legacy"
    AVAILABLE = "(available: gfx110X-all, gfx94X-dcgpu)"

    def test_empty_override_is_requested_and_unavailable(self) -> None:
        r = self.raised("_dist_info.determine_target_family()", env={"ROCM_SDK_TARGET_FAMILY": ""})
        self.assertIn("ValueError", r.classes)
        self.assert_starts(
            r.message,
            "Requested ROCM_SDK_TARGET_FAMILY= is not available in the distribution "
            + self.AVAILABLE,
        )

    def test_unavailable_override(self) -> None:
        r = self.raised(
            "_dist_info.determine_target_family()", env={"ROCM_SDK_TARGET_FAMILY": "gfx120X-all"}
        )
        self.assertIn("ValueError", r.classes)
        self.assert_starts(
            r.message,
            "Requested ROCM_SDK_TARGET_FAMILY=gfx120X-all is not available in the distribution "
            + self.AVAILABLE,
        )

    def test_target_specific_name_without_target(self) -> None:
        for method in ("get_dist_package_name", "get_py_package_name"):
            r = self.raised(f"_dist_info.ALL_PACKAGES['libraries'].{method}()")
            self.assertEqual(r.name, "ValueError")
            self.assert_starts(
                r.message, "Package libraries is target specific, but no target specified"
            )


class DistInfoNamesTest(DropInTest):
    def test_template_directory(self) -> None:
        out = self.ok(
            "from rocm_sdk import _dist_info as d\n"
            "print({k: p.template_directory for k, p in d.ALL_PACKAGES.items()})"
        )
        self.assertEqual(
            out.strip(),
            str(
                {
                    "meta": "rocm",
                    "core": "rocm-sdk-core",
                    "libraries": "rocm-sdk-libraries",
                    "device": "rocm-sdk-device",
                    "devel": "rocm-sdk-devel",
                    "profiler": "rocm-profiler",
                }
            ),
        )

    def test_platform_lists_and_markers(self) -> None:
        linux = 'sys_platform == "linux"'
        code = (
            "from rocm_sdk import _dist_info as d\n"
            "print(d.LINUX_TARGET_FAMILIES, d.WINDOWS_TARGET_FAMILIES)\n"
            "print([d.get_target_family_platform_marker(t) for t in "
            "('gfx942', 'gfx942:xnack+', 'gfx1151', 'gfx1100')])\n"
        )
        # One platform's list only: unknown per-platform lists, no markers.
        lines = self.ok(code).splitlines()
        self.assertEqual(lines, ["[] []", "['', '', '', '']"])
        self.doc["available_targets"] = ["gfx1100", "gfx1151", "gfx942"]
        self.doc["target_platforms"] = {"gfx1151": "win32", "gfx942": "linux"}
        self.doc["target_families"] = {
            "available": ["gfx1100", "gfx1151", "gfx942"],
            "default": "gfx1100",
            "linux": ["gfx1100", "gfx942"],
            "windows": ["gfx1100", "gfx1151"],
            "this": None,
        }
        write_document(self.pkg, self.doc)
        lines = self.ok(code).splitlines()
        self.assertEqual(lines[0], "['gfx1100', 'gfx942'] ['gfx1100', 'gfx1151']")
        self.assertEqual(
            lines[1],
            str([linux, linux, 'sys_platform == "win32"', ""]),
        )

    def test_build_per_target_extras_and_install_requires(self) -> None:
        code = (
            "import json\nfrom rocm_sdk import _dist_info as d\n"
            "print(json.dumps(d.build_per_target_extras()))\n"
            "print(json.dumps(d.build_install_requires('gfx942')))\n"
        )
        extras, requires = self.ok(code).splitlines()
        self.assertEqual(
            json.loads(extras),
            {
                "device-gfx1100": ["rocm-sdk-device-gfx1100==7.1.0"],
                "device-gfx942": ["rocm-sdk-device-gfx942==7.1.0"],
                "device-all": ["rocm-sdk-device-gfx1100==7.1.0", "rocm-sdk-device-gfx942==7.1.0"],
            },
        )
        self.assertEqual(json.loads(requires), ["rocm-sdk-core==7.1.0"])

    def test_legacy_has_no_per_target_extras(self) -> None:
        write_document(self.pkg, load_fixture("legacy"))
        out = self.ok("from rocm_sdk import _dist_info as d\nprint(d.build_per_target_extras())")
        self.assertEqual(out.strip(), "{}")


class VerboseTest(DropInTest):
    def setUp(self) -> None:
        super().setUp()
        # An `offload-arch` that fails, so detection has something to report.
        self.bin = self.tmp / "bin"
        write_executable(self.bin / "offload-arch", "#!/bin/sh\nexit 3\n")

    def run_determine(self, env: dict):
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", **env}
        return self.py(
            "from rocm_sdk import _dist_info\nprint(_dist_info.determine_target_family())", env=env
        )

    def test_silent_by_default(self) -> None:
        p = self.run_determine({})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        p = self.run_determine({"ROCM_SDK_VERBOSE": "0"})
        self.assertEqual(p.stderr, "")

    def test_verbose_reports_the_choice(self) -> None:
        p = self.run_determine({"ROCM_SDK_VERBOSE": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stderr.splitlines()
        self.assertTrue(lines, "nothing reported")
        for line in lines:
            self.assertTrue(line.startswith("[rocm_sdk] "), line)
        self.assertEqual(lines[-1], f"[rocm_sdk] target {p.stdout.strip()} (default)")
        self.assertTrue(any("exited with 3" in line for line in lines), lines)


class DevelRootTest(DropInTest):
    """`rocm_sdk._devel.get_devel_root()`, against a fake native program."""

    def native(self, script: str) -> None:
        write_executable(self.site / "rocm_sdk_core/_bin/rocm-sdk", script)

    def install_devel(self) -> None:
        (self.site / "rocm_sdk_devel").mkdir()
        (self.site / "rocm_sdk_devel/__init__.py").write_text("")

    def test_not_installed(self) -> None:
        r = self.raised("from rocm_sdk import _devel\n    _devel.get_devel_root()")
        self.assertEqual(r.name, "ModuleNotFoundError")
        self.assert_starts(
            r.message,
            "rocm_sdk_devel module for the ROCm SDK development package is not installed. "
            "This can typically be obtained by installing `rocm[devel]` from your package manager",
        )
        self.assertIn('pip install "rocm[devel]==7.1.0"', r.message)

    def test_namespace_package_is_refused(self) -> None:
        (self.site / "rocm_sdk_devel").mkdir()
        r = self.raised("from rocm_sdk import _devel\n    _devel.get_devel_root()")
        self.assertEqual(r.name, "ModuleNotFoundError")
        self.assert_starts(
            r.message, "rocm_sdk_devel expected to be defined by an __init__.py file"
        )

    def test_asks_the_native_program_for_the_root(self) -> None:
        self.install_devel()
        root = self.site / "_rocm_sdk_devel"
        log = self.tmp / "calls"
        self.native(
            f'#!/bin/sh\necho "$*" >> "{log}"\nmkdir -p "{root}"\n'
            f'touch "{root}/__init__.py"\necho "{root}"\n'
        )
        out = self.ok(
            "from rocm_sdk import _devel\n"
            "print(_devel.get_devel_root())\nprint(_devel.get_devel_root(force_initialize=True))"
        )
        self.assertEqual(out.splitlines(), [str(root), str(root)])
        self.assertEqual(log.read_text().splitlines(), ["path --root", "path --root"])

    def test_a_tree_without_init_is_not_a_package(self) -> None:
        self.install_devel()
        root = self.site / "_rocm_sdk_devel"
        self.native(f'#!/bin/sh\nmkdir -p "{root}"\necho "{root}"\n')
        r = self.raised("from rocm_sdk import _devel\n    _devel.get_devel_root()")
        self.assertEqual(r.name, "ImportError")
        self.assert_starts(
            r.message, "Expanding _rocm_sdk_devel did not produce a valid Python package"
        )

    def test_unpack_failure_carries_the_native_message(self) -> None:
        self.install_devel()
        self.native(
            "#!/bin/sh\necho 'rocm-sdk: the devel tarball is corrupt or truncated' >&2\nexit 1\n"
        )
        r = self.raised("from rocm_sdk import _devel\n    _devel.get_devel_root()")
        self.assertEqual(r.name, "ImportError")
        self.assertIn("corrupt or truncated", r.message)
