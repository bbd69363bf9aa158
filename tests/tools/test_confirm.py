"""Write confirmations (pneuma/tools/confirm.py): a dry run's diff is shown in
the page with Apply/Reject, the real write waits for the decision; without a
page or a server nothing changes.

The "page" here is the session's ConfirmationChannel with a connection count
of one and its broadcasts captured, on the generic notes mode; a browser test
(test_write_confirmation_apply_and_reject in tests/browser/test_webgal_preview.py)
clicks the real dialog.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

from tool_helpers import error_code, write_policies

from pneuma.tools.runtime import ToolRuntime

NOTE = "notes/days/monday.md"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _policies(ws: Path, **policies: Any) -> None:
    write_policies(ws, policies)


# --- no page, no server: exactly as before ---------------------------------------------


def test_no_server_dry_run_and_write_are_unchanged(notes_mode, ws):
    runtime = ToolRuntime(notes_mode, ws, server_url="", server_token="")
    new = (ws / NOTE).read_text() + "One more line.\n"
    dry = runtime.call("write_to_file", {"path": NOTE, "content": new, "dryRun": True})
    assert set(dry) == {"applied", "diff"} and dry["applied"] is False
    done = runtime.call("write_to_file", {"path": NOTE, "content": new, "dryRun": False})
    assert done["applied"] is True and (ws / NOTE).read_text() == new
    # writeRequiresDiff still holds on its own.
    other = runtime.call("write_to_file", {"path": NOTE, "content": "x\n", "dryRun": False})
    assert error_code(other) == "E_POLICY_VIOLATION"


def test_unreachable_server_behaves_as_without_one(notes_mode, ws):
    runtime = ToolRuntime(notes_mode, ws, server_url=f"http://127.0.0.1:{_free_port()}",
                          server_token="t")
    dry = runtime.call("write_to_file", {"path": NOTE, "content": "a\n", "dryRun": True})
    assert "confirmationId" not in dry
    assert runtime.call("write_to_file", {"path": NOTE, "content": "a\n",
                                          "dryRun": False})["applied"] is True


# --- through the running server ----------------------------------------------------------


def connect_page(server: Any) -> list[dict[str, Any]]:
    """Pretend one page is connected; returns the messages it is sent
    (kept as ``server.sent`` too)."""
    server.sent = []
    channel = server.session.confirmations
    channel._connected = lambda: 1
    channel._broadcast = server.sent.append
    return server.sent


async def _post(server: Any, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = await server.post(path, json=body)
    return response.status, await response.json()


def _requests(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in sent if m.get("type") == "confirmation_request"]


async def _answer(server: Any, approved: bool) -> None:
    for _ in range(100):
        requests = _requests(server.sent)
        if requests:
            break
        await asyncio.sleep(0.01)
    channel = server.session.confirmations
    assert channel.resolve(requests[-1]["request_id"], (approved, None))


async def test_no_page_connected_behaves_as_before(server, ws):
    status, dry = await _post(server, "/api/tools/write_to_file",
                              {"path": NOTE, "content": "b\n", "dryRun": True})
    assert status == 200 and "confirmationId" not in dry
    status, done = await _post(server, "/api/tools/write_to_file",
                               {"path": NOTE, "content": "b\n", "dryRun": False})
    assert status == 200 and done["applied"] is True
    status, body = await _post(server, "/api/confirmations",
                               {"kind": "write", "details": {"path": NOTE, "diff": dry["diff"]}})
    assert status == 503 and body["error"]["code"] == "E_UNAVAILABLE"
    assert body["error"]["details"]["reason"] == "no_browser"


async def test_dry_run_shows_the_diff_and_reject_blocks_the_write(server, ws):
    sent = connect_page(server)
    before = (ws / NOTE).read_text()
    new = before + "A rejected line.\n"
    status, dry = await _post(server, "/api/tools/write_to_file",
                              {"path": NOTE, "content": new, "dryRun": True})
    assert status == 200 and dry["applied"] is False and dry["confirmationId"].startswith("cw_")
    await asyncio.sleep(0.05)
    [request] = _requests(sent)
    assert request["kind"] == "write"
    details = request["details"]
    assert details["path"] == NOTE and details["diff"] == dry["diff"]
    assert details["confirmationId"] == dry["confirmationId"] and len(details["newHash"]) == 8
    # The same dry run again reuses the open dialog.
    _, again = await _post(server, "/api/tools/write_to_file",
                           {"path": NOTE, "content": new, "dryRun": True})
    assert again["confirmationId"] == dry["confirmationId"] and len(_requests(sent)) == 1

    write = asyncio.create_task(_post(server, "/api/tools/write_to_file",
                                      {"path": NOTE, "content": new, "dryRun": False}))
    await asyncio.sleep(0.2)
    assert not write.done()  # waiting for the person
    await _answer(server, False)
    status, error = await write
    assert status == 403 and error["error"]["code"] == "E_POLICY_VIOLATION"
    assert "rejected" in error["error"]["message"]
    assert (ws / NOTE).read_text() == before
    response = await server.get(f"/api/confirmations/{dry['confirmationId']}")
    assert (await response.json())["status"] == "rejected"


async def test_apply_lets_the_write_land(server, ws):
    connect_page(server)
    new = (ws / NOTE).read_text() + "An applied line.\n"
    _, dry = await _post(server, "/api/tools/write_to_file",
                         {"path": NOTE, "content": new, "dryRun": True})
    await _answer(server, True)  # approved before the write is even called
    status, done = await _post(server, "/api/tools/write_to_file",
                               {"path": NOTE, "content": new, "dryRun": False})
    assert status == 200 and done["applied"] is True and (ws / NOTE).read_text() == new


async def test_a_newer_dry_run_supersedes_the_open_one(server, ws):
    sent = connect_page(server)
    _, first = await _post(server, "/api/tools/write_to_file",
                           {"path": NOTE, "content": "one\n", "dryRun": True})
    _, second = await _post(server, "/api/tools/write_to_file",
                            {"path": NOTE, "content": "two\n", "dryRun": True})
    assert first["confirmationId"] != second["confirmationId"]
    await asyncio.sleep(0.05)
    assert any(m.get("type") == "confirmation_cancelled" for m in sent)
    status, error = await _post(server, "/api/tools/write_to_file",
                                {"path": NOTE, "content": "one\n", "dryRun": False})
    assert status == 403 and error["error"]["details"]["decision"] == "superseded"


async def test_no_decision_in_time_is_a_timeout(server, ws):
    connect_page(server)
    _policies(ws, confirmTimeoutMs=300)
    before = (ws / NOTE).read_text()
    _, dry = await _post(server, "/api/tools/write_to_file",
                         {"path": NOTE, "content": "late\n", "dryRun": True})
    status, error = await _post(server, "/api/tools/write_to_file",
                                {"path": NOTE, "content": "late\n", "dryRun": False})
    assert status == 504 and error["error"]["code"] == "E_TIMEOUT"
    assert error["error"]["details"]["confirmationId"] == dry["confirmationId"]
    assert (ws / NOTE).read_text() == before
    # The dialog is still open: an answer now lets the next try through.
    await _answer(server, True)
    _, done = await _post(server, "/api/tools/write_to_file",
                          {"path": NOTE, "content": "late\n", "dryRun": False})
    assert done["applied"] is True and (ws / NOTE).read_text() == "late\n"


async def test_out_of_process_calls_go_through_the_http_routes(server, notes_mode, ws):
    """`pneuma mcp` / `pneuma tool` (PNEUMA_API + PNEUMA_TOKEN) open the same
    dialog over POST /api/confirmations and wait with GET …?wait=."""
    sent = connect_page(server)
    outside = ToolRuntime(notes_mode, ws, server_url=server.origin,
                          server_token=server.token)
    before = (ws / NOTE).read_text()
    dry = await asyncio.to_thread(outside.call, "write_to_file",
                                  {"path": NOTE, "content": "outside\n", "dryRun": True})
    assert dry["confirmationId"].startswith("cw_")
    assert _requests(sent)[0]["details"]["diff"] == dry["diff"]
    write = asyncio.create_task(asyncio.to_thread(
        outside.call, "write_to_file", {"path": NOTE, "content": "outside\n", "dryRun": False}))
    await asyncio.sleep(0.3)
    assert not write.done() and (ws / NOTE).read_text() == before
    await _answer(server, True)
    assert (await write)["applied"] is True and (ws / NOTE).read_text() == "outside\n"

    _policies(ws, confirmTimeoutMs=200)
    await asyncio.to_thread(outside.call, "write_to_file",
                            {"path": NOTE, "content": "never\n", "dryRun": True})
    late = await asyncio.to_thread(outside.call, "write_to_file",
                                   {"path": NOTE, "content": "never\n", "dryRun": False})
    assert error_code(late) == "E_TIMEOUT" and (ws / NOTE).read_text() == "outside\n"


async def test_confirmations_can_be_turned_off(server, ws):
    connect_page(server)
    _policies(ws, confirmWrites=False)
    _, dry = await _post(server, "/api/tools/write_to_file",
                         {"path": NOTE, "content": "off\n", "dryRun": True})
    assert "confirmationId" not in dry and _requests(server.sent) == []
