"""`pneuma mode add` of a folder, next to the plain pip install it wraps.

    python benchmarks/bench_mode_add.py [--runs 3] [--quick]

A throwaway virtualenv (Pneuma importable from it through a ``.pth`` file;
pip offline, building with what is installed) gets the `pneuma new-mode`
template's folder ``--runs`` times, interleaved:

- **pneuma mode add --no-check**: the source read (its ``pyproject.toml``),
  pip's install, the mode loaded in a fresh interpreter, the record written;
  then `pneuma mode remove`;
- **the baseline**: `python -m pip install --no-deps --force-reinstall` of the
  same folder, then `pip uninstall`, from the same environment;
- once (INFO): `pneuma mode add` with its check (`pneuma mode check` in a
  real Chromium), which is what a person gets by default.

All INFO (the issue sets no target); 127.0.0.1 only (nothing is fetched).
About a minute on an idle machine, ``--quick`` about half.
"""

from __future__ import annotations

import argparse
import os
import shutil
import site
import subprocess
import sys
import time
from pathlib import Path

from _common import PNEUMA_BIN, finish, machine_note, median, row, temp_dir


def make_env(root: Path) -> tuple[str, dict[str, str]]:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site_packages = next((root / "lib").glob("python3*/site-packages"))
    (site_packages / "zz_pneuma_host.pth").write_text(
        f"import site; site.addsitedir({site.getsitepackages()[0]!r})\n", encoding="utf-8")
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "VIRTUAL_ENV": str(root)}
    return str(root / "bin" / "python"), env


def timed(command: list[str], env: dict[str, str]) -> float:
    """Seconds ``command`` took; a failure ends the benchmark (a crash, not a miss)."""
    t0 = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:5])} failed: {done.stderr.strip()[-500:]}")
    return time.monotonic() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run each")
    args = parser.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    print(machine_note())
    home = temp_dir("pneuma-bench-mode-add-")
    try:
        python, env = make_env(home / "venv")
        subprocess.run([str(PNEUMA_BIN), "new-mode", "name=benched", "--no-input", "-o",
                        str(home)], check=True, capture_output=True)
        folder = str(home / "pneuma-benched")
        pneuma = [python, "-m", "pneuma", "mode"]
        pip = [python, "-m", "pip"]
        add, remove, install, uninstall = [], [], [], []
        for _ in range(runs):
            add.append(timed([*pneuma, "add", folder, "--no-check"], env))
            remove.append(timed([*pneuma, "remove", "benched"], env))
            install.append(timed([*pip, "install", "-q", "--no-deps", "--force-reinstall", folder],
                                 env))
            uninstall.append(timed([*pip, "uninstall", "-q", "-y", "pneuma-benched"], env))
        checked = timed([*pneuma, "add", folder], env)
        rows = [
            row("pneuma mode add FOLDER --no-check (read, install, load)", median(add), None, "s",
                "lower", median(install), "pip install --no-deps", info=True),
            row("pneuma mode remove NAME", median(remove), None, "s", "lower", median(uninstall),
                "pip uninstall", info=True),
            row("pneuma mode add FOLDER, checked in Chromium (the default)", checked, None, "s",
                "lower", median(add), "--no-check", info=True),
        ]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return finish(rows, f"{runs} run(s) each, interleaved; the template mode from pneuma new-mode")


if __name__ == "__main__":
    sys.exit(main())
