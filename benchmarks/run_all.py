"""Run every benchmark and print one summary table: target vs measured.

    .venv/bin/python benchmarks/run_all.py [--only fanout,paced,...]

Each ``bench_*.py`` runs in its own process (its output is shown as it
comes) and ends with a ``BENCH_RESULTS <json>`` line; this collects those
rows. Exit status 0 even when a figure misses its target: the table says
PASS or MISS per figure; a benchmark that crashes exits non-zero and is
listed as FAILED (and makes this script exit 1).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import machine_note, print_rows  # noqa: E402

BENCHMARKS = ["fanout", "paced", "file_update", "startup", "memsoak", "replay", "convlog", "launcher",
              "export", "stream_paint", "diagram_render", "edit_round_trip", "headless_viewer",
              "checkpoints", "turnsoak", "describe", "compare", "checks",
              "share", "replay_view", "print_export", "dashboard_redraw", "video_export",
              "mode_add"]
TIMEOUT = 180
# 200 turns on a 200 MiB workspace, a shadow git beside it (bench_checkpoints.py --budget).
TIMEOUTS = {"checkpoints": 600}
# 2,000 short turns through a real server, then a fresh one (bench_turnsoak.py).
TIMEOUTS["turnsoak"] = 400
# A real server per mode, three turns each, the checks after each (bench_checks.py).
TIMEOUTS["checks"] = 400


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated subset of " + ",".join(BENCHMARKS))
    args = parser.parse_args()
    wanted = [name for name in args.only.split(",") if name]
    unknown = sorted(set(wanted) - set(BENCHMARKS))
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)}; there are {', '.join(BENCHMARKS)}")
    chosen = [b for b in BENCHMARKS if not wanted or b in wanted]
    print(machine_note())
    rows: list[dict] = []
    failed: list[str] = []
    durations: dict[str, float] = {}
    for name in chosen:
        script = HERE / f"bench_{name}.py"
        print(f"\n=== {script.name} " + "=" * max(0, 60 - len(script.name)), flush=True)
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
        found = False
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                if line.startswith("BENCH_RESULTS "):
                    rows.extend(json.loads(line[len("BENCH_RESULTS "):]))
                    found = True
                else:
                    print(line, end="", flush=True)
            proc.wait(timeout=TIMEOUTS.get(name, TIMEOUT))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        durations[name] = time.monotonic() - t0
        if proc.returncode != 0 or not found:
            failed.append(name)
            print(f"!!! {script.name} failed (exit {proc.returncode})", flush=True)

    print("\n=== summary " + "=" * 60)
    print(machine_note())
    print_rows(rows)
    graded = [r for r in rows if r["status"] in ("PASS", "MISS")]
    passed = sum(1 for r in graded if r["status"] == "PASS")
    print(f"\n{passed}/{len(graded)} targets met; "
          + ", ".join(f"{n} {d:.0f} s" for n, d in durations.items()))
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
