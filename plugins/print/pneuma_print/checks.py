"""The print mode's check after every turn (docs/checks.md, docs/print.md
"Checks"): every page fits its content box.

The document is laid out as the export prints it (render.py: the same
sheets, the same rule the viewer flags by) in headless Chromium, and each
page is measured. A page that overflows fails, named with how many
millimetres reach past the box; so do a page listed in ``print.json``
whose file does not exist and a ``print.json`` that cannot be read. A file
a page refers to that does not exist is a warning.

Which pages: those the turn changed; every page when it changed
``print.json``, ``style.css`` or any other file a page may use (an image,
a font). A turn that changed only ``exports/`` is not measured.
"""

from __future__ import annotations

from pneuma.api import CheckRequest, Problem, TurnCheck, run_sync
from pneuma_print import sheets
from pneuma_print.paper import (
    PRINT_JSON,
    STYLESHEET,
    PrintDocument,
    PrintFileError,
    load_document,
)
from pneuma_print.render import RenderedDocument, render_document

_NOT_THE_DOCUMENT = ("exports/",)
# Chromium's start and the answer's trip back take a moment of the budget.
_MARGIN_S = 2.0


def _pages_to_report(request: CheckRequest, document: PrintDocument) -> set[str] | None:
    """The page files whose fit to report, or None for every page."""
    changed = [path for path in request.changed if not path.startswith(_NOT_THE_DOCUMENT)]
    files = {page.file for page in document.pages}
    if any(path in (PRINT_JSON, STYLESHEET) or path not in files for path in changed):
        return None
    return set(changed)


def pages_fit(request: CheckRequest) -> list[Problem]:
    if not any(not path.startswith(_NOT_THE_DOCUMENT) for path in request.changed):
        return []
    try:
        document = load_document(request.workspace)
    except PrintFileError as exc:
        return [Problem(str(exc), file=PRINT_JSON, line=exc.line)]
    wanted = _pages_to_report(request, document)
    rendered = render_document(request.workspace, document=document)
    problems = _missing(rendered, wanted)
    unreadable = {*rendered.missing_pages, *rendered.not_text_pages}
    present = [page for page in document.pages if page.file not in unreadable]
    if not present or (wanted is not None and not wanted & {page.file for page in present}):
        return problems
    fits = run_sync(_measure(rendered.html, max(1.0, request.budget_s - _MARGIN_S)))
    for fit in fits:
        if fit.overflows and (wanted is None or fit.file in wanted) and fit.file not in unreadable:
            problems.append(_overflow(document, fit))
    return problems


def _missing(rendered: RenderedDocument, wanted: set[str] | None) -> list[Problem]:
    document = rendered.document
    problems = []
    for file in rendered.missing_pages:
        position = document.position_of(file)
        problems.append(Problem(f"page {position} ({file}) is listed in print.json but the file does not exist",
                                file=PRINT_JSON, locate={"page": position, "file": file}))
    for file in rendered.not_text_pages:
        position = document.position_of(file)
        problems.append(Problem(f"page {position} ({file}) is not a text file: write the page as HTML",
                                file=file, locate={"page": position, "file": file}))
    for rel in rendered.missing_assets:
        problems.append(Problem(f"{rel} is referred to by a page but does not exist", file=None,
                                severity="warning"))
    return problems


def _overflow(document: PrintDocument, fit: sheets.SheetFit) -> Problem:
    box = f"{document.content_width_mm:g} × {document.content_height_mm:g} mm"
    message = (f"page {fit.page} ({fit.file}) overflows its content box {fit.describe()} "
               f"(the box is {box} on {document.paper_label}): shorten it or move content to another page")
    return Problem(message, file=fit.file, locate={"page": fit.page, "file": fit.file})


async def _measure(html_text: str, seconds: float) -> list[sheets.SheetFit]:
    try:
        async with sheets.browser() as chromium, sheets.opened(chromium, html_text, seconds) as page:
            return await sheets.measure(page)
    except sheets.SheetsTimeout as exc:
        raise RuntimeError(f"the pages could not be measured: {exc}") from None
    except ImportError:
        raise RuntimeError("the pages could not be measured: the fit check drives Chromium through "
                           "Playwright, which is not installed (scripts/install installs it)") from None


CHECKS = [TurnCheck(mode="print", name="fit",
                    label={"en": "Every page fits its paper", "zh-CN": "每页内容都在纸张内"},
                    run=pages_fit)]
