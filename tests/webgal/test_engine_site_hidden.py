"""The WebGAL engine's site serves only ``game/``: not the agent's files
under any spelling of their path, not through a symlink in the game folder
(to ``CLAUDE.md``, ``AGENTS.md``, ``.claude/`` or anywhere else in the
workspace), and its redirects carry the same guards as its files."""

from __future__ import annotations

import os
from pathlib import Path

import aiohttp
import yarl

from tests.webgal.test_engine_origin import engine_of, webgal  # noqa: F401  (a fixture)

SECRET_TEXT = "AGENT-INSTRUCTIONS-SECRET"


async def test_links_and_encodings_never_reach_beyond_the_game_folder(webgal) -> None:  # noqa: F811
    origin, token = await engine_of(webgal)
    ws: Path = webgal.workspace
    for name in ("CLAUDE.md", "AGENTS.md", "notes.md", "game/CLAUDE.md"):
        (ws / name).write_text(SECRET_TEXT, encoding="utf-8")
    (ws / ".claude").mkdir(exist_ok=True)
    (ws / ".claude" / "settings.json").write_text(SECRET_TEXT, encoding="utf-8")
    game = ws / "game"
    os.symlink("../CLAUDE.md", game / "intro.txt")
    os.symlink("../AGENTS.md", game / "agents.txt")
    os.symlink("../.claude", game / "cfg")
    os.symlink("../notes.md", game / "notes.txt")  # inside the workspace, outside game/
    os.symlink("..", game / "up")
    own = {"Authorization": f"Bearer {token}"}
    paths = ["/webgal/game/intro.txt", "/webgal/game/agents.txt", "/webgal/game/cfg/settings.json",
             "/webgal/game/cfg", "/webgal/game/notes.txt", "/webgal/game/up/notes.md",
             "/webgal/game/up", "/webgal/game/CLAUDE.md", "/webgal/game/.%2fCLAUDE.md",
             "/webgal/game/%2e%2e%2fCLAUDE.md", "/webgal/game/up/.%2fAGENTS.md"]
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        for path in paths:
            async with client.get(yarl.URL(origin + path, encoded=True), headers=own,
                                  allow_redirects=False) as response:
                body = await response.text()
                assert response.status in (403, 404), (path, response.status, body)
                assert SECRET_TEXT not in body, path
                assert response.headers["X-Content-Type-Options"] == "nosniff", path
        async with client.get(origin + "/webgal/game/scene", headers=own,
                              allow_redirects=False) as response:
            assert response.status == 302
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            assert "frame-ancestors" in response.headers["Content-Security-Policy"]
        async with client.get(origin + "/webgal/game/config.txt", headers=own) as response:
            assert response.status == 200
