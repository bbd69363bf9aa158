"""The standalone document open in headless Chromium: measure each sheet's
overflow, print it, take a picture of each sheet, in one browser.

The export and the after-turn check both come here, so the page that is
printed is the page that is measured (render.py says the rule). The page
is a file of ours in a temporary folder; its frames run no scripts and it
fetches nothing (everything is inlined).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma.api import CHROMIUM_ARGS, CJK_FONT_FAMILY, find_chromium, within
from pneuma_print.paper import PX_PER_INCH, px_to_mm
from pneuma_print.render import MEASURE_SCRIPT, OVERFLOW_TOLERANCE_PX

# Waits for each sheet's fonts and images (the frames are same-origin: srcdoc).
# The CJK slices its text needs are asked for first, as the viewer does
# (print-doc.js): a unicode-range face is fetched only once layout wants it,
# and fonts.ready can resolve before that, leaving Chinese as empty boxes.
# The export and the fit check both settle here, so they measure alike.
SETTLE_SCRIPT = """async () => {
  const docs = [document, ...Array.from(document.querySelectorAll('iframe'))
    .map((f) => f.contentDocument).filter(Boolean)];
  await Promise.all(docs.map((d) => d.fonts && d.body && /[\\u2e80-\\uffff]/.test(d.body.textContent)
    ? d.fonts.load(__CJK_FACE__, d.body.textContent).catch(() => null) : null));
  await Promise.all(docs.map((d) => d.fonts ? d.fonts.ready : null));
  const pending = docs.flatMap((d) => Array.from(d.images)).filter((i) => !i.complete);
  await Promise.all(pending.map((i) => new Promise((r) => { i.onload = i.onerror = r; })));
}""".replace("__CJK_FACE__", json.dumps(f'16px "{CJK_FONT_FAMILY}"'))


SHOW_ONE_SCRIPT = """(index) => {
  document.body.className = 'pneuma-single';
  document.querySelectorAll('.pneuma-sheet').forEach((sheet, i) => {
    sheet.style.display = i === index ? '' : 'none';
  });
}"""


class SheetsTimeout(Exception):
    """The document did not load, settle or print within its time."""


@dataclass(frozen=True)
class SheetFit:
    """One sheet's overflow past its content box, in millimetres."""

    page: int
    file: str
    measured: bool
    overflow_x_mm: float = 0.0
    overflow_y_mm: float = 0.0

    @property
    def overflows(self) -> bool:
        tolerance = px_to_mm(OVERFLOW_TOLERANCE_PX)
        return self.overflow_x_mm > tolerance or self.overflow_y_mm > tolerance

    def describe(self) -> str:
        """``"by 12.4 mm at the bottom and 3.0 mm at the right"``."""
        sides = []
        if self.overflow_y_mm > px_to_mm(OVERFLOW_TOLERANCE_PX):
            sides.append(f"{self.overflow_y_mm:.1f} mm at the bottom")
        if self.overflow_x_mm > px_to_mm(OVERFLOW_TOLERANCE_PX):
            sides.append(f"{self.overflow_x_mm:.1f} mm at the right")
        return "by " + " and ".join(sides)


def mm_to_px(mm: float) -> float:
    return mm * PX_PER_INCH / 25.4


@contextlib.asynccontextmanager
async def browser() -> AsyncIterator[Any]:
    """A headless Chromium (Playwright) with the host's flags."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@contextlib.asynccontextmanager
async def opened(chromium: Any, html_text: str, seconds: float, *, scale: float = 1.0) -> AsyncIterator[Any]:
    """A page showing ``html_text``, fonts and images in; ``SheetsTimeout``
    when that takes longer than ``seconds``."""
    with tempfile.TemporaryDirectory(prefix="pneuma-print-") as folder:
        file = Path(folder) / "document.html"
        file.write_text(html_text, encoding="utf-8")
        page = await chromium.new_page(device_scale_factor=scale)

        async def load() -> None:
            await page.goto(file.as_uri(), wait_until="load", timeout=0)
            await page.evaluate(SETTLE_SCRIPT)

        if not await within(page, seconds, load):
            raise SheetsTimeout(f"the document did not load within {seconds:g} s")
        try:
            yield page
        finally:
            with contextlib.suppress(Exception):
                await page.close()


async def measure(page: Any) -> list[SheetFit]:
    fits = []
    for sheet in await page.evaluate(MEASURE_SCRIPT):
        fits.append(SheetFit(int(sheet["page"]), str(sheet.get("file") or ""), bool(sheet.get("measured")),
                             round(px_to_mm(float(sheet.get("overflowX") or 0)), 1),
                             round(px_to_mm(float(sheet.get("overflowY") or 0)), 1)))
    return fits


async def bounded(page: Any, seconds: float, work: Callable[[], Awaitable[None]], what: str) -> None:
    if not await within(page, seconds, work):
        raise SheetsTimeout(f"{what} did not finish within {seconds:g} s")


async def print_pdf(page: Any, output: Path, seconds: float) -> None:
    """The page printed at its ``@page`` size, backgrounds on."""
    async def work() -> None:
        await page.emulate_media(media="print")
        await page.pdf(path=str(output), print_background=True, prefer_css_page_size=True)

    await bounded(page, seconds, work, "printing the PDF")


async def sheet_pictures(page: Any, outputs: list[Path], seconds: float) -> None:
    """Each sheet's picture (at the page's device scale) into ``outputs``, in order."""
    async def work() -> None:
        sheets = page.locator(".pneuma-sheet")
        for index, output in enumerate(outputs):
            # One sheet at a time at the top left: every picture is then the
            # same size (sheets lower down sit at fractional pixels).
            await page.evaluate(SHOW_ONE_SCRIPT, index)
            await sheets.nth(index).screenshot(path=str(output), animations="disabled", timeout=0)

    await bounded(page, seconds, work, "the pictures of the pages")
