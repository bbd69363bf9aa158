"""The print mode's PDF export of a 20-page document, beside Chromium
printing the same standalone HTML, in the same run.

    python benchmarks/bench_print_export.py [--runs 3] [--quick]

A workspace is seeded with the print mode's seed (A4) and grown to 20
pages (headings, paragraphs, a table, a Chinese passage on every fourth
page). Measured, interleaved so that a change of load moves both:

- **export**: ``pneuma export --format pdf`` as the Export menu runs it
  (``Exporter.run``: print.json read, the standalone HTML rendered with
  images and the CJK font slices inlined, one Chromium that measures every
  page's fit and prints);
- **baseline, Playwright**: the same standalone HTML (rendered once,
  beforehand) printed by Playwright's ``page.pdf`` in a fresh Chromium:
  launch, load, fonts in, print, close — what any PDF of this document
  costs at least in the way the export prints;
- **baseline, bare Chromium**: ``chromium --headless --print-to-pdf`` of
  the same file (for reference: one process, no driver).

The figure is the export's median in seconds and its ratio to the
Playwright baseline's median (the target: within 1.5× of it, the render
and the fit measurement being the rest). Everything stays on this machine
(file:// pages, no server); exit 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from _common import finish, median, row, temp_dir

from pneuma.api import CHROMIUM, CHROMIUM_ARGS

PAGES = 20
TARGET_RATIO = 1.5
TARGET_EXPORT_S = 15.0
PARAGRAPH = ("The garden's beds were turned in March, sown in April and harvested from July to October; "
             "each bed's yield was weighed at the shed and written in the ledger beside the gardener's name. ")
CHINESE = "这一年，河畔共享花园迎来了开园以来最好的收成。四十二块菜地全部有人耕种。"


def build_workspace(folder: Path) -> Path:
    from pneuma.host.registry import get_mode
    from pneuma.workspace.params import init_workspace

    workspace = folder / "report"
    init_workspace(get_mode("print"), workspace, {"paper": "A4", "orientation": "portrait"})
    data = json.loads((workspace / "print.json").read_text(encoding="utf-8"))
    pages = list(data["pages"])
    for n in range(len(pages) + 1, PAGES + 1):
        file = f"pages/{n:02d}-section.html"
        rows = "".join(f"<tr><td>Bed {b}</td><td>{b * 7 % 31} kg</td></tr>" for b in range(1, 9))
        chinese = f"<p lang=\"zh-CN\">{CHINESE}</p>" if n % 4 == 0 else ""
        (workspace / file).write_text(f"<h2>Section {n}</h2><p>{PARAGRAPH * 3}</p>{chinese}"
                                      f"<table>{rows}</table><p>{PARAGRAPH}</p>", encoding="utf-8")
        pages.append({"file": file, "title": f"Section {n}"})
    data["pages"] = pages
    (workspace / "print.json").write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return workspace


def export_once(workspace: Path, output: Path) -> float:
    from pneuma.host.exporters import all_exporters
    from pneuma.host.plugins import get_plugin_manager

    exporter = all_exporters(get_plugin_manager())["print"]
    started = time.monotonic()
    exporter.run(workspace, "pdf", output, {})
    return time.monotonic() - started


def playwright_once(html_file: Path, output: Path) -> float:
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(html_file.as_uri(), wait_until="load")
        page.evaluate("() => Promise.all([document, ...Array.from(document.querySelectorAll('iframe'))"
                      ".map((f) => f.contentDocument)].map((d) => d.fonts.ready))")
        page.emulate_media(media="print")
        page.pdf(path=str(output), print_background=True, prefer_css_page_size=True)
        browser.close()
    return time.monotonic() - started


def bare_chromium_once(html_file: Path, output: Path) -> float:
    with tempfile.TemporaryDirectory(prefix="pneuma-bench-profile-") as profile:
        started = time.monotonic()
        subprocess.run([CHROMIUM, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={profile}",
                        "--no-pdf-header-footer", "--virtual-time-budget=5000", f"--print-to-pdf={output}",
                        html_file.as_uri()], capture_output=True, timeout=120, check=True)
        return time.monotonic() - started


def pdf_pages(path: Path) -> int:
    from pypdf import PdfReader

    return len(PdfReader(path).pages)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run of each")
    args = parser.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    folder = temp_dir("pneuma-bench-print-")
    try:
        from pneuma_print.render import render_document

        workspace = build_workspace(folder)
        html_file = folder / "document.html"
        html_file.write_text(render_document(workspace).html, encoding="utf-8")
        exported, playwright, bare = [], [], []
        for n in range(runs):
            playwright.append(playwright_once(html_file, folder / f"playwright{n}.pdf"))
            exported.append(export_once(workspace, folder / f"export{n}.pdf"))
            bare.append(bare_chromium_once(html_file, folder / f"bare{n}.pdf"))
            print(f"run {n + 1}: export {exported[-1]:.2f} s, Playwright page.pdf {playwright[-1]:.2f} s, "
                  f"bare chromium {bare[-1]:.2f} s", flush=True)
        pages = {name: pdf_pages(folder / f"{name}0.pdf") for name in ("export", "playwright", "bare")}
        print(f"pages in each PDF: {pages}")
        export_s, playwright_s = median(exported), median(playwright)
        rows = [
            row(f"print: {PAGES}-page A4 PDF export", export_s, TARGET_EXPORT_S, "s", "lower",
                playwright_s, "Playwright page.pdf of the same HTML"),
            row("print: PDF export / Playwright print of the same HTML", export_s / playwright_s, TARGET_RATIO,
                "x", "lower"),
            row("print: bare chromium --print-to-pdf of the same HTML", median(bare), None, "s", "lower",
                info=True),
        ]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return finish(rows, f"{runs} run(s) of each, interleaved; medians")


if __name__ == "__main__":
    raise SystemExit(main())
