"""The illustrate mode's viewer (plugins/illustrate/pneuma_illustrate/static/)
in the real shell and Debian's Chromium, on the seeded board (a lighthouse
row of three variants, a fox row of two).

One `pneuma run --mode illustrate --backend none` and one page serve the
module. What the person sees is read from the DOM, viewer actions are asked
over HTTP as the agent asks them, the marks are read back from choices.json
on disk, and the text the next message carries is the shell's own
`host.context()` (what it sends as `viewer_context`). That a pick reaches
the real agent's request is tests/browser/test_illustrate_agent_turn.py.
"""

from __future__ import annotations

import base64
import json
import shutil
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import viewer_answer
from tests.browser.module_run import module_page, module_run, pins_loaded, stored_pins

HOST = "window.pneuma.ui.host"
SEED_IMAGE = Path(__file__).resolve().parents[2] / "plugins/illustrate/pneuma_illustrate/seeds/images/fox-1.png"


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    with module_run(tmp_path_factory.mktemp("illustrate"), "illustrate") as server:
        with module_page(browser, server.url) as page:
            page.wait_for_selector(".il-card", timeout=15_000)
            page.wait_for_function(f"() => {HOST} && {HOST}.instance && {HOST}.instance.showPins")
            pins_loaded(page)
            yield server, page


def card(page: Any, image: str) -> Any:
    return page.locator(f".il-card[data-image-id='{image}']")


def choices_on_disk(workspace: Path, expected: dict[str, Any], timeout: float = 10) -> dict[str, Any]:
    """choices.json once it holds `expected` (or after `timeout`)."""
    path = workspace / "choices.json"
    deadline = time.monotonic() + timeout
    while True:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data == expected or time.monotonic() > deadline:
            return dict(data)
        time.sleep(0.05)


def test_rows_of_variants_and_an_image_s_record(board: tuple[Any, Any]) -> None:
    server, page = board
    rows = page.eval_on_selector_all(
        ".il-row", "rs => rs.map(r => [r.dataset.rowId, [...r.querySelectorAll('.il-card')].map(c => c.dataset.imageId)])")
    assert rows == [["lighthouse", ["lighthouse-1", "lighthouse-2", "lighthouse-3"]], ["fox", ["fox-1", "fox-2"]]]
    expect(page.locator(".il-row[data-row-id=lighthouse] .il-row-prompt")).to_contain_text("rocky coast at dusk")
    # the variants of a row sit side by side, each a drawn picture
    tops = [card(page, f"lighthouse-{n}").bounding_box()["y"] for n in (1, 2, 3)]
    assert max(tops) - min(tops) < 2
    page.wait_for_function("() => document.querySelector(\".il-card[data-image-id='fox-2'] img\").naturalWidth === 320")
    # a click opens the large view with the record and the chain it was made from
    card(page, "lighthouse-3").locator(".il-thumb").click()
    detail = page.locator(".il-detail[data-image-id='lighthouse-3']")
    expect(detail.locator(".il-record")).to_contain_text("1203")  # its seed
    expect(detail.locator(".il-record")).to_contain_text("night")  # its own prompt, not the row's
    expect(detail.locator(".il-parent")).to_have_text(["lighthouse-2"])
    detail.locator(".il-parent").click()
    expect(page.locator(".il-detail[data-image-id='lighthouse-2']")).to_be_visible()
    # the click is the selection the next message carries
    context = page.evaluate(f"() => {HOST}.context()")
    assert 'image="lighthouse-2" row="lighthouse" file="images/lighthouse-2.png"' in context, context
    view = viewer_answer(server, "describe-view")["data"]
    assert [r["id"] for r in view["rows"]] == ["lighthouse", "fox"]
    assert (view["open"], view["selected"], view["problems"]) == ("lighthouse-2", "lighthouse-2", [])
    # no image provider is set for this run: the page says what to set
    expect(page.locator(".il-provider")).to_contain_text("PNEUMA_IMAGES_BASE_URL")
    # the person folds the notice to its title; it stays folded when the page redraws
    page.locator(".il-provider summary").click()
    expect(page.locator(".il-provider li").first).to_be_hidden()
    page.evaluate(f"() => {HOST}.instance.render()")
    expect(page.locator(".il-provider summary")).to_be_visible()
    expect(page.locator(".il-provider li").first).to_be_hidden()
    assert page.console_errors == []


def test_marks_go_to_choices_json_and_to_the_next_message(board: tuple[Any, Any]) -> None:
    server, page = board
    page.evaluate(f"() => {HOST}.context()")  # what was pending before is told
    card(page, "lighthouse-1").locator(".il-pick").click()
    card(page, "lighthouse-1").locator(".il-star").click()
    card(page, "fox-2").locator(".il-reject").click()
    card(page, "fox-1").locator(".il-thumb").click()
    box = page.locator(".il-detail[data-image-id='fox-1'] .il-comment-input")
    box.fill("Warmer light, and make the book red")
    page.locator(".il-detail .il-save-comment").click()
    expected: dict[str, dict[str, Any]] = {
        "lighthouse-1": {"status": "picked", "starred": True, "comment": ""},
        "fox-2": {"status": "rejected", "starred": False, "comment": ""},
        "fox-1": {"status": None, "starred": False, "comment": "Warmer light, and make the book red"},
    }
    assert choices_on_disk(server.workspace, expected) == expected
    expect(card(page, "lighthouse-1")).to_have_attribute("data-status", "picked")
    expect(card(page, "lighthouse-1")).to_have_attribute("data-starred", "true")
    expect(card(page, "fox-1").locator(".il-comment")).to_have_text("Warmer light, and make the book red")
    expect(page.locator(".il-pending")).to_have_attribute("data-pending", "4")
    # a reload before the message is sent forgets none of them
    page.reload()
    page.wait_for_selector(".il-card", timeout=15_000)
    expect(page.locator(".il-pending")).to_have_attribute("data-pending", "4")
    card(page, "fox-1").locator(".il-thumb").click()
    # the next message names each mark once; the one after names none again
    context = page.evaluate(f"() => {HOST}.context()")
    for line in ("- picked lighthouse-1", "- starred lighthouse-1", "- rejected fox-2",
                 '- comment on fox-1: "Warmer light, and make the book red"'):
        assert line in context, context
    assert "since your last turn" not in page.evaluate(f"() => {HOST}.context()")
    expect(page.locator(".il-pending")).to_have_count(0)
    choices = viewer_answer(server, "get-choices")["data"]["choices"]
    assert choices["fox-2"]["status"] == "rejected" and choices["fox-2"]["row"] == "fox"
    assert choices["lighthouse-1"]["prompt"].startswith("A lighthouse")

    # the agent rewrites board.json (rows swapped, a title changed): the marks stay
    board_file = server.workspace / "board.json"
    data = json.loads(board_file.read_text(encoding="utf-8"))
    data["rows"].reverse()
    data["rows"][0]["title"] = "Fox, reading"
    board_file.write_text(json.dumps(data, indent=2), encoding="utf-8")
    expect(page.locator(".il-row").first).to_have_attribute("data-row-id", "fox")
    expect(card(page, "fox-2")).to_have_attribute("data-status", "rejected")
    expect(card(page, "lighthouse-1")).to_have_attribute("data-status", "picked")
    view = viewer_answer(server, "describe-view")["data"]
    assert (view["picked"], view["rejected"], view["starred"]) == (["lighthouse-1"], ["fox-2"], ["lighthouse-1"])

    # a pick undone is written as such, the other marks kept
    card(page, "lighthouse-1").locator(".il-pick").click()
    expected["lighthouse-1"]["status"] = None
    assert choices_on_disk(server.workspace, expected) == expected
    assert "- no longer picked lighthouse-1" in page.evaluate(f"() => {HOST}.context()")


def test_navigate_to_an_image_the_tool_is_still_writing(board: tuple[Any, Any]) -> None:
    server, page = board
    ws = server.workspace
    assert viewer_answer(server, "navigate-to", {"image": "nowhere-1"})["success"] is False
    # the tool's files land a moment after the agent asks to see them
    record = {"id": "fox-3", "prompt": "A fox reading at night", "model": "m", "provider": "p",
              "size": "320x320", "seed": 5, "parent": "fox-1", "row": "fox",
              "created": "2026-01-05T11:00:00Z", "revised_prompt": None}
    (ws / "images" / "fox-3.json").write_text(json.dumps(record), encoding="utf-8")
    shutil.copy(SEED_IMAGE, ws / "images" / "fox-3.png")
    data = json.loads((ws / "board.json").read_text(encoding="utf-8"))
    next(r for r in data["rows"] if r["id"] == "fox")["images"].append("fox-3")
    (ws / "board.json").write_text(json.dumps(data), encoding="utf-8")
    answer = viewer_answer(server, "navigate-to", {"image": "fox-3"})
    assert answer["success"] and answer["data"] == {"image": "fox-3", "row": "fox"}, answer
    detail = page.locator(".il-detail[data-image-id='fox-3']")
    expect(detail.locator(".il-parent")).to_have_text(["fox-1"])
    expect(card(page, "fox-3")).to_be_in_viewport()
    answer = viewer_answer(server, "navigate-to", {"row": "lighthouse"})
    assert answer["data"]["images"] == ["lighthouse-1", "lighthouse-2", "lighthouse-3"]
    # an image no row lists is still shown, under its own heading
    shutil.copy(SEED_IMAGE, ws / "images" / "stray.png")
    expect(page.locator(".il-row[data-row-id=''] .il-card[data-image-id='stray']")).to_be_visible()
    view = viewer_answer(server, "describe-view")["data"]
    assert view["rows"][-1]["onBoard"] is False

    # following the agent: a changed image file brings its card into view;
    # an image board.json lists without a file is a problem the shell names
    assert page.evaluate(f"() => {HOST}.capabilities") == ["annotate", "edit", "follow"]
    page.locator(".il-rows").evaluate("el => el.scrollTo(0, 0)")
    assert page.evaluate(f"() => {HOST}.instance.reveal('images/stray.png')") is True
    expect(page.locator(".il-card[data-image-id='stray']")).to_be_in_viewport()
    assert page.evaluate(f"() => {HOST}.instance.reveal('notes.txt')") is False
    assert page.evaluate(f"() => {HOST}.instance.problems()") == {}
    text = (ws / "board.json").read_text(encoding="utf-8")
    (ws / "board.json").write_text(text.replace('"fox-3"', '"fox-3", "ghost"'), encoding="utf-8")
    page.wait_for_function(f"() => 'board.json' in {HOST}.instance.problems()")
    assert "ghost" in page.evaluate(f"() => {HOST}.instance.problems()")["board.json"]
    (ws / "board.json").write_text(text, encoding="utf-8")
    expect(page.locator(".il-card[data-image-id='ghost']")).to_have_count(0)


def test_a_row_title_is_renamed_in_place(board: tuple[Any, Any]) -> None:
    server, page = board
    board_file = server.workspace / "board.json"
    before = board_file.read_text(encoding="utf-8")
    old_title = next(r["title"] for r in json.loads(before)["rows"] if r["id"] == "lighthouse")
    heading = page.locator(".il-row[data-row-id=lighthouse] .il-row-head h2")
    heading.dblclick()
    field = heading.locator("input.il-title-input")
    field.fill("Lighthouses, dusk to night")
    field.press("Enter")
    expect(heading).to_have_text("Lighthouses, dusk to night")
    deadline = time.monotonic() + 10
    while board_file.read_text(encoding="utf-8") == before and time.monotonic() < deadline:
        time.sleep(0.05)
    # only the title's string changed in the file, as the agent wrote it
    expected = before.replace(json.dumps(old_title), json.dumps("Lighthouses, dusk to night"))
    assert board_file.read_text(encoding="utf-8") == expected
    # Esc leaves the title as it was, and the edit box goes away
    heading.dblclick()
    heading.locator("input.il-title-input").fill("Not this")
    heading.locator("input.il-title-input").press("Escape")
    expect(heading).to_have_text("Lighthouses, dusk to night")
    assert board_file.read_text(encoding="utf-8") == expected


def png_size(data_url: str) -> tuple[int, int]:
    raw = base64.b64decode(data_url.split(",", 1)[1])
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", raw[16:24])
    return width, height


def test_a_pin_on_an_image_and_a_read_only_snapshot(board: tuple[Any, Any]) -> None:
    server, page = board
    page.locator(".annotate-toggle").click()
    card(page, "lighthouse-2").locator(".il-thumb").click()
    comment = page.locator(".pin-box textarea")
    comment.fill("Too dark")
    comment.press("Enter")
    stored = stored_pins(server, 1)
    assert stored[0]["selection"]["id"] == "lighthouse-2" and stored[0]["comment"] == "Too dark"
    expect(card(page, "lighthouse-2").locator(".il-pin")).to_have_text("1")
    image = page.evaluate(f"(s) => {HOST}.instance.capturePin({{id: 'x', number: 1, selection: s}})",
                          stored[0]["selection"])
    assert png_size(image) == (320, 320)
    page.locator(".pin-remove").click()
    page.locator(".annotate-toggle").click()
    expect(page.locator(".il-pin")).to_have_count(0)

    # Compare and the timeline mount the viewer again over a checkpoint's files, read-only
    marks = page.evaluate(f"""async () => {{
        const module = {HOST}.module;
        const el = document.createElement('div');
        document.body.append(el);
        const files = {HOST}.files.map((f) => f.path === 'choices.json'
            ? {{...f, content: JSON.stringify({{'fox-1': {{status: 'picked', starred: true, comment: 'old'}}}})}} : f);
        const ctx = {{readOnly: true, snapshot: {{ref: 1, side: 'before'}}, files, locale: 'en',
            contentUrl: (p) => '/content/' + p, baseUrl: '/content/', setSelection() {{}}, onLocaleChange: () => () => {{}} }};
        const viewer = await module.mount(el, ctx);
        const out = {{buttons: el.querySelectorAll('.il-marks button, .il-ask button').length,
            picked: [...el.querySelectorAll('.il-card[data-status=picked]')].map((c) => c.dataset.imageId),
            comment: el.querySelector('.il-card[data-image-id=fox-1] .il-comment').textContent}};
        viewer.destroy();
        el.remove();
        return out;
    }}""")
    assert marks == {"buttons": 0, "picked": ["fox-1"], "comment": "old"}
    # the live mount still writes: its marks were not taken over by the snapshot
    expect(card(page, "lighthouse-2").locator(".il-pick")).to_be_visible()


def test_a_broken_row_and_a_file_that_is_not_an_image_are_named(board: tuple[Any, Any]) -> None:
    server, page = board
    ws = server.workspace
    board_file = ws / "board.json"
    before = board_file.read_text(encoding="utf-8")
    data = json.loads(before)
    long_title = "Lighthouse" * 60  # one unbroken word wider than any window
    data["rows"][0]["title"] = long_title
    data["title"] = long_title
    data["rows"][1]["images"] += ["fake", "outside"]
    data["rows"].append({"title": "no id", "images": "fox-1"})
    (ws / "images" / "fake.png").write_text("not a picture at all", encoding="utf-8")
    (ws / "images" / "outside.png").symlink_to("/etc/hostname")
    board_file.write_text(json.dumps(data), encoding="utf-8")
    choices_before = (ws / "choices.json").read_text(encoding="utf-8")
    long_comment = {"status": None, "starred": False, "comment": "much too dark " * 2000}
    (ws / "choices.json").write_text(json.dumps({"fox-1": long_comment}), encoding="utf-8")
    try:
        # a comment as long as a book keeps its card the size of a card
        # (the board and the choices arrive as two changes, each drawing the board
        # again: measure the card as it is once both are on the page)
        expect(page.locator(".il-problem", has_text="row 3")).to_be_visible()
        expect(card(page, "fox-1").locator(".il-comment")).to_contain_text("much too dark")
        page.wait_for_function(
            """() => {
                const c = document.querySelector(".il-card[data-image-id='fox-1']");
                const h = c ? c.getBoundingClientRect().height : 0;
                return c && c.textContent.includes("much too dark") && h > 0 && h < 500;
            }"""
        )
        # the row the viewer cannot use is named in the page and to the agent
        problem = page.locator(".il-problem", has_text="row 3")
        expect(problem).to_contain_text('"images" is not a list of image ids')
        # a picture the browser cannot draw says so in its card, not a broken icon
        expect(card(page, "fake").locator(".il-unreadable")).to_be_visible()
        # a link out of the workspace is not among the workspace's files: its card says the file is missing
        expect(card(page, "outside").locator(".il-missing")).to_be_visible()
        expect(card(page, "outside").locator("img")).to_have_count(0)
        view = viewer_answer(server, "describe-view")["data"]
        assert any('row 3 has no "id"' in p for p in view["problems"]), view["problems"]
        assert any("cannot be drawn" in p and "fake" in p for p in view["problems"]), view["problems"]
        # a long title wraps inside the board instead of widening it
        rows = page.locator(".il-rows")
        assert rows.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
        expect(page.locator(".il-row").first.locator("h2")).to_have_text(long_title)
        # a title as long as a page is cut to a few lines: the rows stay in sight
        assert page.locator(".il-header").bounding_box()["height"] < 260
        assert page.locator(".il-rows").bounding_box()["height"] > 300
        expect(card(page, "lighthouse-1")).to_be_in_viewport()
    finally:
        board_file.write_text(before, encoding="utf-8")
        (ws / "choices.json").write_text(choices_before, encoding="utf-8")
        (ws / "images" / "fake.png").unlink()
        (ws / "images" / "outside.png").unlink()
    expect(page.locator(".il-unreadable")).to_have_count(0)
    expect(page.locator(".il-problem")).to_have_count(0)


def test_the_large_view_on_a_narrow_window_covers_the_board(board: tuple[Any, Any]) -> None:
    _, page = board
    size = page.viewport_size
    page.set_viewport_size({"width": 420, "height": 800})
    try:
        page.evaluate(f"() => {HOST}.instance.closeDetail()")
        card(page, "fox-1").locator(".il-thumb").click()
        detail = page.locator(".il-detail[data-image-id='fox-1']")
        expect(detail).to_be_visible()
        body = page.locator(".il-body").bounding_box()
        box = detail.bounding_box()
        # the large view is readable (not a strip beside a squeezed board) and its close button is in reach
        assert box["width"] >= body["width"] - 2, (box, body)
        detail.locator(".il-close").click()
        expect(page.locator(".il-detail")).to_be_hidden()
        expect(card(page, "fox-1")).to_be_visible()
    finally:
        page.set_viewport_size(size)
