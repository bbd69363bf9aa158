"""A long session reopened: a new tab gets a 2,000-turn conversation.

The workspace's stored conversation is written directly, in the format of
``history.json`` (``{"version": 1, "lastSeq": N, "messages": [...]}`` plus
``session.json``), which every version of pneuma reads (one that keeps the
conversation in an append-only log imports it on its first start). Each
turn: a ``user_message``, the ``assistant`` reply (a few hundred bytes of
text) and its ``result`` (the same text, as Claude Code sends it); every
fifth turn also reads a file first (an ``assistant`` tool use and its
``tool_result``).

Then ``pneuma run --mode slide --backend none`` on it, ``--runs`` times
(the first start is reported apart: it may import): the start → ready line
and → first HTTP answer (``GET /api/session``); a new tab's
``session_subscribe {last_seq: 0}`` → the ``message_history`` reply, and →
the whole conversation (when ``message_history`` says ``"has_more": true``
the tab asks ``history_page {before}`` until ``has_more`` is false; without
``has_more`` the first reply is everything); the bytes the tab received;
the server's RSS once it has sent them.

Baselines, same run, interleaved: the same ``pneuma run`` on a workspace
with no conversation (start-up and RSS), and ``_bare_history.py``, a bare
aiohttp server that loads the same ``history.json`` and sends it whole,
serialised then, to each new tab.

What a person notices (docs/conversations.md, "A long conversation opens at
once"): the size of the first frame a new tab gets; the time a new tab in
Chromium takes to show the newest turn, beside the time it takes to show
an empty conversation (same run, interleaved); and what a tab that held
the conversation receives when it reconnects after a server restart that
happened after one turn it missed (the turn is appended to the log while
the server is stopped, as a turn of the previous run), beside what a new
tab receives.

    python benchmarks/bench_replay.py [--turns 2000] [--runs 3] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp  # noqa: E402
from _common import (  # noqa: E402
    HERE,
    PYTHON,
    finish,
    machine_note,
    median,
    pneuma_run,
    pneuma_run_cmd,
    pneuma_ws_url,
    row,
    rss_kib,
    stop_process,
    temp_dir,
)

BARE_HISTORY = HERE / "_bare_history.py"
MODEL = "claude-sonnet-4-5"
WORDS = ("slide title layout wording shorter clearer chart colour spacing heading "
         "bullet summary speaker notes contrast font margin image caption table "
         "section flow audience opening closing example number").split()


# --- the stored conversation --------------------------------------------------


def sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def conversation(turns: int) -> tuple[list[dict[str, Any]], int]:
    """``turns`` turns as a session's history holds them, and the last seq.
    Seq numbers leave room for what was broadcast but is not history (the
    stream events of each reply, status changes)."""
    rng = random.Random(15)
    messages: list[dict[str, Any]] = []
    seq = 0
    start = 1_760_000_000.0

    def add(message: dict[str, Any], gap: int = 1) -> None:
        nonlocal seq
        seq += gap
        message["seq"] = seq
        messages.append(message)

    usage = {"input_tokens": 2048, "output_tokens": 96, "cache_read_input_tokens": 18000}
    for t in range(1, turns + 1):
        slide = t % 40 + 1
        add({"type": "user_message",
             "content": f"Slide {slide}: " + sentence(rng, rng.randint(8, 20)),
             "timestamp": start + 40.0 * t, "client_msg_id": f"replay-{t:05d}"}, gap=2)
        if t % 5 == 0:
            tool_id = f"toolu_replay_{t:05d}"
            add({"type": "assistant", "message": {
                "id": f"msg_replay_{t:05d}_read", "type": "message", "role": "assistant",
                "model": MODEL, "content": [{"type": "tool_use", "id": tool_id, "name": "Read",
                                             "input": {"file_path": f"slides/{slide:02d}.html"}}],
                "stop_reason": None, "stop_sequence": None, "usage": usage},
                "parent_tool_use_id": None}, gap=6)
            body = "\n".join(f"  <p>{sentence(rng, 10)}</p>" for _ in range(12))
            add({"type": "tool_result", "tool_use_id": tool_id,
                 "content": f'<section class="slide">\n{body}\n</section>\n',
                 "is_error": False, "parent_tool_use_id": None})
        text = " ".join(sentence(rng, rng.randint(6, 14)) for _ in range(rng.randint(3, 6)))
        add({"type": "assistant", "message": {
            "id": f"msg_replay_{t:05d}", "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": text}], "stop_reason": None,
            "stop_sequence": None, "usage": usage}, "parent_tool_use_id": None},
            gap=len(text) // 12 + 4)
        add({"type": "result", "data": {
            "subtype": "success", "is_error": False, "duration_ms": rng.randint(2000, 9000),
            "num_turns": 1 if t % 5 else 2, "total_cost_usd": 0.012, "result": text,
            "usage": usage}})
        seq += 1  # the status change to idle
    return messages, seq


def encode(data: Any) -> bytes:
    """Compact UTF-8 JSON, as pneuma writes its state files."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def store_conversation(workspace: Path, session_id: str, messages: list[dict[str, Any]],
                       last_seq: int) -> Path:
    """Replace a (seeded) workspace's session state by this conversation;
    returns the ``history.json`` written."""
    state = workspace / ".pneuma"
    for name in ("history.json", "history.json.imported", "seq.json", "conversation.db",
                 "conversation.db-wal", "conversation.db-shm", "conversation.db-journal"):
        (state / name).unlink(missing_ok=True)
    history = state / "history.json"
    history.write_bytes(encode({"version": 1, "lastSeq": last_seq, "messages": messages}))
    (state / "session.json").write_bytes(encode({
        "sessionId": session_id, "agentSessionId": None, "mode": "slide", "backend": "none",
        "lastSeq": last_seq}))
    for path in (history, state / "session.json"):
        path.chmod(0o600)
    return history


# --- one start, one tab ---------------------------------------------------------


@dataclass
class Opened:
    ready_ms: float
    answer_ms: float
    first_reply_ms: float
    all_ms: float
    pages: int
    messages: int
    received_bytes: int
    rss_kib: int
    first_frame_bytes: int


async def first_answer(http: aiohttp.ClientSession, base: str, token: str | None) -> None:
    url = base + "/api/session" + (f"?token={token}" if token else "")
    async with http.get(url) as response:
        await response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {url}: {response.status}")


async def read_history(ws: aiohttp.ClientWebSocketResponse
                       ) -> tuple[float, float, int, int, int, int]:
    """Subscribe from seq 0 and read the whole conversation: (ms to the
    ``message_history`` reply, ms to the last page, pages, messages,
    bytes received, bytes of the frame holding ``message_history``)."""
    received = 0
    first_frame = 0
    pages = 0
    count = 0
    first_ms = 0.0
    t0 = time.monotonic()
    await ws.send_str(json.dumps({"type": "session_subscribe", "last_seq": 0}))
    want = '{"type":"message_history"'
    while True:
        msg = await ws.receive(timeout=60)
        now = time.monotonic()
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise RuntimeError(f"socket closed while reading the history: {msg!r}")
        received += len(msg.data.encode("utf-8"))
        # A frame holds one message or several, one per line (JSON text
        # never holds a raw newline).
        for line in msg.data.split("\n"):
            if not line.startswith(want):
                continue
            if pages == 0:
                first_ms = (now - t0) * 1000
                first_frame = len(msg.data.encode("utf-8"))
            pages += 1
            reply = json.loads(line)
            count += len(reply["messages"])
            if not reply.get("has_more"):
                return first_ms, (now - t0) * 1000, pages, count, received, first_frame
            want = '{"type":"history_page"'
            await ws.send_str(json.dumps({"type": "history_page", "before": reply["before"]}))


async def open_once(http: aiohttp.ClientSession, cmd: list[str], ready_marker: str) -> Opened:
    """Start ``cmd`` (pneuma or the bare server), get its first answer,
    open a tab, read the whole history, read RSS, stop it."""
    t0 = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        ready_ms = (time.monotonic() - t0) * 1000
        if not line.startswith(ready_marker):
            raise RuntimeError(f"{cmd[1]}: no ready line, got {line!r}")
        url = line.split()[-1]
        parts = urlsplit(url)
        base = f"http://{parts.netloc}"
        query = parse_qs(parts.query)
        token = query["token"][0] if "token" in query else None
        await first_answer(http, base, token)
        answer_ms = (time.monotonic() - t0) * 1000
        ws_url = (pneuma_ws_url(base, query["session"][0], token) if token
                  else base.replace("http://", "ws://") + "/ws")
        async with http.ws_connect(ws_url, max_msg_size=0) as ws:
            while True:  # session_init first
                msg = await ws.receive(timeout=30)
                if msg.type != aiohttp.WSMsgType.TEXT:
                    raise RuntimeError(f"socket closed before session_init: {msg!r}")
                if '"type":"session_init"' in msg.data:
                    break
            first_ms, all_ms, pages, count, received, first_frame = await read_history(ws)
            await asyncio.sleep(0.3)
            rss = rss_kib(proc.pid)
        return Opened(ready_ms, answer_ms, first_ms, all_ms, pages, count, received, rss,
                      first_frame)
    finally:
        await stop_process(proc)


# --- what a person sees: a new tab in Chromium, a tab after a restart -----------


async def newest_turn_shown(browser: Any, url: str, newest: str | None) -> float:
    """Open a new tab on ``url`` and wait until it shows the newest turn
    (the person's message ``newest``), or the empty conversation (None): ms."""
    page = await browser.new_page()
    try:
        await page.goto(url)
        # The page's own clock, from the start of the navigation to the
        # first frame that shows it (Playwright's round trips not counted).
        shown = await page.wait_for_function(
            """(text) => {
              const bubbles = document.querySelectorAll('.msg.user .bubble');
              const done = text === null ? !!document.querySelector('.messages .empty')
                : bubbles.length > 0 && bubbles[bubbles.length - 1].textContent === text;
              return done && performance.now();
            }""", arg=newest, timeout=60_000, polling="raf")
        return float(await shown.json_value())
    finally:
        await page.close()


async def chromium_opens(long_ws: Path, empty_ws: Path, newest: str, runs: int
                         ) -> tuple[list[float], list[float]]:
    """A new Chromium tab on each workspace, ``runs`` times, interleaved:
    ms to the newest turn (long), ms to the empty conversation (empty)."""
    from playwright.async_api import async_playwright

    from pneuma.api import CHROMIUM, CHROMIUM_ARGS

    long_ms: list[float] = []
    empty_ms: list[float] = []
    async with pneuma_run(long_ws) as (_, long_url), pneuma_run(empty_ws) as (_, empty_url), \
            async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            # One of each first: the browser's own start and cache, not counted.
            await newest_turn_shown(browser, empty_url, None)
            await newest_turn_shown(browser, long_url, newest)
            for _ in range(runs):
                empty_ms.append(await newest_turn_shown(browser, empty_url, None))
                long_ms.append(await newest_turn_shown(browser, long_url, newest))
        finally:
            await browser.close()
    return long_ms, empty_ms


async def subscribed(http: aiohttp.ClientSession, url: str, subscribe: dict[str, Any]
                     ) -> tuple[int, list[dict[str, Any]]]:
    """A tab on the ready ``url`` sends ``subscribe``: the bytes it
    receives up to the status snapshot that ends the answer, and the
    messages (those a history frame holds included)."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    ws_url = pneuma_ws_url(f"http://{parts.netloc}", query["session"][0], query["token"][0])
    got: list[dict[str, Any]] = []
    received = 0
    async with http.ws_connect(ws_url, max_msg_size=0) as ws:
        while True:
            msg = await ws.receive(timeout=30)
            if msg.type != aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"socket closed before session_init: {msg!r}")
            if '"type":"session_init"' in msg.data:
                break
        await ws.send_str(json.dumps(subscribe))
        while True:
            msg = await ws.receive(timeout=60)
            if msg.type != aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"socket closed while subscribing: {msg!r}")
            received += len(msg.data.encode("utf-8"))
            for line in msg.data.split("\n"):
                message = json.loads(line)
                got.append(message)
                got.extend(message.get("messages") or [])
                if message["type"] == "status_change" and "seq" not in message:
                    return received, got


def append_turn(workspace: Path, conversation_id: str, after_seq: int, turns: int) -> str:
    """Log one more turn (turn ``turns + 1`` of ``conversation``) after
    seq ``after_seq``, as the run before a restart would have, while no
    server runs; returns the person's message of it."""
    messages, _ = conversation(turns + 1)
    start = next(i for i, m in enumerate(messages)
                 if m.get("client_msg_id") == f"replay-{turns + 1:05d}")
    turn = messages[start:]
    offset = after_seq + 1 - turn[0]["seq"]
    state = workspace / ".pneuma"
    db = sqlite3.connect(state / "conversation.db")
    try:
        next_id = (db.execute("SELECT MAX(id) FROM messages").fetchone()[0] or 0) + 1
        with db:
            for i, message in enumerate(turn):
                message["seq"] += offset
                inner = message.get("message")
                db.execute("INSERT INTO messages (id, session_id, seq, kind, message_id, body)"
                           " VALUES (?, ?, ?, ?, ?, ?)",
                           (next_id + i, conversation_id, message["seq"], message["type"],
                            inner.get("id") if isinstance(inner, dict) else None,
                            encode(message).decode("utf-8")))
    finally:
        db.close()
    # The seq numbers the run that logged it used are reserved, as that run's were.
    reserved = state / "seq.json"
    through = max(json.loads(reserved.read_text()).get("reservedThrough", 0) if reserved.exists()
                  else 0, turn[-1]["seq"] + 1)
    reserved.write_bytes(encode({"reservedThrough": through}))
    return str(turn[0]["content"])


@dataclass
class Reconnected:
    fresh_bytes: int  # a new tab's answer
    resumed_bytes: int  # the answer to a tab that holds the conversation
    shows_new_turn: bool


async def reconnect_after_restart(http: aiohttp.ClientSession, workspace: Path, turns: int
                                  ) -> Reconnected:
    """A tab holds the conversation; the server stops; one turn is logged;
    the server starts again and the tab subscribes with what it had."""
    async with pneuma_run(workspace) as (_, url):
        fresh, got = await subscribed(http, url, {"type": "session_subscribe", "last_seq": 0})
    history = next(m for m in got if m["type"] == "message_history")
    conversation_id = (history.get("conversation") or {}).get("id")
    if not conversation_id:
        raise RuntimeError("message_history names no conversation")
    new_turn = append_turn(workspace, conversation_id, history["last_seq"], turns)
    async with pneuma_run(workspace) as (_, url):
        resumed, got = await subscribed(http, url, {
            "type": "session_subscribe", "last_seq": history["last_seq"],
            "conversation_id": conversation_id})
    shows = any(m.get("type") == "user_message" and m.get("content") == new_turn for m in got)
    return Reconnected(fresh, resumed, shows)


async def seed(workspace: Path) -> str:
    """Initialise a slide workspace with one ``pneuma run`` (as a user's
    first start would); returns its session id."""
    async with pneuma_run(workspace) as (_, url):
        return parse_qs(urlsplit(url).query)["session"][0]


async def bench(tmp: Path, turns: int, runs: int) -> dict[str, Any]:
    long_ws, empty_ws = tmp / "ws-long", tmp / "ws-empty"
    session_id = await seed(long_ws)
    await seed(empty_ws)
    messages, last_seq = conversation(turns)
    history = store_conversation(long_ws, session_id, messages, last_seq)
    size = history.stat().st_size
    print(f"{turns:,} turns: {len(messages):,} messages, last seq {last_seq:,}, "
          f"history.json {size / 2**20:.2f} MiB")
    bare_cmd = [PYTHON, str(BARE_HISTORY), "--history", str(tmp / "bare-history.json")]
    shutil.copyfile(history, tmp / "bare-history.json")

    results: dict[str, list[Opened]] = {"first": [], "long": [], "empty": [], "bare": []}
    async with aiohttp.ClientSession() as http:
        results["first"].append(await open_once(http, pneuma_run_cmd(long_ws), "[pneuma] ready"))
        for _ in range(runs):
            results["empty"].append(await open_once(http, pneuma_run_cmd(empty_ws),
                                                    "[pneuma] ready"))
            results["long"].append(await open_once(http, pneuma_run_cmd(long_ws),
                                                   "[pneuma] ready"))
            results["bare"].append(await open_once(http, bare_cmd, "ready"))
        newest = next(str(m["content"]) for m in reversed(messages) if m["type"] == "user_message")
        long_ms, empty_ms = await chromium_opens(long_ws, empty_ws, newest, runs + 2)
        reconnected = await reconnect_after_restart(http, long_ws, turns)
    state = long_ws / ".pneuma"
    # What holds the conversation now (history.json, or the log that
    # imported it), not the imported file kept for the user.
    on_disk = sum(p.stat().st_size for p in state.iterdir() if p.is_file()
                  and not p.name.endswith(".imported"))
    return {"results": results, "messages": len(messages), "history_bytes": size,
            "on_disk": on_disk, "chromium_long": long_ms, "chromium_empty": empty_ms,
            "reconnected": reconnected}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="500 turns, 2 runs")
    args = parser.parse_args()
    if args.quick:
        args.turns, args.runs = min(args.turns, 500), min(args.runs, 2)
    if args.turns < 1 or args.runs < 1:
        parser.error("--turns and --runs must be at least 1")
    print(machine_note())
    tmp = temp_dir("pneuma-bench-replay-")
    try:
        got = asyncio.run(bench(tmp, args.turns, args.runs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    results = got["results"]
    labels = {"first": "pneuma, first start on it", "long": "pneuma",
              "empty": "pneuma, no conversation", "bare": "bare aiohttp"}
    print(f"\n{'start (ms) / tab':26} {'ready':>7} {'answer':>7} {'reply':>7} {'all':>7} "
          f"{'pages':>5} {'messages':>8} {'KiB':>7} {'RSS MiB':>8}")
    for key, label in labels.items():
        for o in results[key]:
            print(f"{label:26} {o.ready_ms:7.0f} {o.answer_ms:7.0f} {o.first_reply_ms:7.1f} "
                  f"{o.all_ms:7.1f} {o.pages:5d} {o.messages:8d} {o.received_bytes / 1024:7.0f} "
                  f"{o.rss_kib / 1024:8.1f}")

    def med(key: str, attr: str) -> float:
        return median([getattr(o, attr) for o in results[key]])

    first = results["first"][0]
    turns = f"{args.turns:,}-turn session"
    shown_ratio = median(got["chromium_long"]) / median(got["chromium_empty"])
    reconnected = got["reconnected"]
    print(f"Chromium, ms to the newest turn: {', '.join(f'{v:.0f}' for v in got['chromium_long'])};"
          f" to the empty conversation: {', '.join(f'{v:.0f}' for v in got['chromium_empty'])}")
    print(f"after a restart: the tab that missed one turn got {reconnected.resumed_bytes:,} bytes"
          f" (a new tab {reconnected.fresh_bytes:,}); it shows the new turn:"
          f" {'yes' if reconnected.shows_new_turn else 'NO'}")
    rows = [
        row(f"{turns}: subscribe → message_history", med("long", "first_reply_ms"), None, "ms",
            "lower", med("bare", "first_reply_ms"), "bare aiohttp, all at once"),
        row(f"{turns}: subscribe → whole history", med("long", "all_ms"), None, "ms", "lower",
            med("bare", "all_ms"), "bare aiohttp, all at once"),
        row(f"{turns}: messages the tab got", med("long", "messages"), None, "msgs", "higher",
            got["messages"], "stored"),
        row(f"{turns}: bytes to the tab", med("long", "received_bytes") / 2**20, None, "MiB",
            "lower", med("bare", "received_bytes") / 2**20, "bare aiohttp"),
        row(f"{turns}: first frame to a new tab", med("long", "first_frame_bytes") / 1024,
            125.0, "KiB", "lower", med("bare", "first_frame_bytes") / 1024,
            "bare aiohttp, all at once"),
        row(f"{turns}: new Chromium tab → newest turn shown", median(got["chromium_long"]),
            None, "ms", "lower", median(got["chromium_empty"]), "empty conversation"),
        row(f"{turns}: newest turn shown / empty conversation", shown_ratio, 1.2, "x", "lower"),
        row(f"{turns}: tab back after a restart, one turn missed",
            reconnected.resumed_bytes / 1024, 62.5, "KiB", "lower",
            reconnected.fresh_bytes / 1024, "a new tab, same run"),
        row(f"{turns}: server RSS after the tab", med("long", "rss_kib") / 1024, None, "MiB",
            "lower", med("empty", "rss_kib") / 1024, "pneuma, no conversation"),
        row(f"{turns}: start → first answer", med("long", "answer_ms"), None, "ms", "lower",
            med("empty", "answer_ms"), "pneuma, no conversation"),
        row(f"{turns}: first start (imports) → first answer", first.answer_ms, None, "ms",
            "lower", med("long", "answer_ms"), "later starts"),
        row(f"{turns}: session state on disk", got["on_disk"] / 2**20, None, "MiB",
            "lower", got["history_bytes"] / 2**20, "history.json"),
    ]
    return finish(rows, f"bare aiohttp RSS holding the conversation: "
                        f"{med('bare', 'rss_kib') / 1024:.1f} MiB; first start's tab got "
                        f"{first.messages} messages in {first.all_ms:.0f} ms")


if __name__ == "__main__":
    sys.exit(main())
