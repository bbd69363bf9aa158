"""The launcher's "Add a mode" box in real Chromium: the launcher runs in a
throwaway virtualenv (pip offline), a folder made by `pneuma new-mode` is
added from the box (installed anyway when its check fails) and its card
appears with its source without a reload; a bad source is said in plain
words in the box; the install route takes
only a POST with the launcher's token from its own origin, one at a time."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import kill_process_group, read_first_line
from tests.mode_sources.mode_env import ModeEnv, make_mode_env, new_mode

pytestmark = pytest.mark.slow
READY = re.compile(r"^\[pneuma\] launcher ready (?P<base>http://127\.0\.0\.1:\d+)/\?token=(?P<token>\S+)$")
INSTALL = 60_000  # ms pip may take to build and install a mode here


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("add-mode")
    mode_env: ModeEnv = make_mode_env(root / "v")
    env = {**mode_env.env, "HOME": str(root / "home"), "PNEUMA_HOME": str(root / "pneuma-home"),
           "PYTHONUNBUFFERED": "1"}
    env.pop("PNEUMA_LOAD_PLUGINS", None)
    process = subprocess.Popen([mode_env.python, "-m", "pneuma", "open", "--no-open", "--port", "0"],
                               cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=(root / "launcher.stderr").open("wb"), start_new_session=True)
    try:
        match = READY.match(read_first_line(process, 30.0) or "")
        assert match, (root / "launcher.stderr").read_text(errors="replace")[-3000:]
        yield type("Served", (), {"base": match["base"], "token": match["token"], "root": root,
                                  "mode_env": mode_env})
    finally:
        kill_process_group(process)


def _request(served: Any, method: str, body: Any = None, *, token: bool = True,
             origin: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {served.token}"
    if origin:
        headers["Origin"] = origin
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{served.base}/api/modes/install", data=data,
                                     headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_a_folder_added_from_the_box_gets_its_card_and_a_bad_source_is_said_plainly(
        browser: Any, served: Any) -> None:
    folder = new_mode("boxed", served.root / "src")
    # One string left without its Chinese: the check refuses it, the person installs it anyway.
    manifest = folder / "pneuma_boxed" / "manifest.json"
    manifest.write_text(manifest.read_text().replace(
        '"label": {"en": "Show a page", "zh-CN": "显示页面"}', '"label": {"en": "Show a page"}'))
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{served.base}/?token={served.token}")
        expect(page.locator(".ln-card[data-mode='doc']")).to_be_visible(timeout=15_000)
        box = page.locator("form.ln-add")
        source = box.locator("#ln-add-source")

        source.fill(f"git+file://{served.root}/no-such-repo@v1.0")
        box.locator("button[type=submit]").click()
        expect(box.locator("[role=alert]")).to_contain_text("git: repository not found",
                                                            timeout=INSTALL)
        expect(page.locator(".ln-card[data-mode='boxed']")).to_have_count(0)

        source.fill(str(folder))
        box.locator("button[type=submit]").click()
        expect(box.locator("button[type=submit]")).to_have_text("Installing…")
        expect(box.locator(".ln-add-progress")).to_contain_text("checking: boxed", timeout=INSTALL)
        refused = box.locator("[role=alert]")
        expect(refused).to_contain_text("Not installed: boxed fails the check: locales",
                                        timeout=INSTALL)
        expect(page.locator(".ln-card[data-mode='boxed']")).to_have_count(0)
        refused.get_by_role("button", name="Install anyway").click()
        card = page.locator(".ln-card[data-mode='boxed']")
        expect(card).to_be_visible(timeout=INSTALL)
        expect(card.locator(".ln-badge")).to_have_text(f"from {folder}")
        expect(card.locator(".ln-version")).to_have_text("v0.1.0")
        expect(box.locator("[role=status]")).to_have_text(
            "Installed boxed 0.1.0: its card is in the gallery.")
        assert not errors, errors
    finally:
        page.close()
    assert served.mode_env.modes()["boxed"]["source"] == str(folder)


def test_the_install_route_takes_a_post_with_the_token_from_its_own_origin_one_at_a_time(
        served: Any) -> None:
    assert _request(served, "GET", token=False)[0] == 401
    status, answer = _request(served, "PUT", {"source": "x"})
    assert (status, answer["error"]["code"]) == (400, "E_UNSUPPORTED")
    status, answer = _request(served, "POST", {"source": "x"}, origin="http://evil.example")
    assert (status, answer["error"]["code"]) == (403, "E_FORBIDDEN")
    status, answer = _request(served, "POST", {"source": "what is this?"})
    assert (status, answer["error"]["code"]) == (400, "E_BAD_ARGS")

    folder = new_mode("queued", served.root / "src2")
    status, first = _request(served, "POST", {"source": str(folder), "check": False})
    assert (status, first["state"]) == (202, "running")
    status, second = _request(served, "POST", {"source": str(folder)})
    assert (status, second["error"]["code"]) == (409, "E_BUSY")
