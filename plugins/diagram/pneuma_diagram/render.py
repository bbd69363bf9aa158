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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.api import CHROMIUM_ARGS, ExportError, find_chromium

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


# --- the page Chromium runs ---------------------------------------------------------

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>body{{margin:0;background:{background}}}</style></head>
<body><script src="{bundle}"></script>
<script>
(async () => {{
  const job = {job};
  const out = [];
  try {{
    const mermaid = PneumaMermaid.mermaid;
    mermaid.initialize({{startOnLoad: false, securityLevel: "strict", theme: job.theme,
      htmlLabels: false, flowchart: {{htmlLabels: false}}}});
    for (let i = 0; i < job.sources.length; i++) {{
      const text = job.sources[i];
      try {{
        const parsed = await mermaid.parse(text);
        if (job.render) {{
          const r = await mermaid.render("pneuma-diagram-" + i, text);
          out.push({{ok: true, type: r.diagramType, svg: r.svg}});
        }} else {{
          out.push({{ok: true, type: parsed && parsed.diagramType}});
        }}
      }} catch (e) {{
        const hash = (e && e.hash) || {{}};
        const loc = hash.loc || {{}};
        out.push({{ok: false, message: String((e && e.message) || e),
          line: loc.first_line ?? (hash.line != null ? hash.line + 1 : null),
          column: loc.first_column ?? null, token: hash.token ?? null,
          expected: hash.expected ?? null}});
        document.querySelectorAll("body > div[id^=dpneuma-diagram-]").forEach((n) => n.remove());
      }}
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
    mermaid bundle; one ``Outcome`` per source, in order."""
    if not MERMAID_BUNDLE.is_file():
        raise RenderUnavailable("the mermaid bundle is missing: run scripts/build-web "
                                "(or `npm ci && npm run build` in plugins/diagram/web)", "E_UNAVAILABLE")
    if not sources:
        return []
    job = {"sources": sources, "render": render, "theme": "dark" if theme == "dark" else "default"}
    with tempfile.TemporaryDirectory(prefix="pneuma-diagram-") as tmp:
        workdir = Path(tmp)
        page = workdir / "render.html"
        # "</" in JSON would end the <script>; \u003c keeps the JSON equal.
        page.write_text(_PAGE.format(background=_background(theme), bundle=MERMAID_BUNDLE.as_uri(),
                                     job=json.dumps(job).replace("<", "\\u003c")), encoding="utf-8")
        dom = _chromium(["--virtual-time-budget=20000", "--dump-dom", page.as_uri()], workdir)
    found = _RESULT.search(dom)
    if not found:
        raise RenderUnavailable("mermaid did not finish in Chromium")
    raw: list[dict[str, Any]] = json.loads(html.unescape(found.group(1)))
    if raw and "fatal" in raw[-1]:
        raise RenderUnavailable(f"mermaid failed to start: {raw[-1]['fatal']}")
    return [_outcome(item) for item in raw]


def _outcome(item: dict[str, Any]) -> Outcome:
    if item.get("ok"):
        return Outcome(ok=True, diagram_type=item.get("type"), svg=item.get("svg"))
    message = str(item.get("message") or "syntax error")
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
    svg = re.sub(r'^<svg([^>]*?)\swidth="100%"', rf'<svg\1 width="{width:g}" height="{height:g}"', svg, count=1)
    svg = re.sub(r'^(<svg[^>]*?)\sstyle="max-width:[^"]*"', r"\1", svg, count=1)
    if theme == "dark":
        svg = _with_background(svg, _background(theme))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + svg + "\n"


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
    html_text, w, h = _png_page(svg, theme)
    with tempfile.TemporaryDirectory(prefix="pneuma-diagram-") as tmp:
        workdir = Path(tmp)
        page = workdir / "png.html"
        page.write_text(html_text, encoding="utf-8")
        shot = workdir / "shot.png"
        _chromium([f"--window-size={w},{h}", f"--force-device-scale-factor={scale}",
                   f"--screenshot={shot}", page.as_uri()], workdir)
        if not shot.is_file():
            raise RenderUnavailable("Chromium wrote no screenshot")
        return shot.read_bytes()


def svgs_to_png(svgs: list[str], theme: str = "light", scale: int = PNG_SCALE) -> list[bytes]:
    """``svg_to_png`` of each of ``svgs``, from one Chromium.

    The binary's ``--screenshot`` takes one image per Chromium start (about
    a second each, the most of a PNG export); with Playwright, when it can
    be imported, one browser takes them all: the same page at the same size
    and scale. Without it, one ``svg_to_png`` per SVG."""
    if len(svgs) < 2:
        return [svg_to_png(svg, theme, scale) for svg in svgs]
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        return [svg_to_png(svg, theme, scale) for svg in svgs]
    try:
        binary = find_chromium()
    except ExportError as exc:
        raise RenderUnavailable(str(exc), "E_UNAVAILABLE") from None
    shots: list[bytes] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=binary, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(device_scale_factor=scale)
                page = context.new_page()
                for svg in svgs:
                    html_text, w, h = _png_page(svg, theme)
                    page.set_viewport_size({"width": w, "height": h})
                    page.set_content(html_text, wait_until="load")
                    shots.append(page.screenshot())
            finally:
                browser.close()
    except PlaywrightError as exc:
        raise RenderUnavailable(f"Chromium failed: {str(exc).splitlines()[0]}") from None
    return shots
