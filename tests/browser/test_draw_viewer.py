"""The draw mode's viewer: the real Excalidraw editor inside Pneuma's shell, in Chromium.

Each test starts `pneuma run --mode draw` on a freshly seeded workspace
(welcome.excalidraw) through tests/browser/conftest.py and opens the real
page. What the person sees is read from the page (Excalidraw's scene API,
pixels, the DOM); what reached the disk is read from the workspace; viewer
actions are requested over HTTP exactly as the agent requests them; what the
agent received is read back from the fake CLI's log. Screenshots land in
$PNEUMA_SCREENSHOTS (see conftest): look at them.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import send_and_read, viewer_action, viewer_answer

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "plugins" / "draw" / "pneuma_draw" / "static" / "vendor"
SEED = REPO / "plugins" / "draw" / "pneuma_draw" / "seeds" / "welcome.excalidraw"
TURN = 15_000  # ms a fake CLI turn may take in the page
VIEWER = "window.pneuma.ui.host.instance"

pytestmark = pytest.mark.skipif(
    not (VENDOR / "excalidraw.js").exists(),
    reason="the Excalidraw bundle is not built (scripts/build-web)",
)


@dataclass
class Draw:
    """The server, the page showing it, and what the page did."""

    server: Any
    page: Any
    shot: Any
    requests: list[str] = field(default_factory=list)
    writes: list[dict[str, Any]] = field(default_factory=list)  # POST /api/files bodies (path, size)
    updates: list[dict[str, Any]] = field(default_factory=list)  # content_update entries received
    prompt_answer: str | None = None  # what the person types into a prompt (None: cancel)

    @property
    def workspace(self) -> Path:
        return Path(self.server.workspace)

    def on_request(self, request: Any) -> None:
        self.requests.append(request.url)
        if request.method == "POST" and request.url.endswith("/api/files"):
            body = json.loads(request.post_data or "{}")
            self.writes.append({"path": body.get("path"), "size": len(body.get("content") or "")})

    def on_websocket(self, ws: Any) -> None:
        def received(payload: Any) -> None:
            for line in str(payload).split("\n"):
                if '"content_update"' not in line:
                    continue
                message = json.loads(line)
                if message.get("type") == "content_update":
                    self.updates.extend(message["files"])

        ws.on("framereceived", received)

    def on_dialog(self, dialog: Any) -> None:
        if self.prompt_answer is None:
            dialog.dismiss()
        else:
            dialog.accept(self.prompt_answer)

    def action(self, action_id: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The answer to a viewer action (a refusal's error body too)."""
        return viewer_action(self.server, action_id, params, wait=20, timeout=30)[1]

    def js(self, expression: str, arg: Any = None) -> Any:
        return self.page.evaluate(expression.replace("VIEWER", VIEWER), arg)

    def wait(self, expression: str, timeout: float = 15_000) -> None:
        self.page.wait_for_function(expression.replace("VIEWER", VIEWER), timeout=timeout)

    def scene(self) -> dict[str, dict[str, Any]]:
        """The live Excalidraw scene (non-deleted elements) by id."""
        return {
            e["id"]: e
            for e in self.js(
                """() => VIEWER.api.getSceneElements().map(e => ({
                    id: e.id, type: e.type, x: e.x, y: e.y, width: e.width, height: e.height,
                    text: e.text ?? null, containerId: e.containerId ?? null}))"""
            )
        }

    def view(self) -> dict[str, float]:
        return self.js(
            """() => { const s = VIEWER.api.getAppState();
                       return {scrollX: s.scrollX, scrollY: s.scrollY, zoom: s.zoom.value, width: s.width,
                               height: s.height, offsetLeft: s.offsetLeft, offsetTop: s.offsetTop}; }"""
        )

    def stats(self) -> dict[str, int]:
        return self.js("() => ({...VIEWER.stats})")

    def active_file(self) -> str | None:
        return self.js("() => window.pneuma.ui.activeFile")

    def on_screen(self, element_id: str, fx: float = 0.5, fy: float = 0.5) -> tuple[float, float]:
        """Page coordinates of a point inside an element (fractions of its box)."""
        e = self.scene()[element_id]
        v = self.view()
        x = (e["x"] + e["width"] * fx + v["scrollX"]) * v["zoom"] + v["offsetLeft"]
        y = (e["y"] + e["height"] * fy + v["scrollY"]) * v["zoom"] + v["offsetTop"]
        return x, y

    def settle(self) -> None:
        """Wait until the canvas shows a file and no save is pending."""
        self.wait("() => VIEWER && VIEWER.api && !VIEWER.saveTimer && VIEWER.synced && VIEWER.synced.hash")
        self.js("() => VIEWER.saving")

    def read(self, rel: str = "welcome.excalidraw") -> dict[str, Any]:
        return json.loads((self.workspace / rel).read_text())

    def write(self, rel: str, doc: dict[str, Any] | str) -> None:
        """Change a file on disk the way an agent does (atomically)."""
        target = self.workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
        os.replace(tmp, target)

    def assert_local_and_clean(self) -> None:
        """Nothing was requested from outside this server, and no errors were logged."""
        base = f"{self.server.base}/"
        outside = [u for u in self.requests if not u.startswith((base, "data:", "blob:"))]
        assert outside == []
        errors = [e for e in self.page.console_errors if "favicon" not in e]
        assert errors == []


@pytest.fixture
def open_draw(pneuma_server: Any, open_page: Any, shot: Any) -> Any:
    def open_(claude_bin: Any = None) -> Draw:
        if claude_bin is None:
            server = pneuma_server("draw", backend="none")
        else:
            server = pneuma_server("draw", claude_bin=claude_bin)
        d = Draw(server=server, page=None, shot=shot)

        def before_goto(page: Any) -> None:
            page.on("request", d.on_request)
            page.on("websocket", d.on_websocket)
            page.on("dialog", d.on_dialog)

        d.page = open_page(server, before_goto=before_goto)
        d.page.set_default_timeout(15_000)
        d.settle()
        return d

    return open_


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def inked_fraction(draw: Draw, png: bytes) -> float:
    """Share of the image's pixels that are not (near) white, measured in the page."""
    return draw.js(
        """async (b64) => {
            const img = new Image();
            img.src = 'data:image/png;base64,' + b64;
            await img.decode();
            const c = document.createElement('canvas');
            c.width = img.naturalWidth; c.height = img.naturalHeight;
            const g = c.getContext('2d');
            g.drawImage(img, 0, 0);
            const d = g.getImageData(0, 0, c.width, c.height).data;
            let inked = 0;
            for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) inked++;
            return inked / (d.length / 4);
        }""",
        base64.b64encode(png).decode(),
    )


def drag(draw: Draw, element_id: str, dx: float, dy: float) -> None:
    x, y = draw.on_screen(element_id)
    draw.page.mouse.move(x, y)
    draw.page.mouse.down()
    for step in range(1, 11):
        draw.page.mouse.move(x + dx * step / 10, y + dy * step / 10)
    draw.page.mouse.up()


# --- showing the drawing, and the agent's edits --------------------------------------


def test_canvas_shows_the_seed_drawing_and_edits_made_on_disk(open_draw: Any) -> None:
    draw = open_draw()
    seed = json.loads(SEED.read_text())
    scene = draw.scene()
    assert set(scene) == {e["id"] for e in seed["elements"]}
    assert scene["agent-label"]["text"] == "Agent\n(Claude Code)"
    assert scene["agent-label"]["containerId"] == "agent"
    assert draw.active_file() == "welcome.excalidraw"

    # Pixels: the canvas in the viewer panel really has the drawing on it.
    panel = draw.page.locator(".pneuma-draw")
    assert inked_fraction(draw, panel.screenshot()) > 0.02
    # The hand-drawn font came from this server and is in use.
    draw.wait("() => [...document.fonts].some(f => f.family.replace(/\"/g, '') === 'Virgil' && f.status === 'loaded')")
    assert any(u.startswith(f"{draw.server.base}/modes/draw/vendor/fonts/Virgil/") for u in draw.requests)
    # With one drawing the file name is shown; the picker comes with a second.
    expect(draw.page.locator(".pneuma-draw-files .pneuma-draw-name")).to_have_text("welcome.excalidraw")
    # The whole drawing is in view when it opens.
    v = draw.view()
    for e in scene.values():
        left = (e["x"] + v["scrollX"]) * v["zoom"]
        right = (e["x"] + e["width"] + v["scrollX"]) * v["zoom"]
        assert -1 <= left and right <= v["width"] + 1, e["id"]
    draw.shot(draw.page, "draw-seed")

    # The agent edits the file: a label changes, a shape is added.
    before = draw.view()
    doc = draw.read()
    for e in doc["elements"]:
        if e["id"] == "agent-label":
            e["text"] = e["originalText"] = "Agent\n(edited on disk)"
            e["version"] += 1
    doc["elements"].append({
        "id": "disk-note", "type": "rectangle", "x": 880, "y": 700, "width": 240, "height": 60,
        "angle": 0, "strokeColor": "#1e1e1e", "backgroundColor": "#ffec99", "fillStyle": "solid",
        "strokeWidth": 2, "strokeStyle": "solid", "roughness": 1, "opacity": 100, "groupIds": [],
        "frameId": None, "roundness": {"type": 3}, "seed": 7, "version": 1, "versionNonce": 11,
        "isDeleted": False, "boundElements": None, "updated": 1735725600000, "link": None, "locked": False,
    })  # fmt: skip
    written_at = time.monotonic()
    draw.write("welcome.excalidraw", doc)
    draw.wait(
        """() => { const els = VIEWER.api.getSceneElements();
                   return els.some(e => e.id === 'disk-note')
                       && els.find(e => e.id === 'agent-label').text.includes('edited on disk'); }"""
    )
    took = time.monotonic() - written_at
    assert took < 2.0, f"the canvas took {took:.2f} s to show the change"
    # In place: the same viewport, no reload, and nothing written back.
    assert draw.view() == before
    time.sleep(1.5)
    assert draw.stats() == {"loads": 1, "externalApplied": 1, "saves": 0}
    assert draw.writes == []
    assert draw.read() == doc
    draw.shot(draw.page, "draw-external-edit")

    # A half-written file does not blank the canvas; the next good write shows.
    good = (draw.workspace / "welcome.excalidraw").read_text()
    draw.write("welcome.excalidraw", good[: len(good) // 2])
    notice = draw.page.locator(".pneuma-draw-notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("not a valid drawing")
    assert "disk-note" in draw.scene()
    draw.shot(draw.page, "draw-invalid-file")
    doc["elements"] = [e for e in doc["elements"] if e["id"] != "disk-note"]
    draw.write("welcome.excalidraw", doc)
    expect(notice).to_be_hidden()
    draw.wait("() => !VIEWER.api.getSceneElements().some(e => e.id === 'disk-note')")
    assert draw.writes == []
    draw.assert_local_and_clean()


# --- the person's edits -----------------------------------------------------------------


def test_edits_in_the_canvas_are_saved_once_without_a_loop(open_draw: Any) -> None:
    draw = open_draw()
    before = {e["id"]: e for e in draw.read()["elements"]}
    zoom = draw.view()["zoom"]
    drag(draw, "done", -60, 40)
    draw.wait("() => !VIEWER.saveTimer && VIEWER.stats.saves === 1", timeout=5000)
    draw.settle()
    time.sleep(2.0)  # long enough for an echo loop to show itself
    assert draw.writes == [{"path": "welcome.excalidraw", "size": draw.writes[0]["size"]}], "one drag, one write"
    assert draw.stats() == {"loads": 1, "externalApplied": 0, "saves": 1}
    # Its echo came back marked as ours, and was not applied.
    assert [(u["path"], u["origin"]) for u in draw.updates] == [("welcome.excalidraw", "self")]

    doc = draw.read()
    after = {e["id"]: e for e in doc["elements"]}
    assert after["done"]["x"] == pytest.approx(before["done"]["x"] - 60 / zoom, abs=2)
    assert after["done"]["y"] == pytest.approx(before["done"]["y"] + 40 / zoom, abs=2)
    assert after["done"]["version"] > before["done"]["version"]
    assert after["done-label"]["x"] == pytest.approx(before["done-label"]["x"] - 60 / zoom, abs=2)
    # Everything else is still there; the file keeps its header and settings.
    assert set(after) == set(before)
    assert (after["agent"]["x"], after["agent"]["y"], after["agent"]["version"]) == (
        before["agent"]["x"], before["agent"]["y"], before["agent"]["version"])
    assert doc["type"] == "excalidraw" and doc["source"] == "pneuma-draw"
    assert doc["appState"]["gridSize"] == 20 and doc["appState"]["viewBackgroundColor"] == "#ffffff"
    draw.page.keyboard.press("Escape")
    draw.shot(draw.page, "draw-after-drag")

    # The person starts a drawing of their own and sketches in it.
    draw.prompt_answer = "sketches/idea"
    draw.page.get_by_role("button", name="New drawing").click()
    draw.wait("() => window.pneuma.ui.activeFile === 'sketches/idea.excalidraw' && VIEWER.api && VIEWER.synced.hash")
    new = draw.read("sketches/idea.excalidraw")
    assert new["type"] == "excalidraw" and new["elements"] == [] and new["appState"]["gridSize"] == 20
    assert draw.scene() == {}
    draw.prompt_answer = None
    box = draw.page.locator(".pneuma-draw").bounding_box()
    x, y = box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.35
    draw.page.keyboard.press("r")
    draw.page.mouse.move(x, y)
    draw.page.mouse.down()
    draw.page.mouse.move(x + 100, y + 60, steps=5)
    draw.page.mouse.move(x + 200, y + 120, steps=5)
    draw.page.mouse.up()
    draw.wait("() => VIEWER.stats.saves === 2 && !VIEWER.saveTimer", timeout=5000)
    draw.settle()
    [rect] = draw.read("sketches/idea.excalidraw")["elements"]
    assert rect["type"] == "rectangle"
    assert rect["width"] == pytest.approx(200 / draw.view()["zoom"], abs=2)
    picker = draw.page.locator("select[data-testid=pneuma-draw-file-picker]")
    expect(picker).to_have_value("sketches/idea.excalidraw")
    draw.shot(draw.page, "draw-new-drawing")
    picker.select_option("welcome.excalidraw")
    draw.wait("() => window.pneuma.ui.activeFile === 'welcome.excalidraw' && VIEWER.api && VIEWER.synced.hash")
    assert draw.scene()["done"]["x"] == pytest.approx(after["done"]["x"], abs=0.01)
    assert [w["path"] for w in draw.writes] == ["welcome.excalidraw", "sketches/idea.excalidraw",
                                                "sketches/idea.excalidraw"]  # fmt: skip
    draw.assert_local_and_clean()


def test_the_selection_goes_with_the_next_message(open_draw: Any, fake_claude: Any) -> None:
    draw = open_draw(claude_bin=fake_claude.bin)
    page = draw.page
    # A fresh session begins with a hidden greeting turn; let it end.
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle")

    page.mouse.click(*draw.on_screen("viewer", 0.15, 0.2))
    draw.wait("() => window.pneuma.ui.selection?.elements?.length === 1")
    assert draw.js("() => window.pneuma.ui.selection") == {
        "file": "welcome.excalidraw",
        "elements": [{"id": "viewer", "type": "rectangle", "text": "Viewer (Excalidraw)"}],
        "label": "welcome · rectangle “Viewer (Excalidraw)”",
    }
    expect(page.locator(".composer .ctx-chip, .ctx-row .ctx-chip").first).to_contain_text("Viewer (Excalidraw)")
    # Shift-click the arrow's label: the arrow joins the selection.
    page.keyboard.down("Shift")
    page.mouse.click(*draw.on_screen("look-label"))
    page.keyboard.up("Shift")
    draw.wait("() => window.pneuma.ui.selection?.elements?.length === 2")
    expect(page.locator(".ctx-row .ctx-chip").first).to_contain_text("welcome · 2 elements")
    draw.shot(page, "draw-selection")

    assert send_and_read(page, fake_claude, "make these two red", turns=2, timeout=TURN) == (
        '<viewer-context mode="draw" file="welcome.excalidraw">\n'
        "Selected 2 elements:\n"
        '- viewer (rectangle) "Viewer (Excalidraw)"\n'
        '- look (arrow) viewer → check "you look"\n'
        "</viewer-context>\n\n"
        "make these two red"
    )
    # Selecting is not editing.
    assert draw.writes == []
    draw.assert_local_and_clean()


# --- the agent's actions ----------------------------------------------------------------


def test_the_agent_looks_zooms_and_navigates_over_http(open_draw: Any) -> None:
    draw = open_draw()
    draw.page.mouse.click(*draw.on_screen("agent", 0.1, 0.15))
    draw.wait("() => window.pneuma.ui.selection?.elements?.length === 1")

    answer = draw.action("describe-view")
    assert answer["success"] is True, answer
    data = answer["data"]
    view = draw.view()
    assert data["file"] == "welcome.excalidraw"
    assert data["zoom"] == pytest.approx(view["zoom"], abs=0.001)
    assert set(data["visible"]) == {"x", "y", "width", "height"}
    assert data["visible"]["width"] == pytest.approx(view["width"] / view["zoom"], abs=2)
    assert data["visible"]["height"] == pytest.approx(view["height"] / view["zoom"], abs=2)
    assert data["visible"]["x"] == pytest.approx(-view["scrollX"], abs=1)
    assert data["selected"] == [{"id": "agent", "type": "rectangle", "text": "Agent (Claude Code)"}]
    assert "agent" in data["inView"] and "agent-label" not in data["inView"]
    assert data["elements"] == 27 and data["drawings"] == ["welcome.excalidraw"]

    # capture-screenshot: the whole drawing, then one shape, as real PNG files.
    answer = draw.action("capture-screenshot")
    assert answer["success"] is True, answer
    rel = answer["data"]["path"]
    assert rel.startswith(".pneuma/captures/welcome-") and rel.endswith(".png")
    png = (draw.workspace / rel).read_bytes()
    width, height = png_size(png)
    assert (width, height) == (answer["data"]["width"], answer["data"]["height"])
    assert width > 1200 and height > 600
    assert inked_fraction(draw, png) > 0.03
    folder = Path(draw.shot(draw.page, "draw-describe")).parent
    (folder / "draw-capture-all.png").write_bytes(png)

    answer = draw.action("capture-screenshot", {"elementIds": ["check"], "padding": 10})
    assert answer["success"] is True, answer
    one = (draw.workspace / answer["data"]["path"]).read_bytes()
    w1, h1 = png_size(one)
    assert w1 < width / 2 and h1 < height / 2
    assert answer["data"]["elements"] == 2  # the diamond and its label
    (folder / "draw-capture-check.png").write_bytes(one)
    missing = draw.action("capture-screenshot", {"elementIds": ["no-such-shape"]})
    assert missing["success"] is False and "no-such-shape" in missing["message"]

    # zoom-to-fit: one shape fills the view, then everything is back in view.
    answer = draw.action("zoom-to-fit", {"elementIds": ["done"]})
    assert answer["success"] is True, answer
    assert answer["data"]["zoom"] > 1.2
    done = draw.scene()["done"]
    v = answer["data"]["visible"]
    assert v["x"] <= done["x"] and done["x"] + done["width"] <= v["x"] + v["width"]
    assert v["y"] <= done["y"] and done["y"] + done["height"] <= v["y"] + v["height"]
    draw.shot(draw.page, "draw-zoom-done")
    answer = draw.action("zoom-to-fit")
    assert answer["success"] is True and answer["data"]["zoom"] <= 1
    v = answer["data"]["visible"]
    for e in draw.scene().values():
        assert v["x"] - 1 <= e["x"] and e["x"] + e["width"] <= v["x"] + v["width"] + 1, e["id"]

    # navigate-to: a second drawing appears on disk, the agent opens it.
    second = json.loads(SEED.read_text())
    title = next(e for e in second["elements"] if e["id"] == "title")
    title.update(id="login-title", text="Login flow", originalText="Login flow")
    second["elements"] = [title]
    draw.write("diagrams/login-flow.excalidraw", second)
    picker = draw.page.locator("select[data-testid=pneuma-draw-file-picker]")
    expect(picker.locator("option")).to_have_text(["welcome.excalidraw", "diagrams/login-flow.excalidraw"])
    answer = draw.action("navigate-to", {"file": "diagrams/login-flow.excalidraw"})
    assert answer == {"success": True, "message": "Showing diagrams/login-flow.excalidraw",
                      "data": {"file": "diagrams/login-flow.excalidraw"}}  # fmt: skip
    assert set(draw.scene()) == {"login-title"}
    assert draw.active_file() == "diagrams/login-flow.excalidraw"
    expect(picker).to_have_value("diagrams/login-flow.excalidraw")
    assert draw.action("describe-view")["data"]["file"] == "diagrams/login-flow.excalidraw"
    assert draw.js("() => window.pneuma.ui.host.items()") == [
        {"path": "welcome.excalidraw", "label": "welcome", "index": 0, "metadata": {"kind": "drawing"}},
        {"path": "diagrams/login-flow.excalidraw", "label": "login-flow", "index": 1,
         "metadata": {"kind": "drawing"}},
    ]  # fmt: skip
    draw.shot(draw.page, "draw-login-flow")
    wrong = draw.action("navigate-to", {"file": "nope.excalidraw"})
    assert wrong["success"] is False
    assert "welcome.excalidraw" in wrong["message"] and "diagrams/login-flow.excalidraw" in wrong["message"]

    # navigate-to with a change's locate ({file, elementIds}, what the turn
    # review's "Show" sends): the drawing opens with those elements selected
    # and brought into view; an id the drawing no longer has (a removed
    # element) is named, not an error.
    answer = draw.action("navigate-to", {"file": "welcome.excalidraw", "elementIds": ["done", "gone"]})
    assert answer["success"] is True, answer
    assert answer["data"] == {"file": "welcome.excalidraw", "selected": ["done"], "missing": ["gone"]}
    assert "gone" in answer["message"]
    draw.wait("() => window.pneuma.ui.selection?.elements?.length === 1")
    assert [e["id"] for e in draw.action("describe-view")["data"]["selected"]] == ["done"]
    view = draw.view()
    done = draw.scene()["done"]
    assert view["zoom"] > 1.2  # zoomed in on one shape, as zoom-to-fit does
    left, top = -view["scrollX"], -view["scrollY"]
    assert left <= done["x"] and done["x"] + done["width"] <= left + view["width"] / view["zoom"]
    assert top <= done["y"] and done["y"] + done["height"] <= top + view["height"] / view["zoom"]
    draw.shot(draw.page, "draw-navigate-change")
    # Looking and moving around is not editing.
    assert draw.writes == []
    draw.assert_local_and_clean()


# --- looks --------------------------------------------------------------------------------


def test_dark_preference_and_a_narrow_window(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("draw", backend="none")
    page = open_page(server, color_scheme="dark", viewport={"width": 980, "height": 700})
    page.wait_for_function(f"() => {VIEWER}?.api && {VIEWER}.synced?.hash")
    # Excalidraw follows the shell into dark mode; the picker still fits.
    expect(page.locator(".pneuma-draw .excalidraw.theme--dark")).to_have_count(1)
    shot(page, "draw-dark-narrow")
    panel = page.locator(".pneuma-draw").bounding_box()
    name = page.locator(".pneuma-draw-files").bounding_box()
    assert name["x"] + name["width"] <= panel["x"] + panel["width"]
    # The whole drawing is in view, zoomed out to fit the narrow panel.
    zoom = page.evaluate(f"() => {VIEWER}.api.getAppState().zoom.value")
    assert zoom < 1
    shot(page, "draw-dark-narrow")
    assert [e for e in page.console_errors if "favicon" not in e] == []


def test_a_workspace_without_drawings_offers_to_start_one(pneuma_server: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("draw", backend="none")
    workspace = Path(server.workspace)
    (workspace / "welcome.excalidraw").unlink()  # the person deleted the seed
    time.sleep(0.5)
    page = open_page(server)
    empty = page.locator(".pneuma-draw-empty")
    expect(empty).to_be_visible()
    expect(empty).to_contain_text("No drawing yet")
    expect(empty.get_by_role("button", name="Start a drawing")).to_be_visible()
    shot(page, "draw-empty")
    answer = viewer_answer(server, "describe-view", wait=None, timeout=30)
    assert answer["success"] is False and "no .excalidraw file" in answer["message"]
    # A drawing the agent writes appears by itself.
    doc = json.loads(SEED.read_text())
    doc["elements"] = [e for e in doc["elements"] if e["id"] in ("you", "you-label")]
    (workspace / "billing.excalidraw").write_text(json.dumps(doc))
    page.wait_for_function(f"() => {VIEWER}?.api?.getSceneElements().length === 2 && {VIEWER}.synced?.hash")
    expect(empty).to_be_hidden()
    assert page.evaluate("() => window.pneuma.ui.activeFile") == "billing.excalidraw"
    assert page.evaluate(f"() => {VIEWER}.stats.saves") == 0
    assert [e for e in page.console_errors if "favicon" not in e] == []
