"""Mermaid in headless Chromium: parse and render diagrams outside the viewer.

The agent's tools (``validate_diagram``, ``render_diagram``) and the export
must give the same answer as the viewer, so they run the very same mermaid
bundle (``static/vendor/mermaid.iife.js``, built by scripts/build-web) in
Chromium: a throw-away page loads it, parses or renders every source, and
writes the outcome as JSON into the DOM, which ``--dump-dom`` prints. PNGs
are Chromium's ``--screenshot`` of the rendered SVG at its own size.

Renders for files use ``htmlLabels: false``: labels become SVG ``<text>``
instead of ``<foreignObject>`` HTML, so an exported SVG shows its labels in
every SVG reader, not only in browsers.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.api import (
    CHROMIUM_ARGS,
    EXPORT_TIMEOUT_S,
    ExportError,
    find_chromium,
    page_timeout_s,
    renderer_failure,
    within,
)
from pneuma_diagram.warm import RENDERER, WarmRenderer

PACKAGE_DIR = Path(__file__).resolve().parent
MERMAID_BUNDLE = PACKAGE_DIR / "static" / "vendor" / "mermaid.iife.js"
THEMES = ("light", "dark")
PNG_SCALE = 2
_TIMEOUT_S = 90
_RESULT = re.compile(r'<pre id="pneuma-result">(.*?)</pre>', re.S)
_VIEWBOX = re.compile(r'viewBox="\s*([-\d.]+)[\s,]+([-\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)\s*"')
_LINE_IN_MESSAGE = re.compile(r"\bline (\d+)", re.I)
_COLUMN_IN_MESSAGE = re.compile(r"\bcolumn (\d+)", re.I)


class RenderUnavailable(RuntimeError):
    """Chromium or the mermaid bundle is missing, or Chromium failed.
    ``code`` is the error model's name for which (docs/errors.md):
    ``E_UNAVAILABLE`` something is not installed, ``E_TIMEOUT``, or
    ``E_PREVIEW_FAIL`` Chromium was there and failed."""

    def __init__(self, message: str, code: str = "E_PREVIEW_FAIL") -> None:
        super().__init__(message)
        self.code = code


@dataclass
class DiagramError:
    message: str
    line: int | None
    column: int | None
    hint: str

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "line": self.line, "column": self.column, "hint": self.hint}


@dataclass
class Outcome:
    """One source's result: its diagram type and SVG, or the parser's error."""

    ok: bool
    diagram_type: str | None = None
    svg: str | None = None
    error: DiagramError | None = None
    left_out: str | None = None  # over a limit or out of time, in plain words; not a syntax error


# --- the page Chromium runs ---------------------------------------------------------

# One source parsed (and rendered): the viewer's mermaid, the viewer's settings.
_RENDER_ONE = r"""
function pneumaInit(theme) {
  PneumaMermaid.mermaid.initialize({startOnLoad: false, securityLevel: "strict", theme: theme,
    htmlLabels: false, flowchart: {htmlLabels: false}});
}
// mermaid's SVG is HTML markup (&nbsp;, xlink:href with no namespace, a
// duplicate attribute now and then): read back as HTML, made portable, and
// written out by the XML serialiser, so every SVG reader can open the file.
const PNEUMA_XML_NS = "http://www.w3.org/XML/1998/namespace";
const PNEUMA_SVG_NS = "http://www.w3.org/2000/svg";
function pneumaPortable(markup) {
  const doc = new DOMParser().parseFromString("<!doctype html><body>" + markup, "text/html");
  const parsed = doc.querySelector("svg");
  if (!parsed) return markup;
  // in this page for a moment, so the HTML labels' colours and fonts can be read
  const holder = document.createElement("div");
  holder.style.cssText = "position:absolute;left:-100000px;top:0;visibility:hidden";
  const svg = document.importNode(parsed, true);
  holder.append(svg);
  document.body.append(holder);
  try {
    svg.querySelectorAll("foreignObject").forEach(pneumaForeignToText);
    pneumaDropFilters(svg);
    svg.querySelectorAll("text, tspan").forEach((t) => {
      if (/^\s|\s$/.test(t.textContent)) t.setAttributeNS(PNEUMA_XML_NS, "xml:space", "preserve");
    });
    return new XMLSerializer().serializeToString(svg);
  } finally {
    holder.remove();
  }
}
// HTML inside an SVG shows only in browsers: its text becomes SVG text, one
// line per block or <br>, centred in its box, in the colour and font the
// browser drew it with. In a <switch> mermaid drew a <text> fallback beside
// it, but in colours meant for the box (the journey's section names vanish
// on their own fill): the converted text takes the whole switch's place.
function pneumaForeignToText(fo) {
  const inner = [...fo.querySelectorAll("*")].filter((el) => el.textContent.trim()).pop() || fo;
  const look = getComputedStyle(inner);
  fo.querySelectorAll("br").forEach((br) => br.replaceWith("\n"));
  fo.querySelectorAll("div, p, li").forEach((block) => block.append("\n"));
  const lines = fo.textContent.split("\n").map((l) => l.trim()).filter((l) => l);
  const num = (name) => parseFloat(fo.getAttribute(name) || "0") || 0;
  const size = parseFloat(look.fontSize) || 16;
  const text = document.createElementNS(PNEUMA_SVG_NS, "text");
  const x = num("x") + num("width") / 2;
  const top = num("y") + num("height") / 2 - ((lines.length - 1) * 1.2 * size) / 2;
  text.setAttribute("text-anchor", "middle");
  text.setAttribute("dominant-baseline", "central");
  text.setAttribute("fill", look.color);
  text.setAttribute("font-size", look.fontSize);
  text.setAttribute("font-family", look.fontFamily);
  text.setAttribute("font-weight", look.fontWeight);
  if (look.fontStyle !== "normal") text.setAttribute("font-style", look.fontStyle);
  lines.forEach((line, n) => {
    const span = document.createElementNS(PNEUMA_SVG_NS, "tspan");
    span.setAttribute("x", String(x));
    span.setAttribute("y", String(top + n * 1.2 * size));
    span.textContent = line;
    text.append(span);
  });
  const parent = fo.parentNode;
  (parent && parent.localName === "switch" ? parent : fo).replaceWith(text);
}
// librsvg (and other renderers) drop what a CSS filter such as mermaid's
// drop shadow is on: the sequence diagram's participant boxes vanish. A
// shadow is decoration, the box is content: the filters go.
function pneumaDropFilters(svg) {
  const noFilter = (css) => css.replace(/(^|[;{\s])(-webkit-)?filter\s*:[^;}]*;?/gi, "$1");
  svg.querySelectorAll("[filter]").forEach((el) => el.removeAttribute("filter"));
  svg.querySelectorAll("[style]").forEach((el) => el.setAttribute("style", noFilter(el.getAttribute("style"))));
  svg.querySelectorAll("style").forEach((el) => { el.textContent = noFilter(el.textContent); });
}
async function pneumaRenderOne(text, i, render) {
  const mermaid = PneumaMermaid.mermaid;
  try {
    const parsed = await mermaid.parse(text);
    if (render) {
      const r = await mermaid.render("pneuma-diagram-" + i, text);
      return {ok: true, type: r.diagramType, svg: pneumaPortable(r.svg)};
    }
    return {ok: true, type: parsed && parsed.diagramType};
  } catch (e) {
    const hash = (e && e.hash) || {};
    const loc = hash.loc || {};
    document.querySelectorAll("body > div[id^=dpneuma-diagram-]").forEach((n) => n.remove());
    return {ok: false, message: String((e && e.message) || e),
      line: loc.first_line ?? (hash.line != null ? hash.line + 1 : null),
      column: loc.first_column ?? null, token: hash.token ?? null,
      expected: hash.expected ?? null};
  }
}
"""

# Every source in one page, the outcome as JSON in the DOM (``--dump-dom``):
# without Playwright.
_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>body{{margin:0;background:{background}}}</style></head>
<body><script src="{bundle}"></script>
<script>{render_one}</script>
<script>
(async () => {{
  const job = {job};
  const out = [];
  try {{
    pneumaInit(job.theme);
    for (let i = 0; i < job.sources.length; i++) {{
      out.push(await pneumaRenderOne(job.sources[i], i, job.render));
    }}
  }} catch (e) {{
    out.push({{fatal: String((e && e.message) || e)}});
  }}
  const pre = document.createElement("pre");
  pre.id = "pneuma-result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}})();
</script></body></html>
"""

# The warm page (warm.py) every source is rendered in, one at a time (with
# Playwright): a diagram too heavy to lay out blocks the page's JS thread,
# so each gets a budget of its own, and after one that hangs the next gets
# a fresh page. Its theme is set per call (``pneumaStart``).
_ONE_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>body{{margin:0}}</style></head>
<body><script src="{bundle}"></script>
<script>{render_one}</script>
<script>function pneumaStart(theme) {{
  try {{ pneumaInit(theme); return true; }} catch (e) {{ return String((e && e.message) || e); }}
}}</script>
</body></html>
"""
_MERMAID_PAGE = "mermaid"

# mermaid's limits, said in plain words (its defaults: maxEdges 500, maxTextSize 50,000)
_EDGE_LIMIT = re.compile(r"Edge limit exceeded\. (\d+) edges found, but the limit is (\d+)", re.I)
_TEXT_LIMIT = "Maximum text size in diagram exceeded"
MAX_TEXT_SIZE = 50_000  # mermaid's default maxTextSize, which the viewer keeps
_NOT_INITIALISED = "You have to call mermaid.initialize"


def limit_in_plain_words(message: str) -> str | None:
    """What a mermaid limit message means for the person, or None when the
    message is not about a limit."""
    if found := _EDGE_LIMIT.search(message):
        return (f"it has more than {found.group(2)} arrows, the most mermaid draws in one diagram; "
                "split it into smaller diagrams")
    if _TEXT_LIMIT.lower() in message.lower():
        return (f"it is longer than {MAX_TEXT_SIZE:,} characters, the most mermaid draws in one diagram; "
                "split it into smaller diagrams")
    if _NOT_INITIALISED.lower() in message.lower():
        return "mermaid stopped part-way through drawing it (it is likely too large); split it"
    return None


def _chromium(args: list[str], workdir: Path) -> str:
    try:
        # The host's Chromium, else one on PATH; said as every export says it.
        binary = find_chromium()
    except ExportError as exc:
        raise RenderUnavailable(str(exc), "E_UNAVAILABLE") from None
    command = [binary, "--headless", *CHROMIUM_ARGS, f"--user-data-dir={workdir / 'profile'}",
               "--hide-scrollbars", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise RenderUnavailable(f"Chromium did not finish within {_TIMEOUT_S} s", "E_TIMEOUT") from None
    except OSError as exc:  # there, but not a program this machine can run
        raise RenderUnavailable(f"Chromium failed: cannot start {binary}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise RenderUnavailable(f"Chromium failed (exit status {done.returncode}): {tail[0][-300:]}")
    return done.stdout


def run_mermaid(sources: list[str], *, render: bool, theme: str = "light") -> list[Outcome]:
    """Parse (and, with ``render``, render to SVG) every source with the real
    mermaid bundle; one ``Outcome`` per source, in order.

    With Playwright each source has a time budget of its own
    (``page_timeout_s``): one that does not finish is an ``Outcome`` with
    ``left_out`` saying so, and the others are still rendered. A source over
    one of mermaid's limits is ``left_out`` too, in plain words."""
    if not MERMAID_BUNDLE.is_file():
        raise RenderUnavailable("the mermaid bundle is missing: run scripts/build-web "
                                "(or `npm ci && npm run build` in plugins/diagram/web)", "E_UNAVAILABLE")
    if not sources:
        return []
    mermaid_theme = "dark" if theme == "dark" else "default"
    # Over maxTextSize mermaid draws a picture of its error instead: not sent to it.
    fits = [i for i, text in enumerate(sources) if len(text) <= MAX_TEXT_SIZE]
    raw: list[dict[str, Any]] = [{"ok": False, "left_out": limit_in_plain_words(_TEXT_LIMIT)}
                                 for _ in sources]
    if fits:
        if _has_playwright():
            drawn = _run_each_in_own_page([sources[i] for i in fits], render, theme, mermaid_theme)
        else:
            drawn = _run_in_one_page([sources[i] for i in fits], render, theme, mermaid_theme)
        for i, item in zip(fits, drawn, strict=True):
            raw[i] = item
    return [_outcome(item) for item in raw]


def _run_in_one_page(sources: list[str], render: bool, theme: str, mermaid_theme: str) -> list[dict[str, Any]]:
    job = {"sources": sources, "render": render, "theme": mermaid_theme}
    with tempfile.TemporaryDirectory(prefix="pneuma-diagram-") as tmp:
        workdir = Path(tmp)
        page = workdir / "render.html"
        # "</" in JSON would end the <script>; \u003c keeps the JSON equal.
        page.write_text(_PAGE.format(background=_background(theme), bundle=MERMAID_BUNDLE.as_uri(),
                                     render_one=_RENDER_ONE,
                                     job=json.dumps(job).replace("<", "\\u003c")), encoding="utf-8")
        dom = _chromium(["--virtual-time-budget=20000", "--dump-dom", page.as_uri()], workdir)
    found = _RESULT.search(dom)
    if not found:
        raise RenderUnavailable("mermaid did not finish in Chromium")
    raw: list[dict[str, Any]] = json.loads(html.unescape(found.group(1)))
    if raw and "fatal" in raw[-1]:
        raise RenderUnavailable(f"mermaid failed to start: {raw[-1]['fatal']}")
    return raw


def _run_each_in_own_page(sources: list[str], render: bool, theme: str,
                          mermaid_theme: str) -> list[dict[str, Any]]:
    """Every source in the warm browser's mermaid page (warm.py): the first
    call of the process starts it, the others find it loaded."""
    from playwright.async_api import Error as PlaywrightError

    binary = _chromium_binary()

    async def work(renderer: WarmRenderer) -> list[dict[str, Any]]:
        page_file = renderer.workdir() / "render.html"
        if not page_file.is_file():
            page_file.write_text(_ONE_PAGE.format(bundle=MERMAID_BUNDLE.as_uri(), render_one=_RENDER_ONE),
                                 encoding="utf-8")
        return await _render_each(renderer, binary, page_file.as_uri(), sources, render, mermaid_theme)

    try:
        return RENDERER.call(work)
    except PlaywrightError as exc:
        raise _chromium_failed(exc) from None


def _has_playwright() -> bool:
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return False
    return True


def _chromium_binary() -> str:
    try:
        # The host's Chromium, else one on PATH; said as every export says it.
        return find_chromium()
    except ExportError as exc:
        raise RenderUnavailable(str(exc), "E_UNAVAILABLE") from None


async def _render_each(renderer: WarmRenderer, binary: str, url: str, sources: list[str], render: bool,
                       mermaid_theme: str) -> list[dict[str, Any]]:
    seconds = page_timeout_s()
    deadline = time.monotonic() + EXPORT_TIMEOUT_S
    out: list[dict[str, Any]] = []
    for i, text in enumerate(sources):
        budget = min(seconds, deadline - time.monotonic())
        if budget <= 0:
            out.append({"ok": False, "left_out": f"the export's {EXPORT_TIMEOUT_S:g} s were used up"})
            continue
        page = await _mermaid_page(renderer, binary, url, mermaid_theme)
        box: list[dict[str, Any]] = []

        async def work(page: Any = page, text: str = text, i: int = i,
                       box: list[dict[str, Any]] = box) -> None:
            box.append(await page.evaluate("([t, i, r]) => pneumaRenderOne(t, i, r)", [text, i, render]))

        if await within(page, budget, work):
            out.append(box[0])
        else:
            # the page's script never ended: a fresh page for the next one
            await renderer.drop(_MERMAID_PAGE)
            out.append({"ok": False, "left_out": f"it did not finish within {budget:g} s "
                                                 "(too much to lay out); split it into smaller diagrams"})
    return out


def _chromium_failed(exc: Exception) -> RenderUnavailable:
    """A Playwright error said as every export says it (its exit status and
    last stderr line, or that Chromium is not installed)."""
    said = renderer_failure(exc)
    if said is None:
        return RenderUnavailable(f"Chromium failed: {str(exc).splitlines()[0]}")
    return RenderUnavailable(str(said), said.code)


async def _mermaid_page(renderer: WarmRenderer, binary: str, url: str, mermaid_theme: str) -> Any:
    """The warm page with mermaid loaded and initialised for ``mermaid_theme``."""
    kept = await renderer.page(binary, _MERMAID_PAGE, url=url)
    if kept.state != mermaid_theme:
        ready = await kept.page.evaluate("(theme) => pneumaStart(theme)", mermaid_theme)
        if ready is not True:
            await renderer.drop(_MERMAID_PAGE)
            raise RenderUnavailable(f"mermaid failed to start: {ready}")
        kept.state = mermaid_theme
    return kept.page


def _outcome(item: dict[str, Any]) -> Outcome:
    if item.get("left_out"):
        reason = str(item["left_out"])
        return Outcome(ok=False, error=DiagramError(reason, None, None, reason), left_out=reason)
    if item.get("ok"):
        return Outcome(ok=True, diagram_type=item.get("type"), svg=item.get("svg"))
    message = str(item.get("message") or "syntax error")
    if said := limit_in_plain_words(message):
        return Outcome(ok=False, error=DiagramError(said, None, None, said), left_out=said)
    line = item.get("line")
    if line is None and (m := _LINE_IN_MESSAGE.search(message)):
        line = int(m.group(1))
    column = item.get("column")
    if column is None and (m := _COLUMN_IN_MESSAGE.search(message)):
        column = int(m.group(1))
    return Outcome(ok=False, error=DiagramError(message, line, column, fix_hint(message, item.get("token"))))


def fix_hint(message: str, token: str | None = None) -> str:
    """A short next step for the agent, from what the parser said."""
    lowered = message.lower()
    if "no diagram type detected" in lowered or "unknowndiagram" in lowered:
        return ("Start the file with a diagram type on its first line: flowchart TD, sequenceDiagram, "
                "classDiagram, erDiagram, stateDiagram-v2, gantt, pie, mindmap …")
    if token == "TAGEND" or "got 'tagend'" in lowered:
        return "A stray '>': write arrows as -->, --->, -.-> or ==> and close every node shape."
    if "got 'end'" in lowered or token == "end":
        return "'end' is a keyword: capitalise it (End) or put it inside a label, and close each subgraph with one end."
    if "got 'eof'" in lowered or token == "EOF":
        return "The diagram stops too early: finish the last statement, close brackets and quotes, add a missing end."
    if "expecting" in lowered:
        return ("The line does not fit the grammar at the marked column: check the arrow syntax, bracket pairs "
                "and quotes; put labels with special characters in double quotes (A[\"a (b)\"]).")
    return "Fix the statement on that line; quote labels that contain punctuation."


# --- files ----------------------------------------------------------------------------


def _background(theme: str) -> str:
    return "#1f2023" if theme == "dark" else "#ffffff"


def svg_size(svg: str) -> tuple[float, float]:
    """The diagram's own size (its viewBox), in CSS pixels."""
    found = _VIEWBOX.search(svg)
    if not found:
        return (800.0, 600.0)
    return (float(found.group(3)), float(found.group(4)))


def standalone_svg(svg: str, theme: str = "light") -> str:
    """The SVG as a file: its natural width and height instead of width=100%
    (mermaid's on-page sizing), and an XML declaration.

    A dark drawing gets the viewer's dark canvas as a rectangle behind it:
    mermaid's dark theme draws light text on a transparent background, which
    an SVG reader's white page would make unreadable. A rectangle rather than
    a CSS background, because not every SVG reader applies CSS to the root."""
    width, height = svg_size(svg)
    svg = _ROOT_TAG.sub(lambda m: _sized_root(m.group(0), width, height), svg, count=1)
    if theme == "dark":
        svg = _with_background(svg, _background(theme))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + svg + "\n"


_ROOT_TAG = re.compile(r"^<svg\b[^>]*>")
# the root's own sizing: width="100%", a height some diagram types add, max-width
_ROOT_SIZING = re.compile(r'\s(?:width|height)="[^"]*"|\sstyle="max-width:[^"]*"')


def _sized_root(tag: str, width: float, height: float) -> str:
    """The root ``<svg …>`` tag at the diagram's own size: its sizing
    attributes replaced, so none is there twice (a file with two ``height``
    attributes is not XML)."""
    bare = _ROOT_SIZING.sub("", tag)
    return bare.replace("<svg", f'<svg width="{width:g}" height="{height:g}"', 1)


def _with_background(svg: str, colour: str) -> str:
    """``svg`` with a ``colour`` rectangle under everything, over its viewBox."""
    found = _VIEWBOX.search(svg)
    x, y, width, height = found.groups() if found else ("0", "0", "100%", "100%")
    rect = (f'<rect class="pneuma-background" x="{x}" y="{y}" width="{width}" height="{height}" '
            f'fill="{colour}"/>')
    return re.sub(r"^(<svg[^>]*>)", lambda m: m.group(1) + rect, svg, count=1)


def _png_page(svg: str, theme: str) -> tuple[str, int, int]:
    """The page a PNG is a screenshot of (the SVG filling it exactly), and its
    width and height in CSS pixels."""
    width, height = svg_size(svg)
    w, h = max(1, round(width)), max(1, round(height))
    body = standalone_svg(svg, theme).split("\n", 1)[1]
    page = ("<!doctype html><html><head><meta charset=\"utf-8\"><style>html,body{margin:0;overflow:hidden;"
            f"background:{_background(theme)}}}svg{{display:block;width:{w}px;height:{h}px}}</style></head>"
            f"<body>{body}</body></html>")
    return page, w, h


def svg_to_png(svg: str, theme: str = "light", scale: int = PNG_SCALE) -> bytes:
    """Chromium's screenshot of ``svg`` at its own size times ``scale``."""
    if _has_playwright():
        shot = svgs_to_png([svg], theme, scale)[0]
        if shot is None:
            raise RenderUnavailable(f"Chromium did not finish the picture within {page_timeout_s():g} s",
                                    "E_TIMEOUT")
        return shot
    html_text, w, h = _png_page(svg, theme)
    with tempfile.TemporaryDirectory(prefix="pneuma-diagram-") as tmp:
        workdir = Path(tmp)
        page = workdir / "png.html"
        page.write_text(html_text, encoding="utf-8")
        shot_file = workdir / "shot.png"
        _chromium([f"--window-size={w},{h}", f"--force-device-scale-factor={scale}",
                   f"--screenshot={shot_file}", page.as_uri()], workdir)
        if not shot_file.is_file():
            raise RenderUnavailable("Chromium wrote no screenshot")
        return shot_file.read_bytes()


def svgs_to_png(svgs: list[str], theme: str = "light", scale: int = PNG_SCALE) -> list[bytes | None]:
    """``svg_to_png`` of each of ``svgs``; None for one that did not finish
    within its budget (``page_timeout_s``).

    With Playwright, the warm browser (warm.py) takes them all: the same
    page at the same size and scale. Without it, the binary's
    ``--screenshot``, one Chromium start per image."""
    if not _has_playwright():
        return [svg_to_png(svg, theme, scale) for svg in svgs]
    from playwright.async_api import Error as PlaywrightError

    binary = _chromium_binary()

    async def work(renderer: WarmRenderer) -> list[bytes | None]:
        return await _screenshots(renderer, binary, svgs, theme, scale)

    try:
        return RENDERER.call(work)
    except PlaywrightError as exc:
        raise _chromium_failed(exc) from None


async def _screenshots(renderer: WarmRenderer, binary: str, svgs: list[str], theme: str,
                       scale: int) -> list[bytes | None]:
    seconds = page_timeout_s()
    key = f"screenshot@{scale}"
    shots: list[bytes | None] = []
    for svg in svgs:
        page = (await renderer.page(binary, key, scale=scale)).page
        box: list[bytes] = []

        async def work(page: Any = page, svg: str = svg, box: list[bytes] = box) -> None:
            html_text, w, h = _png_page(svg, theme)
            await page.set_viewport_size({"width": w, "height": h})
            await page.set_content(html_text, wait_until="load", timeout=0)
            box.append(await page.screenshot(timeout=0))

        if await within(page, seconds, work):
            shots.append(box[0])
        else:
            await renderer.drop(key)
            shots.append(None)
    return shots
