"""Render a local HTML file with the host's headless Chromium: print it to a
PDF, or take a screenshot of it. For exporters (``pneuma export``), which
run outside any session and may not have Playwright (a test dependency):
Playwright is used when it can be imported, otherwise the ``chromium``
binary's own ``--print-to-pdf`` / ``--screenshot``.

The file is opened as a ``file://`` URL, so it must be self-contained
(assets inlined); nothing here serves a workspace.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from pneuma.host.exporters import ExportError
from pneuma.tools.chromium import CHROMIUM, CHROMIUM_ARGS

# Waits until web fonts and images of the page (and of same-origin frames) are in.
_SETTLE_SCRIPT = """async () => {
  const docs = [document, ...Array.from(document.querySelectorAll('iframe'))
    .map((f) => { try { return f.contentDocument; } catch (e) { return null; } }).filter(Boolean)];
  await Promise.all(docs.map((d) => d.fonts ? d.fonts.ready : null));
  const images = docs.flatMap((d) => Array.from(d.images)).filter((i) => !i.complete);
  await Promise.all(images.map((i) => new Promise((r) => { i.onload = i.onerror = r; })));
}"""


def _binary() -> str:
    found = CHROMIUM if Path(CHROMIUM).exists() else (
        shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome"))
    if not found:
        raise ExportError(f"this export needs Chromium ({CHROMIUM}) and it is not installed")
    return found


def _has_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def _run_cli(*args: str) -> None:
    with tempfile.TemporaryDirectory(prefix="pneuma-chromium-") as profile:
        result = subprocess.run(
            [_binary(), "--headless", *CHROMIUM_ARGS, f"--user-data-dir={profile}",
             "--virtual-time-budget=10000", *args],
            capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0:
        raise ExportError(f"chromium failed: {result.stderr.strip()[-300:]}")


def html_to_pdf(html_file: Path, output: Path, *, page_width: int | None = None,
                page_height: int | None = None) -> None:
    """Print ``html_file`` to ``output``, print media, backgrounds on. Without
    a page size the page's CSS ``@page`` decides (A4 when it says nothing)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    if not _has_playwright():
        _run_cli("--no-pdf-header-footer", f"--print-to-pdf={output}", html_file.as_uri())
    else:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=_binary(), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.emulate_media(media="print")
                page.goto(html_file.as_uri(), wait_until="load")
                page.evaluate(_SETTLE_SCRIPT)
                size = ({"width": f"{page_width}px", "height": f"{page_height}px"}
                        if page_width and page_height else {})
                page.pdf(path=str(output), print_background=True, prefer_css_page_size=not size,
                         **size)
            finally:
                browser.close()
    if not output.is_file():
        raise ExportError("chromium wrote no PDF")


def html_to_png(html_files: list[Path], outputs: list[Path], *, width: int, height: int,
                full_page: bool = False) -> None:
    """Screenshot each of ``html_files`` at ``width``×``height`` (the whole
    page when ``full_page``) into the matching path of ``outputs``; one
    browser for all of them."""
    if len(html_files) != len(outputs):
        raise ValueError("one output per HTML file")
    for output in outputs:
        output.parent.mkdir(parents=True, exist_ok=True)
    if not _has_playwright():
        for html_file, output in zip(html_files, outputs, strict=True):
            _run_cli("--hide-scrollbars", f"--window-size={width},{height}",
                     f"--screenshot={output}", html_file.as_uri())
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_binary(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            for html_file, output in zip(html_files, outputs, strict=True):
                page.goto(html_file.as_uri(), wait_until="load")
                page.evaluate(_SETTLE_SCRIPT)
                page.screenshot(path=str(output), full_page=full_page)
        finally:
            browser.close()
