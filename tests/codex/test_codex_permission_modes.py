"""Each Pneuma permission mode with the REAL Codex CLI behaves as Claude
Code's mode of the same name (docs/backends.md, "Permission modes"): a
patch inside the workspace and a shell write (`echo x > f`), each either
asked about in the page or not, and the file written or not.

| mode              | patch in the workspace | shell write             |
|-------------------|------------------------|-------------------------|
| bypassPermissions | runs, not asked        | runs, not asked         |
| acceptEdits       | runs, not asked        | asked                   |
| default           | asked                  | asked                   |
| plan              | asked                  | refused (read-only)     |
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.codex.conftest import requires_codex
from tests.codex.test_codex_backend_e2e import TURN, open_session, say
from tests.e2e.pneuma_run import BrowserClient

pytestmark = requires_codex

# mode -> (a patch is asked, a shell write is asked, the shell write lands)
EXPECTED: dict[str, tuple[bool, bool, bool]] = {
    "bypassPermissions": (False, False, True),
    "acceptEdits": (False, True, True),
    "default": (True, True, True),
    "plan": (True, False, False),
}


async def act(client: BrowserClient, prompt: str, msg_id: str, target: Path) -> bool:
    """Say ``prompt``; allow a card if one comes (checking nothing was
    written before the allow); True when a card came. The turn is over on return."""
    mark = await say(client, prompt, msg_id)
    first = await client.wait_for(lambda m: m["type"] in ("permission_request", "result"),
                                  since=mark, timeout=TURN, what="a card or the end of the turn")
    asked = first["type"] == "permission_request"
    if asked:
        assert not target.exists(), "nothing is written before the person allows it"
        await client.send({"type": "permission_response",
                           "request_id": first["request"]["request_id"], "behavior": "allow"})
    await client.wait_turn_done(since=mark, timeout=TURN)
    return asked


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_a_mode_asks_what_claude_codes_mode_asks(mode: str, fake_responses: Any,
                                                       start_codex: Any, connect: Any) -> None:
    patch_asked, shell_asked, shell_lands = EXPECTED[mode]
    run, client = await open_session(start_codex, connect, "--permission-mode", mode)
    patched = run.workspace / "patched.txt"
    written = run.workspace / "written.txt"

    asked = await act(client, "[patch: patched.txt][content: patched]", f"{mode}-1", patched)
    assert asked == patch_asked, f"{mode}: a patch inside the workspace asked={asked}"
    assert patched.read_text() == "patched\n"

    asked = await act(client, "[shell: echo x > written.txt]", f"{mode}-2", written)
    assert asked == shell_asked, f"{mode}: a shell write asked={asked}"
    assert written.exists() == shell_lands
    if shell_lands:
        assert written.read_text() == "x\n"


async def test_accept_edits_still_asks_for_a_patch_outside_the_workspace(
        fake_responses: Any, start_codex: Any, connect: Any, tmp_path: Path) -> None:
    run, client = await open_session(start_codex, connect, "--permission-mode", "acceptEdits")
    outside = tmp_path / "outside.txt"
    mark = await say(client, f"[patch: {outside}][content: outside]", "accept-out-1")
    request = (await client.wait_type("permission_request", since=mark, timeout=TURN))["request"]
    assert request["tool_name"] == "apply_patch" and str(outside) in request["input"]["file_path"]
    assert not outside.exists()
    await client.send({"type": "permission_response", "request_id": request["request_id"],
                       "behavior": "deny"})
    await client.wait_turn_done(since=mark, timeout=TURN)
    assert not outside.exists()
