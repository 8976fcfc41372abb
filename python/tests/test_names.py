"""What frameworks ask for by name rather than by path (docs/python.md):
the reference's target values of `_dist_info`, libraries by unversioned
name, the library path, and post-releases of the selector. Each runs in a
fresh interpreter over a fake site-packages."""

from __future__ import annotations

import json

from .support import SiteTest, compile_shared_library, write_document

LIBRARY_RECORD = "_libraries.json"


def write_record(site, pure: str, distribution: str, libraries: dict, aliases=None) -> None:
    record = {"distribution": distribution, "libraries": libraries, "schema": 1}
    if aliases:
        record["aliases"] = aliases
    path = site / pure / LIBRARY_RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


class ReferenceTargetsTest(SiteTest):
    """`AVAILABLE_TARGET_FAMILIES` and its neighbours are the reference's
    values, while target choice keeps working on base targets."""

    def setUp(self) -> None:
        super().setUp()
        # The Debian kpack tree: gfx90a built twice (xnack on and off).
        self.doc["available_targets"] = ["gfx1030", "gfx90a"]
        self.doc["default_target"] = "gfx1030"
        self.doc["target_families"] = {
            "available": ["gfx1030", "gfx90a:xnack+", "gfx90a:xnack-"],
            "default": "gfx1030",
            "linux": [],
            "windows": [],
            "this": None,
        }
        write_document(self.pkg, self.doc)

    def test_targets_as_built(self) -> None:
        code = """
from rocm_sdk import _dist_info as d
print(d.AVAILABLE_TARGET_FAMILIES, d.DEFAULT_TARGET_FAMILY)
print(d.LINUX_TARGET_FAMILIES, d.WINDOWS_TARGET_FAMILIES, d.THIS_TARGET_FAMILY)
print(d.THIS_PACKAGE_ENTRY, d.THIS_PACKAGE_ENTRY.logical_name)
print(sorted(d.build_per_target_extras()))
"""
        lines = self.ok(code).splitlines()
        self.assertEqual(lines[0], "['gfx1030', 'gfx90a:xnack+', 'gfx90a:xnack-'] gfx1030")
        self.assertEqual(lines[1], "[] [] None")
        self.assertEqual(lines[2], "rocm meta")
        # Device extras stay one per base target.
        self.assertEqual(lines[3], "['device-all', 'device-gfx1030', 'device-gfx90a']")

    def test_package_names_are_the_references(self) -> None:
        self.touch("_rocm_sdk_libraries/__init__.py")
        code = """
from rocm_sdk import _dist_info as d
p = d.ALL_PACKAGES
print(p['device'].get_py_package_name('gfx90a:xnack+'), p['device'].has_py_package('gfx90a'))
print(p['meta'].get_py_package_name(), p['libraries'].get_py_package_name())
print([e.pure_py_package_name for e in p.values()])
print(repr(p['device']), repr(d.ALL_LIBRARIES['amdhip64']))
"""
        lines = self.ok(code).splitlines()
        self.assertEqual(lines[0], "_rocm_sdk_device_gfx90a False")
        self.assertEqual(lines[1], "_rocm _rocm_sdk_libraries")
        self.assertEqual(
            lines[2],
            "['rocm_sdk', 'rocm_sdk_core', 'rocm_sdk_libraries', 'rocm_sdk_device', "
            "'rocm_sdk_devel', 'rocm_profiler']",
        )
        self.assertEqual(
            lines[3],
            "rocm-sdk-device-{target_family} amdhip64(so_pattern=libamdhip64.so*, "
            "dll_pattern=amdhip64*.dll, package=rocm-sdk-core)",
        )

    def test_target_choice_keeps_base_targets(self) -> None:
        code = "from rocm_sdk import _dist_info as d\nprint(d.determine_target_family())"
        # A listed target is the reference's answer; a base target is ours.
        for requested, chosen in [
            ("gfx90a:xnack+", "gfx90a:xnack+"),
            ("gfx90a", "gfx90a"),
            ("gfx1030", "gfx1030"),
        ]:
            out = self.ok(code, env={"ROCM_SDK_TARGET_FAMILY": requested}).strip()
            self.assertEqual(out, chosen, requested)
        self.assertEqual(self.ok(code).strip(), "gfx1030")
        device = self.ok(
            "from rocm_sdk import _dist_info as d\n"
            "print(d.ALL_PACKAGES['device'].get_dist_package_name(d.determine_target_family()))",
            env={"ROCM_SDK_TARGET_FAMILY": "gfx90a:xnack-"},
        )
        self.assertEqual(device.strip(), "rocm-sdk-device-gfx90a")

    def test_documents_without_them_fall_back_to_the_units(self) -> None:
        del self.doc["target_families"]
        write_document(self.pkg, self.doc)
        out = self.ok(
            "from rocm_sdk import _dist_info as d\n"
            "print(d.AVAILABLE_TARGET_FAMILIES, d.DEFAULT_TARGET_FAMILY, d.THIS_TARGET_FAMILY)"
        )
        self.assertEqual(out.strip(), "['gfx1030', 'gfx90a'] gfx1030 None")


class FindLibraryPathTest(SiteTest):
    """`rocm_sdk.find_library_path(name)`: the alias's library, else the
    file of that name, else the highest versioned form, along the path."""

    def find(self, name: str) -> str:
        code = (
            "import sys, rocm_sdk\n"
            "try:\n    print(rocm_sdk.find_library_path(sys.argv[1]))\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n"
        )
        p = self.py(code, name)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip().replace(str(self.site), "SP")

    def test_rules(self) -> None:
        for f in [
            "_rocm_sdk_core/__init__.py",
            "_rocm_sdk_core/lib/libamdhip64.so.7",
            "_rocm_sdk_core/lib/libamdhip64.so",
            "_rocm_sdk_core/lib/libplain.so",
            "_rocm_sdk_core/lib/llvm/lib/libomp.so.5",
            "_rocm_sdk_libraries/lib/libfoo.so.2",
            "_rocm_sdk_libraries/lib/libfoo.so.10",
            "_rocm_sdk_libraries/lib/libfoo.so.10.1",
            "_rocm_sdk_libraries/lib/libfoo.so.x",
            "_rocm_sdk_core/lib/libfoo.so.99",
        ]:
            self.touch(f)
        write_record(
            self.site,
            "rocm_sdk_core",
            "rocm-sdk-core",
            {"amdhip64": "lib/libamdhip64.so.7"},
            {"lib/libamdhip64.so": "libamdhip64.so.7"},
        )
        # The alias stands for the real library: that file, not the alias.
        self.assertEqual(self.find("libamdhip64.so"), "SP/_rocm_sdk_core/lib/libamdhip64.so.7")
        self.assertEqual(self.find("libplain.so"), "SP/_rocm_sdk_core/lib/libplain.so")
        self.assertEqual(self.find("libomp.so"), "SP/_rocm_sdk_core/lib/llvm/lib/libomp.so.5")
        # Libraries come first on the path; within it the highest version.
        self.assertEqual(self.find("libfoo.so"), "SP/_rocm_sdk_libraries/lib/libfoo.so.10.1")
        missing = self.find("libcublas.so")
        self.assertTrue(missing.startswith("LibraryNotFoundError no shared library named"), missing)
        self.assertIn("SP/_rocm_sdk_core/lib", missing)
        self.assertTrue(self.find("lib/libamdhip64.so").startswith("ValueError"))

    def test_a_record_path_leaving_the_package_is_refused(self) -> None:
        self.touch("_rocm_sdk_core/lib/libamdhip64.so.7")
        write_record(
            self.site,
            "rocm_sdk_core",
            "rocm-sdk-core",
            {},
            {"../../evil/libamdhip64.so": "libamdhip64.so.7"},
        )
        self.assertTrue(self.find("libamdhip64.so").startswith("DistInfoError"))


class LibraryDirectoriesTest(SiteTest):
    def test_installed_directories_in_search_order(self) -> None:
        for d in [
            "_rocm_profiler/lib",
            "_rocm_sdk_core/lib/llvm/lib",
            "_rocm_sdk_core/lib/rocm_sysdeps/lib",
            "_rocm_sdk_core/lib",
            "_rocm_sdk_libraries/lib",
        ]:
            (self.site / d).mkdir(parents=True, exist_ok=True)
        out = self.ok(
            "import os, rocm_sdk\n"
            "print(os.pathsep.join(str(p) for p in rocm_sdk.library_directories()))"
        )
        self.assertEqual(
            out.strip().replace(str(self.site), "SP").split(":"),
            [
                "SP/_rocm_sdk_libraries/lib",
                "SP/_rocm_sdk_core/lib",
                "SP/_rocm_sdk_core/lib/rocm_sysdeps/lib",
                "SP/_rocm_sdk_core/lib/llvm/lib",
                "SP/_rocm_profiler/lib",
            ],
        )


class LegacyLibraryDirectoriesTest(SiteTest):
    mode = "legacy"

    def test_each_installed_family_in_release_order(self) -> None:
        for d in [
            "_rocm_sdk_libraries_gfx94X_dcgpu_n1/lib",
            "_rocm_sdk_libraries_gfx110X_all_n1/lib",
            "_rocm_sdk_core_n1/lib",
        ]:
            (self.site / d).mkdir(parents=True, exist_ok=True)
        out = self.ok(
            "import rocm_sdk\nprint([p.parent.name for p in rocm_sdk.library_directories()])"
        )
        self.assertEqual(
            out.strip(),
            "['_rocm_sdk_libraries_gfx110X_all_n1', '_rocm_sdk_libraries_gfx94X_dcgpu_n1', "
            "'_rocm_sdk_core_n1']",
        )


class AliasPreloadTest(SiteTest):
    """`preload_libraries` loads the runtime alias after its library, so the
    bare name reaches the one copy (a real shared object stands for an
    alias here: SONAME its own name, `DT_NEEDED` the library)."""

    def test_bare_name_after_preload(self) -> None:
        lib = self.site / "_rocm_sdk_core/lib"
        self.touch("_rocm_sdk_core/__init__.py")
        compile_shared_library(lib / "libamdhip64.so.7", "libamdhip64.so.7", "hipGetDeviceCount")
        import subprocess

        from .support import compiler

        source = self.tmp / "alias.c"
        source.write_text("")
        subprocess.run(
            [
                compiler(),
                "-shared",
                "-Wl,-soname,libamdhip64.so",
                "-Wl,--no-as-needed,--enable-new-dtags,-rpath,$ORIGIN",
                "-o",
                str(lib / "libamdhip64.so"),
                str(source),
                str(lib / "libamdhip64.so.7"),
            ],
            check=True,
            capture_output=True,
        )
        write_record(
            self.site,
            "rocm_sdk_core",
            "rocm-sdk-core",
            {"amdhip64": "lib/libamdhip64.so.7"},
            {"lib/libamdhip64.so": "libamdhip64.so.7"},
        )
        code = """
import ctypes, rocm_sdk
def opens():
    try:
        ctypes.CDLL("libamdhip64.so")
        return "found"
    except OSError:
        return "not found"
before = opens()
rocm_sdk.initialize_process(preload_shortnames=["amdhip64"])
hip = ctypes.CDLL("libamdhip64.so")
real = rocm_sdk._ALL_CDLLS["amdhip64"]
same = ctypes.cast(hip.hipGetDeviceCount, ctypes.c_void_p).value == ctypes.cast(
    real.hipGetDeviceCount, ctypes.c_void_p).value
print(before, same, hip.hipGetDeviceCount())
"""
        self.assertEqual(self.ok(code).strip(), "not found True 42")


class PostReleaseTest(SiteTest):
    """A post-release `7.1.0.post1` of the selector over the 7.1.0 packages."""

    def setUp(self) -> None:
        super().setUp()
        self.doc["selector_version"] = "7.1.0.post1"
        write_document(self.pkg, self.doc)

    def test_versions_and_pins(self) -> None:
        out = self.ok(
            "import rocm_sdk\nfrom rocm_sdk import _dist_info as d\n"
            "print(rocm_sdk.__version__, d.RELEASE_VERSION, "
            "d.ALL_PACKAGES['core'].get_dist_package_require(), d.build_install_requires())"
        )
        self.assertEqual(
            out.strip(), "7.1.0.post1 7.1.0 rocm-sdk-core==7.1.0 ['rocm-sdk-core==7.1.0']"
        )

    def test_check_version_accepts_the_post_release_and_the_release(self) -> None:
        code = (
            "import sys, warnings, rocm_sdk\nwarnings.simplefilter('error')\n"
            "try:\n    rocm_sdk.initialize_process(check_version=sys.argv[1])\n    print('ok')\n"
            "except (UserWarning, RuntimeError) as e:\n    print(type(e).__name__)\n"
        )
        for version, expected in [
            ("7.1.0.post1", "ok"),
            ("7.1.0", "ok"),
            ("7.1.*", "ok"),
            ("7.1.1", "UserWarning"),
            ("7.1.0.post2", "UserWarning"),
        ]:
            p = self.py(code, version)
            self.assertEqual(p.stdout.strip(), expected, version)
