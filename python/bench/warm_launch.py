"""Benchmark: the warm launch of a devel tool through its console script.

    python3 python/bench/warm_launch.py [runs]

Builds a fake site-packages (devel unpacked, device-links stamp current; the
tool is a copy of `true`), writes the console script the way pip does, and
measures, per launch (median of `runs`): wall time, CPU (user+sys) and peak
RSS of the launched process tree's main process, for
- `tool`: the tool exec'd directly (the floor),
- `python -c pass`: the interpreter start alone (same environment),
- `python execv (floor)`: an interpreter that only execs the tool,
- `script (warm)`: pip's script → `rocm_sdk_core._cli` → `os.execv(tool)`,
- `script (no devel)`: the same with only core installed.
It prints the added cost of the warm script over `python -c pass`. Also
times the `rocm` sdist backend (prepare metadata + build wheel).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parent.parent
FIXTURE = PYTHON_DIR / "tests" / "fixtures" / "dist_info_kpack.json"


def measure_all(cases: list[tuple[str, list[str], dict]], runs: int):
    """Per case: median wall seconds, median CPU seconds (from `wait4`), and
    peak RSS in KiB. Cases run round-robin so machine load drifts evenly."""
    walls = {name: [] for name, _, _ in cases}
    cpus = {name: [] for name, _, _ in cases}
    for _ in range(runs):
        for name, argv, env in cases:
            start = time.perf_counter()
            proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
            walls[name].append(time.perf_counter() - start)
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"{argv} failed")
            cpus[name].append(usage.ru_utime + usage.ru_stime)
    return {
        name: (statistics.median(walls[name]), statistics.median(cpus[name]), peak_rss(argv, env))
        for name, argv, env in cases
    }


def peak_rss(argv: list[str], env: dict) -> int | None:
    """Peak RSS (KiB) of the launched program alone, via GNU time (our own
    `wait4` would count the forked copy of this interpreter)."""
    gnu_time = shutil.which("time", path="/usr/bin:/bin")
    if gnu_time is None:
        return None
    done = subprocess.run([gnu_time, "-f", "%M", *argv], env=env, capture_output=True, text=True)
    try:
        return int(done.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def build_site(root: Path, devel: bool) -> Path:
    site = root / "site-packages"
    core = site / "rocm_sdk_core"
    shutil.copytree(
        PYTHON_DIR / "rocm_sdk_core", core, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(FIXTURE, core / "_dist_info.json")
    true = shutil.which("true")
    tool_root = site / ("_rocm_sdk_devel" if devel else "_rocm_sdk_core")
    (tool_root / "lib/llvm/bin").mkdir(parents=True)
    shutil.copy(true, tool_root / "lib/llvm/bin/amdclang++")
    if devel:
        (site / "rocm_sdk_devel").mkdir()
        (site / "_rocm_sdk_devel/.device-links-stamp").write_text("")
    return site


def pip_script(path: Path) -> Path:
    path.write_text(
        f"#!{sys.executable}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
        "from rocm_sdk_core._cli import amdclang_pp\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(amdclang_pp())\n"
    )
    path.chmod(0o755)
    return path


def backend_time(root: Path) -> float:
    sdist = root / "sdist"
    sdist.mkdir()
    shutil.copy(PYTHON_DIR / "pyproject.toml", sdist)
    shutil.copytree(PYTHON_DIR / "build_backend", sdist / "build_backend")
    shutil.copytree(
        PYTHON_DIR / "rocm_sdk", sdist / "rocm_sdk", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(FIXTURE, sdist / "rocm_sdk" / "_dist_info.json")
    code = (
        "import sys, time; sys.path.insert(0, 'build_backend'); t = time.perf_counter()\n"
        "import rocm_sdk_build_backend as b\n"
        "n = b.prepare_metadata_for_build_wheel('meta')\n"
        "b.build_wheel('dist', metadata_directory='meta/' + n)\n"
        "print(time.perf_counter() - t)\n"
    )
    env = dict(os.environ, ROCM_SDK_TARGET_FAMILY="gfx942")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=sdist, env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        warm_site = build_site(tmp / "warm", devel=True)
        core_site = build_site(tmp / "core", devel=False)
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("ROCM_SDK_")}
        env_warm = dict(base_env, PYTHONPATH=str(warm_site))
        env_core = dict(base_env, PYTHONPATH=str(core_site))
        # Installed packages have bytecode (pip compiles at install); so do these.
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(warm_site), str(core_site)], check=True
        )
        script = pip_script(tmp / "amdclang++")
        tool = warm_site / "_rocm_sdk_devel/lib/llvm/bin/amdclang++"
        cases = [
            ("tool", [str(tool)], env_warm),
            ("python -c pass", [sys.executable, "-c", "pass"], env_warm),
            (
                "python execv (floor)",
                [sys.executable, "-c", f"import os; os.execv({str(tool)!r}, ['t'])"],
                env_warm,
            ),
            ("script (warm)", [str(script), "-c", "x.c"], env_warm),
            ("script (no devel)", [str(script), "-c", "x.c"], env_core),
        ]
        rows = measure_all(cases, runs)
        print(f"warm launch, median of {runs} runs (round-robin)")
        print(f"{'case':20} {'wall ms':>9} {'cpu ms':>9} {'peak RSS KiB':>13}")
        for name, (wall, cpu, rss) in rows.items():
            print(f"{name:20} {wall * 1e3:9.2f} {cpu * 1e3:9.2f} {rss if rss else 'n/a':>13}")
        python = rows["python -c pass"][0]
        warm = rows["script (warm)"][0]
        print(
            f"added by the trampoline over `python -c pass`: {(warm - python) * 1e3:.2f} ms "
            f"(ratio {warm / python:.2f}x); processes started besides the tool: 0"
        )
        floor = rows["python execv (floor)"][0]
        print(
            f"added over a bare `python -c 'os.execv(tool)'`: {(warm - floor) * 1e3:.2f} ms "
            f"(ratio {warm / floor:.2f}x)"
        )
        print(
            f"rocm sdist backend, prepare metadata + build wheel: "
            f"{backend_time(tmp) * 1e3:.1f} ms"
        )
        print(
            json.dumps(
                {
                    n: {
                        "wall_ms": round(w * 1e3, 3),
                        "cpu_ms": round(c * 1e3, 3),
                        "peak_rss_kib": r,
                    }
                    for n, (w, c, r) in rows.items()
                },
                sort_keys=True,
            )
        )


if __name__ == "__main__":
    main()
