"""The slide viewer (plugins/slide/pneuma_slide/static/viewer.js) in the real shell.

Each test starts `pneuma run --mode slide --backend none` on a freshly seeded
workspace (tests/browser/conftest.py) and drives the shell's page in Debian's
Chromium: it checks the DOM inside the slide frames, asks for viewer actions
over HTTP as the agent does, edits files on disk as the agent does, and reads
the selection and viewer context back from the shell (`window.pneuma`).
Screenshots land in $PNEUMA_SCREENSHOTS; look at them.
"""

from __future__ import annotations

import json
import math
import re
import struct
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.browser.browser_helpers import api_call, send_and_read, viewer_answer

SEED_ORDER = ["slides/01-title.html", "slides/02-problem.html", "slides/03-point.html",
              "slides/04-loop.html", "slides/05-alignment.html", "slides/06-modes.html",
              "slides/07-workflow.html", "slides/08-your-turn.html"]
HOST = "window.pneuma.ui.host"


class Server:
    """The conftest's server record, plus the agent's HTTP calls."""

    def __init__(self, record: Any):
        self.base = record.base
        self.token = record.token
        self.url = record.url
        self.workspace = Path(record.workspace)

    def request(self, method: str, path: str, body: Any = None, timeout: float = 60) -> tuple[int, Any]:
        return api_call(self, method, path, body, timeout=timeout)

    def action(self, action_id: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return viewer_answer(self, action_id, params, wait=15, timeout=60)


@pytest.fixture
def server(pneuma_server: Any) -> Server:
    return Server(pneuma_server("slide", backend="none"))


@pytest.fixture
def page(open_page: Any, server: Server) -> Any:
    pg = open_page(server, viewport={"width": 1500, "height": 900})
    pg.wait_for_function(f"{HOST} && {HOST}.instance && {HOST}.module")
    wait_rendered(pg, 8)
    yield pg
    assert not [e for e in pg.console_errors if "favicon" not in e], pg.console_errors


@pytest.fixture
def shots(shot: Any) -> Any:
    return shot


# --- helpers -------------------------------------------------------------------------


def wait_rendered(pg: Any, count: int) -> None:
    """Every thumbnail frame and the stage hold a rendered slide document."""
    pg.wait_for_function(
        """(n) => {
          const frames = Array.from(document.querySelectorAll('.pns-frame--thumb, .pns-frame--stage'));
          return frames.length === n + 1 && frames.every((f) => {
            const d = f.contentDocument;
            return d && d.body && d.body.querySelector('section.slide');
          });
        }""", arg=count, timeout=10000)


def stage(pg: Any, expr: str) -> Any:
    """Evaluate `expr` with `d` bound to the stage frame's document."""
    return pg.evaluate(f"() => {{ const d = document.querySelector('.pns-frame--stage').contentDocument; return {expr}; }}")


def stage_h1(pg: Any) -> str:
    return stage(pg, "(d.querySelector('h1, .statement') || {}).textContent || ''").strip()


def manifest_order(ws: Path) -> list[str]:
    return [s["file"] for s in json.loads((ws / "manifest.json").read_text())["slides"]]


def png_size_and_variety(data: bytes) -> tuple[int, int, int]:
    """Width, height and how many distinct byte values the image data holds."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    return width, height, len(set(raw[::53]))


# --- tests -------------------------------------------------------------------------------


def test_slides_render_in_their_frames(page: Any, server: Server, shots: Any) -> None:
    titles = page.evaluate("""() => Array.from(document.querySelectorAll('.pns-frame--thumb')).map((f) =>
        (f.contentDocument.querySelector('h1, .statement') || {}).textContent.trim())""")
    assert titles == ["Making things with an agent you can see", "Chat alone hides the work",
                      "Point at it. Don't describe it.", "One workspace, two ways in",
                      "The agent sees and acts as you do", "Seven modes, one protocol",
                      "How a deck gets made here", "Now make it yours"]
    # theme.css is applied inside the frame at the slide size, and assets/ resolve.
    assert stage(page, "[d.body.firstElementChild.getBoundingClientRect().width,"
                       " d.body.firstElementChild.getBoundingClientRect().height]") == [1280, 720]
    assert stage(page, "getComputedStyle(d.querySelector('h1')).fontSize") == "76px"
    assert stage(page, "getComputedStyle(d.querySelector('.eyebrow')).color") == "rgb(91, 61, 245)"
    page.wait_for_function("""() => Array.from(document.querySelector('.pns-frame--stage').contentDocument.images)
        .every((i) => i.complete && i.naturalWidth > 0)""")
    dark = page.evaluate("""() => getComputedStyle(document.querySelectorAll('.pns-frame--thumb')[2]
        .contentDocument.querySelector('section')).backgroundColor""")
    assert dark == "rgb(21, 19, 31)"
    # Scaled to fit the panel, not cut off.
    box = page.locator(".pns-stage-box").bounding_box()
    stage_area = page.locator(".pns-stage").bounding_box()
    assert box["width"] <= stage_area["width"] and abs(box["width"] / box["height"] - 16 / 9) < 0.01
    assert page.locator(".pns-counter").inner_text() == "1 / 8"
    assert page.evaluate("window.pneuma.ui.host.activeFile") == "slides/01-title.html"
    assert page.evaluate("window.pneuma.ui.host.items().map((i) => i.path)") == SEED_ORDER
    shots(page, "slide-single")


def test_drag_reorder_rewrites_manifest(page: Any, server: Server, shots: Any) -> None:
    before = (server.workspace / "manifest.json").read_text()
    src = page.locator('.pns-thumb[data-index="1"]').bounding_box()
    dst = page.locator('.pns-thumb[data-index="3"]').bounding_box()
    page.mouse.move(src["x"] + src["width"] / 2, src["y"] + src["height"] / 2)
    page.mouse.down()
    page.mouse.move(src["x"] + src["width"] / 2, src["y"] + src["height"] / 2 + 20, steps=4)
    page.mouse.move(dst["x"] + dst["width"] / 2, dst["y"] + dst["height"] * 0.8, steps=8)
    shots(page, "slide-dragging")
    page.mouse.up()
    expected = [SEED_ORDER[0], SEED_ORDER[2], SEED_ORDER[3], SEED_ORDER[1], *SEED_ORDER[4:]]
    deadline = time.monotonic() + 3
    while manifest_order(server.workspace) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert manifest_order(server.workspace) == expected
    # The rest of the file and its layout (one slide entry per line) are kept.
    after = (server.workspace / "manifest.json").read_text()
    lines = before.splitlines()
    entries = [line.rstrip(",") for line in lines[3:11]]
    moved = [entries[0], entries[2], entries[3], entries[1], *entries[4:]]
    assert after.splitlines() == [*lines[:3], *[e + "," for e in moved[:-1]], moved[-1], *lines[11:]]
    titles = page.locator(".pns-thumb-title").all_inner_texts()
    assert titles[1:4] == ["Point at it. Don't describe it.", "One workspace, two ways in",
                           "Chat alone hides the work"]
    shots(page, "slide-reordered")


def test_external_edit_rerenders_within_a_second(page: Any, server: Server) -> None:
    page.locator('.pns-thumb[data-index="2"]').click()
    assert page.locator(".pns-counter").inner_text() == "3 / 8"
    slide = server.workspace / "slides" / "03-point.html"
    start = time.monotonic()
    slide.write_text(slide.read_text().replace("Point at it.", "Show, then ask."))
    page.wait_for_function(
        "() => document.querySelector('.pns-frame--stage').contentDocument.body.textContent.includes('Show, then ask.')",
        timeout=1000)
    assert time.monotonic() - start < 1.0
    assert page.locator(".pns-counter").inner_text() == "3 / 8"
    # theme.css changes re-render every frame.
    theme = server.workspace / "theme.css"
    theme.write_text(theme.read_text().replace("--color-accent: #5b3df5;", "--color-accent: #e8590c;"))
    page.wait_for_function(
        """() => getComputedStyle(document.querySelectorAll('.pns-frame--thumb')[0].contentDocument
             .querySelector('.eyebrow')).color === 'rgb(232, 89, 12)'""", timeout=1000)
    # An external reorder keeps the slide on screen, now at another position.
    data = json.loads((server.workspace / "manifest.json").read_text())
    data["slides"].reverse()
    (server.workspace / "manifest.json").write_text(json.dumps(data, indent=2))
    page.wait_for_function("() => document.querySelector('.pns-counter').textContent === '6 / 8'", timeout=1000)
    assert "Show, then ask." in stage(page, "d.body.textContent")


def test_click_selects_an_element_and_gives_the_viewer_context(page: Any, shots: Any) -> None:
    page.locator('.pns-thumb[data-index="2"]').click()
    page.frame_locator(".pns-frame--stage").locator("p.lead").click()
    selection = page.evaluate("window.pneuma.ui.host.selection")
    assert selection["file"] == "slides/03-point.html"
    assert selection["selector"] == "section.slide > p.lead"
    assert selection["tag"] == "p" and selection["classes"] == ["lead"]
    assert stage(page, "d.querySelector('[data-pneuma-selected]').className") == "lead"
    assert page.evaluate("window.pneuma.ui.host.context()") == (
        '<viewer-context mode="slide" file="slides/03-point.html" slide="3">\n'
        "Slide 3 of 8: \"Point at it. Don't describe it.\"\n"
        '<SELECTED>\n'
        "Selector: section.slide > p.lead\n"
        "</viewer-context>"
    ).replace("<SELECTED>", 'Selected: <p class="lead"> "Click an element on a slide, then type '
              '"make this shorter". The agent knows whi…"')
    shots(page, "slide-selected")
    # A nested element gets a path that finds exactly it.
    page.locator('.pns-thumb[data-index="4"]').click()
    page.frame_locator(".pns-frame--stage").locator(".card--accent-2 li").nth(1).click()
    selector = page.evaluate("window.pneuma.ui.host.selection.selector")
    assert stage(page, f"d.querySelectorAll({json.dumps(selector)}).length") == 1
    assert "The agent calls them" in stage(page, f"d.querySelector({json.dumps(selector)}).textContent")
    # Without an element selected, the context names the slide on screen.
    page.keyboard.press("Escape")
    assert page.evaluate("window.pneuma.ui.host.context()") == (
        '<viewer-context mode="slide" file="slides/05-alignment.html" slide="5">\n'
        'Slide 5 of 8: "The agent sees and acts as you do"\n</viewer-context>')


def test_navigate_to_over_http(page: Any, server: Server) -> None:
    result = server.action("navigate-to", {"file": "slides/05-alignment.html"})
    assert result["success"] is True, result
    assert result["data"]["index"] == 5
    assert page.locator(".pns-counter").inner_text() == "5 / 8"
    assert stage_h1(page) == "The agent sees and acts as you do"
    missing = server.action("navigate-to", {"file": "slides/99-nope.html"})
    assert missing["success"] is False
    assert "slides/99-nope.html" in missing["message"] and "slides/08-your-turn.html" in missing["message"]


def test_check_content_fit_reports_real_overflow(page: Any, server: Server) -> None:
    clean = server.action("checkContentFit")
    assert clean["success"] is True
    assert [s["fits"] for s in clean["data"]["slides"]] == [True] * 8, clean["message"]
    bullets = "".join(f"<li>Point number {i} that the speaker will explain out loud.</li>" for i in range(12))
    (server.workspace / "slides" / "02-problem.html").write_text(
        '<section class="slide"><header class="stack"><h1>Chat alone hides the work</h1></header>'
        f'<div class="slide__body"><ul class="bullets">{bullets}</ul></div></section>')
    page.wait_for_function("""() => document.querySelectorAll('.pns-frame--thumb')[1].contentDocument
        .querySelectorAll('li').length === 12""", timeout=2000)
    result = server.action("checkContentFit", {"slides": ["slides/02-problem.html"]})
    assert result["success"] is True
    [report] = result["data"]["slides"]
    assert report["file"] == "slides/02-problem.html" and report["fits"] is False
    # The figure is the list's real reach past the bottom edge, as rendered.
    reach = page.evaluate("""() => document.querySelectorAll('.pns-frame--thumb')[1].contentDocument
        .querySelector('ul.bullets').getBoundingClientRect().bottom - 720""")
    assert reach > 20 and report["overflowY"] == math.ceil(reach) and report["overflowX"] == 0
    assert any(e["selector"].endswith("ul.bullets") and e["overflow"]["bottom"] == report["overflowY"]
               for e in report["elements"]), report
    assert "02-problem.html" in result["message"]
    # The thumbnail shows it too.
    assert "overflow" in page.locator('.pns-thumb[data-index="1"] .pns-badge').inner_text()
    wrong = server.action("checkContentFit", {"slides": ["slides/02-problme.html"]})
    assert wrong["success"] is False and "slides/02-problem.html" in wrong["message"]


def test_capture_screenshot_writes_a_png(page: Any, server: Server, shots: Any) -> None:
    result = server.action("capture-screenshot", {"file": "slides/04-loop.html"})
    assert result["success"] is True, result
    path = result["data"]["path"]
    assert path.startswith(".pneuma/captures/") and path.endswith(".png")
    data = (server.workspace / path).read_bytes()
    shots(page, "slide-capture-context").with_name("slide-capture-04.png").write_bytes(data)
    width, height, variety = png_size_and_variety(data)
    assert (width, height) == (1280, 720)
    assert variety > 20  # a drawn slide, not a blank canvas
    current = server.action("capture-screenshot")
    assert current["data"]["file"] == "slides/01-title.html"


def test_describe_view_and_toggle_outline(page: Any, server: Server) -> None:
    view = server.action("describe-view")
    assert view["data"]["view"] == "single" and view["data"]["outlineVisible"] is True
    assert view["data"]["current"] == {"index": 1, "file": "slides/01-title.html",
                                       "title": "Making things with an agent you can see"}
    assert [s["file"] for s in view["data"]["slides"]] == SEED_ORDER
    toggled = server.action("ui:toggle-outline")
    assert toggled["data"]["outlineVisible"] is False
    assert page.locator(".pns-nav").is_hidden()
    assert server.action("describe-view")["data"]["outlineVisible"] is False
    server.action("ui:toggle-outline")
    assert page.locator(".pns-nav").is_visible()


def test_grid_and_present_mode(page: Any, shots: Any) -> None:
    page.get_by_role("button", name="All slides in a grid").click()
    page.wait_for_function("""() => Array.from(document.querySelectorAll('.pns-frame--tile'))
        .filter((f) => f.contentDocument && f.contentDocument.querySelector('section.slide')).length === 8""")
    shots(page, "slide-grid")
    page.locator('.pns-tile[data-index="5"]').click()
    assert page.locator(".pns-grid").is_hidden()
    assert stage_h1(page) == "Seven modes, one protocol"
    page.get_by_role("button", name="Present").click()
    page.wait_for_selector(".pns-present")
    page.wait_for_function("""() => { const f = document.querySelector('.pns-frame--present');
        return f && f.contentDocument && f.contentDocument.querySelector('section.slide'); }""")
    shots(page, "slide-present")
    page.keyboard.press("ArrowRight")
    assert page.locator(".pns-present-counter").inner_text() == "7 / 8"
    assert page.evaluate("window.pneuma.ui.host.instance.describeView().data.view") == "present"
    page.keyboard.press("Escape")
    page.wait_for_selector(".pns-present", state="detached")
    assert page.locator(".pns-counter").inner_text() == "7 / 8"


def test_export_button_downloads_a_pdf(page: Any, server: Server) -> None:
    # One Export button: the shell's menu, with what the slide exporter offers.
    from playwright.sync_api import expect

    expect(page.get_by_role("button", name="Export")).to_have_count(1)
    page.get_by_role("button", name="Export").click()
    with page.expect_download(timeout=60000) as info:
        page.locator('.export-menu .menu-item[data-format="pdf"]').click()
    data = Path(info.value.path()).read_bytes()
    assert data.startswith(b"%PDF-")
    assert len(re.findall(rb"/Type\s*/Page(?![A-Za-z])", data)) == 8
    assert info.value.suggested_filename.endswith(".pdf")
    # The menu's route, also for the agent's curl; the slide mode's own route is gone.
    status, body = server.request("GET", "/api/export/html")
    assert status == 200 and b"Now make it yours" in body
    status, _ = server.request("GET", "/api/export/docx")
    assert status == 400
    status, _ = server.request("GET", "/api/slide/export?format=html")
    assert status == 404


def test_a_clicked_element_reaches_the_agent_with_the_next_message(
        pneuma_server: Any, fake_claude: Any, open_page: Any) -> None:
    from playwright.sync_api import expect

    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_page(server, viewport={"width": 1500, "height": 900})
    page.wait_for_function(f"{HOST} && {HOST}.instance && {HOST}.module")
    wait_rendered(page, 8)
    expect(page.locator(".result-line")).to_have_count(1, timeout=30_000)  # the greeting turn
    page.locator('.pns-thumb[data-index="2"]').click()
    page.frame_locator(".pns-frame--stage").locator("p.lead").click()
    expect(page.locator(".ctx-row .ctx-chip")).to_contain_text("Slide 3")
    sent = send_and_read(page, fake_claude, "Make this shorter.", turns=2, timeout=30_000)
    assert sent.startswith(
        '<viewer-context mode="slide" file="slides/03-point.html" slide="3">\n'
        "Slide 3 of 8: \"Point at it. Don't describe it.\"\n"
        'Selected: <p class="lead"> "Click an element on a slide')
    assert "Selector: section.slide > p.lead\n</viewer-context>\n\nMake this shorter." in sent
    assert page.console_errors == []
