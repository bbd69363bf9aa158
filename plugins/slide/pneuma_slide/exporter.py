"""The slide mode's ``Exporter`` (``register_exporters``): the deck as a PDF,
one self-contained HTML file, one PNG per slide, or a PPTX whose headings,
paragraphs and lists are text boxes that can be edited in PowerPoint and
LibreOffice, over a picture of the rest of the slide at twice its size
(``pptx_text.py``), with each slide's text in its speaker notes too.

PDF and HTML are ``export.py``'s; PNG and PPTX render each slide on its
own page at the deck's size with the host's Chromium. Without Playwright
(a test dependency, installed by scripts/install) a PPTX slide is its
picture alone, at the slide's size, as Chromium's own ``--screenshot`` takes it.
"""

from __future__ import annotations

import re
import tempfile
from html.parser import HTMLParser
from pathlib import Path

from pneuma.api import (
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    html_to_png,
)
from pneuma_slide import export as deck_export
from pneuma_slide import pptx_text

_PX_EMU = 9525  # EMU per CSS pixel at 96 dpi


class _TextOf(HTMLParser):
    """The visible text of an HTML fragment, one line per block."""

    _SKIP = {"script", "style", "template", "noscript"}
    _BLOCK = {"p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr", "section",
              "blockquote", "pre", "figcaption", "td", "th"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self.skipping += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self.skipping:
            self.skipping -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)

    def text(self) -> str:
        lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in "".join(self.parts).split("\n"))
        return "\n".join(line for line in lines if line)


def slide_text(fragment: str) -> str:
    parser = _TextOf()
    parser.feed(fragment)
    parser.close()
    return parser.text()


# What to do about a deck that cannot be exported as it stands (E_CONFLICT).
_FIX_MANIFEST = ("Fix manifest.json: it must list the deck's slides, each an existing file; "
                 "then export again.")
# What else a person can do when Chromium cannot print the PDF.
_PDF_WITHOUT_CHROMIUM = "Or export HTML: it needs no Chromium and prints to PDF from any browser."


def _deck_problem(exc: deck_export.ExportError) -> ExportError:
    return ExportError(str(exc), hint=_FIX_MANIFEST)


def _deck(request: ExportRequest) -> deck_export.Deck:
    try:
        return deck_export.load_deck(request.workspace, dict(request.params) or None)
    except deck_export.ExportError as exc:
        raise _deck_problem(exc) from None


def _slide_pngs(deck: deck_export.Deck, directory: Path) -> tuple[list[Path | None], list[str]]:
    """One PNG per slide, ``01-<name>.png`` …, at the deck's size (None for a
    slide left out), and one line per slide left out."""
    inliner = deck_export._Inliner(deck)
    outputs: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="pneuma-slides-") as tmp:
        pages: list[Path] = []
        for i, slide in enumerate(deck.slides, start=1):
            page = Path(tmp) / f"{i}.html"
            page.write_text(deck_export.slide_document(deck, slide, inliner), encoding="utf-8")
            pages.append(page)
            # "01-title.png" for slides/01-title.html: the deck's order, not the file's own number
            name = re.sub(r"^\d+[-_. ]*", "", Path(slide.file).stem) or "slide"
            outputs.append(directory / f"{i:02d}-{name}.png")
        names = [f"slide {i} ({slide.file})" for i, slide in enumerate(deck.slides, start=1)]
        left_out = html_to_png(pages, outputs, width=deck.width, height=deck.height, names=names)
    return [path if path.is_file() else None for path in outputs], left_out


def _rendered_slides(deck: deck_export.Deck,
                     directory: Path) -> tuple[list[pptx_text.RenderedSlide | None], list[str]]:
    """Each slide's picture (its mapped text hidden) and text boxes; pictures
    alone, without text boxes, where Playwright is not installed."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        images, left_out = _slide_pngs(deck, directory)
        return [pptx_text.RenderedSlide(image, []) if image else None for image in images], left_out
    inliner = deck_export._Inliner(deck)
    pages: list[Path] = []
    for i, slide in enumerate(deck.slides, start=1):
        page = directory / f"{i}.html"
        page.write_text(deck_export.slide_document(deck, slide, inliner), encoding="utf-8")
        pages.append(page)
    names = [f"slide {i} ({slide.file})" for i, slide in enumerate(deck.slides, start=1)]
    pictures = [directory / f"{i}.png" for i in range(1, len(deck.slides) + 1)]
    return pptx_text.render_slides(pages, pictures, names, width=deck.width, height=deck.height)


def _write_pptx(deck: deck_export.Deck, rendered: list[pptx_text.RenderedSlide | None],
                output: Path) -> None:
    from pptx import Presentation  # python-pptx, a dependency of this package

    presentation = Presentation()
    presentation.slide_width = deck.width * _PX_EMU
    presentation.slide_height = deck.height * _PX_EMU
    blank = presentation.slide_layouts[6]
    for slide, drawn in zip(deck.slides, rendered, strict=True):
        if drawn is None:  # left out: its page did not finish (said in the result)
            continue
        page = presentation.slides.add_slide(blank)
        page.shapes.add_picture(str(drawn.picture), 0, 0, presentation.slide_width,
                                presentation.slide_height)
        pptx_text.add_text_boxes(page, drawn.boxes, deck.width)
        text = slide_text(slide.fragment)
        page.notes_slide.notes_text_frame.text = text or slide.title
    presentation.core_properties.title = deck.title
    tmp = output.with_name(output.name + ".tmp")
    presentation.save(str(tmp))
    tmp.replace(output)


def export(request: ExportRequest) -> ExportResult:
    if request.format in deck_export.FORMATS:  # pdf, html
        try:
            result = deck_export.export_deck(request.workspace, request.format, request.output,
                                             dict(request.params) or None)
        except deck_export.ExportError as exc:
            raise _deck_problem(exc) from None
        except ExportError as exc:  # html_to_pdf: no Chromium, or it failed
            hint = f"{exc.hint} {_PDF_WITHOUT_CHROMIUM}" if exc.hint else _PDF_WITHOUT_CHROMIUM
            raise ExportError(str(exc), code=exc.code, hint=hint) from None
        return ExportResult([result.path], _missing(result.missing_assets),
                            f"{result.slides} slide(s)")
    deck = _deck(request)
    if request.format == "png":
        images, left_out = _slide_pngs(deck, request.output)
        files = [image for image in images if image is not None]
    else:  # pptx
        with tempfile.TemporaryDirectory(prefix="pneuma-pptx-") as tmp:
            rendered, left_out = _rendered_slides(deck, Path(tmp))
            _write_pptx(deck, rendered, request.output)
        files = [request.output]
    return ExportResult(files, _missing(deck.missing_assets), _summary(len(deck.slides), left_out),
                        left_out)


def _summary(slides: int, left_out: list[str]) -> str:
    if not left_out:
        return f"{slides} slide(s)"
    return f"{slides - len(left_out)} of {slides} slide(s), {len(left_out)} left out"


def _missing(assets: list[str] | set[str]) -> list[str]:
    return [f"{rel} is referenced by a slide but does not exist" for rel in sorted(assets)]


def _default_name(workspace: Path) -> str:
    try:
        deck = deck_export.load_deck(workspace, {})
    except deck_export.ExportError:
        return "slides"
    return deck_export.default_output(deck, "x").stem


EXPORTER = Exporter(
    mode="slide",
    formats=[
        ExportFormat("pdf", {"en": "PDF (one page per slide)", "zh-CN": "PDF（每页一张幻灯片）"}, ".pdf"),
        ExportFormat("html", {"en": "HTML (one self-contained file)", "zh-CN": "HTML（单个自包含文件）"},
                     ".html"),
        ExportFormat("png", {"en": "PNG (one image per slide)", "zh-CN": "PNG（每张幻灯片一张图）"}, ""),
        ExportFormat("pptx", {"en": "PowerPoint (editable text)",
                              "zh-CN": "PowerPoint（文字可编辑）"}, ".pptx"),
    ],
    export=export,
    default_name=_default_name,
    site_format="html",  # what `pneuma publish` puts on a target
)
