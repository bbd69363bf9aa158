"""A symlink flipped between a place inside the workspace and one outside,
while reads, writes and deletes run through every door (HTTP file routes,
/content, the tools over HTTP and called directly), never lets one of them
touch the outside: nothing outside changes, no answer holds outside content.

The agent's shell (or anything it runs) can flip a symlink at any moment;
a check on the resolved path followed by a use of the unresolved one loses
that race. Bounded: a fixed number of rounds and a time cap, loopback only.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pneuma.tools.runtime import ToolRuntime

ROUNDS = 200  # each round: 11 HTTP requests and 4 direct tool calls
TIME_CAP = 45.0  # seconds; the race is lost within a few hundred rounds on the old code
INSIDE = "inside content\n"
OUTSIDE = "OUTSIDE-SECRET\n"
OUTSIDE_ONLY_NAME = "only-outside.txt"  # a listing that shows it listed the outside


def _tree(directory: Path) -> dict[str, bytes | None]:
    return {p.relative_to(directory).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(directory.rglob("*"))}


def _point(link: Path, target: str, scratch: str) -> None:
    """Make ``link`` point at ``target`` atomically (a new link renamed over it)."""
    tmp = link.with_name(scratch)
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    os.symlink(target, tmp)
    os.replace(tmp, link)


@pytest.fixture
def arena(ws: Path) -> tuple[Path, Path]:
    outside = ws.parent / "outside"
    outside.mkdir()
    for base, text in ((outside, OUTSIDE), (ws / "inside", INSIDE)):
        base.mkdir(exist_ok=True)
        (base / "secret.txt").write_text(text)
        (base / "victim.txt").write_text(text)
    (ws / "inside" / "real.txt").write_text(INSIDE)
    (outside / OUTSIDE_ONLY_NAME).write_text(OUTSIDE)
    _point(ws / "link", "inside", ".link.swap")
    _point(ws / "flink", "inside/real.txt", ".flink.swap")
    return ws, outside


def _flipper(ws: Path, outside: Path, stop: threading.Event) -> threading.Thread:
    def flip() -> None:
        while not stop.is_set():
            for dir_target, file_target in (("inside", "inside/real.txt"),
                                            (str(outside), str(outside / "victim.txt"))):
                _point(ws / "link", dir_target, ".link.swap")
                _point(ws / "flink", file_target, ".flink.swap")
                # Restore what the deletes removed, inside only.
                for name in ("victim.txt", "real.txt", "secret.txt"):
                    if not (ws / "inside" / name).exists():
                        (ws / "inside" / name).write_text(INSIDE)

    return threading.Thread(target=flip, daemon=True)


def _error_code(answer: object) -> str | None:
    """The E_* code of a tool call's answer, if it is an error."""
    if not isinstance(answer, dict):
        return None
    error = answer.get("error")
    return error.get("code") if isinstance(error, dict) else None


@dataclass
class RaceResult:
    """What a run of the race tried and what came back."""

    rounds: int = 0
    requests: int = 0
    tool_calls: int = 0
    answers: list[str] = field(default_factory=list)
    outside_changed: bool = False
    # Every HTTP answer's status and every direct tool call's error code:
    # a lost race is a refusal (4xx, E_CONFLICT or E_DENY_PATH), never a 5xx.
    server_errors: list[str] = field(default_factory=list)

    @property
    def leaked(self) -> list[str]:
        return [a for a in self.answers if OUTSIDE.strip() in a or OUTSIDE_ONLY_NAME in a]

    def assert_nothing_escaped(self, at_least: int) -> None:
        assert self.rounds > at_least, "too few rounds ran to mean anything"
        assert sum(INSIDE.strip() in a for a in self.answers) > at_least, \
            "the reads never got through"
        assert not self.outside_changed, "a write or delete landed outside the workspace"
        leaked = self.leaked
        assert not leaked, f"{len(leaked)} answers held outside content, e.g. {leaked[0][:200]}"
        assert not self.server_errors, (f"{len(self.server_errors)} answers were server errors, "
                                        f"e.g. {self.server_errors[0][:300]}")


async def run_race(server, ws: Path, outside: Path, notes_mode, *, rounds: int,
                   time_cap: float) -> RaceResult:
    """Flip the symlinks in a thread while every door is used, ``rounds``
    times at most and for ``time_cap`` seconds at most (also the stress
    suite's run, with larger bounds)."""
    before = _tree(outside)
    runtime = ToolRuntime(notes_mode, ws, server_url="", server_token="",
                          policy_overrides={"writeRequiresDiff": False})
    result = RaceResult()
    stop = threading.Event()
    flipper = _flipper(ws, outside, stop)
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # let the flipper run between any two steps
    flipper.start()
    deadline = time.monotonic() + time_cap
    try:
        while result.rounds < rounds and time.monotonic() < deadline:
            body = f"written {result.rounds}\n"
            requests = [
                server.get("/api/files/read", params={"path": "link/secret.txt"}),
                server.get("/content/link/secret.txt"),
                server.get("/content/flink"),
                server.get("/api/files", params={}),
                server.post("/api/files", json={"path": "link/victim.txt", "content": body}),
                server.post("/api/files", json={"path": "flink", "content": body}),
                server.delete("/api/files", params={"path": "link/victim.txt"}),
                server.delete("/api/files", params={"path": "link/secret.txt"}),
                server.post("/api/tools/read_file", json={"path": "link/secret.txt"}),
                server.get("/api/files/tree"),
                server.post("/api/tools/list_files", json={"path": "link"}),
            ]
            if result.rounds % 2:
                # The other order, so the flip lands between other checks and uses.
                requests.reverse()
            for response in await asyncio.gather(*requests):
                text = (await response.read()).decode("utf-8", "replace")
                result.answers.append(text)
                if response.status >= 500:
                    result.server_errors.append(f"{response.method} {response.url.path}: "
                                                f"{response.status} {text}")
            result.requests += len(requests)
            for name, args in (("read_file", {"path": "flink"}),
                               ("write_to_file", {"path": "link/victim.txt", "content": body,
                                                  "mode": "overwrite", "dryRun": False}),
                               ("search_files", {"path": "link", "regex": "SECRET"}),
                               ("list_files", {"path": "link", "globs": ["**"]})):
                answer = await asyncio.to_thread(runtime.call, name, args)
                result.answers.append(str(answer))
                if _error_code(answer) in ("E_INTERNAL", "E_IO"):
                    result.server_errors.append(f"{name}: {answer}")
                result.tool_calls += 1
            result.rounds += 1
    finally:
        stop.set()
        flipper.join(5)
        sys.setswitchinterval(old_interval)
    result.outside_changed = _tree(outside) != before
    return result


async def test_a_flipping_symlink_never_leads_outside(server, arena, notes_mode):
    ws, outside = arena
    result = await run_race(server, ws, outside, notes_mode, rounds=ROUNDS, time_cap=TIME_CAP)
    result.assert_nothing_escaped(at_least=50)


def test_the_fd_walk_follows_inside_links_and_refuses_the_rest(tmp_path):
    from pneuma.core.errors import ToolError
    from pneuma.core.files import write_in_workspace
    from pneuma.core.sandbox import Sandbox

    ws = (tmp_path / "ws").resolve()
    (ws / "notes").mkdir(parents=True)
    (tmp_path / "outside.txt").write_text(OUTSIDE)
    (ws / "notes" / "a.txt").write_text(INSIDE)
    (ws / "abs").symlink_to(ws / "notes")  # absolute, but inside
    (ws / "notes" / "up").symlink_to("../notes/a.txt")  # '..' that stays inside
    (ws / "notes" / "out").symlink_to("../../outside.txt")  # '..' past the root
    (ws / "loop").symlink_to("loop")
    sandbox = Sandbox(ws)
    assert sandbox.read_bytes("abs/a.txt", 100)[0] == INSIDE.encode()
    assert sandbox.read_bytes("notes/up", 100)[0] == INSIDE.encode()
    write_in_workspace(sandbox, "abs/new/b.txt", b"b")  # missing folders are made
    assert (ws / "notes" / "new" / "b.txt").read_bytes() == b"b"
    for rel in ("notes/out", "loop"):
        with pytest.raises(ToolError) as refused:
            sandbox.read_bytes(rel, 100)
        assert refused.value.code == "E_DENY_PATH", rel
        with pytest.raises(ToolError):
            write_in_workspace(sandbox, rel, b"x")
    sandbox.unlink("notes/up")  # the link goes, its target stays
    assert not (ws / "notes" / "up").is_symlink() and (ws / "notes" / "a.txt").exists()
    with pytest.raises(ToolError):
        sandbox.unlink("notes/out")  # a link that leads out is refused, as before
    assert (tmp_path / "outside.txt").read_text() == OUTSIDE
