"""The slide viewer's annotate, edit-in-place and follow capabilities
(docs/viewer-contract.md, "Annotate, edit in place, follow the agent";
docs/slide.md) in the real shell and Debian's Chromium.

One `pneuma run --mode slide --backend none` and one page serve the whole
module (the tests run in file order and leave the deck as they found it
where a later test cares): pins drawn as numbered markers on the slide
on screen and as counts on thumbnails, a pin's picture, its place in the
file, going to it; a heading edited where it stands changing exactly its
bytes on disk; Esc leaving the file alone; an overflowing slide marked on
its thumbnail and named by problems(); reveal going to a slide.
"""

from __future__ import annotations

import base64
import os
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.browser_helpers import (
    READY_LINE,
    kill_process_group,
    read_first_line,
)

HOST = "window.pneuma.ui.host"
STAGE_DOC = "document.querySelector('.pns-frame--stage').contentDocument"


# --- one server and one page for the module -------------------------------------------------


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A slide workspace served by one `pneuma run` for the whole module; yields its folder."""
    root = tmp_path_factory.mktemp("slide-capabilities")
    ws = root / "ws"
    ws.mkdir()
    home = root / "home"
    (home / ".claude").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), PYTHONUNBUFFERED="1",
               PNEUMA_LOAD_PLUGINS="slide")
    pneuma = Path(sys.executable).with_name("pneuma")
    command = [str(pneuma)] if pneuma.exists() else [sys.executable, "-m", "pneuma.cli"]
    command += ["run", "--mode", "slide", "--workspace", str(ws), "--no-open", "--no-prompt",
                "--port", "0", "--backend", "none"]
    with (root / "stderr.txt").open("wb") as stderr:
        process = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
    try:
        line = read_first_line(process, 20.0) or ""
        assert READY_LINE.match(line), (root / "stderr.txt").read_text(errors="replace")[-3000:]
        ws.joinpath(".url").write_text(line.split(" ", 2)[2])
        yield ws
    finally:
        kill_process_group(process)


@pytest.fixture(scope="module")
def page(browser: Any, workspace: Path) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1500, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(workspace.joinpath(".url").read_text())
    pg.wait_for_selector('.pill[data-state="open"]', timeout=10_000)
    pg.wait_for_function(f"() => {HOST} && {HOST}.instance && {STAGE_DOC}.querySelector('section.slide')")
    yield pg
    context.close()
    assert not errors, errors


def js(pg: Any, body: str, arg: Any = None) -> Any:
    """Run `body` (an async function body) with `host`, `viewer` and `arg` bound."""
    return pg.evaluate(f"async (arg) => {{ const host = {HOST}; const viewer = host.instance; {body} }}", arg)


def go(pg: Any, n: int) -> None:
    pg.locator(f'.pns-thumb[data-index="{n - 1}"]').click()
    pg.wait_for_function(f"() => document.querySelector('.pns-counter').textContent.startsWith('{n} /')")


def wait_disk(path: Path, predicate: Callable[[str], bool], timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    text = path.read_text(encoding="utf-8")
    while not predicate(text) and time.monotonic() < deadline:
        time.sleep(0.05)
        text = path.read_text(encoding="utf-8")
    return text


def pin(n: int, file: str, selector: str | None, comment: str) -> dict[str, Any]:
    selection: dict[str, Any] = {"file": file}
    if selector:
        selection["selector"] = selector
    return {"id": f"p{n}", "number": n, "selection": selection, "comment": comment, "status": "open"}


PINS = [
    pin(1, "slides/03-point.html", "section.slide > p.statement", "Punchier"),
    pin(2, "slides/03-point.html", "section.slide > p.lead", "Too long"),
    pin(3, "slides/05-alignment.html", "section.slide > header.stack > h1", "Say who"),
]


# --- tests --------------------------------------------------------------------------------------


def test_the_viewer_declares_its_capabilities(page: Any) -> None:
    assert js(page, "return host.module.capabilities;") == ["annotate", "edit", "follow"]


def test_reveal_brings_a_slide_to_the_front(page: Any) -> None:
    assert js(page, "return await viewer.reveal('slides/03-point.html');") is True
    assert page.locator(".pns-counter").inner_text() == "3 / 8"
    assert js(page, f"return {STAGE_DOC}.querySelector('.statement').textContent;").startswith("Point at it.")
    # Not a slide of the deck: the viewer does not show it, nothing moves.
    assert js(page, "return await viewer.reveal('theme.css');") is False
    assert js(page, "return await viewer.reveal('slides/99-nope.html');") is False
    assert page.locator(".pns-counter").inner_text() == "3 / 8"
    go(page, 1)


def test_pins_are_numbered_markers_on_their_slide_and_counts_on_thumbnails(page: Any) -> None:
    go(page, 3)
    js(page, "viewer.showPins(arg);", PINS)
    markers = page.locator(".pns-pin-layer .pns-pin-marker")
    assert markers.all_inner_texts() == ["1", "2"]
    assert markers.nth(1).get_attribute("title") == "Too long"
    # Each marker sits at its element's top-left corner, as drawn on screen.
    frame = page.locator(".pns-frame--stage").bounding_box()
    scale = js(page, "return viewer.stageScale;")
    lead = js(page, f"const r = {STAGE_DOC}.querySelector('p.lead').getBoundingClientRect(); return [r.left, r.top];")
    marker = markers.nth(1).bounding_box()
    assert abs(marker["x"] + 11 - (frame["x"] + lead[0] * scale)) < 3
    assert abs(marker["y"] + 11 - (frame["y"] + lead[1] * scale)) < 3
    counts = page.locator(".pns-thumb .pns-pin-count")
    shown = {i: counts.nth(i).inner_text() for i in range(8) if counts.nth(i).is_visible()}
    assert shown == {2: "2", 4: "1"}
    # On slide 5 only its own pin is drawn.
    go(page, 5)
    assert page.locator(".pns-pin-layer .pns-pin-marker").all_inner_texts() == ["3"]
    js(page, "viewer.showPins([]);")
    assert page.locator(".pns-pin-layer .pns-pin-marker").count() == 0
    assert not any(counts.nth(i).is_visible() for i in range(8))


def png_size(data_url: str) -> tuple[int, int]:
    assert data_url.startswith("data:image/png;base64,")
    data = base64.b64decode(data_url.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_a_pin_picture_is_its_element_with_a_little_room(page: Any) -> None:
    picture = js(page, "return await viewer.capturePin(arg);", PINS[1])
    rect = js(page, """const frame = document.querySelectorAll('.pns-frame--thumb')[2];
        const r = frame.contentDocument.querySelector('p.lead').getBoundingClientRect();
        return [r.width, r.height];""")
    width, height = png_size(picture)
    assert abs(width - (rect[0] + 16)) <= 3 and abs(height - (rect[1] + 16)) <= 3, (width, height, rect)
    assert js(page, "return await viewer.capturePin(arg);", pin(9, "slides/03-point.html", "p.gone", "")) is None


def test_a_pin_place_is_its_element_as_the_file_has_it(page: Any, workspace: Path) -> None:
    files = "return viewer.pinPlace(arg, host.files);"
    lead = js(page, files, PINS[1]["selection"])
    assert lead.startswith('<p class="lead">Click an element') and lead.endswith("</p>")
    statement = js(page, files, PINS[0]["selection"])
    slide = workspace / "slides" / "03-point.html"
    original = slide.read_text(encoding="utf-8")
    slide.write_text(original.replace("then type", "then say"), encoding="utf-8")
    page.wait_for_function("() => window.pneuma.ui.host.files.some((f) => f.path === 'slides/03-point.html'"
                           " && f.content.includes('then say'))")
    assert js(page, files, PINS[1]["selection"]) != lead
    assert js(page, files, PINS[0]["selection"]) == statement
    slide.write_text(original, encoding="utf-8")
    page.wait_for_function("() => !window.pneuma.ui.host.files.some((f) => f.content && f.content.includes('then say'))")


def test_reveal_pin_goes_to_the_slide_and_flashes_the_element(page: Any) -> None:
    go(page, 1)
    assert js(page, "return await viewer.revealPin(arg);", PINS[2]) is True
    assert page.locator(".pns-counter").inner_text() == "5 / 8"
    assert js(page, f"return {STAGE_DOC}.querySelector('[data-pneuma-flash]').textContent;") == (
        "The agent sees and acts as you do")


def test_a_heading_edited_in_place_changes_exactly_its_bytes(page: Any, workspace: Path) -> None:
    slide = workspace / "slides" / "02-problem.html"
    with_entity = slide.read_text(encoding="utf-8").replace(
        '<p class="eyebrow">The problem</p>', '<p class="eyebrow">Problems &amp; costs</p>')
    slide.write_bytes(with_entity.encode("utf-8"))
    go(page, 2)
    page.wait_for_function(f"() => {STAGE_DOC}.querySelector('.eyebrow').textContent === 'Problems & costs'")
    h1 = page.frame_locator(".pns-frame--stage").locator("h1")
    h1.dblclick()
    page.wait_for_function(f"() => {STAGE_DOC}.querySelector('h1').isContentEditable")
    page.keyboard.press("Control+A")
    page.keyboard.type("Chat & nothing else hides the work")
    page.keyboard.press("Enter")
    expected = with_entity.replace("<h1>Chat alone hides the work</h1>",
                                   "<h1>Chat &amp; nothing else hides the work</h1>").encode("utf-8")
    wait_disk(slide, lambda text: "nothing else" in text)
    assert slide.read_bytes() == expected
    assert not js(page, f"return {STAGE_DOC}.querySelector('h1').isContentEditable;")
    page.wait_for_function(f"() => {STAGE_DOC}.querySelector('h1').textContent === 'Chat & nothing else hides the work'")
    # Ctrl-Z with the slide's frame focused undoes the hand edit (the shell's undo).
    page.keyboard.press("Control+z")
    wait_disk(slide, lambda text: "nothing else" not in text)
    assert slide.read_bytes() == with_entity.encode("utf-8")
    page.wait_for_function(f"() => {STAGE_DOC}.querySelector('h1').textContent === 'Chat alone hides the work'")


def test_an_edit_racing_an_agent_write_is_refused_and_nothing_is_lost(page: Any, workspace: Path) -> None:
    go(page, 2)
    slide = workspace / "slides" / "02-problem.html"
    item = page.frame_locator(".pns-frame--stage").locator("li").nth(3)
    item.dblclick()
    page.wait_for_function(f"() => {STAGE_DOC}.querySelectorAll('li')[3].isContentEditable")
    page.keyboard.press("Control+A")
    page.keyboard.type("My own last point")
    # The agent writes the file meanwhile.
    theirs = slide.read_text(encoding="utf-8").replace("Chat alone hides the work", "The agent's title")
    slide.write_text(theirs, encoding="utf-8")
    page.wait_for_function("() => window.pneuma.ui.host.files.some((f) => f.path === 'slides/02-problem.html'"
                           " && f.content.includes(\"The agent's title\"))")
    # The slide under the person's hands is not repainted while they type, and the shell knows they are busy.
    assert js(page, f"return {STAGE_DOC}.querySelectorAll('li')[3].isContentEditable;") is True
    assert page.locator(".pns-frame--stage[data-pneuma-busy]").count() == 1
    page.keyboard.press("Enter")
    dialog = page.locator('[data-kind="edit-conflict"]')
    dialog.wait_for()
    mine = dialog.locator(".edit-conflict-mine textarea").input_value()
    # The two changed different parts: "mine" is the person's change on top of the agent's.
    assert "My own last point" in mine and "The agent's title" in mine
    assert "The agent's title" in dialog.locator(".edit-conflict-theirs textarea").input_value()
    dialog.locator(".edit-conflict-theirs-button").click()
    assert page.locator("[data-pneuma-busy]").count() == 0
    assert slide.read_text(encoding="utf-8") == theirs
    kept = [p.read_text(encoding="utf-8") for p in (workspace / ".pneuma" / "edits" / "conflicts").rglob("*") if p.is_file()]
    assert any("My own last point" in text for text in kept)
    page.wait_for_function(f"() => {STAGE_DOC}.querySelector('h1').textContent === \"The agent's title\"")
    assert js(page, f"return {STAGE_DOC}.querySelectorAll('li')[3].textContent;") == "It cannot press the buttons you can press."


def test_escape_leaves_the_file_as_it_was(page: Any, workspace: Path) -> None:
    go(page, 2)
    slide = workspace / "slides" / "02-problem.html"
    before = slide.read_bytes()
    item = page.frame_locator(".pns-frame--stage").locator("li").nth(2)
    item.dblclick()
    page.wait_for_function(f"() => {STAGE_DOC}.querySelectorAll('li')[2].isContentEditable")
    page.keyboard.press("Control+A")
    page.keyboard.type("Something else entirely")
    page.keyboard.press("Escape")
    assert js(page, f"return {STAGE_DOC}.querySelectorAll('li')[2].textContent;") == (
        "It cannot see the screen you are looking at.")
    time.sleep(0.3)  # no write is expected; give a wrong one the time to land
    assert slide.read_bytes() == before
    # An element with markup inside is not edited as text: nothing becomes editable.
    page.frame_locator(".pns-frame--stage").locator("p.lead").dblclick(position={"x": 5, "y": 5})
    assert js(page, f"return !!{STAGE_DOC}.querySelector('[contenteditable]');") is False


def test_an_overflowing_slide_is_marked_and_named(page: Any, workspace: Path) -> None:
    slide = workspace / "slides" / "07-workflow.html"
    original = slide.read_text(encoding="utf-8")
    bullets = "".join(f"<li>Point number {i} that the speaker will explain out loud.</li>" for i in range(14))
    slide.write_text(f'<section class="slide"><h1>Too much</h1><ul class="bullets">{bullets}</ul></section>',
                     encoding="utf-8")
    badge = page.locator('.pns-thumb[data-index="6"] .pns-badge')
    page.wait_for_function("() => document.querySelector('.pns-thumb[data-index=\"6\"] .pns-badge').textContent"
                           ".startsWith('⚠')", timeout=5000)
    assert "overflow" in badge.inner_text()
    assert "ul.bullets" in (badge.get_attribute("title") or "")
    problems = js(page, "return viewer.problems();")
    assert list(problems) == ["slides/07-workflow.html"]
    assert problems["slides/07-workflow.html"].startswith("The content sticks out of the slide by ")
    # Fixed on disk: the mark goes away.
    slide.write_text(original, encoding="utf-8")
    page.wait_for_function("() => document.querySelector('.pns-thumb[data-index=\"6\"] .pns-badge').hidden",
                           timeout=5000)
    assert js(page, "return viewer.problems();") == {}


def test_clicks_in_annotate_mode_become_pins_drawn_on_their_slide(page: Any, workspace: Path) -> None:
    """With the shell's Annotate switch: each click on an element is a pin
    with its marker on the slide; going to another slide is no pin."""
    go(page, 3)
    page.locator(".annotate-toggle").click()
    frame = page.frame_locator(".pns-frame--stage")
    for n, (selector, comment) in enumerate([("p.statement", "Punchier"), ("p.lead", "Shorter")], 1):
        frame.locator(selector).click()
        box = page.get_by_role("textbox", name=f"Comment on pin {n}")
        box.fill(comment)
        box.press("Enter")
    go(page, 5)
    go(page, 3)
    page.wait_for_function("() => document.querySelectorAll('.pns-pin-layer .pns-pin-marker').length === 2")
    assert page.locator(".pns-pin-layer .pns-pin-marker").all_inner_texts() == ["1", "2"]
    assert page.locator(".pin-item").count() == 2
    stored = (workspace / ".pneuma" / "review-pins.json").read_text(encoding="utf-8")
    assert '"selector": "section.slide > p.lead"' in stored or '"selector":"section.slide > p.lead"' in stored
    page.keyboard.press("Escape")
    for _ in range(2):
        page.locator(".pin-item .pin-remove").first.click()
    page.wait_for_function("() => !document.querySelector('.pns-pin-layer .pns-pin-marker')")
