"""The draw mode's browser viewer: the real Excalidraw editor in Debian's Chromium.

`pneuma run --mode draw --backend none` serves a freshly seeded workspace
(welcome.excalidraw). The page is tests/browser/draw_harness.html, a minimal
stand-in for the shell implementing the viewer contract's ctx over the
server's real HTTP API and browser socket; it is written into a document of
the server's own origin, so the token cookie, /content/ and /modes/draw/
behave as they do for the real shell. Viewer actions are requested over
HTTP exactly as the agent requests them.

The tests share one server and one page (Excalidraw takes a few seconds to
start) and run in file order; each leaves the canvas in a known state.
Screenshots go to $PNEUMA_SCREENSHOT_DIR (default: a temporary folder).
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

playwright_sync = pytest.importorskip("playwright.sync_api")

REPO = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).with_name("draw_harness.html")
VENDOR = REPO / "plugins" / "draw" / "pneuma_draw" / "static" / "vendor"
SEED = REPO / "plugins" / "draw" / "pneuma_draw" / "seeds" / "welcome.excalidraw"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip
READY = re.compile(r"\[pneuma\] ready (http://127\.0\.0\.1:\d+)/\?session=([^&\s]+)&token=(\S+)")
VIEWPORT = {"width": 1400, "height": 900}

pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
    pytest.mark.skipif(
        not (VENDOR / "excalidraw.js").exists(),
        reason="the Excalidraw bundle is not built (scripts/build-web)",
    ),
]


@dataclass
class Draw:
    """The running server, the page and what the page did."""

    base: str
    token: str
    workspace: Path
    page: Any
    shots: Path
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def action(self, action_id: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        body = json.dumps({"actionId": action_id, "params": params or {}}).encode()
        request = urllib.request.Request(
            f"{self.base}/api/viewer/action?timeout=20", data=body, method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def js(self, expression: str, arg: Any = None) -> Any:
        return self.page.evaluate(expression, arg)

    def scene(self) -> dict[str, dict[str, Any]]:
        """The live Excalidraw scene (non-deleted elements) by id."""
        return {
            e["id"]: e
            for e in self.js(
                """() => window.harness.instance.api.getSceneElements().map(e => ({
                    id: e.id, type: e.type, x: e.x, y: e.y, width: e.width, height: e.height,
                    text: e.text ?? null, containerId: e.containerId ?? null}))"""
            )
        }

    def view(self) -> dict[str, float]:
        return self.js(
            """() => { const s = window.harness.instance.api.getAppState();
                       return {scrollX: s.scrollX, scrollY: s.scrollY, zoom: s.zoom.value,
                               offsetLeft: s.offsetLeft, offsetTop: s.offsetTop}; }"""
        )

    def stats(self) -> dict[str, int]:
        return self.js("() => ({...window.harness.instance.stats, writes: window.harness.log.writes.length})")

    def on_screen(self, element_id: str, fx: float = 0.5, fy: float = 0.5) -> tuple[float, float]:
        """Page coordinates of a point inside an element (fractions of its box)."""
        e = self.scene()[element_id]
        v = self.view()
        x = (e["x"] + e["width"] * fx + v["scrollX"]) * v["zoom"] + v["offsetLeft"]
        y = (e["y"] + e["height"] * fy + v["scrollY"]) * v["zoom"] + v["offsetTop"]
        return x, y

    def settle(self) -> None:
        """Wait until no save is pending and the canvas is ready."""
        self.page.wait_for_function(
            "() => { const i = window.harness.instance; return i.api && !i.saveTimer && i.synced && i.synced.hash; }"
        )
        self.js("() => window.harness.instance.saving")

    def read(self, rel: str = "welcome.excalidraw") -> dict[str, Any]:
        return json.loads((self.workspace / rel).read_text())

    def write(self, rel: str, doc: dict[str, Any] | str) -> None:
        """Change a file on disk the way an agent does (atomically)."""
        target = self.workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
        os.replace(tmp, target)

    def shot(self, name: str) -> Path:
        path = self.shots / f"draw-{name}.png"
        self.page.screenshot(path=str(path))
        return path


@pytest.fixture(scope="module")
def draw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Draw]:
    tmp = tmp_path_factory.mktemp("draw-viewer")
    workspace = tmp / "ws"
    shots = Path(os.environ.get("PNEUMA_SCREENSHOT_DIR") or tmp / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HOME": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pneuma.cli", "run", "--mode", "draw", "--backend", "none",
         "--no-open", "--no-prompt", "--port", "0", "-w", str(workspace)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 20
        lines: list[str] = []
        match = None
        while time.monotonic() < deadline and match is None:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            match = READY.search(line)
        assert match, "pneuma run printed no ready line:\n" + "".join(lines)
        base, session, token = match.groups()
        with playwright_sync.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(15_000)
            d = Draw(base=base, token=token, workspace=workspace, page=page, shots=shots)
            page.on("request", lambda r: d.requests.append(r.url))
            page.on(
                "console",
                lambda m: d.console_errors.append(f"{m.text} @ {m.location.get('url', '')}")
                if m.type == "error" and not m.location.get("url", "").endswith("/favicon.ico")
                else None,
            )
            page.on("pageerror", lambda e: d.console_errors.append(str(e)))
            page.on("dialog", lambda dialog: dialog.dismiss())
            # A load with ?token= sets the HttpOnly cookie, as the shell's first
            # load does; the harness then replaces that document in place, so it
            # runs on the server's own origin.
            page.goto(f"{base}/api/session?token={token}&session={session}")
            page.set_content(HARNESS.read_text())
            page.wait_for_function("() => window.harness && (window.harness.ready || window.harness.log.errors.length)")
            assert d.js("() => window.harness.log.errors") == []
            d.settle()
            yield d
            context.close()
            browser.close()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


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


# --- showing the drawing -----------------------------------------------------------


def test_canvas_shows_the_seed_drawing(draw: Draw) -> None:
    seed = json.loads(SEED.read_text())
    scene = draw.scene()
    assert set(scene) == {e["id"] for e in seed["elements"]}
    assert scene["agent-label"]["text"] == "Agent\n(Claude Code)"
    assert scene["agent-label"]["containerId"] == "agent"
    assert draw.js("() => window.harness.log.activeFiles.at(-1)") == "welcome.excalidraw"

    # Pixels: the interactive canvas really has the drawing on it.
    png = draw.page.screenshot()
    assert inked_fraction(draw, png) > 0.02
    # The hand-drawn font came from this server and is in use.
    draw.page.wait_for_function(
        "() => [...document.fonts].some(f => f.family.replace(/\"/g, '') === 'Virgil' && f.status === 'loaded')"
    )
    assert any(u.startswith(f"{draw.base}/modes/draw/vendor/fonts/Virgil/") for u in draw.requests)
    # The file name is shown; with one drawing there is no picker yet.
    assert draw.page.locator(".pneuma-draw-files .pneuma-draw-name").inner_text() == "welcome.excalidraw"
    draw.shot("seed")
    # Loading wrote nothing back.
    assert draw.stats()["writes"] == 0


def test_an_edit_on_disk_appears_in_place(draw: Draw) -> None:
    before = draw.view()
    doc = draw.read()
    for e in doc["elements"]:
        if e["id"] == "agent-label":
            e["text"] = e["originalText"] = "Agent\n(edited on disk)"
            e["version"] += 1
    note = {
        "id": "disk-note", "type": "rectangle", "x": 880, "y": 700, "width": 240, "height": 60,
        "angle": 0, "strokeColor": "#1e1e1e", "backgroundColor": "#ffec99", "fillStyle": "solid",
        "strokeWidth": 2, "strokeStyle": "solid", "roughness": 1, "opacity": 100, "groupIds": [],
        "frameId": None, "roundness": {"type": 3}, "seed": 7, "version": 1, "versionNonce": 11,
        "isDeleted": False, "boundElements": None, "updated": 1735725600000, "link": None, "locked": False,
    }  # fmt: skip
    doc["elements"].append(note)
    written_at = time.monotonic()
    draw.write("welcome.excalidraw", doc)
    draw.page.wait_for_function(
        """() => { const els = window.harness.instance.api.getSceneElements();
                   return els.some(e => e.id === 'disk-note')
                       && els.find(e => e.id === 'agent-label').text.includes('edited on disk'); }"""
    )
    took = time.monotonic() - written_at
    assert took < 2.0, f"the canvas took {took:.2f} s to show the change"
    # In place: same viewport, no remount, and nothing written back (no loop).
    assert draw.view() == before
    time.sleep(1.5)
    stats = draw.stats()
    assert stats["loads"] == 1 and stats["externalApplied"] == 1
    assert stats["writes"] == 0
    assert draw.read() == doc
    draw.shot("external-edit")


def test_a_half_written_file_keeps_the_last_good_drawing(draw: Draw) -> None:
    good = (draw.workspace / "welcome.excalidraw").read_text()
    draw.write("welcome.excalidraw", good[: len(good) // 2])
    notice = draw.page.locator(".pneuma-draw-notice")
    notice.wait_for(state="visible")
    assert "not a valid drawing" in notice.inner_text()
    assert "disk-note" in draw.scene()
    draw.shot("invalid-file")
    draw.write("welcome.excalidraw", good)
    notice.wait_for(state="hidden")
    assert draw.stats()["writes"] == 0


def test_a_drag_in_the_canvas_is_saved_once(draw: Draw) -> None:
    draw.settle()
    before_disk = {e["id"]: e for e in draw.read()["elements"]}
    start = draw.stats()
    x, y = draw.on_screen("disk-note")
    zoom = draw.view()["zoom"]
    draw.page.mouse.move(x, y)
    draw.page.mouse.down()
    for step in range(1, 11):
        draw.page.mouse.move(x - 12 * step, y + 4 * step)
    draw.page.mouse.up()
    draw.page.wait_for_function(f"() => window.harness.log.writes.length > {start['writes']}", timeout=5000)
    draw.settle()
    time.sleep(2.0)  # long enough for an echo loop to show itself
    stats = draw.stats()
    assert stats["writes"] == start["writes"] + 1, "one drag, one write"
    assert stats["saves"] == start["saves"] + 1
    assert stats["loads"] == start["loads"], "our own write's echo must not reload the canvas"
    assert stats["externalApplied"] == start["externalApplied"]
    # The echo did come back, marked as ours.
    updates = draw.js("() => window.harness.log.updates.flat()")
    assert {"path": "welcome.excalidraw", "origin": "self", "deleted": False} in updates

    doc = draw.read()
    after = {e["id"]: e for e in doc["elements"]}
    assert after["disk-note"]["x"] == pytest.approx(before_disk["disk-note"]["x"] - 120 / zoom, abs=2)
    assert after["disk-note"]["y"] == pytest.approx(before_disk["disk-note"]["y"] + 40 / zoom, abs=2)
    assert after["disk-note"]["version"] > before_disk["disk-note"]["version"]
    # Everything else is still there; the file keeps its own header and settings.
    assert set(after) == set(before_disk)
    assert after["agent-label"]["text"] == "Agent\n(edited on disk)"
    assert doc["type"] == "excalidraw" and doc["source"] == "pneuma-draw"
    assert doc["appState"]["gridSize"] == 20 and doc["appState"]["viewBackgroundColor"] == "#ffffff"
    draw.page.keyboard.press("Escape")
    draw.shot("after-drag")


def test_selecting_shapes_gives_the_agent_their_ids_and_words(draw: Draw) -> None:
    draw.settle()
    draw.page.mouse.click(*draw.on_screen("viewer", 0.15, 0.2))
    draw.page.wait_for_function("() => window.harness.selection?.elements?.length === 1")
    assert draw.js("() => window.harness.selection") == {
        "file": "welcome.excalidraw",
        "elements": [{"id": "viewer", "type": "rectangle", "text": "Viewer (Excalidraw)"}],
        "label": "welcome · rectangle “Viewer (Excalidraw)”",
    }
    # Shift-click the arrow's label: the arrow joins the selection.
    draw.page.keyboard.down("Shift")
    draw.page.mouse.click(*draw.on_screen("look-label"))
    draw.page.keyboard.up("Shift")
    draw.page.wait_for_function("() => window.harness.selection?.elements?.length === 2")
    assert draw.js("() => window.harness.context()") == (
        '<viewer-context mode="draw" file="welcome.excalidraw">\n'
        "Selected 2 elements:\n"
        '- viewer (rectangle) "Viewer (Excalidraw)"\n'
        '- look (arrow) viewer → check "you look"\n'
        "</viewer-context>"
    )
    draw.shot("selection")
    # Selecting is not editing: nothing was written.
    time.sleep(0.8)
    assert not draw.js("() => window.harness.instance.saveTimer")


def test_describe_view_over_http(draw: Draw) -> None:
    answer = draw.action("describe-view")
    assert answer["success"] is True, answer
    data = answer["data"]
    assert data["file"] == "welcome.excalidraw"
    assert data["zoom"] == pytest.approx(draw.view()["zoom"], abs=0.001)
    visible = data["visible"]
    assert set(visible) == {"x", "y", "width", "height"}
    assert visible["width"] == pytest.approx(VIEWPORT["width"] / data["zoom"], abs=2)
    assert visible["height"] == pytest.approx(VIEWPORT["height"] / data["zoom"], abs=2)
    assert [s["id"] for s in data["selected"]] == ["viewer", "look"]
    assert data["selected"][1] == {"id": "look", "type": "arrow", "text": "you look", "from": "viewer", "to": "check"}
    assert "agent" in data["inView"] and "agent-label" not in data["inView"]
    assert "2 selected" in answer["message"]


def test_capture_screenshot_writes_a_real_png(draw: Draw) -> None:
    answer = draw.action("capture-screenshot")
    assert answer["success"] is True, answer
    rel = answer["data"]["path"]
    assert rel.startswith(".pneuma/captures/welcome-") and rel.endswith(".png")
    png = (draw.workspace / rel).read_bytes()
    width, height = png_size(png)
    assert (width, height) == (answer["data"]["width"], answer["data"]["height"])
    assert width > 1200 and height > 600
    assert inked_fraction(draw, png) > 0.03
    (draw.shots / "draw-capture-all.png").write_bytes(png)

    answer = draw.action("capture-screenshot", {"elementIds": ["check"], "padding": 10})
    assert answer["success"] is True, answer
    one = (draw.workspace / answer["data"]["path"]).read_bytes()
    w1, h1 = png_size(one)
    assert w1 < width / 2 and h1 < height / 2
    assert answer["data"]["elements"] == 2  # the diamond and its label
    (draw.shots / "draw-capture-check.png").write_bytes(one)

    missing = draw.action("capture-screenshot", {"elementIds": ["no-such-shape"]})
    assert missing["success"] is False and "no-such-shape" in missing["message"]


def test_zoom_to_fit(draw: Draw) -> None:
    answer = draw.action("zoom-to-fit", {"elementIds": ["done"]})
    assert answer["success"] is True, answer
    assert answer["data"]["zoom"] > 1.2
    done = draw.scene()["done"]
    v = answer["data"]["visible"]
    assert v["x"] <= done["x"] and done["x"] + done["width"] <= v["x"] + v["width"]
    assert v["y"] <= done["y"] and done["y"] + done["height"] <= v["y"] + v["height"]
    draw.shot("zoom-done")

    answer = draw.action("zoom-to-fit")
    assert answer["success"] is True, answer
    assert answer["data"]["zoom"] <= 1
    v = answer["data"]["visible"]
    for e in draw.scene().values():
        assert v["x"] - 1 <= e["x"] and e["x"] + e["width"] <= v["x"] + v["width"] + 1, e["id"]
    assert draw.stats()["writes"] == 1, "moving the view is not an edit"


def test_navigate_between_drawings(draw: Draw) -> None:
    doc = json.loads(SEED.read_text())
    doc["elements"] = [e for e in doc["elements"] if e["id"] in ("title",)]
    doc["elements"][0]["text"] = doc["elements"][0]["originalText"] = "Login flow"
    doc["elements"][0]["id"] = "login-title"
    draw.write("diagrams/login-flow.excalidraw", doc)
    picker = draw.page.locator("select[data-testid=pneuma-draw-file-picker]")
    picker.wait_for()
    assert picker.locator("option").all_inner_texts() == ["welcome.excalidraw", "diagrams/login-flow.excalidraw"]

    answer = draw.action("navigate-to", {"file": "diagrams/login-flow.excalidraw"})
    assert answer == {"success": True, "message": "Showing diagrams/login-flow.excalidraw",
                      "data": {"file": "diagrams/login-flow.excalidraw"}}  # fmt: skip
    assert set(draw.scene()) == {"login-title"}
    assert draw.js("() => window.harness.log.activeFiles.at(-1)") == "diagrams/login-flow.excalidraw"
    assert picker.input_value() == "diagrams/login-flow.excalidraw"
    assert draw.action("describe-view")["data"]["file"] == "diagrams/login-flow.excalidraw"
    draw.shot("login-flow")

    wrong = draw.action("navigate-to", {"file": "nope.excalidraw"})
    assert wrong["success"] is False
    assert "welcome.excalidraw" in wrong["message"] and "diagrams/login-flow.excalidraw" in wrong["message"]

    # The person picks the other drawing from the picker.
    picker.select_option("welcome.excalidraw")
    draw.page.wait_for_function(
        "() => window.harness.instance.api?.getSceneElements().some(e => e.id === 'disk-note')"
    )
    assert draw.js("() => window.harness.log.activeFiles.at(-1)") == "welcome.excalidraw"
    assert draw.stats()["writes"] == 1, "switching drawings writes nothing"


def test_resolve_items_lists_the_drawings(draw: Draw) -> None:
    items = draw.js("() => window.harness.module.resolveItems(window.harness.files)")
    assert items == [
        {"path": "welcome.excalidraw", "label": "welcome", "index": 0, "metadata": {"kind": "drawing"}},
        {"path": "diagrams/login-flow.excalidraw", "label": "login-flow", "index": 1,
         "metadata": {"kind": "drawing"}},
    ]  # fmt: skip


def test_nothing_left_this_machine_and_no_errors(draw: Draw) -> None:
    outside = [u for u in draw.requests if not u.startswith((f"{draw.base}/", "data:", "blob:"))]
    assert outside == []
    assert draw.console_errors == []
