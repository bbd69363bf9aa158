"""The print mode's ``Exporter`` (``register_exporters``): the document as
a PDF at the exact paper size, one PNG per page, or one standalone HTML
file (render.py).

The PDF and the PNGs are made in one headless Chromium that also measures
every sheet: an overflowing page is exported as it is (cut at its content
box, as the viewer shows it) and named in the result's warnings. The PDF's
text is text (selectable, ``pdftotext`` reads it), and Chromium embeds the
subset of every font it draws with, Chinese included (the shell's Noto Sans
SC slices inlined by render.py).

Without Playwright (a test dependency that scripts/install installs) the
PDF is Chromium's own ``--print-to-pdf`` of the same file and the PNGs its
``--screenshot``, one start per page, unmeasured.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from pneuma.api import (
    EXPORT_TIMEOUT_S,
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    html_to_pdf,
    html_to_png,
    page_timeout_s,
    run_sync,
)
from pneuma_print import sheets
from pneuma_print.paper import PrintDocument, PrintFileError, load_document
from pneuma_print.render import RenderedDocument, render_document

PNG_SCALE = 2.0  # device pixels per CSS pixel: 192 dpi, an A4 page 1588 × 2245 px
_FIX_FILE = "Fix print.json (docs/print.md says its format), then export again."


def export(request: ExportRequest) -> ExportResult:
    document = _document(request.workspace)
    if not document.pages:
        raise ExportError('print.json lists no pages: its "pages" is empty', hint=_FIX_FILE)
    rendered = render_document(request.workspace, document=document)
    if request.format == "html":
        _write_text(request.output, rendered.html)
        return ExportResult([request.output], rendered.warnings(), _summary(document))
    if request.format == "pdf":
        notes = _pdf(rendered, request.output)
        return ExportResult([request.output], rendered.warnings() + notes, _summary(document))
    outputs = [request.output / name for name in png_names(document)]
    notes = _pngs(request.workspace, rendered, outputs, _scale(request))
    written = [path for path in outputs if path.is_file()]
    return ExportResult(written, rendered.warnings() + notes, _summary(document))


def _document(workspace: Path) -> PrintDocument:
    try:
        return load_document(workspace)
    except PrintFileError as exc:
        raise ExportError(str(exc), hint=_FIX_FILE) from None


def _summary(document: PrintDocument) -> str:
    return f"{len(document.pages)} page(s), {document.paper_label}"


def _scale(request: ExportRequest) -> float:
    try:
        scale = float(request.params.get("pngScale", PNG_SCALE))
    except (TypeError, ValueError):
        return PNG_SCALE
    return scale if 0.25 <= scale <= 8 else PNG_SCALE


def png_names(document: PrintDocument) -> list[str]:
    """``01-cover.png`` … in the document's order (not the files' own numbers)."""
    names = []
    for position, page in enumerate(document.pages, start=1):
        stem = re.sub(r"^\d+[-_. ]*", "", Path(page.file).stem) or "page"
        names.append(f"{position:02d}-{stem}.png")
    return names


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _budget(pages: int) -> float:
    return min(page_timeout_s() * max(1, pages), max(EXPORT_TIMEOUT_S, page_timeout_s()))


def _has_playwright() -> bool:
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return False
    return True


def overflow_warnings(fits: list[sheets.SheetFit]) -> list[str]:
    return [f"page {fit.page} ({fit.file}) overflows its content box {fit.describe()}: "
            "it is exported cut at the margin" for fit in fits if fit.overflows]


def _pdf(rendered: RenderedDocument, output: Path) -> list[str]:
    pages = len(rendered.document.pages)
    if not _has_playwright():
        with tempfile.TemporaryDirectory(prefix="pneuma-print-") as folder:
            file = Path(folder) / "document.html"
            file.write_text(rendered.html, encoding="utf-8")
            html_to_pdf(file, output, name="the document", items=pages)
        return ["overflow not measured: Playwright is not installed"]
    return run_sync(_pdf_in_chromium(rendered.html, output, _budget(pages)))


async def _pdf_in_chromium(html_text: str, output: Path, seconds: float) -> list[str]:
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        async with sheets.browser() as chromium, sheets.opened(chromium, html_text, seconds) as page:
            fits = await sheets.measure(page)
            await sheets.print_pdf(page, output, seconds)
    except sheets.SheetsTimeout as exc:
        output.unlink(missing_ok=True)
        raise ExportError(f"the document was not exported: {exc}", code="E_TIMEOUT",
                          hint="A page too heavy to draw? Export again, or split it") from None
    return overflow_warnings(fits)


def _pngs(workspace: Path, rendered: RenderedDocument, outputs: list[Path], scale: float) -> list[str]:
    for output in outputs:
        output.parent.mkdir(parents=True, exist_ok=True)
    if not _has_playwright():
        return _pngs_without_playwright(workspace, rendered.document, outputs)
    return run_sync(_pngs_in_chromium(rendered.html, outputs, scale,
                                      _budget(len(rendered.document.pages))))


async def _pngs_in_chromium(html_text: str, outputs: list[Path], scale: float, seconds: float) -> list[str]:
    try:
        async with sheets.browser() as chromium, \
                sheets.opened(chromium, html_text, seconds, scale=scale) as page:
            fits = await sheets.measure(page)
            await sheets.sheet_pictures(page, outputs, seconds)
    except sheets.SheetsTimeout as exc:
        raise ExportError(f"the pages were not exported: {exc}", code="E_TIMEOUT",
                          hint="A page too heavy to draw? Export again, or split it") from None
    return overflow_warnings(fits)


def _pngs_without_playwright(workspace: Path, document: PrintDocument, outputs: list[Path]) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="pneuma-print-png-") as folder:
        files = []
        for position in range(1, len(document.pages) + 1):
            file = Path(folder) / f"{position}.html"
            sheet = render_document(workspace, only=position, document=document)
            file.write_text(sheet.html, encoding="utf-8")
            files.append(file)
        left_out = html_to_png(files, outputs, width=round(sheets.mm_to_px(document.width_mm)),
                               height=round(sheets.mm_to_px(document.height_mm)),
                               names=[f"page {i} ({p.file})" for i, p in enumerate(document.pages, start=1)])
    return left_out + ["overflow not measured: Playwright is not installed"]


def _default_name(workspace: Path) -> str:
    try:
        title = load_document(workspace).title
    except PrintFileError:
        return "document"
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60].strip("-") or "document"


EXPORTER = Exporter(
    mode="print",
    formats=[
        ExportFormat("pdf", {"en": "PDF (the paper size, text selectable)", "zh-CN": "PDF（纸张尺寸，文字可选）"},
                     ".pdf"),
        ExportFormat("png", {"en": "PNG (one image per page)", "zh-CN": "PNG（每页一张图）"}, ""),
        ExportFormat("html", {"en": "HTML (one self-contained file)", "zh-CN": "HTML（单个自包含文件）"},
                     ".html"),
    ],
    export=export,
    default_name=_default_name,
    site_format="html",
)
