"""The slide mode's check after a turn: the viewer's own fit check, run by
the headless viewer when no tab is open (a served session, fake agent, the
real shell in Chromium), names the slide that overflows; a turn that
leaves every slide fitting passes."""

from __future__ import annotations

import asyncio

import pytest

from pneuma.headless_viewer.settings import find_chromium
from pneuma.turn_checks.feature import FEATURE_NAME, TurnChecks

RESULT = {"type": "result", "data": {"subtype": "success", "is_error": False}}
SLIDE = "slides/02-problem.html"

pytestmark = pytest.mark.skipif(find_chromium() is None, reason="no Chromium for the headless viewer")


async def _result(server, client_msg_id: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The turn's result as GET /api/turn-checks keeps it, once there."""
    for _ in range(600):
        listed = await (await server.get("/api/turn-checks")).json()
        for result in listed["results"]:
            if result["client_msg_id"] == client_msg_id:
                return result  # type: ignore[no-any-return]
        await asyncio.sleep(0.1)
    raise AssertionError(f"turn {client_msg_id} was never checked")


async def test_an_overflowing_slide_fails_the_turn_and_a_fitting_one_passes(
        make_server, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PNEUMA_HEADLESS_VIEWER", "1")  # the root conftest turns it off
    server = await make_server(watch=True)
    feature = server.session.hooks.get(FEATURE_NAME)
    assert isinstance(feature, TurnChecks)
    feature.state.repair = False
    # Not subscribed: no tab of the person's is open, so the headless viewer answers.
    tab = await server.tab(subscribe=False)
    try:
        path = server.workspace / SLIDE
        original = path.read_text(encoding="utf-8")
        items = "".join(f"<li>Point number {i} that takes a whole line of the slide.</li>" for i in range(30))
        await tab.say("add every point", client_msg_id="c1")
        await server.backend.wait_call("send_user_message", 1)
        path.write_text(original.replace("</ul>", items + "</ul>"), encoding="utf-8")
        await asyncio.sleep(0.3)
        server.backend.emit(RESULT)
        checked = await _result(server, "c1")
        assert checked["status"] == "failed", checked
        (problem,) = checked["problems"]
        assert problem["file"] == SLIDE and problem["check"] == "overflow"
        assert problem["message"].startswith("slide 2 overflows the canvas by ") and "vertically" in problem["message"]
        assert problem["locate"] == {"file": SLIDE}

        await tab.say("undo that", client_msg_id="c2")
        await server.backend.wait_call("send_user_message", 2)
        path.write_text(original, encoding="utf-8")
        await asyncio.sleep(0.3)
        server.backend.emit(RESULT)
        passed = await _result(server, "c2")
        assert passed["status"] == "passed" and passed["client_msg_id"] == "c2", passed
    finally:
        await server.close()
