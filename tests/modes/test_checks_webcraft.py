"""The webcraft mode's check after every turn: the pages a turn touched,
loaded in headless Chromium at a phone and a desktop width with the network
closed, report script errors, the site's own files that fail to load, and
axe-core's serious and critical violations, each naming the page, the
selector and the rule."""

from __future__ import annotations

import asyncio
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pneuma.api import CheckRequest, Problem, TurnCheck
from pneuma.host.plugins import get_plugin_manager
from pneuma.host.turn_checks import checks_for
from pneuma.testing import make_workspace
from pneuma_webcraft.checks import AXE_SOURCE, inspect_pages, pages_to_check

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")

BROKEN_PAGE = """<!doctype html>
<html>
<head><title>Shop</title><link rel="stylesheet" href="css/style.css"></head>
<body>
<img class="hero" src="assets/hero.png">
<button class="buy"></button>
<script src="js/shop.js"></script>
<script>fetch("data/prices.json").then((r) => r.json());</script>
<img src="{outside}/tracker.png" alt="tracker">
<script>new WebSocket("{outside}/live".replace("http:", "ws:"));</script>
</body>
</html>
"""


class CountingHandler(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        CountingHandler.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def outside() -> Iterator[str]:
    """A server on loopback standing for the Internet: a checked page must never reach it."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CountingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def webcraft_check() -> TurnCheck:
    checks = checks_for(get_plugin_manager(), "webcraft")
    assert [c.name for c in checks] == ["page"]
    return checks[0]


def run_check(workspace: Path, changed: list[str]) -> list[Problem]:
    return list(webcraft_check().run(CheckRequest(workspace=workspace, changed=tuple(changed), mode="webcraft")))


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory, outside: str) -> Path:
    site = make_workspace("webcraft", tmp_path_factory.mktemp("shop") / "site")
    (site / "shop.html").write_text(BROKEN_PAGE.format(outside=outside))
    (site / "js" / "shop.js").write_text("const total = 0;\naddToCart(total);\n")
    return site


@pytest.fixture(scope="module")
def shop_problems(shop: Path) -> list[Problem]:
    CountingHandler.hits.clear()
    return run_check(shop, ["js/shop.js", "shop.html"])


def test_a_turn_that_broke_a_page_gets_its_script_error_failed_loads_and_accessibility_rules(
        shop_problems: list[Problem]) -> None:
    assert AXE_SOURCE.is_file(), "axe-core is installed by scripts/build-web (plugins/webcraft/web)"
    messages = [p.message for p in shop_problems]
    by_text = {p.message: p for p in shop_problems}

    script = [p for p in shop_problems if "addToCart is not defined" in p.message]
    assert len(script) == 1 and script[0].file == "js/shop.js" and script[0].line == 2
    assert script[0].message.startswith("shop.html: script error on the console: Uncaught ReferenceError")

    hero = by_text["shop.html loads assets/hero.png, which answers 404 (not in the site)"]
    assert (hero.file, hero.line) == ("shop.html", 5)
    assert "shop.html loads data/prices.json, which answers 404 (not in the site)" in messages

    image_alt = [p for p in shop_problems if "rule image-alt (critical)" in p.message]
    assert len(image_alt) == 1 and image_alt[0].locate == {"file": "shop.html", "page": "shop.html", "selector": ".hero"}
    assert image_alt[0].line == 5  # where the element is written
    button = [p for p in shop_problems if "rule button-name (critical)" in p.message]
    assert len(button) == 1 and button[0].locate == {"file": "shop.html", "page": "shop.html", "selector": "button"}
    assert button[0].line == 6
    assert any("rule html-has-lang (serious)" in m for m in messages)
    # Seen at both widths, reported once, without a width.
    assert not any(" width)" in m for m in messages)
    assert all(p.severity == "error" for p in shop_problems)


def test_the_checked_page_reaches_no_network(shop_problems: list[Problem]) -> None:
    assert CountingHandler.hits == []  # neither the image nor the WebSocket
    # A request the check refused is the check's doing, not the site's fault.
    assert not any("tracker" in p.message or "live" in p.message for p in shop_problems)


def test_the_seed_site_passes_and_a_stylesheet_change_checks_the_pages_that_use_it(tmp_path: Path) -> None:
    site = make_workspace("webcraft", tmp_path / "site")
    (site / "notes.html").write_text('<!doctype html><html lang="en"><title>n</title><p>no styles</p></html>')
    assert run_check(site, ["css/style.css"]) == []
    texts = {p: (site / p).read_text() for p in ("index.html", "about.html", "notes.html")}
    assert pages_to_check(["about.html", "css/style.css", "index.html", "notes.html"], ["css/style.css"],
                          texts) == ["about.html", "index.html"]
    assert run_check(site, ["README.md"]) == []


def test_a_page_that_never_finishes_is_reported_and_the_check_still_ends(tmp_path: Path) -> None:
    files = {"spin.html": b"<!doctype html><html lang='en'><title>s</title><script>for(;;){}</script></html>",
             "ok.html": b"<!doctype html><html lang='en'><title>ok</title><main><h1>ok</h1></main></html>"}
    started = time.monotonic()
    reports = asyncio.run(inspect_pages(files, ["spin.html", "ok.html"], widths=["phone"], page_seconds=1.5))
    assert time.monotonic() - started < 12
    assert [(r.page, r.timed_out) for r in reports] == [("spin.html", True), ("ok.html", False)]
    assert reports[1].violations == [] and reports[1].console_errors == []
