"""Review pins on a drawing's elements (docs/viewer-contract.md, "Annotate";
docs/modes.md), in Debian's Chromium with the real Excalidraw, on one
`pneuma run --mode draw` (the seeded welcome.excalidraw) for the module:
the person turns the shell's Annotate switch on, clicks the "agent" box,
writes a comment; the pin's number sits on the box's top right corner and
stays there when the canvas is panned.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.module_run import module_page, module_run, pins_loaded, stored_pins

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "plugins" / "draw" / "pneuma_draw" / "static" / "vendor"
HOST = "window.pneuma.ui.host"
VIEWER = f"{HOST}.instance"
DRAWING = "welcome.excalidraw"

pytestmark = pytest.mark.skipif(not (VENDOR / "excalidraw.js").exists(),
                                reason="the Excalidraw bundle is not built (scripts/build-web)")  # fmt: skip


@pytest.fixture(scope="module")
def draw(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    with module_run(tmp_path_factory.mktemp("draw-annotate"), "draw") as server:
        with module_page(browser, server.url, viewport={"width": 1440, "height": 900}) as page:
            page.wait_for_function(f"() => {VIEWER} && {VIEWER}.api && {VIEWER}.synced", timeout=30_000)
            page.evaluate(f"() => {VIEWER}.ready")
            pins_loaded(page)
            yield server, page


def corner(page: Any, element_id: str) -> tuple[float, float]:
    """Page coordinates of the element's top right corner, as drawn now."""
    return tuple(page.evaluate(
        """(id) => { const v = window.pneuma.ui.host.instance; const s = v.api.getAppState();
                     const e = v.api.getSceneElements().find((x) => x.id === id);
                     return [(e.x + e.width + s.scrollX) * s.zoom.value + s.offsetLeft,
                             (e.y + s.scrollY) * s.zoom.value + s.offsetTop]; }""", element_id))  # fmt: skip


def centre_of(box: dict[str, float]) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_a_pin_on_an_element_follows_a_pan(draw: tuple[Any, Any]) -> None:
    server, page = draw
    assert page.evaluate(f"() => {HOST}.module.capabilities") == ["annotate", "follow"]
    page.locator(".annotate-toggle").click()
    x, y = corner(page, "agent")
    page.mouse.click(x - 30, y + 30)  # inside the "agent" box, off its label
    stored_pins(server, 1, commented=False)  # the new pin is stored with its place
    comment = page.locator(".pin-box textarea")
    comment.fill("Name the model")
    comment.press("Enter")
    marker = page.locator(".pneuma-draw-pin")
    expect(marker).to_have_text("1")
    mx, my = centre_of(marker.bounding_box())
    assert abs(mx - x) < 2 and abs(my - y) < 2

    # the person pans: the marker moves with the box
    canvas = page.locator(".pneuma-draw-canvas").bounding_box()
    page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2)
    scroll = f"() => [{VIEWER}.api.getAppState().scrollX, {VIEWER}.api.getAppState().scrollY]"
    before = page.evaluate(scroll)
    page.mouse.wheel(120, 90)
    page.wait_for_function(f"(before) => ({scroll})().some((v, i) => v !== before[i])", arg=before)
    x2, y2 = corner(page, "agent")
    assert (x2, y2) != (x, y)
    expect(marker).to_have_count(1)
    page.wait_for_function("([x, y]) => { const r = document.querySelector('.pneuma-draw-pin').getBoundingClientRect();"
                           " return Math.abs(r.x + r.width / 2 - x) < 2 && Math.abs(r.y + r.height / 2 - y) < 2; }",
                           arg=[x2, y2])  # fmt: skip

    # the pin as the shell stored it: the element, its JSON in the file as its place
    stored = stored_pins(server, 1)
    assert [p["comment"] for p in stored] == ["Name the model"]
    selection = stored[0]["selection"]
    assert selection["file"] == DRAWING and [e["id"] for e in selection["elements"]] == ["agent"]
    on_disk = json.loads((server.workspace / DRAWING).read_text(encoding="utf-8"))
    # the box and its label: a new label changes the place too
    assert json.loads(stored[0]["place"]) == [
        e for e in on_disk["elements"] if "agent" in (e["id"], e.get("containerId"))]

    image = page.evaluate(f"(s) => {VIEWER}.capturePin({{id: 'x', number: 1, selection: s}})", selection)
    raw = base64.b64decode(image.split(",", 1)[1])
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", raw[16:24])
    assert 240 <= width < 600 and 100 <= height < 300, (width, height)  # the box, not the drawing

    page.locator(".pin-remove").click()
    expect(marker).to_have_count(0)
    page.locator(".annotate-toggle").click()
    assert page.console_errors == []


def page_point(page: Any, x: float, y: float) -> tuple[float, float]:
    """Page coordinates of the scene point (x, y)."""
    return tuple(page.evaluate(
        """([x, y]) => { const s = window.pneuma.ui.host.instance.api.getAppState();
                         return [(x + s.scrollX) * s.zoom.value + s.offsetLeft,
                                 (y + s.scrollY) * s.zoom.value + s.offsetTop]; }""", [x, y]))  # fmt: skip


def test_a_pin_on_a_dragged_region_of_empty_canvas(draw: tuple[Any, Any]) -> None:
    server, page = draw
    page.locator(".annotate-toggle").click()
    # right of the tip text, below the viewer box: nothing is drawn there
    start, end = page_point(page, 860, 580), page_point(page, 1100, 700)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=4)
    page.mouse.move(*end, steps=4)
    page.mouse.up()
    stored_pins(server, 1, commented=False)  # the new pin is stored with its place
    comment = page.locator(".pin-box textarea")
    comment.fill("Put the export here")
    comment.press("Enter")
    marker = page.locator(".pneuma-draw-pin")
    expect(marker).to_have_text("1")
    mx, my = centre_of(marker.bounding_box())
    assert abs(mx - end[0]) < 2 and abs(my - start[1]) < 2  # the region's top right corner
    [pin] = stored_pins(server, 1)
    assert pin["selection"]["elements"] == [] and pin["place"] == ""
    assert pin["selection"]["region"] == {"x": 860, "y": 580, "width": 240, "height": 120}
    # the agent draws into the region: the pin's place changes
    path = server.workspace / DRAWING
    doc = json.loads(path.read_text(encoding="utf-8"))
    box = {**next(e for e in doc["elements"] if e["id"] == "viewer"), "id": "export", "x": 900, "y": 600,
           "height": 60, "boundElements": None, "seed": 7, "version": 1, "versionNonce": 7}  # fmt: skip
    doc["elements"].append(box)
    path.write_text(json.dumps(doc), encoding="utf-8")
    page.wait_for_function(f"(s) => {VIEWER}.pinPlace(s).includes('\"export\"')", arg=pin["selection"])
    page.locator(".pin-remove").click()
    expect(marker).to_have_count(0)
    page.locator(".annotate-toggle").click()
    # without the switch, the same drag is the selection chip of the region
    start, end = page_point(page, 1140, 580), page_point(page, 1300, 700)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=6)
    page.mouse.up()
    expect(page.locator(".ctx-row .ctx-chip")).to_contain_text("region 160×120")
    context = page.evaluate(f"() => {HOST}.module.extractContext({{file: '{DRAWING}', elements: [],"
                            " region: {x: 1140, y: 580, width: 160, height: 120}})")  # fmt: skip
    assert context.startswith(f'<viewer-context mode="draw" file="{DRAWING}" region="1140,580,160,120">')
    assert page.console_errors == []


def test_reveal_opens_the_drawing(draw: tuple[Any, Any]) -> None:
    server, page = draw
    (server.workspace / "second.excalidraw").write_text(
        json.dumps({"type": "excalidraw", "version": 2, "elements": []}), encoding="utf-8")
    page.wait_for_function(f"() => {VIEWER}.drawings.has('second.excalidraw')")
    assert page.evaluate(f"() => {VIEWER}.reveal('second.excalidraw')") is True
    assert page.evaluate(f"() => {VIEWER}.current") == "second.excalidraw"
    assert page.evaluate(f"() => {VIEWER}.reveal('nothing.excalidraw')") is False
    assert page.evaluate(f"() => {VIEWER}.reveal('{DRAWING}')") is True
    assert page.evaluate(f"() => {VIEWER}.current") == DRAWING
