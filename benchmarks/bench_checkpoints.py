"""Checkpoints over a long history, through the real server (issue 27).

A workspace of ``--files`` files and ``--mb`` MiB (mostly random bytes,
30 % text files; see ``_ckpt_workspace.py``) is served by a real ``pneuma
run --mode slide --backend claude-code`` whose ``claude`` is the fake
agent ``_ckpt_cli.py``. A benchmark socket plays the browser: ``--turns``
user messages, each of which makes the agent edit two text files and
rewrite one 64 KB binary (3 files a turn). Beside it, a shadow git
repository of the same tree (what upstream Pneuma keeps) commits after
every turn. Figures:

- **end-of-turn record + "what changed"**: the turn's ``result`` frame →
  its ``turn_changes`` frame, at the socket. Turn 2 (median of turns 2–11)
  against the last turns (median of the last 10): within 1.5× and < 100 ms.
- **the agent's wait before a turn**: ``user_message`` written to the
  socket → the fake CLI reads it on its stdin (``time.monotonic_ns()`` in
  both processes: one clock on Linux). Worst over every turn, the first
  included: < 30 ms. The first turn's figure is reported apart.
- **disk growth**: ``.pneuma/checkpoints`` after the last turn minus after
  turn 10 (turn 1 on runs under 20 turns: a store may still be writing its
  first whole copy while turn 1 ends), against the shadow git directory's
  growth over the same turns (``du``-style allocated blocks): within 2×.
  Totals are reported too.
- **rewind of 3 × span files** (span = 50 turns on the full run: 150
  files): ``GET /api/checkpoints/{ref}/plan`` + ``POST …/restore`` to
  before turn T − span + 1, against ``git checkout <that commit> -- <the
  same files>`` writing the same bytes, same run: within 2×. The restored
  tree is compared with that commit (``git diff``): it must be exact.
- **server RSS** (``VmRSS`` of the ``pneuma run`` process) after the last
  turn against after turn 2: within 10 MiB.

Run it (a scratch folder of its own is made under ``--scratch`` and
deleted at the end; it needs about 3 × ``--mb`` of free disk):

    .venv/bin/python benchmarks/bench_checkpoints.py                 # 1,000 files, 200 MiB, 200 turns
    .venv/bin/python benchmarks/bench_checkpoints.py --quick         # 200 files, 20 MiB, 40 turns
    .venv/bin/python benchmarks/bench_checkpoints.py --turns 50 --files 1000 --mb 200
    .venv/bin/python benchmarks/bench_checkpoints.py --checkout /tmp/c/before   # another checkout's pneuma

``--checkout DIR`` runs the server from another checkout of the project
(``PYTHONPATH=DIR python -m pneuma run``; the modes stay this venv's), to
measure a BEFORE beside an AFTER. ``--budget S`` stops adding turns after S
seconds (the rows then name the turn reached).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from _ckpt_workspace import Layout, ShadowGit, disk_bytes, generate  # noqa: E402
from _common import (  # noqa: E402
    HERE,
    PYTHON,
    REPO,
    StallProbe,
    finish,
    machine_note,
    make_claude_wrapper,
    median,
    percentile,
    row,
    rss_kib,
    stop_process,
)

CKPT_CLI = HERE / "_ckpt_cli.py"
READY_PREFIX = "[pneuma] ready "
TARGET_END_RATIO = 1.5
TARGET_END_MS = 100.0
TARGET_WAIT_MS = 30.0
TARGET_DISK_RATIO = 2.0
TARGET_REWIND_RATIO = 2.0
TARGET_RSS_GROWTH_MIB = 10.0
REWIND_SPAN = 50
PAUSE_BETWEEN_REWINDS_S = 1.0
DISK_FROM_TURN = 10
END_WINDOW = 10
MIB = 1024 * 1024


@dataclass
class Turn:
    number: int
    wait_ms: float = float("nan")
    sent_ns: int = 0
    received_ns: int = 0
    end_ms: float = float("nan")
    rss_kib: int = 0
    ref: str = ""


@dataclass
class Run:
    turns: list[Turn] = field(default_factory=list)
    commits: dict[int, str] = field(default_factory=dict)  # turn → shadow commit after it
    store_bytes: dict[int, int] = field(default_factory=dict)
    git_bytes: dict[int, int] = field(default_factory=dict)
    rewind: dict[str, Any] = field(default_factory=dict)
    stalls: dict[int, float] = field(default_factory=dict)  # turn → the stall probe's worst ms


class Server:
    """``pneuma run`` in its own process, a socket playing the browser, and
    an HTTP client with the session's token."""

    def __init__(self, proc: asyncio.subprocess.Process, url: str) -> None:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        self.proc = proc
        self.base = f"http://{parts.netloc}"
        self.session_id = query["session"][0]
        self.token = query["token"][0]
        self.http = aiohttp.ClientSession(headers={"Authorization": f"Bearer {self.token}"})
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        url = (self.base.replace("http://", "ws://")
               + f"/ws/browser/{self.session_id}?token={self.token}")
        self.ws = await self.http.ws_connect(url, max_msg_size=0)
        # From seq 0: a greeting that has already ended is replayed too.
        await self.ws.send_str(json.dumps({"type": "session_subscribe", "last_seq": 0}))
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.ws is not None
        async for frame in self.ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                break
            now = time.monotonic_ns()
            for line in frame.data.split("\n"):
                if line:
                    message = json.loads(line)
                    message["_at"] = now
                    self.frames.put_nowait(message)

    async def next_frame(self, timeout: float) -> dict[str, Any]:
        return await asyncio.wait_for(self.frames.get(), timeout)

    async def get(self, path: str) -> Any:
        async with self.http.get(self.base + path) as response:
            body = await response.json()
            if response.status != 200:
                raise RuntimeError(f"GET {path}: {response.status} {body}")
            return body

    async def post(self, path: str, payload: dict[str, Any]) -> Any:
        async with self.http.post(self.base + path, json=payload) as response:
            body = await response.json()
            if response.status != 200:
                raise RuntimeError(f"POST {path}: {response.status} {body}")
            return body

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self.ws is not None:
            await self.ws.close()
        await self.http.close()


def server_env(checkout: Path) -> dict[str, str]:
    """The environment that makes ``python -m pneuma`` import ``checkout``'s
    pneuma (run with ``checkout`` as the working directory too: ``-m`` puts
    the working directory first on the import path)."""
    # The fake agent needs no key; the backend's start-up check wants one.
    return {**os.environ, "PYTHONPATH": str(checkout), "ANTHROPIC_API_KEY": "sk-bench"}


def pneuma_imported_from(checkout: Path) -> str:
    done = subprocess.run([PYTHON, "-c", "import pneuma; print(pneuma.__file__)"],
                          cwd=checkout, env=server_env(checkout), check=True,
                          stdout=subprocess.PIPE, text=True)
    return done.stdout.strip()


async def start_server(workspace: Path, wrapper: Path, checkout: Path) -> Server:
    env = server_env(checkout)
    errors = workspace.parent / "server-stderr.txt"
    with errors.open("wb") as stderr:
        proc = await asyncio.create_subprocess_exec(
            PYTHON, "-m", "pneuma", "run", "--mode", "slide", "--no-open", "--backend",
            "claude-code", "--no-prompt", "--seed", "--port", "0", "--workspace", str(workspace),
            "--claude-bin", str(wrapper), stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env,
            cwd=checkout)
    assert proc.stdout is not None
    line = ""
    while not line.startswith(READY_PREFIX):  # a first start says what it seeded first
        raw = await asyncio.wait_for(proc.stdout.readline(), 120)
        line = raw.decode().strip()
        if not raw:
            await stop_process(proc)
            raise RuntimeError("pneuma did not start: " + errors.read_text()[-2000:])
    return Server(proc, line[len(READY_PREFIX):])


async def wait_for_greeting(server: Server, timeout: float = 20.0) -> None:
    """The fresh workspace's greeting turn has ended (or never came)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            frame = await server.next_frame(deadline - time.monotonic())
        except asyncio.TimeoutError:
            return
        if frame.get("type") == "result":
            return


async def one_turn(server: Server, plan: Layout, number: int, timeout: float) -> Turn:
    texts, binaries = plan.turn_files(number)
    msg_id = f"ckpt-{number}"
    content = f"ckpt turn={number} edit={','.join(texts)} bin={','.join(binaries)}"
    turn = Turn(number)
    assert server.ws is not None
    sent = time.monotonic_ns()
    await server.ws.send_str(json.dumps({"type": "user_message", "content": content,
                                         "client_msg_id": msg_id}))
    marker = f"ckpt-turn={number} "
    result_at: int | None = None
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            print(f"  turn {number}: no turn_changes within {timeout:.0f} s", flush=True)
            return turn
        try:
            frame = await server.next_frame(left)
        except asyncio.TimeoutError:
            continue
        kind = frame.get("type")
        if kind == "turn_checkpoint" and frame.get("client_msg_id") == msg_id:
            turn.ref = frame["ref"]
        elif kind == "result" and marker in str((frame.get("data") or {}).get("result", "")):
            result_at = frame["_at"]
            received = int(str(frame["data"]["result"]).split("recv=")[1].split()[0])
            turn.wait_ms = (received - sent) / 1e6
            turn.sent_ns, turn.received_ns = sent, received
        elif kind == "turn_changes" and turn.ref and frame.get("ref") == turn.ref:
            if result_at is not None:
                turn.end_ms = (frame["_at"] - result_at) / 1e6
            turn.rss_kib = rss_kib(server.proc.pid)
            return turn


async def restore_through_server(server: Server, ref: str) -> tuple[float, float, dict[str, Any]]:
    """What the page does for "Rewind to here": the plan, then the restore
    (with the files the plan calls changed by hand named to overwrite).
    (plan ms, restore ms, the restore's answer)."""
    t0 = time.monotonic()
    planned = await server.get(f"/api/checkpoints/{ref}/plan")
    t1 = time.monotonic()
    result = await server.post(f"/api/checkpoints/{ref}/restore",
                               {"overwrite": list(planned.get("conflicts", [])),
                                "keepConflicts": False})
    t2 = time.monotonic()
    return (t1 - t0) * 1000, (t2 - t1) * 1000, result


async def rewind(server: Server, git: ShadowGit, plan: Layout, run: Run, rounds: int) -> None:
    """Rewind the last ``span`` turns through the server, then the same
    files with ``git checkout``, ``rounds`` times (the server's undo and git
    bring the files forward again between rounds, untimed); the first
    round's result is checked against git."""
    last = run.turns[-1].number
    span = min(REWIND_SPAN, last - 1, plan.max_span())
    first = last - span + 1  # rewind to before this turn
    target = next(t for t in run.turns if t.number == first)
    files = sorted({p for n in range(first, last + 1) for kind in plan.turn_files(n) for p in kind})
    before = run.commits[first - 1]
    plans, restores, gits, differing, restored, conflicts = [], [], [], 0, 0, 0
    for round_ in range(rounds):
        plan_ms, restore_ms, result = await restore_through_server(server, target.ref)
        plans.append(plan_ms)
        restores.append(restore_ms)
        if round_ == 0:
            not_as_git = git.differing(before)
            differing = len(not_as_git)
            restored = len(result.get("restored") or [])
            conflicts = len(result.get("conflicts") or [])
            if not_as_git or conflicts or result.get("leftAsIs") or result.get("failed"):
                # A rewind that is not exact says why, to whoever reads the run.
                print(f"  rewind not exact: differs from git {not_as_git[:5]}, conflicts "
                      f"{(result.get('conflicts') or [])[:5]}, left as is "
                      f"{(result.get('leftAsIs') or [])[:3]}, failed "
                      f"{(result.get('failed') or [])[:3]}", flush=True)
        # git writes the same bytes back and forth: forward to the last turn
        # (untimed), then back to before ``first`` (timed): the rewind's work.
        git.checkout(run.commits[last], files)
        t0 = time.monotonic()
        git.checkout(before, files)
        gits.append((time.monotonic() - t0) * 1000)
        if round_ < rounds - 1 and result.get("undo"):
            await restore_through_server(server, str(result["undo"]))
            # A person's next rewind comes a second or more after the last
            # (the preview is read first); the store uses that second to
            # read once more what the undo wrote (pneuma.checkpoints.settle).
            await asyncio.sleep(PAUSE_BETWEEN_REWINDS_S)
    run.rewind = {"span": span, "files": len(files), "plan_ms": median(plans),
                  "restore_ms": median(restores), "git_ms": median(gits), "rounds": rounds,
                  "conflicts": conflicts, "differing": differing, "restored": restored}


async def measure(args: argparse.Namespace, scratch: Path) -> Run:
    workspace = scratch / "ws"
    t0 = time.monotonic()
    plan = generate(workspace, args.files, args.mb)
    print(f"workspace: {args.files} files, {args.mb} MiB generated in "
          f"{time.monotonic() - t0:.1f} s", flush=True)
    git = ShadowGit(scratch / "shadow.git", workspace)
    git.init()
    run = Run()
    probe = StallProbe()
    wrapper = make_claude_wrapper(scratch / "bin", CKPT_CLI)
    server = await start_server(workspace, wrapper, Path(args.checkout))
    await probe.start()
    try:
        await server.connect()
        await wait_for_greeting(server)
        # The shadow repository's first commit: the tree before turn 1 (the
        # slide mode's seeds included), taken while the server is idle.
        t0 = time.monotonic()
        run.commits[0] = git.commit("before turn 1")
        print(f"shadow git: first commit of the whole tree in {time.monotonic() - t0:.1f} s, "
              f"{git.size() / MIB:.1f} MiB", flush=True)
        store = workspace / ".pneuma" / "checkpoints"
        started = time.monotonic()
        for number in range(1, args.turns + 1):
            turn = await one_turn(server, plan, number, timeout=120)
            run.turns.append(turn)
            run.commits[number] = git.commit(f"turn {number}")
            if number in (1, 2) or number % 10 == 0 or number == args.turns:
                run.store_bytes[number] = disk_bytes(store)
                run.git_bytes[number] = git.size()
            if number <= 3 or number % 10 == 0:
                print(f"  turn {number:4}: wait {turn.wait_ms:7.1f} ms, end-of-turn "
                      f"{turn.end_ms:7.1f} ms, RSS {turn.rss_kib / 1024:6.1f} MiB", flush=True)
            if time.monotonic() - started > args.budget and number >= 5:
                print(f"  budget of {args.budget:.0f} s spent: stopping at turn {number}")
                run.store_bytes[number] = disk_bytes(store)
                run.git_bytes[number] = git.size()
                break
        await rewind(server, git, plan, run, args.rewinds)
    finally:
        await probe.stop()
        await server.close()
        await stop_process(server.proc)
    # How late a process that only sleeps woke during each turn's wait: the
    # machine's own stalls (other work, the hypervisor), not the server's.
    run.stalls = {t.number: probe.worst(t.sent_ns, t.received_ns) for t in run.turns}
    return run


def report(run: Run) -> list[dict[str, Any]]:
    turns = run.turns
    last = turns[-1].number
    # Medians of ten turns: on a machine shared with test runs one turn in
    # twenty or so waits for the CPU several times longer than its neighbours.
    early = median([t.end_ms for t in turns[1:1 + END_WINDOW]])
    late = median([t.end_ms for t in turns[-END_WINDOW:]])
    waits = [t.wait_ms for t in turns]
    worst = max(waits)
    worst_turn = turns[waits.index(worst)].number
    # Growth is counted from turn 10 when the run is long enough: a store
    # that keeps the first checkpoint's whole-workspace copy while the agent
    # works may still be writing it at the end of turn 1.
    since = DISK_FROM_TURN if last >= 2 * DISK_FROM_TURN else 1
    first_store = run.store_bytes[since]
    first_git = run.git_bytes[since]
    store_growth = (run.store_bytes[last] - first_store) / MIB
    git_growth = (run.git_bytes[last] - first_git) / MIB
    rss2 = turns[1].rss_kib / 1024
    rss_last = turns[-1].rss_kib / 1024
    rw = run.rewind
    rewind_ms = rw["plan_ms"] + rw["restore_ms"]
    print(f"\nend-of-turn record + what changed: turns 2–{1 + END_WINDOW} {early:.1f} ms, "
          f"last {END_WINDOW} {late:.1f} ms")
    print(f"agent's wait: turn 1 {turns[0].wait_ms:.1f} ms, median {median(waits):.1f} ms, "
          f"p95 {percentile(waits, 95):.1f} ms, worst {worst:.1f} ms (turn {worst_turn}, "
          f"while a process that only sleeps woke up to {run.stalls.get(worst_turn, 0):.1f} ms "
          f"late)")
    print(f"disk: checkpoints {first_store / MIB:.1f} → {run.store_bytes[last] / MIB:.1f} MiB, "
          f"shadow git {first_git / MIB:.1f} → {run.git_bytes[last] / MIB:.1f} MiB "
          f"(turn {since} → turn {last}); sampled: "
          + ", ".join(f"turn {n} {b / MIB:.1f}" for n, b in sorted(run.store_bytes.items())[:4]))
    print(f"rewind of {rw['files']} files ({rw['span']} turns), medians of {rw['rounds']}: plan "
          f"{rw['plan_ms']:.0f} ms + restore {rw['restore_ms']:.0f} ms; git checkout "
          f"{rw['git_ms']:.0f} ms; "
          f"{rw['restored']} restored, conflicts {rw['conflicts']}, "
          f"files not as git has them {rw['differing']}")
    print(f"RSS: turn 2 {rss2:.1f} MiB, turn {last} {rss_last:.1f} MiB")
    return [
        row(f"checkpoints: end-of-turn + changes, turn {last} (≤ 1.5 × turn 2)", late,
            TARGET_END_RATIO * early, "ms", "lower", early, "turn 2"),
        row(f"checkpoints: end-of-turn + changes, turn {last}", late, TARGET_END_MS, "ms",
            "lower", early, "turn 2"),
        row("checkpoints: agent's wait before a turn, worst of all", worst, TARGET_WAIT_MS, "ms",
            "lower", median(waits), "median turn"),
        row("… the machine's stall meanwhile (stall probe)", run.stalls.get(worst_turn, 0.0), None,
            "ms", "lower"),
        row("checkpoints: agent's wait before turn 1", turns[0].wait_ms, TARGET_WAIT_MS, "ms",
            "lower", median(waits), "median turn"),
        row("checkpoints: agent's wait before a turn, p95", percentile(waits, 95), None, "ms",
            "lower", median(waits), "median turn"),
        row(f"checkpoints: disk growth turn {since} → {last} (≤ 2 × git's)", store_growth,
            TARGET_DISK_RATIO * git_growth, "MiB", "lower", git_growth, "shadow git"),
        row("checkpoints: disk at the end", run.store_bytes[last] / MIB, None, "MiB",
            "lower", run.git_bytes[last] / MIB, "shadow git"),
        row(f"checkpoints: rewind of {rw['files']} files, plan + restore (≤ 2 × git)", rewind_ms,
            TARGET_REWIND_RATIO * rw["git_ms"], "ms", "lower", rw["git_ms"], "git checkout"),
        row("checkpoints: rewound files not as before (git diff)", rw["differing"], 1, "files",
            "lower"),
        # Only the agent changed files before the first rewind: any file the
        # plan calls changed by hand is one the page would leave unrestored.
        row("checkpoints: rewind's conflicts (only the agent wrote)", rw["conflicts"], 1, "files",
            "lower"),
        row(f"checkpoints: server RSS turn {last} − turn 2", rss_last - rss2,
            TARGET_RSS_GROWTH_MIB, "MiB", "lower", rss2, "RSS at turn 2"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 files, 20 MiB, 40 turns")
    parser.add_argument("--files", type=int, default=None)
    parser.add_argument("--mb", type=float, default=None)
    parser.add_argument("--turns", type=int, default=None)
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds of turns at most; the rows name the turn reached")
    parser.add_argument("--rewinds", type=int, default=3,
                        help="rewinds timed (medians reported), each beside git's")
    parser.add_argument("--checkout", default=str(REPO),
                        help="the checkout whose pneuma serves (default: this one)")
    parser.add_argument("--scratch", default=tempfile.gettempdir(),
                        help="where the workspace and the shadow repository are made")
    args = parser.parse_args()
    args.files = args.files or (200 if args.quick else 1000)
    args.mb = args.mb or (20.0 if args.quick else 200.0)
    args.turns = args.turns or (40 if args.quick else 200)
    if args.turns < 3:
        parser.error("--turns: at least 3 (turn 2 is the reference, a rewind needs one before)")
    print(machine_note())
    print(f"server from {args.checkout}: {pneuma_imported_from(Path(args.checkout))}")
    Path(args.scratch).mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="pneuma-bench-ckpt-", dir=args.scratch))
    try:
        run = asyncio.run(measure(args, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return finish(report(run))


if __name__ == "__main__":
    sys.exit(main())
