"""How long each mode's export takes, next to the floor of its kind measured in the same run.

    python benchmarks/bench_export.py [--runs 3] [--only slide,diagram]

For every mode with an exporter (``register_exporters``; coauthor and
webgal have none) and every format it offers, a fresh workspace seeded with
the mode's own seed (``init_workspace``) is exported ``--runs`` times with
``Exporter.run`` — what the Export menu's click and ``pneuma export`` call —
each time into a new folder outside the workspace. Each format runs in a
**fresh Python process**: its first export is reported as **cold** (the
imports, Playwright's driver, the exporter's first Chromium start in that
process), the median of the others as **warm** (a running server's second
click). A format that fails is reported and the others still run.

Floors, measured in the same run (half before the exports, half after, so
a load change moves them too):

- **print-to-pdf floor**: bare ``chromium --headless --print-to-pdf`` of a
  one-line HTML page, with the host's ``CHROMIUM`` and ``CHROMIUM_ARGS`` —
  what any Chromium-based PDF costs at least;
- **screenshot floor**: the same with ``--screenshot`` — the floor of any
  PNG (and of a mermaid render, which is one Chromium run too);
- **Playwright floor**: launching Chromium through Playwright, one page,
  the one-line page printed to PDF, closed, in a process that has already
  done it once (what the Playwright-based exporters pay per export at
  least, beyond the bare binary; the doc PDF's floor, since it renders and
  prints in one such browser);
- **zip floor**: ``zipfile`` (deflate) of the same seed files, for webcraft's zip.

Each export is printed as a multiple of its floor. Everything stays on
127.0.0.1 (the draw export's throwaway static server); bounded by
``--runs`` and a 120-s timeout per format.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from _common import PYTHON, finish, machine_note, median, row, temp_dir

from pneuma.api import CHROMIUM, CHROMIUM_ARGS

HERE = Path(__file__).resolve().parent
WORKER_TIMEOUT_S = 120
ONE_LINE_PAGE = "<!doctype html><meta charset=utf-8><p>Pneuma export floor</p>"

# What a person accepts from an Export menu click, in seconds, warm: an
# export that only reads and writes files (html, zip) should feel like a
# save; one rendered in Chromium may show a spinner for a few seconds. The
# reasons are in benchmarks/README.md.
TARGET_S = {"html": 0.5, "zip": 0.5}
TARGET_CHROMIUM_S = 5.0
# HTML that a mode renders with its viewer's own code (the doc export:
# docs/doc.md) is held to a Chromium export's goal and floor, one start like
# a screenshot: what it costs without Node.js, which renders it without one.
RENDERED_HTML = {("doc", "html"), ("doc", "html-raw")}

# Which floor each (mode, format) is compared with: the least work of its
# kind — a PDF printed, an image or a render taken in one Chromium start, a
# zip written. A format not listed here (a new mode) is shown without one.
FLOOR_OF = {
    ("slide", "pdf"): "pdf", ("slide", "html"): None, ("slide", "png"): "png",
    ("slide", "pptx"): "png", ("doc", "pdf"): "playwright", ("doc", "html"): "png", ("doc", "html-raw"): "png",
    ("draw", "svg"): "png", ("draw", "png"): "png",
    ("diagram", "svg"): "png", ("diagram", "png"): "png",
    ("diagram", "svg-dark"): "png", ("diagram", "png-dark"): "png",
    ("webcraft", "zip"): "zip", ("webcraft", "png"): "png",
}
FLOOR_LABEL = {"pdf": "chromium print-to-pdf", "png": "chromium screenshot", "zip": "zipfile",
               "playwright": "Playwright launch+pdf"}


# --- the worker: one format, in its own process -----------------------------------


def worker(mode: str, fmt: str, workspace: Path, out: Path, runs: int) -> None:
    """Export ``workspace`` ``runs`` times; print one JSON line of the times."""
    from pneuma.host.exporters import all_exporters
    from pneuma.host.plugins import get_plugin_manager
    from pneuma.workspace.params import read_config

    exporter = all_exporters(get_plugin_manager())[mode]
    params = read_config(workspace).get("params", {}).get(mode, {})
    times: list[float] = []
    files = 0
    summary = ""
    for n in range(runs):
        fmt_info = exporter.format(fmt)
        target = out / (f"run{n}" if fmt_info.is_directory else f"run{n}{fmt_info.suffix}")
        t = time.monotonic()
        result = exporter.run(workspace, fmt, target, params)
        times.append(time.monotonic() - t)
        files, summary = len(result.files), result.summary
    print(json.dumps({"times": times, "files": files, "summary": summary}))


def playwright_floor_worker(runs: int) -> None:
    """Playwright launch → one page → print-to-pdf → close, ``runs`` times."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="pneuma-bench-pw-") as tmp:
        page_file = Path(tmp) / "floor.html"
        page_file.write_text(ONE_LINE_PAGE, encoding="utf-8")
        times = []
        for n in range(runs):
            t = time.monotonic()
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page()
                page.goto(page_file.as_uri(), wait_until="load")
                page.pdf(path=str(Path(tmp) / f"{n}.pdf"))
                browser.close()
            times.append(time.monotonic() - t)
    print(json.dumps({"times": times}))


# --- the floors ---------------------------------------------------------------------


def bare_chromium_s(kind: str, directory: Path) -> float:
    """One bare headless Chromium run on the one-line page: ``pdf`` or ``png``."""
    page = directory / "floor.html"
    page.write_text(ONE_LINE_PAGE, encoding="utf-8")
    output = directory / f"floor.{kind}"
    output.unlink(missing_ok=True)
    what = [f"--print-to-pdf={output}", "--no-pdf-header-footer"] if kind == "pdf" else [
        f"--screenshot={output}", "--window-size=800,600", "--hide-scrollbars"]
    with tempfile.TemporaryDirectory(prefix="pneuma-bench-profile-") as profile:
        t = time.monotonic()
        subprocess.run([CHROMIUM, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={profile}",
                        *what, page.as_uri()], capture_output=True, timeout=60, check=True)
        elapsed = time.monotonic() - t
    if not output.is_file():
        raise RuntimeError(f"bare chromium wrote no {kind}")
    return elapsed


def seed_files(workspace: Path) -> list[Path]:
    return sorted(p for p in workspace.rglob("*") if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(workspace).parts))


def zip_s(workspace: Path, output: Path) -> float:
    t = time.monotonic()
    with zipfile.ZipFile(output, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in seed_files(workspace):
            archive.writestr(path.relative_to(workspace).as_posix(), path.read_bytes())
    return time.monotonic() - t


def secs(value: float) -> str:
    """Seconds as a person reads them: milliseconds below 0.1 s."""
    return f"{value * 1000:.1f} ms" if value < 0.1 else f"{value:.2f} s"


# --- the run ------------------------------------------------------------------------


@dataclass
class Measured:
    mode: str
    fmt: str
    cold: float
    warm: float  # median of the runs after the first
    spread: tuple[float, float]
    files: int
    summary: str
    error: str = ""


def seed(mode: str, directory: Path) -> Path:
    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import init_workspace

    workspace = directory / f"ws-{mode}"
    workspace.mkdir(parents=True)
    init_workspace(get_mode(mode), workspace, {}, prompt=None)
    return workspace


def run_worker(args: list[str]) -> dict:
    done = subprocess.run([PYTHON, str(Path(__file__).resolve()), *args], capture_output=True,
                          text=True, timeout=WORKER_TIMEOUT_S, cwd=str(HERE))
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise RuntimeError(tail[-300:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_format(mode: str, fmt: str, workspace: Path, directory: Path, runs: int) -> Measured:
    out = directory / f"out-{mode}-{fmt}"
    out.mkdir()
    try:
        got = run_worker(["--worker", mode, fmt, "--workspace", str(workspace), "--out", str(out),
                          "--runs", str(runs)])
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        return Measured(mode, fmt, float("nan"), float("nan"), (0, 0), 0, "", str(exc))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    times = got["times"]
    warm = times[1:] or times
    return Measured(mode, fmt, times[0], median(warm), (min(warm), max(warm)), got["files"],
                    got["summary"])


def exporters() -> dict[str, list[str]]:
    from pneuma.host.exporters import all_exporters
    from pneuma.host.plugins import get_plugin_manager

    return {mode: [f.name for f in exp.formats]
            for mode, exp in sorted(all_exporters(get_plugin_manager()).items())}


def floors(directory: Path, runs: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {"pdf": [], "png": []}
    for _ in range(runs):
        for kind in ("pdf", "png"):
            found[kind].append(bare_chromium_s(kind, directory))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="exports per format (the first is cold)")
    parser.add_argument("--only", default="", help="comma-separated modes (default: every exporter)")
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "FORMAT"), help=argparse.SUPPRESS)
    parser.add_argument("--playwright-floor", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workspace", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.workspace, args.out, args.runs)
        return 0
    if args.playwright_floor:
        playwright_floor_worker(args.runs)
        return 0

    runs = max(2, args.runs)
    print(machine_note())
    offered = exporters()
    wanted = [m for m in args.only.split(",") if m]
    if unknown := sorted(set(wanted) - set(offered)):
        parser.error(f"no exporter for {', '.join(unknown)}; modes that export: {', '.join(offered)}")
    print("exporters: " + "; ".join(f"{m}: {', '.join(f)}" for m, f in offered.items()))
    directory = temp_dir("pneuma-bench-export-")
    rows = []
    try:
        floor_runs = floors(directory, max(1, runs // 2))
        measured: list[Measured] = []
        zip_times: list[float] = []
        for mode, formats in offered.items():
            if wanted and mode not in wanted:
                continue
            workspace = seed(mode, directory)
            if mode == "webcraft":
                zip_times = [zip_s(workspace, directory / f"bare-{n}.zip") for n in range(runs)]
            for fmt in formats:
                m = measure_format(mode, fmt, workspace, directory, runs)
                measured.append(m)
                state = (f"FAILED: {m.error}" if m.error else
                         f"cold {secs(m.cold):>9}  warm {secs(m.warm):>9} "
                         f"({secs(m.spread[0])} – {secs(m.spread[1])})  {m.summary}")
                print(f"  {mode:9} {fmt:9} {state}", flush=True)
        for kind, more in floors(directory, max(1, runs - runs // 2)).items():
            floor_runs[kind] += more
        pw = run_worker(["--playwright-floor", "--runs", str(runs)])["times"]
    finally:
        shutil.rmtree(directory, ignore_errors=True)

    floor = {kind: median(times) for kind, times in floor_runs.items()}
    if zip_times:
        floor["zip"] = median(zip_times)
    pw_warm = median(pw[1:])
    # The doc PDF renders and prints in one Playwright browser (docs/doc.md):
    # its floor is that browser's launch and print.
    floor["playwright"] = pw_warm
    print()
    print(f"floors (median): chromium print-to-pdf {floor['pdf']:.2f} s "
          f"(of {', '.join(f'{t:.2f}' for t in floor_runs['pdf'])}), chromium screenshot "
          f"{floor['png']:.2f} s (of {', '.join(f'{t:.2f}' for t in floor_runs['png'])}), "
          f"Playwright launch+pdf {pw_warm:.2f} s (first {pw[0]:.2f})"
          + (f", zipfile {secs(floor['zip'])}" if "zip" in floor else ""))
    print()
    print(f"{'export':18} {'cold':>9} {'warm':>9} {'floor':>31} {'× floor':>8}")
    for m in measured:
        kind = FLOOR_OF.get((m.mode, m.fmt))
        base = floor.get(kind) if kind else None
        ratio = f"{m.warm / base:.1f}" if base and not m.error else "-"
        where = f"{FLOOR_LABEL[kind]} {secs(base)}" if base else "-"
        print(f"{m.mode + ' ' + m.fmt:18} {secs(m.cold):>9} {secs(m.warm):>9} {where:>31} {ratio:>8}")
        file_only = m.fmt in TARGET_S and (m.mode, m.fmt) not in RENDERED_HTML
        target = TARGET_S[m.fmt] if file_only else TARGET_CHROMIUM_S
        # file-only exports take milliseconds: the table says them so
        scale, unit = (1000, "ms") if file_only else (1, "s")
        label = f"{FLOOR_LABEL[kind]}; {ratio}×" if kind else ""
        rows.append(row(f"export {m.mode} {m.fmt}, warm median ({m.summary or m.error[:40]})",
                        m.warm * scale, target * scale, unit, "lower",
                        base * scale if base else None, label))
        rows.append(row(f"export {m.mode} {m.fmt}, cold (fresh process)", m.cold * scale, None,
                        unit, "lower", info=True))
    rows += [
        row("floor: bare chromium --print-to-pdf, one-line page", floor["pdf"], None, "s", "lower",
            info=True),
        row("floor: bare chromium --screenshot, one-line page", floor["png"], None, "s", "lower",
            info=True),
        row("floor: Playwright launch + one-line page to PDF", pw_warm, None, "s", "lower",
            floor["pdf"], "bare chromium pdf", info=True),
    ]
    failed = [m for m in measured if m.error]
    notes = [f"FAILED {m.mode} {m.fmt}: {m.error}" for m in failed]
    return finish(rows, *notes)


if __name__ == "__main__":
    sys.exit(main())
