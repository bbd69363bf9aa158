"""Queued follow-ups are kept on disk as they change, and a server that
starts again brings back what a stopped one still held, held: shown, not
sent until the person says Send (docs/protocol.md, "Queued follow-ups";
pneuma/server/follow_up_file.py). Real servers, real sockets, real files,
the fake agent of the server tests; a damaged or planted file is one
warning and an empty queue."""

from __future__ import annotations

import base64
import json
import logging
import os
from pathlib import Path

from pneuma.server import follow_up_file
from pneuma.server.follow_up_file import QUEUE_FILE

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64).decode()


def queue_file(server) -> Path:
    return server.session.workspace / ".pneuma" / QUEUE_FILE


def kept(server) -> list[dict]:
    return json.loads(queue_file(server).read_bytes())["queue"]


async def _busy(server, tab) -> None:
    await tab.say("first", client_msg_id="c-first")
    await server.backend.wait_call("send_user_message")
    await tab.wait_for("status_change", where=lambda m: m.get("status") == "running")


async def _queue(tab, text: str, client_id: str, **extra) -> dict:
    await tab.say(text, client_msg_id=client_id, **extra)
    return await tab.wait_for("user_message_queued", where=lambda m: m.get("client_msg_id") == client_id)


def _sent(server) -> list[str]:
    return [text for text, _ in server.backend.user_messages]


async def test_the_file_follows_the_queue_images_and_all(server):
    tab = await server.tab()
    await _busy(server, tab)
    first = await _queue(tab, "make it red", "c-red",
                         images=[{"media_type": "image/png", "data": PNG}])
    second = await _queue(tab, "and bigger", "c-big")
    entries = kept(server)
    assert [e["queue_id"] for e in entries] == [first["queue_id"], second["queue_id"]]
    assert entries[0]["message"]["content"] == "make it red"
    # The picture's bytes are kept, not only its size.
    assert entries[0]["message"]["images"] == [{"media_type": "image/png", "data": PNG}]
    assert os.stat(queue_file(server)).st_mode & 0o777 == 0o600

    await tab.send({"type": "queued_message_edit", "queue_id": second["queue_id"], "content": "and smaller"})
    await tab.wait_for("queued_message_edited")
    assert [e["message"]["content"] for e in kept(server)] == ["make it red", "and smaller"]
    await tab.send({"type": "queued_message_cancel", "queue_id": first["queue_id"]})
    await tab.wait_for("queued_message_cancelled")
    assert [e["message"]["content"] for e in kept(server)] == ["and smaller"]
    server.backend.reply("done")
    await tab.wait_for("queued_message_taken")
    assert kept(server) == []


async def test_a_restart_brings_the_queue_back_held_and_sends_it_only_on_send(make_server, tmp_path, caplog):
    workspace = tmp_path / "deck"
    before = await make_server(workspace=workspace)
    tab = await before.tab()
    await _busy(before, tab)
    queued = await _queue(tab, "then make the title red", "c-red",
                          images=[{"media_type": "image/png", "data": PNG}])
    await _queue(tab, "and the subtitle", "c-sub")
    await before.close()

    with caplog.at_level(logging.WARNING):
        after = await make_server(workspace=workspace, seed=False)
    came_back = [r.getMessage() for r in caplog.records if "came back" in r.getMessage()]
    assert len(came_back) == 1 and came_back[0].startswith("2 queued messages came back")
    tab = await after.tab(subscribe=False)
    history = await tab.subscribe(0)
    shown = history["queued_messages"]
    assert [q["content"] for q in shown] == ["then make the title red", "and the subtitle"]
    assert shown[0]["queue_id"] == queued["queue_id"]
    assert all(q["held"] is True for q in shown)
    assert shown[0]["images"] == [{"media_type": "image/png", "size": len(PNG)}]

    # Idle, yet nothing goes on its own: another message is answered first.
    await tab.say("hello", client_msg_id="c-hello")
    await after.backend.wait_call("send_user_message")
    after.backend.reply("hi")
    await tab.wait_for("result")
    assert _sent(after) == ["hello"]
    assert len(kept(after)) == 2

    # Send: the agent (idle) takes it at once, picture and all.
    await tab.send({"type": "queued_message_send", "queue_id": shown[0]["queue_id"]})
    released = await tab.wait_for("queued_message_released")
    assert released["queue_id"] == shown[0]["queue_id"]
    await tab.wait_for("queued_message_taken")
    await after.backend.wait_call("send_user_message", count=2)
    assert _sent(after) == ["hello", "then make the title red"]
    assert after.backend.user_messages[-1][1] == [{"media_type": "image/png", "data": PNG}]
    # The other stays held, on disk too; Cancel takes it off the file.
    assert [e["message"]["content"] for e in kept(after)] == ["and the subtitle"]
    await tab.send({"type": "queued_message_cancel", "queue_id": shown[1]["queue_id"]})
    await tab.wait_for("queued_message_cancelled")
    assert kept(after) == []


async def test_a_held_message_sent_while_the_agent_works_waits_for_its_turn(make_server, tmp_path):
    workspace = tmp_path / "deck"
    before = await make_server(workspace=workspace)
    tab = await before.tab()
    await _busy(before, tab)
    await _queue(tab, "later", "c-later")
    await before.close()
    after = await make_server(workspace=workspace, seed=False)
    tab = await after.tab(subscribe=False)
    held = (await tab.subscribe(0))["queued_messages"][0]
    await _busy(after, tab)
    await tab.send({"type": "queued_message_send", "queue_id": held["queue_id"]})
    await tab.wait_for("queued_message_released")
    assert _sent(after) == ["first"]
    after.backend.reply("done")
    await tab.wait_for("queued_message_taken")
    await after.backend.wait_call("send_user_message", count=2)
    assert _sent(after) == ["first", "later"]


async def test_send_for_a_message_no_longer_queued_is_a_conflict(server):
    tab = await server.tab()
    await tab.send({"type": "queued_message_send", "queue_id": "q-gone"})
    refused = await tab.wait_for("error")
    assert refused["code"] == "E_CONFLICT"


def _plant(workspace: Path, make) -> Path:
    state = workspace / ".pneuma"
    state.mkdir(parents=True, exist_ok=True)
    path = state / QUEUE_FILE
    make(path)
    return path


def _entry(text: str) -> dict:
    return {"queue_id": "q-planted", "timestamp": 1.0,
            "message": {"type": "user_message", "content": text}}


async def _starts_empty(make_server, workspace: Path, caplog) -> list[str]:
    with caplog.at_level(logging.WARNING):
        server = await make_server(workspace=workspace, seed=False)
    tab = await server.tab(subscribe=False)
    history = await tab.subscribe(0)
    assert history["queued_messages"] == []
    # Still a working queue: a follow-up while busy is queued and kept.
    await _busy(server, tab)
    await _queue(tab, "after", "c-after")
    assert [e["message"]["content"] for e in kept(server)] == ["after"]
    return [r.getMessage() for r in caplog.records if QUEUE_FILE in r.getMessage()]


async def test_a_damaged_file_is_one_warning_an_empty_queue_and_kept_aside(make_server, tmp_path, caplog):
    workspace = tmp_path / "deck"
    workspace.mkdir()
    _plant(workspace, lambda p: p.write_bytes(b'{"version": 1, "queue": [{"queue_id": '))
    warnings = await _starts_empty(make_server, workspace, caplog)
    assert len(warnings) == 1 and "damaged" in warnings[0]
    # Its bytes are not lost: set aside under a name the warning gives.
    aside = workspace / ".pneuma" / (QUEUE_FILE + ".damaged")
    assert aside.read_bytes().startswith(b'{"version": 1')
    assert str(aside.name) in warnings[0]


async def test_entries_that_are_not_messages_are_damage_not_a_crash(make_server, tmp_path, caplog):
    workspace = tmp_path / "deck"
    workspace.mkdir()
    bad = {"version": 1, "queue": [{"queue_id": 5, "message": {"content": ["x"]}}]}
    _plant(workspace, lambda p: p.write_text(json.dumps(bad)))
    warnings = await _starts_empty(make_server, workspace, caplog)
    assert len(warnings) == 1 and "damaged" in warnings[0]


async def test_a_planted_link_is_never_followed(make_server, tmp_path, caplog):
    workspace = tmp_path / "deck"
    workspace.mkdir()
    outside = tmp_path / "outside.json"
    planted = json.dumps({"version": 1, "queue": [_entry("from elsewhere")]})
    outside.write_text(planted)
    _plant(workspace, lambda p: p.symlink_to(outside))
    warnings = await _starts_empty(make_server, workspace, caplog)
    assert len(warnings) == 1 and "symlink" in warnings[0]
    # Nothing read from it, nothing written through it.
    assert outside.read_text() == planted
    assert not (workspace / ".pneuma" / QUEUE_FILE).is_symlink()


async def test_a_planted_fifo_neither_blocks_nor_crashes(make_server, tmp_path, caplog):
    workspace = tmp_path / "deck"
    workspace.mkdir()
    _plant(workspace, lambda p: os.mkfifo(p))
    warnings = await _starts_empty(make_server, workspace, caplog)
    assert len(warnings) == 1 and "FIFO" in warnings[0]


async def test_a_file_over_the_bound_is_not_read(make_server, tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(follow_up_file, "MAX_QUEUE_FILE_BYTES", 4096)
    workspace = tmp_path / "deck"
    workspace.mkdir()
    big = json.dumps({"version": 1, "queue": [_entry("x" * 8000)]})
    _plant(workspace, lambda p: p.write_text(big))
    warnings = await _starts_empty(make_server, workspace, caplog)
    assert len(warnings) == 1 and "larger than" in warnings[0]
    assert (workspace / ".pneuma" / (QUEUE_FILE + ".damaged")).read_text() == big


async def test_a_follow_up_too_big_to_keep_is_refused_not_silently_lost(server, monkeypatch):
    monkeypatch.setattr(follow_up_file, "MAX_QUEUE_FILE_BYTES", 4096)
    tab = await server.tab()
    await _busy(server, tab)
    await _queue(tab, "small", "c-small")
    await tab.say("y" * 8000, client_msg_id="c-huge")
    refused = await tab.wait_for("error")
    assert refused["code"] == "E_TOO_LARGE"
    assert "not queued" in refused["message"]
    # Neither queued nor sent; the small one is still there, on disk too.
    assert [e["message"]["content"] for e in kept(server)] == ["small"]
    assert len(server.session.follow_ups) == 1
    server.backend.reply("done")
    await server.backend.wait_call("send_user_message", count=2)
    assert _sent(server) == ["first", "small"]
