"""Shared helpers for the benchmark scripts (not a benchmark itself).

Every script prints a human-readable report and, as its last line,
``BENCH_RESULTS <json>``: a list of rows that ``run_all.py`` turns into the
summary table. A row is ``{"figure", "measured", "target", "unit",
"better", "baseline", "status"}`` where ``better`` is ``"lower"`` or
``"higher"`` and ``status`` is ``PASS``, ``MISS`` or ``INFO``.

Clocks: latencies compare ``time.monotonic_ns()`` taken in different
processes. On Linux that is CLOCK_MONOTONIC, one clock for the whole
machine, so a timestamp written by one process can be subtracted from one
read by another.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from aiohttp import web

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYTHON = sys.executable
VENV_BIN = Path(sys.executable).parent
PNEUMA_BIN = VENV_BIN / "pneuma"
STREAM_CLI = HERE / "_stream_cli.py"
WS_CLIENT = HERE / "_ws_client.py"

CLK_TCK = os.sysconf("SC_CLK_TCK")

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


# --- numbers -------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of an unsorted list."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, int(round(q / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[rank]


def median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return float("nan")
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


# --- /proc ---------------------------------------------------------------------


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        data = f.read().decode()
    fields = data[data.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


# --- fake CLI ------------------------------------------------------------------


def make_claude_wrapper(directory: Path, script: Path = STREAM_CLI) -> Path:
    """An executable ``claude`` that runs a fake CLI (the streaming one
    unless ``script`` names another)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "claude"
    path.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{script}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


async def serve_forever(app: Any, ready: str) -> None:
    """Serve the aiohttp ``app`` on a free 127.0.0.1 port until killed,
    after printing ``ready`` (formatted with ``port``): the bare baselines'
    main loop."""
    from aiohttp import web

    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, shutdown_timeout=0.5)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(ready.format(port=port), flush=True)
    await asyncio.Event().wait()


async def stop_process(proc: asyncio.subprocess.Process, timeout: float = 6) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; waits for the exit."""
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()


# 1 + 19 + 1 + 43 = 64 bytes of delta text, as _stream_cli.py writes them.
FILLER = "x" * 43


def delta() -> dict[str, Any]:
    """One stream_event as a backend hands it to the session, its text
    stamped with ``time.monotonic_ns()`` now (the inject paths)."""
    return {"type": "stream_event",
            "event": {"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta",
                                "text": "@%019d|%s" % (time.monotonic_ns(), FILLER)}},
            "parent_tool_use_id": None}


# The bare baselines serialise as pneuma's session does: once, compact.
dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


async def send_to_all(sockets: set[Any], message: dict[str, Any]) -> None:
    """What a bare baseline does with a message: serialise it once and
    write it to every socket."""
    text = dumps(message)
    for ws in list(sockets):
        await ws.send_str(text)


async def hold_socket(request: web.Request, sockets: set[web.WebSocketResponse],
                      on_text: Callable[[str], Awaitable[None]] | None = None) -> web.WebSocketResponse:
    """A bare baseline's ``/ws``: the socket is in ``sockets`` while open;
    each text frame goes to ``on_text``."""
    from aiohttp import web

    ws = web.WebSocketResponse(max_msg_size=0)
    await ws.prepare(request)
    sockets.add(ws)
    try:
        async for frame in ws:
            if on_text is not None:
                await on_text(frame.data)
    finally:
        sockets.discard(ws)
    return ws


async def write_user_turn(cli: asyncio.subprocess.Process, content: str) -> None:
    """A user turn on a fake CLI's stdin, as one stream-json line."""
    assert cli.stdin is not None
    line = {"type": "user", "message": {"role": "user", "content": content},
            "parent_tool_use_id": None, "session_id": ""}
    cli.stdin.write((json.dumps(line) + "\n").encode())
    await cli.stdin.drain()


def burst_prompt(count: int, rate: float = 0.0) -> str:
    """The user message that makes the fake CLI stream ``count`` deltas."""
    return f"bench n={count} rate={rate}"


# --- the WebSocket client process ------------------------------------------------


class ClientProcess:
    """``_ws_client.py`` in its own process: K sockets, counts and latencies."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, url: str, sockets: int, expect: int, *, subscribe: bool,
                    timeout: float = 30.0) -> "ClientProcess":
        args = [PYTHON, str(WS_CLIENT), "--url", url, "--sockets", str(sockets),
                "--expect", str(expect), "--timeout", str(timeout)]
        if subscribe:
            args.append("--subscribe")
        proc = await asyncio.create_subprocess_exec(
            *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        client = cls(proc)
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        if line.strip() != b"READY":
            rest = await proc.stdout.read()
            raise RuntimeError(f"client did not get ready: {line!r} {rest[:500]!r}")
        return client

    async def result(self, timeout: float = 60.0) -> dict[str, Any]:
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        await self.proc.wait()
        if not line:
            raise RuntimeError("client exited without a result")
        return json.loads(line)

    def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()


# --- the machine's own stalls ----------------------------------------------------------

# A process that only sleeps 1 ms at a time and reports each wake-up that
# came more than 0.2 ms late (monotonic ns of the sleep's start, lateness
# in ns). It does what every process of a paced run does between two
# messages (sleep, wake on time), with no work of its own: its lateness is
# the machine's (scheduler, other load, the hypervisor's vCPU stalls).
_PROBE = r"""
import sys, time
clock, sleep, out = time.monotonic_ns, time.sleep, sys.stdout
while True:
    t = clock()
    sleep(0.001)
    late = clock() - t - 1_000_000
    if late > 200_000:
        out.write("%d %d\n" % (t, late))
        out.flush()
"""


class StallProbe:
    """``_PROBE`` in its own process, beside a benchmark; ``worst(t0, t1)``
    is its worst lateness (ms) for sleeps that started in [t0, t1]."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.late: list[tuple[int, int]] = []
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            PYTHON, "-c", _PROBE, stdout=asyncio.subprocess.PIPE)
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        async for line in self.proc.stdout:
            t, late = line.split()
            self.late.append((int(t), int(late)))

    def worst(self, t0: int, t1: int) -> float:
        return max((late for t, late in self.late if t0 <= t <= t1), default=0) / 1e6

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()


# --- pneuma in this process --------------------------------------------------------


async def start_pneuma_app(workspace: Path, *, backend: str = "none", claude_bin: str | None = None,
                           watch: bool = False, mode: str = "slide"):
    """The real pneuma app on 127.0.0.1:<free port>, in this process.

    Returns (runner, base_url, session, token). The workspace is seeded
    and the skill installed exactly as ``pneuma run`` would.
    """
    from aiohttp import web

    from pneuma.host.registry import get_mode
    from pneuma.server.app import ServerConfig, create_app
    from pneuma.server.persistence import load_session
    from pneuma.server.session import Session
    from pneuma.startup.runner import bind_socket, find_backend
    from pneuma.workspace.params import init_workspace
    from pneuma.workspace.skill import install_skill

    loaded = get_mode(mode)
    workspace.mkdir(parents=True, exist_ok=True)
    result = init_workspace(loaded, workspace, {}, prompt=None)
    install_skill(loaded, workspace, result.params)
    stored = load_session(workspace, loaded.name, backend)
    session = Session(stored.session_id, mode=loaded.name, workspace=workspace,
                      backend_name=backend, history=stored.history, last_seq=stored.last_seq,
                      agent_session_id=stored.agent_session_id)
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    token = "bench-token"
    config = ServerConfig(mode=loaded, workspace=workspace, token=token, session=session,
                          host="127.0.0.1", port=port, params=result.params, watch=watch,
                          backend=find_backend(backend), claude_bin=claude_bin,
                          save_interval=3600.0)
    app = create_app(config)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.SockSite(runner, sock, shutdown_timeout=0.5)
    await site.start()
    base = f"http://127.0.0.1:{port}"
    import gc

    gc.freeze()  # as `pneuma run` does once it is ready (pneuma.startup.runner.serve)
    return runner, base, session, token


def pneuma_ws_url(base: str, session_id: str, token: str) -> str:
    return base.replace("http://", "ws://") + f"/ws/browser/{session_id}?token={token}"


# --- `pneuma run` in its own process --------------------------------------------

READY_PREFIX = "[pneuma] ready "


def pneuma_run_cmd(workspace: Path, backend: str = "none", claude_bin: Path | None = None
                   ) -> list[str]:
    """``pneuma run`` of the slide mode on a free port, no browser, no prompts."""
    cmd = [str(PNEUMA_BIN), "run", "--mode", "slide", "--no-open", "--backend", backend,
           "--no-prompt", "--port", "0", "--workspace", str(workspace)]
    if claude_bin is not None:
        cmd += ["--claude-bin", str(claude_bin)]
    return cmd


@asynccontextmanager
async def pneuma_run(workspace: Path, backend: str = "none", claude_bin: Path | None = None
                     ) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``pneuma run`` from its ready line to the end of the block: (the
    process, the URL the ready line gives). It is stopped with SIGTERM, as
    a user's Ctrl-C would, and killed if it is not gone in 6 s."""
    proc = await asyncio.create_subprocess_exec(
        *pneuma_run_cmd(workspace, backend, claude_bin),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().strip()
        if not line.startswith(READY_PREFIX):
            raise RuntimeError(f"pneuma did not start: {line!r}")
        yield proc, line[len(READY_PREFIX):]
    finally:
        await stop_process(proc)


@asynccontextmanager
async def browser_tab(ready_url: str) -> AsyncIterator[Any]:
    """A browser socket on the session a ready line's URL opens, subscribed
    as the shell subscribes on connecting: from the last seq that
    ``session_init`` names (so nothing of the history is replayed)."""
    import aiohttp

    parts = urlsplit(ready_url)
    query = parse_qs(parts.query)
    url = pneuma_ws_url(f"http://{parts.netloc}", query["session"][0], query["token"][0])
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url, max_msg_size=0) as ws:
            first = json.loads((await ws.receive(timeout=10)).data.split("\n")[0])
            await ws.send_str(json.dumps({"type": "session_subscribe",
                                          "last_seq": first["session"]["last_seq"]}))
            yield ws


# --- reporting ------------------------------------------------------------------


def row(figure: str, measured: float, target: float | None, unit: str, better: str,
        baseline: float | None = None, baseline_label: str = "", info: bool = False) -> dict[str, Any]:
    if target is None or info:
        status = "INFO"
    elif better == "lower":
        status = "PASS" if measured < target else "MISS"
    else:
        status = "PASS" if measured >= target else "MISS"
    return {"figure": figure, "measured": measured, "target": target, "unit": unit,
            "better": better, "baseline": baseline, "baseline_label": baseline_label,
            "status": status}


def vs_bare(figure: str, measure: Callable[[str], float], target: float | None, unit: str,
            better: str) -> dict[str, Any]:
    """A row whose baseline is the bare aiohttp server of the same run;
    ``measure(impl)`` gives the figure for ``"pneuma"`` and for ``"bare"``."""
    return row(figure, measure("pneuma"), target, unit, better, measure("bare"), "bare aiohttp")


def fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and value != value:
        return "nan"
    if abs(value) >= 10000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".strip()


def print_rows(rows: list[dict[str, Any]]) -> None:
    headers = ["figure", "target", "measured", "baseline (same run)", "status"]
    table = []
    for r in rows:
        cmp = "<" if r["better"] == "lower" else "≥"
        target = f"{cmp} {fmt(r['target'], r['unit'])}" if r["target"] is not None else "-"
        base = fmt(r["baseline"], r["unit"]) if r["baseline"] is not None else "-"
        if r["baseline"] is not None and r["baseline_label"]:
            base += f" ({r['baseline_label']})"
        table.append([r["figure"], target, fmt(r["measured"], r["unit"]), base, r["status"]])
    # max over a list: with no rows (every benchmark failed) the headers alone set the widths
    widths = [max([len(h), *(len(t[i]) for t in table)]) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)))


def emit_results(rows: list[dict[str, Any]]) -> None:
    print()
    print_rows(rows)
    print("BENCH_RESULTS " + json.dumps(rows), flush=True)


def finish(rows: list[dict[str, Any]], *notes: str) -> int:
    """A script's end: the table and its ``BENCH_RESULTS`` line, then
    ``notes`` and the machine's load now (to read the figures with). The
    exit status: 0, whatever the figures."""
    emit_results(rows)
    for note in notes:
        print(note)
    print(machine_note())
    return 0


def machine_note() -> str:
    """CPU count and load average: other work on the machine moves every figure."""
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return f"machine: {os.cpu_count()} CPUs, load average {load}, Python {sys.version.split()[0]}"


def temp_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
