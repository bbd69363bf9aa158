"""The watcher never follows a link out of the workspace, never blocks the
event loop, and a failure of it is restarted and shown in the page
(issue 23, item 8)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_watcher import updates_for, wait_file

WAIT = 5.0


def outside_folder(tmp_path: Path) -> Path:
    """A folder beside the workspace with a page and a nested page, both
    saying "outside" (what no tab may ever be sent)."""
    folder = tmp_path / "outside"
    (folder / "deep").mkdir(parents=True)
    (folder / "secret.html").write_text("<p>outside secret</p>")
    (folder / "deep" / "nested.html").write_text("<p>nested outside</p>")
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return outside_folder(tmp_path)


async def test_a_folder_linked_outside_is_never_watched(make_server, outside, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = await make_server(watch=False, workspace=workspace)
    os.symlink(outside, server.workspace / "slides" / "linked")
    os.symlink("/", server.workspace / "slides" / "root")
    await server.close()
    server = await make_server(watch=True, workspace=workspace, seed=False)
    tab = await server.tab()
    # A link made while it runs is not walked either.
    os.symlink(outside, server.workspace / "slides" / "made-later")
    (outside / "changed.html").write_text("<p>changed outside</p>")
    (outside / "deep" / "nested.html").write_text("<p>changed nested</p>")
    # A change inside arrives: everything before it was seen by then.
    (server.workspace / "slides" / "inside.html").write_text("<p>inside</p>")
    await wait_file(tab, "slides/inside.html")
    await tab.drain(0.3)
    reported = {f["path"] for m in tab.received if m["type"] == "content_update"
                for f in m["files"]}
    assert reported == {"slides/inside.html"}, reported
    assert not any("outside" in str(f.get("content")) for m in tab.received
                   if m["type"] == "content_update" for f in m["files"])


async def test_a_file_link_leading_outside_sends_no_content(make_server, outside):
    server = await make_server(watch=True)
    tab = await server.tab()
    os.symlink(outside / "secret.html", server.workspace / "slides" / "leak.html")
    (server.workspace / "slides" / "inside.html").write_text("<p>inside</p>")
    await wait_file(tab, "slides/inside.html")
    await tab.drain(0.3)
    assert updates_for(tab, "slides/leak.html") == []


async def test_a_link_to_the_root_does_not_stall_requests(make_server, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.symlink("/", workspace / "root")
    loop = asyncio.get_running_loop()
    started = loop.time()
    server = await make_server(watch=True, workspace=workspace)
    tab = await server.tab()
    response = await server.get("/api/files")
    assert response.status == 200
    assert loop.time() - started < 2.0
    (server.workspace / "slides" / "after.html").write_text("<p>after</p>")
    await wait_file(tab, "slides/after.html")


class FailingOnce:
    """A folder watch whose first batch fails, as an inotify error would."""

    def __init__(self, real: Any, failures: list[int]) -> None:
        self.real, self.failures = real, failures

    def watch(self, *args: Any) -> Any:
        changes = self.real.watch(*args)
        if isinstance(changes, set) and not self.failures:
            self.failures.append(1)
            raise RuntimeError("injected watcher failure")
        return changes

    def close(self) -> None:
        self.real.close()


async def test_a_watcher_failure_is_restarted_and_shown(make_server, monkeypatch):
    from pneuma.server import watcher

    failures: list[int] = []
    real_open = watcher.open_folder_watch
    monkeypatch.setattr(watcher, "open_folder_watch",
                        lambda folders: FailingOnce(real_open(folders), failures))
    server = await make_server(watch=True)
    tab = await server.tab()
    (server.workspace / "slides" / "first.html").write_text("<p>first</p>")
    failed = await tab.wait_for("error", WAIT, where=lambda m: m["code"] == "watcher_failed")
    assert "injected watcher failure" in failed["message"]
    await tab.wait_for("system_note", WAIT, where=lambda m: "live updates" in m["text"].lower())
    (server.workspace / "slides" / "second.html").write_text("<p>second</p>")
    entry = await wait_file(tab, "slides/second.html")
    assert entry["content"] == "<p>second</p>"
    assert failures == [1]
