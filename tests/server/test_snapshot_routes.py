"""The workspace as a checkpoint kept it, served read-only for "Compare" and
the timeline (pneuma/server/routes_snapshot.py, issue 28 item 3): before a
turn and after it, read from the store while the workspace has moved on,
with workspace content's isolation, and nothing written to the workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pneuma.checkpoints import Checkpoints
from pneuma.server.csp import CONTENT_POLICY

REL = "slides/01-title.html"
PICTURE = "assets/after.png"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


async def error_of(response: Any) -> dict[str, Any]:
    return (await response.json())["error"]


def stats(workspace: Path) -> dict[str, tuple[int, int]]:
    """Every file of the workspace (outside .pneuma) with its mtime and size."""
    found = {}
    for path in workspace.rglob("*"):
        rel = path.relative_to(workspace).as_posix()
        if path.is_file() and not rel.startswith(".pneuma/"):
            info = path.stat()
            found[rel] = (info.st_mtime_ns, info.st_size)
    return found


async def files_of(server: Any, ref: str, side: str) -> dict[str, Any]:
    response = await server.get(f"/api/checkpoints/{ref}/state/{side}/files")
    assert response.status == 200, await response.text()
    body = await response.json()
    assert body["ref"] == ref and body["side"] == side
    return {row["path"]: row for row in body["files"]}


async def test_before_and_after_a_turn_are_served_from_the_store(make_server):
    server = await make_server()
    target = server.workspace / REL
    original = target.read_text()
    tab = await server.tab()

    await tab.say("make the title louder", client_msg_id="c1")
    await tab.wait_for("turn_checkpoint")
    await server.backend.wait_call("send_user_message")

    # Mid-turn, "after" is the workspace as it is now (nothing recorded yet).
    target.write_text(original + "<h1>HALFWAY</h1>\n")
    running = await files_of(server, "1", "after")
    assert "HALFWAY" in running[REL]["content"]

    target.write_text(original + "<h1>LOUDER</h1>\n")
    (server.workspace / "assets").mkdir(exist_ok=True)
    (server.workspace / PICTURE).write_bytes(PNG)
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.wait_for("turn_changes")

    # The person edits the slide by hand afterwards: neither side shows it.
    target.write_text("<section>my own slide</section>\n")
    untouched = stats(server.workspace)
    manifests = sorted(os.listdir(server.workspace / ".pneuma/checkpoints/manifests"))

    before = await files_of(server, "1", "before")
    after = await files_of(server, "1", "after")
    assert before[REL]["content"] == original
    assert after[REL]["content"] == original + "<h1>LOUDER</h1>\n"
    assert PICTURE not in before
    assert after[PICTURE]["binary"] is True and after[PICTURE]["content"] is None
    assert after[PICTURE]["size"] == len(PNG)
    assert set(after) - set(before) == {PICTURE}

    # One file's bytes, with workspace content's isolation.
    page = await server.get(f"/api/checkpoints/1/state/before/content/{REL}")
    assert page.status == 200
    assert await page.text() == original
    assert page.headers["Content-Type"].startswith("text/html")
    assert page.headers["Content-Security-Policy"] == CONTENT_POLICY
    assert "allow-same-origin" not in page.headers["Content-Security-Policy"]
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    picture = await server.get(f"/api/checkpoints/1/state/after/content/{PICTURE}")
    assert picture.status == 200 and await picture.read() == PNG
    assert picture.headers["Content-Type"] == "image/png"

    # Nothing was restored or written: the workspace and the store are as they were.
    assert stats(server.workspace) == untouched
    assert target.read_text() == "<section>my own slide</section>\n"
    assert sorted(os.listdir(server.workspace / ".pneuma/checkpoints/manifests")) == manifests
    assert [c.ref for c in Checkpoints.open_existing(server.workspace).checkpoints()] == ["1"]


async def test_bad_requests_get_the_one_error_shape(make_server):
    server = await make_server()
    tab = await server.tab()
    await tab.say("hello")
    await tab.wait_for("turn_checkpoint")
    await server.backend.wait_call("send_user_message")
    server.backend.emit({"type": "result", "data": {"subtype": "success", "is_error": False}})
    await tab.wait_for("turn_changes")

    cases = [
        ("/api/checkpoints/1/state/during/files", 400, "E_BAD_ARGS"),
        ("/api/checkpoints/9/state/before/files", 404, "E_NOT_FOUND"),
        ("/api/checkpoints/x/state/before/files", 400, "E_BAD_ARGS"),
        ("/api/checkpoints/1/state/before/content/slides/nope.html", 404, "E_NOT_FOUND"),
        # Only the state's own watched files: never Pneuma's state or a path outside.
        ("/api/checkpoints/1/state/before/content/.pneuma/session.json", 404, "E_NOT_FOUND"),
        ("/api/checkpoints/1/state/before/content/..%2f..%2fetc/passwd", 404, "E_NOT_FOUND"),
    ]
    for url, status, code in cases:
        response = await server.get(url)
        assert response.status == status, (url, await response.text())
        assert (await error_of(response))["code"] == code, url


def test_a_turn_that_never_ended_ends_where_the_next_checkpoint_began(tmp_path):
    """No end recorded (the server was killed mid-turn): "after" is the
    next checkpoint's files, read from the store, not the workspace now."""
    from pneuma.server.routes_snapshot import resolve_state

    (tmp_path / "a.md").write_text("one\n")
    store = Checkpoints(tmp_path)
    store.record("first")
    (tmp_path / "a.md").write_text("two\n")
    store.record("second")  # turn 1 never ended
    (tmp_path / "a.md").write_text("three\n")

    after = resolve_state(store, "1", "after")
    assert not after.live and after.read(store, "a.md") == b"two\n"
    assert resolve_state(store, "1", "before").read(store, "a.md") == b"one\n"
    newest = resolve_state(store, "2", "after")  # still running: the workspace now
    assert newest.live and newest.read(store, "a.md") == b"three\n"
