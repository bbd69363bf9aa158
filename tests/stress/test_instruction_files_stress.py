"""Issue 25, items 14 and 20 under stress.

14: random workspaces mixing documents with the agent's instruction files
(CLAUDE.md, AGENTS.md) at the root and elsewhere, read by every part that
walks a workspace (the host's file filter, the scaffold's protection, the
doc export, the webcraft site, a real doc server's listing and watcher):
an instruction file at the root is never listed, reported or exported,
and every other file is treated as before.

20: the launcher reads a workspace again and again while a run holds its
log open and writes to it now and then: "last active" moves only when a
message was written, never because the launcher looked."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from pneuma.api import AGENT_INSTRUCTION_FILES
from pneuma.core.file_filter import FileFilter
from pneuma.launcher.details import workspace_details
from pneuma.server.conversation_log import ConversationLog
from pneuma.server.routes_api import _is_protected
from pneuma.testing import serve
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

WORKSPACES = 60
TIME_CAP = 15.0  # seconds per part; the counts say how far it got
NAMES = ["README.md", "notes.md", "agents.md", "Claude.md", "AGENTS.md.bak", "guide/AGENTS.md",
         "guide/CLAUDE.md", "a/b/c.md", "AGENTS.markdown"]


def _random_workspace(root: Path, rng: random.Random) -> tuple[Path, set[str]]:
    workspace = root / f"ws{rng.randrange(10**9)}"
    workspace.mkdir()
    names = set(rng.sample(NAMES, rng.randint(1, len(NAMES)))) | set(AGENT_INSTRUCTION_FILES)
    for name in names:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(f"# {name}\n", encoding="utf-8")
    return workspace, names


def test_instruction_files_are_never_documents_under_random_workspaces(tmp_path: Path) -> None:
    from pneuma_doc.exporter import documents_of
    from pneuma_webcraft.site import site_paths

    rng = random.Random(25_14)
    checked = files = 0
    started = time.monotonic()
    every_file = FileFilter(["**/*"], [])
    while checked < WORKSPACES and time.monotonic() - started < TIME_CAP:
        workspace, names = _random_workspace(tmp_path, rng)
        documents = {p.relative_to(workspace).as_posix() for p in documents_of(workspace)}
        expected = {n for n in names if n.endswith(".md") and n not in AGENT_INSTRUCTION_FILES}
        assert documents == expected, (names, documents)
        assert not set(site_paths(workspace)) & set(AGENT_INSTRUCTION_FILES)
        for name in names:
            hidden = name in AGENT_INSTRUCTION_FILES
            assert every_file(name) is not hidden, name
            assert _is_protected(name) is hidden, name
        checked += 1
        files += len(names)
    assert checked >= 10
    record("25.14 instruction files", f"{count(checked)} random workspaces, {count(files)} files "
           "through the file filter, the scaffold guard, the doc export and the webcraft site; "
           "0 instruction files taken as documents")


async def test_a_burst_of_instruction_file_writes_never_reaches_the_viewer(tmp_path: Path) -> None:
    rounds = 0
    async with serve("doc", tmp_path / "ws", backend="none", watch=True) as server:
        tab = await server.tab()
        started = time.monotonic()
        while rounds < 40 and time.monotonic() - started < TIME_CAP:
            for name in AGENT_INSTRUCTION_FILES:
                (server.workspace / name).write_text(f"# round {rounds}\n", encoding="utf-8")
            marker = f"marker-{rounds}.md"
            (server.workspace / marker).write_text("x\n", encoding="utf-8")
            await tab.wait_for("content_update", 5.0, where=lambda m, marker=marker: any(
                f["path"] == marker for f in m["files"]))
            rounds += 1
        reported = {f["path"] for m in tab.received if m["type"] == "content_update"
                    for f in m["files"]}
        listed = {f["path"] for f in (await (await server.get("/api/files")).json())["files"]}
    assert not (reported | listed) & set(AGENT_INSTRUCTION_FILES)
    record("25.14 instruction files", f"{count(rounds * 2)} writes of CLAUDE.md/AGENTS.md beside "
           f"{count(rounds)} documents in a served doc workspace; 0 reported or listed")


def _message(text: str) -> str:
    return json.dumps({"type": "user_message", "content": text, "timestamp": time.time()})


def test_last_active_moves_only_with_a_message(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".pneuma").mkdir(parents=True)
    (workspace / ".pneuma" / "session.json").write_text(json.dumps({"mode": "doc"}))
    log = ConversationLog.open(workspace / ".pneuma")  # a run holding its log open
    rng = random.Random(25_20)
    reads = writes = row = 0
    try:
        row += 1
        log.append("s1", row, row, "user_message", None, _message("first"))
        shown = workspace_details(str(workspace), "doc")["lastActivity"]
        started = time.monotonic()
        while time.monotonic() - started < TIME_CAP / 3:
            if rng.random() < 0.05:
                row += 1
                log.append("s1", row, row, "user_message", None, _message(f"message {row}"))
                writes += 1
                now = workspace_details(str(workspace), "doc")["lastActivity"]
                assert now is not None and shown is not None and now >= shown
                shown = now
            else:
                assert workspace_details(str(workspace), "doc")["lastActivity"] == shown
            reads += 1
    finally:
        log.close()
    # The run is over (its log checkpointed and closed): reads still do not move it.
    settled = workspace_details(str(workspace), "doc")["lastActivity"]
    for _ in range(50):
        assert workspace_details(str(workspace), "doc")["lastActivity"] == settled
        reads += 1
    assert writes >= 1
    record("25.20 last active", f"{count(reads)} launcher reads beside {count(writes)} messages "
           "from a live run; last active moved 0 times without a message")
