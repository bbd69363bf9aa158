"""Start-up: time to the first HTTP answer, idle memory, memory over bursts.

1. Warm start (the figure a browser waits for every day): ``pneuma run
   --mode slide --no-open --backend none --no-prompt --port 0 --workspace
   W`` on a W an earlier start stamped (``pneuma.startup.launch_stamp``),
   timed from spawn to its ready line and to the first HTTP answer from
   the URL it printed (``GET /api/session``, sent the moment the line is
   read): median of 10 runs. On a warm start the ready line comes right
   after binding and the early server (``pneuma.server.early_server``)
   answers while the real one is being built. Baselines, same run,
   interleaved: ``python -c pass``, ``python -c "import aiohttp"`` (to
   exit) and a bare aiohttp server script (to its ready line, which it
   prints once it serves, and to its first answer). Goal: first answer
   ≤ 150 ms and ≤ 0.9 × the bare server's + 50 ms.
2. The same start with the stamp removed (anything changed: the checks
   come first), and a cold start: the first start of a new workspace
   (seeding, the skill install), each to its first answer.
3. Idle RSS (``VmRSS`` of /proc/<pid>/status) once the full server is
   up, for pneuma and for the bare aiohttp server: after the first HTTP
   answer, pneuma's also after a browser socket got its ``session_init``
   (the early server answers ``/api/session`` while the real one is still
   importing; a socket waits for the real one), and then once two reads
   200 ms apart are within 0.5 MiB of each other (at most 5 s). The time
   from the ready line to that read is reported beside it.
4. Flat over bursts: ``pneuma run --backend claude-code`` with the fake CLI
   (``_stream_cli.py``) as ``--claude-bin``, one browser socket connected;
   5 bursts of 2,000 ``stream_event`` deltas (each started by a
   ``user_message`` over the socket, waited for until its ``result``),
   RSS after each.

    python benchmarks/bench_startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from _common import (  # noqa: E402
    PYTHON,
    browser_tab,
    burst_prompt,
    finish,
    machine_note,
    make_claude_wrapper,
    median,
    pneuma_run,
    pneuma_run_cmd,
    row,
    rss_kib,
    temp_dir,
)

TARGET_READY_MS = 250.0
TARGET_ANSWER_MS = 150.0
TARGET_RSS_MIB = 60.0
TARGET_GROWTH_MIB = 2.0
# Idle RSS is read once two reads this far apart differ by at most this much.
RSS_STEP_S = 0.2
RSS_TOLERANCE_KIB = 512
RSS_BOUND_S = 5.0
BURSTS = 5
BURST_SIZE = 2000
MARK = '"text":"@'

BARE_SERVER = r"""
import asyncio, socket
from aiohttp import web

async def main():
    app = web.Application()
    async def index(request):
        return web.Response(text="ok")
    app.router.add_get("/", index)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"ready http://127.0.0.1:{port}/", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def time_to_exit(cmd: list[str]) -> float:
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return (time.monotonic() - t0) * 1000


def first_answer(line: str) -> None:
    """GET the page behind a ready line (pneuma's session API with its
    token, or the bare server's ``/``) and read the answer."""
    url = line.strip().split()[-1]
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    target = f"http://{parts.netloc}/"
    if "token" in query:
        target += f"api/session?token={query['token'][0]}"
    with urllib.request.urlopen(target, timeout=30) as response:
        response.read()


def session_socket_opened(line: str, timeout: float = 30.0) -> None:
    """A browser socket on the session behind a pneuma ready line got its
    ``session_init``: the real server is up (the early one leaves sockets
    to it), then the socket is closed again."""
    parts = urlsplit(line.strip().split()[-1])
    query = parse_qs(parts.query)
    url = (f"ws://{parts.netloc}/ws/browser/{query['session'][0]}"
           f"?token={query['token'][0]}")

    async def connect() -> None:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(url, max_msg_size=0) as ws:
                while True:
                    msg = await ws.receive(timeout=timeout)
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        raise RuntimeError(f"socket closed before session_init: {msg!r}")
                    if '"type":"session_init"' in msg.data.split("\n")[0].replace(" ", ""):
                        return

    asyncio.run(connect())


def settled_rss(pid: int, step: float = RSS_STEP_S, tolerance_kib: int = RSS_TOLERANCE_KIB,
                bound: float = RSS_BOUND_S) -> int:
    """VmRSS (KiB) once two reads ``step`` apart are within ``tolerance_kib``
    (the server has stopped growing), or after ``bound`` seconds."""
    deadline = time.monotonic() + bound
    last = rss_kib(pid)
    while True:
        time.sleep(step)
        now = rss_kib(pid)
        if abs(now - last) <= tolerance_kib or time.monotonic() >= deadline:
            return now
        last = now


def time_to_ready(cmd: list[str], marker: str, measure_rss: bool = True
                  ) -> tuple[float, float, int, float, str, float]:
    """(ms to the ready line, ms to the first HTTP answer, idle RSS KiB
    (0 unless ``measure_rss``), ms from SIGTERM to exit, ready line, ms from
    the ready line to the RSS read)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        ready_ms = (time.monotonic() - t0) * 1000
        if marker not in line:
            raise RuntimeError(f"{cmd[0]}: no ready line, got {line!r}")
        first_answer(line)
        answer_ms = (time.monotonic() - t0) * 1000
        rss, settle_ms = 0, 0.0
        if measure_rss:
            if "token=" in line:
                session_socket_opened(line)
            rss = settled_rss(proc.pid)
            settle_ms = (time.monotonic() - t0) * 1000 - ready_ms
        t1 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        stop_ms = (time.monotonic() - t1) * 1000
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return ready_ms, answer_ms, rss, stop_ms, line.strip(), settle_ms


async def bursts(workspace: Path, wrapper: Path) -> tuple[int, int, list[int]]:
    """(RSS after start, RSS with a socket subscribed, RSS after each burst) in KiB."""
    async with pneuma_run(workspace, "claude-code", wrapper) as (proc, url):
        await asyncio.sleep(1.0)  # the greeting turn (fake CLI) settles
        start_rss = rss_kib(proc.pid)
        after: list[int] = []
        async with browser_tab(url) as ws:
            await asyncio.sleep(0.3)
            socket_rss = rss_kib(proc.pid)
            for b in range(BURSTS):
                await ws.send_str(json.dumps({"type": "user_message",
                                              "content": burst_prompt(BURST_SIZE),
                                              "client_msg_id": f"burst-{b}"}))
                got, done = 0, False
                while not done or got < BURST_SIZE:
                    msg = await ws.receive(timeout=20)
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        raise RuntimeError(f"socket closed: {msg!r}")
                    got += msg.data.count(MARK)
                    if '"type":"result"' in msg.data:
                        done = True
                await asyncio.sleep(0.3)
                after.append(rss_kib(proc.pid))
        return start_rss, socket_rss, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(machine_note())

    tmp = temp_dir("pneuma-bench-startup-")
    workspace = tmp / "ws"
    bare_script = tmp / "bare_server.py"
    bare_script.write_text(BARE_SERVER)
    wrapper = make_claude_wrapper(tmp / "bin")
    try:
        # Warm-up: seeds the workspace, installs the skill, warms the page cache.
        time_to_ready(pneuma_run_cmd(workspace), "[pneuma] ready", measure_rss=False)
        time_to_ready([PYTHON, str(bare_script)], "ready", measure_rss=False)

        times: dict[str, list[float]] = {
            "pass": [], "aiohttp": [], "bare": [], "pneuma": [], "bare_answer": [],
            "pneuma_answer": [], "pneuma_checks": [], "pneuma_checks_answer": [],
            "pneuma_cold": [], "pneuma_cold_answer": []}
        rss: dict[str, list[int]] = {"bare": [], "pneuma": []}
        settle: dict[str, list[float]] = {"bare": [], "pneuma": []}
        stops: list[float] = []
        for run in range(args.runs):
            times["pass"].append(time_to_exit([PYTHON, "-c", "pass"]))
            times["aiohttp"].append(time_to_exit([PYTHON, "-c", "import aiohttp"]))
            ms, answer_ms, kib, _, _, settle_ms = time_to_ready([PYTHON, str(bare_script)], "ready")
            times["bare"].append(ms)
            times["bare_answer"].append(answer_ms)
            rss["bare"].append(kib)
            settle["bare"].append(settle_ms)
            ms, answer_ms, kib, stop_ms, _, settle_ms = time_to_ready(pneuma_run_cmd(workspace),
                                                                      "[pneuma] ready")
            times["pneuma"].append(ms)
            times["pneuma_answer"].append(answer_ms)
            rss["pneuma"].append(kib)
            settle["pneuma"].append(settle_ms)
            stops.append(stop_ms)
            # The same start with the launch stamp gone (anything changed):
            # the checks come first. It stamps W again for the next run.
            (workspace / ".pneuma" / "launch-stamp.json").unlink()
            ms, answer_ms, _, _, _, _ = time_to_ready(pneuma_run_cmd(workspace), "[pneuma] ready",
                                                      measure_rss=False)
            times["pneuma_checks"].append(ms)
            times["pneuma_checks_answer"].append(answer_ms)
            # Cold: the first start of a new workspace.
            ms, answer_ms, _, _, _, _ = time_to_ready(pneuma_run_cmd(tmp / f"ws-cold-{run}"),
                                                      "[pneuma] ready", measure_rss=False)
            times["pneuma_cold"].append(ms)
            times["pneuma_cold_answer"].append(answer_ms)
        labels = {"pass": 'python -c pass', "aiohttp": 'python -c "import aiohttp"',
                  "bare": "bare aiohttp server → ready",
                  "bare_answer": "bare aiohttp → first answer",
                  "pneuma": "pneuma run, warm → ready line",
                  "pneuma_answer": "pneuma run, warm → first answer",
                  "pneuma_checks": "pneuma run, checks first → ready",
                  "pneuma_checks_answer": "pneuma run, checks first → answer",
                  "pneuma_cold": "pneuma run, new workspace → ready",
                  "pneuma_cold_answer": "pneuma run, new workspace → answer"}
        print(f"{'start-up (ms, ' + str(args.runs) + ' runs)':36} {'median':>8} {'min':>8} {'max':>8}")
        for key, label in labels.items():
            print(f"{label:36} {median(times[key]):8.1f} {min(times[key]):8.1f} {max(times[key]):8.1f}")
        print(f"{'pneuma SIGTERM → exit':36} {median(stops):8.1f} {min(stops):8.1f} {max(stops):8.1f}")
        print(f"idle RSS: pneuma {median(rss['pneuma']) / 1024:.1f} MiB "
              f"(read {median(settle['pneuma']):.0f} ms after the ready line, the full server "
              f"up and settled), bare aiohttp server {median(rss['bare']) / 1024:.1f} MiB "
              f"(read after {median(settle['bare']):.0f} ms)")

        start_rss, socket_rss, after = asyncio.run(bursts(tmp / "ws-bursts", wrapper))
        print(f"claude-code backend (fake CLI): RSS after start {start_rss / 1024:.1f} MiB, "
              f"socket subscribed {socket_rss / 1024:.1f} MiB")
        for i, kib in enumerate(after, 1):
            print(f"  after burst {i} of {BURST_SIZE:,} deltas: {kib / 1024:.1f} MiB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    growth = (after[-1] - after[0]) / 1024
    bare_answer = median(times["bare_answer"])
    rows = [
        row("pneuma run, warm → first /api/session answer", median(times["pneuma_answer"]),
            TARGET_ANSWER_MS, "ms", "lower", bare_answer, "bare aiohttp server"),
        row("… and ≤ 0.9 × bare aiohttp + 50 ms", median(times["pneuma_answer"]),
            0.9 * bare_answer + 50.0, "ms", "lower", bare_answer, "bare aiohttp server"),
        row("pneuma run, warm → ready line", median(times["pneuma"]), TARGET_READY_MS, "ms",
            "lower", median(times["aiohttp"]), 'python -c "import aiohttp"'),
        row("python -c pass (floor)", median(times["pass"]), None, "ms", "lower"),
        row("bare aiohttp server → ready", median(times["bare"]), None, "ms", "lower"),
        row("pneuma run, no launch stamp → first answer", median(times["pneuma_checks_answer"]),
            None, "ms", "lower", bare_answer, "bare aiohttp server"),
        row("pneuma run, cold (new workspace) → first answer",
            median(times["pneuma_cold_answer"]), None, "ms", "lower", bare_answer,
            "bare aiohttp server"),
        row("idle RSS (--backend none), full server up and settled", median(rss["pneuma"]) / 1024,
            TARGET_RSS_MIB, "MiB", "lower", median(rss["bare"]) / 1024, "bare aiohttp server"),
        row("… read that long after the ready line", median(settle["pneuma"]), None, "ms", "lower",
            median(settle["bare"]), "bare aiohttp server"),
        row("RSS after 5 bursts (claude-code)", after[-1] / 1024, TARGET_RSS_MIB, "MiB", "lower",
            socket_rss / 1024, "before bursts"),
        row("RSS growth burst 1 → 5 (flat)", growth, TARGET_GROWTH_MIB, "MiB", "lower"),
    ]
    return finish(rows)


if __name__ == "__main__":
    sys.exit(main())
