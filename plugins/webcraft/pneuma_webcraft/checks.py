"""The webcraft mode's check after every turn (docs/checks.md): each page the
turn changed (or that uses a stylesheet, script or image it changed) is
loaded at a phone and a desktop width, and what a visitor would meet is
reported: script errors on the console, the site's own files that fail to
load or answer 404, and axe-core's serious and critical accessibility
violations, each naming the page, the element's selector and the rule.

The page is untrusted workspace content, so it runs as the exports and
crops run it (render.py): in headless Chromium with the network closed.
Every request is answered here, from the site's files read through the
sandbox (site.py), on an origin of its own that no server listens on
(``SITE_ORIGIN``); anything else is refused, WebSockets included, and
service workers are blocked. Served over http rather than ``file://``, a
page's ``fetch('data.json')`` works as it does in the preview, so a failed
fetch is the site's fault, not the check's.
"""

from __future__ import annotations

import asyncio
import mimetypes
import posixpath
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pneuma.api import (
    CHROMIUM,
    CHROMIUM_ARGS,
    CheckRequest,
    Problem,
    ToolError,
    TurnCheck,
    run_sync,
    shell_static_dir,
    within,
)

from .site import SITE_SUFFIXES, VIEWPORTS, read_site

# No server listens there: every request to it is answered by the route below.
SITE_ORIGIN = "http://127.0.0.1:9/"
WIDTHS = ("phone", "desktop")
# The shell's pinned axe-core (pneuma/web/package.json), the copy `pneuma mode check` uses too.
AXE_SOURCE = shell_static_dir() / "vendor" / "axe.min.js"
REPORTED_IMPACTS = frozenset({"serious", "critical"})
MAX_PAGES = 8  # a turn that touched the stylesheet of a large site checks its first pages
PAGE_SECONDS = 8.0  # one page at one width: load, settle, axe
TOTAL_SECONDS = 15.0  # the whole check, within the runner's budget (docs/checks.md)
SETTLE_MS = 300  # script errors of a page's first timers still count
MAX_PROBLEMS = 40
_RUN_AXE = """async (impacts) => {
  const results = await window.axe.run(document, { resultTypes: ["violations"] });
  return results.violations.filter((v) => impacts.includes(v.impact)).map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")), count: v.nodes.length,
    html: v.nodes.length ? v.nodes[0].html : "",
  }));
}"""


@dataclass
class PageReport:
    """What one page showed at one width."""

    page: str
    width: str
    console_errors: list[tuple[str, str | None, int | None]] = field(default_factory=list)
    failed_loads: list[tuple[str, str]] = field(default_factory=list)
    violations: list[dict[str, Any]] = field(default_factory=list)
    axe_error: str | None = None
    timed_out: bool = False
    skipped: bool = False  # not loaded: the check's time was spent on the pages before it
    load_error: str | None = None


def pages_to_check(site_files: Sequence[str], changed: Sequence[str], texts: dict[str, str]) -> list[str]:
    """The changed pages first, then the pages that name a changed file of
    the site (its stylesheet, script, image), at most MAX_PAGES."""
    pages = [p for p in site_files if p.lower().endswith((".html", ".htm"))]
    site = set(site_files)
    changed_site = [p for p in changed if p in site]
    chosen = [p for p in pages if p in changed_site]
    others = [p for p in changed_site if p not in chosen]
    for page in pages:
        if page in chosen:
            continue
        text = texts.get(page, "")
        if any(posixpath.basename(other) in text for other in others):
            chosen.append(page)
    return chosen[:MAX_PAGES]


def check_site(workspace: Path, changed: Sequence[str], total_seconds: float = TOTAL_SECONDS) -> list[Problem]:
    """The problems a visitor would meet on the pages this turn touched,
    found within ``total_seconds`` (the pages left then are named)."""
    try:
        files = {item.path: item.data for item in read_site(workspace)}
    except ToolError as error:
        return [Problem(f"the site cannot be read: {error.message}")]
    texts = {p: d.decode("utf-8", "replace") for p, d in files.items() if p.lower().endswith((".html", ".htm"))}
    pages = pages_to_check(sorted(files), changed, texts)
    if not pages:
        return []
    try:
        reports = run_sync(inspect_pages(files, pages, total_seconds=total_seconds))
    except Exception as error:  # Chromium or Playwright, not the site: the check's error, not the turn's
        raise RuntimeError(f"the webcraft page check failed: {_first_line(error)}") from error
    return problems_of(reports, texts)


async def inspect_pages(files: dict[str, bytes], pages: Sequence[str],
                        widths: Sequence[str] = WIDTHS, page_seconds: float = PAGE_SECONDS,
                        total_seconds: float = TOTAL_SECONDS) -> list[PageReport]:
    """Load each page at each width in one headless Chromium and record
    what it showed (see PageReport)."""
    from playwright.async_api import async_playwright

    axe = AXE_SOURCE.read_text("utf-8") if AXE_SOURCE.is_file() else None
    deadline = time.monotonic() + total_seconds
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            # The widths side by side: a page's load waits on its files and
            # timers as much as on the CPU.
            found = await asyncio.gather(*(_inspect_width(browser, files, pages, width, axe, page_seconds, deadline)
                                           for width in widths))
        finally:
            await browser.close()
    return [report for reports in found for report in reports]


async def _inspect_width(browser: Any, files: dict[str, bytes], pages: Sequence[str], width: str,
                         axe: str | None, page_seconds: float, deadline: float) -> list[PageReport]:
    w, h = VIEWPORTS[width]
    context = await browser.new_context(viewport={"width": w, "height": h}, bypass_csp=True,
                                        service_workers="block")
    reports: list[PageReport] = []
    try:
        await context.route("**/*", _answer_from(files))
        await context.route_web_socket(re.compile(".*"), _refuse_socket)
        for page_path in pages:
            report = PageReport(page_path, width)
            left = deadline - time.monotonic()
            if left < 1:
                report.skipped = True
            else:
                await _inspect(context, report, axe, min(page_seconds, left))
            reports.append(report)
    finally:
        await context.close()
    return reports


async def _inspect(context: Any, report: PageReport, axe: str | None, seconds: float) -> None:
    page = await context.new_page()
    page.on("console", lambda message: _on_console(report, message))
    page.on("pageerror", lambda error: _on_page_error(report, error))
    page.on("requestfailed", lambda request: _on_failed(report, request.url, request.failure or "failed"))
    page.on("response", lambda response: _on_response(report, response.url, response.status))

    async def work() -> None:
        await page.goto(SITE_ORIGIN + report.page, wait_until="load", timeout=0)
        await page.wait_for_timeout(SETTLE_MS)
        if axe is None:
            report.axe_error = "axe-core is not installed (run scripts/build-web)"
            return
        try:
            await page.add_script_tag(content=axe)
            report.violations = await page.evaluate(_RUN_AXE, sorted(REPORTED_IMPACTS))
        except Exception as error:  # the page broke axe (navigated away, replaced its globals)
            report.axe_error = _first_line(error)

    try:
        # within() closes a page whose script never ends (its renderer with it).
        if not await within(page, seconds, work):
            report.timed_out = True
    except Exception as error:  # this page could not be loaded here; the others still are
        report.load_error = _first_line(error)
    finally:
        if not page.is_closed():
            await page.close()


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:300]


def _site_path(url: str) -> str | None:
    """The site's file a URL of SITE_ORIGIN names, or None for any other URL."""
    if not url.startswith(SITE_ORIGIN):
        return None
    path = unquote(urlsplit(url).path).lstrip("/")
    path = posixpath.normpath(path) if path else ""
    if path in ("", "."):
        return "index.html"
    return path + "/index.html" if url.split("?")[0].endswith("/") else path


def _answer_from(files: dict[str, bytes]) -> Any:
    async def answer(route: Any) -> None:
        url: str = route.request.url
        if url.startswith(("data:", "blob:")):
            await route.continue_()
            return
        path = _site_path(url)
        if path is None:
            await route.abort("blockedbyclient")
            return
        data = files.get(path)
        if data is None and (path + "/index.html") in files:
            data = files[path + "/index.html"]
        if data is None:
            await route.fulfill(status=404, body="not in the site", content_type="text/plain")
            return
        await route.fulfill(status=200, body=data, content_type=_content_type(path))

    return answer


async def _refuse_socket(socket: Any) -> None:
    await socket.close()


def _content_type(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".js", ".mjs"):
        return "text/javascript"
    if suffix == ".webmanifest":
        return "application/manifest+json"
    guessed = mimetypes.guess_type(path)[0] if suffix in SITE_SUFFIXES else None
    kind = guessed or "application/octet-stream"
    return kind + "; charset=utf-8" if kind.startswith("text/") or kind.endswith(("json", "xml")) else kind


def _on_console(report: PageReport, message: Any) -> None:
    if message.type != "error":
        return
    text: str = message.text
    # A file that did not load is reported once, as a failed load, not again
    # as the console's "Failed to load resource" line.
    if text.startswith("Failed to load resource"):
        return
    location = message.location or {}
    file = _site_path(location.get("url") or "")
    line = location.get("lineNumber")
    report.console_errors.append((text, file, line + 1 if isinstance(line, int) and file else None))


def _on_page_error(report: PageReport, error: Any) -> None:
    stack = str(getattr(error, "stack", "") or "")
    found = re.search(re.escape(SITE_ORIGIN) + r"([^\s:)]+):(\d+)", stack)
    file = unquote(found.group(1)) if found else None
    line = int(found.group(2)) if found else None
    name = getattr(error, "name", "") or "Error"
    report.console_errors.append((f"Uncaught {name}: {error.message}", file, line))


def _on_failed(report: PageReport, url: str, reason: str) -> None:
    path = _site_path(url)
    if path is not None:
        report.failed_loads.append((path, reason))


def _on_response(report: PageReport, url: str, status: int) -> None:
    path = _site_path(url)
    if path is not None and status >= 400:
        report.failed_loads.append((path, f"answers {status}" + (" (not in the site)" if status == 404 else "")))


def _line_naming(text: str, path: str) -> int | None:
    """The first line of a page that names a file (by its name), or None."""
    name = posixpath.basename(path)
    for number, line in enumerate(text.splitlines(), start=1):
        if name and name in line:
            return number
    return None


def _line_of_tag(text: str, html: str) -> int | None:
    """The line of a page's source where an element's opening tag (as axe
    quotes it) is written, when it is written so; None otherwise."""
    tag = html.split(">", 1)[0]
    if len(tag) < 3 or not text:
        return None
    at = text.find(tag)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def problems_of(reports: Sequence[PageReport], texts: dict[str, str] | None = None) -> list[Problem]:
    """One problem per distinct finding, naming the widths it was seen at;
    ``texts`` (page -> HTML) gives a failed load the line that names it."""
    texts = texts or {}
    found: dict[tuple[Any, ...], tuple[Problem, list[str]]] = {}

    def add(key: tuple[Any, ...], width: str, problem: Problem) -> None:
        if key in found:
            found[key][1].append(width)
        else:
            found[key] = (problem, [width])

    for report in reports:
        page, width = report.page, report.width
        where = {"file": page, "page": page}
        if report.skipped:
            add(("skipped", page), width, Problem(
                f"{page} was not checked: the check's time was spent on the pages before it",
                file=page, severity="warning", locate=where))
            continue
        if report.timed_out:
            add(("timeout", page), width, Problem(
                f"{page} did not finish loading within {PAGE_SECONDS:g} s (a script that never ends?)",
                file=page, locate=where))
        for text, file, line in report.console_errors:
            add(("console", page, text), width, Problem(
                f"{page}: script error on the console: {text[:300]}", file=file or page,
                line=line, locate=where))
        for path, reason in report.failed_loads:
            add(("load", page, path), width, Problem(
                f"{page} loads {path}, which {reason if reason.startswith('answers') else 'failed: ' + reason}",
                file=page, line=_line_naming(texts.get(page, ""), path), locate=where))
        if report.load_error:
            add(("load-error", page), width, Problem(f"{page} could not be checked: {report.load_error}",
                                                     file=page, severity="warning", locate=where))
        if report.axe_error:
            add(("axe", page), width, Problem(f"{page}: accessibility not checked: {report.axe_error}",
                                              file=page, severity="warning", locate=where))
        for violation in report.violations:
            selector = violation["targets"][0] if violation["targets"] else ""
            more = violation["count"] - 1
            add(("axe", page, violation["id"], selector), width, Problem(
                f"{page}: accessibility rule {violation['id']} ({violation['impact']}): {violation['help']}"
                f" — at {selector}" + (f" and {more} more element{'s' if more > 1 else ''}" if more > 0 else ""),
                file=page, line=_line_of_tag(texts.get(page, ""), violation.get("html") or ""),
                locate={"file": page, "page": page, "selector": selector}))
    problems: list[Problem] = []
    for problem, widths in found.values():
        if len(widths) < len(WIDTHS) and problem.file is not None:
            problem = Problem(f"{problem.message} (at {' and '.join(widths)} width)", problem.file,
                              problem.line, problem.severity, problem.locate)
        problems.append(problem)
    return problems[:MAX_PROBLEMS]


def _run(request: CheckRequest) -> list[Problem]:
    # Chromium's start and close come on top of the pages' time.
    budget = getattr(request, "budget_s", TOTAL_SECONDS + 5)
    return check_site(request.workspace, request.changed, max(2.0, min(TOTAL_SECONDS, budget - 5)))


CHECKS = [TurnCheck(mode="webcraft", name="page",
                    label={"en": "Pages: console, loads, accessibility", "zh-CN": "页面：控制台、加载、无障碍"},
                    run=_run)]
