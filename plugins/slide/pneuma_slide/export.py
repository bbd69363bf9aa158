"""Export a slide workspace as one self-contained HTML file or as a PDF.

HTML: every slide of manifest.json, in order, each in its own iframe (its
``srcdoc`` holds theme.css and the slide, with every workspace asset it
refers to inlined as a data: URL), keyboard navigation on screen, and print
CSS giving one page per slide at the slide's size.

PDF: the host's headless Chromium prints that HTML, one page per slide
(``pneuma.api.html_to_pdf``).
"""

from __future__ import annotations

import base64
import html
import json
import mimetypes
import posixpath
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.api import html_to_pdf, read_config

DEFAULT_WIDTH = 1280
DEFAULT_HEIGHT = 720
FORMATS = ("html", "pdf")

_URL_IN_CSS = re.compile(r"""url\(\s*(['"]?)([^'")]+?)\1\s*\)""")
_MEDIA_TAG = re.compile(r"<(img|source|video|audio|image|use|input|track)\b[^>]*>", re.IGNORECASE)
_URL_ATTR = re.compile(
    r"""(\s(?:src|poster|href|xlink:href)\s*=\s*)("([^"]*)"|'([^']*)')""", re.IGNORECASE
)
_SRCSET = re.compile(r"""\s(srcset)\s*=\s*("[^"]*"|'[^']*')""", re.IGNORECASE)
_EXTRA_TYPES = {
    ".svg": "image/svg+xml",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".webp": "image/webp",
    ".avif": "image/avif",
}


class ExportError(RuntimeError):
    """The deck cannot be exported; the message says why."""


@dataclass
class Slide:
    file: str
    title: str
    fragment: str


@dataclass
class Deck:
    workspace: Path
    title: str
    slides: list[Slide]
    theme: str
    width: int = DEFAULT_WIDTH
    height: int = DEFAULT_HEIGHT
    missing_assets: set[str] = field(default_factory=set)


# --- reading the workspace -----------------------------------------------------


def slide_size(params: dict[str, Any] | None) -> tuple[int, int]:
    """The canvas from init params, as the viewer reads them."""

    def number(value: Any, default: int) -> int:
        try:
            n = float(value)
        except (TypeError, ValueError):
            return default
        return round(n) if 100 <= n <= 8000 else default

    params = params or {}
    return number(params.get("slideWidth"), DEFAULT_WIDTH), number(
        params.get("slideHeight"), DEFAULT_HEIGHT
    )


def workspace_params(workspace: Path) -> dict[str, Any]:
    """The slide params stored in W/.pneuma/config.toml (empty when none)."""
    try:
        stored = read_config(workspace).get("params", {})
    except Exception:  # a broken config must not stop an export; defaults apply
        return {}
    slide = stored.get("slide", {}) if isinstance(stored, dict) else {}
    return slide if isinstance(slide, dict) else {}


def load_deck(workspace: Path, params: dict[str, Any] | None = None) -> Deck:
    workspace = Path(workspace).resolve()
    manifest_path = workspace / "manifest.json"
    if not manifest_path.is_file():
        raise ExportError(f"{workspace} has no manifest.json; is it a slide workspace?")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ExportError(f"manifest.json is not valid JSON: {exc}") from None
    entries = manifest.get("slides") if isinstance(manifest, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ExportError('manifest.json lists no slides (its "slides" array is empty or missing)')
    slides: list[Slide] = []
    seen: set[str] = set()
    for entry in entries:
        file = entry if isinstance(entry, str) else (entry or {}).get("file")
        if not isinstance(file, str) or not file.strip():
            continue
        rel = _normalize(file)
        if rel is None or rel in seen:
            continue
        seen.add(rel)
        path = workspace / rel
        if not path.is_file():
            raise ExportError(f"manifest.json lists {rel}, which does not exist")
        title = entry.get("title") if isinstance(entry, dict) else None
        slides.append(Slide(rel, str(title or Path(rel).stem), path.read_text(encoding="utf-8")))
    theme_path = workspace / "theme.css"
    theme = theme_path.read_text(encoding="utf-8") if theme_path.is_file() else ""
    width, height = slide_size(params if params is not None else workspace_params(workspace))
    title = manifest.get("title") if isinstance(manifest.get("title"), str) else ""
    return Deck(workspace, title or "Slides", slides, theme, width, height)


def _normalize(path: str, base_dir: str = "") -> str | None:
    """A workspace-relative path for a URL in a slide, or None when it is not one."""
    raw = path.strip()
    if not raw or raw.startswith(("#", "//")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", raw):
        return None
    raw = raw.split("#", 1)[0].split("?", 1)[0]
    if raw.startswith("/content/"):
        raw = raw[len("/content/"):]
    elif raw.startswith("/"):
        raw = raw.lstrip("/")
    joined = posixpath.normpath(posixpath.join(base_dir, raw))
    if joined.startswith("..") or joined in (".", ""):
        return None
    return joined


# --- inlining --------------------------------------------------------------------


class _Inliner:
    def __init__(self, deck: Deck):
        self.deck = deck
        self.cache: dict[str, str | None] = {}

    def data_url(self, url: str) -> str | None:
        rel = _normalize(url)
        if rel is None:
            return None
        if rel in self.cache:
            return self.cache[rel]
        path = self.deck.workspace / rel
        result: str | None = None
        try:
            inside = path.resolve().is_relative_to(self.deck.workspace)
        except OSError:
            inside = False
        if inside and path.is_file():
            mime = _EXTRA_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
            mime = mime or "application/octet-stream"
            result = f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
        else:
            self.deck.missing_assets.add(rel)
        self.cache[rel] = result
        return result

    def css(self, text: str) -> str:
        def replace(match: re.Match[str]) -> str:
            data = self.data_url(match.group(2))
            return f'url("{data}")' if data else match.group(0)

        return _URL_IN_CSS.sub(replace, text)

    def fragment(self, text: str) -> str:
        def attr(match: re.Match[str]) -> str:
            value = match.group(3) if match.group(3) is not None else match.group(4)
            data = self.data_url(html.unescape(value))
            return f'{match.group(1)}"{data}"' if data else match.group(0)

        def tag(match: re.Match[str]) -> str:
            inner = _URL_ATTR.sub(attr, match.group(0))
            # srcset names files the page would fetch at another resolution;
            # src (now inlined) is enough in a self-contained file.
            return _SRCSET.sub("", inner)

        return self.css(_MEDIA_TAG.sub(tag, text))


# --- HTML ---------------------------------------------------------------------------


def slide_document(deck: Deck, slide: Slide, inliner: _Inliner) -> str:
    theme = inliner.css(deck.theme).replace("</style", "<\\/style")
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(slide.title)}</title>"
        f"<style>html,body{{margin:0;padding:0;width:{deck.width}px;height:{deck.height}px;"
        f"overflow:hidden}}</style>"
        f"<style>{theme}</style></head><body>{inliner.fragment(slide.fragment)}</body></html>"
    )


_PAGE_CSS = """
@page { size: %(w)spx %(h)spx; margin: 0; }
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%%; }
body { background: #101014; overflow: hidden; font: 13px/1.4 system-ui, sans-serif; }
.page { position: absolute; left: 50%%; top: 50%%; width: %(w)spx; height: %(h)spx;
  transform-origin: center center; visibility: hidden; box-shadow: 0 10px 40px rgba(0,0,0,.5); }
.page.is-current { visibility: visible; }
.page iframe { display: block; width: %(w)spx; height: %(h)spx; border: 0; pointer-events: none; }
.hud { position: fixed; left: 0; right: 0; bottom: 0; display: flex; justify-content: space-between;
  padding: 8px 14px; color: rgba(255,255,255,.75); opacity: 0; transition: opacity .3s; }
body:hover .hud, .hud:focus-within { opacity: 1; }
.hud span { background: rgba(0,0,0,.55); padding: 3px 10px; border-radius: 999px; }
@media print {
  html, body { height: auto; background: none; overflow: visible; }
  .page { position: relative; left: auto; top: auto; visibility: visible; transform: none !important;
    box-shadow: none; overflow: hidden; break-after: page; page-break-after: always; }
  .page:last-child { break-after: auto; page-break-after: auto; }
  .hud { display: none; }
}
"""

_NAV_SCRIPT = """
(function () {
  var pages = Array.prototype.slice.call(document.querySelectorAll('.page'));
  var counter = document.getElementById('counter');
  var W = %(w)s, H = %(h)s, current = 0;
  function fromHash() {
    var m = /^#(\\d+)$/.exec(location.hash);
    return m ? Math.min(pages.length, Math.max(1, +m[1])) - 1 : 0;
  }
  function layout() {
    var s = Math.min(innerWidth / W, innerHeight / H);
    pages.forEach(function (p) { p.style.transform = 'translate(-50%%, -50%%) scale(' + s + ')'; });
  }
  function show(i) {
    current = Math.max(0, Math.min(pages.length - 1, i));
    pages.forEach(function (p, j) { p.classList.toggle('is-current', j === current); });
    counter.textContent = (current + 1) + ' / ' + pages.length + ' \\u00b7 ' + pages[current].getAttribute('data-title');
    if (location.hash !== '#' + (current + 1)) history.replaceState(null, '', '#' + (current + 1));
  }
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var k = e.key;
    if (k === 'ArrowRight' || k === 'ArrowDown' || k === 'PageDown' || k === ' ') show(current + 1);
    else if (k === 'ArrowLeft' || k === 'ArrowUp' || k === 'PageUp') show(current - 1);
    else if (k === 'Home') show(0);
    else if (k === 'End') show(pages.length - 1);
    else if (k === 'f' || k === 'F') {
      if (document.fullscreenElement) document.exitFullscreen(); else document.documentElement.requestFullscreen();
    } else return;
    e.preventDefault();
  });
  document.addEventListener('click', function (e) { show(current + (e.shiftKey ? -1 : 1)); });
  addEventListener('hashchange', function () { show(fromHash()); });
  addEventListener('resize', layout);
  layout();
  show(fromHash());
})();
"""


def render_html(deck: Deck) -> str:
    inliner = _Inliner(deck)
    size = {"w": deck.width, "h": deck.height}
    pages = []
    for i, slide in enumerate(deck.slides, start=1):
        doc = slide_document(deck, slide, inliner)
        pages.append(
            f'<section class="page{" is-current" if i == 1 else ""}" id="slide-{i}" '
            f'data-file="{html.escape(slide.file)}" data-title="{html.escape(slide.title)}" '
            f'aria-label="Slide {i}: {html.escape(slide.title)}">'
            f'<iframe sandbox="allow-same-origin" title="Slide {i}: {html.escape(slide.title)}" '
            f'srcdoc="{html.escape(doc, quote=True)}"></iframe></section>'
        )
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="generator" content="Pneuma slide export">',
            f"<title>{html.escape(deck.title)}</title>",
            f"<style>{_PAGE_CSS % size}</style>",
            "</head>",
            "<body>",
            '<main class="deck">',
            *pages,
            "</main>",
            '<div class="hud"><span id="counter"></span>'
            "<span>\u2190 \u2192 to move \u00b7 F full screen \u00b7 print for one page per slide</span></div>",
            f"<script>{_NAV_SCRIPT % size}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


# --- PDF -----------------------------------------------------------------------------


def render_pdf(deck: Deck, output: Path, *, html_text: str | None = None) -> None:
    """Print the deck's HTML, one page per slide at the slide's size, with the
    host's Chromium (``html_to_pdf``: its ``ExportError`` says when Chromium
    is missing or failed, the same way for every mode)."""
    html_text = html_text if html_text is not None else render_html(deck)
    with tempfile.TemporaryDirectory(prefix="pneuma-export-") as tmp:
        html_file = Path(tmp) / "deck.html"
        html_file.write_text(html_text, encoding="utf-8")
        html_to_pdf(html_file, output, page_width=deck.width, page_height=deck.height,
                    name="the deck", items=len(deck.slides))


def count_pdf_pages(data: bytes) -> int:
    """Pages in a PDF, counted as its /Type /Page objects (not /Pages)."""
    return len(re.findall(rb"/Type\s*/Page(?![A-Za-z])", data))


# --- the entry point -------------------------------------------------------------------


def default_output(deck: Deck, fmt: str) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", deck.title.lower()).strip("-")[:60].strip("-") or "slides"
    return deck.workspace / "exports" / f"{slug}.{fmt}"


@dataclass
class ExportResult:
    path: Path
    format: str
    slides: int
    missing_assets: list[str]


def export_deck(
    workspace: Path,
    fmt: str,
    output: Path | None = None,
    params: dict[str, Any] | None = None,
) -> ExportResult:
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    deck = load_deck(Path(workspace), params)
    target = Path(output) if output else default_output(deck, fmt)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = render_html(deck)
    if fmt == "html":
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    else:
        render_pdf(deck, target, html_text=text)
    return ExportResult(target, fmt, len(deck.slides), sorted(deck.missing_assets))
