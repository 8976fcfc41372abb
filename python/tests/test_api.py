"""The `rocm_sdk` API and its `_dist_info` facade against a fake
site-packages (a copy of `python/rocm_sdk` plus sample documents and
platform packages), each case in a fresh interpreter."""

from __future__ import annotations

import json
import os
import sys
import unittest

from .support import (
    SiteTest,
    compile_shared_library,
    compiler,
    run_python,
    write_document,
    write_executable,
)


class FindLibrariesTest(SiteTest):
    def test_core_paths_and_relpaths(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        self.touch("_rocm_sdk_core/lib/lib/rocm_sysdeps/lib/ignored")
        self.touch("_rocm_sdk_core/lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5")
        out = self.ok(
            "import rocm_sdk\n"
            "for p in rocm_sdk.find_libraries('amdhip64', 'rocm_sysdeps_liblzma'): print(p)\n"
        )
        self.assertEqual(
            out.splitlines(),
            [
                str(self.site / "_rocm_sdk_core/lib/libamdhip64.so.7"),
                str(self.site / "_rocm_sdk_core/lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5"),
            ],
        )

    def test_unknown_shortname_lists_known_ones(self) -> None:
        p = self.py("import rocm_sdk\nrocm_sdk.find_libraries('cublas')")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("UnknownLibraryError: Unknown rocm library 'cublas'", p.stderr)
        self.assertIn("amdhip64, hipfile", p.stderr)

    def test_missing_package_names_the_extra(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        out = self.ok(
            "import rocm_sdk\n"
            "try:\n    rocm_sdk.find_libraries('amdhip64', 'hipblas', 'miopen')\n"
            "except ModuleNotFoundError as e:\n"
            "    print(type(e).__name__, e.extras)\n    print(e)\n"
        )
        kind, message = out.splitlines()
        self.assertEqual(kind, "MissingPackageError ['libraries']")
        self.assertIn("'hipblas', 'miopen'", message)
        self.assertIn('pip install "rocm[libraries]==7.1.0"', message)

    def test_missing_file_in_installed_package(self) -> None:
        (self.site / "_rocm_sdk_core/lib").mkdir(parents=True)
        p = self.py("import rocm_sdk\nrocm_sdk.find_libraries('hiprtc')")
        self.assertIn("LibraryNotFoundError", p.stderr)
        self.assertIn("'libhiprtc.so*'", p.stderr)

    def test_optional_library_absent_is_skipped(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        out = self.ok("import rocm_sdk\nprint(len(rocm_sdk.find_libraries('rocdxg', 'amdhip64')))")
        self.assertEqual(out.strip(), "1")

    def test_package_not_in_release(self) -> None:
        self.doc["contents"] = ["devel"]
        write_document(self.pkg, self.doc)
        p = self.py("import rocm_sdk\nrocm_sdk.find_libraries('rccl')")
        self.assertIn("does not include", p.stderr)


#: Code run first in a child that takes the Windows branch on any host:
#: `sys.platform` says win32, `os.add_dll_directory` records its calls, and
#: `ctypes.CDLL` records loads in the same list (a `.dll` cannot load here).
WINDOWS_PRELUDE = """
import ctypes, os, sys
sys.platform = "win32"
events = []
def add_dll_directory(path):
    events.append(("dir", path))
    return object()
os.add_dll_directory = add_dll_directory
ctypes.CDLL = lambda path, mode=0: events.append(("load", path))
import rocm_sdk
"""


class WindowsDllDirectoriesTest(SiteTest):
    def setUp(self) -> None:
        super().setUp()
        self.touch("_rocm_sdk_core/bin/amdhip64_7.dll")
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        self.touch("_rocm_sdk_libraries/bin/hipfft.dll")
        self.core_bin = str(self.site / "_rocm_sdk_core" / "bin")
        self.libraries_bin = str(self.site / "_rocm_sdk_libraries" / "bin")

    def events(self, code: str) -> list[tuple[str, str]]:
        out = self.ok(WINDOWS_PRELUDE + code + "\nimport json; print(json.dumps(events))\n")
        return [tuple(e) for e in json.loads(out.splitlines()[-1])]

    def test_find_libraries_finds_dlls_and_adds_their_directory_once(self) -> None:
        out = self.ok(
            WINDOWS_PRELUDE + "print(rocm_sdk.find_libraries('amdhip64', 'amdhip64')[0])\n"
            "print(events)\n"
        )
        found, events = out.splitlines()
        self.assertEqual(found, str(self.site / "_rocm_sdk_core/bin/amdhip64_7.dll"))
        self.assertEqual(events, str([("dir", self.core_bin)]))

    def test_preload_adds_every_directory_before_the_first_load(self) -> None:
        self.touch("_rocm_sdk_libraries/bin/hipblas.dll")
        events = self.events("rocm_sdk.preload_libraries('hipblas', 'amdhip64')")
        # hipblas.dll imports amdhip64_7.dll from another package's bin.
        self.assertEqual(
            events,
            [
                ("dir", self.libraries_bin),
                ("dir", self.core_bin),
                ("load", str(self.site / "_rocm_sdk_libraries/bin/hipblas.dll")),
                ("load", str(self.site / "_rocm_sdk_core/bin/amdhip64_7.dll")),
            ],
        )

    def test_initialize_process_adds_the_installed_packages_directories(self) -> None:
        events = self.events("rocm_sdk.initialize_process()")
        self.assertEqual(sorted(events), [("dir", self.core_bin), ("dir", self.libraries_bin)])

    def test_nothing_is_added_off_windows(self) -> None:
        out = self.ok(
            "import os, rocm_sdk\n"
            "os.add_dll_directory = lambda p: print('added', p)\n"
            "rocm_sdk.initialize_process()\n"
            "print(rocm_sdk.find_libraries('amdhip64')[0])\n"
        )
        self.assertEqual(out, str(self.site / "_rocm_sdk_core/lib/libamdhip64.so.7") + "\n")


class LegacyTest(SiteTest):
    mode = "legacy"

    def test_family_package_with_nonce(self) -> None:
        self.touch("_rocm_sdk_libraries_gfx94X_dcgpu_n1/lib/libhipblas.so.3")
        env = {"ROCM_SDK_TARGET_FAMILY": "gfx94X-dcgpu"}
        out = self.ok("import rocm_sdk\nprint(rocm_sdk.find_libraries('hipblas')[0])", env=env)
        self.assertEqual(
            out.strip(), str(self.site / "_rocm_sdk_libraries_gfx94X_dcgpu_n1/lib/libhipblas.so.3")
        )

    def test_installed_family_is_found_when_another_is_chosen(self) -> None:
        self.touch("_rocm_sdk_libraries_gfx94X_dcgpu_n1/lib/libhipblas.so.3")
        # Default is gfx110X-all, which is not installed.
        out = self.ok(
            "import rocm_sdk\nprint(rocm_sdk.find_libraries('hipblas')[0].parent.parent.name)"
        )
        self.assertEqual(out.strip(), "_rocm_sdk_libraries_gfx94X_dcgpu_n1")

    def test_unavailable_override_lists_available(self) -> None:
        p = self.py(
            "from rocm_sdk import _dist_info\n_dist_info.determine_target_family()",
            env={"ROCM_SDK_TARGET_FAMILY": "gfx120X-all"},
        )
        self.assertIn(
            "TargetNotAvailableError: Requested ROCM_SDK_TARGET_FAMILY=gfx120X-all is not "
            "available in the distribution (available: gfx110X-all, gfx94X-dcgpu)",
            p.stderr,
        )

    def test_recorded_selection_is_used(self) -> None:
        (self.pkg / "_selection.json").write_text(
            json.dumps({"target": "gfx94X-dcgpu", "source": "detected"})
        )
        out = self.ok(
            "from rocm_sdk import _dist_info\nprint(_dist_info.determine_target_family())"
        )
        self.assertEqual(out.strip(), "gfx94X-dcgpu")

    def test_facade(self) -> None:
        self.touch("_rocm_sdk_core_n1/__init__.py")
        code = """
from rocm_sdk import _dist_info as d
libs = d.ALL_PACKAGES['libraries']
print(d.__version__, d.PY_PACKAGE_SUFFIX_NONCE, d.DEFAULT_TARGET_FAMILY, d.AVAILABLE_TARGET_FAMILIES)
print(libs.get_py_package_name('gfx94X-dcgpu'), libs.get_dist_package_name('gfx94X-dcgpu'))
print(libs.dist_package_template, libs.is_target_specific, libs.required)
print(d.ALL_PACKAGES['core'].get_py_package_name(), d.ALL_PACKAGES['core'].has_py_package(),
      d.ALL_PACKAGES['devel'].has_py_package())
print(d.ALL_PACKAGES['core'].get_dist_package_require())
print(list(d.ALL_PACKAGES), len(d.ALL_LIBRARIES))
e = d.ALL_LIBRARIES['miopen']
print(e.package.logical_name, e.so_pattern, e.dll_pattern, e.posix_relpath, e.windows_relpath)
print(d.ALL_LIBRARIES['hipfile'].dll_pattern == '', d.ALL_LIBRARIES['rocm-openblas'].posix_relpath)
"""
        lines = self.ok(code).splitlines()
        self.assertEqual(lines[0], "7.1.0 _n1 gfx110X-all ['gfx110X-all', 'gfx94X-dcgpu']")
        self.assertEqual(
            lines[1], "_rocm_sdk_libraries_gfx94X_dcgpu_n1 rocm-sdk-libraries-gfx94X-dcgpu"
        )
        self.assertEqual(lines[2], "rocm-sdk-libraries-{target_family} True False")
        self.assertEqual(lines[3], "_rocm_sdk_core_n1 True False")
        self.assertEqual(lines[4], "rocm-sdk-core==7.1.0")
        self.assertEqual(lines[5], "['meta', 'core', 'libraries', 'devel', 'profiler'] 28")
        self.assertEqual(lines[6], "libraries libMIOpen.so* MIOpen*.dll lib bin")
        self.assertEqual(lines[7], "True lib/host-math/lib")


class VersionCheckTest(SiteTest):
    def check(self, expression: str) -> tuple[int, str]:
        code = (
            "import re, warnings, rocm_sdk\nwarnings.simplefilter('error')\n"
            f"try:\n    rocm_sdk.initialize_process({expression})\n    print('ok')\n"
            "except (UserWarning, RuntimeError) as e:\n    print(type(e).__name__, e)\n"
        )
        out = self.ok(code).strip()
        return out

    def test_matches_and_mismatches(self) -> None:
        self.assertEqual(self.check("check_version='7.1.0'"), "ok")
        self.assertEqual(self.check("check_version='7.1.*'"), "ok")
        self.assertEqual(self.check("check_version='7.*.0'"), "ok")
        self.assertEqual(self.check("check_version=re.compile(r'7\\.1')"), "ok")
        self.assertTrue(self.check("check_version='7.1'").startswith("UserWarning "))
        self.assertTrue(self.check("check_version='7.2.*'").startswith("UserWarning "))
        # `.` is literal, not a regex wildcard.
        self.assertTrue(self.check("check_version='7x1x0'").startswith("UserWarning "))
        out = self.check("check_version='7.2.*', fail_on_version_mismatch=True")
        self.assertTrue(out.startswith("RuntimeError "), out)
        self.assertIn("matching '7\\.2\\..*'", out)
        self.assertIn("7.1.0", out)
        out = self.check("check_version=re.compile('8'), fail_on_version_mismatch=True")
        self.assertTrue(out.startswith("RuntimeError "), out)

    def test_arguments_of_the_wrong_kind_raise_type_error(self) -> None:
        def raised(expression: str) -> str:
            p = self.py(
                "import re, rocm_sdk\n"
                f"try:\n    rocm_sdk.initialize_process({expression})\n"
                "except TypeError as e:\n    print(e)\n"
            )
            self.assertEqual(p.returncode, 0, p.stderr)
            return p.stdout.strip()

        self.assertEqual(
            raised("preload_shortnames='amdhip64'"),
            "preload_shortnames must be a list of library short names, such as "
            "['amdhip64'], not str 'amdhip64'",
        )
        self.assertIn("not bytes b'amdhip64'", raised("preload_shortnames=b'amdhip64'"))
        self.assertIn("not int 7", raised("preload_shortnames=7"))
        self.assertEqual(
            raised("check_version=7.0"),
            "check_version must be a version string, such as '7.1.*', or a compiled "
            "re.Pattern, not float 7.0",
        )
        self.assertIn("not bytes b'7.1'", raised("check_version=b'7.1'"))
        # Lists, tuples and generators of names are all accepted.
        self.assertEqual(raised("preload_shortnames=[]"), "")
        self.assertEqual(raised("preload_shortnames=(n for n in ())"), "")

    def test_version_and_unknown_keywords(self) -> None:
        out = self.ok(
            "import rocm_sdk\nrocm_sdk.initialize_process(some_future_option=1)\n"
            "print(rocm_sdk.__version__)"
        )
        self.assertEqual(out.strip(), "7.1.0")

    def test_import_does_not_read_the_document(self) -> None:
        (self.pkg / "_dist_info.json").unlink()
        self.ok("import rocm_sdk")
        p = self.py("import rocm_sdk\nrocm_sdk.__version__")
        self.assertIn("DistInfoError", p.stderr)
        self.assertIn("_dist_info.json", p.stderr)


@unittest.skipUnless(compiler() and sys.platform.startswith("linux"), "needs a C compiler")
class PreloadTest(SiteTest):
    def setUp(self) -> None:
        super().setUp()
        compile_shared_library(
            self.site / "_rocm_sdk_core/lib/libamdhip64.so.7", "libamdhip64.so.7", "fake_hip_probe"
        )
        compile_shared_library(
            self.site / "_rocm_sdk_core/lib/libamd_comgr.so.3",
            "libamd_comgr.so.3",
            "fake_comgr_probe",
        )

    def global_symbols(self, code: str, env: dict | None = None) -> str:
        probe = (
            "\nimport ctypes\nme = ctypes.CDLL(None)\n"
            "print(hasattr(me, 'fake_hip_probe'), hasattr(me, 'fake_comgr_probe'))\n"
        )
        return self.ok("import rocm_sdk\n" + code + probe, env=env).strip().splitlines()[-1]

    def test_rtld_global_exposes_symbols(self) -> None:
        self.assertEqual(
            self.global_symbols("rocm_sdk.preload_libraries('amdhip64')"), "True False"
        )

    def test_rtld_local_keeps_them_private(self) -> None:
        out = self.global_symbols(
            "rocm_sdk.preload_libraries('amdhip64', rtld_global=False)\n"
            "print(rocm_sdk._ALL_CDLLS['amdhip64'].fake_hip_probe())"
        )
        self.assertEqual(out, "False False")

    def test_initialize_process_with_env_override(self) -> None:
        out = self.global_symbols(
            "rocm_sdk.initialize_process(preload_shortnames=['amdhip64'])",
            env={"ROCM_SDK_PRELOAD_LIBRARIES": " amd_comgr ; ,"},
        )
        self.assertEqual(out, "True True")
        out = self.global_symbols(
            "rocm_sdk.initialize_process(env_override=False)",
            env={"ROCM_SDK_PRELOAD_LIBRARIES": "amd_comgr"},
        )
        self.assertEqual(out, "False False")

    def test_bad_env_override_names_the_variable(self) -> None:
        p = self.py(
            "import rocm_sdk\nrocm_sdk.initialize_process()",
            env={"ROCM_SDK_PRELOAD_LIBRARIES": "amdhip64,hipblas"},
        )
        self.assertIn("RuntimeError", p.stderr)
        self.assertIn("ROCM_SDK_PRELOAD_LIBRARIES='amdhip64,hipblas'", p.stderr)
        self.assertIn("rocm[libraries]", p.stderr)


class MainTest(SiteTest):
    def test_execs_the_native_program_with_the_arguments(self) -> None:
        write_executable(
            self.site / "rocm_sdk_core/_bin/rocm-sdk", '#!/bin/sh\necho "native $*"\nexit 4\n'
        )
        code = "import sys, runpy\nsys.argv[0] = 'x'\nrunpy.run_module('rocm_sdk', run_name='__main__')"
        p = self.py(code, "path", "--cmake")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(p.stdout, "native path --cmake\n")
        p = self.py("import sys\nfrom rocm_sdk.__main__ import main\nsys.exit(main())", "version")
        self.assertEqual(p.stdout, "native version\n")

    def test_finds_core_wherever_the_import_system_does(self) -> None:
        # A `--target` or split install: core is on the import path but
        # not beside `rocm_sdk`.
        elsewhere = self.tmp / "elsewhere"
        write_executable(elsewhere / "rocm_sdk_core/_bin/rocm-sdk", '#!/bin/sh\necho "found $*"\n')
        (elsewhere / "rocm_sdk_core/__init__.py").write_text("")
        p = self.py(
            "import sys\nfrom rocm_sdk.__main__ import main, native_program\n"
            "print(native_program())\nsys.stdout.flush()\nsys.exit(main())",
            "path",
            env={"PYTHONPATH": f"{self.site}{os.pathsep}{elsewhere}"},
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, f"{elsewhere / 'rocm_sdk_core/_bin/rocm-sdk'}\nfound path\n")

    def test_the_shim_imports_little(self) -> None:
        # Every `rocm-sdk` command pays for what `rocm_sdk` imports before
        # the native program runs (docs/python.md, "Import cost"). `-S`: a
        # `.pth` file of the test machine's site may import them first.
        code = (
            "import sys\nbefore = set(sys.modules)\nfrom rocm_sdk.__main__ import main\n"
            "print(sorted({'pathlib', 'typing', 'collections.abc'} & (set(sys.modules) - before)))"
        )
        p = run_python(self.site, code, flags=("-S",))
        self.assertEqual((p.returncode, p.stdout), (0, "[]\n"), p.stderr)

    def test_missing_native_program_names_core(self) -> None:
        p = self.py("import sys\nfrom rocm_sdk.__main__ import main\nsys.exit(main())", "--help")
        self.assertEqual(p.returncode, 1)
        self.assertIn('pip install "rocm-sdk-core==7.1.0"', p.stderr)


if __name__ == "__main__":
    unittest.main()
