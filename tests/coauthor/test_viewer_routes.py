"""The viewer's HTTP routes (routes.py) and the shapes they serve (viewer_api.py):
each route must do exactly what the CLI's use case does."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiohttp import web

from pneuma.server.config import CONFIG
from pneuma_coauthor import register_routes
from pneuma_coauthor.domain.patches import make_diff
from pneuma_coauthor.routes import register
from pneuma_coauthor.viewer_api import side_by_side
from pneuma_coauthor.workflow.usecases import CoAuthor

OLD = "This paper argue that every change should be a patch."
NEW = "This paper argues that every change should be a patch."


@pytest.fixture
async def client(paper: Path, aiohttp_client):  # noqa: ANN001, ANN201
    scan = CoAuthor(paper)  # the files already on the log: the server's watcher then adds nothing at start
    scan.scan_files()
    scan.close()
    app = web.Application()
    app[CONFIG] = SimpleNamespace(workspace=paper)  # the routes read only the workspace
    register(app)
    return await aiohttp_client(app)


def propose(paper: Path, task_id: str) -> str:
    app = CoAuthor(paper)
    try:
        text = (paper / "sections/intro.tex").read_text()
        diff = make_diff("sections/intro.tex", text, text.replace(OLD, NEW))
        return app.propose_patch(task_id, diff, author="coauthor").payload.patch_id  # type: ignore[attr-defined]
    finally:
        app.close()


def test_side_by_side_pairs_removed_and_added_lines():
    old = "a\nkeep\nThe cat sat.\ngone\nz\n"
    new = "a\nkeep\nThe dog sat.\nz\nadded\n"
    (f,) = side_by_side(make_diff("s.tex", old, new))
    kinds = [r["kind"] for r in f["rows"]]
    assert kinds == ["hunk", "same", "same", "change", "del", "same", "add"]
    change = f["rows"][3]
    assert (change["left"]["n"], change["right"]["n"]) == (3, 3)
    left, right = change["left"], change["right"]
    # The marked span is the changed word, not the whole line.
    assert left["text"][slice(*left["mark"])] == "cat" and right["text"][slice(*right["mark"])] == "dog"
    assert f["rows"][4]["right"] is None and f["rows"][4]["left"] == {"n": 4, "text": "gone"}
    assert f["rows"][6]["left"] is None and f["rows"][6]["right"] == {"n": 5, "text": "added"}
    assert (f["added"], f["removed"]) == (2, 2)


def test_routes_only_for_the_coauthor_mode(paper: Path):
    for name, expected in (("slide", False), ("coauthor", True)):
        app = web.Application()
        app[CONFIG] = SimpleNamespace(workspace=paper)
        register_routes(app=app, mode=SimpleNamespace(name=name))
        paths = {r.resource.canonical for r in app.router.routes()}
        assert ("/api/coauthor/tasks" in paths) is expected


async def test_create_with_a_selection_then_board_and_detail(client, paper: Path):  # noqa: ANN001
    r = await client.post("/api/coauthor/tasks", json={"title": "Fix the grammar", "file": "sections/intro.tex", "lines": "4-5"})
    assert r.status == 201
    task_id = (await r.json())["taskId"]
    assert task_id == "t-001"
    board = await (await client.get("/api/coauthor/tasks")).json()
    (task,) = board["tasks"]
    assert task["artifactRefs"] == [{"path": "sections/intro.tex", "range": {"lineStart": 4, "lineEnd": 5}}]
    assert (task["status"], task["assignedTo"]) == ("open", "coauthor")
    assert (await client.post("/api/coauthor/tasks", json={"title": "  "})).status == 400
    assert (await client.post("/api/coauthor/tasks", json={"title": "x", "file": "../etc/passwd"})).status == 400

    patch_id = await asyncio.to_thread(propose, paper, task_id)
    detail = await (await client.get(f"/api/coauthor/tasks/{task_id}")).json()
    assert detail["currentPatchId"] == patch_id
    # (The server's file watcher may add the scan of intro.tex: the person's files are part of the thread.)
    assert [e["type"] for e in detail["thread"] if e["type"] != "ArtifactChanged"] == [
        "TaskCreated", "TaskRouted", "PatchProposed",
    ]
    patch = detail["patches"][patch_id]
    assert patch["state"] == "proposed" and patch["files"][0]["drifted"] is False
    rows = patch["sideBySide"][0]["rows"]
    (change,) = [r for r in rows if r["kind"] == "change"]
    assert (change["left"]["text"], change["right"]["text"]) == (OLD, NEW)
    assert (await client.get("/api/coauthor/tasks/t-999")).status == 404
    assert (await (await client.get(f"/api/coauthor/patches/{patch_id}")).json())["taskId"] == task_id


async def test_accept_applies_and_reject_needs_a_reason(client, paper: Path):  # noqa: ANN001
    task_id = (await (await client.post("/api/coauthor/tasks", json={"title": "Grammar"})).json())["taskId"]
    first = await asyncio.to_thread(propose, paper, task_id)
    r = await client.post(f"/api/coauthor/tasks/{task_id}/reject", json={"patchId": first})
    assert r.status == 400  # a rejection without a reason teaches the agent nothing
    r = await client.post(f"/api/coauthor/tasks/{task_id}/reject", json={"patchId": first, "reason": "keep it plural"})
    assert (await r.json()) == {"patchId": first, "status": "rejected", "reason": "keep it plural"}
    detail = await (await client.get(f"/api/coauthor/tasks/{task_id}")).json()
    assert detail["task"]["proposals"][first]["reason"] == "keep it plural"

    second = await asyncio.to_thread(propose, paper, task_id)
    r = await client.post(f"/api/coauthor/tasks/{task_id}/accept", json={})  # "latest"
    body = await r.json()
    assert (body["status"], body["patchId"]) == ("applied", second)
    assert NEW in (paper / "sections/intro.tex").read_text()
    assert (await (await client.get(f"/api/coauthor/tasks/{task_id}")).json())["task"]["status"] == "done"
    # Nothing left to accept: refused with the use case's message.
    r = await client.post(f"/api/coauthor/tasks/{task_id}/accept", json={})
    assert r.status == 409 and "no patch awaiting review" in (await r.json())["error"]["message"]


async def test_accept_never_overwrites_an_edit(client, paper: Path):  # noqa: ANN001
    task_id = (await (await client.post("/api/coauthor/tasks", json={"title": "Grammar"})).json())["taskId"]
    patch_id = await asyncio.to_thread(propose, paper, task_id)
    edited = (paper / "sections/intro.tex").read_text() + "A sentence the person just wrote.\n"
    (paper / "sections/intro.tex").write_text(edited)
    patch = await (await client.get(f"/api/coauthor/patches/{patch_id}")).json()
    assert patch["files"][0]["drifted"] is True
    body = await (await client.post(f"/api/coauthor/tasks/{task_id}/accept", json={"patchId": patch_id})).json()
    assert body["status"] == "needs_rebase" and body["drifted"][0]["path"] == "sections/intro.tex"
    assert (paper / "sections/intro.tex").read_text() == edited


async def test_events_long_poll_wakes_on_another_process_append(client, paper: Path):  # noqa: ANN001
    first = await (await client.get("/api/coauthor/events?since=0")).json()
    since = first["lastSeq"]
    start = time.monotonic()
    empty = await (await client.get(f"/api/coauthor/events?since={since}&wait=0.3")).json()
    assert empty["events"] == [] and time.monotonic() - start >= 0.3

    def create_elsewhere() -> None:
        time.sleep(0.3)
        app = CoAuthor(paper)  # its own connection, as a CLI process has
        try:
            app.create_task("From the terminal")
        finally:
            app.close()

    waiter = asyncio.ensure_future(client.get(f"/api/coauthor/events?since={since}&wait=10"))
    await asyncio.to_thread(create_elsewhere)
    body = await (await waiter).json()
    assert time.monotonic() - start < 8
    assert [e["type"] for e in body["events"]][:2] == ["TaskCreated", "TaskRouted"]
    assert body["events"][0]["seq"] == since + 1 and body["lastSeq"] >= since + 2
    r = await client.post("/api/coauthor/tasks/t-001/feedback", json={"text": "Keep it short", "answer": True})
    assert (await r.json()) == {"taskId": "t-001", "kind": "answer"}
    assert (await client.post("/api/coauthor/tasks/t-001/cancel", json={})).status == 200
