"""Where ``preview_scene`` has the engine served, and how it jumps the game.

In this order:

1. WebGAL Terre, when the policy configures it (``"terre": {"port": 3001,
   "gameDir": …}``): its page for the game, and a JUMP over Terre's own
   editor-sync socket;
2. the ``pneuma run`` server of this workspace (``ctx.server_url``), whose
   engine route is ``<server>/webgal/``;
3. else a headless Pneuma server for this workspace
   (``pneuma.api.ensure_headless_server``): the same app as ``pneuma run``,
   token and all, started in the background, reused while it answers and
   stopped after ``PNEUMA_WEBGAL_PREVIEW_IDLE`` seconds (default 600) unused.

The engine has no URL per scene; the page URL names scene and line in its
fragment (``#scene=beach_date.txt&line=12``, read by static/launcher.js), and
the games already open (or the next one to open) are jumped through ``POST
/api/webgal/jump``. A Pneuma URL is the engine's own site (engine_site.py),
which the server names in its answer: it carries that site's read-only
``?token=`` so that it opens in any browser (the page then drops it from the
address bar), never the server's own token.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from pneuma.api import (
    ToolContext,
    ToolError,
    ensure_headless_server,
    is_local_url,
    request_json,
)

from .engine import engine_candidates, engine_dir
from .sync import jump_message, preview_url, scene_fragment

IDLE_SECONDS = float(os.environ.get("PNEUMA_WEBGAL_PREVIEW_IDLE", "600"))
PREVIEW_WAIT = 8.0  # seconds preview_scene waits for an open game to land
NOT_LOCAL_HINT = "Only http://localhost and http://127.0.0.1 are allowed."


def wait_seconds(ctx: ToolContext) -> float:
    """How long to wait for an open game to land (policy ``previewWaitSeconds``)."""
    value = ctx.policies.get("previewWaitSeconds", PREVIEW_WAIT)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return PREVIEW_WAIT
    return max(0.0, min(float(value), 60.0))


async def preview_scene_url(ctx: ToolContext, scene_file: str, line: int,
                            logs: list[str]) -> str:
    """The URL showing ``scene_file`` (under game/scene/) at ``line``, with every
    open game jumped there; what happened is appended to ``logs``."""
    terre = terre_config(ctx)
    if terre is not None:
        return await _terre_url(ctx, terre, scene_file, logs)
    if ctx.server_url:
        url = await _pneuma_run_url(ctx, scene_file, line, logs)
        if url is not None:
            return url
    return await _headless_url(ctx, scene_file, line, logs)


# --- a Pneuma server: `pneuma run`, else a headless one ---------------------------------


def post_jump(base: str, token: str | None, scene_file: str, line: int,
              wait: float) -> tuple[int, dict[str, Any] | None]:
    """``POST <base>/api/webgal/jump``: (status, answer); (0, None) when nothing
    answers. Only a game already open is waited for (``pendingWait: 0``)."""
    status, answer = request_json(base, "POST", "/api/webgal/jump", token=token,
                                  body={"scene": scene_file, "line": line, "wait": wait,
                                        "pendingWait": 0}, timeout=wait + 10)
    return status, answer if isinstance(answer, dict) or answer is None else None


def jump_logs(answer: dict[str, Any], scene_file: str, line: int, url: str) -> list[str]:
    """What the jump did, in words: where the game landed and what it shows."""
    if answer.get("landed") and isinstance(answer.get("preview"), dict):
        shown = answer["preview"]
        said = (f"{shown.get('speaker')}: {shown.get('text')}" if shown.get("speaker")
                else str(shown.get("text") or ""))
        return [f"the preview landed on {shown.get('scene') or scene_file} line "
                f"{shown.get('line') or line}" + (f"; it shows: {said}" if said else "")]
    if answer.get("delivered"):
        return [f"jumped {answer['delivered']} open preview(s) to {scene_file} line {line}; "
                "none reported landing yet"]
    return [f"no preview is open: the first one to open ({url}) jumps to {scene_file} line {line}"]


def engine_page_url(base: str, token: str | None, scene_file: str, line: int) -> str:
    """The engine page at ``scene_file``/``line`` as the server names it in
    ``GET /api/webgal/status`` (on the engine's own site, with that site's
    token); the server's own ``/webgal/`` page when it does not answer."""
    status, answer = request_json(base, "GET", "/api/webgal/status", token=token, timeout=10)
    url = answer.get("url") if status == 200 and isinstance(answer, dict) else None
    if isinstance(url, str) and url:
        return url.split("#", 1)[0] + scene_fragment(scene_file, line)
    return preview_url(base, scene_file, line)


async def _jump(base: str, token: str | None, ctx: ToolContext, scene_file: str, line: int,
                logs: list[str]) -> tuple[int, str]:
    """Jump through ``base``; (HTTP status, the page URL for the line it took).
    The page is the engine's own site, with that site's read-only token: it
    opens in any browser, and never carries the server's token."""
    status, answer = await asyncio.to_thread(post_jump, base, token, scene_file, line,
                                             wait_seconds(ctx))
    if status == 200 and isinstance(answer, dict):
        line = int(answer.get("line") or line)
        url = answer.get("url")
        if not isinstance(url, str) or not url:
            url = await asyncio.to_thread(engine_page_url, base, token, scene_file, line)
        logs.extend(jump_logs(answer, scene_file, line, url))
        return status, url
    reason = (answer.get("error") or {}).get("message") if isinstance(answer, dict) else None
    logs.append(f"{base} could not jump the preview (status {status or 'no answer'}"
                + (f": {reason}" if reason else "") + ")")
    return status, await asyncio.to_thread(engine_page_url, base, token, scene_file, line)


async def _pneuma_run_url(ctx: ToolContext, scene_file: str, line: int,
                          logs: list[str]) -> str | None:
    base = str(ctx.server_url).rstrip("/")
    if not is_local_url(base):
        raise ToolError("E_POLICY_VIOLATION", f"the Pneuma server {base} is not local",
                        details={"url": base}, hint=NOT_LOCAL_HINT)
    status, url = await _jump(base, ctx.server_token, ctx, scene_file, line, logs)
    if status != 200:
        logs.append("using a preview server of its own instead of pneuma run's")
        return None
    return url


async def _headless_url(ctx: ToolContext, scene_file: str, line: int, logs: list[str]) -> str:
    if engine_dir() is None:
        raise ToolError("E_PREVIEW_FAIL", "no preview can be served: the WebGAL engine is not set up",
                        details={"engineSearched": [str(p) for p in engine_candidates()]},
                        hint="Set up the engine (scripts/build-web, or npm ci && npm run build in "
                             "the webgal mode's web/ folder) or run `pneuma run` for this workspace.")
    try:
        server = await asyncio.to_thread(ensure_headless_server, ctx.mode.name, ctx.workspace,
                                         idle_seconds=IDLE_SECONDS)
    except TimeoutError as exc:
        raise ToolError("E_TIMEOUT", f"the preview server did not start: {exc}",
                        hint=f"See .pneuma/headless-{ctx.mode.name}.log.") from None
    except (RuntimeError, OSError) as exc:
        raise ToolError("E_PREVIEW_FAIL", f"no preview can be served: {exc}",
                        hint="Run `pneuma run` for this workspace instead.") from None
    minutes = max(1, int(IDLE_SECONDS // 60))
    logs.append(("reused" if server.reused else "started")
                + f" this workspace's preview server (pid {server.pid}, port {server.port}); "
                f"it stops after {minutes} idle minute{'s' if minutes > 1 else ''}")
    _, url = await _jump(server.url, server.token, ctx, scene_file, line, logs)
    return url


# --- WebGAL Terre -------------------------------------------------------------------------


def terre_config(ctx: ToolContext) -> dict[str, Any] | None:
    raw = ctx.policies.get("terre")
    preview = ctx.policies.get("preview")
    if raw is None and isinstance(preview, dict):
        raw = preview.get("terre")
    if raw is True:
        raw = {}
    if not isinstance(raw, dict) or raw.get("enabled") is False:
        return None
    return raw


def http_status(url: str, *, timeout: float = 3.0) -> int:
    """Status code of a GET (0 when nothing answers)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError, ValueError):
        return 0


async def ws_jump(ws_url: str, scene_file: str, line: int, *, timeout: float = 3.0) -> None:
    """Send the JUMP message over an editor-sync WebSocket (Terre's)."""
    import aiohttp

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        async with session.ws_connect(ws_url) as ws:
            await ws.send_str(json.dumps(jump_message(scene_file, line), ensure_ascii=False))


async def _terre_url(ctx: ToolContext, terre: dict[str, Any], scene_file: str,
                     logs: list[str]) -> str:
    base = str(terre.get("url")
               or f"http://{terre.get('host', 'localhost')}:{int(terre.get('port', 3001))}")
    if not is_local_url(base):
        raise ToolError("E_POLICY_VIOLATION", f"Terre URL {base} is not local",
                        details={"url": base}, hint=NOT_LOCAL_HINT)
    game_dir = str(terre.get("gameDir") or ctx.workspace.name)
    page = f"{base.rstrip('/')}/games/{urllib.parse.quote(game_dir)}/"
    status = await asyncio.to_thread(http_status, page,
                                     timeout=float(terre.get("timeoutSeconds", 3)))
    if status == 0:
        raise ToolError("E_PREVIEW_FAIL", f"WebGAL Terre is not running at {base}",
                        details={"url": page},
                        hint="Start WebGAL Terre (it listens on port 3001 by default) "
                             "or remove the terre policy to use Pneuma's own preview.")
    if status >= 400:
        raise ToolError("E_PREVIEW_FAIL", f"Terre answered {status} for {page}",
                        details={"url": page, "status": status},
                        hint=f"Is the game folder named {game_dir!r} in Terre? "
                             "Set terre.gameDir in the policy.")
    ws = base.replace("http://", "ws://", 1).replace("https://", "wss://", 1).rstrip("/")
    try:
        await ws_jump(ws + "/api/webgalsync", scene_file, 1)
        logs.append(f"Terre: asked open previews to jump to {scene_file}")
    except Exception as exc:  # Terre's socket is a convenience: the page still works
        logs.append(f"Terre: could not send the jump to {scene_file} ({type(exc).__name__}); "
                    "open the page and use Terre's editor to jump")
    name = scene_file[:-4] if scene_file.endswith(".txt") else scene_file
    return page + "#scene=" + urllib.parse.quote(name, safe="/-_.~")
