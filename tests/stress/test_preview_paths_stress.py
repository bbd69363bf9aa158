"""Items 6 and 12 of issue 23 under stress: a fuzzer over the ways a path
can be spelt (``%2e``, ``%2f``, ``%252e``, letter case, overlong UTF-8,
Unicode dot lookalikes, trailing dots and slashes, ``;params``, NUL) and
over links (to hidden files, to folders holding them, to the workspace
root, out of the workspace) asks both preview sites (webcraft's
ContentSite and WebGAL's engine site) for the agent's files. Every run
ends with 0 hidden files served, 0 canary files outside read or changed,
0 5xx answers and no request waiting longer than 2 s. Bounded: a fixed
number of paths per site, a time cap, loopback only."""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yarl

from pneuma.testing import serve
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

PATHS_PER_SITE = 1_500
TIME_CAP = 20.0  # seconds per site
SLOWEST_ALLOWED = 2.0  # seconds for any one answer
PARALLEL = 8
SECRET_TEXT = "AGENT-INSTRUCTIONS-SECRET"
CANARY_TEXT = "CANARY-OUTSIDE"
SEED = 23

# What a page must never get: the agent's files, named or linked.
HIDDEN_TARGETS = ["CLAUDE.md", "AGENTS.md", ".claude/settings.json", ".pneuma/secret.txt",
                  ".git/config", "node_modules/x/index.js", "docs/CLAUDE.md", "notes.md",
                  "agents.txt", "cfg/settings.json", "here/CLAUDE.md", "here/cfg/settings.json",
                  "docs/up.md", "out.txt", "outdir/canary.txt"]
# Ordinary files, spelt the same ways: the fuzzer must reach the file system.
PLAIN_TARGETS = ["data.json", "docs/index.html", "here/data.json"]
PREFIXES = ["", "./", ".%2f", "%2e/", "%2e%2f", "%2E%2F", ".%2F", "%252e/", "%252e%252f", "//",
            "docs/../", "docs/%2e%2e/", "docs/..%2f", "docs/.%2e/", "here/", "here/./",
            "./here/.%2f", "%c0%ae/", "%ef%bc%8e/", ";x/", "docs/%2e%2e%2f"]
DOT_LOOKALIKES = ["%ef%bc%8e", "%e2%80%a4", "%c0%ae", "%e3%80%82"]  # ． ․ overlong . 。


def _encode_all(segment: str) -> str:
    return "".join(f"%{byte:02x}" for byte in segment.encode("utf-8"))


def _spell_segment(segment: str, rng: random.Random) -> str:
    """One way of writing ``segment`` in a URL."""
    choice = rng.randrange(10)
    if choice == 0:
        return _encode_all(segment)
    if choice == 1 and segment:
        at = rng.randrange(len(segment))
        return segment[:at] + _encode_all(segment[at]) + segment[at + 1:]
    if choice == 2:
        return segment.swapcase()
    if choice == 3:
        return segment.lower()
    if choice == 4:
        return segment.replace(".", rng.choice(DOT_LOOKALIKES))
    if choice == 5:
        return segment + rng.choice([".", "%2e", ";v=1", "%00", "%20", "/", "%2f", "?x=1"])
    if choice == 6:
        return segment.replace(".", "%252e")
    return segment


def fuzz_paths(rng: random.Random, prefix_url: str, n: int) -> list[tuple[str, bool]]:
    """``n`` (raw path, whether it names a hidden target) pairs."""
    paths: list[tuple[str, bool]] = []
    for _ in range(n):
        hidden = rng.random() < 0.85
        target = rng.choice(HIDDEN_TARGETS if hidden else PLAIN_TARGETS)
        spelt = "/".join(_spell_segment(s, rng) for s in target.split("/"))
        paths.append((prefix_url + rng.choice(PREFIXES) + spelt, hidden))
    return paths


def plant(ws: Path, folder: Path) -> Path:
    """The agent's files with a marker, links to them, and a canary outside;
    returns the canary folder."""
    for name in ("CLAUDE.md", "AGENTS.md", ".claude/settings.json", ".pneuma/secret.txt",
                 ".git/config", "node_modules/x/index.js", "docs/CLAUDE.md"):
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(SECRET_TEXT, encoding="utf-8")
    outside = ws.parent / "canary"
    outside.mkdir(exist_ok=True)
    (outside / "canary.txt").write_text(CANARY_TEXT, encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.json").write_text('{"plain": true}', encoding="utf-8")
    (folder / "docs").mkdir(exist_ok=True)
    (folder / "docs" / "index.html").write_text("<p>plain</p>", encoding="utf-8")
    rel_root = os.path.relpath(ws, folder)
    for name, target in (("notes.md", f"{rel_root}/CLAUDE.md"), ("agents.txt", f"{rel_root}/AGENTS.md"),
                         ("cfg", f"{rel_root}/.claude"), ("here", "."),
                         ("docs/up.md", f"../{rel_root}/CLAUDE.md"),
                         ("out.txt", str(outside / "canary.txt")), ("outdir", str(outside))):
        link = folder / name
        if not link.is_symlink():
            os.symlink(os.path.normpath(target) if not target.startswith("/") else target, link)
    return outside


async def hammer(origin: str, token: str, paths: list[tuple[str, bool]]) -> dict[str, Any]:
    seen: dict[str, Any] = {"requests": 0, "hidden_asked": 0, "served_hidden": [], "5xx": [],
                            "slowest": 0.0, "plain_served": 0, "canary": []}
    queue: asyncio.Queue[tuple[str, bool]] = asyncio.Queue()
    for item in paths:
        queue.put_nowait(item)
    deadline = time.monotonic() + TIME_CAP
    headers = {"Authorization": f"Bearer {token}"}

    async def worker(client: aiohttp.ClientSession) -> None:
        while not queue.empty() and time.monotonic() < deadline:
            path, hidden = queue.get_nowait()
            started = time.monotonic()
            async with client.get(yarl.URL(origin + path, encoded=True), headers=headers,
                                  allow_redirects=False) as response:
                body = await response.read()
            seen["slowest"] = max(seen["slowest"], time.monotonic() - started)
            seen["requests"] += 1
            seen["hidden_asked"] += hidden
            if SECRET_TEXT.encode() in body:
                seen["served_hidden"].append(path)
            if CANARY_TEXT.encode() in body:
                seen["canary"].append(path)
            if response.status >= 500:
                seen["5xx"].append(f"{path}: {response.status} {body[:200]!r}")
            if not hidden and response.status == 200:
                seen["plain_served"] += 1

    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        await asyncio.gather(*(worker(client) for _ in range(PARALLEL)))
    return seen


def check(site: str, seen: dict[str, Any], canary_before: bytes, canary_now: bytes) -> None:
    record("23.6 preview paths", f"{site}: {count(seen['requests'])} fuzzed paths "
           f"({count(seen['hidden_asked'])} naming the agent's files or links out), "
           f"{len(seen['served_hidden'])} hidden files served, {len(seen['canary'])} canary "
           f"reads, {len(seen['5xx'])} 5xx answers, slowest {seen['slowest']:.2f} s, "
           f"{count(seen['plain_served'])} ordinary files served")
    assert seen["requests"] >= 200, "too few paths were tried to mean anything"
    assert seen["served_hidden"] == [], seen["served_hidden"][:5]
    assert seen["canary"] == [] and canary_now == canary_before
    assert seen["5xx"] == [], seen["5xx"][:5]
    assert seen["slowest"] < SLOWEST_ALLOWED
    assert seen["plain_served"] > 0, "no spelling reached an ordinary file"


async def test_the_webcraft_preview_serves_no_hidden_file_under_any_spelling(tmp_path: Path) -> None:
    async with serve("webcraft", tmp_path / "ws", backend="none", watch=False) as server:
        ws = Path(server.workspace)
        outside = plant(ws, ws)
        before = (outside / "canary.txt").read_bytes()
        body = await (await server.get("/api/webcraft/site")).json()
        paths = fuzz_paths(random.Random(SEED), "/", PATHS_PER_SITE)
        seen = await hammer(body["origin"], body["token"], paths)
        check("webcraft", seen, before, (outside / "canary.txt").read_bytes())


async def test_the_webgal_engine_site_serves_no_hidden_file_under_any_spelling(
        tmp_path: Path) -> None:
    async with serve("webgal", tmp_path / "ws", backend="none", watch=False,
                     params={"language": "en"}) as server:
        ws = Path(server.workspace)
        outside = plant(ws, ws / "game")
        before = (outside / "canary.txt").read_bytes()
        status = await (await server.get("/api/webgal/status")).json()
        origin, token = status["engine"]["origin"], status["url"].split("?token=", 1)[1]
        paths = fuzz_paths(random.Random(SEED + 1), "/webgal/game/", PATHS_PER_SITE)
        seen = await hammer(origin, token, paths)
        check("webgal", seen, before, (outside / "canary.txt").read_bytes())
