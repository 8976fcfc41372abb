"""The console-script trampolines of rocm-sdk-core and rocm-profiler,
run the way pip's scripts run them, against a fake site-packages whose
tools are shell scripts that print where they are and their arguments."""

from __future__ import annotations

import os
import sys
import unittest
from pathlib import Path

from .support import (
    TempDirTest,
    copy_package,
    load_fixture,
    run_python,
    write_document,
    write_executable,
)

TOOL = """#!/bin/sh
echo "{where} pid=$$ argv0=$0 args=$*"
exit {status}
"""

# A fake native `rocm-sdk`: records its call, then does what `init` does
# to the markers the trampoline checks (tar gone, tree present, stamp).
FAKE_ROCM_SDK = """#!/bin/sh
echo "$*" >> "{log}"
sp="$(dirname "$0")/../.."
[ -f "{fail}" ] && exit 5
rm -f "$sp/rocm_sdk_devel/_devel.tar"
mkdir -p "$sp/_rocm_sdk_devel/lib/llvm/bin"
for d in $(ls "$sp" | grep -E '^(rocm_sdk_core-|rocm_sdk_libraries|rocm_sdk_device_|rocm_profiler-).*\\.dist-info$' | LC_ALL=C sort); do
  echo "$d $(stat -c %i "$sp/$d/RECORD" 2>/dev/null || echo -)"
done > "$sp/_rocm_sdk_devel/.device-links-stamp"
cp "$sp/_rocm_sdk_core/lib/llvm/bin/amdclang++" "$sp/_rocm_sdk_devel/lib/llvm/bin/amdclang++"
sed -i 's/^echo "core/echo "devel/' "$sp/_rocm_sdk_devel/lib/llvm/bin/amdclang++"
exit 0
"""


def script_code(module: str, function: str, argv0: str) -> str:
    """What pip's console script does."""
    return (
        f"import re, sys\nfrom {module} import {function}\n"
        f"sys.argv[0] = {argv0!r}\nsys.exit({function}())\n"
    )


class CoreTrampolineTest(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.site = self.tmp / "site-packages"
        self.site.mkdir()
        self.doc = load_fixture("kpack")
        core = copy_package("rocm_sdk_core", self.site)
        write_document(core, self.doc)
        self.log = self.tmp / "init.log"
        self.fail_marker = self.tmp / "init-fails"
        write_executable(
            core / "_bin" / "rocm-sdk",
            FAKE_ROCM_SDK.format(log=self.log, fail=self.fail_marker),
        )
        self.core_root = self.site / "_rocm_sdk_core"
        write_executable(
            self.core_root / "lib/llvm/bin/amdclang++", TOOL.format(where="core", status=3)
        )
        write_executable(self.core_root / "bin/rocminfo", TOOL.format(where="core", status=0))

    def run_script(self, function: str, *args: str):
        return run_python(self.site, script_code("rocm_sdk_core._cli", function, "x"), *args)

    def install_devel(self, *, unpacked: bool) -> None:
        (self.site / "rocm_sdk_devel").mkdir()
        (self.site / "rocm_sdk_devel" / "__init__.py").write_text("")
        if unpacked:
            tree = self.site / "_rocm_sdk_devel"
            write_executable(tree / "lib/llvm/bin/amdclang++", TOOL.format(where="devel", status=0))
            (tree / ".device-links-stamp").write_text("")
        else:
            (self.site / "rocm_sdk_devel" / "_devel.tar").write_bytes(b"")

    def init_calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def test_without_devel_runs_core_tool_with_arguments_and_status(self) -> None:
        p = self.run_script("amdclang_pp", "-c", "a b.c")
        self.assertEqual(p.returncode, 3, p.stderr)
        tool = self.core_root / "lib/llvm/bin/amdclang++"
        self.assertIn(f"core pid={p.stdout.split('pid=')[1].split()[0]}", p.stdout)
        self.assertIn(f"argv0={tool}", p.stdout)
        self.assertTrue(p.stdout.rstrip().endswith("args=-c a b.c"), p.stdout)
        self.assertEqual(self.init_calls(), [])

    def test_warm_path_execs_devel_tool_in_the_same_process_without_init(self) -> None:
        self.install_devel(unpacked=True)
        code = "import os, sys\nprint('python pid=%d' % os.getpid(), flush=True)\n" + script_code(
            "rocm_sdk_core._cli", "amdclang_pp", "amdclang++"
        )
        p = run_python(self.site, code, "--version")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        python_pid = lines[0].split("=")[1]
        self.assertTrue(lines[1].startswith(f"devel pid={python_pid} "), p.stdout)
        self.assertEqual(self.init_calls(), [])

    def test_warm_path_imports_nothing_heavy(self) -> None:
        self.install_devel(unpacked=True)
        code = (
            "import sys\nbefore = set(sys.modules)\n"
            "from rocm_sdk_core import _cli\n"
            "print(_cli.resolve(_cli._scripts()['amdclang_pp']))\n"
            "print(' '.join(sorted(set(sys.modules) - before)))\n"
        )
        p = run_python(self.site, code)
        self.assertEqual(p.returncode, 0, p.stderr)
        path, modules = p.stdout.splitlines()
        self.assertEqual(Path(path), self.site / "_rocm_sdk_devel/lib/llvm/bin/amdclang++")
        # `json` and what it imports on this Python (3.9 loads `re` for it;
        # 3.11 has `re` loaded at startup already).
        json_alone = run_python(
            self.site,
            "import sys\nbefore = set(sys.modules)\nimport json\n"
            "print(' '.join(sorted(set(sys.modules) - before)))\n",
        )
        self.assertEqual(json_alone.returncode, 0, json_alone.stderr)
        allowed = {
            "rocm_sdk_core",
            "rocm_sdk_core._cli",
            "rocm_sdk_core._console",
            *json_alone.stdout.split(),
        }
        self.assertIn("json.decoder", allowed)
        self.assertLessEqual(set(modules.split()), allowed)
        self.assertIn("rocm_sdk_core._cli", modules.split())

    def test_packed_devel_runs_init_first_then_the_devel_tool(self) -> None:
        self.install_devel(unpacked=False)
        p = self.run_script("amdclang_pp", "x.c")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(self.init_calls(), ["init --quiet"])
        self.assertTrue(p.stdout.startswith("devel "), p.stdout)
        # Second launch: warm, no init.
        p = self.run_script("amdclang_pp", "x.c")
        self.assertTrue(p.stdout.startswith("devel "), p.stdout)
        self.assertEqual(self.init_calls(), ["init --quiet"])

    def test_device_wheel_change_runs_init_once(self) -> None:
        self.install_devel(unpacked=True)
        (self.site / "rocm_sdk_device_gfx942-7.1.0.dist-info").mkdir()
        p = self.run_script("amdclang_pp")
        self.assertEqual(self.init_calls(), ["init --quiet"], p.stderr)
        self.run_script("amdclang_pp")
        self.assertEqual(self.init_calls(), ["init --quiet"])
        # Removing it is a change too.
        (self.site / "rocm_sdk_device_gfx942-7.1.0.dist-info").rmdir()
        self.run_script("amdclang_pp")
        self.assertEqual(self.init_calls(), ["init --quiet"] * 2)

    def test_a_stamp_that_is_a_pipe_or_a_link_is_never_read(self) -> None:
        """Anyone who can write the tree could plant one: opening a pipe
        waits for a writer forever, reading /dev/zero never ends. Neither
        is a stamp, so init runs (and replaces it)."""
        self.install_devel(unpacked=True)
        stamp = self.site / "_rocm_sdk_devel" / ".device-links-stamp"
        stamp.unlink()
        os.mkfifo(stamp)
        code = "from rocm_sdk_core import _cli\nprint(_cli.devel_needs_init(_cli._SITE))\n"
        p = run_python(self.site, code)
        self.assertEqual((p.returncode, p.stdout), (0, "True\n"), p.stderr)
        stamp.unlink()
        os.symlink("/dev/zero", stamp)
        p = run_python(self.site, code)
        self.assertEqual((p.returncode, p.stdout), (0, "True\n"), p.stderr)

    def test_reinstalled_runtime_wheel_runs_init_once(self) -> None:
        # A reinstall or an image layer's copy of site-packages writes a new
        # RECORD; the devel tree's hard links to that wheel's files are then
        # copies, and the next tool launch must have `rocm-sdk init` mend them.
        self.install_devel(unpacked=True)
        dist_info = self.site / "rocm_sdk_core-7.1.0.dist-info"
        dist_info.mkdir()
        (dist_info / "RECORD").write_text("first\n")
        self.run_script("amdclang_pp")
        self.assertEqual(self.init_calls(), ["init --quiet"])
        self.run_script("amdclang_pp")
        self.assertEqual(self.init_calls(), ["init --quiet"], "the stamp is current now")
        (dist_info / "RECORD.new").write_text("first\n")
        os.replace(dist_info / "RECORD.new", dist_info / "RECORD")
        self.run_script("amdclang_pp")
        self.assertEqual(self.init_calls(), ["init --quiet"] * 2)
        self.run_script("amdclang_pp")
        self.assertEqual(self.init_calls(), ["init --quiet"] * 2)

    def test_no_init_variable_skips_init(self) -> None:
        # What `rocm-sdk test` sets, so its report shows what a launch would mend.
        self.install_devel(unpacked=True)
        (self.site / "rocm_sdk_device_gfx942-7.1.0.dist-info").mkdir()
        code = "import os\nos.environ['ROCM_SDK_NO_INIT'] = '1'\n" + script_code(
            "rocm_sdk_core._cli", "amdclang_pp", "amdclang++"
        )
        p = run_python(self.site, code)
        self.assertTrue(p.stdout.startswith("devel "), p.stdout)
        self.assertEqual(self.init_calls(), [])

    def test_system_information_tool_never_unpacks(self) -> None:
        self.install_devel(unpacked=False)
        p = self.run_script("rocminfo")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("core "), p.stdout)
        self.assertEqual(self.init_calls(), [])
        self.assertTrue((self.site / "rocm_sdk_devel" / "_devel.tar").exists())

    def test_absent_tool_is_one_line_and_127(self) -> None:
        p = self.run_script("hipcc", "--version")
        self.assertEqual(p.returncode, 127)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("hipcc: this tool is not part of this ROCm installation", p.stderr)
        self.assertIn(str(self.core_root / "bin" / "hipcc"), p.stderr)

    def test_failed_init_is_reported(self) -> None:
        self.install_devel(unpacked=False)
        self.fail_marker.write_text("")
        p = self.run_script("amdclang_pp")
        self.assertEqual(p.returncode, 5)
        self.assertIn("rocm-sdk init", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_missing_native_program_is_reported(self) -> None:
        self.install_devel(unpacked=False)
        (self.site / "rocm_sdk_core" / "_bin" / "rocm-sdk").unlink()
        p = self.run_script("amdclang_pp")
        self.assertEqual(p.returncode, 1)
        self.assertIn("reinstall rocm-sdk-core", p.stderr)

    def test_functions_come_from_the_document(self) -> None:
        code = (
            "from rocm_sdk_core import _cli\n"
            "print(' '.join(sorted(s['function'] for s in _cli._scripts().values())))\n"
            "try:\n    from rocm_sdk_core._cli import rocprof_compute\n"
            "except ImportError as e:\n    print('ImportError')\n"
        )
        p = run_python(self.site, code)
        self.assertEqual(p.returncode, 0, p.stderr)
        functions, error = p.stdout.splitlines()
        expected = sorted(
            s["function"] for s in self.doc["console_scripts"] if s["package"] == "core"
        )
        self.assertEqual(functions.split(), expected)
        self.assertIn("amdclang_pp", functions.split())
        self.assertEqual(error, "ImportError")

    def test_tool_of_another_platform_is_refused(self) -> None:
        for s in self.doc["console_scripts"]:
            if s["function"] == "rocminfo":
                s["platforms"] = ["win32"]
        write_document(self.site / "rocm_sdk_core", self.doc)
        p = self.run_script("rocminfo")
        self.assertEqual(p.returncode, 127)
        self.assertIn(f"not available on {sys.platform}", p.stderr)


@unittest.skipUnless(sys.platform.startswith("linux"), "profiler tools are Linux only")
class ProfilerTrampolineTest(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.site = self.tmp / "site-packages"
        self.site.mkdir()
        self.doc = load_fixture("legacy")  # nonce `_n1`
        write_document(copy_package("rocm_profiler", self.site), self.doc)
        copy_package("rocm_sdk_core", self.site)  # the profiler's scripts use core's table
        self.profiler = self.site / "_rocm_profiler_n1"
        self.core = self.site / "_rocm_sdk_core_n1"
        write_executable(
            self.profiler / "bin/rocprof-sys-run",
            '#!/bin/sh\necho "LD=$LD_LIBRARY_PATH"\necho "PY=$PYTHONPATH"\necho "args=$*"\n',
        )

    def run_script(self, function: str, *args: str, env: dict | None = None):
        code = script_code("rocm_profiler._cli", function, function)
        return run_python(self.site, code, *args, env=env)

    def test_paths_are_prepended(self) -> None:
        p = self.run_script("rocprof_sys_run", "--version", env={"LD_LIBRARY_PATH": "/opt/x"})
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = dict(line.split("=", 1) for line in p.stdout.splitlines())
        expected_ld = [
            str(self.profiler / "lib"),
            str(self.core / "lib/rocm_sysdeps/lib"),
            "/opt/x",
        ]
        self.assertEqual(lines["LD"].split(os.pathsep), expected_ld)
        self.assertEqual(lines["PY"], str(self.site))  # compute dir absent: unchanged
        self.assertEqual(lines["args"], "--version")

    def test_compute_dir_goes_first_on_pythonpath(self) -> None:
        compute = self.profiler / "libexec/rocprofiler-compute"
        compute.mkdir(parents=True)
        p = self.run_script("rocprof_sys_run")
        lines = dict(line.split("=", 1) for line in p.stdout.splitlines())
        self.assertEqual(lines["PY"].split(os.pathsep), [str(compute), str(self.site)])

    def test_absent_tool_is_127(self) -> None:
        p = self.run_script("rocprof_compute")
        self.assertEqual(p.returncode, 127)
        self.assertIn("rocprof-compute: this tool is not part", p.stderr)
        self.assertIn("rocm[profiler]", p.stderr)


if __name__ == "__main__":
    unittest.main()
