"""The viewer's HTTP routes (routes.py) and the shapes they serve (viewer_api.py),
on a real ``pneuma run`` server (``pneuma.testing.serve``): each route must do
exactly what the CLI's use case does, answer refusals in the host's one error
shape, and every billboard event must reach the tabs as a broadcast."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pneuma.testing import RunningServer, serve
from pneuma_coauthor.domain.patches import make_diff
from pneuma_coauthor.viewer_api import side_by_side
from pneuma_coauthor.workflow.usecases import CoAuthor

OLD = "This paper argue that every change should be a patch."
NEW = "This paper argues that every change should be a patch."


@pytest.fixture
async def server(paper: Path) -> AsyncIterator[RunningServer]:
    async with serve("coauthor", paper, backend="none", watch=False) as running:
        yield running


def propose(paper: Path, task_id: str) -> str:
    app = CoAuthor(paper)  # its own connection, as the agent's CLI process has
    try:
        text = (paper / "sections/intro.tex").read_text()
        diff = make_diff("sections/intro.tex", text, text.replace(OLD, NEW))
        return app.propose_patch(task_id, diff, author="coauthor").payload.patch_id  # type: ignore[attr-defined]
    finally:
        app.close()


def create_elsewhere(paper: Path, title: str) -> str:
    app = CoAuthor(paper)
    try:
        return app.create_task(title).task_id
    finally:
        app.close()


async def error_of(response: Any) -> tuple[int, str, str]:
    body = await response.json()
    return response.status, body["error"]["code"], body["error"]["message"]


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


async def test_routes_only_when_coauthor_is_served(paper: Path, tmp_path: Path):
    # The host asks only the plugin that provides the served mode for routes.
    async with serve("slide", tmp_path / "deck", backend="none", watch=False) as slide:
        status, code, _ = await error_of(await slide.get("/api/coauthor/tasks"))
        assert (status, code) == (404, "E_NOT_FOUND")
    async with serve("coauthor", paper, backend="none", watch=False) as coauthor:
        assert (await coauthor.get("/api/coauthor/tasks")).status == 200
        # Behind the server's token like every other route.
        assert (await coauthor.get("/api/coauthor/tasks", token=False)).status == 401


async def test_create_with_a_selection_then_board_and_detail(server: RunningServer, paper: Path):
    r = await server.post("/api/coauthor/tasks", json={"title": "Fix the grammar", "file": "sections/intro.tex", "lines": "4-5"})
    assert r.status == 201
    task_id = (await r.json())["taskId"]
    assert task_id == "t-001"
    board = await (await server.get("/api/coauthor/tasks")).json()
    (task,) = board["tasks"]
    assert task["artifactRefs"] == [{"path": "sections/intro.tex", "range": {"lineStart": 4, "lineEnd": 5}}]
    assert (task["status"], task["assignedTo"]) == ("open", "coauthor")
    status, code, message = await error_of(await server.post("/api/coauthor/tasks", json={"title": "  "}))
    assert (status, code) == (400, "E_BAD_ARGS") and "needs a title" in message
    status, code, _ = await error_of(await server.post("/api/coauthor/tasks", json={"title": "x", "file": "../etc/passwd"}))
    assert (status, code) == (400, "E_BAD_ARGS")
    status, code, _ = await error_of(await server.post("/api/coauthor/tasks", data=b"{not json",
                                                       headers={"Content-Type": "application/json"}))
    assert (status, code) == (400, "E_BAD_ARGS")

    patch_id = await asyncio.to_thread(propose, paper, task_id)
    detail = await (await server.get(f"/api/coauthor/tasks/{task_id}")).json()
    assert detail["currentPatchId"] == patch_id
    # (The start-up scan may add intro.tex's revision: the person's files are part of the thread.)
    assert [e["type"] for e in detail["thread"] if e["type"] != "ArtifactChanged"] == [
        "TaskCreated", "TaskRouted", "PatchProposed",
    ]
    patch = detail["patches"][patch_id]
    assert patch["state"] == "proposed" and patch["files"][0]["drifted"] is False
    rows = patch["sideBySide"][0]["rows"]
    (change,) = [r for r in rows if r["kind"] == "change"]
    assert (change["left"]["text"], change["right"]["text"]) == (OLD, NEW)
    status, code, message = await error_of(await server.get("/api/coauthor/tasks/t-999"))
    assert (status, code, message) == (404, "E_NOT_FOUND", "no task t-999")
    status, code, _ = await error_of(await server.get("/api/coauthor/patches/t-001-p9"))
    assert (status, code) == (404, "E_NOT_FOUND")
    assert (await (await server.get(f"/api/coauthor/patches/{patch_id}")).json())["taskId"] == task_id


async def test_accept_applies_and_reject_needs_a_reason(server: RunningServer, paper: Path):
    task_id = (await (await server.post("/api/coauthor/tasks", json={"title": "Grammar"})).json())["taskId"]
    first = await asyncio.to_thread(propose, paper, task_id)
    status, code, _ = await error_of(await server.post(f"/api/coauthor/tasks/{task_id}/reject", json={"patchId": first}))
    assert (status, code) == (400, "E_BAD_ARGS")  # a rejection without a reason teaches the agent nothing
    r = await server.post(f"/api/coauthor/tasks/{task_id}/reject", json={"patchId": first, "reason": "keep it plural"})
    assert (await r.json()) == {"patchId": first, "status": "rejected", "reason": "keep it plural"}
    detail = await (await server.get(f"/api/coauthor/tasks/{task_id}")).json()
    assert detail["task"]["proposals"][first]["reason"] == "keep it plural"

    second = await asyncio.to_thread(propose, paper, task_id)
    r = await server.post(f"/api/coauthor/tasks/{task_id}/accept", json={})  # "latest"
    body = await r.json()
    assert (body["status"], body["patchId"]) == ("applied", second)
    assert NEW in (paper / "sections/intro.tex").read_text()
    assert (await (await server.get(f"/api/coauthor/tasks/{task_id}")).json())["task"]["status"] == "done"
    # Nothing left to accept: refused with the use case's message.
    status, code, message = await error_of(await server.post(f"/api/coauthor/tasks/{task_id}/accept", json={}))
    assert (status, code) == (409, "E_CONFLICT") and "no patch awaiting review" in message
    status, code, _ = await error_of(await server.post(f"/api/coauthor/tasks/{task_id}/accept", json=["latest"]))
    assert (status, code) == (400, "E_BAD_ARGS")


async def test_accept_never_overwrites_an_edit(server: RunningServer, paper: Path):
    task_id = (await (await server.post("/api/coauthor/tasks", json={"title": "Grammar"})).json())["taskId"]
    patch_id = await asyncio.to_thread(propose, paper, task_id)
    edited = (paper / "sections/intro.tex").read_text() + "A sentence the person just wrote.\n"
    (paper / "sections/intro.tex").write_text(edited)
    patch = await (await server.get(f"/api/coauthor/patches/{patch_id}")).json()
    assert patch["files"][0]["drifted"] is True
    body = await (await server.post(f"/api/coauthor/tasks/{task_id}/accept", json={"patchId": patch_id})).json()
    assert body["status"] == "needs_rebase" and body["drifted"][0]["path"] == "sections/intro.tex"
    assert (paper / "sections/intro.tex").read_text() == edited


def billboard_event(kind: str, **payload: Any):  # noqa: ANN201
    """A predicate for ``tab.wait_until``: the mode_event carrying a ``kind`` event."""

    def matches(message: dict[str, Any]) -> bool:
        if message.get("type") != "mode_event" or message.get("name") != "billboard_event":
            return False
        event = message["data"]
        return event["type"] == kind and all(event["payload"].get(k) == v for k, v in payload.items())

    return matches


async def test_every_event_reaches_the_tabs_as_a_broadcast(server: RunningServer, paper: Path):
    tab = await server.tab()
    # The viewer reads the board when it mounts; what is appended afterwards
    # is broadcast (what the log held before, the board already shows).
    assert (await (await server.get("/api/coauthor/tasks")).json())["tasks"] == []
    # Appended by another process (the agent's `pneuma coauthor task create`).
    task_id = await asyncio.to_thread(create_elsewhere, paper, "From the terminal")
    created = await tab.wait_until(billboard_event("TaskCreated", intent="From the terminal"), timeout=5)
    assert created["data"]["taskId"] == task_id and created["data"]["seq"] >= 1
    routed = await tab.wait_until(billboard_event("TaskRouted"), timeout=5)
    assert routed["data"]["seq"] == created["data"]["seq"] + 1
    # Appended through a route: a second tab sees it as well as the first.
    other = await server.tab()
    r = await server.post(f"/api/coauthor/tasks/{task_id}/feedback", json={"text": "Keep it short", "answer": True})
    assert (await r.json()) == {"taskId": task_id, "kind": "answer"}
    for each in (tab, other):
        posted = await each.wait_until(billboard_event("UserFeedbackPosted", text="Keep it short"), timeout=5)
        assert posted["data"]["detail"]  # the one-line summary the thread shows
    assert (await server.post(f"/api/coauthor/tasks/{task_id}/cancel", json={})).status == 200
    await tab.wait_until(billboard_event("TaskCanceled"), timeout=5)
    # Each event once, in log order.
    seqs = [m["data"]["seq"] for m in tab.received if m.get("type") == "mode_event"]
    assert seqs == sorted(set(seqs))


async def test_the_persons_edit_reaches_the_log_through_the_hosts_watcher(paper: Path):
    from pneuma_coauthor.domain.model import revision_of

    def known_revision() -> str | None:
        app = CoAuthor(paper)  # reads the log as another process would
        try:
            artifact = app.billboard.artifact("sections/intro.tex")
            return artifact.revision if artifact else None
        finally:
            app.close()

    async with serve("coauthor", paper, backend="none", watch=True) as server:
        tab = await server.tab()
        # The start-up scan records the files as they were (edits made while no server ran).
        for _ in range(100):
            if await asyncio.to_thread(known_revision) is not None:
                break
            await asyncio.sleep(0.05)
        edited = "\\section{Introduction}\nEdited by the person.\n"
        (paper / "sections/intro.tex").write_text(edited)
        (paper / "notes.txt").write_text("not a paper file")
        # The host's watcher tells the viewer (content_update) and CoAuthor,
        # which records the new revision on the log and broadcasts it.
        update = await tab.wait_for("content_update", timeout=5)
        assert [f["path"] for f in update["files"]] == ["sections/intro.tex"]
        changed = await tab.wait_until(
            billboard_event("ArtifactChanged", path="sections/intro.tex", source="watcher"), timeout=5)
        assert changed["data"]["payload"]["revision"] == revision_of(edited.encode())
        assert await asyncio.to_thread(known_revision) == revision_of(edited.encode())
        # Saving the same bytes again records nothing more.
        (paper / "sections/intro.tex").write_text(edited)
        await tab.wait_for("content_update", timeout=5)
        await asyncio.sleep(0.5)
        await tab.drain()
        recorded = [m for m in tab.received if billboard_event("ArtifactChanged", path="sections/intro.tex",
                                                               source="watcher")(m)]
        assert recorded == [changed]
