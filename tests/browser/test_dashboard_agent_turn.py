"""One dashboard turn of the REAL Claude Code CLI against the fake Anthropic
API (tests/fakes/anthropic_api.py), the shell open in Debian's Chromium
(issue 30, "Done when": each mode's turn edits the artifact and the page
shows it; docs/dashboard.md).

The person clicks a bar (the datum goes with their message) after moving the
table a row down (their edit goes with it too); the scripted model renames that chart in
dashboard.json, adds a row with a new product to data/sales.csv with two
Bash calls, and asks the viewer for the tile with the curl CLAUDE.md
teaches. The page then shows the new title and a fourth bar; the agent read
the viewer's answer naming it.

Everything runs in the loopback-only network namespace of the root conftest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_agent_viewer_actions import (
    ThreadedFakeAPI,
    agent_turn,
    answer_read_by_agent,
    bash,
    fake_api,  # noqa: F401 (the fixture)
    start_with_real_cli,
    taught_curl,
)
from tests.browser.test_dashboard_viewer import DRAWN, TILE, VENDOR, on_disk
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text
from tests.loopback import fail_unless_loopback_only

pytestmark = [
    pytest.mark.skipif(CLAUDE_BIN is None, reason="the real Claude Code CLI is not installed"),
    pytest.mark.skipif(not VENDOR.exists(), reason="the vega bundle is not built (scripts/build-web)"),
]
RETITLE = ("python3 -c \"p='dashboard.json'; s=open(p).read(); "
           "open(p, 'w').write(s.replace('Revenue by product', 'Revenue per product'))\"")
ADD_ROW = "printf '2026-12-01,West,Gift card,40,2000.00\\n' >> data/sales.csv"
BARS = TILE.format("revenue-by-product") + " .mark-rect path"


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the dashboard agent turn", "tests/browser/test_dashboard_agent_turn.py")


def user_texts(fake_api: ThreadedFakeAPI) -> list[str]:
    """Every text the CLI sent the model as the person's, newest last."""
    texts = []
    for request in fake_api._on_loop(fake_api.api.conversation_requests):
        for message in request["messages"]:
            content = message["content"]
            if message["role"] == "user" and isinstance(content, list):
                texts.extend(b.get("text", "") for b in content if b.get("type") == "text")
            elif message["role"] == "user":
                texts.append(content)
    return texts


def test_the_agent_changes_the_chart_the_person_pointed_at_and_the_page_shows_it(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:
    fake_api.push(text("Hi! This is an example sales board. What do you want to see?"))
    server = start_with_real_cli(pneuma_server, fake_api, "dashboard")
    page = open_page(server, viewport={"width": 1400, "height": 900})
    page.wait_for_selector(DRAWN.format("revenue-by-product") + " svg .mark-rect path", timeout=20_000)
    expect(page.locator(".result-line")).to_have_count(1, timeout=60_000)  # the greeting turn
    expect(page.locator(BARS)).to_have_count(3)

    # The person moves the table one row down (a layout edit of their own) and points at a bar.
    board = server.workspace / "dashboard.json"
    seeded = board.read_text(encoding="utf-8")
    bar = page.locator(TILE.format("latest-rows") + " .db-tile-bar").bounding_box()
    page.mouse.move(bar["x"] + 30, bar["y"] + 10)
    page.mouse.down()
    page.mouse.move(bar["x"] + 30, bar["y"] + 10 + 45, steps=4)
    page.mouse.move(bar["x"] + 30, bar["y"] + 10 + 95, steps=4)
    page.mouse.up()
    on_disk(board, lambda t: t != seeded)
    page.locator(BARS).first.click()
    picked = page.evaluate("() => window.pneuma.ui.host.instance.viewer.selected")["fields"]["product"]

    show = bash(taught_curl(server.workspace, "get-tile", {"tile": "revenue-by-product"}), "Read the chart back")
    fake_api.push(text("Renaming the chart and adding the gift cards."), bash(RETITLE, "Rename the chart"))
    fake_api.push(bash(ADD_ROW, "Add the gift card sales"))
    fake_api.push(show)
    fake_api.push(text("The chart is now “Revenue per product”, with gift cards as a fourth bar."))
    agent_turn(page, fake_api, "Call it revenue per product and add our gift cards", turns=2)

    # What the agent was told: the bar's datum and the person's own edit.
    sent = "\n".join(user_texts(fake_api))
    assert 'mode="dashboard" file="data/sales.csv" tile="revenue-by-product" kind="datum"' in sent
    assert f'"product":"{picked}"' in sent and '"sum_revenue":' in sent
    assert "dashboard.json" in sent.split("<person-edited", 1)[1].split(">", 1)[0]

    # What the person sees: the new title and a fourth bar, drawn from the changed files.
    expect(page.locator(TILE.format("revenue-by-product") + " .db-tile-title")).to_have_text("Revenue per product")
    expect(page.locator(BARS)).to_have_count(4)
    expect(page.get_by_text("with gift cards as a fourth bar")).to_be_visible()
    shot(page, "dashboard-agent-turn")

    # What the agent read back from the viewer: the tile as drawn, gift cards in it.
    answer = answer_read_by_agent(fake_api, show)["data"]
    assert answer["title"] == "Revenue per product" and answer["rows"] == 289
    assert "Gift card" in [v["product"] for v in answer["values"]]
    assert json.loads(Path(board).read_text(encoding="utf-8"))["tiles"][5]["y"] == 7
    assert page.console_errors == []
