"""The print mode's agent tool ``page_report``: the document laid out
headlessly in Chromium at its paper size, and each page's facts as the
viewer's get-page and check-overflow give them (its fill, whether and by how
much it overflows its content box, its headings, text and images).

The layout is the export's own (render.py's standalone document, opened by
sheets.py), so the overflow the tool reports is the overflow the export and
the after-turn check see; the rule is the viewer's (docs/print.md, "Overflow").
"""

from __future__ import annotations

from typing import Any

from pneuma.api import ToolContext, ToolError, page_timeout_s, run_sync
from pneuma_print import sheets
from pneuma_print.paper import PrintDocument, PrintFileError, load_document, px_to_mm
from pneuma_print.render import OVERFLOW_TOLERANCE_PX, render_document

# Run in the standalone document: each sheet's page document measured as
# print-doc.js's measureBody and pageContents measure it in the viewer.
REPORT_SCRIPT = """() => Array.from(document.querySelectorAll('.pneuma-sheet')).map((sheet) => {
  const frame = sheet.querySelector('iframe');
  const doc = frame && frame.contentDocument;
  const body = doc && doc.body;
  const base = {page: Number(sheet.dataset.page), file: sheet.dataset.file};
  if (!body) return {...base, measured: false};
  const line = (t, max) => { const s = String(t || '').replace(/\\s+/g, ' ').trim();
    return s.length > max ? s.slice(0, max - 1) + '…' : s; };
  const top = body.getBoundingClientRect().top;
  let bottom = 0;
  for (const el of body.querySelectorAll('*')) {
    if (el.localName === 'style' || el.localName === 'script') continue;
    const r = el.getBoundingClientRect();
    if (r.width || r.height) bottom = Math.max(bottom, r.bottom - top);
  }
  const overflowY = Math.max(0, body.scrollHeight - body.clientHeight);
  const height = body.clientHeight || 1;
  return {...base, measured: true,
    overflowX: Math.max(0, body.scrollWidth - body.clientWidth), overflowY,
    fill: Math.round(Math.max(bottom, overflowY ? body.scrollHeight : 0) / height * 100),
    headings: Array.from(body.querySelectorAll('h1, h2, h3, h4, h5, h6'))
      .map((h) => ({level: Number(h.localName[1]), text: line(h.textContent, 200)})),
    images: Array.from(body.querySelectorAll('img, svg, figure')).map((el) => ({tag: el.localName,
      alt: line(el.getAttribute('alt') || el.getAttribute('aria-label')
        || (el.querySelector('figcaption') ? el.querySelector('figcaption').textContent : ''), 200)})),
    text: line(body.innerText || body.textContent, 4000)};
})"""


def _document(ctx: ToolContext) -> PrintDocument:
    try:
        return load_document(ctx.workspace)
    except PrintFileError as exc:
        raise ToolError("E_PARSE_FAIL", str(exc), hint="Fix print.json as the skill's format says") from None


def _positions(doc: PrintDocument, asked: list[Any] | None) -> list[int]:
    """1-based positions of the pages asked for (all without ``asked``)."""
    if not asked:
        return list(range(1, len(doc.pages) + 1))
    positions = []
    for page in asked:
        if isinstance(page, int) and not isinstance(page, bool) and 1 <= page <= len(doc.pages):
            positions.append(page)
            continue
        text = str(page).strip()
        position = int(text) if text.isdigit() and 1 <= int(text) <= len(doc.pages) else doc.position_of(text)
        if position is None:
            raise ToolError("E_BAD_ARGS", f"No page {page!r}: give a number from 1 to {len(doc.pages)} "
                            "or a file print.json lists", hint="print.json's \"pages\" lists them in order")
        positions.append(position)
    return positions


async def _measure(html_text: str, seconds: float) -> list[dict[str, Any]]:
    async with sheets.browser() as chromium, sheets.opened(chromium, html_text, seconds) as page:
        facts: list[dict[str, Any]] = await page.evaluate(REPORT_SCRIPT)
        return facts


def _page(doc: PrintDocument, raw: dict[str, Any], missing: set[str]) -> dict[str, Any]:
    position = int(raw["page"])
    entry = doc.pages[position - 1]
    right, bottom = px_to_mm(float(raw.get("overflowX") or 0)), px_to_mm(float(raw.get("overflowY") or 0))
    tolerance = px_to_mm(OVERFLOW_TOLERANCE_PX)
    return {"page": position, "file": entry.file, "title": entry.title, "missing": entry.file in missing,
            "number": doc.number_of(position), "fill_percent": int(raw.get("fill") or 0),
            "overflows": right > tolerance or bottom > tolerance,
            "overflow_mm": {"bottom": round(bottom, 1), "right": round(right, 1)},
            "headings": raw.get("headings") or [], "images": raw.get("images") or [],
            "text": raw.get("text") or ""}


def page_report(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Each asked page of the document as laid out at its paper size."""
    doc = _document(ctx)
    positions = _positions(doc, args.get("pages"))
    rendered = render_document(ctx.workspace, document=doc)
    budget = page_timeout_s() + 2.0 * len(doc.pages)
    try:
        measured = run_sync(_measure(rendered.html, budget))
    except sheets.SheetsTimeout as exc:
        raise ToolError("E_TIMEOUT", f"The document did not lay out in time: {exc}",
                        hint="A page with a very large image or table is the usual cause") from None
    except Exception as exc:  # Chromium missing or crashed: said, never a bare 500
        raise ToolError("E_INTERNAL", f"Cannot lay out the document in Chromium: {exc}",
                        hint="Check that Chromium is installed (scripts/install)") from None
    by_position = {int(raw["page"]): raw for raw in measured if raw.get("measured")}
    missing = set(rendered.missing_pages)
    pages = [_page(doc, by_position[p], missing) for p in positions if p in by_position]
    return {
        "paper": {"name": doc.paper, "label": doc.paper_label, "width_mm": doc.width_mm,
                  "height_mm": doc.height_mm, "orientation": doc.orientation},
        "content_box_mm": {"width": round(doc.content_width_mm, 1), "height": round(doc.content_height_mm, 1)},
        "pages": pages,
        "overflowing": [p["page"] for p in pages if p["overflows"]],
        "warnings": rendered.warnings(),
    }
