"""With every tab closed, the agent's viewer actions are answered by the
server's own headless viewer: Debian's Chromium, started on demand by
`pneuma run`, showing the same shell page (docs/headless-viewer.md).

Each test starts a real `pneuma run` (no agent) and asks as the agent's curl
does (``POST /api/viewer/action`` with the token); what it checks is what
the agent reads back, what lands on disk, what a tab opened later shows,
and which Chromium processes run.
"""

from __future__ import annotations

import io
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PIL import Image

from tests.browser.browser_helpers import api_call

NO_AGENT = {"backend": "none"}


def action(server: Any, action_id: str, params: dict[str, Any] | None = None,
           timeout: float = 60) -> tuple[int, dict[str, Any]]:
    return api_call(server, "POST", f"/api/viewer/action?timeout={timeout:g}",
                    {"actionId": action_id, "params": params or {}}, timeout=timeout + 5)


def answered(server: Any, action_id: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    status, answer = action(server, action_id, params)
    assert status == 200 and answer["success"] is True, (status, answer)
    assert answer["viewer"] == "headless", answer
    assert "headless viewer" in answer["message"], answer
    return answer


def status_of(server: Any) -> dict[str, Any]:
    status, body = api_call(server, "GET", "/api/headless-viewer")
    assert status == 200, body
    return body


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(check: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds:g} s: {what}")


def headless_chromiums() -> list[int]:
    """Browser processes (not helpers) started by a headless viewer."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.startswith(b"--pneuma-headless-viewer=") for a in argv) \
                and not any(a.startswith(b"--type=") for a in argv) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def test_with_no_tab_the_agent_reads_the_slide_view_and_a_screenshot_of_it(pneuma_server: Any) -> None:
    server = pneuma_server("slide", **NO_AGENT)
    described = answered(server, "describe-view")
    assert described["data"]["current"]["file"] == "slides/01-title.html"
    assert "Slide 1 of 8" in described["message"]

    shot = answered(server, "capture-screenshot")
    png = server.workspace / shot["data"]["path"]
    image = Image.open(io.BytesIO(png.read_bytes()))
    assert image.format == "PNG" and image.size == (1280, 720)
    # A picture of the title slide, not a blank frame: many colours, and the
    # title's dark text on the light slide.
    colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the screenshot is (nearly) one colour"

    fit = answered(server, "checkContentFit")
    assert fit["success"] is True

    # `pneuma run` stopping (as at Ctrl-C) takes its Chromium with it.
    pid = status_of(server)["pid"]
    assert pid is not None and alive(pid)
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(20)
    wait_until(lambda: not alive(pid), 10, "the headless viewer's Chromium ended with the server")


def test_webcraft_console_errors_and_accessibility_answer_without_a_tab(pneuma_server: Any) -> None:
    server = pneuma_server("webcraft", **NO_AGENT)
    (server.workspace / "broken.html").write_text(
        "<!doctype html><html><head><title>Broken</title></head><body><h1>Broken</h1>"
        "<img src='assets/none.png'><script>console.error('boom from broken.html')</script></body></html>")
    answered(server, "navigate-to", {"page": "broken.html"})
    described = answered(server, "describe-view")
    assert described["data"]["page"] == "broken.html"

    def error_read() -> bool:
        errors = answered(server, "get-console-errors", {"page": "broken.html"})
        return "boom from broken.html" in str(errors["data"]["errors"])
    wait_until(error_read, 10, "the page's console error reaches the agent")
    checked = answered(server, "check-accessibility", {"page": "broken.html"})
    assert checked["data"]["violations"], checked  # an image without alt text, no lang


def test_without_chromium_the_answer_is_unavailable_with_what_to_install(pneuma_server: Any) -> None:
    server = pneuma_server("slide", env={"PNEUMA_HEADLESS_CHROMIUM": "/nonexistent/chromium"}, **NO_AGENT)
    status, answer = action(server, "describe-view")
    assert status == 503, answer
    error = answer["error"]
    assert error["code"] == "E_UNAVAILABLE" and answer["success"] is False
    assert error["details"] == {"reason": "no_browser", "headless": "no_chromium"}
    assert "/nonexistent/chromium" in answer["message"]
    assert "apt-get install chromium" in error["hint"]


def test_concurrent_first_actions_share_one_chromium_which_closes_when_idle(pneuma_server: Any) -> None:
    before = set(headless_chromiums())
    server = pneuma_server("slide", env={"PNEUMA_HEADLESS_IDLE_S": "2"}, **NO_AGENT)
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: action(server, "describe-view"), range(6)))
    assert [status for status, _ in answers] == [200] * 6, answers
    assert all(answer["viewer"] == "headless" for _, answer in answers)
    state = status_of(server)
    assert state["starts"] == 1 and state["running"] is True
    ours = set(headless_chromiums()) - before
    assert ours == {state["pid"]}, ours

    wait_until(lambda: not status_of(server)["running"], 15, "the idle headless viewer closed")
    wait_until(lambda: not alive(state["pid"]), 10, "its Chromium process ended")
    os.kill(server.process.pid, signal.SIGTERM)
    server.process.wait(20)
