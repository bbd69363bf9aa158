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

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar, cast

from pneuma.host.exporters import ExportError
from pneuma.tools.chromium import CHROMIUM, CHROMIUM_ARGS

# Waits until web fonts and images of the page (and of same-origin frames) are in.
SETTLE_SCRIPT = """async () => {
  const docs = [document, ...Array.from(document.querySelectorAll('iframe'))
    .map((f) => { try { return f.contentDocument; } catch (e) { return null; } }).filter(Boolean)];
  await Promise.all(docs.map((d) => d.fonts ? d.fonts.ready : null));
  const images = docs.flatMap((d) => Array.from(d.images)).filter((i) => !i.complete);
  await Promise.all(images.map((i) => new Promise((r) => { i.onload = i.onerror = r; })));
}"""


T = TypeVar("T")
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


def playwright_detail(exc: BaseException) -> str:
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
    return chromium_failed(playwright_detail(exc))


def has_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def run_cli(*args: str, name: str, seconds: float | None = None) -> str:
    """Run the Chromium binary headless; what it printed on standard output."""
    binary = find_chromium()
    seconds = seconds or page_timeout_s()
    with tempfile.TemporaryDirectory(prefix="pneuma-chromium-") as profile:
        try:
            result = subprocess.run(
                [binary, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={profile}",
                 "--virtual-time-budget=10000", *args],
                # UTF-8 whatever the locale: --dump-dom prints the page as UTF-8
                capture_output=True, encoding="utf-8", errors="replace", timeout=seconds, check=False)
        except subprocess.TimeoutExpired:
            raise timed_out([hung_page(name, seconds)]) from None
        except OSError as exc:  # there, but not a program this machine can run
            raise chromium_failed(f"cannot start {binary}: {exc.strerror or exc}") from None
    if result.returncode != 0:  # said as playwright_detail says it: the status, then its last words
        said = [line[-300:] for line in result.stderr.strip().splitlines()[-1:]]
        raise chromium_failed("; ".join([f"exit status {result.returncode}", *said]))
    return result.stdout


# Each page (a slide, a document, a diagram) has a budget of its own, and
# the export one for all: a page whose script never ends is closed and left
# out, and the rest are still rendered (docs/modes.md, "When a page hangs").
PAGE_TIMEOUT_S = 20.0
EXPORT_TIMEOUT_S = 300.0
_PAGE_TIMEOUT_ENV = "PNEUMA_EXPORT_PAGE_TIMEOUT"


def page_timeout_s() -> float:
    """One page's budget in seconds: ``PNEUMA_EXPORT_PAGE_TIMEOUT`` when set
    to a positive number, else ``PAGE_TIMEOUT_S``."""
    try:
        value = float(os.environ.get(_PAGE_TIMEOUT_ENV, ""))
    except ValueError:
        return PAGE_TIMEOUT_S
    return value if value > 0 else PAGE_TIMEOUT_S


def budget_s(items: int) -> float:
    """The time budget of a file holding ``items`` slides or documents: one
    page's for each, at most the whole export's."""
    return min(page_timeout_s() * max(1, items), max(EXPORT_TIMEOUT_S, page_timeout_s()))


def hung_page(name: str, seconds: float) -> str:
    """The line that says a page was left out because it did not finish."""
    return (f"{name}: left out, it did not finish within {seconds:g} s "
            "(a script that never ends, or too much to draw)")


def timed_out(lines: list[str]) -> ExportError:
    """The error when every page was left out: ``E_TIMEOUT`` naming them."""
    shown = "; ".join(lines[:3]) + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
    return ExportError(f"nothing exported: {shown}", code="E_TIMEOUT",
                       hint="Fix the page's script (a loop that never ends), then export again")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, also when the
    calling thread already runs an event loop: then in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as error:  # handed back to the caller's thread
            box["error"] = error

    thread = threading.Thread(target=work, name="pneuma-render")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return cast(T, box["value"])


async def within(page: Any, seconds: float, work: Callable[[], Awaitable[None]]) -> bool:
    """Run ``work`` on ``page`` within ``seconds``; False when it did not
    finish. A page whose script never ends blocks its own JS thread, so
    waiting on it is useless: it is closed (which ends its renderer) and the
    caller opens a fresh one (measured: the close takes about 0.5 s)."""
    try:
        await asyncio.wait_for(work(), seconds)
    except TimeoutError:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(page.close(run_before_unload=False), 10)
        return False
    return True


async def print_in(browser: Any, html_file: Path, output: Path, size: dict[str, str], seconds: float) -> bool:
    """Print ``html_file`` to ``output`` in a new page of a running
    Playwright ``browser`` within ``seconds``; False when it did not finish."""
    page = await browser.new_page()

    async def work() -> None:
        await page.emulate_media(media="print")
        await page.goto(html_file.as_uri(), wait_until="load", timeout=0)
        await page.evaluate(SETTLE_SCRIPT)
        await page.pdf(path=str(output), print_background=True, prefer_css_page_size=not size,
                       width=size.get("width"), height=size.get("height"))

    return await within(page, seconds, work)


async def _pdf_async(html_file: Path, output: Path, size: dict[str, str], seconds: float) -> bool:
    """Print within ``seconds``; False when it did not finish."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            return await print_in(browser, html_file, output, size, seconds)
        finally:
            await browser.close()


def html_to_pdf(html_file: Path, output: Path, *, page_width: int | None = None,
                page_height: int | None = None, name: str | None = None, items: int = 1) -> None:
    """Print ``html_file`` to ``output``, print media, backgrounds on. Without
    a page size the page's CSS ``@page`` decides (A4 when it says nothing).

    ``items`` is how many slides or documents the file holds: its budget is
    one page's for each, at most the whole export's. One that does not print
    within it is ``E_TIMEOUT`` naming it (``name``, else the file's name)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    seconds = budget_s(items)
    if not has_playwright():
        run_cli("--no-pdf-header-footer", f"--print-to-pdf={output}", html_file.as_uri(),
                 name=name or html_file.name, seconds=seconds)
    else:
        from playwright.async_api import Error as PlaywrightError

        size = ({"width": f"{page_width}px", "height": f"{page_height}px"}
                if page_width and page_height else {})
        try:
            printed = run_sync(_pdf_async(html_file, output, size, seconds))
        except PlaywrightError as exc:
            raise chromium_failed(playwright_detail(exc)) from None
        if not printed:
            output.unlink(missing_ok=True)
            raise timed_out([hung_page(name or html_file.name, seconds)])
    if not output.is_file():
        raise chromium_failed("it wrote no PDF")


async def _png_async(jobs: list[tuple[Path, Path, str]], viewport: Any,
                     full_page: bool, seconds: float) -> list[str]:
    from playwright.async_api import async_playwright

    left_out: list[str] = []
    deadline = time.monotonic() + EXPORT_TIMEOUT_S
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport=viewport)
            for html_file, output, name in jobs:
                budget = min(seconds, deadline - time.monotonic())
                if budget <= 0:
                    left_out.append(f"{name}: left out, the export's {EXPORT_TIMEOUT_S:g} s were used up")
                    continue

                async def work(page: Any = page, html_file: Path = html_file, output: Path = output) -> None:
                    await page.goto(html_file.as_uri(), wait_until="load", timeout=0)
                    await page.evaluate(SETTLE_SCRIPT)
                    await page.screenshot(path=str(output), full_page=full_page, timeout=0)

                if not await within(page, budget, work):
                    output.unlink(missing_ok=True)
                    left_out.append(hung_page(name, budget))
                    page = await browser.new_page(viewport=viewport)
        finally:
            await browser.close()
    return left_out


def html_to_png(html_files: list[Path], outputs: list[Path], *, width: int, height: int,
                full_page: bool = False, names: list[str] | None = None) -> list[str]:
    """Screenshot each of ``html_files`` at ``width``×``height`` (the whole
    page when ``full_page``) into the matching path of ``outputs``; one
    browser for all of them.

    A page that does not finish within its budget (``page_timeout_s``) is
    left out and the others are still taken: the answer is one line per page
    left out, naming it (``names``, else its file name); ``E_TIMEOUT`` when
    every page was left out."""
    if len(html_files) != len(outputs) or (names is not None and len(names) != len(outputs)):
        raise ValueError("one output (and name) per HTML file")
    for output in outputs:
        output.parent.mkdir(parents=True, exist_ok=True)
    labels = names or [f.name for f in html_files]
    seconds = page_timeout_s()
    if not has_playwright():
        left_out = []
        for html_file, output, name in zip(html_files, outputs, labels, strict=True):
            try:
                run_cli("--hide-scrollbars", f"--window-size={width},{height}",
                         f"--screenshot={output}", html_file.as_uri(), name=name)
            except ExportError as exc:
                if exc.code != "E_TIMEOUT":
                    raise
                left_out.append(hung_page(name, seconds))
    else:
        from playwright.async_api import Error as PlaywrightError

        jobs = list(zip(html_files, outputs, labels, strict=True))
        try:
            left_out = run_sync(_png_async(jobs, {"width": width, "height": height}, full_page, seconds))
        except PlaywrightError as exc:
            raise chromium_failed(playwright_detail(exc)) from None
    if html_files and len(left_out) == len(html_files):
        raise timed_out(left_out)
    return left_out


def html_to_dom(html_file: Path, *, name: str | None = None, items: int = 1,
                local_modules: bool = False) -> str:
    """The DOM of ``html_file`` as text once its scripts have run (Chromium's
    ``--dump-dom``): for an exporter that renders with the viewer's own
    JavaScript and reads the result back from the page.

    ``local_modules`` lets the page import ES modules from local files
    (``--allow-file-access-from-files``): only for a page of the exporter's
    own, since its scripts may then read any local file. Errors and the time
    budget are ``html_to_pdf``'s."""
    seconds = budget_s(items)
    flags = ["--allow-file-access-from-files"] if local_modules else []
    return run_cli(*flags, "--dump-dom", html_file.as_uri(), name=name or html_file.name,
                    seconds=seconds)
