"""The `rocm` sdist's PEP 517 backend: hooks called in a temporary sdist,
then a real `pip install --no-index` of the sdist into a fresh venv."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import unittest
import zipfile
from pathlib import Path
from unittest import mock

from .support import PYTHON_DIR, TempDirTest, load_fixture, write_document

PKG_INFO = """Metadata-Version: 2.4
Name: rocm
Version: {version}
Summary: ROCm SDK for Python: installs the ROCm packages for this machine
License-Expression: MIT
Project-URL: Homepage, https://github.com/ROCm/TheRock
Project-URL: Issues, https://github.com/ROCm/TheRock/issues
Requires-Python: >=3.9
Dynamic: Requires-Dist
Dynamic: Provides-Extra
Description-Content-Type: text/markdown

# rocm

Selects the ROCm packages for this machine.
"""


def make_sdist_tree(root: Path, doc: dict, *, pkg_info: bool = True) -> Path:
    """An unpacked `rocm` sdist as the pipeline lays it out."""
    root.mkdir(parents=True)
    shutil.copy(PYTHON_DIR / "pyproject.toml", root / "pyproject.toml")
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(PYTHON_DIR / "build_backend", root / "build_backend", ignore=ignore)
    shutil.copytree(PYTHON_DIR / "rocm_sdk", root / "rocm_sdk", ignore=ignore)
    write_document(root / "rocm_sdk", doc)
    if pkg_info:
        (root / "PKG-INFO").write_text(PKG_INFO.format(version=doc["version"]))
    return root


_loaded = 0


def load_backend(root: Path):
    """The backend module of the sdist at `root`, as a frontend imports it."""
    global _loaded
    _loaded += 1
    path = root / "build_backend" / "rocm_sdk_build_backend.py"
    spec = importlib.util.spec_from_file_location(f"_test_backend_{_loaded}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_metadata(text: str) -> tuple[dict[str, list[str]], str]:
    head, _, body = text.partition("\n\n")
    fields: dict[str, list[str]] = {}
    for line in head.splitlines():
        name, _, value = line.partition(": ")
        fields.setdefault(name, []).append(value)
    return fields, body


def no_gpu():
    """Detection sees no kernel GPUs (whatever machine runs the tests)."""
    return mock.patch("rocm_sdk._detect.kfd_gpu_archs", return_value=[])


class BackendHooksTest(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.doc = load_fixture("kpack")
        self.root = make_sdist_tree(self.tmp / "rocm-7.1.0", self.doc)
        self.backend = load_backend(self.root)
        self.env = mock.patch.dict(
            os.environ, {"ROCM_SDK_TARGET_FAMILY": "gfx942", "PATH": ""}, clear=False
        )
        self.env.start()
        self.addCleanup(self.env.stop)
        # The backend's own copy of the detector, so patching is per module.
        detect = self.backend._load_sibling("_detect")
        patcher = mock.patch.object(detect, "kfd_gpu_archs", return_value=[])
        patcher.start()
        self.addCleanup(patcher.stop)
        # The backend reports its choice on stderr (pip shows it with -v).
        self.stderr = io.StringIO()
        quiet = mock.patch.object(sys, "stderr", self.stderr)
        quiet.start()
        self.addCleanup(quiet.stop)

    def build(self, out: str = "dist", **kw) -> Path:
        name = self.backend.build_wheel(str(self.tmp / out), **kw)
        return self.tmp / out / name

    def test_no_build_requirements(self) -> None:
        self.assertEqual(self.backend.get_requires_for_build_wheel(), [])
        self.assertEqual(self.backend.get_requires_for_build_sdist({}), [])

    def test_metadata_is_computed_for_the_chosen_target(self) -> None:
        name = self.backend.prepare_metadata_for_build_wheel(str(self.tmp / "meta"))
        self.assertEqual(name, "rocm-7.1.0.dist-info")
        fields, body = read_metadata((self.tmp / "meta" / name / "METADATA").read_text())
        self.assertEqual(fields["Metadata-Version"], ["2.4"])
        self.assertEqual(fields["Name"], ["rocm"])
        self.assertEqual(fields["Version"], ["7.1.0"])
        self.assertEqual(fields["Requires-Python"], [">=3.9"])
        # The release's descriptive fields are static in PKG-INFO (PEP 643):
        # the wheel keeps them as written.
        self.assertEqual(fields["License-Expression"], ["MIT"])
        self.assertEqual(
            fields["Project-URL"],
            [
                "Homepage, https://github.com/ROCm/TheRock",
                "Issues, https://github.com/ROCm/TheRock/issues",
            ],
        )
        self.assertEqual(fields["Description-Content-Type"], ["text/markdown"])
        self.assertNotIn("Dynamic", fields)
        self.assertEqual(
            fields["Provides-Extra"],
            [
                "libraries",
                "devel",
                "profiler",
                "device",
                "device-gfx1100",
                "device-gfx942",
                "device-all",
            ],
        )
        self.assertEqual(fields["Requires-Dist"][0], "rocm-sdk-core==7.1.0")
        self.assertIn('rocm-sdk-device-gfx942==7.1.0; extra == "device"', fields["Requires-Dist"])
        self.assertTrue(body.startswith("# rocm"), body)
        self.assertNotIn("rocm==", " ".join(fields["Requires-Dist"]))

    def test_wheel_is_complete_and_recorded(self) -> None:
        wheel = self.build()
        tag = f"py3-none-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"
        self.assertEqual(wheel.name, f"rocm-7.1.0-{tag}.whl")
        with zipfile.ZipFile(wheel) as zf:
            names = zf.namelist()
            self.assertEqual(names[-1], "rocm-7.1.0.dist-info/RECORD")
            dist_info_at = [i for i, n in enumerate(names) if ".dist-info/" in n]
            self.assertEqual(dist_info_at, list(range(dist_info_at[0], len(names))))
            record = zf.read(names[-1]).decode().splitlines()
            listed = {}
            for line in record:
                path, digest, size = line.rsplit(",", 2)
                listed[path] = (digest, size)
            self.assertEqual(set(listed), set(names))
            for path in names[:-1]:
                data = zf.read(path)
                want = (
                    "sha256="
                    + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                )
                self.assertEqual(listed[path], (want, str(len(data))), path)
            self.assertIn("rocm_sdk/__init__.py", names)
            self.assertIn("rocm_sdk/_dist_info.json", names)
            self.assertFalse(any("__pycache__" in n or "build_backend" in n for n in names))
            self.assertEqual(
                json.loads(zf.read("rocm_sdk/_selection.json")),
                {
                    "schema": 1,
                    "target": "gfx942",
                    "source": "environment",
                    "requested": "gfx942",
                    "gpu_archs": None,
                    "available_targets": ["gfx1100", "gfx942"],
                    "default_target": "gfx1100",
                    "sys_platform": sys.platform,
                    "machine": os.uname().machine,
                },
            )
            self.assertEqual(
                zf.read("rocm-7.1.0.dist-info/entry_points.txt").decode(),
                "[console_scripts]\nrocm-sdk = rocm_sdk.__main__:main\n",
            )
            self.assertIn(f"Tag: {tag}\n".encode(), zf.read("rocm-7.1.0.dist-info/WHEEL"))

    def test_wheel_reuses_prepared_metadata(self) -> None:
        name = self.backend.prepare_metadata_for_build_wheel(str(self.tmp / "meta"))
        prepared = (self.tmp / "meta" / name / "METADATA").read_bytes()
        os.environ["ROCM_SDK_TARGET_FAMILY"] = "gfx1100"  # must not change the answer
        wheel = self.build(metadata_directory=str(self.tmp / "meta" / name))
        with zipfile.ZipFile(wheel) as zf:
            self.assertEqual(zf.read(f"{name}/METADATA"), prepared)
            self.assertEqual(json.loads(zf.read("rocm_sdk/_selection.json"))["target"], "gfx942")

    def test_reproducible(self) -> None:
        a = self.build("a").read_bytes()
        b = self.build("b").read_bytes()
        self.assertEqual(hashlib.sha256(a).hexdigest(), hashlib.sha256(b).hexdigest())

    def test_unavailable_target_lists_available(self) -> None:
        os.environ["ROCM_SDK_TARGET_FAMILY"] = "gfx950"
        with self.assertRaises(self.backend.BuildError) as ctx:
            self.backend.prepare_metadata_for_build_wheel(str(self.tmp / "meta"))
        self.assertTrue(
            str(ctx.exception).startswith(
                "Requested ROCM_SDK_TARGET_FAMILY=gfx950 is not available in the distribution "
                "(available: gfx1100, gfx942)"
            ),
            ctx.exception,
        )

    def test_detected_target_from_a_foreign_offload_arch(self) -> None:
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        tool = bin_dir / "offload-arch"
        tool.write_text("#!/bin/sh\necho gfx1100\n")
        tool.chmod(0o755)
        os.environ["ROCM_SDK_TARGET_FAMILY"] = ""
        os.environ["PATH"] = str(bin_dir)
        wheel = self.build()
        with zipfile.ZipFile(wheel) as zf:
            fields, _ = read_metadata(zf.read("rocm-7.1.0.dist-info/METADATA").decode())
            record = json.loads(zf.read("rocm_sdk/_selection.json"))
            self.assertEqual(
                (record["target"], record["source"], record["requested"], record["gpu_archs"]),
                ("gfx1100", "detected", "", ["gfx1100"]),
            )
        self.assertIn('rocm-sdk-device-gfx1100==7.1.0; extra == "device"', fields["Requires-Dist"])
        self.assertEqual(self.stderr.getvalue(), "rocm: target gfx1100 (detected)\n")

    def test_no_detection_means_default_and_no_generic_device_extra(self) -> None:
        os.environ.pop("ROCM_SDK_TARGET_FAMILY")
        wheel = self.build()
        with zipfile.ZipFile(wheel) as zf:
            fields, _ = read_metadata(zf.read("rocm-7.1.0.dist-info/METADATA").decode())
        self.assertNotIn("device", fields["Provides-Extra"])
        self.assertIn("device-gfx942", fields["Provides-Extra"])

    def test_source_date_epoch_follows_therock_package(self) -> None:
        """Blank is unset, a time past 2107 is clamped (the zip epoch below
        1980 already was), anything but whole seconds is one line."""
        date = lambda wheel: zipfile.ZipFile(wheel).infolist()[0].date_time  # noqa: E731
        for value, expected in [
            ("", (1980, 1, 1, 0, 0, 0)),
            ("  ", (1980, 1, 1, 0, 0, 0)),
            ("0", (1980, 1, 1, 0, 0, 0)),
            ("1700000000", (2023, 11, 14, 22, 13, 20)),
            ("5000000000", (2107, 12, 31, 23, 59, 58)),
            ("99999999999999999999", (2107, 12, 31, 23, 59, 58)),
        ]:
            os.environ["SOURCE_DATE_EPOCH"] = value
            self.assertEqual(date(self.build(f"d{len(value)}-{value[:3]}")), expected, value)
            sdist = self.backend.build_sdist(str(self.tmp / f"s{len(value)}-{value[:3]}"))
            self.assertTrue(sdist.endswith(".tar.gz"))
        for value in ["1.7e9", "-1", "soon", "1_000"]:
            os.environ["SOURCE_DATE_EPOCH"] = value
            for hook in (self.build, lambda: self.backend.build_sdist(str(self.tmp / "s"))):
                with self.assertRaises(self.backend.BuildError) as ctx:
                    hook()
                self.assertEqual(
                    str(ctx.exception), f"SOURCE_DATE_EPOCH={value} is not a number of seconds"
                )
        os.environ.pop("SOURCE_DATE_EPOCH")

    def test_an_unreadable_file_is_one_line(self) -> None:
        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied", "/root/secret")

        with mock.patch.object(self.backend, "_document", refuse):
            with self.assertRaises(self.backend.BuildError) as ctx:
                self.backend.build_wheel(str(self.tmp / "dist"))
        self.assertEqual(str(ctx.exception), "/root/secret: Permission denied")

    def test_inconsistent_pkg_info_is_refused(self) -> None:
        (self.root / "PKG-INFO").write_text(PKG_INFO.format(version="7.0.0"))
        with self.assertRaises(self.backend.BuildError) as ctx:
            self.build()
        self.assertIn("7.0.0", str(ctx.exception))

    def test_sdist_round_trip_is_reproducible(self) -> None:
        a = self.backend.build_sdist(str(self.tmp / "s1"))
        b = self.backend.build_sdist(str(self.tmp / "s2"))
        self.assertEqual(a, "rocm-7.1.0.tar.gz")
        self.assertEqual((self.tmp / "s1" / a).read_bytes(), (self.tmp / "s2" / b).read_bytes())
        with tarfile.open(self.tmp / "s1" / a) as tar:
            names = tar.getnames()
        self.assertIn("rocm-7.1.0/PKG-INFO", names)
        self.assertIn("rocm-7.1.0/build_backend/rocm_sdk_build_backend.py", names)
        self.assertIn("rocm-7.1.0/rocm_sdk/_dist_info.json", names)


def fake_core_wheel(directory: Path, version: str) -> Path:
    """A minimal `rocm-sdk-core` wheel whose native `rocm-sdk` echoes its arguments."""
    files = {
        "rocm_sdk_core/__init__.py": (b"", 0o644),
        "rocm_sdk_core/_bin/rocm-sdk": (b'#!/bin/sh\necho "native rocm-sdk $*"\n', 0o755),
        f"rocm_sdk_core-{version}.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: rocm-sdk-core\nVersion: {version}\n".encode(),
            0o644,
        ),
        f"rocm_sdk_core-{version}.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: py3-none-any\n",
            0o644,
        ),
    }
    path = directory / f"rocm_sdk_core-{version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(path, "w") as zf:
        for name, (data, mode) in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100000 | mode) << 16  # S_IFREG: pip needs it for +x
            zf.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{name},sha256={digest.decode()},{len(data)}")
        record.append(f"rocm_sdk_core-{version}.dist-info/RECORD,,")
        zf.writestr(f"rocm_sdk_core-{version}.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def pip_available() -> bool:
    return (
        importlib.util.find_spec("pip") is not None and importlib.util.find_spec("venv") is not None
    )


@unittest.skipUnless(pip_available() and os.name == "posix", "needs pip and venv")
class PipInstallTest(TempDirTest):
    """`pip install --no-index` of the sdist with build isolation: the
    backend runs in pip's isolated environment with nothing installed."""

    def pip_install(self, env_extra: dict[str, str]) -> subprocess.CompletedProcess:
        doc = load_fixture("kpack")
        root = make_sdist_tree(self.tmp / "src" / "rocm-7.1.0", doc)
        links = self.tmp / "links"
        backend = load_backend(root)
        with mock.patch.dict(os.environ):
            os.environ.pop("SOURCE_DATE_EPOCH", None)
            backend.build_sdist(str(links))
        fake_core_wheel(links, "7.1.0")
        venv = self.tmp / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "ROCM_SDK_"))}
        env.pop("PYTHONPATH", None)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        env["PIP_NO_CACHE_DIR"] = "1"
        env.update(env_extra)
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(venv / "bin" / "python"),
                "install",
                "--no-index",
                "--find-links",
                str(links),
                "rocm",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def test_a_bad_source_date_epoch_is_one_line_without_a_traceback(self) -> None:
        p = self.pip_install({"SOURCE_DATE_EPOCH": "1.7e9", "ROCM_SDK_TARGET_FAMILY": "gfx942"})
        self.assertNotEqual(p.returncode, 0)
        output = p.stdout + p.stderr
        self.assertIn("SOURCE_DATE_EPOCH=1.7e9 is not a number of seconds", output)
        self.assertNotIn("Traceback", output)

    def test_an_empty_or_late_source_date_epoch_installs(self) -> None:
        for value in ["", "5000000000"]:
            p = self.pip_install({"SOURCE_DATE_EPOCH": value, "ROCM_SDK_TARGET_FAMILY": "gfx942"})
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            shutil.rmtree(self.tmp / "src")
            shutil.rmtree(self.tmp / "links")
            shutil.rmtree(self.tmp / "venv")

    def test_install_from_sdist_offline(self) -> None:
        doc = load_fixture("kpack")
        root = make_sdist_tree(self.tmp / "src" / "rocm-7.1.0", doc)
        links = self.tmp / "links"
        backend = load_backend(root)
        sdist = links / backend.build_sdist(str(links))
        fake_core_wheel(links, "7.1.0")
        venv = self.tmp / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "ROCM_SDK_"))}
        env.pop("PYTHONPATH", None)
        env["ROCM_SDK_TARGET_FAMILY"] = "gfx942:xnack+"
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        env["PIP_NO_CACHE_DIR"] = "1"
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(python),
                "install",
                "--no-index",
                "--find-links",
                str(links),
                "rocm",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(sdist.is_file())
        probe = (
            "import importlib.metadata as m, json\n"
            "d = m.distribution('rocm')\n"
            "print(json.dumps([d.version, d.requires, d.metadata.get_all('Provides-Extra'),"
            " [e.name + '=' + e.value for e in d.entry_points]]))\n"
            "from rocm_sdk import _dist_info\nprint(_dist_info.determine_target_family())\n"
        )
        q = subprocess.run(
            [str(python), "-c", probe],
            env={"PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
        )
        self.assertEqual(q.returncode, 0, q.stderr)
        first, target = q.stdout.splitlines()
        version, requires, extras, entry_points = json.loads(first)
        self.assertEqual(version, "7.1.0")
        self.assertEqual(requires[0], "rocm-sdk-core==7.1.0")
        self.assertIn('rocm-sdk-device-gfx942==7.1.0; extra == "device"', requires)
        self.assertEqual(
            extras,
            [
                "libraries",
                "devel",
                "profiler",
                "device",
                "device-gfx1100",
                "device-gfx942",
                "device-all",
            ],
        )
        self.assertEqual(entry_points, ["rocm-sdk=rocm_sdk.__main__:main"])
        self.assertEqual(target, "gfx942")
        # The `rocm-sdk` script and `python -m rocm_sdk` reach the native program.
        r = subprocess.run(
            [str(venv / "bin" / "rocm-sdk"), "path", "--root"], capture_output=True, text=True
        )
        self.assertEqual(r.stdout, "native rocm-sdk path --root\n", r.stderr)
        r = subprocess.run(
            [str(python), "-m", "rocm_sdk", "version"], capture_output=True, text=True
        )
        self.assertEqual(r.stdout, "native rocm-sdk version\n", r.stderr)


if __name__ == "__main__":
    unittest.main()
