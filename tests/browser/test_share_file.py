"""Issue 29's Done-when for sharing (docs/sharing.md, "Share as one file"):
a 5-turn slide session shared to one file with `pneuma share`, opened from
file:// in Chromium with the network off and every request but the file's
own refused: the deck renders, choosing turn 2 shows turn 2's slides and
what that turn changed, the conversation is there, and the file holds no
token, key or home path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pneuma.share import inline
from pneuma.share.model import ShareData, SharedTurn
from pneuma.testing.slide_session import make_slide_session

API_KEY = "sk-ant-api03-Pl4ntedInTheChat-0123456789abcdefXYZ"
SESSION_TOKEN = "pn-session-7c1f9e2ab34d5e6f70819a2b"
HOME_PATH = "/home/alice/private/plan.txt"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The shared file of a 5-turn slide session, made as a person makes it."""
    root = tmp_path_factory.mktemp("share")
    session = make_slide_session(
        root / "deck", 5, planted=f"my key is {API_KEY}, read {HOME_PATH}",
        answer_extra=f"Used the token {SESSION_TOKEN} from {HOME_PATH}.")
    output = root / "deck-share.html"
    # The agent's shell in a session carries the session's token (PNEUMA_TOKEN):
    # `pneuma share` run there must leave it out of the file.
    env = {**os.environ, "PNEUMA_TOKEN": SESSION_TOKEN}
    done = subprocess.run([sys.executable, "-m", "pneuma", "share", "-w", str(session.workspace),
                           "-o", str(output)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {"path": output, "session": session}


def open_offline(browser: Any, path: Path, locale: str = "en-US") -> tuple[Any, Any]:
    """The file from file://, offline, every other request aborted and listed."""
    url = path.resolve().as_uri()
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 820}, locale=locale)
    asked: list[str] = []

    def only_the_file(route: Any) -> None:
        asked.append(route.request.url)
        if route.request.url == url:
            route.continue_()
        else:
            route.abort()

    context.route("**/*", only_the_file)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("requestfailed", lambda request: errors.append(f"request failed: {request.url}"))
    page.goto(url)
    page.wait_for_selector("#share-root[data-state=ready]", timeout=20_000)
    page.asked = asked
    page.errors = errors
    return context, page


@pytest.fixture(scope="module")
def offline_page(browser: Any, shared: dict[str, Any]) -> Iterator[Any]:
    context, page = open_offline(browser, shared["path"])
    yield page
    context.close()


def slide_titles(page: Any) -> list[str]:
    """The title of every slide in the deck's thumbnails, in order."""
    frames = page.locator(".share-stage iframe.pns-frame--thumb")
    titles = []
    for index in range(frames.count()):
        titles.append(page.frame_locator(".share-stage iframe.pns-frame--thumb").nth(index)
                      .locator("h1").inner_text(timeout=5_000))
    return titles


def test_the_deck_renders_from_file_with_the_network_off(offline_page: Any) -> None:
    page = offline_page
    assert page.locator(".share-tick").count() == 5
    assert page.locator(".share-tick[aria-pressed=true]").inner_text() == "5"
    assert slide_titles(page) == [f"Slide {n}, turn {n}" for n in range(1, 6)]
    stage = page.frame_locator(".share-stage iframe.pns-frame--stage").locator("h1")
    assert stage.inner_text() == "Slide 5, turn 5"  # the slide the last turn changed
    # Nothing but the file itself was asked for, and nothing failed.
    assert set(page.asked) == {page.url}
    assert page.errors == []


def test_choosing_turn_2_shows_turn_2_s_slides_and_what_it_changed(offline_page: Any) -> None:
    page = offline_page
    page.locator(".share-slider").fill("2")  # scrub the timeline back to turn 2
    page.wait_for_selector("#share-root[data-state=ready][data-turn='2']")
    assert slide_titles(page) == ["Slide 1, turn 1", "Slide 2, turn 2", "Slide 3", "Slide 4", "Slide 5"]
    stage = page.frame_locator(".share-stage iframe.pns-frame--stage").locator("h1")
    assert stage.inner_text() == "Slide 2, turn 2"
    assert page.locator(".share-change-where").all_inner_texts() == ["Slide 2"]
    assert "Turn 2 of 5" in page.locator(".share-turn-label").inner_text()
    # The chat holds every turn; those after turn 2 are dimmed.
    messages = page.locator(".share-msg")
    assert messages.count() == 10
    assert "Turn 1: retitle slide 1." in messages.nth(0).inner_text()
    assert page.locator(".share-msg[data-later]").count() == 6
    # A tool call is collapsed to its name and one line.
    tools = messages.nth(1).locator("details.share-tools")
    assert tools.get_attribute("open") is None
    assert "1 tool call" in tools.locator("summary").inner_text()
    # A message leads to its turn.
    messages.nth(4).locator(".share-msg-turn").click()
    page.wait_for_selector("#share-root[data-state=ready][data-turn='3']")
    assert "Slide 3, turn 3" in slide_titles(page)
    assert set(page.asked) == {page.url}
    assert page.errors == []


def test_the_file_holds_no_token_key_or_home_path(shared: dict[str, Any]) -> None:
    text = shared["path"].read_text(encoding="utf-8")
    assert "Turn 3: retitle slide 3." in text  # the conversation is in it
    for secret in (API_KEY, SESSION_TOKEN, "/home/alice", str(shared["session"].workspace),
                   str(Path.home()) + "/"):
        assert secret not in text, secret


SITE = {
    "index.html": '<!doctype html><html><head><link rel="stylesheet" href="css/site.css"></head>'
                  '<body><h1>Lumen</h1><img id="logo" src="img/dot.svg" alt="">'
                  '<script src="js/app.js"></script></body></html>',
    "css/site.css": "h1 { color: rgb(91, 78, 240); }",
    "js/app.js": "document.body.dataset.ran = 'yes';"
                 "try { document.body.dataset.parent = String(window.parent.document.title); }"
                 "catch (error) { document.body.dataset.parent = 'refused'; }",
    "img/dot.svg": '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><circle r="4" cx="4" cy="4"/></svg>',
}


def test_a_site_s_page_runs_its_script_in_a_frame_that_cannot_reach_the_file(
        browser: Any, tmp_path: Path) -> None:
    data = ShareData(mode="webcraft", title="Site", created_at=1)
    tree = {path: data.add_content(text.encode()) for path, text in SITE.items()}
    data.turns = [SharedTurn("1", "make a site", 10, tree)]
    path = tmp_path / "site-share.html"
    path.write_text(inline.page("webcraft", data), encoding="utf-8")
    # A browser asking for Chinese gets the page's words in Chinese.
    context, page = open_offline(browser, path, locale="zh-CN")
    try:
        assert page.locator(".share-turn-label").inner_text() == "第 1 轮，共 1 轮"
        frame = page.locator(".share-stage iframe.webcraft-frame")
        sandbox = frame.get_attribute("sandbox").split()
        assert "allow-scripts" in sandbox and "allow-same-origin" not in sandbox
        body = page.frame_locator(".share-stage iframe.webcraft-frame").locator("body")
        heading = page.frame_locator(".share-stage iframe.webcraft-frame").locator("h1")
        assert heading.inner_text() == "Lumen"
        assert heading.evaluate("h => getComputedStyle(h).color") == "rgb(91, 78, 240)"
        assert page.frame_locator(".share-stage iframe.webcraft-frame").locator("#logo") \
            .evaluate("img => img.complete && img.naturalWidth") == 8
        # The workspace's script ran, with an origin of its own: the file's page is out of its reach.
        assert body.get_attribute("data-ran") == "yes"
        assert body.get_attribute("data-parent") == "refused"
        assert set(page.asked) == {page.url}
    finally:
        context.close()
