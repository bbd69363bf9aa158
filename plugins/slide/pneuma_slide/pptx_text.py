"""Slides as PowerPoint slides whose text can be edited (docs/slide.md, "Export").

Each slide is rendered on its own page in headless Chromium (Playwright) at
the deck's size. ``pptx_measure.js`` finds the text that maps to text boxes
(headings, paragraphs, lists: blocks holding only inline text), measures it
as Chromium drew it (box, font family, size, weight, italic, colour, line
height, alignment, bullets and levels) and makes those glyphs transparent.
The slide is then taken as a picture at twice its size: the picture carries
what cannot be mapped (backgrounds, borders, images, a rotated or faded
line), the text boxes on top carry the text, so nothing is drawn twice.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.api import (
    CHROMIUM_ARGS,
    EXPORT_TIMEOUT_S,
    find_chromium,
    hung_page,
    page_timeout_s,
    run_sync,
    timed_out,
    within,
)

PX_EMU = 9525  # EMU per CSS pixel at 96 dpi
PX_PT = 0.75  # points per CSS pixel
PICTURE_SCALE = 2  # the picture's pixels per CSS pixel
_MEASURE_JS = Path(__file__).with_name("pptx_measure.js")

# Waits until web fonts and images are in, so what is measured is what is drawn.
_SETTLE = """async () => {
  await document.fonts.ready;
  const images = Array.from(document.images).filter((i) => !i.complete);
  await Promise.all(images.map((i) => new Promise((r) => { i.onload = i.onerror = r; })));
}"""


@dataclass
class RenderedSlide:
    """One slide: its picture (mapped text hidden) and its text boxes, in CSS px."""

    picture: Path
    boxes: list[dict[str, Any]]


# --- rendering and measuring --------------------------------------------------------


def render_slides(pages: list[Path], pictures: list[Path], names: list[str], *,
                  width: int, height: int) -> tuple[list[RenderedSlide | None], list[str]]:
    """Render each HTML page of ``pages``: its text boxes, and its picture in
    the matching path of ``pictures``. A page that does not finish within
    its budget (``page_timeout_s``) is None, with a line naming it (``names``)
    in the second list; ``E_TIMEOUT`` when every page was left out.
    Playwright's own errors escape (the host's ``renderer_failure`` says them)."""
    script = _MEASURE_JS.read_text(encoding="utf-8")
    jobs = list(zip(pages, pictures, names, strict=True))
    rendered, left_out = run_sync(_render_async(jobs, script, width, height))
    if pages and len(left_out) == len(pages):
        raise timed_out(left_out)
    return rendered, left_out


async def _render_async(jobs: list[tuple[Path, Path, str]], script: str, width: int,
                        height: int) -> tuple[list[RenderedSlide | None], list[str]]:
    from playwright.async_api import async_playwright

    seconds = page_timeout_s()
    deadline = time.monotonic() + EXPORT_TIMEOUT_S
    rendered: list[RenderedSlide | None] = []
    left_out: list[str] = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": width, "height": height},
                                                device_scale_factor=PICTURE_SCALE)
            page = await context.new_page()
            for html_file, picture, name in jobs:
                budget = min(seconds, deadline - time.monotonic())
                if budget <= 0:
                    rendered.append(None)
                    left_out.append(f"{name}: left out, the export's {EXPORT_TIMEOUT_S:g} s were used up")
                    continue
                boxes: list[list[dict[str, Any]]] = []

                async def work(page: Any = page, html_file: Path = html_file, picture: Path = picture,
                               boxes: list[list[dict[str, Any]]] = boxes) -> None:
                    await page.goto(html_file.as_uri(), wait_until="load", timeout=0)
                    boxes.append(await _measure(page, script, width, height))
                    await page.screenshot(path=str(picture), timeout=0)

                if await within(page, budget, work):
                    rendered.append(RenderedSlide(picture, boxes[0]))
                else:
                    picture.unlink(missing_ok=True)
                    rendered.append(None)
                    left_out.append(hung_page(name, budget))
                    page = await context.new_page()
        finally:
            await browser.close()
    return rendered, left_out


async def _measure(page: Any, script: str, width: int, height: int) -> list[dict[str, Any]]:
    """The slide's text boxes, checked. The answer comes from a page that
    runs the slide's own scripts, which may have replaced what the
    measuring script calls: a script error leaves the whole slide to its
    picture (nothing was hidden yet), and a malformed answer is reduced to
    the boxes that are well formed (``checked_boxes``)."""
    from playwright.async_api import Error as PlaywrightError

    try:
        await page.evaluate(_SETTLE)
        answer = await page.evaluate(script)
    except PlaywrightError:
        browser = page.context.browser
        if page.is_closed() or (browser is not None and not browser.is_connected()):
            raise  # the page or the browser died: not the slide's script, said as a Chromium failure
        return []
    return checked_boxes(answer, width, height)


# --- checking what the page answered -------------------------------------------------------

MAX_BOXES = 400  # per slide
MAX_PARAGRAPHS = 400  # per box
MAX_RUNS = 2000  # per paragraph
MAX_RUN_CHARS = 20_000
_ALIGNMENTS = {"left", "center", "right", "justify"}
_AUTO_NUMBERS = {"arabicPeriod", "alphaLcPeriod", "alphaUcPeriod", "romanLcPeriod", "romanUcPeriod"}
_SHIFTS = {"super": "30000", "sub": "-25000"}  # PowerPoint's baseline offsets, in 1/1000 %
_HEX = re.compile(r"[0-9a-fA-F]{6}")
_FONT = re.compile(r"[^\x00-\x1f<>&\"]{1,64}")


class _Malformed(ValueError):
    """A part of the page's answer that is not what the measuring script returns."""


def _number(value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Malformed(f"not a number: {value!r:.40}")
    return min(high, max(low, float(value)))


def _text(value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise _Malformed(f"not text: {value!r:.40}")
    return value[:limit]


def _colour(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not _HEX.fullmatch(_text(value.get("hex"), 6)):
        raise _Malformed("not a colour")
    return {"hex": value["hex"], "alpha": _number(value.get("alpha", 1), 0, 1)}


def _run(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Malformed("not a run")
    if value.get("br") is True:
        return {"br": True}
    font = _text(value.get("font"), 64)
    caps = value.get("caps")
    link = value.get("link")
    return {
        "text": _text(value.get("text"), MAX_RUN_CHARS),
        "font": font if _FONT.fullmatch(font) else "Arial",
        "size": _number(value.get("size"), 1, 5000),  # px; PowerPoint's largest is 4000 pt
        "bold": value.get("bold") is True, "italic": value.get("italic") is True,
        "underline": value.get("underline") is True, "strike": value.get("strike") is True,
        "color": _colour(value.get("color")),
        "caps": caps if caps in ("all", "small") else None,
        "spacing": _number(value.get("spacing") or 0, -500, 500),
        "shift": value.get("shift") if value.get("shift") in _SHIFTS else None,
        "link": link if isinstance(link, str) and len(link) <= 2000 else None,
    }


def _bullet_of(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Malformed("not a bullet")
    colour = _colour(value.get("color"))
    if value.get("auto") is not None:
        if value["auto"] not in _AUTO_NUMBERS:
            raise _Malformed("not a numbering")
        return {"auto": value["auto"], "start": int(_number(value.get("start", 1), 1, 32767)), "color": colour}
    char = _text(value.get("char"), 4)
    return {"char": char if char.strip() and all(ch >= " " for ch in char) else "\u2022", "color": colour}


def _paragraph(value: Any, width: int) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("runs"), list):
        raise _Malformed("not a paragraph")
    line_height = value.get("lineHeight")
    return {
        "runs": [_run(run) for run in value["runs"][:MAX_RUNS]],
        "align": value.get("align") if value.get("align") in _ALIGNMENTS else "left",
        "lineHeight": None if line_height is None else _number(line_height, 1, 5000),
        "spaceBefore": _number(value.get("spaceBefore") or 0, 0, 5000),
        "level": int(_number(value.get("level") or 0, 0, 8)),
        "marL": _number(value.get("marL") or 0, 0, width),
        "indent": _number(value.get("indent") or 0, -width, width),
        "bullet": _bullet_of(value.get("bullet")),
        "rtl": value.get("rtl") is True,
    }


def _box(value: Any, width: int, height: int) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("paragraphs"), list):
        raise _Malformed("not a box")
    x = _number(value.get("x"), 0, width - 1)
    y = _number(value.get("y"), 0, height - 1)
    tag = value.get("tag")
    return {
        "tag": tag if isinstance(tag, str) and tag.isalnum() and len(tag) <= 16 else "text",
        "x": x, "y": y,
        "w": _number(value.get("w"), 1, width - x), "h": _number(value.get("h"), 1, height - y),
        "paragraphs": [_paragraph(p, width) for p in value["paragraphs"][:MAX_PARAGRAPHS]],
    }


def checked_boxes(answer: Any, width: int, height: int) -> list[dict[str, Any]]:
    """The well-formed boxes of the page's answer, every number within the
    slide and every count within bounds; a malformed box is left out (its
    text stays hidden in the picture: only a slide's own script can cause it)."""
    if not isinstance(answer, list):
        return []
    boxes: list[dict[str, Any]] = []
    for value in answer[:MAX_BOXES]:
        try:
            boxes.append(_box(value, width, height))
        except (_Malformed, TypeError, ValueError, OverflowError):
            continue
    return boxes


# --- writing text boxes -------------------------------------------------------------------


def add_text_boxes(slide: Any, boxes: list[dict[str, Any]], slide_width_px: int) -> int:
    """Add ``boxes`` (as ``pptx_measure.js`` measured them) to a python-pptx
    slide as text boxes; how many were added."""
    added = 0
    for box in boxes:
        if any(run.get("text") for paragraph in box["paragraphs"] for run in paragraph["runs"]):
            _add_box(slide, box, slide_width_px)
            added += 1
    return added


def _emu(value_px: float) -> int:
    return int(round(value_px * PX_EMU))


def _widened(box: dict[str, Any], slide_width_px: int) -> tuple[float, float]:
    """The box's left and width with a little room to spare: a font whose
    words are a hair wider in PowerPoint must not wrap a line Chromium kept
    whole. The room goes where the alignment leaves the text free to grow."""
    x, w = float(box["x"]), float(box["w"])
    spare = max(3.0, w * 0.01)
    alignment = box["paragraphs"][0]["align"] if box["paragraphs"] else "left"
    if alignment == "center":
        x -= spare / 2
    elif alignment == "right":
        x -= spare
    w += spare
    x = max(0.0, x)
    return x, min(w, slide_width_px - x) if slide_width_px > x else w


def _add_box(slide: Any, box: dict[str, Any], slide_width_px: int) -> None:
    from pptx.enum.text import MSO_ANCHOR, MSO_AUTO_SIZE

    x, w = _widened(box, slide_width_px)
    shape = slide.shapes.add_textbox(_emu(x), _emu(box["y"]), _emu(w), _emu(box["h"]))
    shape.name = f"{box.get('tag', 'text')} text"
    frame = shape.text_frame
    frame.word_wrap = True
    frame.auto_size = MSO_AUTO_SIZE.NONE
    frame.vertical_anchor = MSO_ANCHOR.TOP
    frame.margin_left = frame.margin_right = frame.margin_top = frame.margin_bottom = 0
    for i, paragraph in enumerate(box["paragraphs"]):
        _fill_paragraph(frame.paragraphs[0] if i == 0 else frame.add_paragraph(), paragraph)


_ALIGN = {"left": "LEFT", "center": "CENTER", "right": "RIGHT", "justify": "JUSTIFY"}


def _fill_paragraph(paragraph: Any, measured: dict[str, Any]) -> None:
    from pptx.enum.text import PP_ALIGN
    from pptx.util import Pt

    paragraph.alignment = getattr(PP_ALIGN, _ALIGN.get(measured["align"], "LEFT"))
    if measured.get("lineHeight"):
        paragraph.line_spacing = Pt(measured["lineHeight"] * PX_PT)
    if measured.get("spaceBefore"):
        paragraph.space_before = Pt(measured["spaceBefore"] * PX_PT)
    paragraph.level = min(8, int(measured.get("level") or 0))
    _bullet(paragraph, measured)
    for run in measured["runs"]:
        if run.get("br"):
            paragraph.add_line_break()
        else:
            _add_run(paragraph, run)


def _bullet(paragraph: Any, measured: dict[str, Any]) -> None:
    from pptx.oxml.ns import qn

    p_pr = paragraph._p.get_or_add_pPr()
    p_pr.set("marL", str(_emu(measured.get("marL") or 0)))
    p_pr.set("indent", str(_emu(measured.get("indent") or 0)))
    if measured.get("rtl"):
        p_pr.set("rtl", "1")
    bullet = measured.get("bullet")
    if not bullet:
        p_pr.append(p_pr.makeelement(qn("a:buNone"), {}))
        return
    colour = bullet.get("color")
    if colour:
        bu_clr = p_pr.makeelement(qn("a:buClr"), {})
        bu_clr.append(_srgb(bu_clr, colour))
        p_pr.append(bu_clr)
    if bullet.get("auto"):
        p_pr.append(p_pr.makeelement(qn("a:buAutoNum"),
                                     {"type": bullet["auto"], "startAt": str(int(bullet.get("start") or 1))}))
    else:
        p_pr.append(p_pr.makeelement(qn("a:buFont"), {"typeface": "Arial"}))
        p_pr.append(p_pr.makeelement(qn("a:buChar"), {"char": bullet.get("char") or "\u2022"}))


def _srgb(parent: Any, colour: dict[str, Any]) -> Any:
    from pptx.oxml.ns import qn

    element = parent.makeelement(qn("a:srgbClr"), {"val": str(colour["hex"]).upper()})
    alpha = float(colour.get("alpha", 1))
    if alpha < 1:
        element.append(element.makeelement(qn("a:alpha"), {"val": str(int(round(alpha * 100000)))}))
    return element


def _clean(text: str) -> str:
    """Text XML can hold: control characters other than tab dropped."""
    return "".join(ch for ch in text if ch == "\t" or ch >= " ")


def _add_run(paragraph: Any, measured: dict[str, Any]) -> None:
    from pptx.oxml.ns import qn
    from pptx.util import Pt

    run = paragraph.add_run()
    run.text = _clean(measured["text"])
    font = run.font
    font.name = measured["font"]
    font.size = Pt(round(measured["size"] * PX_PT * 2) / 2 or 1)
    font.bold = bool(measured["bold"])
    font.italic = bool(measured["italic"])
    font.underline = bool(measured["underline"])
    r_pr = run._r.get_or_add_rPr()
    if measured.get("strike"):
        r_pr.set("strike", "sngStrike")
    if measured.get("caps"):
        r_pr.set("cap", measured["caps"])
    if measured.get("shift"):
        r_pr.set("baseline", _SHIFTS[measured["shift"]])
    if measured.get("spacing"):
        r_pr.set("spc", str(int(round(measured["spacing"] * PX_PT * 100))))
    if measured.get("color"):
        fill = r_pr.makeelement(qn("a:solidFill"), {})
        fill.append(_srgb(fill, measured["color"]))
        r_pr.insert(0, fill)  # first child: it precedes a:latin in the schema's order
    latin = r_pr.find(qn("a:latin"))
    if latin is not None:  # the same family for East Asian and complex scripts
        latin.addnext(r_pr.makeelement(qn("a:cs"), {"typeface": measured["font"]}))
        latin.addnext(r_pr.makeelement(qn("a:ea"), {"typeface": measured["font"]}))
    link = str(measured.get("link") or "")
    if link.startswith(("https://", "http://", "mailto:")):  # not the export's own temporary file
        run.hyperlink.address = link
