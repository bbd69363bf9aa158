"""Item 1 under stress: many more rounds of the symlink flip race
(tests/tools/test_symlink_race.py) through the HTTP routes, ``/content`` and
the tools; nothing outside the workspace changes or is shown."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

import pytest

from pneuma.tools.runtime import ToolRuntime
from tests.stress.tally import count, record
from tests.tools.conftest import notes_mode, server, ws  # noqa: F401  (fixtures)
from tests.tools.test_symlink_race import (  # noqa: F401  (arena is a fixture)
    INSIDE, OUTSIDE, OUTSIDE_ONLY_NAME, _flipper, _tree, arena)

pytestmark = pytest.mark.stress

MAX_ROUNDS = 1_500
TIME_CAP = 14.0  # seconds; the old code lost within a few hundred rounds


async def test_thousands_of_requests_under_a_flipping_symlink_never_reach_outside(
        server, arena, notes_mode):  # noqa: F811
    ws, outside = arena
    before = _tree(outside)
    runtime = ToolRuntime(notes_mode, ws, server_url="", server_token="",
                          policy_overrides={"writeRequiresDiff": False})
    answers: list[str] = []
    requests = tool_calls = rounds = 0
    stop = threading.Event()
    flipper = _flipper(ws, outside, stop)
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # let the flipper run between any two steps
    flipper.start()
    deadline = time.monotonic() + TIME_CAP
    try:
        while rounds < MAX_ROUNDS and time.monotonic() < deadline:
            body = f"written {rounds}\n"
            # Each round varies which doors go first, so the flip lands
            # between different checks and uses.
            calls = [
                server.get("/api/files/read", params={"path": "link/secret.txt"}),
                server.get("/content/link/secret.txt"),
                server.get("/content/flink"),
                server.post("/api/files", json={"path": "link/victim.txt", "content": body}),
                server.post("/api/files", json={"path": "flink", "content": body}),
                server.delete("/api/files", params={"path": "link/victim.txt"}),
                server.delete("/api/files", params={"path": "link/secret.txt"}),
                server.post("/api/tools/read_file", json={"path": "link/secret.txt"}),
                server.post("/api/tools/list_files", json={"path": "link"}),
            ]
            if rounds % 2:
                calls.reverse()
            for response in await asyncio.gather(*calls):
                answers.append((await response.read()).decode("utf-8", "replace"))
            requests += len(calls)
            name, args = (("read_file", {"path": "flink"}) if rounds % 2 else
                          ("write_to_file", {"path": "link/victim.txt", "content": body,
                                             "mode": "overwrite", "dryRun": False}))
            answers.append(str(await asyncio.to_thread(runtime.call, name, args)))
            tool_calls += 1
            rounds += 1
    finally:
        stop.set()
        flipper.join(5)
        sys.setswitchinterval(old_interval)
    changed = _tree(outside) != before
    leaked = [a for a in answers if OUTSIDE.strip() in a or OUTSIDE_ONLY_NAME in a]
    record("1 symlink race", f"{count(rounds)} rounds, {count(requests)} HTTP requests, "
           f"{count(tool_calls)} direct tool calls, "
           f"{count(len(leaked) + int(changed))} escapes")
    assert rounds > 100, "too few rounds ran to mean anything"
    assert sum(INSIDE.strip() in a for a in answers) > 100, "the reads never got through"
    assert not changed, "a write or delete landed outside the workspace"
    assert not leaked, f"{len(leaked)} answers held outside content, e.g. {leaked[0][:200]}"
