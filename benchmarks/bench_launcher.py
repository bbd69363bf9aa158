"""The launcher and the rewind, each next to what it replaces or costs at least.

    python benchmarks/bench_launcher.py [--runs 5] [--workspaces 200] [--files 100]

- **Opening a workspace from the launcher** (`POST /api/workspaces/open` of
  a new doc workspace, until its session answers `/api/session`) against
  a cold `pneuma run --mode doc` of a new workspace to its first
  `/api/session` answer, in the same run: the launcher runs the same start
  checks and builds the same server, in a process that is already up.
- **The list of recent workspaces**: `GET /api/workspaces` with
  ``--workspaces`` entries, each a real workspace with a conversation log
  (its last message read, its size walked): the first answer (sizes not
  yet cached) and the next ones, against the same route's JSON built from
  the list alone (no workspace read) in the same process.
- **A rewind**: restoring a turn that rewrote ``--files`` files of 20 KiB
  (`pneuma.checkpoints.restore`: an undo point recorded first, hashes
  checked, atomic writes through the sandbox), against copying the same
  bytes with `shutil.copyfile`.

Everything on 127.0.0.1 with `--backend none` (no agent), bounded by
``--runs``; figures are reported as INFO (no target in the issue).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from _common import PNEUMA_BIN, finish, machine_note, median, row, temp_dir

from pneuma.checkpoints import Checkpoints, restore
from pneuma.server.conversation_log import ConversationLog

LAUNCHER_READY = re.compile(r"launcher ready (http://127\.0\.0\.1:\d+)/\?token=(\S+)")


def request(url: str, token: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if data else "GET", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as response:
        return json.loads(response.read())


def session_answers(url: str) -> None:
    """GET /api/session of a session URL (``…/?session=…&token=…``)."""
    base, _, query = url.partition("/?")
    token = dict(p.split("=", 1) for p in query.split("&"))["token"]
    request(f"{base}/api/session", token)


class Launcher:
    def __init__(self, home: Path) -> None:
        env = {**os.environ, "PNEUMA_HOME": str(home / "pneuma-home"), "HOME": str(home)}
        self.proc = subprocess.Popen(
            [str(PNEUMA_BIN), "open", "--no-open", "--port", "0", "--backend", "none"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        assert self.proc.stdout is not None
        match = LAUNCHER_READY.search(self.proc.stdout.readline())
        if not match:
            self.stop()
            raise RuntimeError("the launcher did not start")
        self.base, self.token = match.group(1), match.group(2)

    def open_new(self, folder: Path) -> float:
        """ms from the request to the new session's first /api/session answer."""
        t0 = time.monotonic()
        opened = request(f"{self.base}/api/workspaces/new", self.token,
                         {"mode": "doc", "path": str(folder), "params": {}})
        session_answers(opened["url"])
        return (time.monotonic() - t0) * 1000

    def list_ms(self) -> float:
        t0 = time.monotonic()
        request(f"{self.base}/api/workspaces", self.token)
        return (time.monotonic() - t0) * 1000

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cold_run_ms(folder: Path) -> float:
    """A cold `pneuma run --mode doc` of a new workspace to its first answer."""
    t0 = time.monotonic()
    proc = subprocess.Popen([str(PNEUMA_BIN), "run", "--mode", "doc", "--no-open", "--no-prompt",
                             "--backend", "none", "--port", "0", "--workspace", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        session_answers(line.split()[-1])
        return (time.monotonic() - t0) * 1000
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def fill_recent_list(home: Path, count: int) -> None:
    """``count`` workspaces with a few files and a logged conversation each,
    listed in PNEUMA_HOME as `pneuma run` would list them."""
    from pneuma.startup.recent import RecentWorkspaces

    recent = RecentWorkspaces(home / "pneuma-home")
    for n in range(count):
        workspace = home / "listed" / f"ws-{n:03d}"
        (workspace / ".pneuma").mkdir(parents=True)
        for i in range(10):
            (workspace / f"note-{i}.md").write_text(f"# Note {i}\n" + "text " * 400)
        log = ConversationLog.open(workspace / ".pneuma")
        log.append("s1", 1, 1, "user_message", None,
                   json.dumps({"type": "user_message", "content": f"write note {n}"}))
        log.append("s1", 2, 2, "assistant", "m1", json.dumps({"type": "assistant", "message": {
            "content": [{"type": "text", "text": f"Wrote note {n}."}]}}))
        log.close()
        recent.record(workspace, "doc", now=1_700_000_000 + n)


def bare_list_ms(home: Path, runs: int) -> float:
    """The list's JSON from the list file alone, nothing read from the workspaces."""
    from pneuma.startup.recent import RecentWorkspaces

    recent = RecentWorkspaces(home / "pneuma-home")
    times = []
    for _ in range(runs):
        t0 = time.monotonic()
        json.dumps([{"path": e.path, "mode": e.mode} for e in recent.entries()])
        times.append((time.monotonic() - t0) * 1000)
    return median(times)


def rewind(directory: Path, files: int) -> tuple[float, float]:
    """(ms to restore a turn that rewrote ``files`` files, ms to copy the same bytes)."""
    workspace = directory / "rewind-ws"
    (workspace / "notes").mkdir(parents=True)
    names = [f"notes/n{i:03d}.md" for i in range(files)]
    for name in names:
        (workspace / name).write_bytes(b"before " * 3000)
    store = Checkpoints(workspace, ["**/*.md"])
    store.record("rewrite every note")
    for name in names:
        (workspace / name).write_bytes(b"after! " * 3000)
    store.turn_ended()
    t0 = time.monotonic()
    result = restore(store, 1)
    restore_ms = (time.monotonic() - t0) * 1000
    assert len(result.restored) == files, result.to_json()
    copies = directory / "copies"
    copies.mkdir()
    t0 = time.monotonic()
    for name in names:
        shutil.copyfile(workspace / name, copies / Path(name).name)
    return restore_ms, (time.monotonic() - t0) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workspaces", type=int, default=200)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    print(machine_note())
    home = temp_dir("pneuma-bench-launcher-")
    rows = []
    try:
        fill_recent_list(home, args.workspaces)
        launcher = Launcher(home)
        try:
            first_list = launcher.list_ms()
            later_list = median([launcher.list_ms() for _ in range(args.runs)])
            opened = median([launcher.open_new(home / "opened" / f"doc-{n}")
                             for n in range(args.runs)])
        finally:
            launcher.stop()
        cold = median([cold_run_ms(home / "cold" / f"doc-{n}") for n in range(args.runs)])
        bare = bare_list_ms(home, args.runs)
        restore_ms, copy_ms = rewind(home, args.files)
        rows += [
            row("launcher: open a new doc workspace → first /api/session", opened, None, "ms",
                "lower", cold, "cold pneuma run", info=True),
            row(f"launcher: list {args.workspaces} workspaces, first (sizes walked)", first_list,
                None, "ms", "lower", bare, "list file alone", info=True),
            row(f"launcher: list {args.workspaces} workspaces, later (sizes cached)", later_list,
                None, "ms", "lower", bare, "list file alone", info=True),
            row(f"rewind a turn of {args.files} files (undo point first)", restore_ms, None, "ms",
                "lower", copy_ms, "shutil.copyfile", info=True),
        ]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return finish(rows)


if __name__ == "__main__":
    sys.exit(main())
