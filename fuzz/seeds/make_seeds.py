"""Writes the committed seed corpora of the fuzz targets (`fuzz/seeds/<target>/`).

Standard library plus `gcc` and `zstd` (both in the test packages of
`xtask/src/ci.rs`). Every byte is fixed (tar and zip times, owners,
member order; ELF seeds without build ids), so a rerun on the same
toolchain gives the same files. Run it from anywhere:

    python3 fuzz/seeds/make_seeds.py

The first byte of an archive seed is the target's mode byte (see each
target's doc comment): bit 0 clear means "compress the payload in the
target", so most seeds are plain tars the fuzzer mutates structurally.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import lzma
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MTIME = 1_700_000_000


def write(target: str, name: str, data: bytes) -> None:
    directory = HERE / target
    directory.mkdir(exist_ok=True)
    (directory / name).write_bytes(data)


def tar_bytes(members: list[tuple]) -> bytes:
    """A tar of `(name, kind, value, mode)`: kind `file` (value: bytes),
    `dir`, `symlink` or `hardlink` (value: the target)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, kind, value, mode in members:
            info = tarfile.TarInfo(name)
            info.mtime = MTIME
            info.mode = mode
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            data = None
            if kind == "file":
                info.size = len(value)
                data = io.BytesIO(value)
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
            elif kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = value
            elif kind == "hardlink":
                info.type = tarfile.LNKTYPE
                info.linkname = value
            tar.addfile(info, data)
    return out.getvalue()


def zstd_bytes(data: bytes) -> bytes:
    return subprocess.run(
        ["zstd", "-q", "-1", "-c"], input=data, stdout=subprocess.PIPE, check=True
    ).stdout


def elf_seeds() -> None:
    source = "extern int sib(void);\nint lib_fn(void) { return 42; }\n"
    flags = ["-shared", "-fPIC", "-nostdlib", "-O1", "-s", "-Wl,--build-id=none",
             "-Wl,-z,noseparate-code", "-Wl,-z,max-page-size=4096"]
    variants = {
        # (extra flags, request byte): 0 append+force, 1 append, 2 set+force
        "runpath.so": (["-Wl,--enable-new-dtags", "-Wl,-rpath,/opt/old", "-Wl,-soname,librun.so.1"], 0),
        "rpath.so": (["-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/../lib"], 1),
        "nopath.so": (["-Wl,-soname,libnopath.so.2"], 2),
        "relro.so": (["-Wl,-z,relro,-z,now", "-Wl,--enable-new-dtags", "-Wl,-rpath,/a:/b"], 0),
    }
    with tempfile.TemporaryDirectory() as tmp:
        c = Path(tmp) / "lib.c"
        c.write_text(source)
        for name, (extra, request) in variants.items():
            out = Path(tmp) / name
            subprocess.run(["gcc", *flags, *extra, "-o", str(out), str(c), "-Wl,--no-as-needed", "-lc"],
                           check=True)
            write("elf_edit", name, bytes([request]) + out.read_bytes())
        prog = Path(tmp) / "prog.c"
        prog.write_text("void _start(void) { for (;;) {} }\n")
        out = Path(tmp) / "pie"
        subprocess.run(["gcc", "-nostdlib", "-static-pie", "-fPIE", "-O1", "-s",
                        "-Wl,--build-id=none", "-Wl,-z,noseparate-code",
                        "-o", str(out), str(prog)], check=True)
        write("elf_edit", "static-pie", bytes([0]) + out.read_bytes())


def artifact_seeds() -> None:
    stage = "core/hip/stage"
    members = [
        ("artifact_manifest.txt", "file", f"{stage}\n".encode(), 0o644),
        (stage, "dir", None, 0o755),
        (f"{stage}/lib", "dir", None, 0o755),
        (f"{stage}/lib/libamdhip64.so.6", "file", b"\x7fELF not really\n", 0o755),
        (f"{stage}/lib/libamdhip64.so", "symlink", "libamdhip64.so.6", 0o777),
        (f"{stage}/lib/libcopy.so.6", "hardlink", f"{stage}/lib/libamdhip64.so.6", 0o755),
        (f"{stage}/bin", "dir", None, 0o755),
        (f"{stage}/bin/hipcc", "file", b"#!/bin/sh\necho hipcc\n", 0o755),
        (f"{stage}/bin/hipconfig", "symlink", "../lib/llvm/bin/clang", 0o777),
    ]
    tar = tar_bytes(members)
    write("artifact_archive", "tar-for-zstd", bytes([0]) + tar)
    write("artifact_archive", "tar-for-xz", bytes([2]) + tar)
    write("artifact_archive", "raw.tar.zst", bytes([1]) + zstd_bytes(tar))
    xz = lzma.compress(tar, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=0)
    write("artifact_archive", "raw.tar.xz", bytes([3]) + xz)
    two = tar_bytes([
        ("artifact_manifest.txt", "file", b"a/stage\n\nb/stage\n", 0o644),
        ("a/stage/share/doc.txt", "file", b"doc\n", 0o644),
        ("b/stage/share/link", "symlink", "doc.txt", 0o777),
    ])
    write("artifact_archive", "two-prefixes", bytes([0]) + two)


def devel_seeds() -> None:
    root = "_rocm_sdk_devel"
    members = [
        (root, "dir", None, 0o755),
        (f"{root}/bin", "dir", None, 0o755),
        (f"{root}/bin/amdclang", "symlink", "../lib/llvm/bin/clang", 0o777),
        (f"{root}/bin/hipcc", "file", b"#!/bin/sh\necho hipcc\n", 0o755),
        (f"{root}/include", "dir", None, 0o755),
        (f"{root}/include/hip.h", "file", b"#pragma once\n", 0o644),
        (f"{root}/include/hip_copy.h", "hardlink", f"{root}/include/hip.h", 0o644),
        (f"{root}/lib", "dir", None, 0o755),
        (f"{root}/lib/libamdhip64.so", "symlink", "libamdhip64.so.6", 0o777),
        (f"{root}/lib/libamdhip64.so.6", "symlink",
         "../../_rocm_sdk_core/lib/libamdhip64.so.6", 0o777),
        (f"{root}/lib/llvm", "dir", None, 0o755),
        (f"{root}/lib/llvm/bin", "dir", None, 0o755),
        (f"{root}/lib/llvm/bin/clang", "file", b"#!/bin/sh\necho clang\n", 0o755),
        (f"{root}/lib/sysdeps", "symlink", "../../_rocm_sdk_core/lib/rocm_sysdeps", 0o777),
    ]
    tar = tar_bytes(members)
    write("devel_unpack", "plain.tar", bytes([0]) + tar)
    write("devel_unpack", "tar-for-zstd", bytes([2]) + tar)
    write("devel_unpack", "tar-for-xz", bytes([4]) + tar)


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def wheel_bytes(
    files: dict[str, bytes] | list[tuple[str, bytes]],
    *,
    tamper: bool = False,
    modes: dict[str, int] | None = None,
) -> bytes:
    """A wheel of `files` (a list may name a member twice) with RECORD
    rows matching each (unless `tamper`); `modes` gives a member another
    mode than a plain file's."""
    dist_info = "rocm_sdk_core-7.1.0.dist-info"
    out = io.BytesIO()
    rows = []
    members = files.items() if isinstance(files, dict) else files
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (modes or {}).get(name, 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
            rows.append(f"{name},{record_hash(b'x' if tamper else data)},{len(data)}")
        rows.append(f"{dist_info}/RECORD,,")
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        zf.writestr(info, "\n".join(rows) + "\n")
    return out.getvalue()


def wheel_seeds() -> None:
    dist_info = "rocm_sdk_core-7.1.0.dist-info"
    files = {
        "rocm_sdk_core/__init__.py": b"",
        "_rocm_sdk_core/bin/hipcc": b"#!/bin/sh\n",
        f"{dist_info}/METADATA": b"Metadata-Version: 2.4\nName: rocm-sdk-core\nVersion: 7.1.0\n",
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n",
    }
    write("wheel_reader", "valid.whl", wheel_bytes(files))
    write("wheel_reader", "tampered.whl", wheel_bytes(files, tamper=True))
    # Members the reader refuses (docs/behaviour.md#member-rules), RECORD
    # matching: the mutations start next to each rule.
    write("wheel_reader", "escape.whl", wheel_bytes({**files, "../evil.txt": b"x"}))
    write(
        "wheel_reader",
        "symlink.whl",
        wheel_bytes(files, modes={"_rocm_sdk_core/bin/hipcc": 0o120777}),
    )
    write(
        "wheel_reader",
        "setuid.whl",
        wheel_bytes(files, modes={"_rocm_sdk_core/bin/hipcc": 0o104755}),
    )
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the repeated name
        twice = list(files.items()) + [("_rocm_sdk_core/bin/hipcc", b"#!/bin/evil\n")]
        write("wheel_reader", "duplicate.whl", wheel_bytes(twice))


def zip_seeds() -> None:
    """The container alone (`zip_archive`): wheels as zipfile writes them,
    stored, zip64, with a comment, and one whose end record counts one
    record less than the directory holds."""
    files = {
        "pkg/__init__.py": b"",
        "pkg/data.bin": bytes(range(256)) * 4,
        "pkg-1.0.dist-info/RECORD": b"",
    }
    write("zip_archive", "deflated.zip", wheel_bytes(files))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            zf.writestr(info, data)
    write("zip_archive", "stored.zip", out.getvalue())
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.comment = b"a comment"
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=True) as member:
                member.write(data)
    write("zip_archive", "zip64-comment.zip", out.getvalue())
    hidden = bytearray(wheel_bytes(files))
    end = len(hidden) - 22
    count = int.from_bytes(hidden[end + 10:end + 12], "little") - 1
    hidden[end + 8:end + 12] = count.to_bytes(2, "little") * 2
    write("zip_archive", "count-hides-a-record.zip", bytes(hidden))


def sdist_seeds() -> None:
    """`sdist_archive`: a POSIX tar the target gzips (mode byte 0), the
    same already gzipped (1), a GNU long name, two gzip members."""
    def tar(members: list[tuple[str, bytes]], form: int = tarfile.PAX_FORMAT) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=form) as archive:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.mtime = MTIME
                info.mode = 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return out.getvalue()

    def gz(data: bytes) -> bytes:
        return gzip.compress(data, mtime=0)

    members = [
        ("rocm-7.1.0/PKG-INFO", b"Metadata-Version: 2.4\nName: rocm\nVersion: 7.1.0\n"),
        ("rocm-7.1.0/pyproject.toml", b"[build-system]\nrequires = []\n"),
        ("rocm-7.1.0/" + "long/" * 30 + "name.py", b"x = 1\n"),
    ]
    plain = tar(members)
    write("sdist_archive", "pax.tar", bytes([0]) + plain)
    write("sdist_archive", "pax.tar.gz", bytes([1]) + gz(plain))
    write("sdist_archive", "gnu-long-name.tar", bytes([0]) + tar(members, tarfile.GNU_FORMAT))
    write("sdist_archive", "two-members.tar.gz", bytes([1]) + gz(plain[:-1024]) + gz(plain))


def metadata_seeds() -> None:
    write_texts("core_metadata", "m", [
        "Metadata-Version: 2.4\nName: rocm-sdk-core\nVersion: 7.1.0\n"
        "Requires-Dist: rocm==7.1.0\nSummary: one\n  two\n\nThe body.\n",
        "Wheel-Version: 1.0\r\nRoot-Is-Purelib: false\r\nTag: py3-none-linux_x86_64\r\n",
        "Name: rocm\rRequires-Dist: evil\n",
        "\ufeffName: rocm\nnot a header\nVersion: 1\n",
    ])
    write_texts("entry_points", "e", [
        "[console_scripts]\nhipcc = rocm_sdk_core._cli:hipcc\namdclang++ = rocm_sdk_core._cli:amdclang_pp\n\n",
        "# made here\r\n[gui_scripts]\r\nx=a.b:c\r\n",
        "[console_scripts]\n;evil = a:b\n  indented = a:b\n../evil = a:b\n",
    ])
    write_texts("package_record", "r", [
        "pkg/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
        "\"pkg/a,b.py\",sha256=x,3\npkg-1.0.dist-info/RECORD,,\n",
        "a,,\r\n\r\nb,,1\r\n",
        "a,,\rb,,\n" + "\n" * 100,
    ])


def write_texts(target: str, prefix: str, texts: list[str]) -> None:
    for i, text in enumerate(texts):
        write(target, f"{prefix}{i}", text.encode())


def text_seeds() -> None:
    versions = [
        "7.1.0", "7.1.0rc1\n7.1.0", "7.1.0a20250101\n7.1.0b1", "v7.1-RC.1",
        "1!2.0.post3.dev4+abc.5\n2.0", "7.1.0.dev0+0123456789abcdef\n7.1.0.dev0",
        "7.1.0a20250101+bkc.20250102", "1.0-1\n1.0.post1", "1.0.0\n1.0",
    ]
    write_texts("pep440_version", "v", versions)
    requirements = [
        "rocm-sdk-core==7.1.0",
        'rocm-sdk-device-gfx942==7.1.0; extra == "device-gfx942" and sys_platform == "linux"',
        "foo[bar] (>=1.0, <2) ; (sys_platform == 'win32' or os_name == \"posix\")"
        ' and python_version >= "3.9"',
        'rocm-sdk-libraries-gfx110X-all==7.1.0; extra == "libraries" and platform_system != "Windows"',
        "x ~=1.0, !=1.3.*; platform_machine == 'x86_64'",
        # Once a panic inside pep508_rs: a name ending in `-` before a NUL.
        "rocm-sdk-de-\0vice-gfx942==7.1.0",
        "f1[m-]sdk-",
        "foo[bar] (>=1.0, <2) ; (sys_platform == 'wi\x0032'\u0390V",
    ]
    write_texts("requirement", "r", requirements)
    digests = [
        "_devel.tar,blake3=6o8WPbOGgpJeRJHF5Y1Ls1Bu-MFOt4qG6QjFYkpnIA8,5\n",
        '"_devel.tar.zst",blake3=6o8WPbOGgpJeRJHF5Y1Ls1Bu-MFOt4qG6QjFYkpnIA8,0012\r\n',
        "_devel.tar,sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ,5\n",
        "a,,1\nb,,2\n",
    ]
    write_texts("devel_digest", "d", digests)
    # First byte: bit 0 picks the document (0 the reconcile's state, 1 the
    # runtime links), bit 1 the nonce `_n1`.
    states = [
        "\x00" + json.dumps({"devices": {"rocm_sdk_device_gfx942-7.1.0.dist-info": {
            "links": ["_rocm_sdk_devel/lib/k/a.co", "_rocm_sdk_devel/lib/b.co"],
            "sources": ["_rocm_sdk_libraries/lib/k/a.co", "_rocm_sdk_libraries/lib/b.co"],
            "created_dirs": ["_rocm_sdk_devel/lib/k"]}}}),
        "\x00" + json.dumps({"devices": {"rocm_sdk_device_gfx1100-7.1.0.dist-info": {
            "links": ["/tmp/x/file.txt", "../../../../victim/rel.txt"],
            "sources": [], "created_dirs": ["/tmp/x/emptydir"]}}}),
        "\x02" + json.dumps({"devices": {"rocm_sdk_device_gfx942-7.1.0.dist-info": {
            "links": ["_rocm_sdk_devel_n1/a"], "created_dirs": []}}}),
        "\x01" + json.dumps({"schema": 1, "links": [
            ["_rocm_sdk_devel/lib/libamdhip64.so.7", "_rocm_sdk_core/lib/libamdhip64.so.7"],
            ["_rocm_sdk_devel/lib/x", "_rocm_sdk_libraries_gfx94X_dcgpu/lib/x"]]}),
        "\x03" + json.dumps({"schema": 1, "links": [
            ["_rocm_sdk_devel_n1/lib/stolen", "_rocm_sdk_core_n1/evil/../secret"]]}),
    ]
    write_texts("devel_state", "s", states)


def main() -> None:
    for child in HERE.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
    elf_seeds()
    artifact_seeds()
    devel_seeds()
    wheel_seeds()
    zip_seeds()
    sdist_seeds()
    metadata_seeds()
    text_seeds()


if __name__ == "__main__":
    main()
