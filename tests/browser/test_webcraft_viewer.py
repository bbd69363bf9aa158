"""The webcraft mode's viewer (plugins/webcraft/pneuma_webcraft/static/viewer.js)
in the real shell and Debian's Chromium: the site renders in its frame,
loaded from the mode's content site (another origin), tabs and widths switch, the agent's viewer actions answer over HTTP
as the agent calls them, the person's picked element reaches the (fake)
agent as a <viewer-context>, an agent's edit reloads the page at the same
scroll position, and the page cannot reach Pneuma's API.

Reloads: a change to a file the open page does not use leaves its frame
alone; a change to one it uses loads the new page underneath the old one,
which stays on show until the new one has painted. Inline scripts' errors
carry their HTML file's line numbers; srcset images load, the width picking
its candidate. A page's ES module imports and fetches work as when published,
and a file it only fetched at run time reloads it when edited.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import send_and_read, viewer_answer
from tests.browser.export_menu import download_export, open_export_menu

REPO = Path(__file__).resolve().parents[2]
AXE = REPO / "pneuma" / "web" / "vendor" / "axe.min.js"  # the shell's pinned copy (scripts/build-web)
TURN = 15_000


def frame(page: Any, viewport: str = "desktop") -> Any:
    """The page inside the preview frame of that width, once its bridge reported."""
    selector = f'iframe.webcraft-frame[data-viewport="{viewport}"]'
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        # Asked again each time: a reload puts a new iframe in the old one's place.
        handle = page.wait_for_selector(selector, timeout=10_000)
        inner = handle.content_frame() if handle else None
        # A page of the content site (another origin than the shell's).
        if inner is not None and inner.url.startswith("http://") and "/api/" not in inner.url:
            try:
                inner.wait_for_selector("h1", timeout=2_000)
                return inner
            except Exception:
                pass
        time.sleep(0.1)
    raise AssertionError("the preview frame did not load")


def in_settled_frame(page: Any, viewport: str, script: str) -> Any:
    """``script`` evaluated in the page that frame shows. A reload swaps a
    new frame in for the old one (a late file event after a switch of
    width, on a busy machine): one detached mid-evaluation is asked again."""
    for attempt in range(5):
        try:
            return frame(page, viewport).evaluate(script)
        except Exception as exc:
            if "detached" not in str(exc).lower() or attempt == 4:
                raise
    raise AssertionError("unreachable")


def shown(page: Any, viewport: str = "desktop") -> Any:
    """A locator root inside that frame, for auto-waiting assertions."""
    return page.frame_locator(f'iframe.webcraft-frame[data-viewport="{viewport}"]')


@pytest.fixture
def site(pneuma_server: Any, open_page: Any) -> tuple[Any, Any]:
    server = pneuma_server("webcraft", backend="none")
    page = open_page(server)
    frame(page)
    return server, page


def test_the_seed_site_renders_and_tabs_and_widths_switch(site: tuple[Any, Any], shot: Any) -> None:
    server, page = site
    assert frame(page).inner_text("h1") == "Notes that think with you."
    # The page's own script ran (sandboxed, but scripts allowed).
    frame(page).dispatch_event("#signup", "click")
    expect(frame(page).locator("#signup-note")).to_be_visible()
    assert [t.get_attribute("data-page") for t in page.locator(".webcraft-tab").all()] == ["index.html", "about.html"]
    page.click('.webcraft-tab[data-page="about.html"]')
    expect(page.locator('.webcraft-tab[aria-selected="true"]')).to_have_attribute("data-page", "about.html")
    expect(shown(page).locator("h1")).to_have_text("About Lumen")
    # A link in the page opens the other page's tab.
    frame(page).dispatch_event('nav a[href="index.html"]', "click")
    expect(page.locator('.webcraft-tab[aria-selected="true"]')).to_have_attribute("data-page", "index.html")
    expect(shown(page).locator("h1")).to_have_text("Notes that think with you.")

    answer = viewer_answer(server, "set-viewport", {"viewport": "all"})
    assert answer["success"] and answer["data"]["widths"] == [390, 820, 1280]
    expect(page.locator("iframe.webcraft-frame")).to_have_count(3)
    assert frame(page, "phone").evaluate("innerWidth") == 390
    assert frame(page, "tablet").evaluate("innerWidth") == 820
    shot(page, "webcraft-all-widths")
    assert viewer_answer(server, "set-viewport", {"viewport": "phone"})["data"]["widths"] == [390]
    expect(page.locator("iframe.webcraft-frame")).to_have_count(1)
    assert viewer_answer(server, "set-viewport", {"viewport": "watch"})["success"] is False
    assert page.console_errors == []


def test_agent_actions_navigate_describe_and_report_console_errors(site: tuple[Any, Any], shot: Any) -> None:
    server, page = site
    answer = viewer_answer(server, "navigate-to", {"page": "index.html", "selector": "#pricing"})
    assert answer["success"], answer
    assert frame(page).evaluate("scrollY") > 200
    described = viewer_answer(server, "describe-view")["data"]
    assert described["page"] == "index.html" and described["title"].startswith("Lumen")
    assert described["pages"] == ["index.html", "about.html"] and described["horizontalOverflow"] is False
    assert viewer_answer(server, "navigate-to", {"page": "nope.html"})["success"] is False

    # The agent writes a broken script and a page that tries to reach the API.
    (server.workspace / "broken.html").write_text(
        "<!doctype html><html lang='en'><head><title>Broken</title></head><body><h1>Broken</h1>"
        "<img src='assets/missing.png' alt='gone'>"
        "<script>fetch('/api/config').then(r => console.error('api answered ' + r.status))"
        ".catch(() => console.error('api refused'));</script>"
        "<script>undefinedFunction();</script><script src='js/bad.js'></script></body></html>")
    (server.workspace / "js" / "bad.js").write_text("// fails on line 3\nconst site = null;\nsite.title;\n")
    assert viewer_answer(server, "navigate-to", {"page": "broken.html"})["success"]
    expect(page.locator(".webcraft-errors-button")).to_have_class("webcraft-errors-button has-errors")
    deadline = time.monotonic() + 10
    messages: list[str] = []
    while time.monotonic() < deadline:
        errors = viewer_answer(server, "get-console-errors", {"page": "broken.html"})["data"]["errors"]
        messages = [e["message"] for e in errors]
        if any("api" in m for m in messages):
            break
        time.sleep(0.2)
    assert any("undefinedFunction is not defined" in m for m in messages), messages
    in_file = next(e for e in errors if "reading 'title'" in e["message"])
    assert (in_file["source"], in_file["line"]) == ("js/bad.js", 3), in_file
    thrown = next(e for e in errors if "undefinedFunction" in e["message"])
    # broken.html is one line long: its inline scripts' errors are on line 1.
    assert thrown["kind"] == "exception" and thrown["source"] == "broken.html" and thrown["line"] == 1
    assert any("assets/missing.png" in m for m in messages), messages
    # The sandboxed page never gets an answer from Pneuma's API.
    assert "api refused" in messages or any(m.startswith("api answered 4") for m in messages), messages
    # Its fetch of data that is not there is reported too (here: its own
    # site's /api/config, a file the workspace does not have).
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not any(e["kind"] == "missing-file" for e in errors):
        errors = viewer_answer(server, "get-console-errors", {"page": "broken.html"})["data"]["errors"]
        time.sleep(0.2)
    assert any(e["kind"] == "missing-file" and e["message"] == "api/config is not in the workspace"
               for e in errors), errors
    page.click(".webcraft-errors-button")
    expect(page.locator(".webcraft-error-panel li")).to_have_count(len(errors))
    shot(page, "webcraft-console-errors")
    assert viewer_answer(server, "get-console-errors", {"page": "index.html"})["data"]["errors"] == []


@pytest.mark.skipif(not AXE.exists(), reason="axe-core is not built (scripts/build-web)")
def test_check_accessibility_runs_axe_core_in_the_page(site: tuple[Any, Any]) -> None:
    server, page = site
    clean = viewer_answer(server, "check-accessibility", {"page": "index.html"}, wait=40, timeout=45)
    assert clean["success"], clean
    assert "image-alt" not in {v["id"] for v in clean["data"]["violations"]}
    (server.workspace / "bad.html").write_text(
        "<!doctype html><html><head><title>Bad</title></head><body><main><h1>Bad</h1>"
        "<img src='assets/logo.svg' class='no-alt'></main></body></html>")
    found = viewer_answer(server, "check-accessibility", {"page": "bad.html"}, wait=40, timeout=45)
    assert found["success"], found
    ids = {v["id"]: v for v in found["data"]["violations"]}
    assert "image-alt" in ids and "html-has-lang" in ids, ids.keys()
    assert ids["image-alt"]["nodes"][0]["target"] == "img"
    expect(page.locator('.webcraft-tab[aria-selected="true"]')).to_have_attribute("data-page", "bad.html")


def test_picked_element_reaches_the_agent_and_an_edit_keeps_the_scroll(
        pneuma_server: Any, fake_claude: Any, open_page: Any, shot: Any) -> None:
    server = pneuma_server("webcraft", claude_bin=fake_claude.bin)
    page = open_page(server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn
    page.click(".webcraft-pick")
    chip = page.locator(".ctx-row .ctx-chip")
    for attempt in range(5):
        # Asked of the frame on show now: on a busy machine a late reload
        # may swap the first one out between the lookup and the click.
        frame(page).dispatch_event("#features-title", "click")
        try:
            expect(chip).to_contain_text("index.html · h2", timeout=3_000)
            break
        except AssertionError:
            if attempt == 4:
                raise
    inner = frame(page)
    shot(page, "webcraft-picked")
    received = send_and_read(page, fake_claude, "Make this bigger.", turns=2, timeout=TURN)
    assert received.startswith('<viewer-context mode="webcraft" page="index.html" viewport="desktop" '
                               'selector="#features-title" box="'), received
    assert ">Why people switch</viewer-context>" in received and received.endswith("Make this bigger.")

    # Scroll, then the agent edits the stylesheet: the page reloads in place.
    page.click(".webcraft-pick")  # back to browsing
    inner.evaluate("scrollTo(0, 600)")
    before = inner.evaluate("scrollY")  # as far as the page goes at this frame height
    assert before > 200
    time.sleep(0.3)  # the bridge reports scroll positions after a short pause
    send_and_read(page, fake_claude, "write css/extra.css h2 { color: rgb(200, 0, 0); }", turns=3, timeout=TURN)
    (server.workspace / "index.html").write_text((server.workspace / "index.html").read_text().replace(
        '<link rel="stylesheet" href="css/style.css">',
        '<link rel="stylesheet" href="css/style.css"><link rel="stylesheet" href="css/extra.css">'))
    deadline = time.monotonic() + 10
    color = ""
    while time.monotonic() < deadline:
        try:
            color = frame(page).evaluate("getComputedStyle(document.querySelector('#features-title')).color")
            if color == "rgb(200, 0, 0)":
                break
        except Exception:
            pass
        time.sleep(0.2)
    assert color == "rgb(200, 0, 0)"
    assert abs(frame(page).evaluate("scrollY") - before) < 5
    shot(page, "webcraft-after-edit")


def test_the_export_menu_downloads_the_site_as_a_zip(site: tuple[Any, Any], shot: Any) -> None:
    import zipfile

    server, page = site
    assert open_export_menu(page) == ["zip", "png"]
    shot(page, "webcraft-export-menu")
    with zipfile.ZipFile(download_export(page, "zip", timeout=60_000).path()) as archive:
        names = set(archive.namelist())
        assert {"index.html", "about.html", "css/style.css", "js/main.js", "assets/logo.svg"} <= names
        assert b"Notes that think with you." in archive.read("index.html")


# --- reloads, inline-script lines, srcset ----------------------------------------------

# Installed in the shell page: every animation frame, is the document the
# person sees at the middle of the desktop preview one whose bridge has
# reported "ready" (loaded and painted) for the URL its iframe shows? A
# frame that is navigating shows nothing (or half a page) until then.
WATCH_FOR_BLANK = """() => {
  const readyUrl = new WeakMap();
  for (const el of document.querySelectorAll('iframe.webcraft-frame')) readyUrl.set(el, el.src);
  const watch = window.__blankWatch = { samples: 0, blank: [], shown: [] };
  // A reload of the same page has the same URL: each iframe gets a number.
  const serial = new WeakMap();
  let counter = 0;
  addEventListener('message', (event) => {
    const data = event.data || {};
    if (data.source !== 'webcraft-bridge' || data.type !== 'ready') return;
    const el = [...document.querySelectorAll('.webcraft-frame-box iframe')]
      .find((f) => f.contentWindow === event.source);
    if (el) readyUrl.set(el, el.src);
  });
  const tick = () => {
    const box = document.querySelector('.webcraft-device[data-viewport="desktop"] .webcraft-frame-box');
    if (box) {
      const r = box.getBoundingClientRect();
      const top = document.elementFromPoint(r.left + r.width / 2, r.top + Math.min(r.height / 2, 200));
      watch.samples++;
      if (top instanceof HTMLIFrameElement && !serial.has(top)) serial.set(top, ++counter);
      const url = top instanceof HTMLIFrameElement ? top.src + ' #' + serial.get(top) : String(top && top.className);
      if (!(top instanceof HTMLIFrameElement) || readyUrl.get(top) !== top.src) watch.blank.push(url);
      if (watch.shown[watch.shown.length - 1] !== url) watch.shown.push(url);
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""


def wait_for_marker(page: Any, gone: bool, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    value: Any = "(not read)"
    while time.monotonic() < deadline:
        try:
            value = frame(page).evaluate("window.__marker ?? null")
            if (value is None) == gone:
                return
        except Exception as error:  # the frame was swapped meanwhile: ask again
            value = error
        time.sleep(0.1)
    raise AssertionError(f"the page was {'not ' if gone else ''}reloaded: window.__marker is {value!r}")


def test_only_a_change_to_the_open_pages_files_reloads_it_and_never_blank(site: tuple[Any, Any]) -> None:
    server, page = site
    builds: list[str] = []
    # Every load of a page into a preview frame asks for it with the site's token.
    page.on("request", lambda r: builds.append(r.url) if "?token=" in r.url else None)
    workspace: Path = server.workspace
    frame(page).evaluate("window.__marker = 'kept'")
    page.evaluate(WATCH_FOR_BLANK)

    # Another page, an asset no page uses, and a new page: the open page stays as it is.
    (workspace / "about.html").write_text((workspace / "about.html").read_text().replace("About Lumen", "About us"))
    (workspace / "assets" / "unused.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (workspace / "contact.html").write_text("<!doctype html><title>Contact</title><h1>Contact</h1>")
    expect(page.locator('.webcraft-tab[data-page="contact.html"]')).to_have_count(1)
    time.sleep(1.0)  # the watcher may deliver the three files in more than one update
    assert frame(page).evaluate("window.__marker") == "kept"
    assert builds == []

    # The page's stylesheet: the new style shows, and the old page stayed on
    # show until the new one had painted.
    with (workspace / "css" / "style.css").open("a") as css:
        css.write("\nh1 { color: rgb(0, 128, 0) !important; }\n")
    expect(shown(page).locator("h1")).to_have_css("color", "rgb(0, 128, 0)")
    wait_for_marker(page, gone=True)
    time.sleep(0.3)
    watch = page.evaluate("window.__blankWatch")
    assert watch["samples"] > 10 and len(watch["shown"]) >= 2, watch  # it did reload
    assert watch["blank"] == [], watch
    assert len(builds) >= 1
    expect(page.locator(".webcraft-frame-box iframe")).to_have_count(1)  # the old document is gone

    # A stylesheet the page's stylesheet imports is one of its files too.
    (workspace / "css" / "theme.css").write_text("h1 { letter-spacing: 3px; }\n")
    style = workspace / "css" / "style.css"
    style.write_text('@import url("theme.css");\n' + style.read_text())
    expect(shown(page).locator("h1")).to_have_css("letter-spacing", "3px")
    (workspace / "css" / "theme.css").write_text("h1 { letter-spacing: 5px; }\n")
    expect(shown(page).locator("h1")).to_have_css("letter-spacing", "5px")

    # An image the page shows, and the page's script: each reloads it.
    for used in ("assets/logo.svg", "js/main.js"):
        frame(page).evaluate("window.__marker = 'kept'")
        target = workspace / used
        target.write_text(target.read_text() + ("\n<!-- edited -->\n" if used.endswith(".svg") else "\n// edited\n"))
        wait_for_marker(page, gone=True)
    assert page.evaluate("window.__blankWatch.blank") == []
    assert page.console_errors == []


INLINE_ERRORS_PAGE = """<!doctype html>
<html lang="en">
<head><title>Lines</title>
<style>h1 { color: #333; }</style>
</head>
<body>
<h1>Lines</h1>
<script>
  const answer = 42;
  missingFunction(answer);
</script>
<p>between</p><script>console.error("told " + answer)</script>
<script type="module">
  const inModule = 1; notInModule(inModule);
</script>
</body>
</html>
"""


def test_errors_in_inline_scripts_name_the_html_file_and_its_line(site: tuple[Any, Any]) -> None:
    server, page = site
    (server.workspace / "index.html").write_text(INLINE_ERRORS_PAGE)
    expect(shown(page).locator("h1")).to_have_text("Lines")
    deadline = time.monotonic() + 10
    errors: list[dict[str, Any]] = []
    while time.monotonic() < deadline and len(errors) < 3:
        errors = viewer_answer(server, "get-console-errors", {"page": "index.html"})["data"]["errors"]
        time.sleep(0.2)
    thrown = next(e for e in errors if "missingFunction" in e["message"])
    assert (thrown["kind"], thrown["source"], thrown["line"]) == ("exception", "index.html", 10), thrown
    assert thrown["column"] == 3  # missingFunction( starts after two spaces
    told = next(e for e in errors if e["message"] == "told 42")
    assert (told["source"], told["line"]) == ("index.html", 12), told
    in_module = next(e for e in errors if "notInModule" in e["message"])
    assert (in_module["source"], in_module["line"], in_module["column"]) == ("index.html", 14, 23), in_module
    page.click(".webcraft-errors-button")
    rows = page.locator(".webcraft-error-panel li")
    expect(rows.filter(has_text="missingFunction").locator("code")).to_have_text("index.html:10")
    expect(rows.filter(has_text="told 42").locator("code")).to_have_text("index.html:12")


def solid_png(path: Path, size: tuple[int, int], color: tuple[int, int, int]) -> None:
    from PIL import Image  # noqa: PLC0415 - only the srcset test draws images

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


SRCSET_PAGE = """<!doctype html><html lang="en"><head><title>Pictures</title>
<style>body { margin: 0 } img { display: block; width: 100%; }</style></head><body>
<h1>Pictures</h1>
<img id="responsive" srcset="img/small.png 400w, img/large.png 1200w" sizes="100vw" alt="responsive">
<picture><source media="(min-width: 800px)" srcset="img/large.png">
<img id="art" src="img/small.png" alt="art directed"></picture>
</body></html>
"""


def test_srcset_images_load_and_the_width_picks_the_candidate(site: tuple[Any, Any]) -> None:
    server, page = site
    # Square and 3:1, to tell which one a frame shows (naturalWidth of a
    # srcset image is scaled by its density, its aspect ratio is not).
    solid_png(server.workspace / "img" / "small.png", (400, 400), (220, 0, 0))
    solid_png(server.workspace / "img" / "large.png", (1200, 400), (0, 0, 220))
    (server.workspace / "pictures.html").write_text(SRCSET_PAGE)
    # Phone first: once the large image is in its memory cache, Chromium
    # uses it at every width (as it would on the published site).
    assert viewer_answer(server, "set-viewport", {"viewport": "phone"})["success"]
    assert viewer_answer(server, "navigate-to", {"page": "pictures.html"})["success"]
    expect(shown(page, "phone").locator("h1")).to_have_text("Pictures")
    # Chromium at a 1× screen takes the first candidate at least as wide as
    # the image's 100vw; the picture's source applies from 800 px.
    expected = {"phone": ("small", "small"), "tablet": ("large", "large"), "desktop": ("large", "large")}
    for viewport, (responsive, art) in expected.items():
        assert viewer_answer(server, "set-viewport", {"viewport": viewport})["success"]
        ratios = in_settled_frame(page, viewport, """async () => {
            const loaded = () => [...document.images].every((i) => i.complete && i.naturalWidth > 0);
            for (let i = 0; i < 100 && !loaded(); i++) await new Promise((r) => setTimeout(r, 100));
            return [responsive, art].map((i) => Math.round(i.naturalWidth / i.naturalHeight));
        }""")
        assert ratios == [{"small": 1, "large": 3}[responsive], {"small": 1, "large": 3}[art]], (viewport, ratios)
    errors = viewer_answer(server, "get-console-errors", {"page": "pictures.html"})["data"]["errors"]
    assert errors == []


# --- a page as it runs when published: modules, fetch, its own origin ------------------

MODULE_PAGE = """<!doctype html><html lang="en"><head><title>Runtime</title></head><body>
<h1>Runtime</h1>
<p id="greeting"></p>
<ul id="items"></ul>
<p id="api"></p>
<script type="module">
import { greet } from './js/util.js';
document.querySelector('#greeting').textContent = greet('module');
const items = await (await fetch('data/items.json')).json();
document.querySelector('#items').replaceChildren(...items.map((text) => {
  const li = document.createElement('li');
  li.textContent = text;
  return li;
}));
</script>
</body></html>
"""


def test_a_page_imports_modules_and_fetches_its_data_and_an_edit_to_the_data_reloads_it(
        site: tuple[Any, Any]) -> None:
    server, page = site
    workspace: Path = server.workspace
    (workspace / "js" / "util.js").write_text("export const greet = (who) => `hello from ${who}`;\n")
    (workspace / "data").mkdir()
    (workspace / "data" / "items.json").write_text('["tea", "bread"]')
    (workspace / "runtime.html").write_text(MODULE_PAGE)
    assert viewer_answer(server, "navigate-to", {"page": "runtime.html"})["success"]
    # The module's import and its fetch load from the page's own site.
    expect(shown(page).locator("#greeting")).to_have_text("hello from module")
    expect(shown(page).locator("#items li")).to_have_text(["tea", "bread"])

    # A file only fetched at run time is one of the page's files: an edit reloads it.
    frame(page).evaluate("window.__marker = 'kept'")
    (workspace / "data" / "items.json").write_text('["tea", "bread", "jam"]')
    expect(shown(page).locator("#items li")).to_have_text(["tea", "bread", "jam"])
    wait_for_marker(page, gone=True)
    # So is the imported module.
    (workspace / "js" / "util.js").write_text("export const greet = (who) => `hi, ${who}`;\n")
    expect(shown(page).locator("#greeting")).to_have_text("hi, module")
    errors = viewer_answer(server, "get-console-errors", {"page": "runtime.html"})["data"]["errors"]
    assert errors == []


def test_the_page_cannot_reach_the_pneuma_server(site: tuple[Any, Any]) -> None:
    """Its origin is the content site's: the server's API refuses it, with
    or without the person's cookie, and the shell's document is out of reach."""
    server, page = site
    answer = frame(page).evaluate("""async (api) => {
        const out = {};
        for (const [name, init] of [["plain", {}], ["cookie", { credentials: "include" }],
                                    ["write", { method: "POST", credentials: "include",
                                                body: JSON.stringify({ path: "pwned.txt", content: "x" }) }]]) {
            try {
                const r = await fetch(api + (name === "write" ? "/api/files" : "/api/config"), init);
                out[name] = "answered " + r.status + " " + (await r.text()).slice(0, 80);
            } catch (error) { out[name] = "refused"; }
        }
        try { out.shell = String(parent.document.title); } catch (error) { out.shell = "blocked"; }
        out.origin = location.origin;
        out.token = location.search;
        return out;
    }""", server.url)
    assert answer["plain"] == "refused" and answer["cookie"] == "refused", answer
    assert answer["write"] == "refused", answer
    assert answer["shell"] == "blocked" and answer["origin"] != server.url, answer
    assert answer["token"] == ""  # the site's token is not left in the page's URL
    assert not (server.workspace / "pwned.txt").exists()
