"""A dashboard shared as one file (docs/sharing.md, "Share as one file";
docs/dashboard.md, "Viewer"): opened from file:// with the network off, the
page draws the board of each turn with the dashboard's own viewer, read-only,
its charts drawn by the vega bundle the file holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pneuma.share import inline
from pneuma.share.model import ShareData, SharedTurn
from tests.browser.test_dashboard_viewer import VENDOR
from tests.browser.test_share_file import open_offline

SEEDS = Path(__file__).resolve().parents[2] / "plugins" / "dashboard" / "pneuma_dashboard" / "seeds"

pytestmark = pytest.mark.skipif(not VENDOR.exists(), reason="the vega bundle is not built (scripts/build-web)")


def test_a_shared_board_draws_each_turn_offline(browser: Any, tmp_path: Path) -> None:
    board = (SEEDS / "dashboard.json").read_text(encoding="utf-8")
    sales = (SEEDS / "data" / "sales.csv").read_text(encoding="utf-8")
    data = ShareData(mode="dashboard", title="Sales", created_at=1)
    first = {"dashboard.json": data.add_content(board.encode()), "data/sales.csv": data.add_content(sales.encode())}
    second = {**first, "data/sales.csv": data.add_content((sales + "2026-12-01,West,Gift card,40,2000.00\n").encode())}
    data.turns = [SharedTurn("1", "make a board", 10, first), SharedTurn("2", "add gift cards", 20, second)]
    path = tmp_path / "board-share.html"
    path.write_text(inline.page("dashboard", data), encoding="utf-8")
    context, page = open_offline(browser, path)
    try:
        bars = page.locator(".share-stage [data-tile='revenue-by-product'][data-state=rendered] .mark-rect path")
        bars.first.wait_for(timeout=20_000)
        assert bars.count() == 4  # the last turn: gift cards drawn
        assert page.locator(".share-stage .db-resize").count() == 0  # read-only: no handles
        assert page.locator(".share-stage [data-tile='latest-rows'] tbody tr").count() == 100
        assert set(page.asked) == {page.url}
        assert page.errors == []
    finally:
        context.close()
