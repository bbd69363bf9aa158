"""The webcraft viewer's annotate, edit-in-place and follow capabilities
(docs/viewer-contract.md, "Annotate, edit in place, follow the agent"), in the
real shell and Debian's Chromium, through the viewer instance the shell
calls (``window.pneuma.ui.host.instance``):

* pins on two picked elements show as numbered markers over them (drawn over
  the frame from the positions the bridge reports) and follow a scroll; their
  crops come from the server in one request, each the element's box; a
  pin's place changes when its element's source changes and not when another
  one does; revealing a pin scrolls to its element and flashes it;
* ``reveal`` brings a page to the front; a page with console errors is marked
  on its tab and named by ``problems()``;
* a double-clicked paragraph is edited in place: Enter writes exactly that
  text node's bytes to disk; Esc puts it back; text the page's script made is
  refused with a notice and nothing is written.
"""

from __future__ import annotations

import base64
import re
import struct
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import api_call

INSTANCE = "window.pneuma.ui.host.instance"


def shown(page: Any) -> Any:
    return page.frame_locator('iframe.webcraft-frame[data-viewport="desktop"]')


def wait_ready(page: Any, heading: str) -> None:
    expect(shown(page).locator("h1")).to_have_text(heading, timeout=15_000)
    # The bridge has reported: the viewer's primary frame knows its document.
    page.wait_for_function(f"() => {INSTANCE}.viewer.primaryFrame().info !== null")


def pick(page: Any, selector: str) -> dict[str, Any]:
    """The person picks an element with the Select tool; returns the selection."""
    if page.locator(".webcraft-pick").get_attribute("aria-pressed") != "true":
        page.click(".webcraft-pick")
    before = page.evaluate(f"() => JSON.stringify({INSTANCE}.viewer.selection)")
    shown(page).locator(selector).first.click()
    page.wait_for_function(f"(b) => JSON.stringify({INSTANCE}.viewer.selection) !== b", arg=before)
    selection: dict[str, Any] = page.evaluate(f"() => {INSTANCE}.viewer.selection")
    return selection


def marker_boxes(page: Any) -> dict[str, Any]:
    markers = page.locator(".webcraft-pin-marker")
    return {m.inner_text(): m.bounding_box() for m in markers.all()}


@pytest.fixture
def site(pneuma_server: Any, open_page: Any) -> tuple[Any, Any]:
    server = pneuma_server("webcraft", backend="none")
    page = open_page(server)
    wait_ready(page, "Notes that think with you.")
    return server, page


def test_pins_show_as_markers_their_place_tracks_the_source_and_reveal_follows(site: tuple[Any, Any]) -> None:
    server, page = site
    assert page.evaluate("() => window.pneuma.ui.host.module.capabilities") == ["annotate", "edit", "follow"]
    heading = pick(page, "h1")
    lead = pick(page, "p.lead")
    # A double-click while selecting picks once (each pick may become a pin).
    page.evaluate(f"""() => {{ const ctx = {INSTANCE}.viewer.ctx, set = ctx.setSelection;
        window.__picks = 0; ctx.setSelection = (s) => {{ window.__picks += 1; return set(s); }}; }}""")
    shown(page).locator("#features-title").dblclick()
    page.wait_for_function(f"() => {INSTANCE}.viewer.selection.selector === '#features-title'")
    expect(shown(page).locator("#features-title")).not_to_have_attribute("contenteditable", "plaintext-only")
    assert page.evaluate("() => window.__picks") == 1
    page.click(".webcraft-pick")  # Select off again
    assert heading["page"] == "index.html" and heading["tag"] == "h1"
    pins = [
        {"id": "a", "number": 1, "selection": heading, "comment": "Shorter", "status": "open"},
        {"id": "b", "number": 2, "selection": lead, "comment": "Friendlier", "status": "open"},
    ]
    page.evaluate(f"(pins) => {INSTANCE}.showPins(pins)", pins)
    expect(page.locator(".webcraft-pin-marker")).to_have_count(2)
    boxes = marker_boxes(page)
    for number, selector in (("1", "h1"), ("2", "p.lead")):
        element = shown(page).locator(selector).bounding_box()
        marker = boxes[number]
        # The badge sits on the element's top-left corner, in the page's coordinates.
        assert abs(marker["x"] - element["x"]) < 16 and abs(marker["y"] - element["y"]) < 16, (number, marker, element)

    # Each pin's crop: one request for both, a PNG of the element's box (plus a margin).
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/webcraft/crops" in r.url else None)
    for pin, selector in ((pins[0], "h1"), (pins[1], "p.lead")):
        url = page.evaluate(f"(pin) => {INSTANCE}.capturePin(pin)", pin)
        assert url and url.startswith("data:image/png;base64,"), url
        png = base64.b64decode(url.split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", png[16:24])
        box = shown(page).locator(selector).evaluate("(el) => el.getBoundingClientRect().toJSON()")
        assert abs(width - (box["width"] + 16)) <= 4 and abs(height - (box["height"] + 16)) <= 4, (width, height, box)
    assert len(asked) == 1, asked
    # An addressed pin's marker says so.
    page.evaluate(f"(pins) => {INSTANCE}.showPins(pins)", [pins[0], {**pins[1], "status": "addressed"}])
    expect(page.locator('.webcraft-pin-marker[data-pin="2"]')).to_have_attribute("data-status", "addressed")
    expect(page.locator('.webcraft-pin-marker[data-pin="1"]')).to_have_attribute("data-status", "open")
    # The crop route takes pages inside the workspace and known widths only.
    for body in ({"crops": [{"key": "a", "page": "../etc/passwd", "selector": "h1"}]},
                 {"crops": [{"key": "a", "page": "index.html", "selector": "h1", "viewport": "watch"}]},
                 {"crops": "h1"}):
        status, answer = api_call(server, "POST", "/api/webcraft/crops", body)
        assert (status, answer["error"]["code"]) in ((400, "E_BAD_ARGS"), (403, "E_DENY_PATH")), (status, answer)

    # A scroll of the page moves the markers with it.
    y_before = boxes["1"]["y"]
    shown(page).locator("body").evaluate("() => scrollTo(0, 120)")
    page.wait_for_function("(y) => document.querySelector('.webcraft-pin-marker').getBoundingClientRect().y < y - 40",
                           arg=y_before)

    # The place of a pin changes with its element's source, not with another's.
    place = f"(s) => {INSTANCE}.pinPlace(s, window.pneuma.ui.host.files)"
    heading_place, lead_place = page.evaluate(place, heading), page.evaluate(place, lead)
    assert "Notes that think with you." in heading_place and "Lumen links" in lead_place
    index = server.workspace / "index.html"
    index.write_text(index.read_text().replace("Notes that think with you.", "Notes that listen."))
    page.wait_for_function(f"(p) => {INSTANCE}.pinPlace(p.s, window.pneuma.ui.host.files) !== p.before",
                           arg={"s": heading, "before": heading_place})
    assert page.evaluate(place, lead) == lead_place
    wait_ready(page, "Notes that listen.")

    # Revealing a pin scrolls its element into view and flashes it.
    shown(page).locator("body").evaluate("() => scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate(f"(pin) => {INSTANCE}.revealPin(pin)", pins[1]) is True
    expect(shown(page).locator("p.lead")).to_have_class(re.compile(r"\bwebcraft-flash\b"))
    expect(shown(page).locator("p.lead")).to_be_in_viewport()

    # Another page: its tab comes to the front and the index's markers go.
    assert page.evaluate(f"() => {INSTANCE}.reveal('about.html')") is True
    expect(page.locator('.webcraft-tab[aria-selected="true"]')).to_have_attribute("data-page", "about.html")
    expect(page.locator(".webcraft-pin-marker")).to_have_count(0)
    # A stylesheet the page on show uses is on show already; a file it does not use is not.
    page.wait_for_function(f"() => {INSTANCE}.viewer.uses && {INSTANCE}.viewer.uses.has('css/style.css')")
    assert page.evaluate(f"() => {INSTANCE}.reveal('css/style.css')") is True
    assert page.evaluate(f"() => {INSTANCE}.reveal('notes.txt')") is False

    # A page the agent broke: revealed, its console error marks its tab.
    (server.workspace / "broken.html").write_text(
        "<!doctype html><html lang='en'><head><title>Broken</title></head><body><h1>Broken</h1>"
        "<script>undefinedThing.go();</script></body></html>")
    page.wait_for_function(f"() => {INSTANCE}.viewer.pagesNow().includes('broken.html')")
    assert page.evaluate(f"() => {INSTANCE}.reveal('broken.html')") is True
    tab = page.locator('.webcraft-tab[data-page="broken.html"]')
    expect(tab).to_have_class(re.compile(r"\bhas-problem\b"))
    problems = page.evaluate(f"() => {INSTANCE}.problems()")
    assert list(problems) == ["broken.html"] and "undefinedThing" in problems["broken.html"]
    expect(page.locator('.webcraft-tab[data-page="index.html"]')).not_to_have_class(re.compile(r"\bhas-problem\b"))
    assert "undefinedThing" in (tab.get_attribute("title") or "")
    # The errors panel opens on top of the page (not under its frame).
    page.click(".webcraft-errors-button")
    expect(page.locator(".webcraft-error-panel li")).to_have_count(1)
    assert page.evaluate("""() => { const panel = document.querySelector('.webcraft-error-panel');
        const r = panel.getBoundingClientRect();
        return panel.contains(document.elementFromPoint(r.left + r.width / 2, r.top + 12)); }""")


def edit_in_place(page: Any, selector: str, text: str, key: str = "Enter") -> None:
    """Double-click the element in the page, replace its text, press `key`."""
    target = shown(page).locator(selector)
    target.dblclick()
    expect(target).to_have_attribute("contenteditable", "plaintext-only")
    # The shell sees an edit under way (it does not follow the agent meanwhile).
    expect(page.locator(".webcraft-viewer")).to_have_attribute("data-pneuma-busy", "")
    target.press("Control+a")
    target.press_sequentially(text)
    target.press(key)


def wait_for_bytes(path: Path, expected: bytes, page: Any = None, timeout: float = 10) -> None:
    """``path`` holds ``expected``; with ``page``, the viewer has that
    content too and shows the document loaded from it (the reload a save
    causes is over: no later step races it)."""
    deadline = time.monotonic() + timeout
    while path.read_bytes() != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.read_bytes() == expected
    if page is None:
        return
    state = f"""(text) => {{ const v = {INSTANCE}.viewer, frame = v.primaryFrame();
        const file = v.files.find((f) => f.path === 'index.html');
        return {{ content: !!file && file.content === text, ready: frame.info !== null,
                 loading: frame.incoming !== null, editing: v.editing, reloadAfterEdit: !!v.reloadAfterEdit }}; }}"""
    while True:
        now = page.evaluate(state, expected.decode())
        if now["content"] and now["ready"] and not now["loading"]:
            return
        assert time.monotonic() < deadline + 30, f"the viewer did not show the saved page: {now}"
        page.wait_for_timeout(50)


def test_text_edited_in_place_changes_exactly_its_bytes_and_script_text_is_refused(site: tuple[Any, Any]) -> None:
    server, page = site
    index = server.workspace / "index.html"
    original = index.read_bytes()

    # Esc puts the text back and writes nothing.
    edit_in_place(page, "h1", "Never mind", key="Escape")
    expect(shown(page).locator("h1")).to_have_text("Notes that think with you.")
    expect(shown(page).locator("h1")).not_to_have_attribute("contenteditable", "plaintext-only")
    expect(page.locator(".webcraft-viewer")).not_to_have_attribute("data-pneuma-busy", "")

    # Enter writes the paragraph's text node and nothing else.
    edit_in_place(page, "p.lead", "Lumen keeps your notes & plans <together>.")
    expected = original.replace(
        b"Lumen links what you write, surfaces what you forgot and turns scattered thoughts into clear plans.",
        b"Lumen keeps your notes &amp; plans &lt;together&gt;.")
    wait_for_bytes(index, expected, page)
    expect(shown(page).locator("p.lead")).to_have_text("Lumen keeps your notes & plans <together>.")

    # Ctrl-Z (pressed in the page: the viewer hands it to the shell) undoes it, Ctrl-Y redoes it.
    edited = expected
    shown(page).locator("body").press("Control+z")
    wait_for_bytes(index, original, page)
    shown(page).locator("body").press("Control+y")
    wait_for_bytes(index, edited, page)

    # One word inside a paragraph with markup around it: only those bytes.
    edit_in_place(page, "#pricing strong", "$8 a month")
    expected = expected.replace(b"<strong>$6 a month</strong>", b"<strong>$8 a month</strong>")
    wait_for_bytes(index, expected, page)

    # The agent writes the page while the person edits it: the page stays
    # under their caret, the save is a conflict showing both versions, and
    # with "Keep theirs" the agent's file stays and the person's text is kept aside.
    target = shown(page).locator("p.lead")
    target.dblclick()
    expect(target).to_have_attribute("contenteditable", "plaintext-only")
    theirs = expected.replace(b"Notes that think with you.", b"Notes that listen.")
    index.write_bytes(theirs)
    page.wait_for_function(f"() => {INSTANCE}.viewer.files.some((f) => f.path === 'index.html'"
                           " && f.content.includes('Notes that listen.'))")
    expect(target).to_have_attribute("contenteditable", "plaintext-only")  # not reloaded under the caret
    target.press("Control+a")
    target.press_sequentially("Mine, typed meanwhile.")
    target.press("Enter")
    dialog = page.locator('[data-kind="edit-conflict"]')
    expect(dialog.locator("textarea").first).to_have_value(re.compile("Notes that listen[.]"))
    expect(dialog.locator("textarea").last).to_have_value(re.compile("Mine, typed meanwhile[.]"))
    dialog.locator(".edit-conflict-theirs-button").click()
    expect(page.locator(".webcraft-notice")).to_be_visible()
    wait_ready(page, "Notes that listen.")
    assert index.read_bytes() == theirs
    kept = [p.read_text() for p in (server.workspace / ".pneuma" / "edits" / "conflicts").rglob("*") if p.is_file()]
    assert any("Mine, typed meanwhile." in text for text in kept), kept

    # Text the page's own script made is not in the HTML: refused, nothing written.
    dynamic = server.workspace / "dynamic.html"
    dynamic.write_text(
        "<!doctype html><html lang='en'><head><title>Dynamic</title></head><body><h1>Dynamic</h1>"
        "<p id='made'></p><script>document.getElementById('made').textContent = 'Made by script';</script>"
        "</body></html>")
    page.wait_for_function(f"() => {INSTANCE}.viewer.pagesNow().includes('dynamic.html')")
    page.click('.webcraft-tab[data-page="dynamic.html"]')
    wait_ready(page, "Dynamic")
    before = dynamic.read_bytes()
    edit_in_place(page, "#made", "Changed by hand")
    expect(page.locator(".webcraft-notice")).to_contain_text("made by the page's own script")
    expect(shown(page).locator("#made")).to_have_text("Made by script")
    assert dynamic.read_bytes() == before
    # The browser logs the refused save's 409 itself; nothing else went wrong.
    assert [e for e in page.console_errors if "409 (Conflict)" not in e] == []


def test_a_reload_that_lands_during_an_edit_waits_for_it_and_esc_always_leaves_editing(
        site: tuple[Any, Any]) -> None:  # fmt: skip
    """The agent changes the stylesheet; its reload of the page is still
    loading when the person double-clicks the heading. The reload must not
    replace the document under their caret (CI saw the edit vanish that
    way): Esc puts the text back and leaves editing, then the page shows
    the agent's change."""
    server, page = site
    held: list[Any] = []

    def hold_first_reload(route: Any) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(re.compile(r"/index\.html\?token="), hold_first_reload)
    style = server.workspace / "css" / "style.css"
    style.write_text(style.read_text() + "\nh1 { letter-spacing: 3px; }\n")
    deadline = time.monotonic() + 10
    while not held:  # the reload's document is asked for and held: it is loading underneath
        assert time.monotonic() < deadline, "the stylesheet change did not reload the page"
        page.wait_for_timeout(20)
    heading = shown(page).locator("h1")
    heading.dblclick()
    expect(heading).to_have_attribute("contenteditable", "plaintext-only")
    expect(page.locator(".webcraft-viewer")).to_have_attribute("data-pneuma-busy", "")
    held[0].continue_()
    # Nothing is on its way to replace the document on show while the edit lasts.
    page.wait_for_function(f"() => {INSTANCE}.viewer.primaryFrame().incoming === null")
    expect(heading).to_have_attribute("contenteditable", "plaintext-only")
    heading.press("Control+a")
    heading.press_sequentially("Never mind")
    heading.press("Escape")
    expect(heading).to_have_text("Notes that think with you.")
    expect(heading).not_to_have_attribute("contenteditable", "plaintext-only")
    expect(page.locator(".webcraft-viewer")).not_to_have_attribute("data-pneuma-busy", "")
    # The edit over, the agent's change is shown.
    expect(heading).to_have_css("letter-spacing", "3px")
    wait_ready(page, "Notes that think with you.")


def test_annotate_switch_turns_select_on_and_back_off(site: tuple[Any, Any]) -> None:
    """Turning Annotate on puts webcraft in Select, so the next click pins at
    once; turning it off leaves Select as the person had it."""
    _server, page = site
    pick_button = page.locator(".webcraft-pick")
    expect(pick_button).to_have_attribute("aria-pressed", "false")
    page.click(".annotate-toggle")
    expect(pick_button).to_have_attribute("aria-pressed", "true")
    shown(page).locator("h1").first.click()
    expect(page.locator(".pin-box")).to_be_visible()  # the click made a pin at once
    page.keyboard.press("Escape")  # closes its comment box
    page.click(".annotate-toggle")
    expect(pick_button).to_have_attribute("aria-pressed", "false")
    # Select the person turned on themselves stays on after Annotate.
    page.click(".webcraft-pick")
    page.click(".annotate-toggle")
    page.click(".annotate-toggle")
    expect(pick_button).to_have_attribute("aria-pressed", "true")
