"""The checks after every turn (docs/checks.md), mode by mode, beside the turn itself.

For each mode that declares checks: one real ``pneuma run --mode M
--backend claude-code`` whose ``--claude-bin`` is ``_edit_cli.py``, a fake
agent that writes the files a prompt carries as Claude Code writes them
(``Write`` tool uses), and one subscribed browser socket. Each run is one
turn making a typical small edit of the mode's seed (a paragraph added to
a page, a line to a scene or a section, a drawing's element moved, a
comment in a diagram): the edit leaves the artifact sound, so every check
does its whole work.

The bench's socket sends the messages but never subscribes: a subscribed
socket is a person's tab to the server, which would ask it (not the
headless viewer) for the viewer actions a slide check needs, and it runs
none. The turn's end and its badge are read over HTTP instead
(``GET /api/session``'s status, ``GET /api/turn-checks``), polled every
20 ms.

Figures, per mode, medians of ``--runs`` turns:

* **the checks** of the turn, run by the host's runner outside the server
  (``pneuma.turn_checks.runner.run_checks_sync``, the same pool rules and
  budget) on the workspace the turn left, with what each took;
* **the badge**: the time from the turn's ``result`` to the server's
  ``turn_checked`` broadcast (what a person waits for), when the server
  runs the checks (INFO, not graded);
* baseline, same run: **the turn itself**, from the ``user_message`` sent
  to its ``result`` (the fake agent answers at once: with a real model a
  turn takes seconds to minutes, so this is the host's share of a turn).

Target: a mode's checks within half the runner's per-check budget (a check
past it is reported "timed out"). Checks that need the session's page
(``needs_page``) are timed through the server only.

    python benchmarks/bench_checks.py [--runs 3] [--quick] [--modes webcraft,webgal]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from _common import (  # noqa: E402
    HERE,
    READY_PREFIX,
    finish,
    machine_note,
    make_claude_wrapper,
    median,
    pneuma_run_cmd,
    pneuma_ws_url,
    row,
    stop_process,
    temp_dir,
)

EDIT_CLI = HERE / "_edit_cli.py"
MODES = ["webcraft", "webgal", "coauthor", "draw", "slide", "doc", "diagram"]
BADGE_WAIT_S = 30.0  # past the runner's budget: a badge that never comes is reported, not waited for


def _insert_before(marker: str, text: str) -> Callable[[str, int], str]:
    def edit(old: str, run: int) -> str:
        at = old.rfind(marker)
        return old[:at] + text.format(run=run) + old[at:] if at >= 0 else old + text.format(run=run)
    return edit


def _move_first_element(old: str, run: int) -> str:
    drawing = json.loads(old)
    for element in drawing.get("elements", []):
        # A free shape (nothing bound to it), so the move leaves every binding sound.
        if element.get("type") in ("rectangle", "ellipse", "diamond") and not element.get("boundElements"):
            element["y"] = float(element["y"]) + 20
            element["version"] = int(element.get("version", 1)) + 1
            break
    drawing.setdefault("appState", {})["benchRun"] = run
    return json.dumps(drawing, indent=2)


# mode -> (file of its seed, how a turn edits it)
EDITS: dict[str, tuple[str, Callable[[str, int], str]]] = {
    "webcraft": ("index.html", _insert_before("</main>", "  <section><h2>Update {run}</h2>"
                                                        "<p>One more paragraph.</p></section>\n")),
    "webgal": ("game/scene/start.txt", lambda old, run: old.rstrip("\n") + f"\n:One more line, take {run};\n"),
    "coauthor": ("sections/method.tex", lambda old, run: old.rstrip("\n") + f"\n\nOne more sentence, take {run}.\n"),
    "draw": ("welcome.excalidraw", _move_first_element),
    "slide": ("slides/01-title.html", _insert_before("</section>", "  <!-- take {run} -->\n")),
    "doc": ("README.md", lambda old, run: old.rstrip("\n") + f"\n\nOne more paragraph, take {run}.\n"),
    "diagram": ("architecture.mmd", lambda old, run: old.rstrip("\n") + f"\n%% take {run}\n"),
}


@asynccontextmanager
async def mode_run(workspace: Path, mode: str, claude_bin: Path
                   ) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``pneuma run --mode <mode>`` from its ready line to the end of the block."""
    cmd = pneuma_run_cmd(workspace, "claude-code", claude_bin)
    cmd[cmd.index("--mode") + 1] = mode
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        if not line.startswith(READY_PREFIX):
            raise RuntimeError(f"pneuma run --mode {mode} did not start: {line!r}")
        yield proc, line[len(READY_PREFIX):]
    finally:
        await stop_process(proc)


POLL_S = 0.02


@asynccontextmanager
async def unsubscribed_tab(ready_url: str) -> AsyncIterator[tuple[aiohttp.ClientWebSocketResponse,
                                                                   aiohttp.ClientSession, str]]:
    """A socket on the session that sends messages but never subscribes (so it
    is no tab of the person's), with an HTTP client for the session's API."""
    parts = urlsplit(ready_url)
    query = parse_qs(parts.query)
    base, token = f"http://{parts.netloc}", query["token"][0]
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(headers=headers) as http:
        async with http.ws_connect(pneuma_ws_url(base, query["session"][0], token),
                                   max_msg_size=0) as ws:
            await ws.receive(timeout=10)  # session_init
            yield ws, http, base


async def session_status(http: aiohttp.ClientSession, base: str) -> str:
    async with http.get(base + "/api/session") as response:
        info = await response.json()
    return str((info.get("session") or info).get("status"))


async def turn_checked(http: aiohttp.ClientSession, base: str, client_msg_id: str,
                       timeout: float) -> dict[str, Any] | None:
    """The turn's kept check result once there (None after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        async with http.get(base + "/api/turn-checks") as response:
            listed = await response.json()
        for result in listed.get("results", []):
            if result.get("client_msg_id") == client_msg_id:
                return result  # type: ignore[no-any-return]
        await asyncio.sleep(POLL_S)
    return None


def direct_checks(mode: str, workspace: Path, changed: list[str]) -> tuple[float | None, dict[str, float], str]:
    """The mode's checks by the host's runner, outside the server: total
    seconds (None when every check needs the session's page), each check's
    seconds, and the turn's status."""
    from pneuma.host.plugins import get_plugin_manager
    from pneuma.host.turn_checks import CheckRequest, checks_for
    from pneuma.turn_checks.runner import run_checks_sync

    checks = [c for c in checks_for(get_plugin_manager(), mode) if not c.needs_page]
    if not checks:
        return None, {}, "-"
    t0 = time.monotonic()
    result = run_checks_sync(checks, CheckRequest(workspace=workspace, changed=tuple(changed), mode=mode))
    took = time.monotonic() - t0
    return took, {o.check.name: o.seconds for o in result.outcomes}, result.status


async def bench_mode(tmp: Path, mode: str, runs: int, wrapper: Path) -> dict[str, Any]:
    workspace = tmp / mode
    path, edit = EDITS[mode]
    turns: list[float] = []
    badges: list[float] = []
    checks: list[float] = []
    per_check: dict[str, list[float]] = {}
    statuses: list[str] = []
    badge_wait = BADGE_WAIT_S
    async with mode_run(workspace, mode, wrapper) as (_proc, url), \
            unsubscribed_tab(url) as (tab, http, base):
        for run in range(1, runs + 1):
            while await session_status(http, base) != "idle":  # the greeting, if any
                await asyncio.sleep(POLL_S)
            content = edit((workspace / path).read_text(encoding="utf-8"), run)
            payload = base64.b64encode(json.dumps({path: content}).encode()).decode()
            msg_id = f"{mode}-{run}"
            t0 = time.monotonic()
            await tab.send_str(json.dumps({"type": "user_message", "client_msg_id": msg_id,
                                           "content": f"Make the small edit. EDIT:{payload}"}))
            # The turn has ended once its file holds the edit and the session is idle again.
            while (workspace / path).read_text(encoding="utf-8") != content \
                    or await session_status(http, base) != "idle":
                if time.monotonic() - t0 > 60:
                    raise RuntimeError(f"{mode}: turn {run} did not end")
                await asyncio.sleep(POLL_S)
            ended = time.monotonic()
            turns.append(ended - t0)
            checked = await turn_checked(http, base, msg_id, badge_wait)
            if checked is not None:
                badges.append(time.monotonic() - ended)
                statuses.append(str(checked.get("status")))
                if checked.get("status") == "error":
                    print(f"  {mode}: {checked.get('problems')}", flush=True)
            else:
                badge_wait = 2.0  # this server sends none: do not wait a budget each run
            took, each, status = await asyncio.to_thread(direct_checks, mode, workspace, [path])
            if took is not None:
                checks.append(took)
                statuses.append(status)
                for name, seconds in each.items():
                    per_check.setdefault(name, []).append(seconds)
    return {"turn": median(turns), "badge": median(badges) if badges else None,
            "checks": median(checks) if checks else None,
            "per_check": {name: median(v) for name, v in per_check.items()},
            "statuses": sorted(set(statuses))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one turn per mode")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ",".join(MODES))
    args = parser.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    modes = [m for m in args.modes.split(",") if m]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"no mode {', '.join(unknown)}; there are {', '.join(MODES)}")
    print(machine_note())

    from pneuma.host.plugins import get_plugin_manager
    from pneuma.host.turn_checks import checks_for
    from pneuma.turn_checks.runner import BUDGET_S

    tmp = temp_dir("pneuma-bench-checks-")
    wrapper = make_claude_wrapper(tmp / "bin", EDIT_CLI)
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for mode in modes:
        declared = checks_for(get_plugin_manager(), mode)
        if not declared:
            notes.append(f"{mode}: declares no after-turn check")
            continue
        figures = asyncio.run(bench_mode(tmp, mode, runs, wrapper))
        each = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in figures["per_check"].items())
        print(f"  {mode}: turn {figures['turn']:.2f} s; checks "
              + (f"{figures['checks']:.2f} s ({each})" if figures["checks"] is not None else "(page only)")
              + (f"; badge {figures['badge']:.2f} s after the result" if figures["badge"] is not None
                 else "; no turn_checked from the server")
              + f"; status {'/'.join(figures['statuses']) or '-'}", flush=True)
        if figures["checks"] is not None:
            rows.append(row(f"{mode}: after-turn checks", figures["checks"], BUDGET_S / 2, "s", "lower",
                            figures["turn"], "the turn itself"))
        if figures["badge"] is not None:
            rows.append(row(f"{mode}: result → badge (server)", figures["badge"], None, "s", "lower",
                            figures["turn"], "the turn itself", info=True))
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    return finish(rows, *notes, f"{runs} turn(s) per mode; the fake agent answers at once "
                  "(a real turn takes seconds to minutes)")


if __name__ == "__main__":
    sys.exit(main())
