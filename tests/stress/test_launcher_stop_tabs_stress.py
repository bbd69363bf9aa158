"""Issue 25, item 7 under stress: a workspace opened and stopped from the
launcher again and again, each time with several tabs in random states
(connected only, subscribed, mid-turn with the agent streaming, closing
as the stop comes). Every tab still open when the stop comes is told
``workspace_stopped`` before its socket closes, the workspace opens again
every time, and no stop takes long. Bounded in cycles and in time."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import aiohttp
import pytest

from pneuma.testing.browser import BrowserTab, join_session
from tests.launcher.conftest import launcher  # noqa: F401 (the fixture)
from tests.launcher.test_launcher_stop_tells_tabs import read_until_closed
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

CYCLES = 20
TABS = 5
TIME_CAP = 40.0  # seconds; the counts say how far it got
SLOWEST_STOP_ALLOWED = 5.0  # seconds for one stop, its tabs told included
STATES = ("connected", "subscribed", "busy", "closing")


async def _connect(http: aiohttp.ClientSession, base: str, session_id: str, token: str) -> Any:
    return await http.ws_connect(f"{base}/ws/browser/{session_id}",
                                 headers={"Authorization": f"Bearer {token}", "Origin": base})


async def _tab_in(state: str, http: aiohttp.ClientSession, opened: dict[str, Any]) -> Any:
    base, token = opened["url"].split("/?")[0], opened["url"].rsplit("token=", 1)[1]
    ws = await _connect(http, base, opened["sessionId"], token)
    if state in ("subscribed", "busy"):
        tab = BrowserTab(ws)
        await join_session(tab)
        if state == "busy":
            await tab.say("slow")  # the fake CLI streams for 10 s unless stopped
            await tab.wait_for("stream_event", timeout=15)
        return tab
    return ws


async def _told(tab: Any) -> bool:
    if isinstance(tab, BrowserTab):
        try:
            await tab.wait_for("workspace_stopped", timeout=10)
        except (AssertionError, asyncio.TimeoutError):
            return False
        return True
    return any(m["type"] == "workspace_stopped" for m in await read_until_closed(tab))


async def test_every_open_tab_is_told_through_many_stops(launcher, tmp_path) -> None:  # noqa: F811
    rng = random.Random(25_07)
    launcher.state.hosting.launcher_page = f"{launcher.url}/"
    workspace = tmp_path / "again"
    started = time.monotonic()
    cycles = tabs_told = tabs_closed_first = tabs_missed = reopen_failures = 0
    slowest_stop = 0.0
    by_state = dict.fromkeys(STATES, 0)
    while cycles < CYCLES and time.monotonic() - started < TIME_CAP:
        kind = "new" if cycles == 0 else "open"
        body = {"mode": "doc", "path": str(workspace)} if kind == "new" else {"path": str(workspace)}
        status, opened = await launcher.call("POST", f"/api/workspaces/{kind}", json=body)
        if status != 200:
            reopen_failures += 1
            break
        states = [rng.choice(STATES) for _ in range(TABS)]
        tabs = [await _tab_in(state, launcher.http, opened) for state in states]
        closing = [tab for tab, state in zip(tabs, states, strict=True) if state == "closing"]
        stop_started = time.monotonic()
        await asyncio.gather(
            launcher.call("POST", "/api/sessions/stop", json={"path": str(workspace.resolve())}),
            *(tab.close() for tab in closing))
        slowest_stop = max(slowest_stop, time.monotonic() - stop_started)
        for tab, state in zip(tabs, states, strict=True):
            by_state[state] += 1
            if state == "closing":
                tabs_closed_first += 1
                continue
            if await _told(tab):
                tabs_told += 1
            else:
                tabs_missed += 1
            await tab.close()
        cycles += 1
    record("25.7 launcher stop", f"{count(cycles)} open/stop cycles with "
                   f"{count(cycles * TABS)} tabs ({', '.join(f'{count(n)} {s}' for s, n in by_state.items())}): "
                   f"{count(tabs_told)} told before the close, {count(tabs_missed)} missed, "
                   f"{count(tabs_closed_first)} closed by the tab first, {count(reopen_failures)} reopen "
                   f"failures, slowest stop {slowest_stop:.2f} s")
    assert cycles >= 3, f"only {cycles} cycles in {TIME_CAP} s"
    assert tabs_missed == 0 and reopen_failures == 0
    assert slowest_stop < SLOWEST_STOP_ALLOWED
