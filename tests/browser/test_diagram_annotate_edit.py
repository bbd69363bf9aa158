"""The diagram viewer's review pins, labels edited in place, and following
the agent (docs/viewer-contract.md, "Annotate, edit in place, follow the
agent"; docs/diagram.md), in Debian's Chromium with the real mermaid bundle.

One `pneuma run --mode diagram` and one page serve the whole module: the
seeded architecture.mmd and message-flow.mmd. The shell's side of a pin
(the Annotate switch, the review list) calls the instance's showPins,
pinPlace, capturePin and reveal; these tests call them the same way and look
at what the person sees (markers on the node, the tab's mark) and at the
bytes on disk.
"""

from __future__ import annotations

import base64
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.module_run import module_page, module_run, pins_loaded, stored_pins

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "plugins" / "diagram" / "pneuma_diagram" / "static" / "vendor" / "mermaid.iife.js"
HOST = "window.pneuma.ui.host"
RENDERED = ".pneuma-diagram[data-state=rendered] .dg-stage svg"

pytestmark = pytest.mark.skipif(not VENDOR.exists(), reason="the mermaid bundle is not built (scripts/build-web)")


@pytest.fixture(scope="module")
def diagram(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    with module_run(tmp_path_factory.mktemp("diagram-annotate"), "diagram") as server:
        with module_page(browser, server.url) as page:
            page.wait_for_selector(RENDERED, timeout=20_000)
            page.wait_for_function(f"() => {HOST} && {HOST}.instance && {HOST}.instance.showPins")
            pins_loaded(page)
            yield server, page


def selected(page: Any, node: str) -> dict[str, Any]:
    """Click the node `node` and return the selection the viewer made of it."""
    page.locator(f".dg-stage g.node[data-node-id={node}]").click()
    return page.evaluate(f"() => {HOST}.instance.viewer.selected")


def on_disk(path: Path, expected: bytes) -> bytes:
    """The file's bytes once they are `expected` (or after 10 s): the viewer
    draws an edit at once, the write reaches the disk a moment later."""
    deadline = time.monotonic() + 10
    while path.read_bytes() != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return path.read_bytes()


def png_size(data_url: str) -> tuple[int, int]:
    raw = base64.b64decode(data_url.split(",", 1)[1])
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", raw[16:24])
    return width, height


def test_a_pin_on_a_node_shows_its_number_there_and_knows_its_place(diagram: tuple[Any, Any]) -> None:
    server, page = diagram
    assert page.evaluate(f"() => {HOST}.module.capabilities") == ["annotate", "edit", "follow"]
    page.locator(".annotate-toggle").click()
    page.locator(".dg-stage g.node[data-node-id=Server]").click()
    stored_pins(server, 1, commented=False)  # the new pin is stored with its place
    comment = page.locator(".pin-box textarea")
    comment.fill("Split it")
    comment.press("Enter")
    marker = page.locator(".dg-stage .dg-pin")
    expect(marker).to_have_text("1")
    # on the node's top right corner, whatever the zoom (the wheel zooms)
    canvas = page.locator(".dg-canvas").bounding_box()
    page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2)
    for zoom in ("60%", "larger"):
        node = page.locator(".dg-stage g.node[data-node-id=Server]").bounding_box()
        box = marker.bounding_box()
        assert abs(box["x"] + box["width"] / 2 - (node["x"] + node["width"])) < 3, zoom
        assert abs(box["y"] + box["height"] / 2 - node["y"]) < 3, zoom
        assert 20 <= box["width"] <= 40  # the same size at every zoom
        before = page.locator(".dg-zoom").inner_text()
        page.mouse.wheel(0, -300)
        expect(page.locator(".dg-zoom")).not_to_have_text(before)

    # the shell stored the pin with the place the viewer gave it: the node's source line
    stored = stored_pins(server, 1)
    assert [(p["comment"], p["place"]) for p in stored] == [("Split it", 'Server["aiohttp server"]')]
    selection = stored[0]["selection"]
    assert (selection["file"], selection["kind"], selection["id"], selection["line"]) == (
        "architecture.mmd", "node", "Server", 9)
    source = server.workspace / "architecture.mmd"
    original = source.read_text(encoding="utf-8")
    # a line added above moves the node, not its place; a new label changes it
    source.write_text("%% moved\n" + original, encoding="utf-8")
    page.wait_for_function(f"() => {HOST}.instance.viewer.files.get('architecture.mmd').startsWith('%% moved')")
    assert page.evaluate(f"(s) => {HOST}.instance.pinPlace(s)", selection) == 'Server["aiohttp server"]'
    source.write_text(original.replace('"aiohttp server"', '"aiohttp app"'), encoding="utf-8")
    page.wait_for_function(f"(s) => {HOST}.instance.pinPlace(s) === 'Server[\"aiohttp app\"]'", arg=selection)
    expect(page.locator(".dg-stage g.node[data-node-id=Server]")).to_contain_text("aiohttp app")
    expect(marker).to_have_text("1")  # the marker came back on the redrawn node

    image = page.evaluate(f"(s) => {HOST}.instance.capturePin({{id: 'x', number: 1, selection: s}})", selection)
    width, height = png_size(image)
    # the node's box, padded, at twice its size: not the whole diagram
    assert 150 < width < 600 and 60 < height < 200, (width, height)
    page.locator(".pin-remove").click()
    expect(marker).to_have_count(0)
    page.locator(".annotate-toggle").click()
    page.locator("[data-act=fit]").click()
    source.write_text(original, encoding="utf-8")
    expect(page.locator(".dg-stage g.node[data-node-id=Server]")).to_contain_text("aiohttp server")
    assert page.console_errors == []


def test_a_label_edited_in_place_changes_only_its_characters(diagram: tuple[Any, Any]) -> None:
    server, page = diagram
    source = server.workspace / "architecture.mmd"
    original = source.read_bytes()
    page.locator(".dg-stage g.node[data-node-id=Server]").dblclick()
    box = page.locator(".dg-label-input")
    expect(box).to_have_value("aiohttp server")
    box.fill('web "app" server')
    box.press("Enter")
    expect(box).to_have_count(0)
    expected = original.replace(b'Server["aiohttp server"]', b'Server["web #quot;app#quot; server"]')
    page.wait_for_function("() => document.querySelector('.dg-stage g.node[data-node-id=Server]')"
                           "?.textContent.includes('web \"app\" server')")
    assert on_disk(source, expected) == expected
    # an edge's label: between its pipes, quotes kept
    page.locator(".dg-stage g.edgeLabel", has_text="stream-json").dblclick()
    expect(box).to_have_value("stream-json")
    box.fill("NDJSON")
    box.press("Enter")
    expected = expected.replace(b'|"stream-json"|', b'|"NDJSON"|')
    expect(page.locator(".dg-stage g.edgeLabel", has_text="NDJSON")).to_have_count(1)
    assert on_disk(source, expected) == expected
    # Esc leaves the file alone
    page.locator(".dg-stage g.edgeLabel", has_text="NDJSON").dblclick()
    box.fill("nothing")
    box.press("Escape")
    expect(box).to_have_count(0)
    assert on_disk(source, expected) == expected
    source.write_bytes(original)
    expect(page.locator(".dg-stage g.edgeLabel", has_text="stream-json")).to_have_count(1)
    assert page.console_errors == []


def test_a_label_the_source_does_not_write_is_refused_with_a_note(diagram: tuple[Any, Any]) -> None:
    server, page = diagram
    source = server.workspace / "architecture.mmd"
    original = source.read_bytes()
    # a node written by its bare id: its label is nowhere in the source as a label
    source.write_bytes(original + b"  Server --> Cache\n")
    cache = page.locator(".dg-stage g.node[data-node-id=Cache]")
    expect(cache).to_have_count(1)
    cache.dblclick()
    box = page.locator(".dg-label-input")
    box.fill("Redis")
    box.press("Enter")
    note = page.locator(".dg-edit-note")
    expect(note).to_be_visible()
    assert note.get_attribute("data-reason") == "edit.unmapped"
    assert source.read_bytes() == original + b"  Server --> Cache\n"
    source.write_bytes(original)
    expect(cache).to_have_count(0)


def test_a_broken_diagram_written_in_the_background_is_marked_on_its_tab(diagram: tuple[Any, Any]) -> None:
    server, page = diagram
    (server.workspace / "broken.mmd").write_text("flowchart TD\n  A --> B\n  B --> [oops\n", encoding="utf-8")
    tab = page.locator(".dg-tab[data-path='broken.mmd']")
    expect(tab).to_have_class("dg-tab broken")
    expect(tab).to_contain_text("⚠")
    assert "line 3" in (tab.get_attribute("title") or "")
    # it stays in the background: architecture.mmd is still the diagram on screen
    assert page.get_attribute(".dg-tab[aria-selected=true]", "data-path") == "architecture.mmd"
    problems = page.evaluate(f"() => {HOST}.instance.problems()")
    assert list(problems) == ["broken.mmd"] and "3" in problems["broken.mmd"]
    (server.workspace / "broken.mmd").write_text("flowchart TD\n  A --> B\n", encoding="utf-8")
    expect(tab).to_have_class("dg-tab")
    assert page.evaluate(f"() => {HOST}.instance.problems()") == {}
    (server.workspace / "broken.mmd").unlink()
    expect(tab).to_have_count(0)


def test_reveal_brings_a_diagram_to_the_front(diagram: tuple[Any, Any]) -> None:
    _server, page = diagram
    assert page.evaluate(f"() => {HOST}.instance.reveal('message-flow.mmd')") is True
    assert page.get_attribute(".dg-tab[aria-selected=true]", "data-path") == "message-flow.mmd"
    expect(page.locator(".dg-stage [data-type=participant][data-id=Agent]").first).to_be_visible()
    assert page.evaluate(f"() => {HOST}.instance.reveal('notes.md')") is False
    assert page.evaluate(f"() => {HOST}.instance.reveal('architecture.mmd')") is True
    page.wait_for_selector(".dg-stage g.node[data-node-id=Server]")
    assert page.console_errors == []


def test_a_label_edit_racing_an_agent_write_loses_neither(diagram: tuple[Any, Any]) -> None:
    server, page = diagram
    source = server.workspace / "architecture.mmd"
    original = source.read_text(encoding="utf-8")
    page.locator(".dg-stage g.node[data-node-id=Watcher]").dblclick()
    box = page.locator(".dg-label-input")
    expect(box).to_have_value("File watcher")
    box.fill("watchfiles")
    # the agent writes while the person types
    theirs = original + "  Watcher --> Tools\n"
    source.write_text(theirs, encoding="utf-8")
    page.wait_for_function(f"() => {HOST}.instance.viewer.files.get('architecture.mmd').endsWith('Watcher --> Tools\\n')")
    box.press("Enter")
    dialog = page.locator(".edit-conflict")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".edit-conflict-theirs textarea")).to_have_value(theirs)
    dialog.locator(".edit-conflict-mine-button").click()
    expect(dialog).to_have_count(0)
    mine = theirs.replace('Watcher["File watcher"]', 'Watcher["watchfiles"]')
    # the person's change made on the agent's text: both are on disk, and on screen
    assert on_disk(source, mine.encode()) == mine.encode()
    page.wait_for_function(f"(mine) => {HOST}.instance.viewer.files.get('architecture.mmd') === mine", arg=mine)
    expect(page.locator(".dg-stage g.node[data-node-id=Watcher]")).to_contain_text("watchfiles")
    source.write_text(original, encoding="utf-8")
    expect(page.locator(".dg-stage g.node[data-node-id=Watcher]")).to_contain_text("File watcher")


def test_a_sequence_participant_and_message_are_edited_in_place(diagram: tuple[Any, Any]) -> None:
    server, page = diagram
    source = server.workspace / "message-flow.mmd"
    original = source.read_bytes()
    assert page.evaluate(f"() => {HOST}.instance.reveal('message-flow.mmd')") is True
    box = page.locator(".dg-label-input")
    page.locator(".dg-stage text.actor", has_text="Pneuma server").first.dblclick()
    expect(box).to_have_value("Pneuma server")
    box.fill("Pneuma host")
    box.press("Enter")
    expected = original.replace(b"participant Server as Pneuma server", b"participant Server as Pneuma host")
    expect(page.locator(".dg-stage text.actor", has_text="Pneuma host").first).to_be_visible()
    assert on_disk(source, expected) == expected
    page.locator(".dg-stage text.messageText", has_text="content_update").dblclick()
    expect(box).to_have_value("content_update")
    box.fill("files changed; redraw")
    box.press("Enter")
    expected = expected.replace(b"Browser: content_update", b"Browser: files changed#59; redraw")
    expect(page.locator(".dg-stage text.messageText", has_text="files changed; redraw")).to_have_count(1)
    assert on_disk(source, expected) == expected
    source.write_bytes(original)
    expect(page.locator(".dg-stage text.actor", has_text="Pneuma server").first).to_be_visible()
    assert page.evaluate(f"() => {HOST}.instance.reveal('architecture.mmd')") is True
