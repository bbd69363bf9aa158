"""A print document shared as one file (docs/sharing.md, "Share as one
file"; docs/print.md, "The viewer"): opened from file:// with the network
off, the page draws each turn's sheets with the print mode's own viewer,
read-only, and asks for nothing but the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pneuma.share import inline
from pneuma.share.model import ShareData, SharedTurn
from tests.browser.test_share_file import open_offline

SEEDS = Path(__file__).resolve().parents[2] / "plugins" / "print" / "pneuma_print" / "seeds"


def test_a_shared_document_draws_each_turn_s_pages_offline(browser: Any, tmp_path: Path) -> None:
    data = ShareData(mode="print", title="Report", created_at=1)
    document = (SEEDS / "print.json").read_text(encoding="utf-8")
    document = document.replace("{{paper}}", "A5").replace("{{orientation}}", "portrait")
    files = {"print.json": document, "style.css": (SEEDS / "style.css").read_text(encoding="utf-8")}
    for page in sorted((SEEDS / "pages").glob("*.html")):
        files[f"pages/{page.name}"] = page.read_text(encoding="utf-8")
    first = {path: data.add_content(text.encode()) for path, text in files.items()}
    changed = files["pages/02-the-year.html"].replace("The year in numbers", "A record harvest")
    second = {**first, "pages/02-the-year.html": data.add_content(changed.encode())}
    data.turns = [SharedTurn("1", "make a report", 10, first), SharedTurn("2", "retitle page 2", 20, second)]
    path = tmp_path / "print-share.html"
    path.write_text(inline.page("print", data), encoding="utf-8")
    context, page = open_offline(browser, path)
    try:
        heading = page.frame_locator(".share-stage .pnp-sheet[data-page='2'] iframe").locator("h1")
        heading.wait_for(timeout=20_000)
        assert heading.inner_text() == "A record harvest"  # the last turn
        box = page.locator(".share-stage .pnp-sheet[data-page='2'] .pnp-paper").bounding_box()
        assert abs(box["height"] / box["width"] - 210 / 148) < 0.01  # A5
        assert page.locator(".share-stage .pnp-root.is-readonly").count() == 1
        assert set(page.asked) == {page.url}
        assert page.errors == []
    finally:
        context.close()
