"""The dashboard viewer (plugins/dashboard/pneuma_dashboard/static/viewer.js)
in the real shell, in Debian's Chromium, with the real vega bundle.

One `pneuma run --mode dashboard` on the seeded sales board and one page
serve the module; tests read what the person sees from the DOM and from
screenshots, ask viewer actions over HTTP as the agent does, edit files on
disk as the agent does, and read back what the page wrote to disk. Each
test leaves the board as it found it.
"""

from __future__ import annotations

import base64
import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops
from playwright.sync_api import expect

from tests.browser.browser_helpers import viewer_answer
from tests.browser.module_run import module_page, module_run, pins_loaded, stored_pins

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "plugins" / "dashboard" / "pneuma_dashboard" / "static" / "vendor" / "vega.iife.js"
HOST = "window.pneuma.ui.host"
TILE = ".db-tile[data-tile='{}']"
DRAWN = ".db-tile[data-tile='{}'][data-state=rendered]"

pytestmark = pytest.mark.skipif(not VENDOR.exists(), reason="the vega bundle is not built (scripts/build-web)")


@pytest.fixture(scope="module")
def board(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    with module_run(tmp_path_factory.mktemp("dashboard"), "dashboard") as server:
        with module_page(browser, server.url) as page:
            page.wait_for_selector(DRAWN.format("revenue-by-product") + " svg .mark-rect path", timeout=20_000)
            yield server, page


def on_disk(path: Path, check: Any, timeout: float = 10) -> str:
    """The file's text once `check(text)` holds (or after `timeout` s)."""
    deadline = time.monotonic() + timeout
    text = path.read_text(encoding="utf-8")
    while not check(text) and time.monotonic() < deadline:
        time.sleep(0.05)
        text = path.read_text(encoding="utf-8")
    return text


def tile_png(page: Any, tile: str) -> Image.Image:
    return Image.open(io.BytesIO(page.locator(TILE.format(tile) + " .db-tile-body").screenshot())).convert("RGB")


def test_the_seed_board_draws_every_tile(board: tuple[Any, Any]) -> None:
    server, page = board
    for tile in ("about", "total-revenue", "total-units", "revenue-by-month", "revenue-by-product", "latest-rows"):
        expect(page.locator(DRAWN.format(tile))).to_have_count(1)
    assert page.locator(".db-title").inner_text() == "Sales 2025–2026"
    assert page.locator(TILE.format("revenue-by-product") + " .mark-rect path").count() == 3
    assert page.locator(TILE.format("latest-rows") + " tbody tr").count() == 100
    expect(page.locator(TILE.format("about") + " strong").first).to_have_text("three products")
    view = viewer_answer(server, "describe-view")
    assert view["success"] and view["data"]["columns"] == 12
    tiles = {t["id"]: t for t in view["data"]["tiles"]}
    assert tiles["revenue-by-month"] == {**tiles["revenue-by-month"], "x": 0, "y": 2, "w": 8, "h": 4,
                                         "rendered": True, "error": None, "rows": 288}
    got = viewer_answer(server, "get-tile", {"tile": "revenue-by-product"})["data"]
    assert got["rows"] == 288 and got["spec"]["mark"] == "bar"
    assert sorted(v["product"] for v in got["values"]) == ["Backpack", "Desk lamp", "Notebook"]
    assert all(v["sum_revenue"] > 0 for v in got["values"])
    assert page.console_errors == []


def test_a_changed_csv_redraws_its_chart(board: tuple[Any, Any]) -> None:
    server, page = board
    csv = server.workspace / "data" / "sales.csv"
    original = csv.read_text(encoding="utf-8")
    before = tile_png(page, "revenue-by-product")
    page.evaluate("() => { document.querySelector(\"[data-tile='about'] .db-markdown\").dataset.kept = '1'; }")
    # the agent's edit: one month in which desk lamps sold a thousandfold
    csv.write_text(original + "2026-12-01,West,Desk lamp,900,900000.00\n", encoding="utf-8")
    page.wait_for_function("() => window.pneuma.ui.host.instance.viewer.cards.get('revenue-by-product').rowCount === 289")
    page.wait_for_selector(DRAWN.format("revenue-by-product") + " svg .mark-rect path")
    after = tile_png(page, "revenue-by-product")
    assert before.size == after.size
    assert ImageChops.difference(before, after).getbbox() is not None, "the chart looks the same"
    bars = viewer_answer(server, "get-tile", {"tile": "revenue-by-product"})["data"]["values"]
    assert max(bars, key=lambda v: v["sum_revenue"])["product"] == "Desk lamp"
    # the Markdown tile does not use the file: it was not redrawn
    assert page.evaluate("() => document.querySelector(\"[data-tile='about'] .db-markdown\").dataset.kept") == "1"
    csv.write_text(original, encoding="utf-8")
    page.wait_for_function("() => window.pneuma.ui.host.instance.viewer.cards.get('revenue-by-product').rowCount === 288")


def test_a_dragged_tile_s_new_place_is_in_the_file(board: tuple[Any, Any]) -> None:
    server, page = board
    path = server.workspace / "dashboard.json"
    original = path.read_text(encoding="utf-8")
    grid = page.locator(".db-grid").bounding_box()
    pitch_x = (grid["width"] - 32 + 10) / 12  # padding 16 px a side, gap 10 px
    # move "Units sold" (x 8, y 0, w 4, h 2) down below the table: y 10
    bar = page.locator(TILE.format("total-units") + " .db-tile-bar").bounding_box()
    start = (bar["x"] + 40, bar["y"] + bar["height"] / 2)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] - 2 * pitch_x, start[1] + 5 * 90, steps=8)
    page.mouse.move(start[0] - 4 * pitch_x, start[1] + 10 * 90, steps=8)
    page.mouse.up()
    moved = original.replace('"id": "total-units",\n      "type": "number",\n      "title": "Units sold",\n'
                             '      "x": 8, "y": 0, "w": 4, "h": 2,',
                             '"id": "total-units",\n      "type": "number",\n      "title": "Units sold",\n'
                             '      "x": 4, "y": 10, "w": 4, "h": 2,')
    assert moved != original
    assert on_disk(path, lambda t: t != original) == moved  # only those numbers changed
    # resized by its corner: two columns wider
    page.locator(TILE.format("total-units")).scroll_into_view_if_needed()
    corner = page.locator(TILE.format("total-units") + " .db-resize").bounding_box()
    start = (corner["x"] + 7, corner["y"] + 7)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + 2 * pitch_x, start[1] + 3, steps=6)
    page.mouse.up()
    resized = moved.replace('"x": 4, "y": 10, "w": 4, "h": 2,', '"x": 4, "y": 10, "w": 6, "h": 2,')
    assert on_disk(path, lambda t: t != moved) == resized
    # onto another tile (two rows up, into the table) it does not go: the file stays as it is
    bar = page.locator(TILE.format("total-units") + " .db-tile-bar").bounding_box()
    page.mouse.move(bar["x"] + 20, bar["y"] + 10)
    page.mouse.down()
    page.mouse.move(bar["x"] + 20, bar["y"] + 10 - 2 * 90, steps=8)
    expect(page.locator(TILE.format("total-units") + ".db-blocked")).to_have_count(1)
    page.mouse.up()
    time.sleep(0.3)
    assert path.read_text(encoding="utf-8") == resized
    assert viewer_answer(server, "describe-view")["data"]["tiles"][2]["y"] == 10
    path.write_text(original, encoding="utf-8")
    page.wait_for_function("() => window.pneuma.ui.host.instance.viewer.cards.get('total-units').tile.y === 0")


def test_a_clicked_bar_selects_its_datum_for_the_agent(board: tuple[Any, Any]) -> None:
    server, page = board
    bars = page.locator(TILE.format("revenue-by-product") + " .mark-rect path")
    bars.first.click()
    selected = page.evaluate(f"() => {HOST}.instance.viewer.selected")
    assert selected["kind"] == "datum" and selected["tile"] == "revenue-by-product"
    assert selected["file"] == "data/sales.csv"
    assert set(selected["fields"]) == {"product", "sum_revenue"}
    context = page.evaluate(f"(s) => {HOST}.module.extractContext(s)", selected)
    assert context.startswith('<viewer-context mode="dashboard" file="data/sales.csv" tile="revenue-by-product" kind="datum"')
    assert f'"product":"{selected["fields"]["product"]}"' in context and '"sum_revenue":' in context
    expect(page.locator(".chip, .selection-chip, [class*=chip]").filter(has_text="Revenue by product").first).to_be_visible()
    # the bar pointed at is marked in the chart, not only its tile
    expect(bars.first).to_have_class(re.compile(r"\bpneuma-selected\b"))
    assert page.evaluate("(el) => getComputedStyle(el).strokeWidth", bars.first.element_handle()) == "2px"
    # a table row: the row's number in the file and its fields
    page.locator(TILE.format("latest-rows") + " tbody tr").nth(2).click()
    row = page.evaluate(f"() => {HOST}.instance.viewer.selected")
    assert (row["kind"], row["row"], row["fields"]["region"], row["fields"]["product"]) == ("row", 3, "North", "Desk lamp")
    assert row["fields"]["month"] == "2025-01-01"  # a date as the file writes it, not epoch milliseconds
    expect(page.locator(TILE.format("latest-rows") + " tbody tr").nth(2).locator("td").first).to_have_text("2025-01-01")
    assert viewer_answer(server, "describe-view")["data"]["selected"]["row"] == 3


def test_an_invalid_spec_shows_its_error_in_its_tile(board: tuple[Any, Any]) -> None:
    server, page = board
    path = server.workspace / "dashboard.json"
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace('"mark": "bar"', '"mark": "barr"'), encoding="utf-8")
    error = page.locator(TILE.format("revenue-by-product") + "[data-state=error] .db-tile-error")
    expect(error).to_contain_text("barr")
    # the rest of the board still draws
    expect(page.locator(DRAWN.format("revenue-by-month") + " svg")).to_have_count(1)
    answer = viewer_answer(server, "navigate-to", {"tile": "revenue-by-product"})
    assert answer["success"] and answer["data"]["rendered"] is False and "barr" in answer["data"]["error"]
    assert "barr" in page.evaluate(f"() => {HOST}.instance.problems()")["dashboard.json"]
    # data that fails says so in its tile; a JSON data file draws like a CSV
    (server.workspace / "data" / "goals.json").write_text('[{"goal": 1200}, {"goal": 34}]', encoding="utf-8")
    path.write_text(original.replace('"field": "units"', '"field": "goal"').replace(
        '"data": "data/sales.csv",\n      "field": "goal"', '"data": "data/goals.json",\n      "field": "goal"').replace(
        '"data": "data/sales.csv",\n      "columns"', '"data": "data/nope.csv",\n      "columns"'), encoding="utf-8")
    expect(page.locator(TILE.format("latest-rows") + " .db-tile-error")).to_contain_text("data/nope.csv is not in the workspace")
    expect(page.locator(TILE.format("total-units") + " .db-number-value")).to_have_text("1,234")
    assert page.evaluate(f"() => {HOST}.instance.problems()")["data/nope.csv"].startswith('tile "latest-rows"')
    (server.workspace / "data" / "goals.json").unlink()
    # a picture saved under a CSV's name is named as what it is not, never drawn as an empty chart
    (server.workspace / "data" / "photo.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe" * 40)
    path.write_text(original.replace('"data": "data/sales.csv",\n      "spec": {\n        "mark": "bar"',
                                     '"data": "data/photo.csv",\n      "spec": {\n        "mark": "bar"'), encoding="utf-8")
    expect(page.locator(TILE.format("revenue-by-product") + " .db-tile-error")).to_contain_text(
        "data/photo.csv is not UTF-8 text")
    # a field the data lacks (a renamed column) is named in its tile, as validate_board names it
    path.write_text(original.replace('"field": "product"', '"field": "prodct"'), encoding="utf-8")
    expect(page.locator(TILE.format("revenue-by-product") + " .db-tile-error")).to_contain_text(
        'spec.encoding.x.field: "prodct" is not a field of data/sales.csv (its fields: month, region, product')
    (server.workspace / "data" / "photo.csv").unlink()
    # a data file over the size limit is refused by its size, as validate_board refuses it
    (server.workspace / "data" / "huge.csv").write_bytes(b"month,revenue\n" + b"2025-01-01,1\n" * 1_500_000)
    path.write_text(original.replace('"data": "data/sales.csv",\n      "spec": {\n        "mark": "bar"',
                                     '"data": "data/huge.csv",\n      "spec": {\n        "mark": "bar"'), encoding="utf-8")
    expect(page.locator(TILE.format("revenue-by-product") + " .db-tile-error")).to_contain_text(
        "data/huge.csv is 18.6 MB; the dashboard reads data files up to 16.0 MB")
    (server.workspace / "data" / "huge.csv").unlink()
    path.write_text("{ not json", encoding="utf-8")
    expect(page.locator(".db-board-error")).to_contain_text("not valid JSON")
    path.write_text(original, encoding="utf-8")
    page.wait_for_selector(DRAWN.format("revenue-by-product") + " svg .mark-rect path")
    expect(page.locator(".db-board-error")).to_be_hidden()


def test_a_title_edited_in_place_changes_only_that_string(board: tuple[Any, Any]) -> None:
    server, page = board
    path = server.workspace / "dashboard.json"
    original = path.read_text(encoding="utf-8")
    page.locator(TILE.format("revenue-by-month") + " .db-tile-title").dblclick()
    box = page.locator(".db-title-input")
    expect(box).to_have_value("Revenue by month")
    box.fill('Monthly "net" revenue')
    box.press("Enter")
    expect(box).to_have_count(0)
    expected = original.replace('"title": "Revenue by month"', '"title": "Monthly \\"net\\" revenue"')
    assert on_disk(path, lambda t: t != original) == expected
    expect(page.locator(TILE.format("revenue-by-month") + " .db-tile-title")).to_have_text('Monthly "net" revenue')
    # Esc leaves the file alone
    page.locator(TILE.format("revenue-by-month") + " .db-tile-title").dblclick()
    box.fill("Nothing")
    box.press("Escape")
    expect(box).to_have_count(0)
    path.write_text(original, encoding="utf-8")
    expect(page.locator(TILE.format("revenue-by-month") + " .db-tile-title")).to_have_text("Revenue by month")


def test_a_pin_on_a_chart_marks_its_tile_and_knows_its_place(board: tuple[Any, Any]) -> None:
    server, page = board
    page.wait_for_function(f"() => {HOST} && {HOST}.instance && {HOST}.instance.showPins")
    pins_loaded(page)
    page.locator(".annotate-toggle").click()
    page.locator(TILE.format("revenue-by-month") + " .db-tile-bar").click()
    comment = page.locator(".pin-box textarea")
    comment.fill("Show it by quarter")
    comment.press("Enter")
    marker = page.locator(TILE.format("revenue-by-month") + " .db-pin")
    expect(marker).to_have_text("1")
    (pin,) = stored_pins(server, 1)
    assert pin["selection"]["tile"] == "revenue-by-month" and pin["selection"]["kind"] == "tile"
    # the place is the tile's definition: a change elsewhere leaves it, a change of the tile does not
    path = server.workspace / "dashboard.json"
    original = path.read_text(encoding="utf-8")
    place = f"(s) => {HOST}.instance.pinPlace(s)"
    assert page.evaluate(place, pin["selection"]) == pin["place"]
    path.write_text(original.replace('"title": "All rows"', '"title": "Rows"'), encoding="utf-8")
    page.wait_for_function(f"() => {HOST}.instance.viewer.cards.get('latest-rows').tile.title === 'Rows'")
    assert page.evaluate(place, pin["selection"]) == pin["place"]
    path.write_text(original.replace('"timeUnit": "yearmonth"', '"timeUnit": "yearquarter"'), encoding="utf-8")
    page.wait_for_function(f"(s) => {HOST}.instance.pinPlace(s) !== {json.dumps(pin['place'])}",
                           arg=pin["selection"])
    image = page.evaluate(f"(s) => {HOST}.instance.capturePin({{id: 'x', number: 1, selection: s}})",
                          pin["selection"])
    picture = Image.open(io.BytesIO(base64.b64decode(image.split(",", 1)[1])))
    assert picture.width > 400 and picture.height > 200  # the chart at twice its size
    expect(marker).to_have_text("1")  # still on the redrawn tile
    page.locator(".pin-remove").click()
    expect(marker).to_have_count(0)
    page.locator(".annotate-toggle").click()
    path.write_text(original, encoding="utf-8")
    page.wait_for_function(f"() => {HOST}.instance.viewer.cards.get('latest-rows').tile.title === 'All rows'")


def test_compare_mounts_a_read_only_board_over_old_files(board: tuple[Any, Any]) -> None:
    server, page = board
    seen = page.evaluate(f"""async () => {{
        const module = {HOST}.module;
        const el = document.createElement('div');
        el.style.cssText = 'position: fixed; inset: 0; width: 900px; height: 700px';
        document.body.append(el);
        const files = {HOST}.files.map((f) => f.path === 'data/sales.csv'
            ? {{...f, content: f.content.split('\\n').slice(0, 11).join('\\n') + '\\n'}} : f);
        const ctx = {{readOnly: true, snapshot: {{ref: 1, side: 'before'}}, files, locale: 'en',
            contentUrl: (p) => '/content/' + p, baseUrl: '/content/', setSelection() {{}},
            onLocaleChange: () => () => {{}} }};
        const viewer = await module.mount(el, ctx);
        await Promise.all([...viewer.viewer.cards.values()].map((c) => c.done));
        const out = {{handles: el.querySelectorAll('.db-resize').length,
            rows: el.querySelectorAll("[data-tile='latest-rows'] tbody tr").length,
            units: el.querySelector("[data-tile='total-units'] .db-number-value").textContent,
            bars: el.querySelectorAll("[data-tile='revenue-by-product'] .mark-rect path").length}};
        viewer.destroy();
        el.remove();
        return out;
    }}""")
    assert seen == {"handles": 0, "rows": 10, "units": "620", "bars": 3}
    # the live board still has its handles and all its rows
    assert page.locator(".db-resize").count() == 6
    assert page.locator(TILE.format("latest-rows") + " tbody tr").count() == 100


def test_show_on_a_change_finds_the_tile_or_the_file(board: tuple[Any, Any]) -> None:
    server, page = board
    # a change's locate names the data file only: the first tile that draws it
    shown = viewer_answer(server, "navigate-to", {"file": "data/sales.csv"})
    assert shown["success"] and shown["data"]["tile"] == "total-revenue"
    assert viewer_answer(server, "navigate-to", {"file": "dashboard.json"})["success"]
    missing = viewer_answer(server, "navigate-to", {"tile": "nope"})
    assert not missing["success"] and "revenue-by-month" in missing["message"]
    # following the agent: the tile its edit changed comes into view
    path = server.workspace / "dashboard.json"
    original = path.read_text(encoding="utf-8")
    page.locator(".pneuma-dashboard").evaluate("(el) => el.scrollTo({top: 0})")
    path.write_text(original.replace('"limit": 100', '"limit": 20'), encoding="utf-8")
    expect(page.locator(TILE.format("latest-rows") + " tbody tr")).to_have_count(20)
    assert page.evaluate(f"() => {HOST}.instance.reveal('dashboard.json')") is True
    expect(page.locator(TILE.format("latest-rows"))).to_be_in_viewport(ratio=0.95)
    path.write_text(original, encoding="utf-8")
    expect(page.locator(TILE.format("latest-rows") + " tbody tr")).to_have_count(100)


def test_a_title_edit_racing_an_agent_write_loses_neither(board: tuple[Any, Any]) -> None:
    server, page = board
    path = server.workspace / "dashboard.json"
    original = path.read_text(encoding="utf-8")
    page.locator(TILE.format("total-units") + " .db-tile-title").dblclick()
    box = page.locator(".db-title-input")
    box.fill("Units")
    # the agent changes another tile while the person types
    theirs = original.replace('"label": "total, both years"\n    },\n    {\n      "id": "revenue-by-month"',
                              '"label": "all of it"\n    },\n    {\n      "id": "revenue-by-month"')
    assert theirs != original
    path.write_text(theirs, encoding="utf-8")
    page.wait_for_function(f"() => {HOST}.instance.viewer.text.includes('all of it')")
    expect(page.locator(".db-title-input")).to_have_count(1)  # the edit box stayed open
    box.press("Enter")
    both = theirs.replace('"title": "Units sold"', '"title": "Units"')
    assert on_disk(path, lambda t: t != theirs) == both
    path.write_text(original, encoding="utf-8")
    expect(page.locator(TILE.format("total-units") + " .db-tile-title")).to_have_text("Units sold")


def test_charts_follow_a_switch_of_the_system_scheme_without_a_reload(board: tuple[Any, Any]) -> None:
    _, page = board
    label = TILE.format("revenue-by-product") + " .role-axis-label text"
    fill = f"() => getComputedStyle(document.querySelector({json.dumps(label)})).fill"
    light = page.evaluate(fill)
    page.emulate_media(color_scheme="dark")
    try:
        page.wait_for_function(f"(light) => ({fill})() !== light", arg=light, timeout=10_000)
        dark = page.evaluate(fill)
    finally:
        page.emulate_media(color_scheme="light")
    page.wait_for_function(f"(light) => ({fill})() === light", arg=light, timeout=10_000)
    assert light != dark


def test_a_narrow_window_stacks_the_tiles_and_fits_the_numbers(board: tuple[Any, Any]) -> None:
    server, page = board
    size = page.viewport_size
    # a phone's width: one tile a row, each as wide as the board, in the file's order
    page.set_viewport_size({"width": 420, "height": 900})
    try:
        widths = page.evaluate("""() => {
          const grid = document.querySelector('.db-grid'), style = getComputedStyle(grid);
          const inner = grid.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
          return [...grid.querySelectorAll('.db-tile')].map((t) => Math.round(t.getBoundingClientRect().width - inner));
        }""")
        assert widths == [0] * 6
        tops = [page.locator(TILE.format(t)).bounding_box()["y"] for t in ("about", "total-revenue", "total-units")]
        assert tops == sorted(tops) and len(set(tops)) == 3
        # no drag in a stacked board: its place in the file is the wide board's
        expect(page.locator(TILE.format("total-units") + " .db-resize")).to_be_hidden()
        path = server.workspace / "dashboard.json"
        original = path.read_text(encoding="utf-8")
        bar = page.locator(TILE.format("total-units") + " .db-tile-bar").bounding_box()
        page.mouse.move(bar["x"] + 20, bar["y"] + 10)
        page.mouse.down()
        page.mouse.move(bar["x"] + 20, bar["y"] + 400, steps=6)
        page.mouse.up()
        time.sleep(0.3)
        assert path.read_text(encoding="utf-8") == original
        # each key number's text fits its box: nothing of it is clipped
        fits = "() => [...document.querySelectorAll('.db-number-value')].map((el) => el.scrollWidth <= el.clientWidth)"
        page.wait_for_function(f"() => ({fits})().length === 2 && ({fits})().every(Boolean)", timeout=5_000)
    finally:
        page.set_viewport_size(size)
    expect(page.locator(TILE.format("total-revenue") + " .db-number-value")).to_have_text("$229,320")
