"""Render a local HTML file with the host's headless Chromium: print it to a
PDF, or take a screenshot of it. For exporters (``pneuma export``), which
run outside any session and may not have Playwright (a test dependency):
Playwright is used when it can be imported, otherwise the ``chromium``
binary's own ``--print-to-pdf`` / ``--screenshot``.

The file is opened as a ``file://`` URL, so it must be self-contained
(assets inlined); nothing here serves a workspace.

Failures are ``ExportError``\\ s with the code the Export menu shows
(docs/errors.md), the same for every mode: no Chromium installed is
``E_UNAVAILABLE`` (the message says how to install it), a Chromium that
crashed or failed to print is ``E_PREVIEW_FAIL``, one that did not finish
``E_TIMEOUT``. ``renderer_failure`` gives the host the same answer for a
Playwright error an exporter let escape.
"""

from __future__ import annotations

import re
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


_TIMEOUT_S = 120
INSTALL_CHROMIUM = ("install it with `sudo apt-get install chromium` (Debian, Ubuntu) or your "
                    "system's package manager, then export again")


def find_chromium() -> str:
    """The Chromium binary to render with: the host's (``CHROMIUM``), else one
    on PATH; ``ExportError`` ``E_UNAVAILABLE`` naming it and how to install
    it when there is none."""
    found = CHROMIUM if Path(CHROMIUM).exists() else (
        shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome"))
    if not found:
        raise _chromium_missing()
    return found


def _chromium_missing() -> ExportError:
    return ExportError(f"this export needs Chromium ({CHROMIUM}), and it is not installed; "
                       f"{INSTALL_CHROMIUM}", code="E_UNAVAILABLE")


def chromium_failed(detail: str) -> ExportError:
    """The one error for a Chromium that is installed but failed (crashed,
    could not start, printed nothing): ``E_PREVIEW_FAIL``."""
    return ExportError(f"Chromium failed: {detail}", code="E_PREVIEW_FAIL",
                       hint="Export again; if it fails again, check that `chromium --headless "
                            "--no-sandbox --dump-dom about:blank` runs on this machine")


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


# Playwright's launch error quotes the browser's stderr and exit code in its
# call log; the first line alone ("… has been closed") does not say why.
_BROWSER_STDERR = re.compile(r"\[pid=\d+\]\[err\] (.+)")
_BROWSER_EXIT = re.compile(r"exitCode=(\d+)")


def _playwright_detail(exc: BaseException) -> str:
    text = str(exc)
    parts = [_first_line(exc)]
    if exit_code := _BROWSER_EXIT.search(text):
        parts.append(f"exit status {exit_code.group(1)}")
    if said := _BROWSER_STDERR.findall(text):
        parts.append(said[-1].strip()[-300:])
    return "; ".join(parts)


def renderer_failure(exc: BaseException) -> ExportError | None:
    """The ``ExportError`` for a Playwright error an exporter let escape (the
    browser could not be started or died), or None when ``exc`` is not one:
    ``pneuma export`` and the Export menu answer it like ``html_to_pdf``'s own."""
    try:
        from playwright.sync_api import Error as PlaywrightError
    except ImportError:
        return None
    if not isinstance(exc, PlaywrightError):
        return None
    if "executable doesn't exist" in str(exc).lower():  # launched with a CHROMIUM not there
        return _chromium_missing()
    return chromium_failed(_playwright_detail(exc))


def _has_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def _run_cli(*args: str) -> None:
    binary = find_chromium()
    with tempfile.TemporaryDirectory(prefix="pneuma-chromium-") as profile:
        try:
            result = subprocess.run(
                [binary, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={profile}",
                 "--virtual-time-budget=10000", *args],
                capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise ExportError(f"Chromium did not finish within {_TIMEOUT_S} s",
                              code="E_TIMEOUT") from None
        except OSError as exc:  # there, but not a program this machine can run
            raise chromium_failed(f"cannot start {binary}: {exc.strerror or exc}") from None
    if result.returncode != 0:
        tail = result.stderr.strip().splitlines()[-1:] or [f"exit status {result.returncode}"]
        raise chromium_failed(tail[0][-300:])


def html_to_pdf(html_file: Path, output: Path, *, page_width: int | None = None,
                page_height: int | None = None) -> None:
    """Print ``html_file`` to ``output``, print media, backgrounds on. Without
    a page size the page's CSS ``@page`` decides (A4 when it says nothing)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    if not _has_playwright():
        _run_cli("--no-pdf-header-footer", f"--print-to-pdf={output}", html_file.as_uri())
    else:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright

        binary = find_chromium()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=binary, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page()
                    page.emulate_media(media="print")
                    page.goto(html_file.as_uri(), wait_until="load")
                    page.evaluate(_SETTLE_SCRIPT)
                    size = ({"width": f"{page_width}px", "height": f"{page_height}px"}
                            if page_width and page_height else {})
                    page.pdf(path=str(output), print_background=True,
                             prefer_css_page_size=not size, **size)
                finally:
                    browser.close()
        except PlaywrightError as exc:
            raise chromium_failed(_playwright_detail(exc)) from None
    if not output.is_file():
        raise chromium_failed("it wrote no PDF")


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
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    binary = find_chromium()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=binary, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": width, "height": height})
                for html_file, output in zip(html_files, outputs, strict=True):
                    page.goto(html_file.as_uri(), wait_until="load")
                    page.evaluate(_SETTLE_SCRIPT)
                    page.screenshot(path=str(output), full_page=full_page)
            finally:
                browser.close()
    except PlaywrightError as exc:
        raise chromium_failed(_playwright_detail(exc)) from None
