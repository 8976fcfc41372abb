"""Stale selections: the record the backend writes into the `rocm` wheel,
its comparison with this machine, and the one warning at `import
rocm_sdk` and at a devel tool's launch."""

from __future__ import annotations

import json
import os
import sys
import unittest
from pathlib import Path
from unittest import mock

from rocm_sdk import _detect
from rocm_sdk import _selection_record as sr

from .support import (
    TempDirTest,
    copy_package,
    load_fixture,
    run_python,
    tool_from_pypi,
    write_document,
)

AVAILABLE = ["gfx1100", "gfx942"]


def record(**changes) -> dict:
    """A record as the backend writes it on this machine: gfx942 requested."""
    base = sr.make_record(
        target="gfx942",
        source="environment",
        requested="gfx942",
        gpu_output=None,
        available_targets=AVAILABLE,
        default_target="gfx1100",
        sys_platform=sys.platform,
        machine_name=sr.machine(),
    )
    base.update(changes)
    return base


def mismatches(rec: dict, *, requested=None, gpu_output=None, platform=None, machine=None):
    return sr.mismatches(
        rec,
        requested=requested,
        sys_platform=platform or sys.platform,
        machine_name=machine or sr.machine(),
        gpu_output=gpu_output,
    )


class MismatchTest(unittest.TestCase):
    def test_same_inputs_agree(self) -> None:
        self.assertEqual(mismatches(record(), requested="gfx942"), [])
        detected = record(source="detected", requested=None, gpu_archs=["gfx942"])
        self.assertEqual(mismatches(detected, gpu_output="gfx942\n"), [])

    def test_another_requested_target_is_stale(self) -> None:
        (reason,) = mismatches(record(), requested="gfx1100")
        self.assertEqual(
            reason,
            "it selected gfx942 (from ROCM_SDK_TARGET_FAMILY=gfx942) but this machine "
            "selects gfx1100 (from ROCM_SDK_TARGET_FAMILY=gfx1100)",
        )

    def test_a_different_spelling_of_the_same_target_is_not(self) -> None:
        self.assertEqual(mismatches(record(), requested=" gfx942:xnack+ "), [])

    def test_an_explicit_choice_is_not_second_guessed_by_the_gpu(self) -> None:
        self.assertEqual(mismatches(record(), gpu_output="gfx1100\n"), [])

    def test_another_detected_gpu_is_stale(self) -> None:
        detected = record(source="detected", requested=None, gpu_archs=["gfx942"])
        (reason,) = mismatches(detected, gpu_output="gfx1100\n")
        self.assertIn("it selected gfx942 (detected GPU gfx942)", reason)
        self.assertIn("this machine selects gfx1100 (detected GPU gfx1100)", reason)
        # No GPU visible now: nothing to compare.
        self.assertEqual(mismatches(detected, gpu_output=None), [])

    def test_a_default_chosen_without_gpu_is_stale_where_a_gpu_selects_another(self) -> None:
        default = record(target="gfx1100", source="default", requested=None, gpu_archs=[])
        (reason,) = mismatches(default, gpu_output="gfx942\n")
        self.assertIn("gfx1100 (the default: no GPU was found)", reason)
        self.assertEqual(mismatches(default, gpu_output="gfx1100\n"), [])

    def test_another_platform_is_stale(self) -> None:
        (reason,) = mismatches(record(), requested="gfx942", machine="riscv64")
        self.assertIn(f"but this is {sys.platform}/riscv64", reason)

    def test_unavailable_request_and_targetless_record_say_nothing(self) -> None:
        self.assertEqual(mismatches(record(), requested="gfx950"), [])
        self.assertEqual(mismatches(record(target=None, source=None), requested="gfx1100"), [])


class CheckTest(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.package = self.tmp / "site" / "rocm_sdk"
        self.package.mkdir(parents=True)
        write_document(self.package, load_fixture("kpack"))
        env = mock.patch.dict(os.environ, {"PATH": ""}, clear=False)
        env.start()
        self.addCleanup(env.stop)
        os.environ.pop(sr.TARGET_ENV, None)

    def write(self, rec: dict) -> None:
        (self.package / sr.FILE_NAME).write_text(json.dumps(rec))

    def test_the_warning_names_the_extras_installed_and_both_commands(self) -> None:
        self.write(record())
        (self.tmp / "site" / "rocm_sdk_device_gfx942-7.1.0.dist-info").mkdir()
        (self.tmp / "site" / "rocm_sdk_devel-7.1.0.dist-info").mkdir()
        os.environ[sr.TARGET_ENV] = "gfx1100"
        message = sr.check(str(self.package), full=False)
        self.assertEqual(
            message,
            "the installed `rocm` package was selected for another machine or environment: "
            "it selected gfx942 (from ROCM_SDK_TARGET_FAMILY=gfx942) but this machine selects "
            "gfx1100 (from ROCM_SDK_TARGET_FAMILY=gfx1100). The installer probably reused a "
            "wheel it had cached; reinstall it without the cache: pip install --no-cache-dir "
            '--force-reinstall "rocm[devel,device]==7.1.0" (uv: uv pip install --reinstall '
            '--no-cache "rocm[devel,device]==7.1.0")',
        )

    def test_kernel_gpus_are_read_cheaply_and_offload_arch_only_in_full(self) -> None:
        self.write(record(source="detected", requested=None, gpu_archs=["gfx942"]))
        with mock.patch.object(_detect, "kfd_gpu_archs", return_value=["gfx1100"]):
            self.assertIn("gfx1100 (detected GPU gfx1100)", sr.check(str(self.package), full=False))
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        tool = bin_dir / "offload-arch"
        tool.write_text("#!/bin/sh\necho gfx1100\n")
        tool.chmod(0o755)
        os.environ["PATH"] = str(bin_dir)
        with mock.patch.object(_detect, "kfd_gpu_archs", return_value=[]):
            self.assertIsNone(sr.check(str(self.package), full=False))
            self.assertIn("gfx1100", sr.check(str(self.package), full=True))

    def test_missing_broken_or_old_records_say_nothing(self) -> None:
        os.environ[sr.TARGET_ENV] = "gfx1100"
        self.assertIsNone(sr.check(str(self.package), full=True))
        (self.package / sr.FILE_NAME).write_text("{not json")
        self.assertIsNone(sr.check(str(self.package), full=True))
        self.write({"target": "gfx942", "source": "environment"})  # before records had inputs
        self.assertIsNone(sr.check(str(self.package), full=True))


class ImportWarningTest(TempDirTest):
    """`import rocm_sdk` in a fresh interpreter."""

    def setUp(self) -> None:
        super().setUp()
        self.site = self.tmp / "site-packages"
        self.site.mkdir()
        package = copy_package("rocm_sdk", self.site)
        write_document(package, load_fixture("kpack"))
        (package / sr.FILE_NAME).write_text(json.dumps(record()))

    def test_one_warning_on_a_mismatch_none_otherwise(self) -> None:
        code = "import rocm_sdk\nimport rocm_sdk\nimport importlib; importlib.reload(rocm_sdk)\n"
        p = run_python(self.site, code, env={sr.TARGET_ENV: "gfx1100"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("StaleSelectionWarning"), 1, p.stderr)
        self.assertIn("rocm_sdk: the installed `rocm` package was selected", p.stderr)
        self.assertIn('pip install --no-cache-dir --force-reinstall "rocm==7.1.0"', p.stderr)
        p = run_python(self.site, "import rocm_sdk\n", env={sr.TARGET_ENV: "gfx942"})
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        p = run_python(self.site, "import rocm_sdk\n")
        self.assertEqual((p.returncode, p.stderr), (0, ""))

    def test_import_starts_no_process_and_survives_a_broken_record(self) -> None:
        code = (
            "import sys\nimport rocm_sdk\n"
            "print(' '.join(m for m in ('subprocess', 'logging', 'rocm_sdk._selector') "
            "if m in sys.modules))\n"
        )
        (self.site / "rocm_sdk" / sr.FILE_NAME).write_text(
            json.dumps(record(source="detected", requested=None, gpu_archs=["gfx942"]))
        )
        p = run_python(self.site, code)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "\n", ""))
        (self.site / "rocm_sdk" / sr.FILE_NAME).write_text('{"schema": 1, "target": 5}')
        p = run_python(self.site, "import rocm_sdk\n", env={sr.TARGET_ENV: "gfx1100"})
        self.assertEqual((p.returncode, p.stderr), (0, ""))


class DevelLaunchWarningTest(TempDirTest):
    """A devel tool's console script warns once and still runs its tool."""

    def setUp(self) -> None:
        super().setUp()
        self.site = self.tmp / "site-packages"
        self.site.mkdir()
        doc = load_fixture("kpack")
        write_document(copy_package("rocm_sdk_core", self.site), doc)
        package = copy_package("rocm_sdk", self.site)
        write_document(package, doc)
        (package / sr.FILE_NAME).write_text(json.dumps(record()))
        (self.site / "rocm_sdk_devel").mkdir()
        (self.site / "rocm_sdk_devel" / "__init__.py").write_text("")
        tool = self.site / "_rocm_sdk_devel" / "lib/llvm/bin/amdclang++"
        tool.parent.mkdir(parents=True)
        tool.write_text("#!/bin/sh\necho devel tool ran\n")
        tool.chmod(0o755)
        (self.site / "_rocm_sdk_devel" / ".device-links-stamp").write_text("")

    def launch(self, **env):
        code = "import sys\nfrom rocm_sdk_core._cli import amdclang_pp\nsys.exit(amdclang_pp())\n"
        return run_python(self.site, code, env=env)

    def test_mismatch_warns_on_one_line_and_the_tool_runs(self) -> None:
        p = self.launch(**{sr.TARGET_ENV: "gfx1100"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "devel tool ran\n")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertTrue(
            p.stderr.startswith("amdclang++: warning: the installed `rocm` package was selected"),
            p.stderr,
        )
        p = self.launch(**{sr.TARGET_ENV: "gfx942"})
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "devel tool ran\n", ""))

    def test_warm_path_loads_only_the_check(self) -> None:
        code = (
            "import sys\nbefore = set(sys.modules)\n"
            "from rocm_sdk_core import _cli\n"
            "_cli.warn_if_stale_selection('x', full=False)\n"
            "print(' '.join(sorted(set(sys.modules) - before)))\n"
        )
        p = run_python(self.site, code)
        self.assertEqual(p.returncode, 0, p.stderr)
        loaded = set(p.stdout.split())
        self.assertFalse(
            loaded & {"rocm_sdk", "subprocess", "logging", "pathlib", "dataclasses"}, loaded
        )
        self.assertIn("_rocm_sdk_core_selection_check", loaded)


if __name__ == "__main__":
    unittest.main()


def fake_wheel(directory: Path, dist: str, version: str, files: dict[str, bytes]) -> Path:
    """A minimal pure wheel of `dist` holding `files`."""
    import base64
    import hashlib
    import zipfile

    stem = f"{dist.replace('-', '_')}-{version}"
    dist_info = f"{stem}.dist-info"
    files = {
        **files,
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    path = directory / f"{stem}-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            rows.append(f"{name},sha256={digest.decode()},{len(data)}")
        rows.append(f"{dist_info}/RECORD,,")
        zf.writestr(f"{dist_info}/RECORD", "\n".join(rows) + "\n")
    return path


def pip_available() -> bool:
    import importlib.util

    return (
        importlib.util.find_spec("pip") is not None and importlib.util.find_spec("venv") is not None
    )


@unittest.skipUnless(pip_available() and os.name == "posix", "needs pip and venv")
class SharedPipCacheTest(TempDirTest):
    """The bug itself: two environments sharing pip's cache, each asking for
    another target, and the second gets the first one's wheel."""

    def setUp(self) -> None:
        super().setUp()
        from .test_backend import load_backend, make_sdist_tree

        root = make_sdist_tree(self.tmp / "src" / "rocm-7.1.0", load_fixture("kpack"))
        self.links = self.tmp / "links"
        load_backend(root).build_sdist(str(self.links))
        fake_wheel(self.links, "rocm-sdk-core", "7.1.0", {"rocm_sdk_core/__init__.py": b""})
        for target in AVAILABLE:
            fake_wheel(
                self.links,
                f"rocm-sdk-device-{target}",
                "7.1.0",
                {f"_rocm_sdk_device_marker/{target}": b""},
            )
        self.cache = self.tmp / "pip-cache"

    def installer(self, venv: Path, *, cache: bool) -> list[str]:
        """The install command (pip) for `venv`, before its requirements."""
        cache_flag = [] if cache else ["--no-cache-dir"]
        return [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            *cache_flag,
        ]

    def install(self, name: str, target: str, *, cache: bool = True):
        import subprocess

        venv = self.tmp / name
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "ROCM_SDK_"))
        }
        env.pop("PYTHONPATH", None)
        env.update(
            PIP_DISABLE_PIP_VERSION_CHECK="1",
            PIP_CACHE_DIR=str(self.cache),
            UV_CACHE_DIR=str(self.cache),
        )
        env[sr.TARGET_ENV] = target
        p = subprocess.run(
            [
                *self.installer(venv, cache=cache),
                "--no-index",
                "--find-links",
                str(self.links),
                "rocm[device]",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return venv, p.stdout + p.stderr

    #: What the installer says when it takes the wheel from its cache.
    reused = r"Using cached rocm-7\.1\.0-py3-none-linux_\w+\.whl"

    def devices(self, venv: Path) -> list[str]:
        (site,) = venv.glob("lib/python*/site-packages")
        return sorted(p.name for p in site.glob("rocm_sdk_device_*.dist-info"))

    def import_rocm_sdk(self, venv: Path, target: str):
        import subprocess

        return subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import rocm_sdk"],
            env={"PATH": "/usr/bin:/bin", sr.TARGET_ENV: target},
            capture_output=True,
            text=True,
            timeout=60,
        )

    def test_second_environment_gets_the_first_ones_wheel_and_is_warned(self) -> None:
        a, _ = self.install("venv-a", "gfx942")
        self.assertEqual(self.devices(a), ["rocm_sdk_device_gfx942-7.1.0.dist-info"])
        b, log = self.install("venv-b", "gfx1100")
        # The bug: the cached wheel was reused, with A's target.
        self.assertRegex(log, self.reused)
        self.assertEqual(self.devices(b), ["rocm_sdk_device_gfx942-7.1.0.dist-info"])
        p = self.import_rocm_sdk(b, "gfx1100")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("StaleSelectionWarning"), 1, p.stderr)
        self.assertIn(
            "it selected gfx942 (from ROCM_SDK_TARGET_FAMILY=gfx942) but this machine selects "
            "gfx1100 (from ROCM_SDK_TARGET_FAMILY=gfx1100)",
            p.stderr,
        )
        self.assertIn(
            'pip install --no-cache-dir --force-reinstall "rocm[device]==7.1.0" '
            '(uv: uv pip install --reinstall --no-cache "rocm[device]==7.1.0")',
            p.stderr,
        )
        # A agrees with itself; the remedy gives B its own target, silently.
        self.assertEqual(self.import_rocm_sdk(a, "gfx942").stderr, "")
        c, _ = self.install("venv-c", "gfx1100", cache=False)
        self.assertEqual(self.devices(c), ["rocm_sdk_device_gfx1100-7.1.0.dist-info"])
        self.assertEqual(self.import_rocm_sdk(c, "gfx1100").stderr, "")

    def test_a_wheel_cached_for_another_platform_is_not_reused(self) -> None:
        self.install("venv-a", "gfx942")
        platform_tag = __import__("sysconfig").get_platform().replace("-", "_")
        (cached,) = self.cache.rglob("rocm-7.1.0-*.whl")
        self.assertEqual(cached.name, f"rocm-7.1.0-py3-none-{platform_tag}.whl")
        # The same cache seen from a node of another architecture.
        foreign = "linux_riscv64" if platform_tag != "linux_riscv64" else "linux_x86_64"
        cached.rename(cached.with_name(f"rocm-7.1.0-py3-none-{foreign}.whl"))
        b, log = self.install("venv-b", "gfx1100")
        self.assertNotRegex(log, self.reused)
        self.assertEqual(self.devices(b), ["rocm_sdk_device_gfx1100-7.1.0.dist-info"])


@unittest.skipUnless(os.name == "posix", "needs a POSIX venv layout")
class SharedUvCacheTest(SharedPipCacheTest):
    """The same with uv (installed from PyPI into `target/python-tools`)."""

    reused = r"(?s)^(?!.*Built rocm).*\+ rocm-sdk-device-gfx942"

    def installer(self, venv: Path, *, cache: bool) -> list[str]:
        uv = tool_from_pypi("uv", "uv")
        return [
            str(uv),
            "pip",
            "install",
            "--python",
            str(venv / "bin" / "python"),
            *([] if cache else ["--no-cache"]),
        ]

    # uv keeps built wheels in a layout of its own; its tag rule is the same
    # (a wheel only for a platform it supports), shown with pip above.
    test_a_wheel_cached_for_another_platform_is_not_reused = None
