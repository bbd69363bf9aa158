"""The video mode's player (plugins/video/pneuma_video/static/viewer.js;
docs/video.md) in Debian's Chromium, on the seeded three-scene composition.

One `pneuma run --mode video` (no agent) and one page serve the player tests:
what the person sees is read from the page and from inside the scenes'
sandboxed frames (Playwright reaches an opaque-origin frame), viewer actions
are asked over HTTP as the agent asks them, files are edited on disk as the
agent edits them. test_video_agent_turn.py has the turn of the real Claude
Code CLI.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops, ImageFilter
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from tests.browser.browser_helpers import viewer_answer
from tests.browser.module_run import module_page, module_run, pins_loaded, stored_pins

HOST = "window.pneuma.ui.host"
PLAYER = f"{HOST}.instance.viewer"
CURRENT = ".video-scene-frame.current"
FPS = 30
TOTAL = 240  # 2.5 s + 3.5 s + 2 s at 30 fps
OUTRO = 180  # the outro's first frame
RELOAD = 20_000  # ms a scene frame may take to load again on a busy machine


def playhead(page: Any) -> int:
    """The frame the stage has drawn (set once the scene answered the seek)."""
    return int(page.get_attribute(".video-stage", "data-frame") or -1)


def drawn(page: Any, frame: int) -> None:
    page.wait_for_function(
        f"(n) => document.querySelector('.video-stage').dataset.frame === String(n) && !{PLAYER}.drawLoop", arg=frame)


def click_in_scene(page: Any, selector: str, *, count: int = 1) -> None:
    """Click the middle of `selector` in the scene on show, as the person
    does: the stage is scaled to fit, so its frame's own coordinates are too."""
    frame = page.locator(CURRENT).bounding_box()
    box = page.frame_locator(CURRENT).locator(selector).evaluate(
        "e => { const r = e.getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; }")
    scale = frame["width"] / 1280
    page.mouse.click(frame["x"] + box["x"] * scale, frame["y"] + box["y"] * scale, click_count=count)


def natural_width(picture: Any) -> int:
    """The picture's width once decoded; 0 while its scene's frame is being replaced (detached)."""
    try:
        return int(picture.evaluate("i => i.decode().then(() => i.naturalWidth, () => 0)"))
    except PlaywrightError:
        return 0


def scene_text(page: Any, selector: str) -> str:
    return str(page.frame_locator(CURRENT).locator(selector).inner_text())


@pytest.fixture(scope="module")
def video(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    with module_run(tmp_path_factory.mktemp("video-player"), "video") as server:
        with module_page(browser, server.url, viewport={"width": 1400, "height": 900}) as page:
            page.wait_for_function(f"() => window.pneuma && {HOST} && {HOST}.instance && {HOST}.instance.viewer")
            drawn(page, 0)
            pins_loaded(page)
            yield server, page


def test_play_runs_at_real_speed_and_every_motion_follows_the_player_s_time(video: tuple[Any, Any]) -> None:
    server, page = video
    expect(page.locator(".video-block")).to_have_count(3)
    assert page.locator(".video-block").all_inner_texts() == ["Title", "Growth", "Outro"]
    expect(page.locator(".video-frame")).to_have_text(f"Frame 0 / {TOTAL}")
    expect(page.locator(".video-time")).to_have_text("0.00 s / 8.00 s")
    assert scene_text(page, "h1") == "Made with Pneuma"

    started = time.monotonic()
    page.locator(".video-play").click()
    page.wait_for_function(f"() => {PLAYER}.frame >= {FPS}")
    took = time.monotonic() - started
    page.locator(".video-play").click()  # pause
    assert took >= 0.9, f"a second of video played in {took:.2f} s of wall time"
    stopped = page.evaluate(f"() => {PLAYER}.frame")
    assert page.evaluate(f"() => {PLAYER}.playing") is False
    assert FPS <= stopped < TOTAL
    expect(page.locator(".video-frame")).to_have_text(f"Frame {stopped} / {TOTAL}")

    # A CSS animation is at the player's time: the title rises from 0.2 s.
    viewer_answer(server, "navigate-to", {"time": 0.1})
    assert page.frame_locator(CURRENT).locator("h1").evaluate("e => getComputedStyle(e).opacity") == "0"
    viewer_answer(server, "navigate-to", {"time": 1.5})
    assert page.frame_locator(CURRENT).locator("h1").evaluate("e => getComputedStyle(e).opacity") == "1"
    # An onFrame animation is at the scene's time: the counter at 2.0 s into
    # "growth" is 1280 × easeOut((2.0 − 0.3) / 2.2), whatever came before.
    shown = viewer_answer(server, "navigate-to", {"scene": "growth", "time": 2})
    assert shown["data"]["frame"] == 75 + 60 and shown["data"]["scene"] == "growth", shown
    assert shown["message"].startswith("Showing 4.5 s (frame 135), scene 2 “Growth”"), shown
    expected = round(1280 * (1 - (1 - 1.7 / 2.2) ** 3))
    assert scene_text(page, "#total") == str(expected)
    viewer_answer(server, "navigate-to", {"time": 7})
    viewer_answer(server, "navigate-to", {"scene": "growth", "time": 2})
    assert scene_text(page, "#total") == str(expected)
    assert page.console_errors == []


def test_scrubbing_and_frame_steps_land_on_exact_frames(video: tuple[Any, Any]) -> None:
    server, page = video
    blocks = page.locator(".video-blocks").bounding_box()
    y = blocks["y"] + blocks["height"] / 2
    page.mouse.click(blocks["x"] + blocks["width"] * 120 / (TOTAL - 1), y)
    drawn(page, 120)
    expect(page.locator(".video-time")).to_have_text("4.00 s / 8.00 s")
    # a drag scrubs through and stops where the pointer stops
    page.mouse.move(blocks["x"] + 5, y)
    page.mouse.down()
    page.mouse.move(blocks["x"] + blocks["width"] * 0.5, y, steps=8)
    page.mouse.move(blocks["x"] + blocks["width"] * 200 / (TOTAL - 1), y, steps=4)
    page.mouse.up()
    drawn(page, 200)
    assert page.get_attribute(".video-stage", "data-scene") == "outro"

    page.locator(".video-player").focus()
    for key, frame in (("ArrowRight", 201), ("Shift+ArrowRight", 231), ("ArrowLeft", 230),
                       ("Shift+ArrowRight", TOTAL - 1), ("Shift+ArrowLeft", TOTAL - 1 - FPS), ("Home", 0)):
        page.keyboard.press(key)
        drawn(page, frame)
        expect(page.locator(".video-frame")).to_have_text(f"Frame {frame} / {TOTAL}")
    # keys pressed with the stage focused (inside the scene's frame) work too
    page.frame_locator(CURRENT).locator("body").press("ArrowRight")
    drawn(page, 1)
    view = viewer_answer(server, "describe-view")["data"]
    assert view["playhead"] == {"time": 0.033, "frame": 1, "scene": "intro", "sceneTitle": "Title",
                                "file": "scenes/01-intro.html", "sceneTime": 0.033}
    assert (view["width"], view["height"], view["fps"], view["totalFrames"], view["duration"]) == (
        1280, 720, 30, TOTAL, 8)
    assert [(s["id"], s["start"], s["frames"]) for s in view["scenes"]] == [
        ("intro", 0, 75), ("growth", 2.5, 105), ("outro", 6, 60)]
    assert view["playing"] is False


def test_a_scene_saved_on_disk_reloads_alone_and_keeps_the_playhead(video: tuple[Any, Any]) -> None:
    server, page = video
    viewer_answer(server, "navigate-to", {"scene": "outro", "time": 1})
    drawn(page, OUTRO + FPS)
    page.evaluate("() => document.querySelectorAll('.video-scene-frame').forEach((f) => { f.dataset.old = '1'; })")
    outro = server.workspace / "scenes" / "03-outro.html"
    original = outro.read_text(encoding="utf-8")
    try:
        outro.write_text(original.replace("Your turn: tell the agent what to make", "Saved on disk"), encoding="utf-8")
        expect(page.frame_locator(CURRENT).locator("h2")).to_have_text("Saved on disk", timeout=RELOAD)
        drawn(page, OUTRO + FPS)
        old = page.eval_on_selector_all(".video-scene-frame", "fs => fs.map((f) => [f.dataset.scene, !!f.dataset.old])")
        assert sorted(old) == [["growth", True], ["intro", True], ["outro", False]]
    finally:
        outro.write_text(original, encoding="utf-8")
        expect(page.frame_locator(CURRENT).locator("h2")).to_have_text("Your turn: tell the agent what to make", timeout=RELOAD)



def test_a_picture_from_assets_shows_on_the_stage_and_follows_its_file(video: tuple[Any, Any]) -> None:
    server, page = video
    assets = server.workspace / "assets"
    assets.mkdir(exist_ok=True)
    Image.new("RGB", (200, 100), (255, 0, 0)).save(assets / "logo.png")
    outro = server.workspace / "scenes" / "03-outro.html"
    original = outro.read_text(encoding="utf-8")
    viewer_answer(server, "navigate-to", {"scene": "outro", "time": 1})
    logo = page.frame_locator(CURRENT).locator("#logo")
    try:
        outro.write_text(original.replace("<h2>", '<img id="logo" src="assets/logo.png"><h2>'), encoding="utf-8")
        expect(logo).to_have_count(1, timeout=RELOAD)
        assert logo.evaluate("i => i.decode().then(() => i.naturalWidth)") == 200
        Image.new("RGB", (300, 100), (0, 0, 255)).save(assets / "logo.png")  # the agent redraws the file
        page.frame_locator(CURRENT).locator("#logo[src^='data:']").wait_for(timeout=RELOAD)
        deadline = time.monotonic() + RELOAD / 1000
        while natural_width(logo) != 300:
            assert time.monotonic() < deadline, "the scene still shows the old picture"
            page.wait_for_timeout(100)
    finally:
        outro.write_text(original, encoding="utf-8")
        (assets / "logo.png").unlink()
    expect(logo).to_have_count(0, timeout=RELOAD)


def test_a_click_on_the_stage_points_at_the_element_at_that_time(video: tuple[Any, Any]) -> None:
    server, page = video
    viewer_answer(server, "navigate-to", {"scene": "outro", "time": 1.5})
    drawn(page, OUTRO + 45)
    click_in_scene(page, "p")
    page.wait_for_function(f"() => {PLAYER}.selection !== null")
    selection = page.evaluate(f"() => {PLAYER}.selection")
    assert {k: selection[k] for k in ("file", "scene", "time", "frame", "sceneTime", "selector", "tag", "text")} == {
        "file": "scenes/03-outro.html", "scene": "outro", "time": 7.5, "frame": OUTRO + 45, "sceneTime": 1.5,
        "selector": "section.outro > p", "tag": "p", "text": "轮到你了：告诉智能体你想做什么"}
    # Chinese is drawn with the shell's Noto Sans SC slices, on a machine without a CJK font too
    families = page.frame_locator(CURRENT).locator("p").evaluate(
        "async () => { await document.fonts.ready; return [...document.fonts].filter((f) => f.status === 'loaded')"
        ".map((f) => f.family.replace(/\"/g, '')); }")
    assert "Noto Sans SC" in families, families
    context = page.evaluate(f"(s) => {HOST}.module.extractContext(s)", selection)
    assert context == ('<viewer-context mode="video" file="scenes/03-outro.html" scene="outro" time="7.5" '
                       'scene-time="1.5" frame="225" selector="section.outro &gt; p" tag="p">'
                       "轮到你了：告诉智能体你想做什么</viewer-context>")
    expect(page.locator(".ctx-chip")).to_contain_text("Outro · 7.50 s · p")
    assert viewer_answer(server, "describe-view")["data"]["selection"]["selector"] == "section.outro > p"

    # Annotate: a click makes a pin at that time, a tick on the timeline and a marker on the stage.
    page.locator(".annotate-toggle").click()
    click_in_scene(page, "h2")
    comment = page.locator(".pin-box textarea")
    comment.fill("Shorter")
    comment.press("Enter")
    (pin,) = stored_pins(server, 1, placed=False)
    assert (pin["selection"]["selector"], pin["selection"]["frame"]) == ("section.outro > h2", OUTRO + 45)
    # The pin's picture (sent with the review) is the pinned frame, drawn headlessly as the export draws it.
    picture = page.evaluate(f"(p) => {HOST}.instance.capturePin(p)", pin)
    assert picture and picture.startswith("data:image/png;base64,"), str(picture)[:80]
    pinned = Image.open(io.BytesIO(base64.b64decode(picture.split(",", 1)[1]))).convert("RGB")
    assert pinned.size == (1280, 720)
    shown = Image.open(io.BytesIO(page.locator(CURRENT).screenshot())).convert("RGB")
    assert mean_difference(pinned.resize(shown.size, Image.Resampling.BILINEAR), shown) < 2
    expect(page.locator(".video-pin-tick")).to_have_text("1")
    expect(page.locator(".video-pin-marker")).to_have_text("1")
    viewer_answer(server, "navigate-to", {"time": 0})
    expect(page.locator(".video-pin-marker")).to_have_count(0)  # another scene
    page.evaluate(f"(p) => {HOST}.instance.revealPin(p)", pin)
    drawn(page, OUTRO + 45)
    expect(page.locator(".video-pin-marker")).to_have_text("1")
    page.locator(".pin-remove").click()
    page.locator(".annotate-toggle").click()
    expect(page.locator(".video-pin-tick")).to_have_count(0)
    assert page.console_errors == []


def test_text_edited_on_the_stage_is_written_to_the_scene_file(video: tuple[Any, Any]) -> None:
    server, page = video
    viewer_answer(server, "navigate-to", {"scene": "outro", "time": 1.5})
    drawn(page, OUTRO + 45)
    outro = server.workspace / "scenes" / "03-outro.html"
    original = outro.read_text(encoding="utf-8")
    heading = page.frame_locator(CURRENT).locator("h2")
    click_in_scene(page, "h2", count=2)
    expect(heading).to_have_attribute("contenteditable", "plaintext-only", timeout=RELOAD)
    heading.press("Control+A")
    heading.press_sequentially("Now you <try>")
    heading.press("Enter")
    expected = original.replace("Your turn: tell the agent what to make", "Now you &lt;try&gt;")
    deadline = time.monotonic() + 10
    while outro.read_text(encoding="utf-8") != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert outro.read_text(encoding="utf-8") == expected  # that text only, escaped
    expect(page.frame_locator(CURRENT).locator("h2")).to_have_text("Now you <try>", timeout=RELOAD)
    drawn(page, OUTRO + 45)  # the playhead stayed
    outro.write_text(original, encoding="utf-8")
    expect(page.frame_locator(CURRENT).locator("h2")).to_have_text("Your turn: tell the agent what to make", timeout=RELOAD)


def test_a_shared_file_plays_the_video_with_no_server(video: tuple[Any, Any], browser: Any,
                                                      tmp_path: Any) -> None:
    server, _ = video
    shared = tmp_path / "video-share.html"
    pneuma = Path(sys.executable).with_name("pneuma")
    subprocess.run([str(pneuma), "share", "-w", str(server.workspace), "-o", str(shared)], check=True,
                   capture_output=True, env={**os.environ, "PNEUMA_LOAD_PLUGINS": "video"}, timeout=60)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        asked: list[str] = []

        def offline(route: Any) -> None:
            if route.request.url.startswith(("file:", "blob:", "data:")):
                route.continue_()
            else:
                asked.append(route.request.url)
                route.abort()

        page.route("**/*", offline)
        page.goto(shared.as_uri())
        page.wait_for_selector(CURRENT)
        page.locator(".video-scene-item[data-scene=outro]").click()
        page.wait_for_function("() => document.querySelector('.video-stage').dataset.frame === '180'")
        # the scene's own script ran in its frame: the counter of "growth" counts
        page.locator(".video-player").press("Shift+ArrowLeft")
        page.wait_for_function("() => document.querySelector('.video-stage').dataset.frame === '150'")
        assert scene_text(page, "#total") == str(round(1280 * (1 - (1 - (2.5 - 0.3) / 2.2) ** 3)))
        assert asked == []
    finally:
        context.close()


def test_a_broken_composition_or_scene_is_said_in_the_page_and_in_the_answers(video: tuple[Any, Any]) -> None:
    server, page = video
    composition = server.workspace / "video.json"
    outro = server.workspace / "scenes" / "03-outro.html"
    good, good_outro = composition.read_text(encoding="utf-8"), outro.read_text(encoding="utf-8")
    try:
        composition.write_text(good.replace('"duration": 3.5', '"duration": 0'), encoding="utf-8")
        expect(page.locator(".video-error")).to_be_visible(timeout=RELOAD)
        expect(page.locator(".video-error code")).to_have_text("scenes[1].duration must be a number > 0, not 0")
        answer = viewer_answer(server, "describe-view")
        assert answer["success"] is False
        assert answer["message"] == "video.json cannot be played: scenes[1].duration must be a number > 0, not 0"

        composition.write_text(good.replace("scenes/03-outro.html", "scenes/09-gone.html"), encoding="utf-8")
        expect(page.locator(".video-error")).to_be_hidden(timeout=RELOAD)
        expect(page.locator(".video-block[data-scene=outro]")).to_have_attribute("data-missing", "1", timeout=RELOAD)
        shown = viewer_answer(server, "navigate-to", {"scene": "outro"})
        assert shown["message"].endswith("scenes/09-gone.html is missing."), shown
        assert page.get_attribute(".video-stage", "data-missing") == "scenes/09-gone.html is missing"

        # a scene file that is not text (a picture under an .html name) says so, in the page and to the agent
        outro.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
        composition.write_text(good, encoding="utf-8")
        page.wait_for_function(f"() => ({HOST}.instance.problems()['scenes/03-outro.html'] || '').includes('not a text')",
                               timeout=RELOAD)
        expect(page.locator(".video-block[data-scene=outro]")).to_have_attribute("data-missing", "1")
        shown = viewer_answer(server, "navigate-to", {"scene": "outro"})
        assert shown["message"].endswith("scenes/03-outro.html is not a text file (a scene is HTML)."), shown
        assert page.get_attribute(".video-stage", "data-missing") == (
            "scenes/03-outro.html is not a text file (a scene is HTML)")

        composition.write_text(good, encoding="utf-8")
        outro.write_text(good_outro.replace("<style>", "<script>null.boom();</script><style>"), encoding="utf-8")
        page.wait_for_function(
            f"() => ({HOST}.instance.problems()['scenes/03-outro.html'] || '').startsWith('Script error')", timeout=RELOAD)
        shown = viewer_answer(server, "navigate-to", {"scene": "outro"})
        assert "The scene's script threw: Uncaught TypeError: Cannot read properties of null (reading 'boom')" in shown["message"], shown
        assert scene_text(page, "h2") == "Your turn: tell the agent what to make"  # the rest still draws
    finally:
        composition.write_text(good, encoding="utf-8")
        outro.write_text(good_outro, encoding="utf-8")
    page.wait_for_function(f"() => Object.keys({HOST}.instance.problems()).length === 0")
    expect(page.locator(".video-block")).to_have_count(3)


def test_the_agent_s_capture_of_a_frame_is_the_picture_the_player_shows(video: tuple[Any, Any]) -> None:
    server, page = video
    captured = viewer_answer(server, "capture-frame", {"time": 7.5, "output": "exports/at-7.5s.png"},
                             wait=60, timeout=90)  # a headless Chromium of its own: slow on a busy machine
    assert captured["success"] is True, captured
    assert (captured["data"]["output"], captured["data"]["frame"]) == ("exports/at-7.5s.png", OUTRO + 45)
    drawn(page, OUTRO + 45)  # the player went there
    image = Image.open(server.workspace / "exports" / "at-7.5s.png").convert("RGB")
    assert image.size == (1280, 720)
    shown = Image.open(io.BytesIO(page.locator(CURRENT).screenshot())).convert("RGB")
    line = page.frame_locator(CURRENT).locator("p").evaluate(
        "e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }")
    viewer_answer(server, "navigate-to", {"time": 5})
    later = Image.open(io.BytesIO(page.locator(CURRENT).screenshot())).convert("RGB")
    small = image.resize(shown.size, Image.Resampling.BILINEAR)
    same, other = mean_difference(small, shown), mean_difference(small, later)
    # the same picture but for scaling (0.5 of 255 here), another one in another scene
    assert same < 2 and other > 4 * same, (same, other)
    # The Chinese line has its glyphs in the capture (the export's drawing) as
    # in the player, on a machine without a CJK font too: not empty boxes.
    scale = shown.width / 1280
    box = tuple(round(v * scale) for v in line)
    shown_line, captured_line = shown.crop(box), small.crop(box)
    blank = Image.new("RGB", shown_line.size, shown_line.getpixel((0, 0)))
    ink = mean_difference(shown_line, blank)
    # (softened: the capture is scaled down to the player's size, a stroke may move by a pixel)
    differs = mean_difference(*(im.filter(ImageFilter.GaussianBlur(2)) for im in (captured_line, shown_line)))
    assert ink > 5 and differs < ink / 4, (ink, differs)

    # A reload of the tab comes back at the same frame.
    page.reload()
    page.wait_for_function(f"() => window.pneuma && {HOST} && {HOST}.instance && {HOST}.instance.viewer")
    drawn(page, 150)


def mean_difference(a: Any, b: Any) -> float:
    histogram = ImageChops.difference(a, b).convert("L").histogram()
    return sum(value * count for value, count in enumerate(histogram)) / max(sum(histogram), 1)
