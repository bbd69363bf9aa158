"""Issue 23, item 8 under stress: a workspace holding links to ``/``,
``/proc``, ``/etc``, a folder outside and loops back into itself (planted
before the start and while it runs), with requests timed throughout and
the watcher made to fail now and then. No request waits 2 s, every change
inside reaches a subscribed tab, nothing outside does, and the watcher
comes back after each failure."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pneuma.server import watcher
from pneuma.testing import serve
from tests.server.test_watcher_links import outside_folder
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

ROUNDS = 60
FAILURES = 3  # injected, spread over the rounds
MAX_WAIT = 2.0  # seconds any request may take
TIME_CAP = 45.0
LINKS_BEFORE = {"root": "/", "slides/proc": "/proc", "slides/etc": "/etc", "slides/up": "..",
                "slides/self": ".", "assets/loop": "../assets"}


class FailsWhenTold:
    """A folder watch that fails at its next batch once ``fail`` is set,
    as an inotify error would."""

    fail: ClassVar[list[bool]] = [False]

    def __init__(self, folders: list[str]) -> None:
        self.real = REAL_OPEN(folders)

    def watch(self, *args: Any) -> Any:
        changes = self.real.watch(*args)
        if isinstance(changes, set) and self.fail[0]:
            self.fail[0] = False
            raise OSError("injected watcher failure")
        return changes

    def close(self) -> None:
        self.real.close()


REAL_OPEN = watcher.open_folder_watch


async def test_links_out_never_stall_or_leak_and_failures_restart(tmp_path: Path, monkeypatch):
    outside = outside_folder(tmp_path)
    workspace = tmp_path / "ws"
    (workspace / "slides").mkdir(parents=True)
    (workspace / "assets").mkdir()
    for rel, target in LINKS_BEFORE.items():
        os.symlink(target, workspace / rel)
    os.symlink(outside, workspace / "slides" / "outside")
    monkeypatch.setattr(watcher, "open_folder_watch", FailsWhenTold)
    tried = {"rounds": 0, "links": len(LINKS_BEFORE) + 1, "failures": 0, "restarts": 0,
             "lost": 0, "outside": 0, "slowest": 0.0}
    started = time.monotonic()
    async with serve("slide", workspace, backend="none", watch=True) as server:
        tried["slowest"] = time.monotonic() - started  # the start itself, links and all
        tab = await server.tab()
        timing = asyncio.create_task(_time_requests(server, tried))
        try:
            for n in range(ROUNDS):
                if time.monotonic() - started > TIME_CAP:
                    break
                if n % 10 == 5:  # links made while it runs
                    os.symlink("/", workspace / "slides" / f"root{n}")
                    os.symlink(outside, workspace / "slides" / f"out{n}")
                    tried["links"] += 2
                (outside / "deep" / f"new{n}.html").write_text("<p>outside</p>")
                if n % (ROUNDS // FAILURES) == ROUNDS // FAILURES - 1:
                    await _fail_and_come_back(workspace, tab, n, tried)
                rel = f"slides/{n:03}-round.html"
                (workspace / rel).write_text(f"<p>round {n}</p>")
                try:
                    await tab.wait_for("content_update", 5.0, where=lambda m, rel=rel: any(
                        f["path"] == rel for f in m["files"]))
                except AssertionError:
                    tried["lost"] += 1
                tried["rounds"] += 1
        finally:
            timing.cancel()
        reported = [f for m in tab.received if m.get("type") == "content_update"
                    for f in m["files"]]
        tried["outside"] = sum("outside" in str(f.get("content")) or "canary" in str(
            f.get("content")) or not f["path"].endswith("-round.html") for f in reported)
    record("23.8 watcher links", f"{count(tried['rounds'])} changes with {tried['links']} links to /, /proc, "
                   f"/etc, outside and loops, {tried['failures']} injected watcher failures: "
                   f"{tried['lost']} changes lost, {tried['outside']} outside files reported, "
                   f"{tried['restarts']} restarts, slowest request {tried['slowest']:.2f} s")
    assert tried["lost"] == 0 and tried["outside"] == 0
    assert tried["restarts"] == tried["failures"] == FAILURES
    assert tried["slowest"] < MAX_WAIT


async def _fail_and_come_back(workspace: Path, tab: Any, n: int, tried: dict[str, Any]) -> None:
    """Make the watcher's next batch fail; the page is told, then told it is back."""
    FailsWhenTold.fail[0] = True
    (workspace / "slides" / f"{n:03}-trigger.txt").write_text("wakes the watcher")
    await tab.wait_for("error", 5.0, where=lambda m: m.get("code") == "watcher_failed")
    tried["failures"] += 1
    await tab.wait_for("system_note", 5.0, where=lambda m: "back" in m.get("text", ""))
    tried["restarts"] += 1


async def _time_requests(server: Any, tried: dict[str, Any]) -> None:
    """GET /api/files over and over; the slowest answer is kept."""
    while True:
        began = time.monotonic()
        response = await server.get("/api/files")
        await response.read()
        assert response.status == 200
        tried["slowest"] = max(tried["slowest"], time.monotonic() - began)
        await asyncio.sleep(0.05)
