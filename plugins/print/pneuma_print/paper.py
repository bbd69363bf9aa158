"""The one reader of ``print.json``: the paper, its margins, the page
numbers and the list of pages, with a clear message for a bad file.

The format (docs/print.md, skill/SKILL.md):

    {"title": str,
     "paper": "A4" | "Letter" | "Legal" | "A5" | "B5" | {"width_mm": n, "height_mm": n},
     "orientation": "portrait" | "landscape",
     "margin_mm": n | {"top": n, "right": n, "bottom": n, "left": n},
     "pageNumbers": {"show": bool, "start": int, "skipFirst": bool},
     "pages": [{"file": "pages/01-cover.html", "title": str}]}

Defaults: A4, portrait, 18 mm margins, page numbers shown from 1 and not
on the first page. Page numbers count sheets: the sheet at position ``i``
(1-based) carries ``start + i - 1``; ``skipFirst`` hides the first sheet's
number without changing the others' (a cover is page 1, unnumbered).
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PRINT_JSON = "print.json"
STYLESHEET = "style.css"
MM_PER_INCH = 25.4
PT_PER_INCH = 72.0
PX_PER_INCH = 96.0  # a CSS pixel

# Portrait width × height in millimetres.
PAPERS: dict[str, tuple[float, float]] = {
    "A4": (210.0, 297.0),
    "Letter": (215.9, 279.4),
    "Legal": (215.9, 355.6),
    "A5": (148.0, 210.0),
    "B5": (176.0, 250.0),
}
DEFAULT_PAPER = "A4"
DEFAULT_MARGIN_MM = 18.0
ORIENTATIONS = ("portrait", "landscape")
# A custom paper between a small label and a large poster.
MIN_PAPER_MM = 20.0
MAX_PAPER_MM = 2000.0
MAX_FILE_BYTES = 1024 * 1024


class PrintFileError(ValueError):
    """``print.json`` is missing or does not say a document; the message
    says what is wrong in one line, naming the field; ``line`` is where
    in the file when the JSON itself is broken."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Margins:
    top: float
    right: float
    bottom: float
    left: float


@dataclass(frozen=True)
class PageNumbers:
    show: bool = True
    start: int = 1
    skip_first: bool = True


@dataclass(frozen=True)
class PageEntry:
    file: str
    title: str


@dataclass(frozen=True)
class PrintDocument:
    """One state of ``print.json``, read and checked."""

    title: str
    paper: str  # "A4" …, or "custom"
    orientation: str
    width_mm: float  # as printed: landscape already swapped
    height_mm: float
    margins: Margins
    page_numbers: PageNumbers = field(default_factory=PageNumbers)
    pages: tuple[PageEntry, ...] = ()

    @property
    def width_pt(self) -> float:
        return mm_to_pt(self.width_mm)

    @property
    def height_pt(self) -> float:
        return mm_to_pt(self.height_mm)

    @property
    def content_width_mm(self) -> float:
        """The content box's width: the paper minus the left and right margins."""
        return self.width_mm - self.margins.left - self.margins.right

    @property
    def content_height_mm(self) -> float:
        return self.height_mm - self.margins.top - self.margins.bottom

    @property
    def paper_label(self) -> str:
        """``"A4"``, ``"Letter landscape"``, ``"120 × 180 mm"``."""
        name = self.paper if self.paper != "custom" else f"{self.width_mm:g} × {self.height_mm:g} mm"
        return name if self.orientation == "portrait" or self.paper == "custom" else f"{name} landscape"

    def number_of(self, position: int) -> int | None:
        """The page number the sheet at ``position`` (1-based) shows, or None."""
        numbers = self.page_numbers
        if not numbers.show or (numbers.skip_first and position == 1):
            return None
        return numbers.start + position - 1

    def position_of(self, file: str) -> int | None:
        """The 1-based position of the page whose file is ``file``."""
        for position, page in enumerate(self.pages, start=1):
            if page.file == file:
                return position
        return None


def mm_to_pt(mm: float) -> float:
    return mm * PT_PER_INCH / MM_PER_INCH


def px_to_mm(px: float) -> float:
    return px * MM_PER_INCH / PX_PER_INCH


def load_document(workspace: Path) -> PrintDocument:
    """``workspace/print.json`` read and checked (``PrintFileError`` says why not)."""
    path = Path(workspace) / PRINT_JSON
    if not path.is_file():
        raise PrintFileError(f"{PRINT_JSON} is missing: is this a print workspace?")
    with path.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise PrintFileError(f"{PRINT_JSON} is larger than {MAX_FILE_BYTES // 1024} KiB")
    return parse_document(data)


def parse_document(data: bytes | str) -> PrintDocument:
    """One state of ``print.json`` from its bytes (``PrintFileError`` says why not)."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        raw = json.loads(text)
    except UnicodeDecodeError:
        raise PrintFileError(f"{PRINT_JSON} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise PrintFileError(f"{PRINT_JSON} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                             f"column {exc.colno}", line=exc.lineno) from None
    if not isinstance(raw, dict):
        raise PrintFileError(f"{PRINT_JSON} must hold a JSON object")
    paper, width, height = _paper(raw.get("paper", DEFAULT_PAPER))
    orientation = raw.get("orientation", "portrait")
    if orientation not in ORIENTATIONS:
        raise PrintFileError(f'{PRINT_JSON}: "orientation" must be "portrait" or "landscape", '
                             f"not {json.dumps(orientation)}")
    if orientation == "landscape":
        width, height = height, width
    margins = _margins(raw.get("margin_mm", DEFAULT_MARGIN_MM), width, height)
    title = raw.get("title", "")
    return PrintDocument(
        title=title.strip() if isinstance(title, str) else "",
        paper=paper, orientation=orientation, width_mm=width, height_mm=height, margins=margins,
        page_numbers=_page_numbers(raw.get("pageNumbers", {})),
        pages=tuple(_pages(raw.get("pages"))),
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _paper(value: Any) -> tuple[str, float, float]:
    if isinstance(value, str):
        for name, (width, height) in PAPERS.items():
            if value.strip().lower() == name.lower():
                return name, width, height
        raise PrintFileError(f'{PRINT_JSON}: unknown "paper" {json.dumps(value)}; use one of '
                             f'{", ".join(PAPERS)} or {{"width_mm": n, "height_mm": n}}')
    if isinstance(value, dict):
        custom_width, custom_height = _number(value.get("width_mm")), _number(value.get("height_mm"))
        if custom_width is None or custom_height is None:
            raise PrintFileError(f'{PRINT_JSON}: a custom "paper" needs numbers "width_mm" and "height_mm"')
        for side, mm in (("width_mm", custom_width), ("height_mm", custom_height)):
            if not MIN_PAPER_MM <= mm <= MAX_PAPER_MM:
                raise PrintFileError(f'{PRINT_JSON}: "paper" {side} {mm:g} is outside '
                                     f"{MIN_PAPER_MM:g}–{MAX_PAPER_MM:g} mm")
        return "custom", custom_width, custom_height
    raise PrintFileError(f'{PRINT_JSON}: "paper" must be a name ({", ".join(PAPERS)}) or '
                         '{"width_mm": n, "height_mm": n}')


def _margins(value: Any, width: float, height: float) -> Margins:
    single = _number(value)
    if single is not None:
        sides = {"top": single, "right": single, "bottom": single, "left": single}
    elif isinstance(value, dict):
        sides = {}
        for side in ("top", "right", "bottom", "left"):
            number = _number(value.get(side, DEFAULT_MARGIN_MM))
            if number is None:
                raise PrintFileError(f'{PRINT_JSON}: "margin_mm".{side} must be a number of millimetres')
            sides[side] = number
    else:
        raise PrintFileError(f'{PRINT_JSON}: "margin_mm" must be a number or '
                             '{"top": n, "right": n, "bottom": n, "left": n}')
    if any(mm < 0 for mm in sides.values()):
        raise PrintFileError(f'{PRINT_JSON}: "margin_mm" cannot be negative')
    # At least a tenth of the paper is left for content, or nothing could fit.
    if sides["left"] + sides["right"] > width * 0.9 or sides["top"] + sides["bottom"] > height * 0.9:
        raise PrintFileError(f'{PRINT_JSON}: "margin_mm" leaves no room on a {width:g} × {height:g} mm page')
    return Margins(**sides)


def _page_numbers(value: Any) -> PageNumbers:
    if isinstance(value, bool):  # "pageNumbers": false is read as it is meant
        return PageNumbers(show=value)
    if not isinstance(value, dict):
        raise PrintFileError(f'{PRINT_JSON}: "pageNumbers" must be {{"show": bool, "start": int, '
                             '"skipFirst": bool}')
    show, skip_first, start = value.get("show", True), value.get("skipFirst", True), value.get("start", 1)
    if not isinstance(show, bool) or not isinstance(skip_first, bool):
        raise PrintFileError(f'{PRINT_JSON}: "pageNumbers".show and .skipFirst must be true or false')
    if isinstance(start, bool) or not isinstance(start, int):
        raise PrintFileError(f'{PRINT_JSON}: "pageNumbers".start must be a whole number')
    return PageNumbers(show=show, start=start, skip_first=skip_first)


def _pages(value: Any) -> list[PageEntry]:
    if not isinstance(value, list):
        raise PrintFileError(f'{PRINT_JSON}: "pages" must be a list of {{"file": …, "title": …}}')
    pages: list[PageEntry] = []
    seen: set[str] = set()
    for index, entry in enumerate(value, start=1):
        raw = entry if isinstance(entry, str) else entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(raw, str) or not raw.strip():
            raise PrintFileError(f'{PRINT_JSON}: page {index} has no "file"')
        file = workspace_path(raw)
        if file is None:
            raise PrintFileError(f'{PRINT_JSON}: page {index}\'s file {json.dumps(raw)} is not a path '
                                 "inside the workspace")
        if file in seen:
            raise PrintFileError(f"{PRINT_JSON}: {file} is listed twice (pages {index} and "
                                 f"{[p.file for p in pages].index(file) + 1})")
        seen.add(file)
        title = entry.get("title") if isinstance(entry, dict) else None
        pages.append(PageEntry(file, title.strip() if isinstance(title, str) and title.strip()
                               else posixpath.splitext(posixpath.basename(file))[0]))
    return pages


def workspace_path(raw: str) -> str | None:
    """``raw`` as a normal workspace-relative path, or None when it leaves
    the workspace (``..``, an absolute path, a URL)."""
    text = raw.strip().replace("\\", "/")
    if not text or text.startswith("/") or ":" in text.split("/", 1)[0]:
        return None
    normal = posixpath.normpath(text)
    if normal in (".", "") or normal == ".." or normal.startswith("../"):
        return None
    return normal
