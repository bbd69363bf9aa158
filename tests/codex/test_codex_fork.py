"""Rewinding the conversation forks the REAL Codex thread (issue 28, item 4;
docs/conversations.md, "Branches"): `pneuma run --backend codex` against
the fake Responses API, a socket tab, inside the loopback-only namespace.

Three messages; "Edit and resend" on the second (POST
/api/conversation/rewind): Codex's next request holds the first message
and the edited one, none of the later turns (``thread/fork`` through the
turn before it). Switching back to the old branch resumes the old thread:
its next request holds every old turn.
"""

from __future__ import annotations

from typing import Any

import aiohttp

from tests.codex.conftest import requires_codex
from tests.codex.test_codex_backend_e2e import TURN, open_session, say

pytestmark = requires_codex


def said(fake_responses: Any, body: dict[str, Any]) -> list[str]:
    """The person's texts in one request's input, oldest first."""
    texts = [fake_responses.last_user_text({"input": [item]}) for item in body["input"]]
    return [t for t in texts if "Note " in t]


async def post(run: Any, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http:
        async with http.post(run.base_url + path, json=body,
                             headers={"Authorization": f"Bearer {run.token}"}) as response:
            answer: dict[str, Any] = await response.json()
            assert response.status == 200, answer
            return answer


async def test_edit_and_resend_forks_the_codex_thread(fake_responses, start_codex, connect):
    run, client = await open_session(start_codex, connect)
    for n in (1, 2, 3):
        mark = await say(client, f"Note {n}: remember it", f"msg-f-{n}")
        await client.wait_turn_done(since=mark, timeout=TURN)
    assert said(fake_responses, fake_responses.requests[-1])[-3:] == [
        "Note 1: remember it", "Note 2: remember it", "Note 3: remember it"]

    mark = client.mark()
    await post(run, "/api/conversation/rewind",
               {"clientMsgId": "msg-f-2", "text": "Note 2 edited: remember this instead"})
    await client.wait_turn_done(since=mark, timeout=TURN)
    forked = said(fake_responses, fake_responses.requests[-1])
    assert forked[0] == "Note 1: remember it"
    assert forked[-1].endswith("Note 2 edited: remember this instead")
    assert not any(t.startswith(("Note 2:", "Note 3:")) for t in forked), forked

    listing = await _get(run, "/api/conversation/branches")
    old = next(b["id"] for b in listing["branches"] if not b["current"])
    await post(run, f"/api/conversation/branches/{old}/switch")
    mark = await say(client, "Note 4: and this", "msg-f-4")
    await client.wait_turn_done(since=mark, timeout=TURN)
    resumed = said(fake_responses, fake_responses.requests[-1])
    assert resumed[-4:] == ["Note 1: remember it", "Note 2: remember it", "Note 3: remember it",
                            "Note 4: and this"]


async def _get(run: Any, path: str) -> Any:
    async with aiohttp.ClientSession() as http:
        async with http.get(run.base_url + path,
                            headers={"Authorization": f"Bearer {run.token}"}) as response:
            return await response.json()
