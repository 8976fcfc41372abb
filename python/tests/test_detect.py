"""GPU detection: the kernel's topology and a foreign `offload-arch`, never
our own console script."""

from __future__ import annotations

import os
import sys
import time
import unittest
from unittest import mock

from rocm_sdk import _detect

from .support import TempDirTest, write_executable


def node(root, index: int, gfx_target_version: int) -> None:
    d = root / str(index)
    d.mkdir(parents=True)
    (d / "properties").write_text(
        f"cpu_cores_count 0\nsimd_count 304\ngfx_target_version {gfx_target_version}\n"
        "vendor_id 4098\n"
    )


class ArchNameTest(unittest.TestCase):
    def test_gfx_target_version(self) -> None:
        cases = {
            90402: "gfx942",
            90010: "gfx90a",
            90012: "gfx90c",
            110501: "gfx1151",
            110000: "gfx1100",
            120001: "gfx1201",
            90000: "gfx900",
            100300: "gfx1030",
        }
        for value, arch in cases.items():
            self.assertEqual(_detect.arch_from_gfx_target_version(value), arch)
        self.assertIsNone(_detect.arch_from_gfx_target_version(0))
        self.assertIsNone(_detect.arch_from_gfx_target_version(91700))


class TopologyTest(TempDirTest):
    def test_gpu_nodes_in_numeric_order_once_each(self) -> None:
        nodes = self.tmp / "nodes"
        node(nodes, 0, 0)  # the CPU
        node(nodes, 10, 90402)
        node(nodes, 2, 110000)
        node(nodes, 3, 110000)
        (nodes / "junk").mkdir()
        self.assertEqual(_detect.kfd_gpu_archs(nodes), ["gfx1100", "gfx942"])
        self.assertEqual(_detect.kfd_gpu_archs(self.tmp / "absent"), [])
        out = _detect.detect_gpu_archs(path_value="", windows=False, nodes_dir=nodes)
        self.assertEqual(out, "gfx1100\ngfx942\n")


@unittest.skipUnless(os.name == "posix", "shell scripts")
class OffloadArchTest(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.marker = self.tmp / "ours-ran"
        self.ours = self.tmp / "venv-bin"
        # What pip writes for our console script: it must never run (it
        # would unpack devel).
        write_executable(
            self.ours / "offload-arch",
            f"#!{sys.executable}\nimport sys\nopen({str(self.marker)!r}, 'w').close()\n"
            "from rocm_sdk_core._cli import offload_arch\nsys.exit(offload_arch())\n",
        )
        self.real = self.tmp / "llvm-bin"
        write_executable(self.real / "offload-arch", "#!/bin/sh\necho gfx942:sramecc+:xnack-\n")
        self.nodes = self.tmp / "no-nodes"

    def test_skips_our_script_and_runs_a_real_one(self) -> None:
        path = os.pathsep.join([str(self.ours), str(self.tmp / "missing"), str(self.real)])
        self.assertEqual(_detect.find_foreign_offload_arch(path), self.real / "offload-arch")
        out = _detect.detect_gpu_archs(path_value=path, windows=False, nodes_dir=self.nodes)
        self.assertEqual(out, "gfx942:sramecc+:xnack-\n")
        self.assertFalse(self.marker.exists())

    def test_only_our_script_means_no_detection(self) -> None:
        out = _detect.detect_gpu_archs(
            path_value=str(self.ours), windows=False, nodes_dir=self.nodes
        )
        self.assertIsNone(out)
        self.assertFalse(self.marker.exists())

    def test_failing_program_means_no_detection(self) -> None:
        write_executable(self.real / "offload-arch", "#!/bin/sh\nexit 1\n")
        out = _detect.detect_gpu_archs(
            path_value=str(self.real), windows=False, nodes_dir=self.nodes
        )
        self.assertIsNone(out)

    def test_an_unsearchable_path_directory_is_skipped(self) -> None:
        """`/root/bin` on `PATH` after `sudo`: stat says EACCES there."""
        import errno

        forbidden = self.tmp / "forbidden"
        real_stat = os.stat

        def stat(path, *args, **kwargs):
            if str(path).startswith(str(forbidden)):
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real_stat(path, *args, **kwargs)

        path = os.pathsep.join([str(forbidden), str(self.real)])
        with mock.patch("os.stat", stat):
            self.assertEqual(_detect.find_foreign_offload_arch(path), self.real / "offload-arch")
            self.assertIsNone(_detect.find_foreign_offload_arch(str(forbidden)))

    def test_a_flood_of_output_is_cut_and_the_program_killed(self) -> None:
        write_executable(
            self.real / "offload-arch",
            "#!/bin/sh\nhead -c 1048576 /dev/zero | tr '\\0' x\necho\n",
        )
        start = time.monotonic()
        out = _detect.run_offload_arch(self.real / "offload-arch")
        self.assertTrue(out is None, f"{len(out or '')} characters kept")
        self.assertLess(time.monotonic() - start, 9)
        # Endless output: stopped at the limit, not at the time limit.
        write_executable(self.real / "offload-arch", "#!/bin/sh\nexec yes gfx942\n")
        start = time.monotonic()
        out = _detect.run_offload_arch(self.real / "offload-arch", timeout=30)
        self.assertTrue(out is None, f"{len(out or '')} characters kept")
        self.assertLess(time.monotonic() - start, 10)
        # Just under the limit is an answer.
        lines = _detect.OUTPUT_LIMIT // 7 - 1
        write_executable(self.real / "offload-arch", f"#!/bin/sh\nyes gfx942 | head -n {lines}\n")
        out = _detect.run_offload_arch(self.real / "offload-arch")
        self.assertTrue(out == "gfx942\n" * lines, f"{len(out or '')} characters")

    def test_a_silent_program_and_what_it_started_are_killed_at_the_time_limit(self) -> None:
        pid_file = self.tmp / "grandchild"
        write_executable(
            self.real / "offload-arch",
            f"#!/bin/sh\nsleep 300 &\necho $! > {pid_file}\nsleep 300\n",
        )
        start = time.monotonic()
        self.assertIsNone(_detect.run_offload_arch(self.real / "offload-arch", timeout=1))
        self.assertLess(time.monotonic() - start, 8)
        grandchild = int(pid_file.read_text())
        for _ in range(100):
            try:
                os.kill(grandchild, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            self.fail(f"process {grandchild} outlived the detection")

    def test_kernel_answer_wins_without_running_anything(self) -> None:
        node(self.nodes, 1, 90010)
        write_executable(self.real / "offload-arch", f"#!/bin/sh\ntouch {self.marker}\n")
        out = _detect.detect_gpu_archs(
            path_value=str(self.real), windows=False, nodes_dir=self.nodes
        )
        self.assertEqual(out, "gfx90a\n")
        self.assertFalse(self.marker.exists())


if __name__ == "__main__":
    unittest.main()
