"""The document as one standalone HTML file: every page of ``print.json`` a
sheet of the paper's size, in order, that prints one PDF page each.

A sheet is the whole paper (``@page { size: W H; margin: 0 }``) and carries
its margins itself: its page is an iframe laid in the content box (the
paper minus the margins), and its page number is drawn in the bottom
margin. One layout, then, serves the PDF, the PNG of each page (a
screenshot has no ``@page`` margin boxes) and the overflow check, which
measure the same thing.

Each page is a document of its own (``srcdoc``): ``style.css``, then the
page's fragment, its ``<style>`` blocks kept to its own sheet. Workspace
markup is untrusted: the frames are sandboxed without scripts (as the
slide export's are). Images, fonts and ``url()``\\ s are inlined
(``inline.py``), and Chinese gets the shell's Noto Sans SC slices it needs
(``cjk_font.py``), so the file prints the same on any machine.

The content box is the page document's ``<body>``: its width and height
are the content box's, it hides what overflows, and a page overflows when
``body.scrollHeight`` (``scrollWidth``) is more than 1 px beyond its
``clientHeight`` (``clientWidth``): ``MEASURE_SCRIPT``, the rule the viewer
flags by.
"""

from __future__ import annotations

import html
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from pneuma_print import cjk_font
from pneuma_print.inline import Inliner
from pneuma_print.paper import STYLESHEET, PrintDocument, load_document

MAX_PAGE_BYTES = 5 * 1024 * 1024
OVERFLOW_TOLERANCE_PX = 1

# Run in the standalone page (Playwright's ``evaluate``): each sheet's
# overflow in CSS pixels, as the rule above says.
MEASURE_SCRIPT = """() => Array.from(document.querySelectorAll('.pneuma-sheet')).map((sheet) => {
  const frame = sheet.querySelector('iframe');
  const doc = frame && frame.contentDocument;
  const body = doc && doc.body;
  const base = {page: Number(sheet.dataset.page), file: sheet.dataset.file};
  if (!body) return {...base, measured: false};
  return {...base, measured: true,
    overflowX: Math.max(0, body.scrollWidth - body.clientWidth),
    overflowY: Math.max(0, body.scrollHeight - body.clientHeight)};
})"""


@dataclass
class RenderedDocument:
    """The standalone HTML and what it could not include."""

    html: str
    document: PrintDocument
    missing_pages: list[str] = field(default_factory=list)  # listed in print.json, no such file
    not_text_pages: list[str] = field(default_factory=list)  # listed, but not UTF-8 text (a picture, say)
    missing_assets: list[str] = field(default_factory=list)  # referred to, no such file
    cjk_font_missing: bool = False  # Chinese text, and the shell's font is not installed

    def warnings(self) -> list[str]:
        lines = [f"{file} is listed in print.json but does not exist: its sheet is blank"
                 for file in self.missing_pages]
        lines += [f"{file} is not a text file (a page is written as HTML): its sheet is blank"
                  for file in self.not_text_pages]
        lines += [f"{rel} is referred to by the document but does not exist" for rel in self.missing_assets]
        if self.cjk_font_missing:
            lines.append("Chinese text prints only with a system CJK font: the shell's Noto Sans SC "
                         "is not installed (run scripts/build-web)")
        return lines


def render_document(workspace: Path, *, only: int | None = None,
                    document: PrintDocument | None = None) -> RenderedDocument:
    """The standalone HTML of the document in ``workspace`` (``only``: just
    the sheet at that 1-based position, for a picture of one page)."""
    workspace = Path(workspace).resolve()
    doc = document or load_document(workspace)
    inliner = Inliner(workspace)
    stylesheet = _text(inliner, STYLESHEET) or ""
    rendered = RenderedDocument("", doc)
    sheets = []
    for position, page in enumerate(doc.pages, start=1):
        if only is not None and position != only:
            continue
        data = inliner.read_bytes(page.file, MAX_PAGE_BYTES)
        fragment = _decoded(data)
        if fragment is None:
            (rendered.missing_pages if data is None else rendered.not_text_pages).append(page.file)
            fragment = ""
        base_dir = posixpath.dirname(page.file)
        if cjk_font.needs_font(fragment + stylesheet) and not cjk_font.slices():
            rendered.cjk_font_missing = True
        sheets.append(_sheet(doc, position, page.title, page.file,
                             _page_document(inliner, stylesheet, fragment, base_dir)))
    rendered.missing_assets = sorted(inliner.missing)
    rendered.html = _outer(doc, sheets, single=only is not None)
    return rendered


def _text(inliner: Inliner, rel: str) -> str | None:
    data = inliner.read_bytes(rel, MAX_PAGE_BYTES)
    return None if data is None else data.decode("utf-8", errors="replace")


def _decoded(data: bytes | None) -> str | None:
    """A page's text; None when there is no file or it is not text (a NUL
    byte or bytes that are not UTF-8: a picture saved under a page's name
    would otherwise print as a sheet of mojibake)."""
    if data is None or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _page_document(inliner: Inliner, stylesheet: str, fragment: str, base_dir: str) -> str:
    css = cjk_font.with_fallback(inliner.css(stylesheet)).replace("</style", "<\\/style")
    body = inliner.markup(fragment, base_dir, cjk_font.with_fallback)
    faces = cjk_font.font_faces(fragment + stylesheet)
    # The content box's rules come last and win: the page may style its
    # body (padding, a background) but not move or resize the box.
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<style>{faces}</style>"
        f'<style>html{{font-family:"{cjk_font.FAMILY}",serif}}</style>'
        f"<style>{css}</style>"
        "<style>html{margin:0!important;padding:0!important;width:100%!important;height:100%!important;"
        "overflow:hidden!important}body{margin:0!important;width:100%!important;height:100%!important;"
        "box-sizing:border-box!important;overflow:hidden!important}</style>"
        f"</head><body>{body}</body></html>"
    )


def _sheet(doc: PrintDocument, position: int, title: str, file: str, page_html: str) -> str:
    number = doc.number_of(position)
    label = f"Page {position}: {title}"
    number_html = (f'<div class="pneuma-page-number">{number}</div>' if number is not None else "")
    return (
        f'<section class="pneuma-sheet" data-page="{position}" data-file="{html.escape(file)}" '
        f'aria-label="{html.escape(label)}">'
        f'<iframe sandbox="allow-same-origin" title="{html.escape(label)}" '
        f'srcdoc="{html.escape(page_html, quote=True)}"></iframe>{number_html}</section>'
    )


def _outer(doc: PrintDocument, sheets: list[str], *, single: bool) -> str:
    m = doc.margins
    css = f"""
@page {{ size: {doc.width_mm:g}mm {doc.height_mm:g}mm; margin: 0; }}
html, body {{ margin: 0; padding: 0; }}
body {{ background: #e6e6ea; }}
.pneuma-sheet {{ position: relative; width: {doc.width_mm:g}mm; height: {doc.height_mm:g}mm;
  overflow: hidden; background: #fff; margin: 8mm auto; box-shadow: 0 2px 14px rgba(0,0,0,.25);
  break-after: page; break-inside: avoid; }}
.pneuma-sheet:last-child {{ break-after: auto; }}
.pneuma-sheet iframe {{ position: absolute; left: {m.left:g}mm; top: {m.top:g}mm; border: 0;
  width: {doc.content_width_mm:g}mm; height: {doc.content_height_mm:g}mm; display: block; }}
.pneuma-page-number {{ position: absolute; left: 0; right: 0; bottom: 0; height: {m.bottom:g}mm;
  display: flex; align-items: center; justify-content: center; font: 9pt/1 serif; color: #555; }}
body.pneuma-single {{ background: #fff; }}
body.pneuma-single .pneuma-sheet {{ margin: 0; box-shadow: none; }}
@media print {{
  body {{ background: none; }}
  .pneuma-sheet {{ margin: 0; box-shadow: none; }}
}}
"""
    return "\n".join([
        "<!doctype html>",
        "<html>",
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="Pneuma print export">',
        f"<title>{html.escape(doc.title or 'Document')}</title>",
        f"<style>{css}</style>",
        "</head>",
        f'<body class="{"pneuma-single" if single else "pneuma-document"}">',
        *sheets,
        "</body>",
        "</html>",
        "",
    ])
