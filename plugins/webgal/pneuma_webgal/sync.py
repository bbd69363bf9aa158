"""The editor-sync hub of the WebGAL preview: every connection of
``/api/webgalsync``, and the jumps the server sends the running games.

The engine (npm ``webgal-engine`` 4.5.x) opens ``ws://<its origin>/api/webgalsync``
by itself (no subprotocol). It reports ``{"event": "message", "data": {"command":
1 (SYNCFC), "sceneMsg": {"scene", "sentence"}, "stageSyncMsg": <stage>,
"message": "sync"}}`` every second and obeys ``command: 0`` (JUMP). Editors may
also connect: legacy messages are relayed to the other connections as WebGAL
Terre does; with the subprotocol ``webgal-editor-preview-sync.v1`` a
``preview.command.sync-scene`` request is turned into a JUMP and answered with
a ``response``.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import WSMsgType, web

from pneuma.api import ToolError

SUBPROTOCOL_V1 = "webgal-editor-preview-sync.v1"

# Editor-sync commands (engine 4.5.x enum DebugCommand).
JUMP, SYNCFC, SYNCFE = 0, 1, 2
STALE_AFTER = 6.0  # seconds without a SYNCFC after which a game counts as gone


def normalize_scene(scene: Any) -> str:
    """``station_en`` / ``station_en.txt`` / ``game/scene/station_en.txt`` →
    ``station_en.txt`` (relative to game/scene/, as the engine names scenes)."""
    if not isinstance(scene, str) or not scene.strip():
        raise ValueError("'scene' must be a scene file name, e.g. start.txt")
    name = scene.strip().replace("\\", "/").lstrip("./")
    for prefix in ("game/scene/", "scene/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    if not name.endswith(".txt"):
        name += ".txt"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts) or "\0" in name:
        raise ValueError(f"{scene!r} is not a scene file name")
    return name


def jump_message(scene: str, line: int, *, exp: bool = False) -> dict[str, Any]:
    """The legacy editor-sync JUMP (engine 4.5.x; still accepted by Terre 4.6)."""
    return {
        "event": "message",
        "data": {
            "command": JUMP,
            "sceneMsg": {"scene": scene, "sentence": int(line)},
            "stageSyncMsg": {},
            "message": "exp" if exp else "Sync",
        },
    }


def scene_fragment(scene: str | None = None, line: int | None = None) -> str:
    """``#scene=<scene>[&line=<line>]`` (empty without a scene): where
    static/launcher.js jumps the engine page once it runs."""
    if not scene:
        return ""
    fragment = "#scene=" + quote(normalize_scene(scene), safe="/-_.~")
    if line:
        fragment += f"&line={int(line)}"
    return fragment


def preview_url(base: str, scene: str | None = None, line: int | None = None, *,
                token: str | None = None) -> str:
    """``<base>/webgal/[?token=…][#scene=<scene>[&line=<line>]]``: the engine's
    page (``base`` the engine's site) or the server's preview page framing it.
    With ``token`` the URL opens in any browser (the site trades it for its
    cookie)."""
    url = base.rstrip("/") + "/webgal/"
    if token:
        url += "?token=" + quote(token, safe="")
    return url + scene_fragment(scene, line)


# --- the sync hub ---------------------------------------------------------------


@dataclass
class SyncClient:
    ws: web.WebSocketResponse
    id: str
    protocol: str  # "legacy" | "v1"
    connected_at: float = field(default_factory=time.time)
    is_engine: bool = False  # it has sent SYNCFC, i.e. it is a running game
    scene: str = ""
    sentence: int = 0
    speaker: str = ""
    text: str = ""
    background: str = ""
    updated: float = 0.0  # monotonic time of the last SYNCFC

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scene": self.scene,
            "line": self.sentence,
            "speaker": self.speaker,
            "text": self.text,
            "background": self.background,
            "connectedAt": self.connected_at,
        }


class WebgalSync:
    """Every connection of ``/api/webgalsync``; jumps the running games."""

    def __init__(self, workspace: Path | None = None):
        self.workspace = workspace
        self.clients: dict[web.WebSocketResponse, SyncClient] = {}
        self.pending: dict[str, Any] | None = None  # a jump for the next game that opens
        self.last_jump: dict[str, Any] | None = None
        self._changed = asyncio.Event()
        self._counter = 0

    # -- what other code calls --

    @property
    def previews(self) -> list[SyncClient]:
        """Running games: they report every second, so one silent for longer
        than STALE_AFTER seconds is gone (a closed tab may not say goodbye)."""
        now = time.monotonic()
        return [c for c in self.clients.values()
                if c.is_engine and not c.ws.closed and now - c.updated < STALE_AFTER]

    def status(self) -> dict[str, Any]:
        return {
            "previews": [c.info() for c in self.previews],
            "connections": len(self.clients),
            "pendingJump": self.pending,
            "lastJump": self.last_jump,
        }

    def scene_lines(self, scene: str) -> int | None:
        """Number of lines of game/scene/<scene> in the workspace (None: missing)."""
        if self.workspace is None:
            return None
        path = self.workspace / "game" / "scene" / scene
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return None
        return len(text.replace("\r", "").split("\n"))

    async def jump(self, scene: str, line: int = 1, *, exp: bool = False,
                   dedupe: float = 0.0) -> int:
        """Send a JUMP to every running game; returns how many got it. With no
        game open the jump waits for the next one (``pending``). ``dedupe``
        seconds: an identical jump sent that recently is not sent again."""
        scene = normalize_scene(scene)
        line = max(1, int(line or 1))
        now = time.monotonic()
        last = self.last_jump
        if (dedupe and last and last["scene"] == scene and last["line"] == line
                and now - last["_at"] < dedupe):
            return last["delivered"]
        text = json.dumps(jump_message(scene, line, exp=exp), ensure_ascii=False)
        delivered = 0
        for client in self.previews:
            try:
                await client.ws.send_str(text)
                delivered += 1
            except (ConnectionError, RuntimeError):
                pass
        self.pending = None if delivered else {"scene": scene, "line": line, "exp": exp}
        self.last_jump = {"scene": scene, "line": line, "delivered": delivered,
                          "at": time.time(), "_at": now}
        return delivered

    async def wait_landed(self, scene: str, line: int, timeout: float,
                          since: float | None = None) -> SyncClient | None:
        """The first game reporting ``scene`` at ``line`` or later after ``since``."""
        scene = normalize_scene(scene)
        since = time.monotonic() if since is None else since
        deadline = time.monotonic() + timeout
        while True:
            for client in self.previews:
                if client.updated > since and client.scene == scene and client.sentence >= line:
                    return client
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            event = self._changed
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except asyncio.TimeoutError:
                return None

    async def jump_and_wait(self, scene: str, line: int = 1, *, timeout: float = 8.0,
                            exp: bool = False, dedupe: float = 0.0,
                            pending_timeout: float | None = None) -> dict[str, Any]:
        """Jump and report ``{scene, line, delivered, landed, preview?}``; a line
        past the end of the scene is clamped to its last line. With no game
        open, wait ``pending_timeout`` seconds (default ``timeout``) for one
        to open and land."""
        scene = normalize_scene(scene)
        total = self.scene_lines(scene)
        line = max(1, int(line or 1))
        if total is not None:
            line = min(line, total)
        sent_at = time.monotonic()
        delivered = await self.jump(scene, line, exp=exp, dedupe=dedupe)
        result: dict[str, Any] = {"scene": scene, "line": line, "delivered": delivered,
                                  "landed": False}
        if total is not None:
            result["sceneLines"] = total
        if not delivered and pending_timeout is not None:
            timeout = min(timeout, pending_timeout)
        if timeout > 0 and (delivered or self.pending):
            # Reports sent before the engine has fetched the new scene still
            # describe the old one: only those a little after the jump count.
            client = await self.wait_landed(scene, line, timeout, since=sent_at + 0.2)
            if client is not None:
                result["landed"] = True
                result["preview"] = client.info()
        return result

    # -- the socket --

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(protocols=(SUBPROTOCOL_V1,), heartbeat=30,
                                   max_msg_size=16 * 1024 * 1024)
        await ws.prepare(request)
        self._counter += 1
        client = SyncClient(ws=ws, id=f"p{self._counter}",
                            protocol="v1" if ws.ws_protocol == SUBPROTOCOL_V1 else "legacy")
        self.clients[ws] = client
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(message.data)
                except ValueError:
                    continue
                if isinstance(data, dict):
                    await self._receive(client, data, message.data)
        finally:
            self.clients.pop(ws, None)
            self._notify()
        return ws

    async def _receive(self, client: SyncClient, data: dict[str, Any], raw: str) -> None:
        if client.protocol == "v1" or data.get("kind") == "request":
            await self._receive_v1(client, data)
            return
        body = data.get("data")
        if not isinstance(body, dict):
            return
        command = body.get("command")
        if command == SYNCFC:
            client.is_engine = True
            scene_msg = body.get("sceneMsg") or {}
            stage = body.get("stageSyncMsg") or {}
            client.scene = str(scene_msg.get("scene") or "")
            try:
                client.sentence = int(scene_msg.get("sentence") or 0)
            except (TypeError, ValueError):
                client.sentence = 0
            if isinstance(stage, dict):
                client.speaker = str(stage.get("showName") or "")
                client.text = str(stage.get("showText") or "")
                client.background = str(stage.get("bgName") or "")
            client.updated = time.monotonic()
            self._notify()
            # A jump asked for while no game was open goes to the first one
            # whose start scene has loaded.
            if self.pending and client.scene:
                await self._deliver_pending(client)
            await self._relay(client, raw, engines=False)
            return
        # Anything else (an editor's JUMP, EXE_COMMAND, …): to everyone else,
        # as Terre does; games ignore what they do not understand.
        await self._relay(client, raw, engines=True)

    async def _deliver_pending(self, client: SyncClient) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        try:
            await client.ws.send_str(json.dumps(
                jump_message(pending["scene"], pending["line"], exp=pending.get("exp", False)),
                ensure_ascii=False))
        except (ConnectionError, RuntimeError):
            self.pending = pending
            return
        if self.last_jump is not None:
            self.last_jump["delivered"] = max(1, self.last_jump.get("delivered", 0))

    async def _receive_v1(self, client: SyncClient, data: dict[str, Any]) -> None:
        request_id = data.get("requestId")
        kind, type_ = data.get("kind"), data.get("type")
        reply: dict[str, Any] = {"kind": "response", "requestId": request_id, "type": type_}
        if kind == "request" and type_ == "preview.command.sync-scene":
            payload = data.get("payload") or {}
            try:
                scene = normalize_scene(payload.get("sceneName"))
                line = int(payload.get("sentenceId") or 1)
            except (TypeError, ValueError) as exc:
                reply.update(ok=False, error={"code": "bad_request", "message": str(exc)})
            else:
                delivered = await self.jump(scene, line)
                reply.update(ok=True, payload={"delivered": delivered,
                                               "pending": self.pending is not None})
        elif kind == "request" and type_ == "preview.query.status":
            reply.update(ok=True, payload=self.status())
        else:
            reply.update(ok=False, error={"code": "unsupported",
                                          "message": f"unsupported message {kind}/{type_}"})
        if kind == "request":
            await client.ws.send_str(json.dumps(reply, ensure_ascii=False))

    async def _relay(self, sender: SyncClient, raw: str, *, engines: bool) -> None:
        for other in list(self.clients.values()):
            if other is sender or other.protocol != "legacy" or other.ws.closed:
                continue
            if other.is_engine and not engines:
                continue
            try:
                await other.ws.send_str(raw)
            except (ConnectionError, RuntimeError):
                pass

    def _notify(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    async def close(self) -> None:
        for ws in list(self.clients):
            try:
                await ws.close()
            except Exception:  # shutting down: nothing to do about it
                pass


def _seconds(body: dict[str, Any], name: str, default: float | None) -> float | None:
    value = body.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError("E_BAD_ARGS", f"'{name}' must be a number of seconds",
                        details={"field": name})
    return max(0.0, min(float(value), 60.0))


async def jump_request(sync: WebgalSync, body: Any) -> dict[str, Any]:
    """What ``POST /api/webgal/jump`` ``{scene, line?, wait?, pendingWait?,
    dedupe?}`` does: jump and report ``{scene, line, delivered, landed,
    preview?, sceneLines?, pending}``. ``wait`` (default 5, at most 60)
    seconds for a game to land; ``pendingWait`` (default ``wait``) when no
    game is open yet. Raises ``ToolError`` (E_BAD_ARGS, E_NOT_FOUND)."""
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", "the body must be a JSON object", details={"field": "(root)"})
    try:
        scene = normalize_scene(body.get("scene"))
    except ValueError as exc:
        raise ToolError("E_BAD_ARGS", str(exc), details={"field": "scene"}) from None
    line = body.get("line", 1)
    if isinstance(line, bool) or not isinstance(line, (int, float)) or line < 1:
        raise ToolError("E_BAD_ARGS", "'line' must be a 1-based line number",
                        details={"field": "line"})
    wait = _seconds(body, "wait", 5)
    pending_wait = _seconds(body, "pendingWait", None)
    if sync.scene_lines(scene) is None:
        raise ToolError("E_NOT_FOUND", f"game/scene/{scene} does not exist",
                        details={"path": f"game/scene/{scene}"},
                        hint="list_project_resources lists the game's scenes.")
    result = await sync.jump_and_wait(scene, int(line), timeout=wait or 0.0,
                                      pending_timeout=pending_wait,
                                      dedupe=1.0 if body.get("dedupe") else 0.0)
    result["pending"] = sync.pending is not None
    return result
