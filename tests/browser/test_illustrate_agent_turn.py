"""The illustrate mode's "Done when" (issue 30): one turn of the REAL Claude
Code CLI, against the fake Anthropic Messages API, calls generate_image
against the fake images endpoint (tests/fakes/fake_images_api.py, real
PNGs); the images land in images/ with their records and board.json's new
row, and Debian's Chromium shows them, pixel for pixel. The person then
picks one in the page, and the agent's next request (as the fake API
received it) names the pick.

The pick comes first: the person picks a seed image and presses its Vary
button, and that message (naming the pick) is the one the scripted model
answers with the generate_image call, so two turns of the CLI (the mode's
greeting, then this one) hold everything.

The agent calls the tool over MCP, as the mode's skill installs it: the
workspace's .mcp.json starts `pneuma mcp --mode illustrate`, and the CLI
calls mcp__pneuma-illustrate__generate_image; the tool reads the endpoint
from PNEUMA_IMAGES_* in the environment `pneuma run` passed down.
Everything runs in the loopback-only network namespace of the root
conftest.
"""

from __future__ import annotations

import json
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_agent_viewer_actions import (
    TURN,
    ThreadedFakeAPI,
    fake_api,  # noqa: F401 (the fixture)
    start_with_real_cli,
)
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text, tool_use
from tests.fakes.fake_images_api import ThreadedFakeImagesAPI, colour_of
from tests.loopback import fail_unless_loopback_only

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)
REQUEST = {"prompt": "A red lighthouse in thick fog, flat vector illustration", "row": "fog",
           "title": "Foggy lighthouse", "n": 2, "size": "1024x1024"}


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the illustrate agent turn test", "tests/browser/test_illustrate_agent_turn.py")


@pytest.fixture
def images_api() -> Iterator[ThreadedFakeImagesAPI]:
    api = ThreadedFakeImagesAPI()
    yield api
    api.close()


def with_env(start: Callable[..., Any], extra: dict[str, str]) -> Callable[..., Any]:
    """`pneuma_server` with ``extra`` added to the environment of `pneuma run`."""
    def start_with(mode: str, **kwargs: Any) -> Any:
        return start(mode, **{**kwargs, "env": {**kwargs.get("env", {}), **extra}})
    return start_with


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def bottom_colour(data: bytes) -> list[int]:
    """The RGB of the first pixel of the bottom row of the fake's PNG (8-bit
    RGB, one IDAT chunk, every row unfiltered: tests/fakes/fake_images_api.py)."""
    width, height = png_size(data)
    start = data.index(b"IDAT") + 4
    length = struct.unpack(">I", data[start - 8:start - 4])[0]
    raw = zlib.decompress(data[start:start + length])
    row = raw[(height - 1) * (1 + 3 * width):]
    assert row[0] == 0, "a filtered row"
    return list(row[1:4])


def last_user_text(fake_api: ThreadedFakeAPI) -> str:
    """The text of the newest user message that has text (not only tool
    results) in the newest request the fake API got."""
    requests = fake_api._on_loop(fake_api.api.conversation_requests)
    texts = [m["content"] if isinstance(m["content"], str) else "\n".join(
        b.get("text", "") for b in m["content"] if isinstance(b, dict) and b.get("type") == "text")
        for m in requests[-1]["messages"] if m["role"] == "user"]
    return [t for t in texts if t.strip()][-1]


def test_a_turn_generates_images_that_the_page_shows_and_a_pick_reaches_the_agent(
        pneuma_server: Any, fake_api: ThreadedFakeAPI, images_api: ThreadedFakeImagesAPI,
        open_page: Any, shot: Any) -> None:  # fmt: skip
    fake_api.push(text("Hi! A board of example images is open."))
    env = {"PNEUMA_IMAGES_BASE_URL": images_api.base_url, "PNEUMA_IMAGES_MODEL": "fake-image-1"}
    server = start_with_real_cli(with_env(pneuma_server, env), fake_api, "illustrate")
    page = open_page(server, viewport={"width": 1400, "height": 900})
    page.wait_for_selector(".il-card[data-image-id='lighthouse-1']", timeout=15_000)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    expect(page.locator(".il-provider")).to_have_count(0)  # a provider is set: no notice

    # the person picks a seed image and asks for variants of it with its Vary button
    picked = "lighthouse-1"
    page.locator(f".il-card[data-image-id='{picked}'] .il-pick").click()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        choices = json.loads((server.workspace / "choices.json").read_text(encoding="utf-8"))
        if choices.get(picked, {}).get("status") == "picked":
            break
        time.sleep(0.05)
    assert choices[picked] == {"status": "picked", "starred": False, "comment": ""}
    fake_api.push(text("Making two foggy lighthouses."),
                  tool_use("mcp__pneuma-illustrate__generate_image", REQUEST))
    fake_api.push(text("Two foggy lighthouses are in the new row."))
    page.locator(f".il-card[data-image-id='{picked}'] .il-thumb").click()
    page.locator(f".il-detail[data-image-id='{picked}'] .il-vary").click()
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_api.pending() == 0
    # the message the Vary button sent names the pick and the selection
    told = last_user_text(fake_api)
    assert f"- picked {picked}" in told and f'Vary image {picked} in row "lighthouse"' in told, told
    assert f'image="{picked}" row="lighthouse"' in told, told
    # the MCP tool answered the CLI with the new row's images
    results = fake_api._on_loop(fake_api.api.tool_results)
    assert any("images/fog-" in json.dumps(r.get("content")) for r in results), results

    # the endpoint was asked once, for two images of that prompt
    asked = images_api.requests()
    assert [(a["prompt"], a["model"]) for a in asked] == [(REQUEST["prompt"], "fake-image-1")] * 2
    # on disk: the row, the two images (real PNGs) and their records
    board = json.loads((server.workspace / "board.json").read_text(encoding="utf-8"))
    row = next(r for r in board["rows"] if r["id"] == "fog")
    assert len(row["images"]) == 2 and row["title"] == "Foggy lighthouse"
    for image in row["images"]:
        assert png_size((server.workspace / "images" / f"{image}.png").read_bytes()) == (64, 64)
        record = json.loads((server.workspace / "images" / f"{image}.json").read_text(encoding="utf-8"))
        assert (record["prompt"], record["row"], record["model"]) == (REQUEST["prompt"], "fog", "fake-image-1")

    # in the page: the new row, each image drawn with the colour the endpoint gave it
    cards = page.locator(".il-row[data-row-id='fog'] .il-card")
    expect(cards).to_have_count(2)
    colours = page.evaluate("""() => Promise.all([...document.querySelectorAll(
        ".il-row[data-row-id='fog'] .il-card img")].map(async (img) => {
          await img.decode();
          const canvas = document.createElement('canvas');
          canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
          const g = canvas.getContext('2d');
          g.drawImage(img, 0, 0);
          return [...g.getImageData(img.naturalWidth / 2, img.naturalHeight - 2, 1, 1).data.slice(0, 3)];
        }))""")
    on_disk = [bottom_colour((server.workspace / "images" / f"{image}.png").read_bytes()) for image in row["images"]]
    assert colours == on_disk and sorted(map(tuple, colours)) == sorted([colour_of(1, 0), colour_of(2, 0)]), colours
    shot(page, "illustrate-turn-generated")

    # Compare draws the generating turn's two sides with this viewer, read-only
    page.locator('.turn-changes[data-ref="1"] .compare-btn').click()
    expect(page.locator(".compare-panel")).to_have_attribute("data-ready", "true", timeout=TURN)
    before, after = '.compare-side[data-side="before"]', '.compare-side[data-side="after"]'
    expect(page.locator(f"{before} .il-card")).to_have_count(5)
    expect(page.locator(f"{after} .il-row[data-row-id='fog'] .il-card")).to_have_count(2)
    page.wait_for_function("""(scope) => [...document.querySelectorAll(scope + " .il-row[data-row-id='fog'] img")]
        .every((img) => img.complete && img.naturalWidth === 64)""", arg=after)
    expect(page.locator(".compare-panel .il-marks, .compare-panel .il-ask")).to_have_count(0)
    shot(page, "illustrate-compare")
