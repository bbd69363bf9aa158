"""Run a viewer's own JavaScript outside the server, for an exporter: load
an ES module of the exporter's own in headless Chromium, call one of its
functions with a job (JSON) and get back what it returns (JSON); and, for a
PDF, print the page the exporter makes of that answer in the same browser.

``run_script`` runs a module that needs no DOM (``needs_no_dom``) in
Node.js when there is one on PATH that can (``script_page_node/run.mjs``: module hooks map each folder's URL prefix
to the folder and load every ``.js`` as an ES module, as a browser does; the
job on standard input, the answer on standard output): no browser at all.
Otherwise it is one bare start of the binary (``--dump-dom``): an import
map points the folders at their files, which needs
``--allow-file-access-from-files``, so the page is the exporter's own and
nothing of the job becomes markup in it (the job waits in an inert JSON
script, ``<`` written ``\u003c``; the answer is written into the page as
text and read back as JSON).

``run_script_then_pdf`` renders and prints in one Chromium when Playwright
is there (``scripts/install`` installs it): the module runs in a page
served from a private origin that exists only inside the browser
(``page.route`` answers the exporter's blank page and the folders' files
and refuses every other request), the job goes in as an argument of
``page.evaluate`` and the answer comes back the same way, and no flag lets
any page read local files; then the page the exporter makes is served on
that origin as a new document in the same page and printed as
``html_to_pdf`` prints (print media, backgrounds, its ``@page`` size). It
must be self-contained, as ``html_to_pdf``'s file must: a request it makes
for anything but the folders' files is refused. Without Playwright it is
``run_script`` and then ``html_to_pdf``: two starts.

Errors and budgets are ``html_to_pdf``'s (docs/errors.md): no Chromium is
``E_UNAVAILABLE``, a Chromium that fails or a module that throws
``E_PREVIEW_FAIL``, a page that does not finish within its budget
``E_TIMEOUT`` naming it.
"""

from __future__ import annotations

import html
import json
import mimetypes
import re
import shutil
import subprocess
import tempfile
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.host.exporters import ExportError
from pneuma.tools.chromium import CHROMIUM_ARGS
from pneuma.tools.html_render import (
    SETTLE_SCRIPT,
    budget_s,
    chromium_failed,
    find_chromium,
    has_playwright,
    html_to_dom,
    html_to_pdf,
    hung_page,
    playwright_detail,
    run_sync,
    timed_out,
    within,
)

# An origin no network has: requests to it are answered by the page's route
# or refused, never sent anywhere.
ORIGIN = "http://pneuma-export.localhost"
_BLANK_PAGE = '<!doctype html><html><head><meta charset="utf-8"></head><body></body></html>'

# Runs in the page: the module's function with the job; an exception comes
# back as a value (a rejected evaluate would read as a Chromium failure).
_CALL = """async ([url, name, job]) => {
  try {
    const module = await import(url);
    return {answer: await module[name](job)};
  } catch (e) {
    return {fatal: String((e && e.message) || e)};
  }
}"""


@dataclass(frozen=True)
class ScriptPage:
    """What an exporter's page may load: ``folders`` maps URL path prefixes
    (``"/static/lib/"``) to folders on disk whose files it serves; ``module``
    is the URL path of the ES module to load (under one of them) and
    ``function`` the name of its export to call with the job. ``needs_no_dom``
    says the module runs without a page (no ``document``, no ``window``), so
    ``run_script`` may run it in Node.js instead of a browser."""

    folders: Mapping[str, Path]
    module: str
    function: str
    needs_no_dom: bool = False

    def file_for(self, url_path: str) -> Path | None:
        """The file a URL path names, when it is inside one of the folders."""
        for prefix, folder in self.folders.items():
            if not url_path.startswith(prefix):
                continue
            root = folder.resolve()
            candidate = (root / url_path[len(prefix):]).resolve()
            if candidate.is_relative_to(root) and candidate.is_file():
                return candidate
        return None


def run_script(script: ScriptPage, job: Any, *, name: str, items: int = 1) -> Any:
    """What ``script.function(job)`` returns, run in headless Chromium.
    ``name`` says what is rendered in errors ("the documents"); ``items``
    sets the budget as ``html_to_pdf``'s."""
    _check_module(script)
    # Node.js, when it is there, runs the same module without a browser
    # (measured: 0.74-1.21 s against 1.85-2.93 s for a bare Chromium start
    # under the same load, docs/performance.md). Otherwise one bare start of
    # the binary is the cheapest way to an answer: through Playwright its
    # driver starts too, about half a second more.
    answer = _run_with_node(script, job, name, items)
    if answer is not _NO_NODE:
        return answer
    return _run_with_binary(script, job, name, items)


def run_script_then_pdf(script: ScriptPage, job: Any, to_html: Callable[[Any], str], output: Path, *,
                        name: str, items: int = 1) -> Any:
    """``run_script``, then the page ``to_html`` makes of its answer printed
    to ``output`` as ``html_to_pdf`` prints (print media, backgrounds, the
    page's ``@page`` size) in the same browser; the answer."""
    _check_module(script)
    output.parent.mkdir(parents=True, exist_ok=True)
    if not has_playwright():
        answer = _run_with_binary(script, job, name, items)
        with tempfile.TemporaryDirectory(prefix="pneuma-script-print-") as tmp_dir:
            page = Path(tmp_dir) / "page.html"
            page.write_text(to_html(answer), encoding="utf-8")
            html_to_pdf(page, output, name=name, items=items)
        return answer
    answer = _in_playwright(script, job, to_html, output, name, items)
    if not output.is_file():
        raise chromium_failed("it wrote no PDF")
    return answer


def _check_module(script: ScriptPage) -> None:
    if script.file_for(script.module) is None:
        raise ValueError(f"{script.module} is not a file under the script page's folders")


def _answer(got: Any, name: str) -> Any:
    if not isinstance(got, dict) or "answer" not in got:
        detail = got.get("fatal") if isinstance(got, dict) else "no answer"
        raise ExportError(f"{name} could not be rendered: {detail}", code="E_PREVIEW_FAIL")
    return got["answer"]


# --- with Playwright: one browser -------------------------------------------------


def _in_playwright(script: ScriptPage, job: Any, to_html: Callable[[Any], str], output: Path,
                   name: str, items: int) -> Any:
    from playwright.async_api import Error as PlaywrightError

    try:
        return run_sync(_in_one_browser(script, job, to_html, output, name, budget_s(items)))
    except PlaywrightError as exc:
        raise chromium_failed(playwright_detail(exc)) from None


async def _in_one_browser(script: ScriptPage, job: Any, to_html: Callable[[Any], str], output: Path,
                          name: str, seconds: float) -> Any:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            # A context of its own: the route and the origin's storage end with it.
            context = await browser.new_context()
            page = await context.new_page()
            origin = _Origin(script)
            await page.route("**/*", origin.serve)
            answer = _answer(await _call(page, script, job, name, seconds), name)
            # Printed in the same page, a new document of the same origin: no
            # second renderer process, and the page can fetch nothing but
            # the folders' files (measured: 0.25-0.46 s for the print, against
            # 0.67-1.37 s from a file in a fresh page).
            origin.printed = to_html(answer)
            if not await _print(page, output, seconds):
                output.unlink(missing_ok=True)
                raise timed_out([hung_page(name, seconds)])
            return answer
        finally:
            await browser.close()


async def _call(page: Any, script: ScriptPage, job: Any, name: str, seconds: float) -> Any:
    got: dict[str, Any] = {}

    async def work() -> None:
        await page.goto(ORIGIN + "/", wait_until="load", timeout=0)
        got["value"] = await page.evaluate(_CALL, [ORIGIN + script.module, script.function, job])

    if not await within(page, seconds, work):
        raise timed_out([hung_page(name, seconds)])
    return got["value"]


async def _print(page: Any, output: Path, seconds: float) -> bool:
    async def work() -> None:
        await page.emulate_media(media="print")
        await page.goto(ORIGIN + _PRINTED_PATH, wait_until="load", timeout=0)
        await page.evaluate(SETTLE_SCRIPT)
        await page.pdf(path=str(output), print_background=True, prefer_css_page_size=True)

    return await within(page, seconds, work)


_PRINTED_PATH = "/printed"


class _Origin:
    """The private origin: the blank page, the folders' files and, once it
    is made, the page to print; every other request is refused."""

    def __init__(self, script: ScriptPage) -> None:
        self.script = script
        self.printed: str | None = None

    async def serve(self, route: Any) -> None:
        url = urllib.parse.urlsplit(route.request.url)
        if f"{url.scheme}://{url.netloc}" != ORIGIN:
            await route.abort("blockedbyclient")
            return
        path = urllib.parse.unquote(url.path)
        page = _BLANK_PAGE if path == "/" else self.printed if path == _PRINTED_PATH else None
        if page is not None:
            await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=page)
            return
        found = self.script.file_for(path)
        if found is None:
            await route.fulfill(status=404, content_type="text/plain", body="not found")
            return
        kind = "text/javascript" if found.suffix in (".js", ".mjs") else (
            mimetypes.guess_type(found.name)[0] or "application/octet-stream")
        await route.fulfill(status=200, content_type=kind, body=found.read_bytes())


# --- the answer alone: Node.js, else the binary's --dump-dom ---------------------------

_NODE_RUNNER = Path(__file__).resolve().parent / "script_page_node" / "run.mjs"
_NO_NODE = object()


def _run_with_node(script: ScriptPage, job: Any, name: str, items: int) -> Any:
    """``function(job)`` run by Node.js; ``_NO_NODE`` when the module needs
    a page or there is no Node.js that can run it (none on PATH, or one too
    old for module hooks), for the caller to render in Chromium instead."""
    node = shutil.which("node") if script.needs_no_dom else None
    if node is None:
        return _NO_NODE
    folders = json.dumps({prefix: str(folder.resolve()) for prefix, folder in script.folders.items()})
    seconds = budget_s(items)
    try:
        done = subprocess.run([node, str(_NODE_RUNNER), folders, script.module, script.function],
                              input=json.dumps(job), capture_output=True, encoding="utf-8", errors="replace",
                              timeout=seconds, check=False)
    except subprocess.TimeoutExpired:
        raise timed_out([hung_page(name, seconds)]) from None
    except OSError:
        return _NO_NODE
    try:
        got = json.loads(done.stdout)
    except ValueError:
        return _NO_NODE  # it could not run the runner at all: Chromium can
    return _answer(got, name)


# --- without Playwright: the binary's --dump-dom --------------------------------------

_RESULT = re.compile(r'<pre id="pneuma-result">(.*?)</pre>', re.S)
_DUMP_PAGE = """<!doctype html>
<html><head><meta charset="utf-8">
<script type="importmap">{import_map}</script></head><body>
<script type="module">
import * as module from {module};
let got;
try {{
  got = {{answer: await module[{function}](JSON.parse(document.getElementById("pneuma-job").textContent))}};
}} catch (e) {{
  got = {{fatal: String((e && e.message) || e)}};
}}
const out = document.createElement("pre");
out.id = "pneuma-result";
out.textContent = JSON.stringify(got);
document.body.append(out);
</script>
<script type="application/json" id="pneuma-job">{job}</script>
</body></html>
"""


def _run_with_binary(script: ScriptPage, job: Any, name: str, items: int) -> Any:
    # The import map points each folder's URL prefix at the folder, so the
    # modules' absolute imports ("/static/lib/…") find their files.
    import_map = {"imports": {prefix: folder.resolve().as_uri() + "/" for prefix, folder in script.folders.items()}}
    # "</" inside a script would end it early; \u003c keeps the JSON equal.
    text = json.dumps(job).replace("<", "\\u003c")
    with tempfile.TemporaryDirectory(prefix="pneuma-script-page-") as tmp_dir:
        page = Path(tmp_dir) / "render.html"
        page.write_text(_DUMP_PAGE.format(import_map=json.dumps(import_map), job=text,
                                          module=json.dumps(script.module),
                                          function=json.dumps(script.function)), encoding="utf-8")
        dom = html_to_dom(page, name=name, items=items, local_modules=True)
    found = _RESULT.search(dom)
    if not found:
        raise chromium_failed(f"{name}: the page's script did not run")
    return _answer(json.loads(html.unescape(found.group(1))), name)
