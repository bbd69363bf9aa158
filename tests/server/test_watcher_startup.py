"""The watcher is set up without a fixed sleep before the ready line, yet a
change made the moment its start-up step is over is still reported."""

from __future__ import annotations

import asyncio
import contextlib
import json

from pneuma.server.app import _watcher_ctx


async def test_a_write_right_after_the_watchers_start_up_is_reported(make_server):
    for attempt in range(3):  # each a fresh server and a fresh race
        server = await make_server(watch=False)
        ctx = _watcher_ctx(server.app)
        await ctx.__anext__()  # what the app's start-up awaits before the ready line
        # No await between the watcher's start-up and the write.
        target = server.workspace / "slides" / f"0{attempt}-early.html"
        target.write_text(f"<p>early {attempt}</p>")
        rel = target.relative_to(server.workspace).as_posix()
        found: list[dict] = []
        deadline = asyncio.get_running_loop().time() + 3.0
        try:
            while not found and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.02)
                found = [f for _, text in server.session.replay
                         for m in [json.loads(text)] if m["type"] == "content_update"
                         for f in m["files"] if f["path"] == rel]
        finally:
            with contextlib.suppress(StopAsyncIteration):
                await ctx.__anext__()  # stops the watcher
        assert found and found[0]["content"] == f"<p>early {attempt}</p>"
