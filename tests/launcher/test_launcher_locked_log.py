"""A workspace whose conversation log another process holds (issue 23,
item 1), opened from the launcher: refused as `pneuma run` refuses it
(409 E_CONFLICT naming the log), never a 500, and nothing moved aside."""

from __future__ import annotations

from tests.server.log_faults import hold_lock, rows


async def test_opening_a_workspace_whose_log_is_held_is_a_409(launcher, tmp_path,
                                                              monkeypatch) -> None:
    from pneuma.server import log_file

    monkeypatch.setattr(log_file, "LOCK_WAIT_SECONDS", 0.5)
    workspace = tmp_path / "held"
    status, body = await launcher.call("POST", "/api/workspaces/new",
                                       json={"mode": "doc", "path": str(workspace)})
    assert status == 200, body
    status, _ = await launcher.call("POST", "/api/sessions/stop", json={"path": body["path"]})
    assert status == 200
    log = workspace / ".pneuma" / "conversation.db"
    before = rows(log)
    holder = hold_lock(log)
    try:
        status, refused = await launcher.call("POST", "/api/workspaces/open",
                                              json={"path": str(workspace)})
    finally:
        holder.communicate("")
    assert status == 409, refused
    assert refused["error"]["code"] == "E_CONFLICT"
    assert "locked by another process" in refused["error"]["message"]
    assert launcher.state.hosting.sessions() == []
    assert rows(log) == before
    assert not [p for p in log.parent.iterdir() if "corrupt" in p.name]
    # Released, it opens as usual.
    status, opened = await launcher.call("POST", "/api/workspaces/open",
                                         json={"path": str(workspace)})
    assert status == 200, opened
